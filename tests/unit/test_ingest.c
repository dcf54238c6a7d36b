// SPDX-License-Identifier: MIT
/* test_ingest.c - the ingest (src/lib/monitor/ingest.h), the agent's way
 * from ring-buffer records to the store, on a real store file with records
 * handed in through ks_ingest_record() and the clocks given by the test:
 * batches commit at KS_STORE_BATCH rows or KS_STORE_BATCH_MS, every record
 * is stored or counted as not stored (unknown kinds, no store, a locked or
 * full store), a failed store is reopened, and a step of the wall clock
 * keeps each record at its own time and out of retention's reach. No
 * kernel, nothing loaded. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include "config.h"
#include "err.h"
#include "ingest.h"
#include "log.h"
#include "store.h"

#define SEC	1000000000LL
#define HOUR	(3600 * SEC)
#define B0	(1000 * SEC)			/* CLOCK_BOOTTIME at the start */
#define T0	1796400000000000000LL		/* its CLOCK_REALTIME: Dec 2026 */

static char dir[] = "/tmp/ks-unit-ingest-XXXXXX";
static struct ks_config cfg;
static struct ks_ingest in;
static char logged[4096];
static __u64 lost_now[KS_EV_KIND_MAX], missed_now;

static void log_line(const char *line)
{
	size_t n = strlen(logged);

	snprintf(logged + n, sizeof(logged) - n, "%s\n", line);
}

static int losses(void *ctx, __u64 lost[KS_EV_KIND_MAX], __u64 *missed)
{
	(void)ctx;
	memcpy(lost, lost_now, sizeof(lost_now));
	*missed = missed_now;
	return 0;
}

static void setup(void)
{
	const struct ks_ingest_opts o = { .cfg = &cfg, .stats_fd = -1, .read_losses = losses };

	strcpy(dir, "/tmp/ks-unit-ingest-XXXXXX");
	cr_assert(mkdtemp(dir));
	ks_config_defaults(&cfg);
	snprintf(cfg.store, sizeof(cfg.store), "%s/events.db", dir);
	cfg.retention_s = 0;
	cfg.max_size = 0;
	memset(lost_now, 0, sizeof(lost_now));
	missed_now = 0;
	logged[0] = '\0';
	ks_log_set_sink(log_line);
	ks_ingest_init(&in, &o);
}

