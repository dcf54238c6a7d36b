// SPDX-License-Identifier: MIT
/* fleet_pg.c - writing fleet events into PostgreSQL with COPY, into day
 * partitions created on demand, de-duplicated on (host, seq); retention by
 * dropping whole partitions (no DELETE, no vacuum debt). See fleet_pg.h.
 *
 * Measured here (200k events, PostgreSQL 15): COPY straight into ks_events
 * takes about half the time of COPY into a staging table followed by
 * INSERT ... SELECT ... ON CONFLICT, so the staging path is kept for the
 * rare batch that holds a duplicate (the unique key refuses the COPY).
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "array.h"
#include "buf.h"
#include "err.h"
#include "fleet_pg.h"
#include "fleet_dl.h"

/* The hits rolled up, for the fleet page (view_pg.c): counting 100,000
 * hit rows' JSON took it seconds at 10,000 hosts. ks_hits_day is per
 * shield, host, verdict and UTC day (the day partitions' days, so that
 * retention drops exactly the rows of the partitions it drops);
 * ks_hits_hour per shield, verdict and UTC hour, for the hits-over-time
 * chart. A statement trigger on ks_events adds each INSERT's or COPY's
 * new shield rows (its transition table: only the rows stored, not the
 * duplicates ON CONFLICT skipped) in the writer's own transaction, so
 * the rollups equal the rows whoever writes them, an older collector
 * included. Rows are locked in key order: two writers wait, never
 * deadlock. Measured here (16,384-row COPYs, 1% hits, 20 with the
 * trigger and 20 without, interleaved, 3 runs): medians 7%, 4% and -3%
 * apart, about 3% on average.
 *
 * A store made before the rollups gets them filled from its rows under a
 * SHARE lock (writers wait for the fill), once: the advisory lock makes
 * collectors that start together do it (and make ks_events) one at a
 * time. */
#define KS_PG_SCHEMA_LOCK	"1802728291"	/* "kssc" */
#define HIT_KEY "coalesce(data->>'shield', ''), host, coalesce(data->>'verdict', '')"
#define HIT_DAY "(ts AT TIME ZONE 'UTC')::date"
#define HIT_HOUR "date_trunc('hour', ts AT TIME ZONE 'UTC')"
#define HITS_DAY_FROM(src) "SELECT " HIT_KEY ", " HIT_DAY ", count(*), min(ts), max(ts) FROM " src \
	" WHERE kind = 'shield' GROUP BY 1, 2, 3, 4"
#define HITS_HOUR_FROM(src) "SELECT coalesce(data->>'shield', ''), coalesce(data->>'verdict', ''), " \
	HIT_HOUR ", count(*) FROM " src " WHERE kind = 'shield' GROUP BY 1, 2, 3"

#define HITS_SQL \
	"DO $$ BEGIN" \
	" IF to_regclass('ks_hits_day') IS NOT NULL THEN RETURN; END IF;" \
	" LOCK TABLE ks_events IN SHARE MODE;" \
	" CREATE TABLE ks_hits_day (shield text NOT NULL, host text NOT NULL, verdict text NOT NULL," \
	"  day date NOT NULL, hits bigint NOT NULL, first_ts timestamptz NOT NULL," \
	"  last_ts timestamptz NOT NULL, PRIMARY KEY (shield, host, verdict, day));" \
	" CREATE TABLE ks_hits_hour (shield text NOT NULL, verdict text NOT NULL," \
	"  hour timestamp NOT NULL, hits bigint NOT NULL, PRIMARY KEY (shield, verdict, hour));" \
	" INSERT INTO ks_hits_day " HITS_DAY_FROM("ks_events") ";" \
	" INSERT INTO ks_hits_hour " HITS_HOUR_FROM("ks_events") ";" \
	" CREATE FUNCTION ks_hits_add() RETURNS trigger LANGUAGE plpgsql" \
	"  SET search_path FROM CURRENT AS $f$ BEGIN" \
	"  INSERT INTO ks_hits_day AS t " HITS_DAY_FROM("ks_new") " ORDER BY 1, 2, 3, 4" \
	"   ON CONFLICT (shield, host, verdict, day) DO UPDATE SET hits = t.hits + excluded.hits," \
	"   first_ts = least(t.first_ts, excluded.first_ts), last_ts = greatest(t.last_ts, excluded.last_ts);" \
	"  INSERT INTO ks_hits_hour AS t " HITS_HOUR_FROM("ks_new") " ORDER BY 1, 2, 3" \
	"   ON CONFLICT (shield, verdict, hour) DO UPDATE SET hits = t.hits + excluded.hits;" \
	"  RETURN NULL;" \
	" END $f$;" \
	" CREATE TRIGGER ks_hits_add AFTER INSERT ON ks_events REFERENCING NEW TABLE AS ks_new" \
	"  FOR EACH STATEMENT EXECUTE FUNCTION ks_hits_add();" \
	" END $$;"

