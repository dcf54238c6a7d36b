// SPDX-License-Identifier: MIT
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
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <kshield/event.h>
#include "array.h"
#include "agent_harness.h"

struct lc {
	char root[128], dir[128], conf[256], shields[256], store[256], err[256];
	pid_t agent;
	bool signing;		/* keys made: objects are signed as they are added */
};

static struct lc L;

static void write_conf(const char *extra)
{
	FILE *f = fopen(L.conf, "w");

	cr_assert(f, "can't write %s", L.conf);
	fprintf(f, "# test_lifecycle\nstore = %s\nshields_dir = %s\nbpffs = %s\n"
		"guard = on\ncheck_interval = 1s\nweaken_token = %s/weaken.token\n%s%s%s%s",
		L.store, L.shields, L.root, L.dir, L.signing ? "keys_dir = " : "",
		L.signing ? L.dir : "", L.signing ? "/keys\n" : "", extra ? extra : "");
	fclose(f);
}

static void sign_shield(const char *as)
{
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield sign %s/%s.bpf.o --key %s/k.key >/dev/null",
			     ks_bin(), L.shields, as, L.dir), 0, "signing %s", as);
}

/* Copy shield @name (the fixture-sockopt fixture: it refuses on this host)
 * into the shields directory, as @as; signed once keys are in use. */
static void add_shield(const char *name, const char *as)
{
	if (!strcmp(name, KS_SOCKOPT_SHIELD))
		cr_assert_eq(ks_runf(NULL, NULL, "cp %s/" KS_SOCKOPT_OBJ " %s/%s.bpf.o",
				     ks_fixtures_dir(), L.shields, as ? as : name), 0,
			     "copying shield %s", name);
	else
		cr_assert_eq(ks_runf(NULL, NULL, "cp %s/%s.bpf.o %s/%s.bpf.o", ks_shields_dir(),
				     name, L.shields, as ? as : name), 0, "copying shield %s", name);
	if (L.signing)
		sign_shield(as ? as : name);
}

/* Shield keys: the public half in <dir>/keys (keys_dir from now on), the
 * secret at <dir>/k.key; objects already in the directory get signed. */
static void use_keys(void)
{
	struct dirent *de;
	DIR *d;

	cr_assert_eq(ks_runf(NULL, NULL, "%s shield keygen %s/k >/dev/null && mkdir -p %s/keys && "
			     "cp %s/k.pub %s/keys/", ks_bin(), L.dir, L.dir, L.dir, L.dir), 0, "keygen");
	L.signing = true;
	d = opendir(L.shields);
	while (d && (de = readdir(d))) {
		char n[256];
		size_t len = strlen(de->d_name);

		if (len > 6 && !strcmp(de->d_name + len - 6, ".bpf.o")) {
			snprintf(n, sizeof(n), "%.*s", (int)(len - 6), de->d_name);
			sign_shield(n);
		}
	}
	if (d)
		closedir(d);
}

/* A weakening token for this host allowing @actions (space separated),
 * written where the config's weaken_token points. */
static void token(const char *actions, const char *more)
{
	cr_assert_eq(ks_runf(NULL, NULL, "%s guard token --key %s/k.key --out %s/weaken.token %s %s",
			     ks_bin(), L.dir, L.dir, more ? more : "", actions), 0, "token %s", actions);
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
	L.signing = false;
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

/* The loaded object's sha256 of shield @name into @out ("" when not loaded). */
static void sha_of(const char *name, char *out, size_t n)
{
	json_object *s = shield_state(name);

	snprintf(out, n, "%s", s ? ka_str(s, "sha256") : "");
	json_object_put(s);
}

/* Other bytes for shield @name's object (the same shield), signed again. */
static void change_object(const char *name)
{
	cr_assert_eq(ks_runf(NULL, NULL, "printf 'kshield-test-change' >> %s/%s.bpf.o", L.shields,
			     name), 0);
	sign_shield(name);
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

	/* The guard is on: weakening needs a signed token (t11). */
	use_keys();
	write_conf(NULL);
	token("audit:fixture-sockopt unload:cve-2026-43500", NULL);
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
	sha_of("fixture-sockopt", sha0, sizeof(sha0));
	change_object("fixture-sockopt");
	hup();
	sha_of("fixture-sockopt", sha1, sizeof(sha1));
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
	/* The shield and the ring buffer are back; the monitor's and the
	 * guard's repairs may come a check later on a loaded machine (two
	 * were stored once when the agent was stopped right here). */
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE kind = 'tamper' AND "
		 "json_extract(detail, '$.op') = 7");
	for (double t0 = ka_now(); ka_sql_int(L.store, sql) < 4 && ka_now() - t0 < 15; usleep(200000))
		;
	stop(SIGTERM);
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
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
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

/* Keys in <dir>/keys (the public half only), the secret at <dir>/k.key. */
static void make_keys(char *keys, size_t len)
{
	snprintf(keys, len, "%s/keys", L.dir);
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield keygen %s/k >/dev/null && mkdir -p %s && "
			     "cp %s/k.pub %s/", ks_bin(), L.dir, keys, L.dir, keys), 0, "keygen");
}

