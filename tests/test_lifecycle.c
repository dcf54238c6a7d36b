/* test_lifecycle.c - the agent's lifecycle on this host's real kernel
 * (issue 6): adopting what is pinned without new links, five restarts with
 * a stable link set, kill -9 while a trigger loop runs (nothing gets
 * through, the outage's events reach the store), SIGHUP adding, removing,
 * replacing and re-moding shields, a broken object leaving the previous
 * version enforcing, tampering repaired and recorded, `--check` errors.
 *
 * Each test has its own bpffs root (/sys/fs/bpf/ks-test-lc-<pid>), config,
 * shields directory and store under /tmp, and the config turns the guard
 * on: on this host (no BPF LSM) that loads its recording variant, so the
 * tests also see `tamper` events for the kills they do.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "agent_harness.h"

struct lc {
	char root[128], dir[128], conf[256], shields[256], store[256], err[256];
	pid_t agent;
};

static struct lc L;

static void write_conf(const char *extra)
{
	FILE *f = fopen(L.conf, "w");

	cr_assert(f, "can't write %s", L.conf);
	fprintf(f, "# test_lifecycle\nstore = %s\nshields_dir = %s\nbpffs = %s\n"
		"guard = on\ncheck_interval = 1s\n%s", L.store, L.shields, L.root,
		extra ? extra : "");
	fclose(f);
}

/* Copy shield @name (the fixture-sockopt fixture: it refuses on this host)
 * into the shields directory, as @as. */
static void add_shield(const char *name, const char *as)
{
	if (!strcmp(name, KS_SOCKOPT_SHIELD))
		cr_assert_eq(ks_runf(NULL, NULL, "cp %s/" KS_SOCKOPT_OBJ " %s/%s.bpf.o",
				     ks_fixtures_dir(), L.shields, as ? as : name), 0,
			     "copying shield %s", name);
	else
		cr_assert_eq(ks_runf(NULL, NULL, "cp %s/%s.bpf.o %s/%s.bpf.o", ks_shields_dir(),
				     name, L.shields, as ? as : name), 0, "copying shield %s", name);
}

static void setup(void)
{
	snprintf(L.root, sizeof(L.root), "/sys/fs/bpf/ks-test-lc-%d", getpid());
	snprintf(L.dir, sizeof(L.dir), "/tmp/ks-test-lc-%d", getpid());
	snprintf(L.conf, sizeof(L.conf), "%s/kshield.conf", L.dir);
	snprintf(L.shields, sizeof(L.shields), "%s/shields.d", L.dir);
	snprintf(L.store, sizeof(L.store), "%s/events.db", L.dir);
	snprintf(L.err, sizeof(L.err), "%s/agent.err", L.dir);
	ks_runf(NULL, NULL, "rm -rf %s %s; mkdir -p %s", L.root, L.dir, L.shields);
	setenv("KSHIELD_BPFFS", L.root, 1);
	L.agent = 0;
	write_conf(NULL);
	add_shield("fixture-sockopt", NULL);
}

static void stop(int sig)
{
	if (L.agent > 0) {
		kill(L.agent, sig);
		waitpid(L.agent, NULL, 0);
		L.agent = 0;
	}
}

static void teardown(void)
{
	stop(SIGTERM);
	ks_runf(NULL, NULL, "%s guard off >/dev/null 2>&1; rm -rf %s %s", ks_bin(), L.root, L.dir);
}

TestSuite(lifecycle, .init = setup, .fini = teardown, .timeout = 120);

/* How many times the agent has finished a shields sync: each sync ends
 * with one "guard:" line (the guard is on in every test config). */
static int syncs(void)
{
	char *t = ks_read_file(L.err);
	int n = 0;

	for (char *p = t; p && (p = strstr(p, "kshield agent: guard:")); p++)
		n++;
	free(t);
	return n;
}

static void wait_syncs(int n)
{
	for (double t0 = ka_now(); syncs() < n; usleep(20000)) {
		char *t;

		if (ka_now() - t0 < 30)
			continue;
		t = ks_read_file(L.err);
		cr_assert_fail("agent did not finish sync #%d in 30 s; its stderr:\n%s", n, t);
	}
}

