// SPDX-License-Identifier: MIT
/* hunt_pg.c - `kshield hunt --pg CONNINFO NAME|--sql`: the same hunts the
 * agent runs over its SQLite store, run fleet-wide over the collector's
 * PostgreSQL table, results grouped by host.
 *
 * The hunts are written against the local store's `events` columns, so a
 * temporary view `events` over ks_events exposes those columns from each
 * event's JSON (plus `host`), `binaries` (path, first) gives each binary's
 * first exec fleet-wide, and json_extract() is provided for the hunts that
 * use it. SQLite compares json_extract()'s numbers with numbers; here a
 * json_extract() compared with a number literal becomes ks_json_num(),
 * which returns numeric (text = integer has no operator in PostgreSQL).
 * :since, :until, :binary and :bytes are bound as parameters; --file's
 * addresses filter the rows by laddr/raddr as an inet[] parameter. A hunt
 * whose rows have no `host` column cannot be grouped and is refused.
 *
 * Read-only against the collector's database: the helpers are functions
 * and views of this session's pg_temp schema (gone when it ends; PostgreSQL
 * never looks functions up there implicitly, so calls name pg_temp), and the
 * hunt text, which comes from a shield's metadata or --sql, runs alone in a
 * READ ONLY transaction: no INSERT, UPDATE, DDL, nextval() or writing
 * function gets through it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "events.h"
#include "hunt_pg.h"

static const char funcs_sql[] =
	"CREATE OR REPLACE FUNCTION pg_temp.json_extract(t text, path text) RETURNS text "
	" LANGUAGE sql IMMUTABLE AS $$ SELECT (t::jsonb) #>> string_to_array(substr(path, 3), '.') $$;"
	"CREATE OR REPLACE FUNCTION pg_temp.ks_json_num(t text, path text) RETURNS numeric"
	" LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN jsonb_typeof(v) = 'number' THEN (v #>> '{}')::numeric END"
	" FROM (SELECT (t::jsonb) #> string_to_array(substr(path, 3), '.') AS v) j $$;"
	"CREATE OR REPLACE FUNCTION pg_temp.ks_inet(t text) RETURNS inet LANGUAGE sql IMMUTABLE AS"
	" $$ SELECT CASE WHEN t ~ '^[0-9a-fA-F:.]+$' THEN t::inet END $$;";

char *ks_hunt_pg_view_sql(void)
{
	static const char *const cast[] = { [KS_COL_INT] = "::bigint", [KS_COL_ID] = "::numeric",
					    [KS_COL_TEXT] = "" };
	const char *marker = NULL;
	size_t cap = sizeof(funcs_sql) + 4096, n;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	/* Rows shipped from stores of schema version 2 have a key no column
	 * has now (tgid): theirs are read under their version 2 names. */
	for (int c = 0; c < KS_COL_MAX && !marker; c++)
		if (ks_col_find(ks_cols[c].v2) < 0)
			marker = ks_cols[c].v2;
	n = snprintf(out, cap, "%sCREATE OR REPLACE TEMP VIEW events AS SELECT host, seq", funcs_sql);
	for (int c = 0; c < KS_COL_MAX && n < cap; c++) {
		const char *name = ks_cols[c].name, *v2 = ks_cols[c].v2;

		if (c == KS_COL_KIND)
			n += snprintf(out + n, cap - n, ", kind");
		else if (marker && strcmp(name, v2))
			n += snprintf(out + n, cap - n, ", (CASE WHEN data ? '%s' THEN data->>'%s' ELSE "
				      "data->>'%s' END)%s AS \"%s\"", marker, v2, name,
				      cast[ks_cols[c].type], name);
		else
			n += snprintf(out + n, cap - n, ", (data->>'%s')%s AS \"%s\"", name,
				      cast[ks_cols[c].type], name);
	}
	if (n < cap)
		n += snprintf(out + n, cap - n, " FROM ks_events;"
			      "CREATE OR REPLACE TEMP VIEW binaries AS SELECT data->>'binary' AS path,"
			      " min((data->>'ts')::bigint) AS first FROM ks_events WHERE kind = 'exec' AND"
			      " data ? 'binary' GROUP BY 1;");
	if (n >= cap) {
		free(out);
		return NULL;
	}
	return out;
}

/* Whether @p (just after a json_extract(...) call) compares it with a
 * number literal: `= 38`, `!= 0`, `>= 5`, `<> -1`. */
static bool numeric_compare(const char *p)
{
	while (*p == ' ')
		p++;
	if (!strchr("=<>!", *p))
		return false;
	while (*p && strchr("=<>!", *p))
		p++;
	while (*p == ' ')
		p++;
	if (*p == '-' || *p == '+')
		p++;
	return isdigit((unsigned char)*p);
}

/* The end of the call whose '(' is at @p: past its matching ')'. */
static const char *call_end(const char *p)
{
	int depth = 0;
	bool quoted = false;

	for (; *p; p++) {
		if (*p == '\'')
			quoted = !quoted;
		else if (!quoted && *p == '(')
			depth++;
		else if (!quoted && *p == ')' && --depth == 0)
			return p + 1;
	}
	return p;
}

/* SQLite's :name parameters become $1..$4 (since, until, binary, bytes); the
 * column `binary`, a keyword in PostgreSQL, is quoted; instr() is strpos(). String literals
 * are copied untouched. *nparams gets the highest parameter used. */
