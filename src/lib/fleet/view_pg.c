// SPDX-License-Identifier: MIT
/* view_pg.c - the fleet page's PostgreSQL half (view_api.h): hits per
 * shield, per host and over time, a host's recent events, a shield's hunt.
 *
 * Every query reads what the collector's schema makes for it (fleet_pg.c):
 * hits per shield from the rollups a trigger keeps equal to the rows
 * (ks_hits_day: per shield, host, verdict and day; ks_hits_hour: per
 * shield, verdict and hour), a host's hits through the partial index on
 * kind = 'shield' by host, its events through (host, seq, ts), newest
 * first, partition by partition. The connection is read-only
 * (default_transaction_read_only) with a statement timeout: the page never
 * writes and never holds the database for long.
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "events.h"
#include "fleet_dl.h"
#include "hunt_pg.h"
#include "view_api.h"

#define STR_(x) #x
#define KS_STR(x) STR_(x)
#define HIT_GROUPS 200		/* groups listed; the rest are counted */
#define RECENT 100		/* recent execs / connections of a host */

#define MS(col) "(extract(epoch FROM " col ") * 1000)::bigint"
/* A shield event's detail, whether shipped as an object or as its text. */
#define DETAIL "(CASE jsonb_typeof(data->'detail') WHEN 'string' THEN (data->>'detail')::jsonb " \
	"ELSE data->'detail' END)"

static int pg_conn(struct ks_view *v)
{
	PGresult *r;

	if (v->pg && pq_fn.PQstatus(v->pg) == CONNECTION_OK)
		return 0;
	if (v->pg)
		pq_fn.PQfinish(v->pg);
	v->pg = pq_fn.PQconnectdb(v->pginfo);
	if (pq_fn.PQstatus(v->pg) != CONNECTION_OK) {
		int err = ks_err(-EIO, "postgresql: connect: %s",
				 strtok(pq_fn.PQerrorMessage(v->pg), "\n") ?: "?");

		pq_fn.PQfinish(v->pg);
		v->pg = NULL;
		return err;
	}
	r = pq_fn.PQexec(v->pg, "SET default_transaction_read_only = on; SET statement_timeout = '20s'");
	pq_fn.PQclear(r);
	return 0;
}

/* Run @sql with text parameters; NULL (message recorded) on failure. */
static PGresult *query(struct ks_view *v, const char *sql, int n, const char *const *params)
{
	PGresult *r;

	if (pg_conn(v))
		return NULL;
	r = pq_fn.PQexecParams(v->pg, sql, n, NULL, params, NULL, NULL, 0);
	if (pq_fn.PQresultStatus(r) != PGRES_TUPLES_OK) {
		const char *state = pq_fn.PQresultErrorField(r, PG_DIAG_SQLSTATE);
		bool no_table = state && !strcmp(state, "42P01");
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", pq_fn.PQresultErrorMessage(r));
		pq_fn.PQclear(r);
		/* No table yet: no collector, or one older than the rollups. */
		ks_err(-EIO, "postgresql: %s%s", strtok(msg, "\n") ?: "?", no_table ?
		       " (start this version's `kshield collect` once: it makes the tables the page reads)" : "");
		return NULL;
	}
	return r;
}

static const char *val(PGresult *r, int i, int c)
{
	return pq_fn.PQgetvalue(r, i, c);
}

static int64_t num(PGresult *r, int i, int c)
{
	return strtoll(pq_fn.PQgetvalue(r, i, c), NULL, 10);
}

static void add_str(json_object *o, const char *k, const char *s)
{
	json_object_object_add(o, k, json_object_new_string(s));
}

static void add_i64(json_object *o, const char *k, int64_t n)
{
	json_object_object_add(o, k, json_object_new_int64(n));
}

static json_object *child(json_object *o, const char *k)
{
	json_object *c;

	if (!json_object_object_get_ex(o, k, &c)) {
		c = json_object_new_object();
		json_object_object_add(o, k, c);
	}
	return c;
}

int ks_view_pg_hits(struct ks_view *v, json_object *o)
{
	/* Per shield and verdict, and per shield (verdict NULL): each
	 * ks_hits_day row is one host's hits of a day. */
	static const char sql[] =
		"SELECT shield, verdict, grouping(verdict), sum(hits), count(DISTINCT host), "
		MS("max(last_ts)") " FROM ks_hits_day"
		" GROUP BY GROUPING SETS ((shield, verdict), (shield))";
	json_object *hits = json_object_new_object();
	PGresult *r = query(v, sql, 0, NULL);

	json_object_object_add(o, "hits", hits);
	if (!r)
		return -EIO;
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		json_object *s = child(hits, val(r, i, 0));

		if (num(r, i, 2)) {
			add_i64(s, "hits", num(r, i, 3));
			add_i64(s, "hosts", num(r, i, 4));
			add_i64(s, "last", num(r, i, 5));
		} else {
			add_i64(child(s, "verdicts"), val(r, i, 1), num(r, i, 3));
		}
	}
	pq_fn.PQclear(r);
	return 0;
}