/* Start `kshield agent --config <conf>` in the background and wait until
 * its first shields sync is done. */
static void start(void)
{
	int before = syncs();

	fflush(NULL);
	L.agent = fork();
	if (L.agent == 0) {
		int fd = open(L.err, O_WRONLY | O_CREAT | O_APPEND, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		setsid();
		execl(ks_bin(), ks_bin(), "agent", "--config", L.conf, (char *)NULL);
		_exit(127);
	}
	wait_syncs(before + 1);
}

static void hup(void)
{
	int before = syncs();

	kill(L.agent, SIGHUP);
	wait_syncs(before + 1);
}

/* The ids of every link pinned under the root (sorted, "1,5,9"), each
 * checked to exist in the kernel. Returns how many. */
static int link_ids(const char *dir, char *out, size_t len)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);
	__u32 ids[256];
	int n = 0;

	while (d && (de = readdir(d)) && n < 256) {
		struct bpf_link_info info = {};
		__u32 il = sizeof(info);
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR) {
			char sub[4096] = "";
			int m = link_ids(path, sub, sizeof(sub));

			for (char *p = strtok(sub, ","); p && m-- > 0 && n < 256; p = strtok(NULL, ","))
				ids[n++] = strtoul(p, NULL, 10);
			continue;
		}
		if (strncmp(de->d_name, "link_", 5))
			continue;
		fd = bpf_obj_get(path);
		cr_assert_geq(fd, 0, "can't open pinned link %s", path);
		cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &il), 0, "link info of %s", path);
		close(fd);
		ids[n++] = info.id;
	}
	if (d)
		closedir(d);
	for (int i = 1; i < n; i++)	/* insertion sort: a handful of ids */
		for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			__u32 t = ids[j];

			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	out[0] = '\0';
	for (int i = 0, off = 0; i < n && (size_t)off < len; i++)
		off += snprintf(out + off, len - off, "%s%u", i ? "," : "", ids[i]);
	return n;
}

/* Every link in the kernel (informational: other engineers share it). */
static int kernel_links(void)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_link_get_next_id(id, &id))
		n++;
	return n;
}

/* One table-replace attempt from a new user+network namespace: the
 * fixture-sockopt trigger (a 64-bit table replace). Returns 0 when it got through. */
static int trigger(void)
{
	return ks_runf(NULL, NULL, "unshare -Urn iptables-legacy -A INPUT -j ACCEPT");
}

static json_object *shield_state(const char *name)
{
	char cmd[512];
	json_object *arr, *o = NULL;

	snprintf(cmd, sizeof(cmd), "%s -j shield list", ks_bin());
	arr = ks_run_json(cmd, NULL, NULL);
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *s = json_object_array_get_idx(arr, i);

		if (!strcmp(ka_str(s, "name"), name))
			o = json_object_get(s);
	}
	json_object_put(arr);
	return o;
}

static long long refused(const char *name)
{
	json_object *s = shield_state(name);
	long long n = s ? ka_int(s, "verdicts.refused") : -1;

	json_object_put(s);
	return n;
}

static long long audited(const char *name)
{
	json_object *s = shield_state(name);
	long long n = s ? ka_int(s, "verdicts.audited") : -1;

	json_object_put(s);
	return n;
}

static long long now_real_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

Test(lifecycle, t01_restart_adopts_without_new_links)
{
	char before[4096], after[4096];
	int n1, n2;

	start();
	cr_assert_eq(trigger() != 0, true, "the shield must refuse the trigger");
	n1 = link_ids(L.root, before, sizeof(before));
	/* shield (1) + monitor + guard: more than one kind of link */
	cr_assert_gt(n1, 2, "links pinned under %s: %d", L.root, n1);
	stop(SIGTERM);
	start();
	n2 = link_ids(L.root, after, sizeof(after));
	cr_log_info("t01: %d links before restart [%s], %d after [%s]", n1, before, n2, after);
	cr_expect_eq(n1, n2, "link count %d before restart, %d after", n1, n2);
	cr_expect_str_eq(before, after, "restart changed the links: before %s, after %s",
			 before, after);
	char *t = ks_read_file(L.err);

	cr_expect(strstr(t, "shield fixture-sockopt: adopted"), "agent log:\n%s", t);
	free(t);
}