/* Issue 15 item 2: with keys_dir set, a shields.d object loads only when
 * FILE.sig verifies with one of its keys; an unsigned or changed object is
 * refused, and what was enforcing keeps enforcing. */
Test(lifecycle, t09_shields_d_objects_are_verified_when_keys_are_set)
{
	char keys[300], extra[400], path[512], *t;

	make_keys(keys, sizeof(keys));
	snprintf(extra, sizeof(extra), "keys_dir = %s\n", keys);
	write_conf(extra);
	snprintf(path, sizeof(path), "%s/fixture-sockopt.bpf.o", L.shields);
	start();
	t = ks_read_file(L.err);
	cr_expect(!loaded("fixture-sockopt"), "an unsigned object was loaded; agent log:\n%s", t);
	cr_expect(strstr(t, "unsigned") || strstr(t, "not signed") || strstr(t, "signature"),
		  "refusal not reported; agent log:\n%s", t);
	free(t);

	cr_assert_eq(ks_runf(NULL, NULL, "%s shield sign %s --key %s/k.key >/dev/null", ks_bin(),
			     path, L.dir), 0, "signing");
	hup();
	cr_expect(loaded("fixture-sockopt"), "the signed object was not loaded");
	cr_expect_neq(trigger(), 0, "signed shield does not refuse");

	/* Changed after signing: refused, the signed version stays. */
	cr_assert_eq(ks_runf(NULL, NULL, "printf 'kshield-test-change' >> %s", path), 0);
	hup();
	t = ks_read_file(L.err);
	cr_expect(strstr(t, "bad-signature") || strstr(t, "does not match") ||
		  strstr(t, "signature"), "agent log:\n%s", t);
	free(t);
	cr_expect(loaded("fixture-sockopt"), "a changed object unloaded the signed one");
	cr_expect_neq(trigger(), 0, "the signed version stopped enforcing");
}

struct swapper {
	char path[512], with[512];
	int swapped;
};

/* Once the loader has read @path and closed it, put another object in its
 * place: what a local attacker does between the check and the load. */
static void *swap_after_read(void *arg)
{
	struct swapper *s = arg;
	char buf[4096];
	int fd = inotify_init1(IN_CLOEXEC);

	if (fd < 0 || inotify_add_watch(fd, s->path, IN_CLOSE_NOWRITE) < 0)
		return NULL;
	if (read(fd, buf, sizeof(buf)) > 0 && !rename(s->with, s->path))
		s->swapped = 1;
	close(fd);
	return NULL;
}

/* Issue 15 item 3: the loader hashes (and verifies) the object, then used
 * to open it again by path for each variant. Swapping the file right after
 * the first read must not change what gets loaded. */
Test(lifecycle, t10_the_loaded_bytes_are_the_hashed_bytes)
{
	const char *fx = getenv("KSHIELD_FIXTURES");
	struct swapper s = { .swapped = 0 };
	char *out = NULL, *err = NULL, sha[80];
	pthread_t th;
	json_object *st;
	int rc;

	cr_assert(fx && *fx, "KSHIELD_FIXTURES is not set (run through make test-host)");
	snprintf(s.path, sizeof(s.path), "%s/fixture-sockopt.bpf.o", L.shields);
	snprintf(s.with, sizeof(s.with), "%s/swap.o", L.dir);
	cr_assert_eq(ks_runf(&out, NULL, "cp %s/lifecycle-reject.bpf.o %s && "
			     "sha256sum %s | cut -c1-64", fx, s.with, s.path), 0);
	snprintf(sha, sizeof(sha), "%.64s", out);
	free(out);
	cr_assert_eq(pthread_create(&th, NULL, swap_after_read, &s), 0);
	usleep(100000);	/* the watch is in place */
	rc = ks_runf(NULL, &err, "%s shield load %s", ks_bin(), s.path);
	pthread_join(th, NULL);
	cr_assert(s.swapped, "the object was not swapped (no read seen)");
	cr_expect_eq(rc, 0, "the load used the swapped-in bytes: %s", err);
	free(err);
	st = shield_state("fixture-sockopt");
	cr_expect(st && !strcmp(ka_str(st, "sha256"), sha), "loaded sha %s, hashed %s",
		  st ? ka_str(st, "sha256") : "(none)", sha);
	json_object_put(st);
	cr_expect_neq(trigger(), 0, "the shield does not refuse");
}

