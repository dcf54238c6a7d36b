// SPDX-License-Identifier: MIT
/* events.c - `kshield events`: list recorded events with filters, or the
 * process ancestry of one process.
 *
 *	kshield events [--store PATH] [--since T] [--until T] [--kind K[,K..]]
 *		       [--pid N] [--comm NAME] [--binary PATH|NAME] [--uid N]
 *		       [--addr IP] [--port N] [--limit N] [-j]
 *	kshield events --tree PID|EXEC_ID [--store PATH] [-j]
 *
 * T is a duration ago (10m, 2h, 3d) or an RFC 3339 time. Filters become one
 * parameterised SELECT that the (ts) / (kind, ts) / (binary, ts) indexes
 * serve; the newest --limit rows (default 1000) are shown oldest first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "eventfmt.h"
#include "store.h"
#include "units.h"

#define MAX_BINDS 32

struct query {
	char sql[4096];
	size_t len;
	int nbind;
	struct { bool is_text; long long i; const char *s; } bind[MAX_BINDS];
};

static void q_add(struct query *q, const char *frag)
{
	q->len += snprintf(q->sql + q->len, sizeof(q->sql) - q->len, "%s", frag);
}

static int q_int(struct query *q, long long v)
{
	q->bind[q->nbind].is_text = false;
	q->bind[q->nbind].i = v;
	return ++q->nbind;
}

static int q_text(struct query *q, const char *s)
{
	q->bind[q->nbind].is_text = true;
	q->bind[q->nbind].s = s;
	return ++q->nbind;
}

static int events_help(void)
{
	fprintf(stderr,
		"Usage: kshield events [--store PATH] [--since T] [--until T] [--kind K[,K...]]\n"
		"                      [--pid N] [--comm NAME] [--binary PATH|NAME] [--uid N]\n"
		"                      [--addr IP] [--port N] [--limit N] [-j]\n"
		"       kshield events --tree PID|EXEC_ID [--store PATH] [-j]\n"
		"T: a duration ago (90s, 10m, 2h, 3d) or RFC 3339 (2026-12-03T10:00:00Z).\n"
		"Kinds: exec exit connect accept listen socket userns privilege bpf shield\n"
		"       alg_bind tamper flow. The newest --limit (default 1000) events are shown.\n"
		"pid is the process (--pid N matches it), tid the thread.\n");
	return 0;
}

static int show_tree(sqlite3 *db, const char *arg)
{
	unsigned long long v;
	struct json_object *chain;
	__u64 id;
	int err;

	if ((err = ks_parse_u64(arg, "--tree", &v)))
		return ks_report(err);
	/* pids are below 2^22; exec ids are uptime ns << 8 */
	id = v < (1ULL << 32) ? ks_exec_of_pid(db, v) : v;
	chain = id ? ks_ancestry(db, id) : NULL;
	if (!chain)
		return ks_report(ks_err(-ENOENT, "no exec of %s %s in the store",
					v < (1ULL << 32) ? "pid" : "exec id", arg));
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "exec_id", json_object_new_uint64(id));
		json_object_object_add(o, "ancestry", chain);
		ks_json_print(o);
	} else {
		ks_ancestry_print(chain, "");
		json_object_put(chain);
	}
	return 0;
}

/* The filters of `kshield events`, as given. */
struct filters {
	const char *since, *until, *kinds, *pid, *comm, *binary, *uid, *addr, *port, *limit;
};

/* The time, kind and process filters into @q; 0 or a reported error. */
static int where_what(struct query *q, const struct filters *f)
{
	unsigned long long v;
	char kbuf[256];
	__s64 t;
	int err;

	if (f->since) {
		if ((err = ks_time_parse(f->since, "--since", &t)))
			return ks_report(err);
		q_add(q, " AND ts >= ?");
		q_int(q, t);
	}
	if (f->until) {
		if ((err = ks_time_parse(f->until, "--until", &t)))
			return ks_report(err);
		q_add(q, " AND ts <= ?");
		q_int(q, t);
	}
	if (f->kinds) {
		snprintf(kbuf, sizeof(kbuf), "%s", f->kinds);
		q_add(q, " AND kind IN (");
		int n = 0;
		for (char *k = strtok(kbuf, ","); k; k = strtok(NULL, ",")) {
			if ((err = ks_kind_parse(k)) < 0)
				return ks_report(err);
			q_add(q, n++ ? ",?" : "?");
			q_text(q, ks_kind_name(err));
			if (q->nbind > MAX_BINDS - 10)
				return ks_usage("--kind: too many kinds");
		}
		q_add(q, ")");
	}
	if (f->pid) {
		if ((err = ks_parse_u64(f->pid, "--pid", &v)))
			return ks_report(err);
		q_add(q, " AND pid = ?");
		q_int(q, v);
	}
	if (f->uid) {
		if ((err = ks_parse_u64(f->uid, "--uid", &v)))
			return ks_report(err);
		q_add(q, " AND (uid = ?");
		q_int(q, v);
		q_add(q, " OR euid = ?)");
		q_int(q, v);
	}
	if (f->comm) {
		q_add(q, " AND comm = ?");
		q_text(q, f->comm);
	}
	return 0;
}