Test(lifecycle, t02_five_kill9_restarts_keep_the_link_set)
{
	char first[4096], now[4096];
	int n0 = 0, n;

	start();
	n0 = link_ids(L.root, first, sizeof(first));
	for (int i = 1; i <= 5; i++) {
		stop(SIGKILL);
		/* no agent: still enforcing */
		cr_expect_neq(trigger(), 0, "restart %d: trigger got through with the agent down", i);
		start();
		n = link_ids(L.root, now, sizeof(now));
		cr_log_info("t02: restart %d: %d links under the root (first run %d), %d in the "
			    "whole kernel", i, n, n0, kernel_links());
		cr_expect_eq(n, n0, "restart %d: %d links, first run had %d", i, n, n0);
		cr_expect_str_eq(now, first, "restart %d: links %s, first run %s", i, now, first);
	}
}

/* A trigger loop in a child: every attempt's start/end (realtime ns) and
 * result go to shared memory. */
struct attempt {
	long long t0, t1;
	int rc;
};

#define LOOP_N 40

Test(lifecycle, t03_kill9_during_trigger_loop_nothing_passes_outage_events_stored)
{
	struct attempt *a = mmap(NULL, sizeof(*a) * LOOP_N, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long hits0, hits1, kill_ts, restart_ts, within = 0, overlapping = 0, stored;
	pid_t killed, loop;
	char sql[512];
	int passed = 0;

	cr_assert_neq(a, MAP_FAILED);
	start();
	hits0 = refused("fixture-sockopt");
	loop = fork();
	if (loop == 0) {
		for (int i = 0; i < LOOP_N; i++) {
			a[i].t0 = now_real_ns();
			a[i].rc = trigger();
			a[i].t1 = now_real_ns();
			usleep(50000);
		}
		_exit(0);
	}
	usleep(800000);
	killed = L.agent;
	kill_ts = now_real_ns();
	stop(SIGKILL);
	usleep(1500000);		/* the outage: the loop keeps going */
	restart_ts = now_real_ns();
	start();
	waitpid(loop, NULL, 0);
	hits1 = refused("fixture-sockopt");
	stop(SIGTERM);			/* flushes its batch into the store */

	for (int i = 0; i < LOOP_N; i++) {
		passed += a[i].rc == 0;
		within += a[i].t0 > kill_ts && a[i].t1 < restart_ts;
		overlapping += a[i].t1 > kill_ts && a[i].t0 < restart_ts;
	}
	cr_log_info("t03: %d triggers, %d got through, %lld refusals counted; outage %.2f s: "
		    "%lld triggers wholly inside it, %lld overlapping", LOOP_N, passed, hits1 - hits0,
		    (restart_ts - kill_ts) / 1e9, within, overlapping);
	cr_expect_eq(passed, 0, "%d of %d triggers got through", passed, LOOP_N);
	cr_expect_eq(hits1 - hits0, LOOP_N, "shield counted %lld refusals for %d triggers",
		     hits1 - hits0, LOOP_N);
	cr_assert_geq(within, 3, "only %lld triggers ran while the agent was down", within);
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE kind = 'shield' AND "
		 "shield = 'fixture-sockopt' AND verdict = 'refused' AND ts > %lld AND ts < %lld",
		 kill_ts, restart_ts);
	stored = ka_sql_int(L.store, sql);
	cr_log_info("t03: %lld shield events from the outage in the store", stored);
	cr_expect(stored >= within && stored <= overlapping,
		  "%lld shield events stored from the outage; %lld triggers ran wholly inside "
		  "it, %lld overlapped it", stored, within, overlapping);
	/* The recording guard saw the kill -9 (this host has no BPF LSM to
	 * refuse it) and that event, too, waited in the ring buffer. */
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE kind = 'tamper' AND "
		 "json_extract(detail, '$.op') = 3 AND json_extract(detail, '$.arg') = 9 AND "
		 "json_extract(detail, '$.id') = %d", killed);
	cr_expect_eq(ka_sql_int(L.store, sql), 1, "the kill -9 of agent %d is not stored as "
		     "a tamper event", killed);
	munmap(a, sizeof(*a) * LOOP_N);
}

