// SPDX-License-Identifier: MIT
/* test_hunt_pg.c - every bundled hunt (built in and from the shields'
 * metadata) run fleet-wide with `hunt --pg` against a real PostgreSQL 15
 * on loopback, over the same events a real store holds, and compared with
 * the same hunt over that store: a hunt that only works on SQLite, or that
 * finds something else in PostgreSQL, fails.
 *
 * The store is made by a real agent, with rows dated 2020-01-01 added by
 * SQL; PostgreSQL gets them as the collector stores them (ks_events: host,
 * seq, kind, the row as JSON), once for host h1 and, without the execs,
 * for h2. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include "agent_harness.h"

#define PGBIN "/usr/lib/postgresql/15/bin"
#define T0 1577836800000000000LL	/* 2020-01-01T00:00:00Z */
#define MIN 60000000000LL

static struct ka_env env;
static char pgdir[200], conninfo[256];

static void pg_up(void)
{
	int port = ks_free_port();

	cr_assert(port > 0, "no free loopback port");
	snprintf(pgdir, sizeof(pgdir), "%s/pg", env.dir);
	snprintf(conninfo, sizeof(conninfo), "host=127.0.0.1 port=%d user=postgres dbname=postgres",
		 port);
	cr_assert_eq(ks_runf(NULL, NULL, "test -x %s/initdb", PGBIN), 0,
		     "PostgreSQL 15 is not installed (scripts/setup.sh installs it)");
	cr_assert_eq(ks_runf(NULL, NULL, "chmod 755 %s && mkdir -p %s && chown postgres %s && "
			     "su postgres -s /bin/sh -c \"%s/initdb -D %s/data -A trust -U postgres "
			     "--no-sync > %s/initdb.log 2>&1\"", env.dir, pgdir, pgdir, PGBIN, pgdir,
			     pgdir), 0, "initdb failed (%s/initdb.log)", pgdir);
	cr_assert_eq(ks_runf(NULL, NULL, "su postgres -s /bin/sh -c \"%s/pg_ctl -D %s/data -l %s/log "
			     "-w -o \\\"-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off\\\" "
			     "start\" > /dev/null", PGBIN, pgdir, pgdir, port, pgdir), 0,
		     "pg_ctl start failed (%s/log)", pgdir);
}

static void pg_down(void)
{
	ks_runf(NULL, NULL, "su postgres -s /bin/sh -c \"%s/pg_ctl -D %s/data -m immediate -w "
		"stop\" > /dev/null 2>&1", PGBIN, pgdir);
}

