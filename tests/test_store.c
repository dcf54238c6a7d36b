// SPDX-License-Identifier: MIT
/* test_store.c - the event store through `kshield events` and `kshield
 * hunt`: every filter, RFC 3339 and relative times, ancestry, the built-in
 * hunts, a shield's hunt from its metadata, and retention by size. The
 * store is made by a real agent; the rows are dated 2020-01-01 (written
 * with SQLite) so that the host's own live events never match. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include "agent_harness.h"
#include "store.h"	/* KS_STORE_VERSION */

static struct ka_env env;

/* 2020-01-01T00:00:00Z in ns, plus minutes */
#define T0 1577836800000000000LL
#define MIN 60000000000LL

static void sql(const char *q)
{
	sqlite3 *db;
	char *err = NULL;

	cr_assert_eq(sqlite3_open(env.store, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	cr_assert_eq(sqlite3_exec(db, q, NULL, NULL, &err), SQLITE_OK, "%s: %s", q, err);
	sqlite3_close(db);
}

static void setup(void)
{
	char q[4096];

	ka_setup(&env, "s");
	ka_start(&env, NULL);
	ka_stop(&env, SIGTERM);
	/* an ancestry: sshd (no parent) -> bash -> alpha, and beta. Exec ids
	 * follow the monitor's scheme, (boot ns << 8) | cpu, for a boot one
	 * second before T0 (the clock row says so). */
#define BOOT (T0 - 1000000000LL)
#define ID(m) ((long long)((unsigned long long)(T0 + (m) * MIN - BOOT) << 8))
	snprintf(q, sizeof(q),
		 "INSERT INTO events(ts, kind, pid, tid, ppid, uid, euid, comm, exec_id, parent_exec_id, binary, args) VALUES"
		 "(%lld, 'exec', 10, 10, 1, 0, 0, 'sshd', %lld, 0, '/usr/sbin/sshd', 'sshd -D'),"
		 "(%lld, 'exec', 20, 20, 10, 1000, 1000, 'bash', %lld, %lld, '/bin/bash', 'bash'),"
		 "(%lld, 'exec', 30, 30, 20, 1000, 1000, 'alpha', %lld, %lld, '/usr/bin/alpha', 'alpha --x'),"
		 "(%lld, 'exec', 40, 40, 20, 0, 0, 'beta', %lld, %lld, '/opt/beta', 'beta');"
		 "INSERT INTO events(ts, kind, pid, tid, ppid, uid, euid, comm, exec_id, laddr, lport, raddr, rport) VALUES"
		 "(%lld, 'connect', 30, 30, 20, 1000, 1000, 'alpha', %lld, '10.0.0.5', 40001, '203.0.113.7', 4444),"
		 "(%lld, 'accept', 10, 10, 1, 0, 0, 'sshd', %lld, '10.0.0.5', 22, '198.51.100.2', 51000),"
		 "(%lld, 'connect', 40, 40, 20, 0, 0, 'beta', %lld, '2001:db8::1', 40002, '2001:db8::99', 443);"
		 "INSERT INTO events(ts, kind, pid, tid, uid, euid, comm, exec_id, alg_type, alg_name, ret) VALUES"
		 "(%lld, 'alg_bind', 30, 30, 1000, 1000, 'alpha', %lld, 'aead', 'authencesn(hmac(sha256),cbc(aes))', 0);"
		 "INSERT INTO clock(since, boot_to_real) VALUES(0, %lld);",
		 T0, ID(0),
		 T0 + 1 * MIN, ID(1), ID(0),
		 T0 + 2 * MIN, ID(2), ID(1),
		 T0 + 90 * MIN, ID(90), ID(1),
		 T0 + 3 * MIN, ID(2), T0 + 4 * MIN, ID(0), T0 + 91 * MIN, ID(90),
		 T0 + 5 * MIN, ID(2), BOOT);
	sql(q);
}

static void teardown(void)
{
	ka_teardown(&env);
}

TestSuite(store, .init = setup, .fini = teardown, .timeout = 60);

/* events -j in the 2020-01-01 window plus @args; returns the comms joined
 * by ',' in time order (static buffer). */
static const char *comms(const char *args)
{
	static char out[512];
	char cmd[1024];
	json_object *arr;

	snprintf(cmd, sizeof(cmd), "%s -j events --store %s --since 2020-01-01T00:00:00Z "
		 "--until 2020-01-01T23:59:59Z %s", ks_bin(), env.store, args);
	arr = ks_run_json(cmd, NULL, NULL);
	out[0] = '\0';
	cr_assert(arr && json_object_is_type(arr, json_type_array), "%s: no JSON array", cmd);
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s:%s", i ? "," : "",
			 ka_str(e, "kind"), ka_str(e, "comm"));
	}
	json_object_put(arr);
	return out;
}