static const char *mode_of(const char *name)
{
	static char mode[16];
	json_object *s = shield_state(name);

	snprintf(mode, sizeof(mode), "%s", s ? ka_str(s, "mode") : "(not loaded)");
	json_object_put(s);
	return mode;
}

static bool loaded(const char *name)
{
	json_object *s = shield_state(name);

	json_object_put(s);
	return s != NULL;
}

Test(lifecycle, t04_sighup_adds_changes_and_removes)
{
	char before[4096], after[4096], path[512], sha0[80], sha1[80];
	json_object *s;

	start();
	cr_assert(loaded("fixture-sockopt"));
	cr_assert(!loaded("cve-2026-43500"));

	/* add */
	add_shield("cve-2026-43500", NULL);
	hup();
	cr_expect(loaded("cve-2026-43500"), "added shield not loaded on SIGHUP");

	/* mode change through the config, object unchanged: no new links */
	link_ids(L.root, before, sizeof(before));
	write_conf("shield.fixture-sockopt.mode = audit\n");
	hup();
	cr_expect_str_eq(mode_of("fixture-sockopt"), "audit");
	link_ids(L.root, after, sizeof(after));
	cr_expect_str_eq(before, after, "a mode change reloaded links: %s -> %s", before, after);
	/* Audit: counted as audited, not refused (whether the call then gets
	 * through also depends on other engineers' shields on this kernel). */
	long long r0 = refused("fixture-sockopt"), a0 = audited("fixture-sockopt");

	trigger();
	cr_expect_eq(audited("fixture-sockopt") - a0, 1, "audit mode did not count an audit");
	cr_expect_eq(refused("fixture-sockopt") - r0, 0, "audit mode refused");

	/* changed object (same shield, other bytes): replaced new-before-old */
	write_conf(NULL);
	s = shield_state("fixture-sockopt");
	snprintf(sha0, sizeof(sha0), "%s", ka_str(s, "sha256"));
	json_object_put(s);
	snprintf(path, sizeof(path), "%s/fixture-sockopt.bpf.o", L.shields);
	cr_assert_eq(ks_runf(NULL, NULL, "printf 'kshield-test-change' >> %s", path), 0);
	hup();
	s = shield_state("fixture-sockopt");
	snprintf(sha1, sizeof(sha1), "%s", ka_str(s, "sha256"));
	json_object_put(s);
	cr_expect_str_neq(sha0, sha1, "the changed object was not loaded");
	cr_expect_str_eq(mode_of("fixture-sockopt"), "enforce");
	cr_expect_neq(trigger(), 0, "replaced shield does not refuse");
	char *t = ks_read_file(L.err);

	cr_expect(strstr(t, "fixture-sockopt: replaced"), "agent log:\n%s", t);
	free(t);

	/* removed object: unloaded; a shield loaded by hand is left alone */
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield load %s/cve-2024-1086.bpf.o", ks_bin(),
			     ks_shields_dir()), 0);
	snprintf(path, sizeof(path), "%s/cve-2026-43500.bpf.o", L.shields);
	unlink(path);
	hup();
	cr_expect(!loaded("cve-2026-43500"), "removed shield still loaded");
	cr_expect(loaded("cve-2024-1086"), "a hand-loaded shield was unloaded by SIGHUP");
	cr_expect(loaded("fixture-sockopt"));
}