/* The 2020 rows: something for every built-in hunt. */
static void seed_store(void)
{
	sqlite3 *db;
	char q[4096], *err = NULL;

	cr_assert_eq(sqlite3_open(env.store, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	snprintf(q, sizeof(q),
		 "INSERT INTO events(ts, kind, pid, tid, ppid, uid, euid, comm, exec_id, parent_exec_id,"
		 " binary, args, detail) VALUES"
		 "(%lld, 'exec', 10, 10, 1, 0, 0, 'sshd', 1, 0, '/usr/sbin/sshd', 'sshd -D', '{\"setuid\":0}'),"
		 "(%lld, 'exec', 30, 30, 10, 1000, 1000, 'alpha', 2, 1, '/usr/bin/alpha', 'alpha', '{\"setuid\":0}'),"
		 "(%lld, 'exec', 31, 31, 10, 1000, 1000, 'alpha', 3, 1, '/usr/bin/alpha', 'alpha -x', '{\"setuid\":0}');"
		 "INSERT INTO events(ts, kind, pid, tid, uid, comm, laddr, lport, raddr, rport, detail) VALUES"
		 "(%lld, 'connect', 30, 33, 1000, 'alpha', '10.0.0.5', 40001, '203.0.113.7', 4444, '{\"family\":2}'),"
		 "(%lld, 'accept', 10, 10, 0, 'sshd', '10.0.0.5', 22, '198.51.100.2', 51000, '{\"family\":2}'),"
		 "(%lld, 'flow', 30, 30, 1000, 'alpha', '10.0.0.5', 40001, '203.0.113.7', 4444,"
		 " '{\"bytes_out\":100000000,\"bytes_in\":10,\"flow\":\"7\",\"final\":1}');"
		 "INSERT INTO events(ts, kind, pid, uid, comm, ret, detail) VALUES"
		 "(%lld, 'socket', 30, 1000, 'alpha', 3, '{\"family\":38,\"type\":5,\"protocol\":0}'),"
		 "(%lld, 'socket', 30, 1000, 'alpha', 4, '{\"family\":16,\"type\":3,\"protocol\":12}'),"
		 "(%lld, 'userns', 30, 1000, 'alpha', 0, '{\"flags\":268435456,\"syscall\":\"unshare\"}'),"
		 "(%lld, 'bpf', 30, 1000, 'alpha', 5, '{\"cmd\":5,\"prog_type\":2}'),"
		 "(%lld, 'privilege', 30, 0, 'alpha', NULL, '{\"old_uid\":1000,\"new_uid\":0}');"
		 "INSERT INTO events(ts, kind, pid, uid, comm, alg_type, alg_name, ret) VALUES"
		 "(%lld, 'alg_bind', 30, 1000, 'alpha', 'aead', 'authencesn(hmac(sha256),cbc(aes))', 0);"
		 /* shield impact: one more Copy Fail bind by an exec seen (its binary
		  * named), and a benign AF_ALG user the pattern must leave out */
		 "INSERT INTO events(ts, kind, pid, uid, comm, exec_id, alg_type, alg_name, ret) VALUES"
		 "(%lld + 1000, 'alg_bind', 31, 1000, 'alpha', 3, 'aead', 'authencesn(hmac(sha256),cbc(aes))', 0),"
		 "(%lld + 2000, 'alg_bind', 31, 1000, 'alpha', 3, 'skcipher', 'cbc(aes)', 0);"
		 "INSERT INTO events(ts, kind, pid, uid, comm, shield, verdict, detail) VALUES"
		 "(%lld, 'shield', 30, 1000, 'alpha', 'cve-2026-31431', 'refused', '{\"hook\":\"x\"}'),"
		 "(%lld, 'shield', 30, 1000, 'alpha', 'userns-policy', 'refused', '{\"hook\":\"y\"}');",
		 T0, T0 + 1 * MIN, T0 + 2 * MIN, T0 + 3 * MIN, T0 + 4 * MIN, T0 + 5 * MIN,
		 T0 + 6 * MIN, T0 + 7 * MIN, T0 + 8 * MIN, T0 + 9 * MIN, T0 + 10 * MIN,
		 T0 + 11 * MIN, T0 + 11 * MIN, T0 + 11 * MIN, T0 + 12 * MIN, T0 + 13 * MIN);
	cr_assert_eq(sqlite3_exec(db, q, NULL, NULL, &err), SQLITE_OK, "%s", err);
	sqlite3_close(db);
}

/* The store's 2020 rows into ks_events as the collector keeps them. */
static void load_pg(void)
{
	cr_assert_eq(ks_runf(NULL, NULL, "psql '%s' -qc \"CREATE TABLE ks_events(host text NOT NULL, "
			     "seq bigint NOT NULL, ts timestamptz NOT NULL, kind text NOT NULL DEFAULT '', "
			     "data jsonb NOT NULL)\"", conninfo), 0);
	for (int h = 1; h <= 2; h++) {
		cr_assert_eq(ks_runf(NULL, NULL, "sqlite3 -csv %s \"SELECT 'h%d', rowid, "
				     "'2020-01-01T00:00:00Z', kind, json_object('ts', ts, 'kind', kind, "
				     "%s, 'ppid', ppid, 'uid', uid, 'euid', euid, 'comm', "
				     "comm, 'exec_id', exec_id, 'parent_exec_id', parent_exec_id, 'binary', "
				     "binary, 'args', args, 'laddr', laddr, 'lport', lport, 'raddr', raddr, "
				     "'rport', rport, 'shield', shield, 'verdict', verdict, 'alg_type', "
				     "alg_type, 'alg_name', alg_name, 'ret', ret, 'detail', detail) FROM events "
				     "WHERE ts < 1577923200000000000 %s\" > %s/h%d.csv && psql '%s' -qc "
				     "\"\\copy ks_events(host, seq, ts, kind, data) FROM '%s/h%d.csv' CSV\"",
				     env.store, h,
				     /* h2 ships as agents of store schema 2 did: pid the thread, tgid the process */
				     h == 2 ? "'pid', tid, 'tgid', pid" : "'pid', pid, 'tid', tid",
				     h == 2 ? "AND kind <> 'exec'" : "", env.dir, h, conninfo,
				     env.dir, h), 0, "loading h%d", h);
	}
}

static void setup(void)
{
	ka_setup(&env, "pg");
	ka_start(&env, NULL);
	ka_stop(&env, SIGTERM);
	seed_store();
	pg_up();
	load_pg();
}

static void teardown(void)
{
	pg_down();
	ka_teardown(&env);
}

TestSuite(hunt_pg, .init = setup, .fini = teardown, .timeout = 180);

/* Hits of host h1 in `hunt --pg` (0 when it has no row); -1 if it failed. */
static long long pg_hits(const char *name, const char *args, char **errs)
{
	char cmd[2048];
	json_object *arr;
	long long n = 0;
	int rc = 0;

	snprintf(cmd, sizeof(cmd), "%s -j hunt --pg '%s' %s %s", ks_bin(), conninfo, name, args);
	arr = ks_run_json(cmd, &rc, errs);
	if (!arr || rc)
		return -1;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i);

		if (!strcmp(ka_str(o, "host"), "h1"))
			n = ka_int(o, "hits");
	}
	json_object_put(arr);
	return n;
}