Test(store, s01_filters)
{
	cr_expect_str_eq(comms("--comm alpha"), "exec:alpha,connect:alpha,alg_bind:alpha");
	cr_expect_str_eq(comms("--kind exec --uid 1000"), "exec:bash,exec:alpha");
	cr_expect_str_eq(comms("--binary alpha"), "exec:alpha");
	cr_expect_str_eq(comms("--binary /opt/beta"), "exec:beta");
	cr_expect_str_eq(comms("--addr 203.0.113.7"), "connect:alpha");
	cr_expect_str_eq(comms("--addr 2001:db8::99"), "connect:beta");
	cr_expect_str_eq(comms("--port 22"), "accept:sshd");
	cr_expect_str_eq(comms("--kind connect,accept"), "connect:alpha,accept:sshd,connect:beta");
	cr_expect_str_eq(comms("--pid 40"), "exec:beta,connect:beta");
	cr_expect_str_eq(comms("--kind exec --limit 2"), "exec:alpha,exec:beta");
}

Test(store, s02_times_rfc3339_with_offsets_and_fractions)
{
	char cmd[512];
	json_object *arr;

	/* 01:00+01:00 is 00:00Z; the window 00:00:30Z..00:02:30.5Z holds bash, alpha */
	snprintf(cmd, sizeof(cmd), "%s -j events --store %s --since 2020-01-01T01:00:30+01:00 "
		 "--until 2020-01-01T00:02:30.5Z --kind exec", ks_bin(), env.store);
	arr = ks_run_json(cmd, NULL, NULL);
	cr_assert(arr);
	cr_expect_eq(json_object_array_length(arr), 2);
	cr_expect_str_eq(ka_str(json_object_array_get_idx(arr, 0), "ts"), "2020-01-01T00:01:00.000000Z");
	json_object_put(arr);
	/* relative: nothing from 2020 is within the last 3 days */
	snprintf(cmd, sizeof(cmd), "%s -j events --store %s --since 3d --comm alpha", ks_bin(), env.store);
	arr = ks_run_json(cmd, NULL, NULL);
	cr_assert(arr);
	cr_expect_eq(json_object_array_length(arr), 0);
	json_object_put(arr);
}

Test(store, s03_tree_by_pid_and_by_exec_id)
{
	char cmd[512];
	json_object *o;

	snprintf(cmd, sizeof(cmd), "%s -j events --store %s --tree 30", ks_bin(), env.store);
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o);
	json_object *chain = ks_json_get(o, "ancestry");
	cr_assert(chain);
	cr_assert_eq(json_object_array_length(chain), 3);
	cr_expect_str_eq(ka_str(json_object_array_get_idx(chain, 0), "binary"), "/usr/bin/alpha");
	cr_expect_str_eq(ka_str(json_object_array_get_idx(chain, 1), "binary"), "/bin/bash");
	cr_expect_str_eq(ka_str(json_object_array_get_idx(chain, 2), "binary"), "/usr/sbin/sshd");
	json_object_put(o);

	/* plain output: one line per image, indented */
	char *out = NULL;
	cr_assert_eq(ks_runf(&out, NULL, "%s events --store %s --tree 30", ks_bin(), env.store), 0);
	cr_expect(strstr(out, "/usr/bin/alpha") && strstr(out, "<- ") && strstr(out, "/usr/sbin/sshd"),
		  "%s", out);
	free(out);
}

