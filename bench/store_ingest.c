// SPDX-License-Identifier: MIT
/* store_ingest.c - sustained ingest into the event store (src/lib/store/store.c), the
 * agent's write path without the kernel: decode + INSERT in batched WAL
 * transactions. The baseline, measured in the same run, is raw SQLite at
 * its best: one prepared 12-column INSERT of integers, 10k rows per
 * transaction, one (kind, ts) index (PLATFORM.md's figure). Hunts over a
 * filled store are timed against the same rows in the version 1 layout
 * (one table, (kind, ts) and (binary, ts) indexes), built in the same run.
 *
 *	store_ingest run DIR N [HUNT_N]  all of it, with ratios (HUNT_N 10M;
 *	                                 0: no hunts)
 *	store_ingest ingest DB N [connect]  events/s through ks_store_add
 *	                                 (connect: the connect storm's mix)
 *	store_ingest baseline DB N       rows/s, raw SQLite
 *	store_ingest fill DB N DAYS B    N events over DAYS days, B binaries
 *	store_ingest steps DB PID TS:N:GAP...  in one session, for each
 *	                                 segment N exit rows GAP ns apart from
 *	                                 TS (ns), pids counting up from PID:
 *	                                 a wall clock that steps (tests)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "cli.h"
#include "err.h"
#include "store.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void hdr(struct ks_hdr *h, unsigned kind, unsigned size, long i, __u64 ts)
{
	memset(h, 0, sizeof(*h));
	h->kind = kind;
	h->size = size;
	h->ts_ns = ts;
	h->pid = h->tgid = 1000 + i % 30000;
	h->ppid = 1;
	h->uid = h->euid = i % 7 ? 1000 : 0;
	h->cgroup_id = 1;
	h->exec_id = (ts << 8) | (i & 0xff);
	snprintf(h->comm, sizeof(h->comm), "proc%ld", i % 500);
}

/* A realistic mix: 30% exec, 30% exit, 40% connect/accept. The records
 * are built before the clock starts (the agent reads them ready-made from
 * the ring buffer); the loop only stamps their times. */
#define POOL 20000	/* records, 2000 binaries among the execs */

union rec {
	struct ks_hdr hdr;
	struct ks_exec_event ex;
	struct ks_exit_event xt;
	struct ks_conn_event cn;
};

/* The connect storm's mix (bench/connect_storm): one process's loopback
 * connections, a connect and an accept each. */
static bool conn_mix;

static union rec *pool_make(long nbin)
{
	union rec *pool = calloc(POOL, sizeof(*pool));

	for (long i = 0; pool && conn_mix && i < POOL; i++) {
		union rec *r = &pool[i];

		hdr(&r->hdr, i % 2 ? KS_EV_ACCEPT : KS_EV_CONNECT, sizeof(r->cn), 0, 0);
		snprintf(r->hdr.comm, sizeof(r->hdr.comm), "connect_storm");
		r->hdr.pid = 4242 + i % 2;
		r->hdr.tgid = 4242;
		r->hdr.cgroup_id = 0x2a4fULL;
		r->cn.family = AF_INET;
		r->cn.laddr[0] = r->cn.raddr[0] = 127;
		r->cn.laddr[3] = r->cn.raddr[3] = 1;
		r->cn.lport = i % 2 ? 5000 : 32768 + (i / 2) % 28000;
		r->cn.rport = i % 2 ? 32768 + (i / 2) % 28000 : 5000;
		r->cn.flags = i % 2 ? 0 : KS_CONN_ESTABLISHED;	/* as the monitor sends them */
	}
	for (long i = 0; pool && !conn_mix && i < POOL; i++) {
		union rec *r = &pool[i];

		switch (i % 10) {
		case 0: case 1: case 2:
			hdr(&r->hdr, KS_EV_EXEC, sizeof(r->ex), i, 0);
			r->ex.flags = 0;
			snprintf(r->ex.path, sizeof(r->ex.path), "/usr/bin/prog-%ld", (i / 10) % nbin);
			r->ex.argv_len = snprintf(r->ex.argv, sizeof(r->ex.argv), "prog-%ld%c--flag%c%ld",
						  (i / 10) % nbin, 0, 0, i) + 1;
			break;
		case 3: case 4: case 5:
			hdr(&r->hdr, KS_EV_EXIT, sizeof(r->xt), i, 0);
			r->xt.exit_code = 0;
			r->xt.lifetime_ns = 1000000;
			break;
		default:
			hdr(&r->hdr, i % 2 ? KS_EV_CONNECT : KS_EV_ACCEPT, sizeof(r->cn), i, 0);
			r->cn.family = AF_INET;
			r->cn.laddr[0] = 10; r->cn.laddr[3] = i & 0xff;
			r->cn.raddr[0] = 192; r->cn.raddr[1] = 168;
			r->cn.raddr[2] = (i >> 8) & 0xff; r->cn.raddr[3] = i & 0xff;
			r->cn.lport = 40000 + i % 20000;
			r->cn.rport = 443;
			r->cn.flags = KS_CONN_ESTABLISHED;
		}
	}
	return pool;
}