Test(hunt_pg, every_bundled_hunt_runs_fleet_wide_and_agrees_with_the_store)
{
	char cmd[1024], args[1024], file[300];
	json_object *list;
	int builtins = 0, shields = 0;

	snprintf(file, sizeof(file), "%s/c2.txt", env.dir);
	FILE *f = fopen(file, "w");
	cr_assert(f);
	fprintf(f, "203.0.113.0/24\n2001:db8::99\n");
	fclose(f);

	snprintf(cmd, sizeof(cmd), "%s -j hunt list --shields-dir %s", ks_bin(), ks_shields_dir());
	list = ks_run_json(cmd, NULL, NULL);
	cr_assert(list && json_object_array_length(list) > 9, "hunt list");
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *e = json_object_array_get_idx(list, i), *local;
		const char *name = ka_str(e, "name"), *sql = ka_str(e, "sql");
		bool builtin = !strcmp(ka_str(e, "source"), "builtin");
		char *errs = NULL;

		snprintf(args, sizeof(args), "--since 2020-01-01T00:00:00Z --until 2020-01-02T00:00:00Z "
			 "--limit 100000 --shields-dir %s%s%s%s", ks_shields_dir(),
			 strstr(sql, ":binary") ? " --binary /usr/bin/alpha" : "",
			 !strcmp(name, "c2-connections") ? " --file " : "",
			 !strcmp(name, "c2-connections") ? file : "");
		snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s %s %s", ks_bin(), env.store, name, args);
		local = ks_run_json(cmd, NULL, NULL);
		cr_assert(local, "hunt %s over the store failed", name);
		long long want = ka_int(local, "count");
		json_object_put(local);

		long long got = pg_hits(name, args, &errs);
		cr_expect_eq(got, want, "hunt %s: %lld hits for h1 with --pg, %lld in the store%s%s",
			     name, got, want, errs && *errs ? ": " : "", errs ? errs : "");
		cr_log_info("hunt %s: store %lld, --pg %lld", name, want, got);
		free(errs);
		/* the seeded rows give every built-in hunt something to find */
		if (builtin)
			cr_expect(want >= 1, "hunt %s found nothing in the seeded store", name);
		builtins += builtin;
		shields += !builtin;
	}
	json_object_put(list);
	cr_expect(builtins >= 10 && shields >= 5, "%d built-in and %d shield hunts", builtins, shields);

	/* h2 has no execs: grouped by host, the exec hunts name h1 only */
	snprintf(cmd, sizeof(cmd), "%s -j hunt --pg '%s' binary --binary /usr/bin/alpha "
		 "--until 2020-01-02T00:00:00Z", ks_bin(), conninfo);
	json_object *arr = ks_run_json(cmd, NULL, NULL);
	cr_assert(arr);
	cr_expect_eq(json_object_array_length(arr), 1);
	cr_expect_str_eq(ka_str(json_object_array_get_idx(arr, 0), "host"), "h1");
	cr_expect_eq(ka_int(json_object_array_get_idx(arr, 0), "hits"), 2);
	json_object_put(arr);
}

/* pid is the process and tid the thread for rows shipped by any agent:
 * h1's as today's agents ship them, h2's as agents of store schema 2 did
 * (pid the thread, tgid the process). */
Test(hunt_pg, pid_and_tid_mean_the_same_for_old_and_new_agents)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s -j hunt --pg '%s' --sql \"SELECT * FROM events WHERE "
		 "kind = 'connect' AND pid = 30 AND tid = 33\"", ks_bin(), conninfo);
	json_object *arr = ks_run_json(cmd, NULL, NULL);
	cr_assert(arr, "%s", cmd);
	cr_expect_eq(json_object_array_length(arr), 2);
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		cr_expect_eq(ka_int(json_object_array_get_idx(arr, i), "hits"), 1, "host %s",
			     ka_str(json_object_array_get_idx(arr, i), "host"));
	json_object_put(arr);
}

/* Issue 15 item 7: `hunt --pg` runs text from shields' metadata and --sql
 * against the collector's database. It must leave that database as it was:
 * its helper functions live in pg_temp, and a hunt that writes (here
 * through a function a previous visitor left in the database) is refused
 * by a READ ONLY transaction. */