static json_object *hunt(const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s %s", ks_bin(), env.store, args);
	return ks_run_json(cmd, NULL, NULL);
}

Test(store, s04_c2_connections_from_a_file_of_ips_and_cidrs)
{
	char path[300], *f;
	json_object *h;

	snprintf(path, sizeof(path), "%s/c2.txt", env.dir);
	FILE *fp = fopen(path, "w");
	fprintf(fp, "# known command and control\n203.0.113.0/24\n\n2001:db8::99\n192.0.2.1\n");
	fclose(fp);
	f = strdup(path);
	char args[512];
	snprintf(args, sizeof(args), "c2-connections --file %s --until 2020-01-02T00:00:00Z", f);
	h = hunt(args);
	cr_assert(h);
	cr_expect_eq(ka_int(h, "count"), 2);
	json_object *hits = ks_json_get(h, "hits");
	cr_assert(hits && json_object_array_length(hits) == 2);
	json_object *first = json_object_array_get_idx(hits, 0);
	cr_expect_str_eq(ka_str(first, "raddr"), "203.0.113.7");
	/* each hit shows its process ancestry */
	json_object *anc = ks_json_get(first, "ancestry");
	cr_expect(anc && json_object_array_length(anc) == 3, "ancestry of the hit");
	cr_expect_str_eq(ka_str(json_object_array_get_idx(hits, 1), "raddr"), "2001:db8::99");
	json_object_put(h);

	/* a bad line is one clear error naming the line */
	fp = fopen(path, "a");
	fprintf(fp, "300.1.2.3/8\n");
	fclose(fp);
	char *out = NULL, *err = NULL;
	int rc = ks_runf(&out, &err, "%s hunt --store %s c2-connections --file %s", ks_bin(), env.store, f);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "c2.txt:6"), "%s", err);
	free(out);
	free(err);
	free(f);
}

Test(store, s05_new_binaries_gained_root_and_sql)
{
	json_object *h;

	/* first seen between 00:30 and 02:00: only /opt/beta (01:30) */
	h = hunt("new-binaries --since 2020-01-01T00:30:00Z --until 2020-01-01T02:00:00Z");
	cr_assert(h);
	cr_expect_eq(ka_int(h, "count"), 1);
	cr_expect_str_eq(ka_str(json_object_array_get_idx(ks_json_get(h, "hits"), 0), "binary"), "/opt/beta");
	json_object_put(h);

	h = hunt("--sql \"SELECT kind, count(*) AS n FROM events WHERE ts < 1577923200000000000 GROUP BY kind ORDER BY kind\"");
	cr_assert(h);
	json_object *hits = ks_json_get(h, "hits");
	cr_assert(hits && json_object_array_length(hits) == 4, "kinds: accept alg_bind connect exec");
	cr_expect_str_eq(ka_str(json_object_array_get_idx(hits, 3), "kind"), "exec");
	cr_expect_eq(ka_int(json_object_array_get_idx(hits, 3), "n"), 4);
	json_object_put(h);
}

