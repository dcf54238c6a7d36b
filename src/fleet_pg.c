/* fleet_pg.c - writing fleet events into PostgreSQL with COPY, into day
 * partitions created on demand, de-duplicated on (host, seq); retention by
 * dropping whole partitions (no DELETE, no vacuum debt). See fleet_pg.h.
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "fleet_pg.h"

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS ks_events ("
	" host text NOT NULL, seq bigint NOT NULL, ts timestamptz NOT NULL,"
	" kind text NOT NULL DEFAULT '', data jsonb NOT NULL,"
	" collected_at timestamptz NOT NULL DEFAULT now()) PARTITION BY RANGE (ts);"
	"CREATE UNIQUE INDEX IF NOT EXISTS ks_events_host_seq ON ks_events (host, seq, ts);"
	"CREATE INDEX IF NOT EXISTS ks_events_kind_ts ON ks_events (kind, ts);";

static int pg_fail(struct ks_pg *pg, const char *what)
{
	return ks_err(-EIO, "postgresql: %s: %s", what, strtok(PQerrorMessage(pg->c), "\n") ?: "?");
}

static int exec_ok(struct ks_pg *pg, const char *sql, const char *what)
{
	PGresult *r = PQexec(pg->c, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	PQclear(r);
	return ok ? 0 : pg_fail(pg, what);
}

int ks_pg_open(struct ks_pg *pg, const char *conninfo)
{
	if (!pg->conninfo) {
		memset(pg, 0, sizeof(*pg));
		pg->conninfo = strdup(conninfo);
	}
	if (pg->c && PQstatus(pg->c) == CONNECTION_OK)
		return 0;
	if (pg->c)
		PQfinish(pg->c);
	pg->ndays = 0;
	pg->c = PQconnectdb(pg->conninfo);
	if (PQstatus(pg->c) != CONNECTION_OK)
		return pg_fail(pg, "connect");
	PQsetNoticeProcessor(pg->c, NULL, NULL);
	if (exec_ok(pg, "SET client_min_messages = warning", "set") ||
	    exec_ok(pg, schema_sql, "creating ks_events") ||
	    exec_ok(pg, "CREATE TEMP TABLE IF NOT EXISTS ks_stage (host text, seq bigint,"
		    " ts_ms bigint, kind text, data text)", "creating the staging table"))
		return -EIO;
	return 0;
}

void ks_pg_close(struct ks_pg *pg)
{
	if (pg->c)
		PQfinish(pg->c);
	free(pg->conninfo);
	memset(pg, 0, sizeof(*pg));
}

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
	snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS ks_events_%.4s%.2s%.2s PARTITION OF "
		 "ks_events FOR VALUES FROM ('%s 00:00:00+00') TO ('%s 00:00:00+00')",
		 a, a + 5, a + 8, a, b);
	if (exec_ok(pg, sql, "creating a day partition"))
		return -EIO;
	if (pg->ndays < (int)(sizeof(pg->days) / sizeof(pg->days[0])))
		pg->days[pg->ndays++] = day;
	return 0;
}

/* COPY text format: backslash, tab, newline and CR must be escaped. */
static void put_escaped(char **p, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\\': *(*p)++ = '\\'; *(*p)++ = '\\'; break;
		case '\t': *(*p)++ = '\\'; *(*p)++ = 't'; break;
		case '\n': *(*p)++ = '\\'; *(*p)++ = 'n'; break;
		case '\r': *(*p)++ = '\\'; *(*p)++ = 'r'; break;
		default: *(*p)++ = *s;
		}
	}
}

int64_t ks_pg_write(struct ks_pg *pg, const struct ks_pg_row *rows, int n)
{
	PGresult *r;
	int64_t inserted;
	size_t cap = 0;
	char *buf, *p;
	int err;

	err = ks_pg_open(pg, pg->conninfo);
	if (err)
		return err;
	for (int i = 0; i < n; i++)
		cap += 2 * (strlen(rows[i].host) + strlen(rows[i].kind) + strlen(rows[i].data)) + 64;
	buf = malloc(cap + 1);
	if (!buf)
		return ks_err(-ENOMEM, "out of memory");
	p = buf;
	for (int i = 0; i < n; i++) {
		put_escaped(&p, rows[i].host);
		p += sprintf(p, "\t%lld\t%lld\t", (long long)rows[i].seq, (long long)rows[i].ts_ms);
		put_escaped(&p, rows[i].kind);
		*p++ = '\t';
		put_escaped(&p, rows[i].data);
		*p++ = '\n';
	}
	if ((err = exec_ok(pg, "BEGIN", "begin")))
		goto fail;
	for (int i = 0; i < n; i++)
		if ((err = ensure_partition(pg, rows[i].ts_ms / 86400000)))
			goto rollback;
	if ((err = exec_ok(pg, "TRUNCATE ks_stage", "truncating the staging table")))
		goto rollback;
	r = PQexec(pg->c, "COPY ks_stage FROM STDIN");
	if (PQresultStatus(r) != PGRES_COPY_IN) {
		PQclear(r);
		err = pg_fail(pg, "copy");
		goto rollback;
	}
	PQclear(r);
	if (PQputCopyData(pg->c, buf, p - buf) != 1 || PQputCopyEnd(pg->c, NULL) != 1) {
		err = pg_fail(pg, "copy data");
		goto rollback;
	}
	r = PQgetResult(pg->c);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		PQclear(r);
		err = pg_fail(pg, "copy");
		goto rollback;
	}
	PQclear(r);
	while ((r = PQgetResult(pg->c)))
		PQclear(r);
	r = PQexec(pg->c, "INSERT INTO ks_events (host, seq, ts, kind, data) "
		   "SELECT DISTINCT ON (host, seq) host, seq, to_timestamp(ts_ms / 1000.0), kind, data::jsonb "
		   "FROM ks_stage ON CONFLICT DO NOTHING");
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		PQclear(r);
		err = pg_fail(pg, "insert");
		goto rollback;
	}
	inserted = atoll(PQcmdTuples(r));
	PQclear(r);
	if ((err = exec_ok(pg, "COMMIT", "commit")))
		goto fail;
	free(buf);
	return inserted;
rollback:
	if (PQstatus(pg->c) == CONNECTION_OK) {
		r = PQexec(pg->c, "ROLLBACK");
		PQclear(r);
	}
fail:
	/* A broken connection is reopened by the next write. */
	if (PQstatus(pg->c) != CONNECTION_OK) {
		PQfinish(pg->c);
		pg->c = NULL;
	}
	free(buf);
	return err;
}

int ks_pg_retain(struct ks_pg *pg, int days)
{
	char sql[256], cut[16];
	time_t t = time(NULL) - (time_t)days * 86400;
	struct tm tm;
	PGresult *r;
	int dropped = 0, err = ks_pg_open(pg, pg->conninfo);

	if (err)
		return err;
	strftime(cut, sizeof(cut), "%Y%m%d", gmtime_r(&t, &tm));
	/* Partitions are named ks_events_YYYYMMDD: compare names, drop whole days. */
	r = PQexec(pg->c, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
		   "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'ks_events'");
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return pg_fail(pg, "listing partitions");
	}
	for (int i = 0; i < PQntuples(r); i++) {
		const char *name = PQgetvalue(r, i, 0);

		if (strlen(name) != 18 || strcmp(name + 10, cut) >= 0)
			continue;
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", name);
		if (!exec_ok(pg, sql, "dropping a partition"))
			dropped++;
	}
	PQclear(r);
	pg->ndays = 0;
	return dropped;
}
#endif /* KSHIELD_STATIC */