static void teardown(void)
{
	char cmd[128];

	ks_ingest_close(&in);
	ks_log_set_sink(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(ingest, .init = setup, .fini = teardown, .timeout = 60);

static void start_at(long long mono_ms, __s64 real_ns, __s64 boot_ns)
{
	const struct ks_ingest_now now = { mono_ms, real_ns, boot_ns };

	ks_ingest_start(&in, &now);
}

static void tick_at(long long mono_ms, __s64 real_ns, __s64 boot_ns)
{
	const struct ks_ingest_now now = { mono_ms, real_ns, boot_ns };

	ks_ingest_tick(&in, &now);
}

/* An exit record of pid @pid made at CLOCK_BOOTTIME @ts. */
static void feed(int pid, __s64 ts)
{
	struct ks_exit_event e = {
		.hdr = { .kind = KS_EV_EXIT, .size = sizeof(e), .ts_ns = ts, .pid = pid, .tgid = pid,
			 .comm = "t" },
	};

	cr_assert_eq(ks_ingest_record(&in, -1, &e, sizeof(e)), 0);
}

/* A number from the store, read by another connection (committed rows
 * only); -1 when the query returns no row. */
static long long q(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v = -1;

	cr_assert_eq(sqlite3_open_v2(cfg.store, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static long long rows(void)
{
	return q("SELECT count(*) FROM events");
}

/* received = stored + unstored, in the totals and per kind, and the rows
 * stored are the rows in the file. */
static void accounts_exact(void)
{
	__u64 recv = 0, stored = 0, unstored = 0;

	ks_ingest_publish(&in, true);	/* brings st up to date */
	for (int k = 0; k < KS_EV_KIND_MAX; k++) {
		recv += in.received[k];
		stored += in.stored[k];
		unstored += in.unstored[k];
	}
	cr_assert_eq(in.st.received, in.st.stored + in.st.unstored, "received %llu, stored %llu, "
		     "unstored %llu", (unsigned long long)in.st.received,
		     (unsigned long long)in.st.stored, (unsigned long long)in.st.unstored);
	cr_assert_eq(recv, in.st.received);
	cr_assert_eq(stored, in.st.stored, "per kind stored %llu, total %llu",
		     (unsigned long long)stored, (unsigned long long)in.st.stored);
	cr_assert_eq(unstored, in.st.unstored, "per kind unstored %llu, total %llu",
		     (unsigned long long)unstored, (unsigned long long)in.st.unstored);
	cr_assert_eq(rows(), (long long)in.st.stored);
}

Test(ingest, t01_a_batch_commits_at_KS_STORE_BATCH_rows_not_one_before)
{
	start_at(1000, T0, B0);
	cr_assert_not_null(in.store, "%s", logged);
	for (int i = 0; i < KS_STORE_BATCH - 1; i++)
		feed(i + 1, B0 + i * 1000);
	cr_assert_eq(ks_store_committed(in.store), 0);
	cr_assert_eq(in.stored[KS_EV_EXIT], 0);
	cr_assert_eq(rows(), 0);
	feed(KS_STORE_BATCH, B0 + KS_STORE_BATCH * 1000);
	cr_assert_eq(ks_store_committed(in.store), KS_STORE_BATCH);
	cr_assert_eq(rows(), KS_STORE_BATCH);
	for (int i = 0; i < 10; i++)
		feed(100000 + i, B0 + SEC + i);
	ks_ingest_commit(&in);
	cr_assert_eq(in.stored[KS_EV_EXIT], KS_STORE_BATCH + 10);
	cr_assert_eq(in.st.received, KS_STORE_BATCH + 10);
	accounts_exact();
	cr_assert_eq(in.st.unstored, 0);
}

Test(ingest, t02_a_small_batch_commits_once_KS_STORE_BATCH_MS_old)
{
	start_at(1000, T0, B0);
	tick_at(1000, T0, B0);	/* the first tick's retention commits: done before */
	for (int i = 0; i < 5; i++)
		feed(i + 1, B0 + i);
	tick_at(1100, T0 + SEC / 10, B0 + SEC / 10);
	cr_assert_eq(rows(), 0, "committed before KS_STORE_BATCH_MS");
	cr_assert_eq(in.stored[KS_EV_EXIT], 0);
	usleep((KS_STORE_BATCH_MS + 100) * 1000);	/* the store's own clock */
	tick_at(1700, T0 + SEC * 7 / 10, B0 + SEC * 7 / 10);
	cr_assert_eq(rows(), 5);
	cr_assert_eq(in.stored[KS_EV_EXIT], 5);
	accounts_exact();
}

Test(ingest, t03_unknown_kinds_and_records_without_a_store_are_counted_then_it_recovers)
{
	struct ks_hdr odd = { .kind = 200, .size = sizeof(odd), .ts_ns = B0 };
	char runt[4] = { 0 };
	char sub[96];

	/* a folder where the store file should be: the open fails */
	snprintf(sub, sizeof(sub), "%s/events.db", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	start_at(1000, T0, B0);
	cr_assert_null(in.store);
	cr_assert_eq(in.st.store_errors, 0, "a failed open is not a failed commit");
	cr_assert(strstr(logged, "store: "), "%s", logged);
	for (int i = 0; i < 3; i++)
		feed(i + 1, B0 + i);
	cr_assert_eq(ks_ingest_record(&in, -1, &odd, sizeof(odd)), 0);
	cr_assert_eq(ks_ingest_record(&in, -1, &odd, sizeof(odd)), 0);
	cr_assert_eq(ks_ingest_record(&in, -1, runt, sizeof(runt)), 0);
	cr_assert_eq(in.received[KS_EV_EXIT], 3);
	cr_assert_eq(in.received[0], 3, "unknown kinds and runts count as kind 0");
	cr_assert_eq(in.unstored[KS_EV_EXIT], 3);
	cr_assert_eq(in.unstored[0], 3);

	cr_assert_eq(rmdir(sub), 0);
	tick_at(1000 + KS_INGEST_RETRY_MS - 1, T0 + SEC, B0 + SEC);
	cr_assert_null(in.store, "reopened before KS_INGEST_RETRY_MS");
	tick_at(1000 + KS_INGEST_RETRY_MS, T0 + 2 * SEC, B0 + 2 * SEC);
	cr_assert_not_null(in.store, "%s", logged);
	cr_assert(strstr(logged, "store: recovered (6 events could not be stored meanwhile)"), "%s",
		  logged);
	for (int i = 0; i < 4; i++)
		feed(10 + i, B0 + 3 * SEC + i);
	ks_ingest_commit(&in);
	cr_assert_eq(in.st.received, 10);
	accounts_exact();
	cr_assert_eq(in.st.stored, 4);
	cr_assert_eq(in.st.unstored, 6);
}

Test(ingest, t04_a_full_store_drops_its_batch_and_counts_every_row)
{
	char sql[64];
	long long pages;
	int pid = 1;

	start_at(1000, T0, B0);
	for (; pid <= 2000; pid++)
		feed(pid, B0 + pid * 1000);
	ks_ingest_commit(&in);
	cr_assert_eq(rows(), 2000);
	/* no page beyond those it has: the next flush fails (SQLITE_FULL) */
	pages = q("PRAGMA page_count");
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld", pages);
	cr_assert_eq(sqlite3_exec(ks_store_db(in.store), sql, NULL, NULL, NULL), SQLITE_OK);
	for (; pid <= 6000; pid++)
		feed(pid, B0 + pid * 1000);
	cr_assert_geq(in.st.store_errors, 1, "the store never filled up");
	cr_assert_null(in.store);
	cr_assert(strstr(logged, "events are counted, not stored"), "%s", logged);
	accounts_exact();
	cr_assert_gt(in.st.unstored, 0);
	cr_assert_geq(in.st.stored, 2000, "rows committed before it filled up");

	/* reopened (a new connection: no page limit), everything after is stored */
	tick_at(1000 + KS_INGEST_RETRY_MS, T0 + 10 * SEC, B0 + 10 * SEC);
	cr_assert_not_null(in.store, "%s", logged);
	for (int i = 0; i < 100; i++)
		feed(100000 + i, B0 + 11 * SEC + i);
	ks_ingest_commit(&in);
	accounts_exact();
	cr_assert_eq(in.st.received, 6000 + 100);
}

Test(ingest, t05_a_store_locked_by_another_writer_is_counted_and_retried)
{
	sqlite3 *other;

	start_at(1000, T0, B0);
	feed(1, B0 + 1);
	ks_ingest_commit(&in);
	cr_assert_eq(sqlite3_open(cfg.store, &other), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	feed(2, B0 + 2);	/* waits out the busy timeout (1 s), then fails */
	cr_assert_null(in.store);
	cr_assert_eq(in.st.store_errors, 1);
	feed(3, B0 + 3);
	feed(4, B0 + 4);
	cr_assert_eq(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);
	tick_at(1000 + KS_INGEST_RETRY_MS, T0 + SEC, B0 + SEC);
	cr_assert_not_null(in.store, "%s", logged);
	feed(5, B0 + SEC + 1);
	ks_ingest_commit(&in);
	accounts_exact();
	cr_assert_eq(in.st.stored, 2);
	cr_assert_eq(in.st.unstored, 3);
	cr_assert_eq(q("SELECT count(*) FROM events WHERE pid IN (1, 5)"), 2);
}

static long long ts_of(int pid)
{
	char sql[80];

	snprintf(sql, sizeof(sql), "SELECT ts FROM events WHERE pid = %d", pid);
	return q(sql);
}

Test(ingest, t06_records_keep_the_offset_of_their_time_across_a_step)
{
	const __s64 off = T0 - B0;

	start_at(1000, T0, B0);
	cr_assert_eq(ks_ingest_offset(&in, B0), off);
	/* a slew (NTP): no step */
	ks_ingest_clock(&in, B0 + 10 * SEC + off + 10000000, B0 + 10 * SEC);
	cr_assert_eq(in.nepochs, 0);
	feed(1, B0 + 5 * SEC);
	/* a step forward by an hour after the sample at B0 + 10 s */
	ks_ingest_clock(&in, B0 + 20 * SEC + off + 10000000 + HOUR, B0 + 20 * SEC);
	cr_assert_eq(in.nepochs, 1);
	cr_assert_eq(ks_ingest_offset(&in, B0 + 9 * SEC), off + 10000000, "made before the step");
	cr_assert_eq(ks_ingest_offset(&in, B0 + 21 * SEC), off + 10000000 + HOUR);
	feed(2, B0 + 9 * SEC);
	feed(3, B0 + 21 * SEC);
	ks_ingest_commit(&in);
	cr_assert_eq(ts_of(1), T0 + 5 * SEC + 10000000);
	cr_assert_eq(ts_of(2), T0 + 9 * SEC + 10000000);
	cr_assert_eq(ts_of(3), T0 + 21 * SEC + 10000000 + HOUR);

	/* the store learns the new offset at the next tick, not a slew */
	cr_assert_eq(q("SELECT count(*) FROM clock"), 1);
	tick_at(2000, B0 + 22 * SEC + off + 10000000 + HOUR, B0 + 22 * SEC);
	cr_assert_eq(q("SELECT boot_to_real FROM clock ORDER BY rowid DESC LIMIT 1"),
		     off + 10000000 + HOUR);
	tick_at(2100, B0 + 23 * SEC + off + 20000000 + HOUR, B0 + 23 * SEC);
	cr_assert_eq(q("SELECT count(*) FROM clock"), 2);
}

Test(ingest, t07_retention_does_not_count_a_forward_step_as_age)
{
	struct timespec r;
	__s64 now, b = 20000 * SEC, after, before;

	clock_gettime(CLOCK_REALTIME, &r);
	now = r.tv_sec * SEC + r.tv_nsec;
	after = now - b;		/* the offset now, right */
	before = after - HOUR;		/* the hour behind before the step */
	start_at(1000, b - 2 * HOUR - 36 * 60 * SEC + before, b - 2 * HOUR - 36 * 60 * SEC);
	feed(1, b - 5 * HOUR / 2);	/* made 2.5 h ago, looks 3.5 h old */
	feed(2, b - 3 * HOUR / 2);	/* made 1.5 h ago, looks 2.5 h old */
	ks_ingest_commit(&in);
	cr_assert_eq(ts_of(1), now - 7 * HOUR / 2);
	cr_assert_eq(ts_of(2), now - 5 * HOUR / 2);

	cfg.retention_s = 2 * 3600;
	tick_at(2000, now, b);		/* the step; retention runs (keep 2 h) */
	cr_assert_eq(in.nepochs, 1);
	cr_assert_eq(ks_ingest_retain_keep(&in, 2 * HOUR), 3 * HOUR);
	cr_assert_eq(ts_of(1), -1, "2.5 hours old, kept 2");
	cr_assert_eq(ts_of(2), now - 5 * HOUR / 2, "1.5 hours old (its row looks 2.5): kept");
	/* a step older than the retention no longer matters */
	ks_ingest_clock(&in, now + 2 * HOUR + SEC, b + 2 * HOUR + SEC);
	cr_assert_eq(ks_ingest_retain_keep(&in, 2 * HOUR), 2 * HOUR);
	cr_assert_eq(ks_ingest_retain_keep(&in, 0), 0, "0 keeps forever");
}

Test(ingest, t08_a_back_step_adds_no_age_and_full_epochs_keep_the_smallest_offset)
{
	const __s64 off = T0 - B0;
	__s64 b = B0;

	start_at(1000, T0, B0);
	ks_ingest_clock(&in, b + SEC + off - HOUR, b + SEC);
	cr_assert_eq(in.nepochs, 1);
	cr_assert_eq(ks_ingest_retain_keep(&in, 24 * HOUR), 24 * HOUR, "a back step");

	/* nine forward steps of a minute: eight epochs kept, the two oldest
	 * merged with the smaller offset (the one before the back step) */
	for (int i = 1; i <= 9; i++)
		ks_ingest_clock(&in, b + (i + 1) * SEC + off - HOUR + i * 60 * SEC, b + (i + 1) * SEC);
	cr_assert_eq(in.nepochs, 8);
	cr_assert_eq(in.epochs[0].offset, off - HOUR);
	cr_assert_eq(ks_ingest_retain_keep(&in, 24 * HOUR), 24 * HOUR + 9 * 60 * SEC);
}

Test(ingest, t09_losses_are_noted_when_they_change)
{
	start_at(1000, T0, B0);
	lost_now[KS_EV_EXIT] = 5;
	missed_now = 2;
	tick_at(1100, T0 + SEC, B0 + SEC);	/* the first tick does retention and losses */
	cr_assert_eq(q("SELECT lost FROM losses WHERE kind = 'exit'"), 5);
	cr_assert_eq(q("SELECT count(*) FROM losses WHERE kind = 'missed'"), 1);
	cr_assert_eq(q("SELECT count(*) FROM losses"), 3, "all, exit, missed");
	tick_at(1100 + KS_INGEST_RETAIN_MS, T0 + 11 * SEC, B0 + 11 * SEC);
	cr_assert_eq(q("SELECT count(*) FROM losses"), 3, "unchanged: nothing noted");
	lost_now[KS_EV_EXIT] = 7;
	tick_at(1100 + 2 * KS_INGEST_RETAIN_MS - 1, T0 + 20 * SEC, B0 + 20 * SEC);
	cr_assert_eq(q("SELECT count(*) FROM losses"), 3, "noted every KS_INGEST_RETAIN_MS only");
	tick_at(1100 + 2 * KS_INGEST_RETAIN_MS, T0 + 21 * SEC, B0 + 21 * SEC);
	cr_assert_eq(q("SELECT max(lost) FROM losses WHERE kind = 'exit'"), 7);
	cr_assert_eq(q("SELECT count(*) FROM losses"), 6);
}

Test(ingest, t10_every_row_is_mirrored_as_a_json_line)
{
	char line[1024];
	int n = 0;

	in.json = tmpfile();
	cr_assert_not_null(in.json);
	start_at(1000, T0, B0);
	feed(41, B0 + SEC);
	feed(42, B0 + 2 * SEC);
	rewind(in.json);
	while (fgets(line, sizeof(line), in.json)) {
		cr_assert(strstr(line, "\"kind\":\"exit\""), "%s", line);
		cr_assert(strstr(line, n ? "\"pid\":42" : "\"pid\":41"), "%s", line);
		n++;
	}
	cr_assert_eq(n, 2);
	fclose(in.json);
	in.json = NULL;
}

Test(ingest, t11_the_row_that_fills_a_batch_counts_as_stored_even_if_the_next_is_lost)
{
	char sql[64];
	int pid = 1;

	start_at(1000, T0, B0);
	for (; pid <= KS_STORE_BATCH; pid++)
		feed(pid, B0 + pid * 1000);
	cr_assert_eq(rows(), KS_STORE_BATCH);
	cr_assert_eq(in.stored[KS_EV_EXIT], KS_STORE_BATCH, "per kind: %llu",
		     (unsigned long long)in.stored[KS_EV_EXIT]);
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld", q("PRAGMA page_count"));
	cr_assert_eq(sqlite3_exec(ks_store_db(in.store), sql, NULL, NULL, NULL), SQLITE_OK);
	for (; pid <= KS_STORE_BATCH + 3000; pid++)
		feed(pid, B0 + pid * 1000);
	cr_assert_null(in.store, "the store never filled up");
	accounts_exact();
	cr_assert_eq(in.stored[KS_EV_EXIT], KS_STORE_BATCH);
}

/* An exec record of pid @pid made at CLOCK_BOOTTIME @ts. */
static void feed_exec(int pid, __s64 ts)
{
	struct ks_exec_event e = {
		.hdr = { .kind = KS_EV_EXEC, .size = sizeof(e), .ts_ns = ts, .pid = pid, .tgid = pid,
			 .comm = "t" },
		.path = "/bin/t",
		.argv = "t",
		.argv_len = 2,
	};

	cr_assert_eq(ks_ingest_record(&in, -1, &e, sizeof(e)), 0);
}

Test(ingest, t12_an_exec_that_rolls_the_day_chunk_is_in_the_next_batch)
{
	start_at(1000, T0, B0);
	feed_exec(1, B0);
	feed_exec(2, B0 + 24 * HOUR);	/* the store commits the day before it */
	cr_assert_eq(rows(), 1);
	cr_assert_eq(in.stored[KS_EV_EXEC], 1);
	ks_ingest_commit(&in);
	cr_assert_eq(in.stored[KS_EV_EXEC], 2);
	accounts_exact();
}