Test(store, s06_a_shields_hunt_comes_from_its_metadata)
{
	char args[512];
	json_object *h, *list;
	bool listed = false;

	snprintf(args, sizeof(args), "list --shields-dir %s", ks_shields_dir());
	list = hunt(args);
	cr_assert(list && json_object_is_type(list, json_type_array));
	for (size_t i = 0; i < json_object_array_length(list); i++)
		listed |= !strcmp(ka_str(json_object_array_get_idx(list, i), "name"), "cve-2026-31431");
	json_object_put(list);
	cr_assert(listed, "cve-2026-31431's hunt not listed from %s", ks_shields_dir());

	snprintf(args, sizeof(args), "cve-2026-31431 --shields-dir %s", ks_shields_dir());
	h = hunt(args);
	cr_assert(h);
	cr_expect(ka_int(h, "count") >= 1);
	json_object *hit = json_object_array_get_idx(ks_json_get(h, "hits"), 0);
	cr_expect_str_eq(ka_str(hit, "alg_name"), "authencesn(hmac(sha256),cbc(aes))");
	cr_expect(json_object_array_length(ks_json_get(hit, "ancestry")) == 3);
	json_object_put(h);
}

Test(store, s07_retention_by_size_keeps_the_newest)
{
	long long before, after, oldest;

	/* ~60k filler rows of ~300 bytes: far more than 4M */
	sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 60000) "
	    "INSERT INTO events(ts, kind, comm, args) SELECT 1600000000000000000 + i, 'exec', 'filler', "
	    "printf('%.280c', 'x') FROM n");
	before = ka_sql_int(env.store, "SELECT count(*) FROM events");
	ka_start(&env, "--max-size 4M");
	after = before;
	for (double t0 = ka_now(); ka_now() - t0 < 15 && after >= before; usleep(200000))
		after = ka_sql_int(env.store, "SELECT count(*) FROM events");
	cr_expect(after < before, "nothing deleted over --max-size (%lld rows)", after);
	/* oldest first: the seeded 2020-01-01 rows predate the filler
	 * (2020-09) and go before it */
	oldest = ka_sql_int(env.store, "SELECT count(*) FROM events WHERE comm = 'sshd'");
	cr_expect_eq(oldest, 0, "the oldest rows were not the ones deleted");
	cr_expect(ka_sql_int(env.store, "SELECT count(*) FROM events WHERE comm = 'filler'") > 0);
}

Test(store, s08_status_reports_the_store_it_is_told_or_the_agents)
{
	char cmd[1024], other[300];
	json_object *o;

	/* no --store: the running agent's */
	ka_start(&env, NULL);
	snprintf(cmd, sizeof(cmd), "env -u KSHIELD_STORE %s -j status", ks_bin());
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o);
	cr_expect_str_eq(ka_str(o, "store.path"), env.store);
	cr_expect_gt(ka_int(o, "store.events"), 0);
	json_object_put(o);
	/* --store wins, then KSHIELD_STORE */
	snprintf(other, sizeof(other), "%s/other.db", env.dir);
	snprintf(cmd, sizeof(cmd), "KSHIELD_STORE=/nonexistent %s -j status --store %s", ks_bin(), other);
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o);
	cr_expect_str_eq(ka_str(o, "store.path"), other);
	cr_expect_eq(json_object_get_boolean(ks_json_get(o, "store.exists")), false);
	json_object_put(o);
	snprintf(cmd, sizeof(cmd), "KSHIELD_STORE=%s %s -j status", other, ks_bin());
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o);
	cr_expect_str_eq(ka_str(o, "store.path"), other);
	json_object_put(o);
	ka_stop(&env, SIGTERM);
}

/* Issue 25: a real shield's hit, stored by the agent from the ring
 * buffer, reads back with its arguments by name beside the raw words.
 * cve-2021-3156's tp variant runs on this host (test_shield.c); its
 * trigger is a set-user-ID copy of /bin/true run as `sudoedit -s 'x\'`,
 * which the shield kills at exec. */