int ks_view_pg_shield(struct ks_view *v, const char *name, json_object *o)
{
	/* The last 7 days by UTC hour (the hour 7 days ago whole). */
	static const char hourly[] =
		"SELECT (extract(epoch FROM hour) * 1000)::bigint, verdict, hits FROM ks_hits_hour"
		" WHERE shield = $1 AND hour >= date_trunc('hour', now() AT TIME ZONE 'UTC' - interval '7 days')"
		" ORDER BY hour, verdict";
	static const char by_host[] =
		"SELECT host, verdict, sum(hits), " MS("min(first_ts)") ", " MS("max(last_ts)") ","
		" count(*) OVER (), sum(sum(hits)) OVER () FROM ks_hits_day WHERE shield = $1"
		" GROUP BY 1, 2 ORDER BY 3 DESC, 1 LIMIT " KS_STR(HIT_GROUPS);
	json_object *hours = json_object_new_array(), *hosts = json_object_new_array();
	PGresult *r;

	json_object_object_add(o, "hits_by_hour", hours);
	json_object_object_add(o, "hits_by_host", hosts);
	if (!(r = query(v, hourly, 1, &name)))
		return -EIO;
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		json_object *h = json_object_new_object();

		add_i64(h, "t", num(r, i, 0));
		add_str(h, "verdict", val(r, i, 1));
		add_i64(h, "hits", num(r, i, 2));
		json_object_array_add(hours, h);
	}
	pq_fn.PQclear(r);
	if (!(r = query(v, by_host, 1, &name)))
		return -EIO;
	add_i64(o, "hit_groups", pq_fn.PQntuples(r) ? num(r, 0, 5) : 0);
	add_i64(o, "hits_total", pq_fn.PQntuples(r) ? num(r, 0, 6) : 0);
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		json_object *h = json_object_new_object();

		add_str(h, "host", val(r, i, 0));
		add_str(h, "verdict", val(r, i, 1));
		add_i64(h, "hits", num(r, i, 2));
		add_i64(h, "first", num(r, i, 3));
		add_i64(h, "last", num(r, i, 4));
		json_object_array_add(hosts, h);
	}
	pq_fn.PQclear(r);
	return 0;
}

/* A hit group's argument words by name: "family=AF_ALG fd=3". */
static void decode_args(json_object *g, const char *shield, const char *hook, const char *args)
{
	json_object *a = json_tokener_parse(args);
	__u64 w[KS_SHIELD_ARGS] = { 0 };
	char buf[512];

	if (!a || !json_object_is_type(a, json_type_array) || !*hook) {
		json_object_put(a);
		add_str(g, "args", "");
		return;
	}
	for (size_t i = 0; i < KS_SHIELD_ARGS && i < json_object_array_length(a); i++)
		w[i] = (__u64)json_object_get_uint64(json_object_array_get_idx(a, i));
	ks_shield_args_str(ks_shield_args_find(shield, hook, w), w, buf, sizeof(buf));
	add_str(g, "args", buf);
	json_object_put(a);
}