static bool guard_enabled(void)
{
	char cmd[300];
	json_object *o;
	bool on;

	snprintf(cmd, sizeof(cmd), "%s -j guard status", ks_bin());
	o = ks_run_json(cmd, NULL, NULL);
	on = o && json_object_get_boolean(ks_json_get(o, "enabled"));
	json_object_put(o);
	return on;
}

/* Issue 15 item 6: root edits the config (shield to audit, object removed,
 * guard = off) and sends SIGHUP, or restarts the agent. While the guard is
 * on, none of it takes effect without a token signed by a shield key; each
 * refusal is logged and stored as a tamper event. A token allows exactly
 * what it names, on its host, until it expires. */
Test(lifecycle, t11_weakening_needs_a_signed_token_while_the_guard_is_on)
{
	char path[512], sql[300], *t;

	use_keys();
	write_conf(NULL);
	start();
	cr_assert(guard_enabled(), "the guard is not on");
	cr_assert_str_eq(mode_of("fixture-sockopt"), "enforce");

	/* edited config + SIGHUP, no token */
	write_conf("shield.fixture-sockopt.mode = audit\nguard = off\n");
	hup();
	cr_expect_str_eq(mode_of("fixture-sockopt"), "enforce", "switched to audit without a token");
	cr_expect_neq(trigger(), 0, "the shield stopped refusing");
	cr_expect(guard_enabled(), "guard = off took effect without a token");
	snprintf(path, sizeof(path), "%s/fixture-sockopt.bpf.o", L.shields);
	cr_assert_eq(unlink(path), 0);
	hup();
	cr_expect(loaded("fixture-sockopt"), "unloaded without a token");
	t = ks_read_file(L.err);
	cr_expect(strstr(t, "weakening refused"), "agent log:\n%s", t);
	cr_expect(strstr(t, "guard = off not applied"), "agent log:\n%s", t);
	free(t);

	/* a restart reads the same config: still refused */
	stop(SIGTERM);
	start();
	cr_expect(loaded("fixture-sockopt"), "a restart unloaded it without a token");
	cr_expect_str_eq(mode_of("fixture-sockopt"), "enforce");

	/* tokens that do not fit: another host, expired, altered */
	token("unload:fixture-sockopt", "--host some-other-host");
	hup();
	cr_expect(loaded("fixture-sockopt"), "a token for another host was accepted");
	token("unload:fixture-sockopt", "--expires 0s");
	hup();
	cr_expect(loaded("fixture-sockopt"), "an expired token was accepted");
	token("audit:fixture-sockopt", NULL);
	snprintf(path, sizeof(path), "%s/weaken.token", L.dir);
	cr_assert_eq(ks_runf(NULL, NULL, "sed -i 's/allow=audit:/allow=unload:/' %s", path), 0);
	hup();
	cr_expect(loaded("fixture-sockopt"), "an altered token was accepted");
	t = ks_read_file(L.err);
	cr_expect(strstr(t, "bad signature"), "agent log:\n%s", t);
	free(t);

	/* a real one: exactly what it names */
	token("unload:fixture-sockopt guard-off", NULL);
	hup();
	cr_expect(!loaded("fixture-sockopt"), "a valid token did not allow the unload");
	cr_expect(!guard_enabled(), "a valid token did not turn the guard off");

	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE kind = 'tamper' AND "
		 "json_extract(detail, '$.op') = %d", KS_TAMPER_CONFIG);
	for (double t0 = ka_now(); ka_now() - t0 < 5 && ka_sql_int(L.store, sql) < 3; usleep(200000))
		;
	cr_expect_geq(ka_sql_int(L.store, sql), 3, "refusals not stored as tamper events");
}

/* Issue 18: gate = on. A shield enforces only where the matrix proved the
 * variant that loaded here: cve-2024-1086 with the signed summary of a real
 * matrix run of this kernel (matrix/run.sh, the host row) enforces; the
 * fixture, which has no summary, loads in audit ("unproven kernel", and so
 * says the metrics label) until the config promotes it. */