Test(hunt_pg, the_database_is_read_only_to_hunts)
{
	char cmd[2048], *out = NULL, *errs = NULL;
	int rc;

	cr_assert_eq(ks_runf(NULL, NULL, "psql '%s' -qc \"CREATE TABLE loot(n int); "
			     "CREATE FUNCTION ks_test_write() RETURNS int LANGUAGE sql VOLATILE AS "
			     "'INSERT INTO loot VALUES (1) RETURNING 1'\"", conninfo), 0);
	cr_expect_geq(pg_hits("binary", "--binary /usr/bin/alpha --until 2020-01-02T00:00:00Z",
			      NULL), 1, "an ordinary hunt still works");
	snprintf(cmd, sizeof(cmd), "%s -j hunt --pg '%s' --sql \"SELECT host, ts FROM events "
		 "WHERE ks_test_write() = 1\" --until 2020-01-02T00:00:00Z", ks_bin(), conninfo);
	rc = ks_run(cmd, NULL, &errs);
	cr_expect_neq(rc, 0, "a writing hunt succeeded");
	cr_expect(errs && strstr(errs, "read-only"), "not refused as a write: %s", errs);
	free(errs);
	rc = ks_runf(&out, NULL, "psql '%s' -tAc \"SELECT (SELECT count(*) FROM loot) || ' ' || "
		     "(SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
		     "WHERE n.nspname NOT LIKE 'pg_temp%%' AND p.proname IN ('json_extract', "
		     "'ks_json_num', 'ks_inet'))\"", conninfo);
	cr_assert_eq(rc, 0);
	cr_expect_str_eq(strtok(out, "\n"), "0 0", "rows written by the hunt, helper functions "
			 "left in the database: %s", out);
	free(out);
}

/* `shield impact`: the Copy Fail shield's pattern over the store groups its
 * would-be hits by binary and user (the benign AF_ALG bind left out), and
 * with --pg per host. */
Test(hunt_pg, shield_impact_names_binaries_and_users_here_and_per_host)
{
	char cmd[1024], obj[512];
	json_object *o, *rows;
	long long alpha = -1, comm = -1;

	snprintf(obj, sizeof(obj), "%s/cve-2026-31431.bpf.o", ks_shields_dir());
	snprintf(cmd, sizeof(cmd), "%s -j shield impact %s --store %s --since 2020-01-01T00:00:00Z "
		 "--until 2020-01-02T00:00:00Z", ks_bin(), obj, env.store);
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o, "shield impact gave no JSON");
	/* the shield's refused hit, the bind with no exec, the bind by alpha -x */
	cr_expect_eq(ka_int(o, "hits"), 3, "impact hits %lld", ka_int(o, "hits"));
	cr_expect_str_eq(ka_str(o, "shield"), "cve-2026-31431");
	rows = ks_json_get(o, "by_binary_user");
	for (size_t i = 0; rows && i < json_object_array_length(rows); i++) {
		json_object *r = json_object_array_get_idx(rows, i);

		cr_expect_eq(ka_int(r, "uid"), 1000);
		if (!strcmp(ka_str(r, "binary"), "/usr/bin/alpha"))
			alpha = ka_int(r, "hits");
		else if (!strcmp(ka_str(r, "binary"), "[alpha]"))
			comm = ka_int(r, "hits");
	}
	cr_expect_eq(alpha, 1, "binary /usr/bin/alpha: %lld hits", alpha);
	cr_expect_eq(comm, 2, "[alpha] (no exec seen): %lld hits", comm);
	json_object_put(o);

	/* a window with nothing in it */
	snprintf(cmd, sizeof(cmd), "%s -j shield impact %s --store %s --since 2020-01-01T01:00:00Z "
		 "--until 2020-01-02T00:00:00Z", ks_bin(), obj, env.store);
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o);
	cr_expect_eq(ka_int(o, "hits"), 0);
	json_object_put(o);

	/* fleet-wide: h1 as the store; h2 shipped the same binds and hit */
	snprintf(cmd, sizeof(cmd), "%s -j shield impact %s --pg '%s' --since 2020-01-01T00:00:00Z "
		 "--until 2020-01-02T00:00:00Z", ks_bin(), obj, conninfo);
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o && json_object_is_type(o, json_type_array), "impact --pg gave no array");
	cr_expect_eq(json_object_array_length(o), 2);
	for (size_t i = 0; i < json_object_array_length(o); i++)
		cr_expect_eq(ka_int(json_object_array_get_idx(o, i), "hits"), 3, "host %s",
			     ka_str(json_object_array_get_idx(o, i), "host"));
	json_object_put(o);

	/* a shield object with no pattern: one line saying so */
	char *err = NULL;
	int rc = ks_runf(NULL, &err, "%s shield impact %s/lsm-only.bpf.o --store %s", ks_bin(),
			 ks_fixtures_dir(), env.store);
	cr_expect_neq(rc, 0);
	cr_expect(err && strstr(err, "declares no pattern"), "stderr: %s", err);
	free(err);
}