/* The binary and network filters and the limit into @q. */
static int where_where(struct query *q, const struct filters *f)
{
	unsigned long long v, lim = 1000;
	int err;

	if (f->binary) {
		/* A path is matched exactly (index); a bare name as a basename. */
		if (strchr(f->binary, '/')) {
			q_add(q, " AND binary = ?");
			q_text(q, f->binary);
		} else {
			q_add(q, " AND kind = 'exec' AND (binary = ?");
			q_text(q, f->binary);
			q_add(q, " OR binary LIKE '%/' || ?)");
			q_text(q, f->binary);
		}
	}
	if (f->addr) {
		q_add(q, " AND (laddr = ?");
		q_text(q, f->addr);
		q_add(q, " OR raddr = ?)");
		q_text(q, f->addr);
	}
	if (f->port) {
		if ((err = ks_parse_u64(f->port, "--port", &v)))
			return ks_report(err);
		if (v > 65535)
			return ks_usage("--port: %llu is not a port", v);
		q_add(q, " AND (lport = ?");
		q_int(q, v);
		q_add(q, " OR rport = ?)");
		q_int(q, v);
	}
	if (f->limit && (err = ks_parse_u64(f->limit, "--limit", &lim)))
		return ks_report(err);
	q_add(q, " ORDER BY ts DESC LIMIT ?) ORDER BY ts");
	q_int(q, lim ? (long long)lim : -1);
	return 0;
}

/* Run @q on @s and print its rows (JSON array under -j). */
static int print_rows(struct ks_store *s, const struct query *q)
{
	struct json_object *arr = NULL;
	sqlite3_stmt *st;
	int err = 0, rc, rows = 0;

	rc = sqlite3_prepare_v2(ks_store_db(s), q->sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return ks_report(ks_err(-EIO, "query: %s", sqlite3_errmsg(ks_store_db(s))));
	for (int i = 0; i < q->nbind; i++) {
		if (q->bind[i].is_text)
			sqlite3_bind_text(st, i + 1, q->bind[i].s, -1, SQLITE_STATIC);
		else
			sqlite3_bind_int64(st, i + 1, q->bind[i].i);
	}
	arr = json_output ? json_object_new_array() : NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (arr)
			json_object_array_add(arr, ks_row_json(st));
		else
			ks_row_print(st, rows == 0);
		rows++;
	}
	if (rc != SQLITE_DONE)
		err = ks_err(-EIO, "query: %s", sqlite3_errmsg(ks_store_db(s)));
	sqlite3_finalize(st);
	if (err) {
		json_object_put(arr);
		return ks_report(err);
	}
	if (arr)
		ks_json_print(arr);
	else if (!rows)
		fprintf(stderr, "no events match\n");
	return 0;
}

int do_events(int argc, char **argv)
{
	const char *store = NULL, *tree = NULL;
	struct filters f = {};
	struct query q = {};
	struct ks_store *s;
	char cols[512];
	int err, rc;
	const struct ks_opt opts[] = {
		OPT_VAL("--store", &store), OPT_VAL("--since", &f.since), OPT_VAL("--until", &f.until),
		OPT_VAL("--kind", &f.kinds), OPT_VAL("--pid", &f.pid), OPT_VAL("--comm", &f.comm),
		OPT_VAL("--binary", &f.binary), OPT_VAL("--uid", &f.uid), OPT_VAL("--addr", &f.addr),
		OPT_VAL("--port", &f.port), OPT_VAL("--limit", &f.limit), OPT_VAL("--tree", &tree),
		OPT_END,
	};
	if (!ks_opts_parse("events", opts, argc, argv, 0, NULL, events_help, &rc))
		return rc;

	ks_col_list(cols, sizeof(cols));
	q_add(&q, "SELECT * FROM (SELECT ");
	q_add(&q, cols);
	q_add(&q, " FROM events WHERE 1");
	if ((err = where_what(&q, &f)) || (err = where_where(&q, &f)))
		return err;
	if ((err = ks_store_open(&s, ks_store_path(store), KS_STORE_RDONLY)))
		return ks_report(err);
	err = tree ? show_tree(ks_store_db(s), tree) : print_rows(s, &q);
	ks_store_close(s);
	return err;
}
