// SPDX-License-Identifier: MIT
/* test_store_retain.c - ks_store_retain() under a size cap (issue 28's
 * soak, bench/soak.sh): a store that takes in more than a fifth of its cap
 * between two calls stays at the cap, and its WAL within a quarter of it.
 * A real store file in a temporary directory; no agent, nothing loaded. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>
#include "err.h"
#include "events.h"
#include "store.h"

static char dir[] = "/tmp/ks-unit-retain.XXXXXX";
static char path[64];
static struct ks_store *s;
static long long next_ts = 1600000000000000000LL;

static void setup(void)
{
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0);
}

static void teardown(void)
{
	char cmd[128];

	ks_store_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

static long long q(const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	cr_assert_eq(sqlite3_prepare_v2(ks_store_db(s), sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* @n exec rows of about 300 bytes, newer than all before, committed 200 at
 * a time (the agent commits in batches too). */
static void fill(int n)
{
	char sql[512];

	for (int done = 0; done < n; done += 200) {
		snprintf(sql, sizeof(sql), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
			 "FROM n WHERE i < 200) INSERT INTO events(ts, kind, comm, args) SELECT %lld + i, "
			 "'exec', 'filler', printf('%%.280c', 'x') FROM n", next_ts);
		cr_assert_eq(sqlite3_exec(ks_store_db(s), sql, NULL, NULL, NULL), SQLITE_OK, "%s",
			     sqlite3_errmsg(ks_store_db(s)));
		next_ts += 1000;
	}
}

static long long used(void)
{
	return (q("PRAGMA page_count") - q("PRAGMA freelist_count")) * q("PRAGMA page_size");
}

static long long file_size(const char *suffix)
{
	char p[80];
	struct stat sb;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &sb) ? 0 : sb.st_size;
}

TestSuite(store_retain, .init = setup, .fini = teardown);

/* Half the cap between two calls: a fixed fifth of the rows per call
 * settled at 2.5 times the cap (five times what comes in per call). */
Test(store_retain, cap_holds_when_more_than_a_fifth_arrives_between_calls)
{
	const long long cap = 2 << 20;
	long long worst = 0, in = 0;

	for (int round = 0; round < 25; round++) {
		long long before = used();

		fill(3000);
		in = used() - before > in ? used() - before : in;
		cr_assert_geq(ks_store_retain(s, 0, cap), 0);
		if (used() > worst)
			worst = used();
	}
	cr_assert_gt(in, cap / 5, "the test brings in %lld bytes per call: not over a fifth of the cap", in);
	cr_expect_leq(worst, cap, "the store used %lld bytes after a retain, cap %lld", worst, cap);
	cr_expect_leq(file_size(""), cap + in + (256 << 10), "the store file grew to %lld bytes, cap %lld",
		      file_size(""), cap);
	cr_expect_gt(q("SELECT count(*) FROM events"), 0, "everything deleted");
}

/* Under a 4M cap the WAL is checkpointed at 1M and truncated back to it. */
Test(store_retain, wal_within_a_quarter_of_the_cap)
{
	const long long cap = 4 << 20;
	long long worst = 0;

	cr_assert_geq(ks_store_retain(s, 0, cap), 0);
	for (int i = 0; i < 20; i++) {
		fill(1000);
		if (file_size("-wal") > worst)
			worst = file_size("-wal");
	}
	cr_expect_leq(worst, cap / 4 + (256 << 10), "the WAL grew to %lld bytes under a %lld cap", worst, cap);
	/* no cap: the -wal file is no longer truncated back (the checkpoint
	 * threshold, KS_STORE_WAL_BYTES again, is the store's own wal hook) */
	cr_assert_geq(ks_store_retain(s, 0, 0), 0);
	cr_expect_eq(q("PRAGMA journal_size_limit"), -1);
}

static void add_exec(__s64 ts, const char *binary)
{
	struct ks_row r;

	ks_row_clear(&r);
	ks_row_set_num(&r, KS_COL_TS, ts);
	ks_row_set_static(&r, KS_COL_KIND, "exec");
	ks_row_set_static(&r, KS_COL_COMM, "x");
	ks_row_set_static(&r, KS_COL_BINARY, binary);
	cr_assert_eq(ks_store_add_row(s, &r), 0, "%s", ks_errmsg());
}

static long long first_seen(const char *binary)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT coalesce((SELECT first FROM binaries WHERE path = '%s'), -1)",
		 binary);
	return q(sql);
}

/* Binaries go with the last exec row that names them (when their chunk
 * goes): table binaries kept every path ever run, whatever the retention. */
Test(store_retain, binaries_go_with_their_last_exec)
{
	const __s64 day = 86400LL * 1000000000;
	struct timespec now;
	__s64 d1, d2;

	clock_gettime(CLOCK_REALTIME, &now);
	d1 = (now.tv_sec * 1000000000LL / day - 10) * day;	/* two days, 10 and 9 days ago */
	d2 = d1 + day + 3600LL * 1000000000;	/* an hour into day 2: past the cut below */
	add_exec(d1 + 1000, "/day1/only");
	add_exec(d1 + 2000, "/both/days");
	add_exec(d2 + 1000, "/both/days");	/* a new day: a new exec chunk */
	add_exec(d2 + 2000, "/day2/only");
	cr_assert_geq(ks_store_commit(s), 0);	/* the new chunk committed day 1's */
	cr_assert_eq(ks_store_committed(s), 4);
	cr_assert_eq(q("SELECT count(*) FROM binaries"), 3);
	/* keep from day 2 on: day 1's chunk empties and goes */
	cr_assert_eq(ks_store_retain(s, now.tv_sec * 1000000000ULL + now.tv_nsec - (d1 + day), 0), 2);
	cr_expect_eq(q("SELECT count(*) FROM events"), 2);
	cr_expect_eq(first_seen("/day1/only"), -1, "a binary no exec names any more was kept");
	cr_expect_eq(first_seen("/both/days"), d1 + 2000, "a binary still run lost its first-seen time");
	cr_expect_eq(first_seen("/day2/only"), d2 + 2000);
	/* it runs again: new, and named by its row (no stale id from the cache) */
	add_exec(d2 + 3000, "/day1/only");
	cr_assert_eq(ks_store_commit(s), 1);
	cr_expect_eq(first_seen("/day1/only"), d2 + 3000);
	cr_expect_eq(q("SELECT count(*) FROM binaries"), 3);
	cr_expect_eq(q("SELECT count(*) FROM events WHERE binary = '/day1/only'"), 1);
}
