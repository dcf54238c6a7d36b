/* store_ingest.c - sustained ingest into the event store (src/store.c), the
 * agent's write path without the kernel: decode + INSERT in batched WAL
 * transactions, with every index. The baseline, measured in the same run,
 * is raw SQLite at its best: one prepared 12-column INSERT of integers,
 * 10k rows per transaction, one (kind, ts) index (PLATFORM.md's figure).
 *
 *	store_ingest ingest DB N         events/s through ks_store_add
 *	store_ingest baseline DB N       rows/s, raw SQLite
 *	store_ingest fill DB N DAYS B    N events over DAYS days, B binaries
 *	                                 (for the hunt benchmark)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "cli.h"
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

/* A realistic mix: 30% exec, 30% exit, 40% connect/accept. */
static int ingest(const char *path, long n, long days, long nbin)
{
	struct ks_exec_event ex;
	struct ks_exit_event xt;
	struct ks_conn_event cn;
	struct ks_store *s;
	struct timespec rt;
	__s64 base;
	double t0, t1;
	int err;

	unlink(path);
	if ((err = ks_store_open(&s, path, KS_STORE_CREATE))) {
		fprintf(stderr, "open: %s\n", ks_errmsg());
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	/* timestamps spread over @days ending now */
	base = (__s64)rt.tv_sec * 1000000000LL - days * 86400LL * 1000000000LL;
	ks_store_note_clock(s, base);
	/* filling for the hunt benchmark: build the indexes once at the end
	 * (a sort) instead of row by row */
	if (days)
		sqlite3_exec(ks_store_db(s), "DROP INDEX events_kind_ts; DROP INDEX events_binary",
			     NULL, NULL, NULL);
	__u64 step = days ? (__u64)(days * 86400LL * 1000000000LL / n) : 1000;
	t0 = now();
	for (long i = 0; i < n; i++) {
		__u64 ts = i * step + 1;

		switch (i % 10) {
		case 0: case 1: case 2:
			hdr(&ex.hdr, KS_EV_EXEC, sizeof(ex), i, ts);
			/* process trees four images deep: every fourth exec
			 * has no known parent, the others the exec ten
			 * records before */
			ex.parent_exec_id = i >= 10 && (i / 10) % 4 ?
				(((i - 10) * step + 1) << 8) | ((i - 10) & 0xff) : 0;
			ex.flags = 0;
			snprintf(ex.path, sizeof(ex.path), "/usr/bin/prog-%ld", (i / 10) % nbin);
			ex.argv_len = snprintf(ex.argv, sizeof(ex.argv), "prog-%ld%c--flag%c%ld",
					       (i / 10) % nbin, 0, 0, i) + 1;
			err = ks_store_add(s, &ex, sizeof(ex), base);
			break;
		case 3: case 4: case 5:
			hdr(&xt.hdr, KS_EV_EXIT, sizeof(xt), i, ts);
			xt.exit_code = 0;
			xt.lifetime_ns = 1000000;
			err = ks_store_add(s, &xt, sizeof(xt), base);
			break;
		default:
			hdr(&cn.hdr, i % 2 ? KS_EV_CONNECT : KS_EV_ACCEPT, sizeof(cn), i, ts);
			memset(cn.laddr, 0, 32);
			cn.family = AF_INET;
			cn.laddr[0] = 10; cn.laddr[3] = i & 0xff;
			cn.raddr[0] = 192; cn.raddr[1] = 168; cn.raddr[2] = (i >> 8) & 0xff; cn.raddr[3] = i & 0xff;
			cn.lport = 40000 + i % 20000;
			cn.rport = 443;
			cn.flags = KS_CONN_ESTABLISHED;
			err = ks_store_add(s, &cn, sizeof(cn), base);
		}
		if (err) {
			fprintf(stderr, "add: %s\n", ks_errmsg());
			return 1;
		}
	}
	if (ks_store_commit(s) < 0) {
		fprintf(stderr, "commit: %s\n", ks_errmsg());
		return 1;
	}
	t1 = now();
	ks_store_close(s);
	if (days) {	/* reopening recreates the indexes */
		if (ks_store_open(&s, path, KS_STORE_CREATE)) {
			fprintf(stderr, "reopen: %s\n", ks_errmsg());
			return 1;
		}
		ks_store_close(s);
	}
	printf("%.0f\n", n / (t1 - t0));
	return 0;
}

static int baseline(const char *path, long n)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	double t0, t1;

	unlink(path);
	sqlite3_open(path, &db);
	sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		     "CREATE TABLE t(ts INTEGER, kind INTEGER, pid INTEGER, tgid INTEGER, ppid INTEGER,"
		     " uid INTEGER, euid INTEGER, cg INTEGER, exec INTEGER, a INTEGER, b INTEGER, c INTEGER);"
		     "CREATE INDEX t_kind_ts ON t(kind, ts);", NULL, NULL, NULL);
	sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
	t0 = now();
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
	sqlite3_finalize(st);
	sqlite3_close(db);
	printf("%.0f\n", n / (t1 - t0));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "ingest"))
		return ingest(argv[2], atol(argv[3]), 0, 2000);
	if (argc == 4 && !strcmp(argv[1], "baseline"))
		return baseline(argv[2], atol(argv[3]));
	if (argc == 6 && !strcmp(argv[1], "fill"))
		return ingest(argv[2], atol(argv[3]), atol(argv[4]), atol(argv[5]));
	fprintf(stderr, "usage: store_ingest ingest|baseline DB N | fill DB N DAYS BINARIES\n");
	return 2;
}