Test(lifecycle, t05_broken_object_on_sighup_keeps_previous_enforcing)
{
	char before[4096], after[4096], path[512];
	const char *fx = getenv("KSHIELD_FIXTURES");
	char *t;

	cr_assert(fx && *fx, "KSHIELD_FIXTURES is not set (run through make test-host)");
	start();
	cr_assert_neq(trigger(), 0);
	link_ids(L.root, before, sizeof(before));

	/* Same shield name, a program the verifier rejects. */
	snprintf(path, sizeof(path), "%s/fixture-sockopt.bpf.o", L.shields);
	cr_assert_eq(ks_runf(NULL, NULL, "cp %s/lifecycle-reject.bpf.o %s", fx, path), 0);
	hup();
	t = ks_read_file(L.err);
	cr_expect(strstr(t, "shield fixture-sockopt: no variant of fixture-sockopt loads"),
		  "failure not reported; agent log:\n%s", t);
	free(t);
	link_ids(L.root, after, sizeof(after));
	cr_expect_str_eq(before, after, "the failed load changed links: %s -> %s", before, after);
	cr_expect_neq(trigger(), 0, "previous version no longer enforcing");

	/* Not even an ELF: same outcome. */
	cr_assert_eq(ks_runf(NULL, NULL, "echo garbage > %s", path), 0);
	hup();
	link_ids(L.root, after, sizeof(after));
	cr_expect_str_eq(before, after);
	cr_expect(loaded("fixture-sockopt"), "a broken object unloaded its shield");
	cr_expect_neq(trigger(), 0);
}

Test(lifecycle, t06_removed_pins_are_repaired_and_recorded)
{
	char path[512], sql[256];
	long long n;

	start();
	snprintf(path, sizeof(path), "%s/shields/fixture-sockopt", L.root);
	cr_assert_eq(ks_runf(NULL, NULL, "rm -rf %s", path), 0);
	for (double t0 = ka_now(); !loaded("fixture-sockopt") && ka_now() - t0 < 10; usleep(100000))
		;
	cr_expect(loaded("fixture-sockopt"), "removed shield not reloaded within 10 s");
	cr_expect_neq(trigger(), 0, "repaired shield does not refuse");

	/* The whole tree: the agent re-pins the ring buffer it reads and
	 * reloads the monitor, the guard and the shield. */
	cr_assert_eq(ks_runf(NULL, NULL, "rm -rf %s", L.root), 0);
	for (double t0 = ka_now(); !loaded("fixture-sockopt") && ka_now() - t0 < 10; usleep(100000))
		;
	cr_expect(loaded("fixture-sockopt"), "shield not reloaded after rm -rf of the root");
	snprintf(path, sizeof(path), "%s/maps/ks_events", L.root);
	for (double t0 = ka_now(); access(path, F_OK) && ka_now() - t0 < 5; usleep(100000))
		;
	cr_expect_eq(access(path, F_OK), 0, "ring buffer not pinned again");
	cr_expect_neq(trigger(), 0);
	stop(SIGTERM);
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE kind = 'tamper' AND "
		 "json_extract(detail, '$.op') = 7");
	n = ka_sql_int(L.store, sql);
	cr_expect_geq(n, 4, "%lld repairs stored (shield, ring buffer, monitor, guard, shield)", n);
	/* and who removed them: rm, recorded by the guard's tracepoints */
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE kind = 'tamper' AND "
		 "comm = 'rm' AND json_extract(detail, '$.op') = 1");
	cr_expect_gt(ka_sql_int(L.store, sql), 0, "rm's unlinks not recorded");
}

static int check(const char *conf_text, char **out, char **err)
{
	FILE *f = fopen(L.conf, "w");

	fputs(conf_text, f);
	fclose(f);
	return ks_runf(out, err, "%s -j agent --check --config %s", ks_bin(), L.conf);
}

