// SPDX-License-Identifier: MIT
/* test_shield_signs.c - the shields' hunts (`kshield hunt NAME`: own hits
 * plus the `signs` metadata) run on the store's schema, and the exec
 * shields' signs match the flags they name, not every exec: an exec's
 * detail names each flag with its value ("setuid":0), so a sign on the key
 * alone matched every exec. A real store file in a temporary directory,
 * synthetic rows; nothing loaded. */
#include <criterion/criterion.h>
#include <glob.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meta.h"
#include "store.h"

static char dir[] = "/tmp/ks-unit-signs.XXXXXX";
static char path[64];
static struct ks_store *s;

/* exec_id, args, setuid, setgid, secureexec, exit signal (-1: no exit) */
static const struct { int id; const char *args; int uid, gid, sec, sig; } rows[] = {
	{ 1, "", 0, 0, 0, -1 },		/* argc 0, no set-ID: not PwnKit */
	{ 2, "", 1, 0, 1, -1 },		/* argc 0, set-user-ID */
	{ 3, "", 0, 1, 1, -1 },		/* argc 0, set-group-ID */
	{ 4, "", 0, 0, 1, -1 },		/* argc 0, file capabilities */
	{ 5, "pkexec --version", 1, 0, 1, 0 },
	{ 6, "crash", 0, 0, 0, 11 },	/* SIGSEGV, not a secure exec */
	{ 7, "su", 1, 0, 1, 11 },	/* SIGSEGV after a secure exec */
};

static void setup(void)
{
	char sql[512];

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO events(ts, kind, pid, uid, comm, exec_id, args, detail) "
			 "VALUES (%d, 'exec', %d, 1000, 'x', %d, '%s', '{\"setuid\":%d,\"setgid\":%d,"
			 "\"secureexec\":%d,\"argv_truncated\":0,\"path_truncated\":0}')",
			 1000 + 10 * rows[i].id, rows[i].id, rows[i].id, rows[i].args, rows[i].uid,
			 rows[i].gid, rows[i].sec);
		cr_assert_eq(sqlite3_exec(ks_store_db(s), sql, NULL, NULL, NULL), SQLITE_OK, "%s",
			     sqlite3_errmsg(ks_store_db(s)));
		if (rows[i].sig < 0)
			continue;
		snprintf(sql, sizeof(sql), "INSERT INTO events(ts, kind, pid, uid, comm, exec_id, detail) "
			 "VALUES (%d, 'exit', %d, 1000, 'x', %d, '{\"exit_code\":0,\"signal\":%d,"
			 "\"lifetime_ns\":1}')", 1005 + 10 * rows[i].id, rows[i].id, rows[i].id, rows[i].sig);
		cr_assert_eq(sqlite3_exec(ks_store_db(s), sql, NULL, NULL, NULL), SQLITE_OK, "%s",
			     sqlite3_errmsg(ks_store_db(s)));
	}
}

static void teardown(void)
{
	char cmd[128];

	ks_store_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* The exec_ids the hunt of @obj lists, as a bit set; -1 when its SQL does
 * not run on the store. */
static long hunt_ids(const char *obj, const char *kind)
{
	struct ks_meta m;
	sqlite3_stmt *st;
	char *sql;
	long ids = 0;
	int rc, kcol = -1, icol = -1;

	cr_assert_eq(ks_meta_read(obj, &m), 0, "%s", obj);
	cr_assert_eq(ks_meta_hunt_sql(&m, &sql), 0, "%s: no hunt", obj);
	ks_meta_free(&m);
	rc = sqlite3_prepare_v2(ks_store_db(s), sql, -1, &st, NULL);
	cr_expect_eq(rc, SQLITE_OK, "%s: %s: %s", obj, sqlite3_errmsg(ks_store_db(s)), sql);
	free(sql);
	if (rc != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":since"), 0);
	sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":until"), 1LL << 62);
	for (int c = 0; c < sqlite3_column_count(st); c++)
		if (!strcmp(sqlite3_column_name(st, c), "kind"))
			kcol = c;
		else if (!strcmp(sqlite3_column_name(st, c), "exec_id"))
			icol = c;
	cr_assert(kcol >= 0 && icol >= 0, "%s: no kind or exec_id column", obj);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, kcol);

		if (kind && (!k || strcmp(k, kind)))
			continue;
		ids |= 1L << sqlite3_column_int(st, icol);
	}
	cr_expect_eq(rc, SQLITE_DONE, "%s: %s", obj, sqlite3_errmsg(ks_store_db(s)));
	sqlite3_finalize(st);
	return ids;
}

TestSuite(shield_signs, .init = setup, .fini = teardown);

Test(shield_signs, t01_every_hunt_runs_on_the_store)
{
	glob_t g;

	cr_assert_eq(glob(KS_TEST_BUILD "/shields/*.bpf.o", 0, NULL, &g), 0, "no shield objects built");
	for (size_t i = 0; i < g.gl_pathc; i++)
		cr_expect_geq(hunt_ids(g.gl_pathv[i], NULL), 0, "%s", g.gl_pathv[i]);
	globfree(&g);
}

Test(shield_signs, t02_pwnkit_lists_set_id_execs_with_no_arguments_only)
{
	long ids = hunt_ids(KS_TEST_BUILD "/shields/cve-2021-4034.bpf.o", "exec");

	cr_expect_eq(ids, (1L << 2) | (1L << 3) | (1L << 4), "exec_ids listed: %#lx", ids);
}

Test(shield_signs, t03_looney_lists_crashes_after_secure_execs_only)
{
	long ids = hunt_ids(KS_TEST_BUILD "/shields/cve-2023-4911.bpf.o", "exit");

	cr_expect_eq(ids, 1L << 7, "exec_ids listed: %#lx", ids);
}