Test(lifecycle, t12_gated_enforces_only_where_the_matrix_proved_it, .timeout = 240)
{
	char build[512], *slash, *t;
	long long a0;

	snprintf(build, sizeof(build), "%s", ks_bin());
	slash = strrchr(build, '/');
	cr_assert(slash);
	*slash = '\0';
	cr_assert_eq(ks_runf(NULL, NULL, "BUILD=%s matrix/run.sh --only '^host$' --jobs 1 --out %s/m "
			     ">%s/m.log 2>&1; test -s %s/m/results.json", build, L.dir, L.dir, L.dir),
		     0, "the matrix host row wrote no results.json");
	use_keys();
	add_shield("cve-2024-1086", NULL);
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield proven %s/m/results.json --out %s --key %s/k.key "
			     "--shield cve-2024-1086 >/dev/null", ks_bin(), L.dir, L.shields, L.dir),
		     0, "shield proven");
	{
		char extra[512];

		snprintf(extra, sizeof(extra), "gated = on\nmetrics_textfile = %s/metrics.prom\n", L.dir);
		write_conf(extra);
	}
	start();
	cr_expect_str_eq(mode_of("cve-2024-1086"), "enforce", "proven here, yet not enforcing");
	cr_expect_str_eq(mode_of("fixture-sockopt"), "audit", "no summary, yet enforcing");
	t = ks_read_file(L.err);
	cr_expect(t && strstr(t, "shield fixture-sockopt: loaded (cgroup, audit): unproven kernel"),
		  "agent log:\n%s", t);
	cr_expect(t && strstr(t, "shield cve-2024-1086: loaded (tp, enforce, proven here)"),
		  "agent log:\n%s", t);
	free(t);
	a0 = audited("fixture-sockopt");
	trigger();
	cr_expect_eq(audited("fixture-sockopt") - a0, 1, "the unproven shield did not audit");
	for (double t0 = ka_now(); ka_now() - t0 < 10; usleep(200000)) {
		char p[300];

		snprintf(p, sizeof(p), "%s/metrics.prom", L.dir);
		t = ks_read_file(p);
		if (t && strstr(t, "kshield_shield_info{shield=\"fixture-sockopt\",mode=\"audit\","
				   "variant=\"cgroup\",gate=\"unproven\"} 1"))
			break;
		free(t);
		t = NULL;
	}
	cr_expect(t, "no gate=\"unproven\" label in the metrics textfile");
	free(t);

	/* The operator promotes it: enforces (a strengthening: no token). */
	{
		char extra[512];

		snprintf(extra, sizeof(extra), "gated = on\nmetrics_textfile = %s/metrics.prom\n"
			 "shield.fixture-sockopt.promote = on\n", L.dir);
		write_conf(extra);
	}
	hup();
	cr_expect_str_eq(mode_of("fixture-sockopt"), "enforce", "promoted, yet not enforcing");
	cr_expect_neq(trigger(), 0, "the promoted shield let the trigger through");
	cr_expect_str_eq(mode_of("cve-2024-1086"), "enforce");

	/* An unproven replacement of the enforcing, proven object (other
	 * bytes: not the object the matrix tested) would audit: a weakening.
	 * The guard is on and no token is given, so the proven object stays,
	 * enforcing; with a token the new one loads, auditing. */
	{
		char sha0[80], sha1[80];

		sha_of("cve-2024-1086", sha0, sizeof(sha0));
		change_object("cve-2024-1086");
		hup();
		sha_of("cve-2024-1086", sha1, sizeof(sha1));
		cr_expect_str_eq(sha1, sha0,
				 "an unproven object replaced the enforcing one without a token");
		cr_expect_str_eq(mode_of("cve-2024-1086"), "enforce", "weakened without a token");
		t = ks_read_file(L.err);
		cr_expect(t && strstr(t, "audit:cve-2024-1086 refused: the guard is on"), "agent log:\n%s", t);
		free(t);
		token("audit:cve-2024-1086", NULL);
		hup();
		sha_of("cve-2024-1086", sha1, sizeof(sha1));
		cr_expect_str_neq(sha1[0] ? sha1 : sha0, sha0, "not replaced with a token");
		cr_expect_str_eq(mode_of("cve-2024-1086"), "audit", "unproven, yet enforcing");
	}
}
