// SPDX-License-Identifier: MIT
/* impact.c - a shield's pattern over the past: which binaries and users it
 * would have hit. Rows that are not execs (a socket, a bind, a hit) name
 * their binary through the exec they belong to (exec_id); processes older
 * than the agent have none, and are shown by process name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "err.h"
#include "impact.h"
#include "meta.h"
#include "store.h"

int ks_impact_pattern(const char *path, char *name, size_t len, char **sql)
{
	struct ks_meta meta;
	const char *q, *n;
	int err;

	*sql = NULL;
	if ((err = ks_meta_read(path, &meta)))
		return err;
	n = ks_meta_get(&meta, "name");
	q = ks_meta_get(&meta, "impact");
	snprintf(name, len, "%s", n ? n : path);
	if (q && !(*sql = strdup(q)))
		err = -ENOMEM;
	/* The shield's own hits say nothing before it is loaded: only a hunt
	 * that also looks for the exploit's signs is a pattern. */
	else if (!q && n && (ks_meta_get(&meta, "signs") || ks_meta_get(&meta, "hunt")))
		err = ks_meta_hunt_sql(&meta, sql);
	ks_meta_free(&meta);
	if (!err && !*sql)
		return ks_err(-ENOENT, "%s declares no pattern (metadata impact, signs or hunt): its "
			      "impact cannot be previewed", path);
	return err;
}

long long ks_impact_store(struct ks_store *s, const char *sql, __s64 since, __s64 until,
			  ks_impact_fn fn, void *ctx)
{
	static const char wrap[] =
		"WITH hits AS (%s), named AS (SELECT coalesce(h.binary, (SELECT e.binary FROM events e "
		"WHERE e.kind = 'exec' AND e.exec_id = h.exec_id AND h.exec_id != 0 LIMIT 1), "
		"'[' || h.comm || ']') AS who, h.uid AS uid, h.ts AS ts FROM hits h "
		"WHERE h.ts BETWEEN :since AND :until) "
		"SELECT who, uid, count(*), min(ts), max(ts) FROM named GROUP BY who, uid "
		"ORDER BY 3 DESC, 1";
	sqlite3 *db = ks_store_db(s);
	sqlite3_stmt *st = NULL;
	long long total = 0;
	char *q;
	int rc, i;

	/* the pattern is one SELECT; a trailing ';' would end the CTE */
	char *body = strdup(sql);

	if (!body)
		return -ENOMEM;
	for (i = strlen(body) - 1; i >= 0 && strchr(" \t\n;", body[i]); i--)
		body[i] = '\0';
	q = sqlite3_mprintf(wrap, body);
	free(body);
	if (!q)
		return -ENOMEM;
	rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
	sqlite3_free(q);
	if (rc != SQLITE_OK)
		return ks_err(-EINVAL, "the shield's pattern does not run on this store: %s",
			      sqlite3_errmsg(db));
	if (!sqlite3_stmt_readonly(st)) {
		sqlite3_finalize(st);
		return ks_err(-EPERM, "the shield's pattern would write to the store: refused");
	}
	if ((i = sqlite3_bind_parameter_index(st, ":since")))
		sqlite3_bind_int64(st, i, since);
	if ((i = sqlite3_bind_parameter_index(st, ":until")))
		sqlite3_bind_int64(st, i, until);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ks_impact_row r = {
			.binary = (const char *)sqlite3_column_text(st, 0),
			.uid = sqlite3_column_int64(st, 1),
			.hits = sqlite3_column_int64(st, 2),
			.first_ts = sqlite3_column_int64(st, 3),
			.last_ts = sqlite3_column_int64(st, 4),
		};

		if (!r.binary)
			r.binary = "?";
		total += r.hits;
		fn(&r, ctx);
	}
	if (rc != SQLITE_DONE)
		total = ks_err(-EIO, "reading the store: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return total;
}