Test(store, s09_a_real_shield_event_reads_back_with_named_arguments)
{
	char args[768], exe[300], *err = NULL, *out = NULL;
	json_object *arr, *e;
	int status = 0;
	pid_t pid;

	snprintf(args, sizeof(args), "mkdir -p %s/shields.d && ln -sf %s/cve-2021-3156.bpf.o %s/shields.d/ "
		 "&& cp /bin/true %s/sudo && chmod 4755 %s/sudo", env.dir, ks_shields_dir(), env.dir,
		 env.dir, env.dir);
	cr_assert_eq(ks_run(args, NULL, NULL), 0, "%s", args);
	snprintf(args, sizeof(args), "--shields-dir %s/shields.d", env.dir);
	ka_start_args(&env, args);
	for (double t0 = ka_now(); ka_now() - t0 < 20; usleep(100000)) {
		free(err);
		err = ka_agent_err(&env);
		if (err && strstr(err, "shield cve-2021-3156"))
			break;
	}
	cr_assert(err && strstr(err, "shield cve-2021-3156: loaded"), "%s", err ? err : "");
	free(err);

	snprintf(exe, sizeof(exe), "%s/sudo", env.dir);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execl(exe, "sudoedit", "-s", "x\\", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the trigger was not killed (status %#x)", status);

	arr = ka_events(&env, "--kind shield --since 1m", 1, 10);
	cr_assert(arr && json_object_array_length(arr) >= 1, "no shield event stored");
	e = json_object_array_get_idx(arr, 0);
	cr_expect_str_eq(ka_str(e, "verdict"), "killed");
	cr_expect_str_eq(ka_str(e, "detail.hook"), "sched_process_exec");
	/* the raw words, as before */
	cr_expect_eq(json_object_array_length(ks_json_get(e, "detail.args")), 4);
	cr_expect_eq(ka_int(e, "detail.args.1"), 1);
	/* and by name */
	cr_expect_eq(json_object_get_boolean(ks_json_get(e, "detail.arg.shell")), true);
	cr_expect_eq(json_object_get_boolean(ks_json_get(e, "detail.arg.odd_backslashes")), true);
	cr_expect(json_object_is_type(ks_json_get(e, "detail.arg.argv_index"), json_type_int));
	cr_expect_null(ks_json_get(e, "detail.arg.arg3"), "an unused word was shown");
	json_object_put(arr);
	/* the plain line names them too */
	snprintf(args, sizeof(args), "%s events --store %s --kind shield --since 1m",
		 ks_bin(), env.store);
	cr_expect_eq(ks_run(args, &out, NULL), 0);
	cr_expect(out && strstr(out, "killed sched_process_exec(argv_index=") &&
		  strstr(out, "shell=true odd_backslashes=true)"), "%s", out ? out : "");
	free(out);
	ka_stop(&env, SIGTERM);
	ks_runf(NULL, NULL, "%s shield unload cve-2021-3156", ks_bin());
}

/* ---- schema versions ---- */

static struct ka_env menv;

static void msetup(void)
{
	ka_setup(&menv, "m");
}

static void mteardown(void)
{
	ka_teardown(&menv);
}

TestSuite(store_migrate, .init = msetup, .fini = mteardown, .timeout = 60);

/* A store as kshield wrote it before the per-kind tables (schema 1). */
static void make_v1_store(const char *path, int version)
{
	sqlite3 *db;
	char q[4096], *err = NULL;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(q, sizeof(q),
		 "PRAGMA application_id=%d; PRAGMA user_version=%d; PRAGMA journal_mode=WAL;"
		 "CREATE TABLE events(ts INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
		 " pid INTEGER, tgid INTEGER, ppid INTEGER, uid INTEGER, euid INTEGER,"
		 " comm TEXT, cgroup_id INTEGER, exec_id INTEGER, parent_exec_id INTEGER,"
		 " binary TEXT, args TEXT, laddr TEXT, lport INTEGER, raddr TEXT, rport INTEGER,"
		 " shield TEXT, verdict TEXT, alg_type TEXT, alg_name TEXT, ret INTEGER, detail TEXT);"
		 "CREATE INDEX events_kind_ts ON events(kind, ts);"
		 "CREATE INDEX events_binary ON events(binary, ts) WHERE binary IS NOT NULL;"
		 "CREATE TABLE clock(since INTEGER NOT NULL, boot_to_real INTEGER NOT NULL);"
		 "CREATE TABLE losses(ts INTEGER NOT NULL, kind TEXT NOT NULL,"
		 " lost INTEGER NOT NULL, unstored INTEGER NOT NULL);"
		 "INSERT INTO events(ts, kind, tgid, uid, comm, exec_id, binary, args) VALUES"
		 "(%lld, 'exec', 10, 0, 'sshd', 1, '/usr/sbin/sshd', 'sshd -D'),"
		 "(%lld, 'exec', 20, 1000, 'old', 2, '/opt/old-tool', 'old-tool');"
		 "INSERT INTO events(ts, kind, tgid, comm, raddr, rport) VALUES"
		 "(%lld, 'connect', 20, 'old', '203.0.113.9', 4444);"
		 "INSERT INTO events(ts, kind, tgid, comm, shield, verdict) VALUES"
		 "(%lld, 'shield', 20, 'old', 'cve-x', 'refused');",
		 0x6b736864, version, T0, T0 + 60 * MIN, T0 + 61 * MIN, T0 + 62 * MIN);
	cr_assert_eq(sqlite3_exec(db, q, NULL, NULL, &err), SQLITE_OK, "%s", err);
	sqlite3_close(db);
}

static long long count_2020(void)
{
	return ka_sql_int(menv.store, "SELECT count(*) FROM events WHERE ts < 1577923200000000000");
}

Test(store_migrate, m01_a_version_1_store_keeps_its_rows_and_hunts)
{
	char cmd[1024];
	json_object *h;

	make_v1_store(menv.store, 1);
	/* readers use it as it is */
	cr_expect_eq(count_2020(), 4);
	snprintf(cmd, sizeof(cmd), "%s -j stats --store %s", ks_bin(), menv.store);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h);
	cr_expect_eq(ka_int(h, "store.total"), 4);
	cr_expect_eq(ka_int(h, "store.events.exec"), 2);
	json_object_put(h);
	/* the agent migrates it: the old table becomes one arm of the view */
	ka_start(&menv, NULL);
	ka_stop(&menv, SIGTERM);
	cr_expect_eq(ka_sql_int(menv.store, "PRAGMA user_version"), KS_STORE_VERSION);
	cr_expect_eq(ka_sql_int(menv.store, "SELECT count(*) FROM sqlite_master WHERE "
				"name = 'events' AND type = 'view'"), 1);
	cr_expect_eq(count_2020(), 4);
	snprintf(cmd, sizeof(cmd), "%s -j status --store %s", ks_bin(), menv.store);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h);
	cr_expect_geq(ka_int(h, "store.events"), 4);
	json_object_put(h);
	/* hunts over old rows: first seen, kind, binary */
	snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s new-binaries --since 2020-01-01T00:30:00Z "
		 "--until 2020-01-01T02:00:00Z", ks_bin(), menv.store);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h);
	cr_expect_eq(ka_int(h, "count"), 1);
	cr_expect_str_eq(ka_str(json_object_array_get_idx(ks_json_get(h, "hits"), 0), "binary"),
			 "/opt/old-tool");
	json_object_put(h);
	snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s shield-hits --until 2020-01-02T00:00:00Z",
		 ks_bin(), menv.store);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h);
	cr_expect_eq(ka_int(h, "count"), 1);
	json_object_put(h);
	snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s binary --binary /usr/sbin/sshd "
		 "--until 2020-01-02T00:00:00Z", ks_bin(), menv.store);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h);
	cr_expect_eq(ka_int(h, "count"), 1);
	json_object_put(h);

	/* retention empties the old table, which is then dropped */
	ka_start(&menv, "--keep 30d");
	long long left = 1;
	for (double t0 = ka_now(); ka_now() - t0 < 15 && left; usleep(200000))
		left = ka_sql_int(menv.store, "SELECT count(*) FROM sqlite_master WHERE name = 'ev_v1'");
	cr_expect_eq(left, 0, "the emptied version 1 table is still there");
	cr_expect_eq(count_2020(), 0);
	cr_expect(ka_sql_int(menv.store, "SELECT count(*) FROM events") >= 0);
}