static const char schema_sql[] =
	"SELECT pg_advisory_xact_lock(" KS_PG_SCHEMA_LOCK ");"
	"CREATE TABLE IF NOT EXISTS ks_events ("
	" host text NOT NULL, seq bigint NOT NULL, ts timestamptz NOT NULL,"
	" kind text NOT NULL DEFAULT '', data jsonb NOT NULL,"
	" collected_at timestamptz NOT NULL DEFAULT now()) PARTITION BY RANGE (ts);"
	"CREATE UNIQUE INDEX IF NOT EXISTS ks_events_host_seq ON ks_events (host, seq, ts);"
	/* A kind index for the rare kinds only: the bulk kinds are too
	 * common for it to help a hunt (day partitions narrow time), and
	 * it cost a quarter of PostgreSQL's time per row (measured). */
	"DROP INDEX IF EXISTS ks_events_kind_ts;"
	"CREATE INDEX IF NOT EXISTS ks_events_rare_kind_ts ON ks_events (kind, ts)"
	" WHERE kind NOT IN ('exec', 'exit', 'connect', 'accept', 'listen', 'flow');"
	/* Shield hits, by shield and by host: what the fleet page counts
	 * (view_pg.c). Hits are rare, so these cost ingest next to nothing. */
	"CREATE INDEX IF NOT EXISTS ks_events_hits_shield ON ks_events ((data->>'shield'), ts)"
	" WHERE kind = 'shield';"
	"CREATE INDEX IF NOT EXISTS ks_events_hits_host ON ks_events (host, ts) WHERE kind = 'shield';"
	HITS_SQL;

/* The COPY column list, in the order ks_pg_batch_add writes them. */
#define PG_COLUMNS "host, seq, ts, kind, data"

static int pg_fail(struct ks_pg *pg, const char *what)
{
	return ks_err(-EIO, "postgresql: %s: %s", what, strtok(pq_fn.PQerrorMessage(pg->c), "\n") ?: "?");
}

/* A failed statement: -EINVAL when the data itself was refused (SQLSTATE
 * class 22, data exception), -EEXIST for a unique violation, else -EIO. */
static int res_fail(struct ks_pg *pg, PGresult *r, const char *what)
{
	const char *state = r ? pq_fn.PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	int err = pg_fail(pg, what);

	if (state && !strcmp(state, "23505"))
		err = -EEXIST;
	else if (state && !strncmp(state, "22", 2))
		err = -EINVAL;
	pq_fn.PQclear(r);
	return err;
}

static int exec_ok(struct ks_pg *pg, const char *sql, const char *what)
{
	PGresult *r = pq_fn.PQexec(pg->c, sql);

	if (pq_fn.PQresultStatus(r) == PGRES_COMMAND_OK || pq_fn.PQresultStatus(r) == PGRES_TUPLES_OK) {
		pq_fn.PQclear(r);
		return 0;
	}
	return res_fail(pg, r, what);
}