char *ks_hunt_pg_translate(const char *sql, int *nparams)
{
	static const char *names[] = { ":since", ":until", ":binary", ":bytes" };
	char *out = malloc(strlen(sql) * 2 + 64), *p = out;
	bool quoted = false;

	*nparams = 0;
	if (!out)
		return NULL;
	while (*sql) {
		int k = 4;

		if (*sql == '\'')
			quoted = !quoted;
		if (!quoted)
			for (k = 0; k < 4; k++)
				if (!strncmp(sql, names[k], strlen(names[k])))
					break;
		if (k < 4) {
			p += sprintf(p, "$%d", k + 1);
			sql += strlen(names[k]);
			if (k + 1 > *nparams)
				*nparams = k + 1;
		} else if (!quoted && !strncmp(sql, "json_extract(", 13) &&
			   (p == out || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' ||
					  p[-1] == '.'))) {
			p += sprintf(p, "pg_temp.%s", numeric_compare(call_end(sql + 12)) ?
				     "ks_json_num" : "json_extract");
			sql += 12;
		} else if (!quoted && !strncmp(sql, "instr(", 6) &&
			   (p == out || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
			p += sprintf(p, "strpos(");	/* same arguments, same answer */
			sql += 6;
		} else if (!quoted && !strncmp(sql, "binary", 6) &&
			   (p == out || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '"')) &&
			   !(isalnum((unsigned char)sql[6]) || sql[6] == '_')) {
			p += sprintf(p, "\"binary\"");
			sql += 6;
		} else {
			*p++ = *sql++;
		}
	}
	*p = '\0';
	return out;
}

#ifndef KSHIELD_STATIC
#include <postgresql/libpq-fe.h>
#include "fleet_dl.h"

int ks_hunt_pg(const char *conninfo, const char *name, const char *sql, ks_hunt_pg_row_fn row,
	       void *ctx, const struct ks_hunt_pg_opts *o)
{
	long long since = o->since, until = o->until, bytes = o->bytes, limit = o->limit;
	const char *binary = o->binary, *cidrs = o->cidrs;
	PGconn *c;
	char *q = NULL, *grouped = NULL, sv[32], uv[32], bv[32];
	const char *params[5];
	PGresult *r = NULL;
	int err = 0, np;

	if ((err = ks_fleet_pq_load()))
		return err;
	c = pq_fn.PQconnectdb(conninfo);
	if (pq_fn.PQstatus(c) != CONNECTION_OK) {
		err = ks_err(-EIO, "postgresql: connect: %s", strtok(pq_fn.PQerrorMessage(c), "\n") ?: "?");
		goto out;
	}
	char *view = ks_hunt_pg_view_sql();

	if (!view) {
		err = ks_err(-ENOMEM, "out of memory");
		goto out;
	}
	r = pq_fn.PQexec(c, view);
	free(view);
	if (pq_fn.PQresultStatus(r) != PGRES_COMMAND_OK) {
		err = ks_err(-EIO, "postgresql: %s (has `kshield collect` run?)",
			     strtok(pq_fn.PQerrorMessage(c), "\n") ?: "?");
		goto out;
	}
	pq_fn.PQclear(r);
	q = ks_hunt_pg_translate(sql, &np);
	if (!q) {
		err = ks_err(-ENOMEM, "out of memory");
		goto out;
	}
	/* Strip a trailing ';' so the hunt nests as a subquery. */
	for (size_t n = strlen(q); n && (q[n - 1] == ';' || q[n - 1] == ' ' || q[n - 1] == '\n'); n--)
		q[n - 1] = '\0';
	grouped = malloc(strlen(q) + 512);
	sprintf(grouped, "SELECT host, count(*) AS hits, min(ts) AS first_ts, max(ts) AS last_ts "
		"FROM (%s) AS hunt %s GROUP BY host ORDER BY hits DESC, host LIMIT %lld", q,
		cidrs ? "WHERE pg_temp.ks_inet(raddr) <<= ANY($5::inet[]) OR pg_temp.ks_inet(laddr) <<= ANY($5::inet[])" : "",
		limit);
	if (cidrs)
		np = 5;
	snprintf(sv, sizeof(sv), "%lld", since);
	snprintf(uv, sizeof(uv), "%lld", until);
	params[0] = sv;
	params[1] = uv;
	params[2] = binary ? binary : "";
	snprintf(bv, sizeof(bv), "%lld", bytes);
	params[3] = bv;
	params[4] = cidrs;
	/* Typed, so that one a hunt skips (:binary in exfil) is not an error:
	 * int8, int8, text, int8, text. */
	r = pq_fn.PQexec(c, "START TRANSACTION READ ONLY");
	if (pq_fn.PQresultStatus(r) != PGRES_COMMAND_OK) {
		err = ks_err(-EIO, "postgresql: %s", strtok(pq_fn.PQerrorMessage(c), "\n") ?: "?");
		goto out;
	}
	pq_fn.PQclear(r);
	r = pq_fn.PQexecParams(c, grouped, np, (const Oid[]){ 20, 20, 25, 20, 25 }, params, NULL, NULL, 0);
	pq_fn.PQclear(pq_fn.PQexec(c, "ROLLBACK"));
	if (pq_fn.PQresultStatus(r) != PGRES_TUPLES_OK) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", pq_fn.PQresultErrorMessage(r));
		err = ks_err(-EINVAL, "hunt %s fleet-wide: %s", name, strtok(msg, "\n") ?: "?");
		goto out;
	}
	for (int i = 0; i < pq_fn.PQntuples(r); i++)
		row(pq_fn.PQgetvalue(r, i, 0), atoll(pq_fn.PQgetvalue(r, i, 1)), atoll(pq_fn.PQgetvalue(r, i, 2)),
		    atoll(pq_fn.PQgetvalue(r, i, 3)), ctx);
out:
	pq_fn.PQclear(r);
	free(q);
	free(grouped);
	pq_fn.PQfinish(c);
	return err;
}
#endif /* KSHIELD_STATIC */