static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

struct rate {
	double per_s, per_cpu_s;
};

/* @n events over @days days ending now (0: 1 us apart), @nbin binaries. */
static int ingest(const char *path, long n, long days, long nbin, struct rate *out)
{
	union rec *pool = pool_make(nbin);
	struct ks_store *s;
	struct timespec rt;
	__s64 base;
	double t0, t1, c0, c1;
	int err;

	unlink(path);
	if (!pool || (err = ks_store_open(&s, path, KS_STORE_CREATE))) {
		fprintf(stderr, "open: %s\n", ks_errmsg());
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	/* timestamps spread over @days ending now */
	base = (__s64)rt.tv_sec * 1000000000LL - days * 86400LL * 1000000000LL;
	ks_store_note_clock(s, base);
	__u64 step = days ? (__u64)(days * 86400LL * 1000000000LL / n) : 1000;
	t0 = now();
	c0 = cpu();
	for (long i = 0; i < n; i++) {
		union rec *r = &pool[i % POOL];
		__u64 ts = i * step + 1;

		r->hdr.ts_ns = ts;
		r->hdr.exec_id = (ts << 8) | (i & 0xff);
		/* process trees four images deep: every fourth exec has no
		 * known parent, the others the exec ten records before */
		if (r->hdr.kind == KS_EV_EXEC)
			r->ex.parent_exec_id = i >= 10 && (i / 10) % 4 ?
				(((i - 10) * step + 1) << 8) | ((i - 10) & 0xff) : 0;
		if ((err = ks_store_add(s, r, r->hdr.size, base))) {
			fprintf(stderr, "add: %s\n", ks_errmsg());
			return 1;
		}
	}
	if (ks_store_commit(s) < 0) {
		fprintf(stderr, "commit: %s\n", ks_errmsg());
		return 1;
	}
	t1 = now();
	c1 = cpu();
	ks_store_close(s);
	free(pool);
	out->per_s = n / (t1 - t0);
	out->per_cpu_s = n / (c1 - c0);
	return 0;
}

/* Raw SQLite at its best, the PLATFORM.md figure: one prepared 12-column
 * INSERT of integers, 10k rows per transaction, one (kind, ts) index. */
static int baseline(const char *path, long n, struct rate *out)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	double t0, t1, c0, c1;

	unlink(path);
	sqlite3_open(path, &db);
	sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		     "CREATE TABLE t(ts INTEGER, kind INTEGER, pid INTEGER, tgid INTEGER, ppid INTEGER,"
		     " uid INTEGER, euid INTEGER, cg INTEGER, exec INTEGER, a INTEGER, b INTEGER, c INTEGER);"
		     "CREATE INDEX t_kind_ts ON t(kind, ts);", NULL, NULL, NULL);
	sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
	t0 = now();
	c0 = cpu();
	for (long i = 0; i < n; i++) {
		if (i % 10000 == 0)
			sqlite3_exec(db, i ? "COMMIT; BEGIN" : "BEGIN", NULL, NULL, NULL);
		sqlite3_bind_int64(st, 1, 1700000000000000000LL + i * 1000);
		sqlite3_bind_int(st, 2, i % 10);
		for (int c = 3; c <= 12; c++)
			sqlite3_bind_int64(st, c, i + c);
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	t1 = now();
	c1 = cpu();
	sqlite3_finalize(st);
	sqlite3_close(db);
	out->per_s = n / (t1 - t0);
	out->per_cpu_s = n / (c1 - c0);
	return 0;
}