Test(store_migrate, m02_a_newer_store_is_refused_in_one_line)
{
	char *out = NULL, *err = NULL;

	make_v1_store(menv.store, KS_STORE_VERSION + 1);
	int rc = ks_runf(&out, &err, "%s events --store %s", ks_bin(), menv.store);
	char want[32];

	snprintf(want, sizeof(want), "store schema %d", KS_STORE_VERSION + 1);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, want) && strstr(err, "newer kshield") &&
		  strchr(err, '\n') == err + strlen(err) - 1, "want one line: %s", err);
	/* and the agent leaves it alone */
	ka_start(&menv, NULL);
	ka_stop(&menv, SIGTERM);
	cr_expect_eq(ka_sql_int(menv.store, "PRAGMA user_version"), KS_STORE_VERSION + 1);
	cr_expect_eq(ka_sql_int(menv.store, "SELECT count(*) FROM sqlite_master WHERE "
				"name = 'events' AND type = 'table'"), 1);
	free(out);
	free(err);
}

/* A version 2 store (tests/fixtures/store-v2.sql, as that version wrote
 * it: pid the thread, tgid the process): read with pid the process and tid
 * the thread before the agent migrates it and after, rows and hunts kept. */
Test(store_migrate, m04_a_version_2_store_keeps_its_rows_with_pid_the_process)
{
	char cmd[1024], *sqltext = NULL, *err = NULL;
	size_t len = 0;
	FILE *f = fopen("tests/fixtures/store-v2.sql", "r");
	sqlite3 *db;
	json_object *h;

	cr_assert(f, "tests/fixtures/store-v2.sql not found");
	cr_assert_eq(getdelim(&sqltext, &len, '\0', f) > 0, true);
	fclose(f);
	cr_assert_eq(sqlite3_open(menv.store, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sqltext, NULL, NULL, &err), SQLITE_OK, "%s", err);
	cr_assert_eq(sqlite3_exec(db, "PRAGMA application_id=1802725476; PRAGMA user_version=2;",
				  NULL, NULL, &err), SQLITE_OK, "%s", err);
	sqlite3_close(db);
	free(sqltext);

	for (int pass = 0; pass < 2; pass++) {
		/* pass 0: read as it is (read-only); pass 1: after the agent */
		if (pass) {
			ka_start(&menv, NULL);
			ka_stop(&menv, SIGTERM);
			cr_expect_eq(ka_sql_int(menv.store, "PRAGMA user_version"), KS_STORE_VERSION);
			cr_expect_eq(ka_sql_int(menv.store, "SELECT count(*) FROM pragma_table_info('ev_connect') "
						"WHERE name IN ('pid', 'tid')"), 2);
		}
		snprintf(cmd, sizeof(cmd), "%s -j events --store %s --until 2020-01-02T00:00:00Z --pid 30",
			 ks_bin(), menv.store);
		h = ks_run_json(cmd, NULL, NULL);
		cr_assert(h, "pass %d: %s", pass, cmd);
		cr_expect_eq(json_object_array_length(h), 3, "pass %d", pass);
		json_object *ex = json_object_array_get_idx(h, 0), *co = json_object_array_get_idx(h, 1);
		cr_expect_eq(ka_int(ex, "pid"), 30);
		cr_expect_eq(ka_int(ex, "tid"), 31);
		cr_expect_str_eq(ka_str(ex, "binary"), "/usr/bin/alpha");
		cr_expect_eq(ka_int(ex, "detail.setuid"), 0);
		cr_expect_eq(ka_int(co, "tid"), 32);
		cr_expect_str_eq(ka_str(co, "raddr"), "203.0.113.7");
		cr_expect_str_eq(ka_str(json_object_array_get_idx(h, 2), "shield"), "cve-x");
		json_object_put(h);
		snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s --sql \"SELECT * FROM events WHERE "
			 "pid = 40 AND tid = 40 AND kind = 'exec'\"", ks_bin(), menv.store);
		h = ks_run_json(cmd, NULL, NULL);
		cr_assert(h, "pass %d: %s", pass, cmd);
		cr_expect_eq(ka_int(h, "count"), 1, "pass %d", pass);
		cr_expect_eq(ka_int(json_object_array_get_idx(ks_json_get(h, "hits"), 0),
				    "detail.setuid"), 1);
		json_object_put(h);
		snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s new-binaries --since "
			 "2019-12-31T00:00:00Z --until 2020-01-02T00:00:00Z", ks_bin(), menv.store);
		h = ks_run_json(cmd, NULL, NULL);
		cr_assert(h, "pass %d: %s", pass, cmd);
		cr_expect_eq(ka_int(h, "count"), 2, "pass %d", pass);
		json_object_put(h);
	}
}

