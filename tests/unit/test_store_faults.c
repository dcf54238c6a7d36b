// SPDX-License-Identifier: MIT
/* test_store_faults.c - the store under faults (issue 28), on a real store
 * file, no kernel: rows keep their own time across wall-clock steps
 * (back and forward), and a file another process damaged is noticed
 * (ks_store_touched) and found corrupt (ks_store_check). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sqlite3.h>
#include "array.h"
#include "err.h"
#include "events.h"
#include "store.h"

#define T0	1796400000000000000LL	/* Dec 2026, ns */
#define SEC	1000000000LL
#define HOUR	(3600 * SEC)

static char dir[] = "/tmp/ks-unit-faults-XXXXXX", path[96];

static void setup(void)
{
	strcpy(dir, "/tmp/ks-unit-faults-XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
}

static void teardown(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(store_faults, .init = setup, .fini = teardown, .timeout = 60);

/* An exit row of pid @pid at @ts. */
static void add(struct ks_store *s, int pid, long long ts)
{
	struct ks_row r;

	ks_row_clear(&r);
	ks_row_set_num(&r, KS_COL_TS, ts);
	ks_row_set_str(&r, KS_COL_KIND, "exit");
	ks_row_set_num(&r, KS_COL_PID, pid);
	ks_row_set_num(&r, KS_COL_TID, pid);
	ks_row_set_str(&r, KS_COL_COMM, "t");
	cr_assert_eq(ks_store_add_row(s, &r), 0, "pid %d: %s", pid, ks_errmsg());
}

static long long ts_of(struct ks_store *s, int pid)
{
	sqlite3_stmt *st;
	long long ts = -1;

	cr_assert_eq(sqlite3_prepare_v2(ks_store_db(s), "SELECT ts FROM events WHERE pid = ?1", -1, &st,
					NULL), SQLITE_OK);
	sqlite3_bind_int(st, 1, pid);
	if (sqlite3_step(st) == SQLITE_ROW)
		ts = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return ts;
}

/* Records in the order the agent reads them, with the ts each must be
 * stored at (ts is the row key: unique, so a tie moves 1 ns). */
Test(store_faults, rows_keep_their_time_across_clock_steps)
{
	static const struct {
		const char *what;
		long long ts, want;
	} rows[] = {
		{ "in order",				T0,				T0 },
		{ "in order",				T0 + 1 * SEC,			T0 + 1 * SEC },
		{ "another CPU's, 1 ms older",		T0 + 1 * SEC - 1000000,		T0 + 1 * SEC + 1 },
		{ "a tie",				T0 + 2 * SEC,			T0 + 2 * SEC },
		{ "a tie",				T0 + 2 * SEC,			T0 + 2 * SEC + 1 },
		{ "clock stepped back 1 h",		T0 + 3 * SEC - HOUR,		T0 + 3 * SEC - HOUR },
		{ "after the back step",		T0 + 4 * SEC - HOUR,		T0 + 4 * SEC - HOUR },
		/* an hour later by the clock: the times stored before the
		 * step come round again */
		{ "meets a row stored before the step",	T0 + 1 * SEC,			T0 + 1 * SEC + 2 },
		{ "the next, meets a tie's",		T0 + 2 * SEC,			T0 + 2 * SEC + 2 },
		{ "past the rows before the step",	T0 + 5 * SEC,			T0 + 5 * SEC },
		{ "clock stepped forward 2 h",		T0 + 6 * SEC + 2 * HOUR,	T0 + 6 * SEC + 2 * HOUR },
		{ "after the forward step",		T0 + 7 * SEC + 2 * HOUR,	T0 + 7 * SEC + 2 * HOUR },
	};
	struct ks_store *s;
	int n = ARRAY_SIZE(rows);

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	for (int i = 0; i < n; i++)
		add(s, 100 + i, rows[i].ts);
	cr_assert_eq(ks_store_commit(s), n, "%s", ks_errmsg());
	for (int i = 0; i < n; i++)
		cr_expect_eq(ts_of(s, 100 + i), rows[i].want, "row %d (%s): stored at %+lld ns from the "
			     "time it was made", i, rows[i].what, ts_of(s, 100 + i) - rows[i].ts);
	cr_expect_eq(ks_store_dropped(s), 0);
	ks_store_close(s);
}

/* Make a store of @n rows, all in its main file (an aged store). */
static struct ks_store *aged_store(int n)
{
	struct ks_store *s;
	sqlite3 *db;

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	for (int i = 0; i < n; i++)
		add(s, 1000 + i, T0 + i * 1000LL);
	cr_assert_geq(ks_store_commit(s), 0, "%s", ks_errmsg());
	cr_assert_eq(ks_store_committed(s), (__u64)n);
	cr_expect(!ks_store_touched(s), "our own writes are not another process's");
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	return s;
}

static void damage_truncate(void)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(truncate(path, st.st_size / 2), 0);
}

/* Random bytes over five pages spread over the file (not page 1, the
 * header, which the identity check covers). */
static void damage_pages(void)
{
	struct stat st;
	char page[8192];
	int fd = open(path, O_WRONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(fstat(fd, &st), 0);
	long pages = st.st_size / sizeof(page);
	srand(28);
	for (int i = 1; i <= 5; i++) {
		for (size_t j = 0; j < sizeof(page); j++)
			page[j] = rand();
		cr_assert_eq(pwrite(fd, page, sizeof(page), (off_t)(pages * i / 6) * sizeof(page)),
			     (ssize_t)sizeof(page));
	}
	close(fd);
}

Test(store_faults, a_file_damaged_by_another_process_is_found_corrupt)
{
	static const struct {
		const char *what;
		void (*damage)(void);
		int want;
	} cases[] = {
		{ "another connection's checkpoint only", NULL, 0 },
		{ "truncated to half", damage_truncate, -EBADMSG },
		{ "five pages overwritten", damage_pages, -EBADMSG },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ks_store *s = aged_store(20000);
		char *msg;
		int rc;

		cr_expect(ks_store_touched(s), "%s: the checkpoint by another connection not noticed",
			  cases[i].what);
		cr_expect_eq(ks_store_check(s), 0, "%s: intact after the checkpoint: %s", cases[i].what,
			     ks_errmsg());
		if (cases[i].damage) {
			cases[i].damage();
			cr_expect(ks_store_touched(s), "%s: not noticed", cases[i].what);
		}
		cr_expect(!ks_store_touched(s), "%s: noticed twice", cases[i].what);
		rc = ks_store_check(s);
		cr_expect_eq(rc, cases[i].want, "%s: check %d, want %d (%s)", cases[i].what, rc,
			     cases[i].want, ks_errmsg());
		msg = strdup(ks_errmsg());
		if (cases[i].want)
			cr_expect(strstr(msg, "corrupt") && !strchr(msg, '\n'), "%s: want one line: %s",
				  cases[i].what, msg);
		free(msg);
		ks_store_abort(s);
		ks_store_close(s);
		unlink(path);
	}
}

/* Another writer of the same file (the fleet shipper moving its mark)
 * holds the write lock for 300 ms, as a commit with an fsync on a loaded
 * disk may: the batch started meanwhile waits and is stored, nothing is
 * dropped. */
Test(store_faults, another_writers_commit_is_waited_out)
{
	struct ks_store *s;
	int go[2];
	char c;
	pid_t pid;

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	add(s, 1, T0);
	cr_assert_eq(ks_store_commit(s), 1, "%s", ks_errmsg());
	cr_assert_eq(pipe(go), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		sqlite3 *db;

		if (sqlite3_open(path, &db) || sqlite3_exec(db, "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS "
			"fleet_shipped(host TEXT PRIMARY KEY, upto INTEGER NOT NULL); INSERT INTO fleet_shipped "
			"VALUES('h', 1)", NULL, NULL, NULL))
			_exit(1);
		if (write(go[1], "x", 1) != 1)
			_exit(1);
		usleep(300000);
		_exit(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) ? 1 : 0);
	}
	close(go[1]);
	cr_assert_eq(read(go[0], &c, 1), 1, "the other writer did not start");
	add(s, 2, T0 + SEC);
	add(s, 3, T0 + 2 * SEC);
	cr_expect_eq(ks_store_commit(s), 2, "%s", ks_errmsg());
	cr_expect_eq(ks_store_dropped(s), 0);
	cr_expect_eq(ts_of(s, 3), T0 + 2 * SEC);
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other writer failed");
	close(go[0]);
	ks_store_close(s);
}

/* pids of the rows table late lists, in its order, as "p p p" */
static void late_pids(struct ks_store *s, char *out, size_t n)
{
	sqlite3_stmt *st;
	size_t len = 0;

	out[0] = '\0';
	cr_assert_eq(sqlite3_prepare_v2(ks_store_db(s), "SELECT (SELECT pid FROM events e WHERE "
					"e.ts = l.ts) FROM late l ORDER BY id", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && len + 16 < n)
		len += snprintf(out + len, n - len, "%s%lld", len ? " " : "", sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
}

/* A row stored below a row stored before it (the clock stepped back) is
 * listed in table late, in the order stored, across a restart of the
 * writer; rows in order are not; retention deletes the entries with their
 * rows. The fleet shipper, whose mark is a ts, ships these from there. */
Test(store_faults, rows_stored_below_older_rows_are_listed_late)
{
	static const struct {
		long long ts;
		bool reopen;		/* the writer restarts first */
	} rows[] = {
		{ T0, false },				/* 1 */
		{ T0 + 1 * SEC, false },		/* 2 */
		{ T0 + 2 * SEC, false },		/* 3 */
		{ T0 + 3 * SEC - HOUR, false },		/* 4: stepped back 1 h: late */
		{ T0 + 4 * SEC - HOUR, false },		/* 5: late */
		{ T0 + 1 * SEC, false },		/* 6: meets row 2, below row 3: late */
		{ T0 + 5 * SEC, false },		/* 7: past every older row */
		{ T0 + 6 * SEC - HOUR, true },		/* 8: stepped back, the writer restarted: late */
		{ T0 + 7 * SEC, false },		/* 9 */
	};
	struct ks_store *s;
	struct timespec now;
	char pids[256];

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	for (int i = 0; i < (int)ARRAY_SIZE(rows); i++) {
		if (rows[i].reopen) {
			cr_assert_geq(ks_store_commit(s), 0, "%s", ks_errmsg());
			ks_store_close(s);
			cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
		}
		add(s, 1 + i, rows[i].ts);
	}
	cr_assert_geq(ks_store_commit(s), 0, "%s", ks_errmsg());
	late_pids(s, pids, sizeof(pids));
	cr_expect_str_eq(pids, "4 5 6 8", "rows listed late");

	/* retention by age up to half an hour before T0: rows 4, 5, 8 go */
	clock_gettime(CLOCK_REALTIME, &now);
	cr_assert_eq(ks_store_retain(s, (long long)now.tv_sec * SEC + now.tv_nsec - (T0 - HOUR / 2), 0), 3,
		     "%s", ks_errmsg());
	late_pids(s, pids, sizeof(pids));
	cr_expect_str_eq(pids, "6", "rows listed late after retention");
	ks_store_close(s);
}

/* The agent's ring positions: each commit records the position of the
 * last event row it holds, in its own transaction (an agent killed after
 * the commit and before releasing the ring leaves the next one a place to
 * skip to); a batch rolled back records nothing; a note moves nothing. */
Test(store_faults, a_commit_records_the_ring_position_of_its_last_row)
{
	static const char *ring = "boot:7";
	struct ks_store *s;
	struct ks_row note;
	__u64 pos = 0;

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	cr_expect_eq(ks_store_ring_pos(s, ring, &pos), -ENOENT, "a position before any commit");
	for (int i = 1; i <= 10; i++) {
		ks_store_ring_next(s, 0, ring, 64 * i);
		add(s, i, T0 + i * SEC);
	}
	cr_assert_eq(ks_store_commit(s), 10);
	cr_assert_eq(ks_store_ring_pos(s, ring, &pos), 0);
	cr_expect_eq(pos, 640, "after the first commit");

	for (int i = 11; i <= 12; i++) {
		ks_store_ring_next(s, 0, ring, 64 * i);
		add(s, i, T0 + i * SEC);
	}
	cr_assert_eq(ks_store_abort(s), 2);
	cr_assert_eq(ks_store_ring_pos(s, ring, &pos), 0);
	cr_expect_eq(pos, 640, "a rolled-back batch moved the position");

	ks_store_ring_next(s, 0, ring, 64 * 13);
	add(s, 13, T0 + 13 * SEC);
	ks_row_clear(&note);
	ks_row_set_num(&note, KS_COL_TS, T0 + 14 * SEC);
	ks_row_set_str(&note, KS_COL_KIND, "exit");
	ks_row_set_num(&note, KS_COL_PID, 14);
	cr_assert_eq(ks_store_add_note(s, &note), 0, "%s", ks_errmsg());
	cr_assert_eq(ks_store_commit(s), 1);
	cr_assert_eq(ks_store_ring_pos(s, ring, &pos), 0);
	cr_expect_eq(pos, 64 * 13, "after a batch ending in a note");
	ks_store_close(s);

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	cr_assert_eq(ks_store_ring_pos(s, ring, &pos), 0);
	cr_expect_eq(pos, 64 * 13, "after reopening");
	ks_store_close(s);
}

/* Ring maps die with their boot: the agent drops the positions of other
 * boots' rings (named "boot id:map id") and keeps this boot's, whatever
 * their map ids. */
Test(store_faults, positions_of_other_boots_rings_are_forgotten)
{
	static const char *const rings[] = { "b-1:7", "b-1:9", "b-2:7", "b-10:7", "b-2" };
	struct ks_store *s;
	__u64 pos = 0;

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	for (int i = 0; i < 5; i++) {
		ks_store_ring_next(s, i % KS_STORE_RINGS, rings[i], 64 * (i + 1));
		add(s, i + 1, T0 + (i + 1) * SEC);
		cr_assert_eq(ks_store_commit(s), 1);
	}
	cr_assert_eq(ks_store_ring_forget(s, "b-1"), 3, "%s", ks_errmsg());
	cr_expect_eq(ks_store_ring_pos(s, "b-1:7", &pos), 0);
	cr_expect_eq(pos, 64);
	cr_expect_eq(ks_store_ring_pos(s, "b-1:9", &pos), 0);
	cr_expect_eq(pos, 128);
	cr_expect_eq(ks_store_ring_pos(s, "b-2:7", &pos), -ENOENT);
	cr_expect_eq(ks_store_ring_pos(s, "b-10:7", &pos), -ENOENT, "a boot id with this one as prefix");
	cr_expect_eq(ks_store_ring_pos(s, "b-2", &pos), -ENOENT);
	cr_expect_eq(ks_store_ring_forget(s, "b-1"), 0, "nothing left to forget");
	ks_store_close(s);
}