Test(lifecycle, t07_check_validates_without_loading)
{
	char *out, *err, text[1024], path[512];
	json_object *o;
	int rc;

	snprintf(text, sizeof(text), "shields_dir = %s\nbpffs = %s\n", L.shields, L.root);
	rc = check(text, &out, &err);
	cr_expect_eq(rc, 0, "stderr: %s", err);
	o = ks_json_parse(out);
	cr_expect_eq(ka_int(o, "failed"), 0);
	cr_expect_str_eq(ka_str(json_object_array_get_idx(ks_json_get(o, "shields"), 0), "action"),
			 "ok");
	json_object_put(o);
	free(out);
	free(err);
	snprintf(path, sizeof(path), "%s/shields", L.root);
	cr_expect_neq(access(path, F_OK), 0, "--check created pins under %s", L.root);

	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "store = /tmp/x\nno equals sign here\n", ":2: expected 'key = value'" },
		{ "colour = blue\n", ":1: unknown key 'colour'" },
		{ "\n\ndefault_mode = loud\n", ":3: default_mode: invalid value 'loud'" },
		{ "shield.fixture-sockopt.mode = off\n", ":1: shield.fixture-sockopt.mode: unknown mode" },
		{ "shield.x.colour = red\n", ":1: unknown key 'shield.x.colour'" },
		{ "store = relative/path\n", ":1: store: invalid value 'relative/path'" },
		{ "retention = 3 weeks\n", ":1: retention: invalid value" },
		{ "guard = maybe\n", ":1: guard: invalid value 'maybe' (want on or off)" },
		{ "store =\n", ":1: store: missing value" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = check(bad[i].text, &out, &err);
		cr_expect_eq(rc, 1, "case %zu: exit %d", i, rc);
		cr_expect(strstr(err, bad[i].want), "case %zu: want '%s' in: %s", i, bad[i].want, err);
		cr_expect(!strchr(err, '\n') || strchr(err, '\n') == err + strlen(err) - 1,
			  "case %zu: not one line: %s", i, err);
		free(out);
		free(err);
	}

	/* A broken object in the directory fails the check and names it. */
	snprintf(path, sizeof(path), "%s/zz-broken.bpf.o", L.shields);
	cr_assert_eq(ks_runf(NULL, NULL, "echo garbage > %s", path), 0);
	snprintf(text, sizeof(text), "shields_dir = %s\n", L.shields);
	rc = check(text, &out, &err);
	cr_expect_eq(rc, 1);
	o = ks_json_parse(out);
	cr_expect_eq(ka_int(o, "failed"), 1, "output: %s", out);
	cr_expect(strstr(out, "zz-broken.bpf.o is not an ELF file"), "output: %s", out);
	json_object_put(o);
	free(out);
	free(err);
}

Test(lifecycle, t08_status_reports_agent_shields_store_guard)
{
	char cmd[512];
	json_object *o;
	int rc;

	start();
	snprintf(cmd, sizeof(cmd), "%s -j status --config %s", ks_bin(), L.conf);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert_eq(rc, 0);
	cr_assert(o);
	cr_expect_eq(json_object_get_boolean(ks_json_get(o, "agent.running")), true);
	cr_expect_eq(ka_int(o, "agent.pid"), L.agent);
	cr_expect_str_eq(ka_str(json_object_array_get_idx(ks_json_get(o, "shields"), 0), "name"),
			 "fixture-sockopt");
	cr_expect_gt(ka_int(o, "monitor.links"), 0);
	cr_expect_eq(json_object_get_boolean(ks_json_get(o, "ringbuf.pinned")), true);
	cr_expect_str_eq(ka_str(o, "store.path"), L.store);
	cr_expect_gt(ka_int(o, "store.bytes"), 0);
	/* with BPF LSM the guard refuses ("on"); without (this host) it
	 * records only and says so */
	cr_expect_str_eq(ka_str(o, "guard.state"),
			 json_object_get_boolean(ks_json_get(o, "guard.lsm")) ? "on" : "unavailable");
	json_object_put(o);
	stop(SIGKILL);
	o = ks_run_json(cmd, &rc, NULL);
	cr_expect_eq(json_object_get_boolean(ks_json_get(o, "agent.running")), false,
		     "agent reported running after kill -9");
	cr_expect_str_eq(ka_str(json_object_array_get_idx(ks_json_get(o, "shields"), 0), "mode"),
			 "enforce");
	json_object_put(o);
}