int ks_pg_open(struct ks_pg *pg, const char *conninfo)
{
	int err;

	if ((err = ks_fleet_pq_load()))
		return err;
	if (!pg->conninfo) {
		memset(pg, 0, sizeof(*pg));
		pg->conninfo = strdup(conninfo);
	}
	if (pg->c && pq_fn.PQstatus(pg->c) == CONNECTION_OK)
		return 0;
	if (pg->c)
		pq_fn.PQfinish(pg->c);
	pg->ndays = 0;
	pg->c = pq_fn.PQconnectdb(pg->conninfo);
	if (pq_fn.PQstatus(pg->c) != CONNECTION_OK)
		return pg_fail(pg, "connect");
	pq_fn.PQsetNoticeProcessor(pg->c, NULL, NULL);
	if (exec_ok(pg, "SET client_min_messages = warning", "set") ||
	    exec_ok(pg, schema_sql, "creating ks_events") ||
	    exec_ok(pg, "CREATE TEMP TABLE IF NOT EXISTS ks_stage (host text, seq bigint,"
		    " ts timestamptz, kind text, data text)", "creating the staging table"))
		return -EIO;
	return 0;
}

void ks_pg_close(struct ks_pg *pg)
{
	if (pg->c)
		pq_fn.PQfinish(pg->c);
	free(pg->conninfo);
	memset(pg, 0, sizeof(*pg));
}

/* Outside the batch's transaction, so that a rolled-back batch never
 * leaves a partition in the cache that does not exist. Two writers that
 * create the same partition at once make one of them fail even with IF
 * NOT EXISTS (the catalog's unique index): the statement pair runs as
 * one implicit transaction holding an advisory lock, so they queue. */
#define KS_PG_PARTITION_LOCK	0x6b737064	/* "kspd": any number all writers share */

static int ensure_partition(struct ks_pg *pg, int64_t day)
{
	char sql[512], a[16], b[16];
	time_t t0 = day * 86400, t1 = t0 + 86400;
	struct tm tm;

	for (int i = 0; i < pg->ndays; i++)
		if (pg->days[i] == day)
			return 0;
	strftime(a, sizeof(a), "%Y-%m-%d", gmtime_r(&t0, &tm));
	strftime(b, sizeof(b), "%Y-%m-%d", gmtime_r(&t1, &tm));
	snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock(%d); "
		 "CREATE TABLE IF NOT EXISTS ks_events_%.4s%.2s%.2s PARTITION OF "
		 "ks_events FOR VALUES FROM ('%s 00:00:00+00') TO ('%s 00:00:00+00')",
		 KS_PG_PARTITION_LOCK, a, a + 5, a + 8, a, b);
	if (exec_ok(pg, sql, "creating a day partition"))
		return -EIO;
	if (pg->ndays < (int)ARRAY_SIZE(pg->days))
		pg->days[pg->ndays++] = day;
	return 0;
}

static int grow(struct ks_pg_batch *b, size_t more)
{
	return ks_buf_reserve(&b->buf, &b->cap, b->len + more, 1 << 20);
}

/* COPY text format: backslash, tab, newline and CR must be escaped. */
static void put_escaped(struct ks_pg_batch *b, const char *s, size_t n)
{
	char *p = b->buf + b->len;

	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '\\': *p++ = '\\'; *p++ = '\\'; break;
		case '\t': *p++ = '\\'; *p++ = 't'; break;
		case '\n': *p++ = '\\'; *p++ = 'n'; break;
		case '\r': *p++ = '\\'; *p++ = 'r'; break;
		default: *p++ = s[i];
		}
	}
	b->len = p - b->buf;
}