static long long file_size(const char *path)
{
	char wal[4200];
	struct stat sb;
	long long n = 0;

	if (!stat(path, &sb))
		n = sb.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (!stat(wal, &sb))
		n += sb.st_size;
	return n;
}

static long long scalar(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The version 1 layout (one table, (kind, ts) and (binary, ts) indexes),
 * built from @src's rows: the "before" of the hunt comparison. */
static int copy_v1(const char *src, const char *dst)
{
	sqlite3 *db;
	char sql[8192];
	int rc;

	unlink(dst);
	sqlite3_open(dst, &db);
	snprintf(sql, sizeof(sql), "PRAGMA application_id=%d; PRAGMA user_version=1;"
		 "PRAGMA journal_mode=WAL; ATTACH '%s' AS src;"
		 "CREATE TABLE events(ts INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
		 " pid INTEGER, tgid INTEGER, ppid INTEGER, uid INTEGER, euid INTEGER,"
		 " comm TEXT, cgroup_id INTEGER, exec_id INTEGER, parent_exec_id INTEGER,"
		 " binary TEXT, args TEXT, laddr TEXT, lport INTEGER, raddr TEXT, rport INTEGER,"
		 " shield TEXT, verdict TEXT, alg_type TEXT, alg_name TEXT, ret INTEGER, detail TEXT);"
		 "INSERT INTO events SELECT ts, kind, tid, pid, ppid, uid, euid, comm, cgroup_id,"
		 " exec_id, parent_exec_id, binary, args, laddr, lport, raddr, rport, shield, verdict,"
		 " alg_type, alg_name, ret, detail FROM src.events ORDER BY ts;"
		 "CREATE INDEX events_kind_ts ON events(kind, ts);"
		 "CREATE INDEX events_binary ON events(binary, ts) WHERE binary IS NOT NULL;"
		 "PRAGMA wal_checkpoint(TRUNCATE);", KS_STORE_APP_ID, src);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		fprintf(stderr, "copy to the version 1 layout: %s\n", sqlite3_errmsg(db));
	sqlite3_close(db);
	return rc != SQLITE_OK;
}

/* Median wall ms of @sql over @path (a fresh read-only store, as hunts
 * open it, each time; every row stepped), :since/:until one day, :binary
 * one binary. */
static double hunt_ms(const char *path, const char *sql, __s64 since, __s64 until, long *rows)
{
	double t[9];
	int runs = 9;

	for (int r = 0; r < runs; r++) {
		struct ks_store *s;
		sqlite3 *db;
		sqlite3_stmt *st;
		double t0 = now();
		int i;

		if (ks_store_open(&s, path, KS_STORE_RDONLY)) {
			fprintf(stderr, "%s\n", ks_errmsg());
			exit(1);
		}
		db = ks_store_db(s);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
			fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
			exit(1);
		}
		if ((i = sqlite3_bind_parameter_index(st, ":since")))
			sqlite3_bind_int64(st, i, since);
		if ((i = sqlite3_bind_parameter_index(st, ":until")))
			sqlite3_bind_int64(st, i, until);
		if ((i = sqlite3_bind_parameter_index(st, ":binary")))
			sqlite3_bind_text(st, i, "/usr/bin/prog-42", -1, SQLITE_STATIC);
		*rows = 0;
		while (sqlite3_step(st) == SQLITE_ROW)
			(*rows)++;
		sqlite3_finalize(st);
		ks_store_close(s);
		t[r] = (now() - t0) * 1000;
	}
	for (int i = 0; i < runs; i++)		/* median */
		for (int j = i + 1; j < runs; j++)
			if (t[j] < t[i]) { double x = t[i]; t[i] = t[j]; t[j] = x; }
	return t[runs / 2];
}