int ks_view_pg_host(struct ks_view *v, const char *host, json_object *o)
{
	static const char kinds[] =
		"SELECT kind, count(*), " MS("max(ts)") " FROM ks_events WHERE host = $1 GROUP BY 1";
	static const char execs[] =
		"SELECT " MS("ts") ", coalesce(data->>'pid', ''), coalesce(data->>'ppid', ''),"
		" coalesce(data->>'uid', ''), coalesce(data->>'comm', ''), coalesce(data->>'binary', ''),"
		" coalesce(data->>'args', '') FROM ks_events WHERE host = $1 AND kind = 'exec'"
		" ORDER BY seq DESC LIMIT " KS_STR(RECENT);
	static const char conns[] =
		"SELECT " MS("ts") ", kind, coalesce(data->>'pid', ''), coalesce(data->>'comm', ''),"
		" coalesce(data->>'laddr', ''), coalesce(data->>'lport', ''), coalesce(data->>'raddr', ''),"
		" coalesce(data->>'rport', '') FROM ks_events WHERE host = $1"
		" AND kind IN ('connect', 'accept') ORDER BY seq DESC LIMIT " KS_STR(RECENT);
	/* Hits grouped by what they were: shield, verdict, process (its
	 * name, and the binary and arguments of its exec when stored), hook
	 * and argument words; every group counted, the newest listed. */
	static const char hits[] =
		"WITH h AS (SELECT ts, data FROM ks_events WHERE host = $1 AND kind = 'shield'),"
		" x AS (SELECT DISTINCT ON (data->>'exec_id') data->>'exec_id' AS id,"
		"  data->>'binary' AS bin, data->>'args' AS args FROM ks_events WHERE host = $1"
		"  AND kind = 'exec' AND data->>'exec_id' IN (SELECT data->>'exec_id' FROM h))"
		" SELECT data->>'shield', coalesce(data->>'verdict', ''), coalesce(data->>'comm', ''),"
		" coalesce(x.bin, ''), coalesce(x.args, ''),"
		" coalesce(" DETAIL "->>'hook', ''), coalesce((" DETAIL "->'args')::text, ''),"
		" count(*), " MS("min(ts)") ", " MS("max(ts)") ", count(*) OVER (), sum(count(*)) OVER ()"
		" FROM h LEFT JOIN x ON x.id = h.data->>'exec_id' GROUP BY 1, 2, 3, 4, 5, 6, 7"
		" ORDER BY 10 DESC LIMIT " KS_STR(HIT_GROUPS);
	static const char *const ecol[] = { "ts", "pid", "ppid", "uid", "comm", "binary", "args" };
	static const char *const ccol[] = { "ts", "kind", "pid", "comm", "laddr", "lport", "raddr", "rport" };
	json_object *counts = json_object_new_object(), *ex = json_object_new_array();
	json_object *cx = json_object_new_array(), *hx = json_object_new_array();
	int64_t last = 0;
	PGresult *r;

	json_object_object_add(o, "event_counts", counts);
	json_object_object_add(o, "execs", ex);
	json_object_object_add(o, "connections", cx);
	json_object_object_add(o, "hits", hx);
	if (!(r = query(v, kinds, 1, &host)))
		return -EIO;
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		add_i64(counts, val(r, i, 0), num(r, i, 1));
		if (num(r, i, 2) > last)
			last = num(r, i, 2);
	}
	add_i64(o, "last_event", last);
	pq_fn.PQclear(r);
	if (!(r = query(v, execs, 1, &host)))
		return -EIO;
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		json_object *e = json_object_new_object();

		add_i64(e, "ts", num(r, i, 0));
		for (int c = 1; c < 7; c++)
			add_str(e, ecol[c], val(r, i, c));
		json_object_array_add(ex, e);
	}
	pq_fn.PQclear(r);
	if (!(r = query(v, conns, 1, &host)))
		return -EIO;
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		json_object *e = json_object_new_object();

		add_i64(e, "ts", num(r, i, 0));
		for (int c = 1; c < 8; c++)
			add_str(e, ccol[c], val(r, i, c));
		json_object_array_add(cx, e);
	}
	pq_fn.PQclear(r);
	if (!(r = query(v, hits, 1, &host)))
		return -EIO;
	add_i64(o, "hit_groups", pq_fn.PQntuples(r) ? num(r, 0, 10) : 0);
	add_i64(o, "hits_total", pq_fn.PQntuples(r) ? num(r, 0, 11) : 0);
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		json_object *g = json_object_new_object();

		add_str(g, "shield", val(r, i, 0));
		add_str(g, "verdict", val(r, i, 1));
		add_str(g, "comm", val(r, i, 2));
		add_str(g, "binary", val(r, i, 3));
		add_str(g, "cmdline", val(r, i, 4));
		add_str(g, "hook", val(r, i, 5));
		decode_args(g, val(r, i, 0), val(r, i, 5), val(r, i, 6));
		add_i64(g, "hits", num(r, i, 7));
		add_i64(g, "first", num(r, i, 8));
		add_i64(g, "last", num(r, i, 9));
		json_object_array_add(hx, g);
	}
	pq_fn.PQclear(r);
	return 0;
}

static void hunt_row(const char *host, long long hits, long long first, long long last, void *ctx)
{
	json_object *h = json_object_new_object();

	add_str(h, "host", host);
	add_i64(h, "hits", hits);
	add_i64(h, "first", first);	/* the store's ts: ns */
	add_i64(h, "last", last);
	json_object_array_add(ctx, h);
}

int ks_view_pg_hunt(struct ks_view *v, const char *name, const char *sql, json_object *o)
{
	json_object *rows = json_object_new_array();

	(void)v;
	json_object_object_add(o, "rows", rows);
	return ks_hunt_pg(v->pginfo, name, sql, hunt_row, rows, &(const struct ks_hunt_pg_opts){
		.since = 0, .until = INT64_MAX, .limit = HIT_GROUPS });
}
#endif /* KSHIELD_STATIC */