int ks_pg_batch_add(struct ks_pg_batch *b, const char *host, int64_t seq, int64_t ts_ms,
		    const char *kind, const char *data, size_t dlen, int brace)
{
	size_t hl = strlen(host), kl = strlen(kind), start = b->len;
	int64_t day = ts_ms >= 0 ? ts_ms / 86400000 : (ts_ms - 86399999) / 86400000;
	int64_t sec = day * 86400 + (ts_ms - day * 86400000) / 1000;
	bool known = false;

	if (grow(b, 2 * (hl + kl + dlen) + 80))
		return -ENOMEM;
	/* Timestamps as UTC text; the formatting is cached per second. */
	if (sec != b->sec || !b->sec_txt[0]) {
		time_t t = sec;
		struct tm tm;

		strftime(b->sec_txt, sizeof(b->sec_txt), "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
		b->sec = sec;
	}
	put_escaped(b, host, hl);
	b->len += sprintf(b->buf + b->len, "\t%lld\t%s.%03d+00\t", (long long)seq, b->sec_txt,
			  (int)(ts_ms - sec * 1000));
	put_escaped(b, kind, kl);
	b->buf[b->len++] = '\t';
	if (brace)
		b->buf[b->len++] = '{';
	put_escaped(b, data, dlen);
	b->buf[b->len++] = '\n';
	b->rows++;
	/* A hit goes after the batch's other rows (see fleet_pg.h). */
	if (!strcmp(kind, "shield")) {
		size_t n = b->len - start;

		if (ks_buf_reserve(&b->hits, &b->hcap, b->hlen + n, 1 << 16))
			return -ENOMEM;
		memcpy(b->hits + b->hlen, b->buf + start, n);
		b->hlen += n;
		b->len = start;
	}
	for (int i = 0; i < b->ndays && !known; i++)
		known = b->days[i] == day;
	if (!known && b->ndays < (int)ARRAY_SIZE(b->days))
		b->days[b->ndays++] = day;
	return 0;
}

void ks_pg_batch_reset(struct ks_pg_batch *b)
{
	b->len = 0;
	b->hlen = 0;
	b->rows = 0;
	b->ndays = 0;
}

void ks_pg_batch_free(struct ks_pg_batch *b)
{
	free(b->buf);
	free(b->hits);
	memset(b, 0, sizeof(*b));
}

/* COPY the batch into @table inside the open transaction; *@n gets the
 * rows COPY reported. */
static int copy_in(struct ks_pg *pg, const struct ks_pg_batch *b, const char *table, int64_t *n)
{
	char sql[128];
	PGresult *r;
	int err = 0;

	snprintf(sql, sizeof(sql), "COPY %s (" PG_COLUMNS ") FROM STDIN", table);
	r = pq_fn.PQexec(pg->c, sql);
	if (pq_fn.PQresultStatus(r) != PGRES_COPY_IN)
		return res_fail(pg, r, "copy");
	pq_fn.PQclear(r);
	if ((b->len && pq_fn.PQputCopyData(pg->c, b->buf, b->len) != 1) ||
	    (b->hlen && pq_fn.PQputCopyData(pg->c, b->hits, b->hlen) != 1) ||
	    pq_fn.PQputCopyEnd(pg->c, NULL) != 1)
		return pg_fail(pg, "copy data");
	while ((r = pq_fn.PQgetResult(pg->c))) {
		if (pq_fn.PQresultStatus(r) != PGRES_COMMAND_OK) {
			if (!err)
				err = res_fail(pg, r, "copy");
			else
				pq_fn.PQclear(r);
			continue;
		}
		*n = atoll(pq_fn.PQcmdTuples(r));
		pq_fn.PQclear(r);
	}
	return err;
}

static void rollback(struct ks_pg *pg)
{
	if (pq_fn.PQstatus(pg->c) == CONNECTION_OK)
		pq_fn.PQclear(pq_fn.PQexec(pg->c, "ROLLBACK"));
}

/* The slow path: through the staging table, skipping what is already
 * stored (and duplicates inside the batch). */
static int64_t write_staged(struct ks_pg *pg, const struct ks_pg_batch *b)
{
	PGresult *r;
	int64_t n = 0;
	int err;

	if ((err = exec_ok(pg, "BEGIN", "begin")))
		return err;
	if ((err = exec_ok(pg, "TRUNCATE ks_stage", "truncating the staging table")) ||
	    (err = copy_in(pg, b, "ks_stage", &n)))
		goto rollback;
	r = pq_fn.PQexec(pg->c, "INSERT INTO ks_events (" PG_COLUMNS ") "
		   "SELECT * FROM (SELECT DISTINCT ON (host, seq, ts) host, seq, ts, kind, data::jsonb"
		   " FROM ks_stage) s ORDER BY kind = 'shield' ON CONFLICT DO NOTHING");
	if (pq_fn.PQresultStatus(r) != PGRES_COMMAND_OK) {
		err = res_fail(pg, r, "insert");
		goto rollback;
	}
	n = atoll(pq_fn.PQcmdTuples(r));
	pq_fn.PQclear(r);
	if ((err = exec_ok(pg, "COMMIT", "commit")))
		return err;
	return n;
rollback:
	rollback(pg);
	return err;
}

int64_t ks_pg_write(struct ks_pg *pg, struct ks_pg_batch *b)
{
	int64_t n = 0;
	int err;

	err = ks_pg_open(pg, pg->conninfo);
	for (int i = 0; !err && i < b->ndays; i++)
		err = ensure_partition(pg, b->days[i]);
	if (err || !b->rows)
		goto out;
	if ((err = exec_ok(pg, "BEGIN", "begin")))
		goto out;
	err = copy_in(pg, b, "ks_events", &n);
	if (!err)
		err = exec_ok(pg, "COMMIT", "commit");
	else
		rollback(pg);
	if (!err) {
		pg->copies++;
		goto out;
	}
	if (err == -EEXIST) {
		/* Some rows are stored already (a re-send): skip those. */
		n = write_staged(pg, b);
		err = n < 0 ? (int)n : 0;
		if (!err)
			pg->fallbacks++;
	}
out:
	/* A broken connection is reopened by the next write. */
	if (err && pg->c && pq_fn.PQstatus(pg->c) != CONNECTION_OK) {
		pq_fn.PQfinish(pg->c);
		pg->c = NULL;
	}
	return err ? (err == -EEXIST ? -EIO : err) : n;
}
int ks_pg_retain(struct ks_pg *pg, int days)
{
	char sql[512], cut[16];
	time_t t = time(NULL) - (time_t)days * 86400;
	struct tm tm;
	PGresult *r;
	int dropped = 0, err = ks_pg_open(pg, pg->conninfo);

	if (err)
		return err;
	strftime(cut, sizeof(cut), "%Y%m%d", gmtime_r(&t, &tm));
	/* Partitions are named ks_events_YYYYMMDD: compare names, drop whole days. */
	r = pq_fn.PQexec(pg->c, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
		   "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'ks_events'");
	if (pq_fn.PQresultStatus(r) != PGRES_TUPLES_OK) {
		pq_fn.PQclear(r);
		return pg_fail(pg, "listing partitions");
	}
	for (int i = 0; i < pq_fn.PQntuples(r); i++) {
		const char *name = pq_fn.PQgetvalue(r, i, 0);

		if (strlen(name) != 18 || strcmp(name + 10, cut) >= 0)
			continue;
		/* The day's rolled-up hits go with it, in one transaction. */
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s;"
			 "DELETE FROM ks_hits_day WHERE day = '%s'::date;"
			 "DELETE FROM ks_hits_hour WHERE hour >= '%s'::date AND hour < '%s'::date + 1",
			 name, name + 10, name + 10, name + 10);
		if (!exec_ok(pg, sql, "dropping a partition"))
			dropped++;
	}
	pq_fn.PQclear(r);
	pg->ndays = 0;
	return dropped;
}
#endif /* KSHIELD_STATIC */