static const struct { const char *name, *sql; } hunts[] = {
	{ "binary, one day (selective)",
	  "SELECT * FROM events WHERE binary = :binary AND ts BETWEEN :since AND :until ORDER BY ts" },
	{ "exits of one day, count",
	  "SELECT count(*) FROM events WHERE kind = 'exit' AND ts BETWEEN :since AND :until" },
	{ "shield hits, all time (none)",
	  "SELECT * FROM events WHERE kind = 'shield' ORDER BY ts" },
	{ "connections to one address, one day",
	  "SELECT * FROM events WHERE kind IN ('connect', 'accept') AND raddr = '192.168.1.42' AND "
	  "ts BETWEEN :since AND :until ORDER BY ts" },
};

/* Everything, ratios against baselines measured now. */
static int run(const char *dir, long n, long hunt_n)
{
	char db[4096], raw[4096], big[4096], v1[4096];
	struct rate ours, base;

	snprintf(db, sizeof(db), "%s/ingest.db", dir);
	snprintf(raw, sizeof(raw), "%s/raw.db", dir);
	if (ingest(db, n, 0, 2000, &ours) || baseline(raw, n, &base))
		return 1;
	printf("ingest of %ld events (30%% exec, 30%% exit, 40%% connect/accept, 2000 binaries)\n", n);
	printf("  kshield store: %8.0f events/s wall, %8.0f per CPU second, %.1f MB per million events\n",
	       ours.per_s, ours.per_cpu_s, file_size(db) / 1e6 * 1e6 / n);
	printf("  raw SQLite:    %8.0f rows/s wall,   %8.0f per CPU second (12 integers, one index)\n",
	       base.per_s, base.per_cpu_s);
	printf("  ratio store/raw: %.2fx wall, %.2fx per CPU second\n", ours.per_s / base.per_s,
	       ours.per_cpu_s / base.per_cpu_s);
	unlink(db); unlink(raw);
	conn_mix = true;
	if (ingest(db, n, 0, 2000, &ours))
		return 1;
	conn_mix = false;
	printf("  connect storm's mix (loopback connect + accept): %8.0f events/s wall, %8.0f per "
	       "CPU second, %.1f MB per million events\n", ours.per_s, ours.per_cpu_s,
	       file_size(db) / 1e6 * 1e6 / n);
	unlink(db);
	if (!hunt_n)
		return 0;

	/* hunts: HUNT_N events over 10 days, this layout against version 1's */
	struct timespec rt;
	struct rate fill;
	snprintf(big, sizeof(big), "%s/hunt.db", dir);
	snprintf(v1, sizeof(v1), "%s/hunt-v1.db", dir);
	if (ingest(big, hunt_n, 10, 2000, &fill) || copy_v1(big, v1))
		return 1;
	clock_gettime(CLOCK_REALTIME, &rt);
	__s64 day = 86400LL * 1000000000LL, end = (__s64)rt.tv_sec * 1000000000LL;
	__s64 since = end - 5 * day, until = since + day;
	sqlite3 *h;
	sqlite3_open_v2(big, &h, SQLITE_OPEN_READONLY, NULL);
	long long rows = scalar(h, "SELECT count(*) FROM events");
	sqlite3_close(h);
	printf("fill of %lld events over 10 days (exec chunks sealed each day, indexes built): "
	       "%.0f events/s wall, %.0f per CPU second\n", rows, fill.per_s, fill.per_cpu_s);
	printf("hunts over %lld events (10 days), median of 9, a fresh connection each\n", rows);
	printf("  size: %.1f MB per million events; version 1 layout %.1f MB\n",
	       file_size(big) / 1e6 * 1e6 / rows, file_size(v1) / 1e6 * 1e6 / rows);
	for (size_t i = 0; i < sizeof(hunts) / sizeof(hunts[0]); i++) {
		long a = 0, b = 0;
		double ms = hunt_ms(big, hunts[i].sql, since, until, &a);
		double old = hunt_ms(v1, hunts[i].sql, since, until, &b);

		printf("  %-38s %7.1f ms (%ld rows); version 1 layout %7.1f ms (%ld rows): ratio %.2fx\n",
		       hunts[i].name, ms, a, old, b, ms / old);
	}
	unlink(big); unlink(v1);
	return 0;
}