/* The agent's write path over ten days (bench/store_ingest fill): one
 * exec chunk a day, sealed ones indexed; hunts agree with the tables;
 * retention by age drops whole chunks. */
Test(store_migrate, m03_exec_chunks_by_day_indexed_hunted_and_dropped)
{
	char bench[512], cmd[1024];
	json_object *h;

	snprintf(bench, sizeof(bench), "%s", ks_bin());
	*strrchr(bench, '/') = '\0';
	strcat(bench, "/bench/store_ingest");
	cr_assert_eq(ks_runf(NULL, NULL, "%s fill %s 200000 10 50", bench, menv.store), 0,
		     "%s fill failed (make build/bench/store_ingest)", bench);
	long long chunks = ka_sql_int(menv.store, "SELECT count(*) FROM sqlite_master WHERE "
				      "type = 'table' AND name GLOB 'ev_exec*'");
	long long sealed = ka_sql_int(menv.store, "SELECT count(*) FROM sqlite_master WHERE "
				      "type = 'index' AND name GLOB 'ev_exec*_bin'");
	cr_expect(chunks >= 10 && chunks <= 12, "%lld exec chunks for 10 days", chunks);
	cr_expect_eq(sealed, chunks - 1, "every chunk but the current one is indexed");
	cr_expect_eq(ka_sql_int(menv.store, "SELECT count(*) FROM events WHERE kind = 'exec'"), 60000);

	/* one binary over everything: the view (indexes and the hot chunk) */
	snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s binary --binary /usr/bin/prog-7 --limit 0",
		 ks_bin(), menv.store);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h);
	cr_expect_eq(ka_int(h, "count"), 60000 / 50);
	json_object_put(h);

	/* keep 5 days: the older chunks go whole, the rest stays hunted */
	ka_start(&menv, "--keep 5d");
	long long left = chunks;
	for (double t0 = ka_now(); ka_now() - t0 < 20 && left > 7; usleep(200000))
		left = ka_sql_int(menv.store, "SELECT count(*) FROM sqlite_master WHERE "
				  "type = 'table' AND name GLOB 'ev_exec*'");
	ka_stop(&menv, SIGTERM);
	cr_expect(left >= 5 && left <= 7, "%lld exec chunks after --keep 5d", left);
	long long execs = ka_sql_int(menv.store, "SELECT count(*) FROM events WHERE kind = 'exec' "
				     "AND binary GLOB '/usr/bin/prog-*'");
	cr_expect(execs > 25000 && execs < 35000, "%lld execs left of 60000", execs);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h);
	cr_expect_eq(ka_int(h, "count"), ka_sql_int(menv.store, "SELECT count(*) FROM events "
						   "WHERE binary = '/usr/bin/prog-7'"));
	cr_expect_gt(ka_int(h, "count"), 0);
	json_object_put(h);
}