/* Exit rows at the times given, as an agent whose clock stepped between
 * segments writes them (tests/test_fleet.c). */
static int steps(const char *path, long pid, int nseg, char **seg)
{
	struct ks_store *s;
	int err = ks_store_open(&s, path, KS_STORE_CREATE);

	if (err)
		return fprintf(stderr, "%s: %s\n", path, ks_errmsg()), 1;
	for (int i = 0; i < nseg && !err; i++) {
		long long ts, gap;
		long n;
		struct ks_row r;

		if (sscanf(seg[i], "%lld:%ld:%lld", &ts, &n, &gap) != 3) {
			err = -EINVAL;
			fprintf(stderr, "segment '%s': want TS:N:GAP\n", seg[i]);
			break;
		}
		for (long k = 0; k < n && !err; k++, pid++) {
			ks_row_clear(&r);
			ks_row_set_num(&r, KS_COL_TS, ts + k * gap);
			ks_row_set_str(&r, KS_COL_KIND, "exit");
			ks_row_set_num(&r, KS_COL_PID, pid);
			ks_row_set_num(&r, KS_COL_TID, pid);
			ks_row_set_str(&r, KS_COL_COMM, "steps");
			err = ks_store_add_row(s, &r);
		}
		if (!err && ks_store_commit(s) < 0)
			err = -EIO;
	}
	if (err)
		fprintf(stderr, "%s: %s\n", path, ks_errmsg());
	ks_store_close(s);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct rate r;

	if (argc == 5 && !strcmp(argv[1], "ingest") && !strcmp(argv[4], "connect")) {
		conn_mix = true;
		argc--;
	}
	if (argc == 4 && !strcmp(argv[1], "ingest") && !ingest(argv[2], atol(argv[3]), 0, 2000, &r))
		return printf("%.0f events/s, %.0f per CPU second\n", r.per_s, r.per_cpu_s), 0;
	if (argc == 4 && !strcmp(argv[1], "baseline") && !baseline(argv[2], atol(argv[3]), &r))
		return printf("%.0f\n", r.per_s), 0;
	if (argc == 6 && !strcmp(argv[1], "fill") &&
	    !ingest(argv[2], atol(argv[3]), atol(argv[4]), atol(argv[5]), &r))
		return printf("%.0f\n", r.per_s), 0;
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "run"))
		return run(argv[2], atol(argv[3]), argc == 5 ? atol(argv[4]) : 10000000);
	if (argc >= 5 && !strcmp(argv[1], "steps"))
		return steps(argv[2], atol(argv[3]), argc - 4, argv + 4);
	if (argc >= 2 && strstr("ingest baseline fill run steps", argv[1]))
		return 1;
	fprintf(stderr, "usage: store_ingest run DIR N [HUNT_N]   ingest and hunts, with ratios\n"
		"       store_ingest ingest DB N [connect] | baseline DB N | fill DB N DAYS BINARIES\n"
		"       store_ingest steps DB PID TS:N:GAP...\n");
	return 2;
}
