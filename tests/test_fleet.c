// SPDX-License-Identifier: MIT
/* test_fleet.c - the fleet end to end on this host: a real 3-node NATS
 * JetStream cluster and a real PostgreSQL on loopback (tests/fleet/cluster.sh
 * starts them once per test run, the POST_ALL hook stops them), real agents
 * (`kshield fleet agent`, each with its own state dir and bpffs root), the
 * real shield enforcing through a cgroup program (the fixture-sockopt
 * fixture: it refuses with EPERM on this host).
 *
 * Each test names its hosts with its own prefix and deploys with
 * --hosts 'PREFIX-*', so hosts left registered by earlier tests are never
 * counted. Signing is covered without any server (fleet_sign.*).
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include "array.h"
#include "fleet_harness.h"

#define SHIELD KS_SOCKOPT_SHIELD
#define TRIGGER KS_SOCKOPT_TRIGGER
#define MAX_AGENTS 4

static char dir[256];		/* this test's scratch dir */
static char cdir[256];		/* the cluster's dir (shared by the run) */
static char urls[512], host_urls[512], conninfo[256];	/* admin and host credentials */
static char trust_opt[400];	/* how agents trust keys: --keys DIR or --root-keys DIR */
static char obj[512];
static pid_t agents[MAX_AGENTS];

static const char *harness(void)
{
	const char *h = getenv("KSHIELD_FLEET_HARNESS");

	return h && *h ? h : "tests/fleet/cluster.sh";
}

/* The cluster lives as long as the test runner: started by the first test
 * that needs it, stopped by the POST_ALL hook in the runner. */
static void cluster_dir(char *out, size_t n, pid_t runner)
{
	snprintf(out, n, "/tmp/ks-fleet-cluster-%d", (int)runner);
}

static void read_env(void)
{
	char path[300], *env, *p;

	snprintf(path, sizeof(path), "%s/env", cdir);
	env = ks_read_file(path);
	cr_assert(env, "no %s", path);
	p = strstr(env, "NATS_URLS=");
	cr_assert(p);
	sscanf(p, "NATS_URLS=%511s", urls);
	p = strstr(env, "HOST_URLS=");
	cr_assert(p);
	sscanf(p, "HOST_URLS=%511s", host_urls);
	p = strstr(env, "PG_CONNINFO=\"");
	cr_assert(p);
	sscanf(p, "PG_CONNINFO=\"%255[^\"]", conninfo);
	free(env);
}

static void rc_ok_buckets(void)
{
	int rc = ks_runf(NULL, NULL, "%s fleet status --nats %s >/dev/null", ks_bin(), urls);

	cr_assert_eq(rc, 0, "fleet status (creating the buckets) failed");
}

static void cluster_up(void)
{
	char path[300], *err = NULL;
	struct stat st;

	cluster_dir(cdir, sizeof(cdir), getppid());
	snprintf(path, sizeof(path), "%s/env", cdir);
	if (stat(path, &st)) {
		int rc = ks_runf(NULL, &err, "%s start %s", harness(), cdir);

		cr_assert_eq(rc, 0, "cluster start failed: %s", err);
		free(err);
	}
	read_env();
	/* The operator creates the buckets: agents' credentials can't. */
	rc_ok_buckets();
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	char d[256];
	struct stat st;

	(void)stats;
	cluster_dir(d, sizeof(d), getpid());
	if (!stat(d, &st))
		ks_runf(NULL, NULL, "%s stop %s; rm -rf %s", harness(), d, d);
}

static char key_env[300];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-fleet-test-%d", getpid());
	snprintf(obj, sizeof(obj), "%s/%s.bpf.o", dir, SHIELD);
	ks_sh_ok("rm -rf %s && mkdir -p %s/trust && cp %s/" KS_SOCKOPT_OBJ " %s", dir, dir,
	      ks_fixtures_dir(), obj);
	ks_sh_ok("%s shield keygen %s/signer >/dev/null && cp %s/signer.pub %s/trust/", ks_bin(), dir,
	      dir, dir);
	ks_sh_ok("%s shield sign %s --key %s/signer.key >/dev/null", ks_bin(), obj, dir);
	/* Desired records are signed with the same key (fleet deploy,
	 * promote, rollback read it from here unless --key says otherwise). */
	snprintf(key_env, sizeof(key_env), "%s/signer.key", dir);
	setenv("KSHIELD_FLEET_KEY", key_env, 1);
	snprintf(trust_opt, sizeof(trust_opt), "--keys %s/trust", dir);
	memset(agents, 0, sizeof(agents));
}

static void teardown(void)
{
	for (int i = 0; i < MAX_AGENTS; i++) {
		if (agents[i] <= 0)
			continue;
		kill(agents[i], SIGTERM);
		waitpid(agents[i], NULL, 0);
		ks_runf(NULL, NULL, "KSHIELD_BPFFS=/sys/fs/bpf/ks-fleet-%d-%d %s shield unload %s; "
			"KSHIELD_BPFFS=/sys/fs/bpf/ks-fleet-%d-%d %s shield unload cve-2024-1086; "
			"rm -rf /sys/fs/bpf/ks-fleet-%d-%d", getpid(), i, ks_bin(), SHIELD, getpid(), i,
			ks_bin(), getpid(), i);
	}
	ks_runf(NULL, NULL, "rm -rf %s", dir);
}

TestSuite(fleet, .init = setup, .fini = teardown, .timeout = 120);

/* The agents' binary: $KSHIELD_FLEET_AGENT, else the one under test (an
 * older agent there shows which of these tests the old code fails). */
static const char *agent_bin(void)
{
	const char *b = getenv("KSHIELD_FLEET_AGENT");

	return b && *b ? b : ks_bin();
}

/* Start agent @i as host "@prefix-@i" (own state dir and bpffs root). */
static void agent_start(int i, const char *prefix, const char *extra)
{
	char host[64], bpffs[128], state[300], log[300];
	pid_t pid;

	snprintf(host, sizeof(host), "%s-%d", prefix, i);
	snprintf(bpffs, sizeof(bpffs), "/sys/fs/bpf/ks-fleet-%d-%d", getpid(), i);
	snprintf(state, sizeof(state), "%s/state-%d", dir, i);
	snprintf(log, sizeof(log), "%s/agent-%d.log", dir, i);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[2048];

		snprintf(cmd, sizeof(cmd), "exec %s --bpffs %s fleet agent --nats %s %s "
			 "--host %s --state %s --resync 5 %s >>%s 2>&1", agent_bin(), bpffs, host_urls,
			 trust_opt, host, state, extra ? extra : "", log);
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	agents[i] = pid;
}

static json_object *fleet_wait(const char *status, int count, int timeout_s)
{
	char cmd[1024], *err = NULL;
	int rc;
	json_object *o;

	snprintf(cmd, sizeof(cmd), "%s -j fleet wait %s --status %s --count %d --timeout %d --nats %s",
		 ks_bin(), SHIELD, status, count, timeout_s, urls);
	o = ks_run_json(cmd, &rc, &err);
	cr_assert_eq(rc, 0, "%d hosts never reported %s: %s", count, status, err);
	free(err);
	return o;
}

static json_object *fleet_status(void)
{
	char cmd[1024];
	json_object *arr, *s;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j fleet status %s --nats %s", ks_bin(), SHIELD, urls);
	arr = ks_run_json(cmd, &rc, NULL);
	cr_assert(arr && rc == 0, "fleet status failed");
	s = json_object_get(json_object_array_get_idx(arr, 0));
	json_object_put(arr);
	return s;
}

static void deploy(const char *file, const char *prefix, const char *extra)
{
	ks_sh_ok("%s fleet deploy %s --hosts '%s-*' %s --nats %s", ks_bin(), file, prefix,
	      extra ? extra : "", urls);
}

/* Exit status of the exploit's trigger shape: 0 = it went through. */
static int trigger(void)
{
	return ks_run(TRIGGER " >/dev/null 2>&1", NULL, NULL);
}

static int trigger_errno_eperm(void)
{
	char *err = NULL;
	int rc = ks_run(TRIGGER, NULL, &err), eperm = rc != 0 && strstr(err, "not permitted");

	free(err);
	return eperm;
}

/* Whether the trigger goes through on this kernel before this test loads
 * anything. Engineers sharing a kernel may have the same shield loaded
 * under their own bpffs root; then "the trigger passes" cannot be checked
 * and the tests rely on what their own agents' pins and counters say (a
 * fresh CI machine always has it open, and checks both). */
static bool open_before;

static void baseline(void)
{
	open_before = trigger() == 0;
	if (!open_before)
		cr_log_warn("the trigger is refused before any deploy: another shield instance is "
			    "loaded on this kernel; 'trigger passes' checks rely on pins and counters");
}

static void expect_trigger_passes(const char *when)
{
	if (open_before)
		cr_expect_eq(trigger(), 0, "trigger refused %s", when);
}

/* Sum of one verdict counter over our agents' loaded instances. */
static long long our_hits(int n, const char *verdict)
{
	long long sum = 0;

	for (int i = 0; i < n; i++) {
		char cmd[512], path[64];
		json_object *arr;
		int rc;

		snprintf(cmd, sizeof(cmd), "%s --bpffs /sys/fs/bpf/ks-fleet-%d-%d -j shield list",
			 ks_bin(), getpid(), i);
		arr = ks_run_json(cmd, &rc, NULL);
		snprintf(path, sizeof(path), "verdicts.%s", verdict);
		for (size_t k = 0; arr && k < json_object_array_length(arr); k++) {
			json_object *e = json_object_array_get_idx(arr, k);

			if (!strcmp(json_object_get_string(ks_json_get(e, "name")), SHIELD))
				sum += json_object_get_int64(ks_json_get(e, path));
		}
		json_object_put(arr);
	}
	return sum;
}

/* Each agent's own view, through its own pins. */
static const char *loaded_mode(int i, char *buf, size_t n)
{
	char cmd[512];
	json_object *arr;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s --bpffs /sys/fs/bpf/ks-fleet-%d-%d -j shield list", ks_bin(),
		 getpid(), i);
	arr = ks_run_json(cmd, &rc, NULL);
	snprintf(buf, n, "none");
	for (size_t k = 0; arr && k < json_object_array_length(arr); k++) {
		json_object *e = json_object_array_get_idx(arr, k);

		if (!strcmp(json_object_get_string(ks_json_get(e, "name")), SHIELD))
			snprintf(buf, n, "%s", json_object_get_string(ks_json_get(e, "mode")));
	}
	json_object_put(arr);
	return buf;
}

Test(fleet, deploy_signed_enforces_then_rolls_back)
{
	char m[32];
	json_object *s;

	cluster_up();
	baseline();
	for (int i = 0; i < 3; i++)
		agent_start(i, "dep", NULL);
	deploy(obj, "dep", NULL);
	json_object_put(fleet_wait("enforcing", 3, 30));
	for (int i = 0; i < 3; i++)
		cr_expect_str_eq(loaded_mode(i, m, sizeof(m)), "enforce", "agent %d", i);
	cr_assert(trigger_errno_eperm(), "the trigger was not refused with EPERM");
	cr_expect_geq(our_hits(3, "refused"), 3, "each agent's instance refuses the trigger");
	/* Agents refresh hit counts every second. */
	sleep(2);
	s = fleet_status();
	cr_expect_eq(json_object_get_int(ks_json_get(s, "targeted")), 3);
	cr_expect_gt(json_object_get_int64(ks_json_get(s, "hits")), 0, "no hits reported");
	json_object_put(s);

	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("unloaded", 3, 30));
	for (int i = 0; i < 3; i++)
		cr_expect_str_eq(loaded_mode(i, m, sizeof(m)), "none", "agent %d still has it", i);
	expect_trigger_passes("after rollback");
}

/* deploy --pg previews the shield's impact on the targeted hosts from the
 * fleet's PostgreSQL, and refuses to go straight to enforce where it would
 * have hit (the fixture's pattern: runs of xtables-legacy-multi), unless
 * --audit-first, --audit or --force. */
Test(fleet, deploy_previews_impact_and_refuses_enforce_where_it_would_have_hit)
{
	char *out = NULL, *err = NULL;
	int rc;

	cluster_up();
	ks_sh_ok("%s collect --pg '%s' --drain --nats %s", ks_bin(), conninfo, urls);	/* the table */
	/* a run on 2020-01-01 (its own day partition, as the collector makes them) */
	ks_sh_ok("psql '%s' -qc \"CREATE TABLE IF NOT EXISTS ks_events_20200101 PARTITION OF ks_events "
	      "FOR VALUES FROM ('2020-01-01 00:00:00+00') TO ('2020-01-02 00:00:00+00')\"", conninfo);
	ks_sh_ok("psql '%s' -qc \"INSERT INTO ks_events(host, seq, ts, kind, data) VALUES ('imp-0', "
	      "999000001, '2020-01-01 12:00:00+00', 'exec', '{\\\"ts\\\": 1577880000000000000, "
	      "\\\"binary\\\": \\\"/usr/sbin/xtables-legacy-multi\\\", \\\"uid\\\": 0, "
	      "\\\"exec_id\\\": 1}')\"", conninfo);

	rc = ks_runf(&out, &err, "%s fleet deploy %s --hosts 'imp-*' --pg '%s' --since 2020-01-01T00:00:00Z --nats %s", ks_bin(), obj,
		     conninfo, urls);
	cr_expect_neq(rc, 0, "deployed straight to enforce over a host it would have hit");
	cr_expect(err && strstr(err, "impact: imp-0") && strstr(err, "not deploying fixture-sockopt "
		  "straight to enforce: it would have hit imp-0 1"), "stderr: %s", err);
	free(out);
	free(err);
	/* not targeted: nothing in its way */
	rc = ks_runf(&out, &err, "%s fleet deploy %s --hosts 'other-*' --pg '%s' --since 2020-01-01T00:00:00Z --nats %s", ks_bin(), obj,
		     conninfo, urls);
	cr_expect_eq(rc, 0, "stderr: %s", err);
	cr_expect(err && strstr(err, "would have hit 0 events on 0 of the targeted hosts"), "stderr: %s", err);
	free(out);
	free(err);
	rc = ks_runf(&out, &err, "%s fleet deploy %s --hosts 'imp-*' --audit-first 1h --pg '%s' --since 2020-01-01T00:00:00Z --nats %s",
		     ks_bin(), obj, conninfo, urls);
	cr_expect_eq(rc, 0, "--audit-first refused: %s", err);
	free(out);
	free(err);
	rc = ks_runf(&out, &err, "%s fleet deploy %s --hosts 'imp-*' --force --pg '%s' --since 2020-01-01T00:00:00Z --nats %s",
		     ks_bin(), obj, conninfo, urls);
	cr_expect_eq(rc, 0, "--force refused: %s", err);
	free(out);
	free(err);
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
}

/* The one status entry of host @host, from fleet status. */
static json_object *host_status(const char *host)
{
	json_object *s = fleet_status(), *ph, *r = NULL;

	cr_assert(json_object_object_get_ex(s, "per_host", &ph));
	for (size_t k = 0; k < json_object_array_length(ph); k++) {
		json_object *h = json_object_array_get_idx(ph, k);

		if (!strcmp(json_object_get_string(ks_json_get(h, "host")), host))
			r = json_object_get(h);
	}
	json_object_put(s);
	cr_assert(r, "no status from %s", host);
	return r;
}

static void expect_refused(const char *file, const char *why, const char *errpart)
{
	json_object *h;
	char m[32];

	deploy(file, "sig", NULL);
	json_object_put(fleet_wait("refused", 2, 30));
	h = host_status("sig-0");
	cr_expect_str_eq(json_object_get_string(ks_json_get(h, "status")), "refused");
	cr_expect(strstr(json_object_get_string(ks_json_get(h, "error")), errpart),
		  "%s: error '%s' lacks '%s'", why, json_object_get_string(ks_json_get(h, "error")),
		  errpart);
	json_object_put(h);
	/* The signed version loaded before keeps enforcing. */
	for (int i = 0; i < 2; i++)
		cr_expect_str_eq(loaded_mode(i, m, sizeof(m)), "enforce", "%s: agent %d", why, i);
	cr_expect(trigger_errno_eperm(), "%s: the old version stopped enforcing", why);
}

Test(fleet, refuses_tampered_unsigned_and_unknown_key)
{
	char f[512];

	cluster_up();
	for (int i = 0; i < 2; i++)
		agent_start(i, "sig", NULL);
	deploy(obj, "sig", NULL);
	json_object_put(fleet_wait("enforcing", 2, 30));

	/* Altered after signing: one byte in the middle, signature kept. */
	snprintf(f, sizeof(f), "%s/t.bpf.o", dir);
	ks_sh_ok("cp %s %s && cp %s.sig %s.sig && printf X | dd of=%s bs=1 seek=100000 conv=notrunc 2>/dev/null",
	      obj, f, obj, f, f);
	expect_refused(f, "tampered", "bad signature");

	/* Unsigned: a changed object with no signature at all. */
	snprintf(f, sizeof(f), "%s/u.bpf.o", dir);
	ks_sh_ok("cp %s %s && printf Y | dd of=%s bs=1 seek=100001 conv=notrunc 2>/dev/null", obj, f, f);
	expect_refused(f, "unsigned", "unsigned");

	/* Signed, but by a key the agents do not trust. */
	snprintf(f, sizeof(f), "%s/k.bpf.o", dir);
	ks_sh_ok("cp %s %s && printf Z | dd of=%s bs=1 seek=100002 conv=notrunc 2>/dev/null && "
	      "%s shield keygen %s/rogue >/dev/null && %s shield sign %s --key %s/rogue.key >/dev/null",
	      obj, f, f, ks_bin(), dir, ks_bin(), f, dir);
	expect_refused(f, "unknown key", "unknown key");

	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
}

Test(fleet, converges_with_one_nats_node_down)
{
	cluster_up();
	for (int i = 0; i < 3; i++)
		agent_start(i, "node", NULL);
	deploy(obj, "node", "--audit");
	json_object_put(fleet_wait("auditing", 3, 30));
	ks_sh_ok("%s nats-stop %s 1", harness(), cdir);
	/* Promote with node 1 gone: agents connected to it reconnect to the
	 * others and recreate their watchers. */
	ks_sh_ok("%s fleet promote %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("enforcing", 3, 40));
	cr_expect(trigger_errno_eperm(), "not enforcing after promote");
	ks_sh_ok("%s nats-start %s 1", harness(), cdir);
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("unloaded", 3, 40));
}

Test(fleet, offline_agent_converges_when_it_returns)
{
	char m[32];

	cluster_up();
	agent_start(0, "off", NULL);
	deploy(obj, "off", NULL);
	json_object_put(fleet_wait("enforcing", 1, 30));
	/* Agent 1 starts after the deploy: it converges on the current state. */
	agent_start(1, "off", NULL);
	json_object_put(fleet_wait("enforcing", 2, 30));
	cr_expect_str_eq(loaded_mode(1, m, sizeof(m)), "enforce");
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("unloaded", 2, 30));
}

Test(fleet, audit_first_holds_on_hits_and_promotes_when_quiet)
{
	json_object *s;

	cluster_up();
	baseline();
	for (int i = 0; i < 2; i++)
		agent_start(i, "aud", NULL);
	/* A quiet rollout promotes itself after the quiet period. No wait for
	 * "auditing" here: a 3 s audit can be over before the wait's first
	 * look; "by auto-promote" below shows the audit phase ran. */
	deploy(obj, "aud", "--audit-first 3s");
	json_object_put(fleet_wait("enforcing", 2, 30));
	s = fleet_status();
	cr_expect(strstr(json_object_get_string(ks_json_get(s, "by")), "auto-promote"),
		  "promoted by '%s'", json_object_get_string(ks_json_get(s, "by")));
	json_object_put(s);
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("unloaded", 2, 30));

	/* Would-be refusals during audit hold the promotion back. */
	deploy(obj, "aud", "--audit-first 4s");
	json_object_put(fleet_wait("auditing", 2, 30));
	if (open_before)
		cr_assert_eq(trigger(), 0, "audit mode refused the trigger");
	else
		trigger();
	cr_expect_eq(our_hits(2, "refused"), 0, "audit mode refused");
	cr_expect_geq(our_hits(2, "audited"), 2, "audit hits not counted");
	sleep(6);
	s = fleet_status();
	cr_expect_str_eq(json_object_get_string(ks_json_get(s, "mode")), "audit",
			 "promoted despite audit hits");
	cr_expect_eq(json_object_get_int(ks_json_get(s, "audit_hit_hosts")), 2,
		     "hosts with audit hits");
	json_object_put(s);
	ks_sh_ok("%s fleet promote %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("enforcing", 2, 30));
	cr_expect(trigger_errno_eperm(), "not enforcing after promote by hand");
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("unloaded", 2, 30));
}

/* ---- trust: what one compromised host (or a forged write) can't do ---- */

/* The shield's desired record as stored, into dir/@name. */
static void record_save(const char *name)
{
	ks_sh_ok("%s fleet record %s --nats %s > %s/%s", ks_bin(), SHIELD, urls, dir, name);
}

/* dir/@out = jq @filter applied to dir/@in. */
static void record_edit(const char *in, const char *filter, const char *out)
{
	ks_sh_ok("jq -c '%s' %s/%s > %s/%s", filter, dir, in, dir, out);
}

/* Store dir/@name as the shield's desired record with credentials @nats;
 * the exit status. */
static int publish(const char *name, const char *nats)
{
	return ks_runf(NULL, NULL, "%s fleet publish %s %s/%s --nats %s >/dev/null 2>&1", ks_bin(),
		       SHIELD, dir, name, nats);
}

/* Wait until host @host reports @status with @errpart in its error. */
static void wait_host(const char *host, const char *status, const char *errpart, int timeout_s)
{
	char cmd[1024], last[1024] = "no status";

	snprintf(cmd, sizeof(cmd), "%s -j fleet status %s --nats %s", ks_bin(), SHIELD, urls);
	for (int i = 0; i < timeout_s * 5; i++) {
		json_object *arr = ks_run_json(cmd, NULL, NULL), *ph;
		bool ok = false;

		if (arr && json_object_object_get_ex(json_object_array_get_idx(arr, 0), "per_host", &ph))
			for (size_t k = 0; k < json_object_array_length(ph); k++) {
				json_object *h = json_object_array_get_idx(ph, k);
				const char *st = json_object_get_string(ks_json_get(h, "status"));
				const char *er = json_object_get_string(ks_json_get(h, "error"));

				if (strcmp(json_object_get_string(ks_json_get(h, "host")), host))
					continue;
				snprintf(last, sizeof(last), "%s: %s", st, er);
				ok = !strcmp(st, status) && strstr(er, errpart);
			}
		json_object_put(arr);
		if (ok)
			return;
		usleep(200 * 1000);
	}
	cr_assert_fail("%s never reported %s with '%s' (last: %s)", host, status, errpart, last);
}

static void expect_mode(int n, const char *mode, const char *why)
{
	char m[32];

	for (int i = 0; i < n; i++)
		cr_expect_str_eq(loaded_mode(i, m, sizeof(m)), mode, "%s: agent %d", why, i);
}

/* A record altered after signing, an unsigned one and one signed by a key
 * the agents don't trust: each tries to unload the shield everywhere or
 * switch it to audit. None changes anything. */
Test(fleet, forged_desired_records_are_refused)
{
	cluster_up();
	for (int i = 0; i < 2; i++)
		agent_start(i, "frg", NULL);
	deploy(obj, "frg", NULL);
	json_object_put(fleet_wait("enforcing", 2, 30));
	record_save("good.json");

	record_edit("good.json", ".mode=\"absent\" | .signed=(.signed|fromjson|.mode=\"absent\"|tojson)",
		    "absent.json");
	cr_assert_eq(publish("absent.json", urls), 0);
	wait_host("frg-0", "refused", "bad signature", 15);
	wait_host("frg-1", "refused", "bad signature", 15);
	expect_mode(2, "enforce", "mode absent, signature kept");
	/* The operator's tools never sign a planted record again. */
	{
		char *err = NULL;
		int rc = ks_runf(NULL, &err, "%s fleet renew %s --nats %s", ks_bin(), SHIELD, urls);

		cr_expect_neq(rc, 0, "renew signed a forged record");
		cr_expect(err && strstr(err, "bad signature"), "renew said: %s", err);
		free(err);
	}

	record_edit("good.json", ".mode=\"audit\" | .signed=(.signed|fromjson|.mode=\"audit\"|tojson)",
		    "audit.json");
	cr_assert_eq(publish("audit.json", urls), 0);
	wait_host("frg-0", "refused", "bad signature", 15);
	sleep(1);
	expect_mode(2, "enforce", "mode audit, signature kept");

	record_edit("good.json", "del(.signed, .record_sig) | .mode=\"absent\"", "unsigned.json");
	cr_assert_eq(publish("unsigned.json", urls), 0);
	wait_host("frg-0", "refused", "unsigned", 15);
	expect_mode(2, "enforce", "unsigned record");

	/* A record of the attacker's own, signed by a key of their own. */
	ks_sh_ok("%s shield keygen %s/rogue >/dev/null", ks_bin(), dir);
	deploy(obj, "frg", ({ static char k[400]; snprintf(k, sizeof(k), "--audit --key %s/rogue.key", dir); k; }));
	wait_host("frg-1", "refused", "unknown key", 15);
	expect_mode(2, "enforce", "record signed by an untrusted key");
	cr_expect(trigger_errno_eperm(), "the shield stopped enforcing");

	/* The real key still works. */
	deploy(obj, "frg", "--audit");
	json_object_put(fleet_wait("auditing", 2, 30));
	expect_mode(2, "audit", "a signed audit deploy");
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
}

/* A record signed before, stored again (a rollback to an older version,
 * say the pre-fix object): refused, and still refused by an agent that
 * restarted since (it keeps the highest version it accepted). */
Test(fleet, replayed_older_record_is_refused_across_restart)
{
	cluster_up();
	for (int i = 0; i < 2; i++)
		agent_start(i, "rpl", NULL);
	deploy(obj, "rpl", "--audit");
	json_object_put(fleet_wait("auditing", 2, 30));
	record_save("v1.json");
	deploy(obj, "rpl", NULL);
	json_object_put(fleet_wait("enforcing", 2, 30));

	cr_assert_eq(publish("v1.json", urls), 0);
	wait_host("rpl-0", "refused", "older than version", 15);
	wait_host("rpl-1", "refused", "older than version", 15);
	expect_mode(2, "enforce", "older version replayed");

	/* Restarted, agent 0 reads the replayed record first thing. */
	kill(agents[0], SIGTERM);
	waitpid(agents[0], NULL, 0);
	agents[0] = 0;
	agent_start(0, "rpl", NULL);
	sleep(3);
	wait_host("rpl-0", "refused", "older than version", 15);
	expect_mode(1, "enforce", "older version replayed to a restarted agent");
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
}

/* A record past its expiry reaches a host that never saw it: refused;
 * renewed (signed again), it is taken. */
Test(fleet, expired_record_is_refused_until_renewed)
{
	cluster_up();
	deploy(obj, "exp", "--expires 1s");
	sleep(2);
	agent_start(0, "exp", NULL);
	wait_host("exp-0", "refused", "expired", 20);
	expect_mode(1, "none", "expired record");
	ks_sh_ok("%s fleet renew %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("enforcing", 1, 30));
	expect_mode(1, "enforce", "renewed record");
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("unloaded", 1, 30));
}

/* A host's own credentials: the server refuses any write of desired state
 * or objects, even with a signing key in hand. */
Test(fleet, host_credentials_cannot_write_desired_state)
{
	char *before = NULL, *after = NULL, path[400];

	cluster_up();
	agent_start(0, "hcw", NULL);
	deploy(obj, "hcw", NULL);
	json_object_put(fleet_wait("enforcing", 1, 30));
	record_save("good.json");
	record_edit("good.json", ".mode=\"absent\" | .signed=(.signed|fromjson|.mode=\"absent\"|tojson)",
		    "absent.json");
	{
		char *err = NULL;
		int rc = ks_runf(NULL, &err, "%s fleet publish %s %s/absent.json --nats %s", ks_bin(),
				 SHIELD, dir, host_urls);

		cr_expect_neq(rc, 0, "a host credential wrote desired state");
		cr_expect(err && strstr(err, "refused this user"), "publish said: %s", err);
		free(err);
	}
	cr_expect_neq(ks_runf(NULL, NULL, "%s fleet rollback %s --nats %s >/dev/null 2>&1", ks_bin(),
			      SHIELD, host_urls), 0, "a host credential rolled the shield back");
	cr_expect_neq(ks_runf(NULL, NULL, "%s fleet deploy %s --hosts 'hcw-*' --audit --nats %s "
			      ">/dev/null 2>&1", ks_bin(), obj, host_urls), 0,
		      "a host credential deployed");
	record_save("after.json");
	snprintf(path, sizeof(path), "%s/good.json", dir);
	before = ks_read_file(path);
	snprintf(path, sizeof(path), "%s/after.json", dir);
	after = ks_read_file(path);
	cr_expect_str_eq(after, before, "the desired record changed");
	free(before);
	free(after);
	sleep(1);
	expect_mode(1, "enforce", "host credential writes");
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	json_object_put(fleet_wait("unloaded", 1, 30));
}

/* Agents that trust a root key take their signing keys from the list it
 * signs: a key revoked there, or past its expiry, signs nothing they take. */
Test(fleet, revoked_and_expired_keys_are_refused)
{
	char old_id[32] = "", *out = NULL;

	cluster_up();
	ks_sh_ok("mkdir -p %s/root && %s shield keygen %s/rootkey >/dev/null && cp %s/rootkey.pub %s/root/",
	      dir, ks_bin(), dir, dir, dir);
	cr_assert_eq(ks_runf(&out, NULL, "%s -j shield keygen %s/old | jq -r .keyid", ks_bin(), dir), 0);
	cr_assert(out && strlen(out) >= 16, "no key id for old.key");
	snprintf(old_id, sizeof(old_id), "%.16s", out);
	free(out);
	snprintf(trust_opt, sizeof(trust_opt), "--root-keys %s/root", dir);
	ks_sh_ok("%s fleet keys set --root %s/rootkey.key --add %s/signer.pub --add %s/old.pub --nats %s "
	      ">/dev/null", ks_bin(), dir, dir, dir, urls);
	for (int i = 0; i < 2; i++)
		agent_start(i, "key", NULL);
	{
		static char k[400];

		snprintf(k, sizeof(k), "--key %s/old.key", dir);
		deploy(obj, "key", k);
		json_object_put(fleet_wait("enforcing", 2, 30));

		/* Rotated: old revoked. */
		ks_sh_ok("%s fleet keys set --root %s/rootkey.key --add %s/signer.pub --revoke %s --nats %s "
		      ">/dev/null", ks_bin(), dir, dir, old_id, urls);
		sleep(1);
		snprintf(k, sizeof(k), "--audit --key %s/old.key", dir);
		deploy(obj, "key", k);
		wait_host("key-0", "refused", "unknown key", 15);
		wait_host("key-1", "refused", "unknown key", 15);
		expect_mode(2, "enforce", "record signed by a revoked key");
	}
	/* A key list signed by anyone but a root key is not taken. */
	ks_sh_ok("%s fleet keys set --root %s/old.key --add %s/old.pub --nats %s >/dev/null", ks_bin(), dir,
	      dir, urls);
	sleep(1);
	{
		static char k[400];

		snprintf(k, sizeof(k), "--audit --key %s/old.key", dir);
		deploy(obj, "key", k);
		wait_host("key-0", "refused", "unknown key", 15);
		expect_mode(2, "enforce", "key list signed by a non-root key");
	}
	/* The current key, listed for 4 s: taken while valid, then not. */
	ks_sh_ok("%s fleet keys set --root %s/rootkey.key --add %s/signer.pub:4s --nats %s >/dev/null",
	      ks_bin(), dir, dir, urls);
	sleep(1);
	deploy(obj, "key", NULL);
	json_object_put(fleet_wait("enforcing", 2, 30));
	sleep(5);
	deploy(obj, "key", "--audit");
	wait_host("key-0", "refused", "unknown key", 15);
	expect_mode(2, "enforce", "record signed by an expired key");
	/* Listed again: the operator's key works. */
	ks_sh_ok("%s fleet keys set --root %s/rootkey.key --add %s/signer.pub --nats %s >/dev/null",
	      ks_bin(), dir, dir, urls);
	sleep(1);
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
	/* Leave no key list behind for later tests' --keys agents (they ignore it anyway). */
}

/* ---- events in ---- */

/* A store with the agent's events schema (store.c), @n rows appended. */
static void store_append(const char *db, int from, int n)
{
	ks_sh_ok("sqlite3 %s \"PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS events("
	      "id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, kind TEXT NOT NULL, pid INTEGER, "
	      "comm TEXT, binary TEXT, detail TEXT); "
	      "WITH RECURSIVE c(x) AS (SELECT %d UNION ALL SELECT x+1 FROM c WHERE x < %d) "
	      "INSERT INTO events(ts, kind, pid, comm, binary, detail) SELECT "
	      "CAST(strftime('%%s','now') AS INTEGER) * 1000000000 + x, 'exec', x, 'c' || x, "
	      "'/bin/true', '{\\\"n\\\":' || x || '}' FROM c\" >/dev/null", db, from, from + n - 1);
}

static long long shipped_mark(const char *db, const char *host)
{
	char *out = NULL;
	long long m = -1;

	ks_runf(&out, NULL, "sqlite3 %s \"SELECT upto FROM fleet_shipped WHERE host='%s'\" 2>/dev/null",
		db, host);
	if (out && *out)
		m = atoll(out);
	free(out);
	return m;
}

static void wait_mark(const char *db, const char *host, long long want, int timeout_s)
{
	long long m = -1;

	for (int i = 0; i < timeout_s * 10; i++) {
		m = shipped_mark(db, host);
		if (m == want)
			return;
		usleep(100 * 1000);
	}
	cr_assert_fail("shipped mark of %s is %lld, want %lld", host, m, want);
}

static void pg_count(const char *host, long long *rows, long long *distinct)
{
	char *out = NULL;
	int rc = ks_runf(&out, NULL, "psql '%s' -Atc \"SELECT count(*), count(DISTINCT seq) FROM "
			 "ks_events WHERE host = '%s'\"", conninfo, host);

	cr_assert_eq(rc, 0, "psql failed");
	cr_assert_eq(sscanf(out, "%lld|%lld", rows, distinct), 2, "psql said '%s'", out);
	free(out);
}

Test(fleet, events_exactly_once_across_a_nats_outage)
{
	char db[300], host[64];
	long long rows, distinct;

	cluster_up();
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(host, sizeof(host), "ev%d-0", getpid());
	store_append(db, 1, 3000);
	{
		char extra[400];

		snprintf(extra, sizeof(extra), "--store %s", db);
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "ev%d", getpid());
		agent_start(0, prefix, extra);
	}
	wait_mark(db, host, 3000, 30);

	/* NATS gone entirely: the agent keeps recording, nothing is marked. */
	ks_sh_ok("%s nats-stop %s 1 2 3", harness(), cdir);
	store_append(db, 3001, 3000);
	sleep(2);
	cr_expect_eq(shipped_mark(db, host), 3000, "mark moved while NATS was down");
	ks_sh_ok("%s nats-start %s 1 2 3", harness(), cdir);
	wait_mark(db, host, 6000, 60);

	ks_sh_ok("%s collect --pg '%s' --drain --nats %s", ks_bin(), conninfo, urls);
	pg_count(host, &rows, &distinct);
	cr_expect_eq(rows, 6000, "rows in PostgreSQL");
	cr_expect_eq(distinct, 6000, "distinct sequences in PostgreSQL");

	/* The same hunt language, fleet-wide, grouped by host. */
	{
		char cmd[1024];
		json_object *arr, *mine = NULL;
		int rc;

		snprintf(cmd, sizeof(cmd), "%s -j hunt --pg '%s' --sql \"SELECT * FROM events WHERE "
			 "kind = 'exec' AND ts BETWEEN :since AND :until\"", ks_bin(), conninfo);
		arr = ks_run_json(cmd, &rc, NULL);
		cr_assert(arr && rc == 0, "hunt --pg failed");
		for (size_t k = 0; k < json_object_array_length(arr); k++) {
			json_object *e = json_object_array_get_idx(arr, k);

			if (!strcmp(json_object_get_string(ks_json_get(e, "host")), host))
				mine = e;
		}
		cr_assert(mine, "hunt --pg has no row for %s", host);
		cr_expect_eq(json_object_get_int64(ks_json_get(mine, "hits")), 6000);
		json_object_put(arr);
	}

	/* Re-shipping everything (mark lost) stores nothing twice. */
	ks_sh_ok("sqlite3 %s \"DELETE FROM fleet_shipped\"", db);
	wait_mark(db, host, 6000, 60);
	ks_sh_ok("%s collect --pg '%s' --drain --nats %s", ks_bin(), conninfo, urls);
	pg_count(host, &rows, &distinct);
	cr_expect_eq(rows, 6000, "rows after a full re-ship");

	/* Re-shipped from another mark, the frames differ from those sent
	 * before, so JetStream's duplicate window cannot drop them: the
	 * collector gets every event again and PostgreSQL's key drops them
	 * (the batch's COPY is refused, the staging path skips them). */
	ks_sh_ok("sqlite3 %s \"UPDATE fleet_shipped SET upto = 1500\"", db);
	wait_mark(db, host, 6000, 60);
	{
		char cmd[1024];
		json_object *o;
		int rc;

		snprintf(cmd, sizeof(cmd), "%s -j collect --pg '%s' --drain --nats %s", ks_bin(),
			 conninfo, urls);
		o = ks_run_json(cmd, &rc, NULL);
		cr_assert(o && rc == 0, "collect failed");
		cr_expect_eq(json_object_get_int64(ks_json_get(o, "received")), 4500);
		cr_expect_eq(json_object_get_int64(ks_json_get(o, "duplicates")), 4500);
		cr_expect_geq(json_object_get_int64(ks_json_get(o, "staged_batches")), 1);
		json_object_put(o);
	}
	pg_count(host, &rows, &distinct);
	cr_expect_eq(rows, 6000, "rows after a re-ship from another mark");
}

Test(fleet, collect_loses_nothing_when_postgres_stops)
{
	char db[300], host[64];
	long long rows, distinct;
	pid_t pid;
	int status;

	cluster_up();
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(host, sizeof(host), "pg%d", getpid());
	store_append(db, 1, 40000);
	ks_sh_ok("%s fleet ship --store %s --host %s --nats %s", ks_bin(), db, host, urls);

	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "exec %s collect --pg '%s' --batch 500 --drain --nats %s "
			 ">%s/collect.log 2>&1", ks_bin(), conninfo, urls, dir);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	usleep(300 * 1000);
	ks_sh_ok("%s pg-stop %s", harness(), cdir);
	sleep(2);
	ks_sh_ok("%s pg-start %s", harness(), cdir);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "collect failed");
	pg_count(host, &rows, &distinct);
	cr_expect_eq(rows, 40000, "rows in PostgreSQL");
	cr_expect_eq(distinct, 40000, "distinct sequences");
}

/* `kshield collect` in the background (the caller kills or waits for it). */
static pid_t collect_start(const char *extra, const char *log)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "exec %s -j collect --pg '%s' %s --nats %s >%s 2>&1",
			 ks_bin(), conninfo, extra ? extra : "", urls, log);
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait until PostgreSQL holds @want rows of @host (or @timeout_s). */
static long long wait_pg_rows(const char *host, long long want, int timeout_s)
{
	long long rows = 0, distinct = 0;

	for (int i = 0; i < timeout_s * 4; i++) {
		pg_count(host, &rows, &distinct);
		if (rows >= want)
			break;
		usleep(250 * 1000);
	}
	return rows;
}

/* The shipper keeps a window of frames in flight; an agent killed with
 * SIGKILL mid-pass leaves frames sent but unacknowledged (and acked frames
 * past its saved mark). Restarted, it re-sends from its mark: every event
 * lands in PostgreSQL exactly once. */
Test(fleet, events_exactly_once_when_the_agent_is_killed_mid_shipping, .timeout = 180)
{
	const long long total = 600000;	/* a pass of a few seconds */
	char db[300], host[64], prefix[32], extra[400];
	long long rows, distinct, at_kill = -1;

	cluster_up();
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(prefix, sizeof(prefix), "kill%d", getpid());
	snprintf(host, sizeof(host), "%s-0", prefix);
	snprintf(extra, sizeof(extra), "--store %s", db);
	store_append(db, 1, total);
	agent_start(0, prefix, extra);
	/* Kill it once part of the store is acknowledged (the shipper saves
	 * its mark every 250 ms of a pass), not all of it. */
	for (int i = 0; i < 6000 && at_kill <= 0; i++) {
		at_kill = shipped_mark(db, host);
		if (at_kill <= 0)
			usleep(5 * 1000);
	}
	kill(agents[0], SIGKILL);
	waitpid(agents[0], NULL, 0);
	at_kill = shipped_mark(db, host);
	cr_assert(at_kill > 0 && at_kill < total,
		  "the agent was not killed mid-shipping (mark %lld of %lld)", at_kill, total);
	cr_log_info("agent killed at mark %lld of %lld", at_kill, total);

	agent_start(0, prefix, extra);
	wait_mark(db, host, total, 60);
	ks_sh_ok("%s collect --pg '%s' --drain --nats %s", ks_bin(), conninfo, urls);
	pg_count(host, &rows, &distinct);
	cr_expect_eq(rows, total, "rows in PostgreSQL");
	cr_expect_eq(distinct, total, "distinct sequences in PostgreSQL");
}

/* A collector killed while events stream in: the batches it fetched but
 * had not acked (written or not) are redelivered to the next one after
 * the durable's ack wait, and the (host, seq) key drops what it had
 * already committed. */
Test(fleet, events_exactly_once_when_the_collector_is_killed_mid_stream, .timeout = 180)
{
	const long long total = 120000;
	char db[300], host[64], prefix[32], extra[400], log[300], *out = NULL;
	long long rows = 0, distinct;
	pid_t pid;
	int status;

	cluster_up();
	/* Whatever earlier tests left in the stream goes first. */
	ks_sh_ok("%s collect --pg '%s' --drain --nats %s", ks_bin(), conninfo, urls);
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(prefix, sizeof(prefix), "ckill%d", getpid());
	snprintf(host, sizeof(host), "%s-0", prefix);
	snprintf(extra, sizeof(extra), "--store %s", db);
	store_append(db, 1, total);
	snprintf(log, sizeof(log), "%s/collect-1.log", dir);
	pid = collect_start(NULL, log);
	agent_start(0, prefix, extra);
	/* Kill it once some, not all, of the events are in PostgreSQL. It
	 * is stopped while PostgreSQL is counted: on a loaded machine one
	 * count can take longer than the whole stream (it wrote 120000 of
	 * 120000 rows between two counts once). */
	for (int i = 0; i < 600; i++) {
		usleep(20 * 1000);
		kill(pid, SIGSTOP);
		pg_count(host, &rows, &distinct);
		if (rows > 0)
			break;
		kill(pid, SIGCONT);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pg_count(host, &rows, &distinct);
	cr_assert(rows > 0 && rows < total, "the collector was not killed mid-stream (%lld of %lld rows)",
		  rows, total);
	cr_log_info("collector killed with %lld of %lld rows written", rows, total);

	wait_mark(db, host, total, 60);
	long long before = rows;
	int mport = ks_free_port();
	char mopt[64];

	cr_assert(mport > 0, "no free loopback port");

	snprintf(log, sizeof(log), "%s/collect-2.log", dir);
	snprintf(mopt, sizeof(mopt), "--metrics 127.0.0.1:%d", mport);
	pid = collect_start(mopt, log);
	rows = wait_pg_rows(host, total, 90);
	/* A little longer: a duplicate would show up now. */
	sleep(1);
	/* Its /metrics: what it inserted is exactly what was missing; what
	 * the first one had committed came again and counts as duplicates. */
	char mcmd[256], *mtext = NULL;
	snprintf(mcmd, sizeof(mcmd), "curl -sf --max-time 5 http://127.0.0.1:%d/metrics", mport);
	cr_expect_eq(ks_run(mcmd, &mtext, NULL), 0, "no /metrics from collect");
	long long ins = -1, recv = -1, dup = -1;
	const char *m;
	if (mtext && (m = strstr(mtext, "\nkshield_collect_inserted_total ")))
		ins = atoll(m + strlen("\nkshield_collect_inserted_total "));
	if (mtext && (m = strstr(mtext, "\nkshield_collect_received_total ")))
		recv = atoll(m + strlen("\nkshield_collect_received_total "));
	if (mtext && (m = strstr(mtext, "\nkshield_collect_duplicates_total ")))
		dup = atoll(m + strlen("\nkshield_collect_duplicates_total "));
	cr_expect_eq(ins, total - before, "collect metrics: inserted %lld, missing were %lld\n%s",
		     ins, total - before, mtext ? mtext : "");
	cr_expect_geq(recv, ins, "received %lld < inserted %lld", recv, ins);
	cr_expect_eq(dup, recv - ins, "duplicates %lld", dup);
	cr_expect(mtext && strstr(mtext, "\nkshield_collect_pg_lag_seconds "), "no lag: %s", mtext);
	free(mtext);
	kill(pid, SIGTERM);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "collect failed after SIGTERM");
	out = ks_read_file(log);
	cr_log_info("second collector: %s", out ? out : "?");
	free(out);
	pg_count(host, &rows, &distinct);
	cr_expect_eq(rows, total, "rows in PostgreSQL");
	cr_expect_eq(distinct, total, "distinct sequences in PostgreSQL");
}

/* A NATS client of the test's own, enough to publish as admin: the
 * first server of NATS_URLS (nats://USER:PASS@127.0.0.1:PORT). */
static int nats_raw_connect(int *http_port)
{
	char user[64], pass[128], buf[4096];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int port, fd, n, got = 0;

	cr_assert_eq(sscanf(urls, "nats://%63[^:]:%127[^@]@127.0.0.1:%d", user, pass, &port), 3,
		     "NATS_URLS %s", urls);
	*http_port = port;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)), "connect to NATS");
	n = snprintf(buf, sizeof(buf), "CONNECT {\"user\":\"%s\",\"pass\":\"%s\",\"verbose\":false,"
		     "\"pedantic\":false,\"headers\":true}\r\nPING\r\n", user, pass);
	cr_assert_eq(write(fd, buf, n), n);
	/* INFO, then PONG once the server took the CONNECT. */
	while (got < (int)sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += n;
		buf[got] = '\0';
		if (strstr(buf, "PONG") || strstr(buf, "-ERR"))
			break;
	}
	cr_assert(got > 0 && strstr(buf, "PONG"), "NATS refused the test's CONNECT: %s", buf);
	return fd;
}

/* The subject the collector's fetches are answered on: its pull
 * subscription's inbox, a plain _INBOX.<id> (request-reply inboxes end in
 * ".*"), found in the servers' connection lists (monitoring port = client
 * port + 7, tests/fleet/cluster.sh). */
static bool collect_inbox(int port, char *out, size_t n)
{
	for (int node = 0; node < 3; node++) {
		char cmd[256];
		json_object *o, *conns;
		int rc;

		snprintf(cmd, sizeof(cmd), "curl -sf --max-time 5 'http://127.0.0.1:%d/connz?subs=detail'",
			 port + node + 7);
		o = ks_run_json(cmd, &rc, NULL);
		conns = o ? ks_json_get(o, "connections") : NULL;
		for (size_t i = 0; conns && i < json_object_array_length(conns); i++) {
			json_object *subs = ks_json_get(json_object_array_get_idx(conns, i),
							"subscriptions_list_detail");

			for (size_t k = 0; subs && k < json_object_array_length(subs); k++) {
				const char *s = json_object_get_string(ks_json_get(
					json_object_array_get_idx(subs, k), "subject"));

				if (s && !strncmp(s, "_INBOX.", 7) && !strchr(s + 7, '.') &&
				    strlen(s) < n) {
					strcpy(out, s);
					json_object_put(o);
					return true;
				}
			}
		}
		if (o)
			json_object_put(o);
	}
	return false;
}

/* `kshield collect --drain` in the background, with glibc's heap checks
 * (an overrun of a heap block aborts at its free, not maybe later). */
static pid_t collect_start_checked(const char *log)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "MALLOC_CHECK_=3 LD_PRELOAD=libc_malloc_debug.so.0 exec %s -j "
			 "collect --pg '%s' --drain --nats %s >%s 2>&1", ks_bin(), conninfo, urls, log);
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Answers to pull requests the collector no longer waits for (a fetch that
 * expired while its answers were on the way, requests sent before NATS
 * restarted or stalled) land on its subscription at any time, also while
 * a later fetch runs. Here the test makes them: pull requests for the
 * collector's durable, one message each, answered to the collector's
 * inbox while it drains the stream, at rates from 17 to 80 a second (how
 * many queue up between two of its fetches depends on how fast
 * PostgreSQL takes them). Every event must be written exactly once and
 * the collector must end cleanly. libnats 3.4.1's fetch, started with
 * more than half a batch queued, stores what comes next past its array:
 * the collector aborted ("double free or corruption", "malloc(): invalid
 * size", "free(): invalid pointer"). */
Test(fleet, collect_takes_answers_to_fetches_it_gave_up_on, .timeout = 180)
{
	static const int gaps_ms[] = { 60, 45, 35, 27, 21, 16, 12 };
	static const char body[] = "{\"batch\":1,\"expires\":1000000000}";	/* 1 s */
	const long long total = 1000000;	/* 977 frames of up to 1024 events */
	char db[300], host[64], log[300], inbox[128] = "", *out = NULL;
	long long rows, distinct;
	int fd, port, status, sent = 0;
	pid_t pid;

	cluster_up();
	/* Whatever earlier tests left in the stream goes first. */
	ks_sh_ok("%s collect --pg '%s' --drain --nats %s", ks_bin(), conninfo, urls);
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(host, sizeof(host), "late%d", getpid());
	store_append(db, 1, total);
	ks_sh_ok("%s fleet ship --store %s --host %s --nats %s", ks_bin(), db, host, urls);

	fd = nats_raw_connect(&port);
	snprintf(log, sizeof(log), "%s/collect.log", dir);
	pid = collect_start_checked(log);
	for (int i = 0; i < 100 && !collect_inbox(port, inbox, sizeof(inbox)); i++)
		usleep(100 * 1000);
	cr_assert(*inbox, "no pull subscription of the collector on any server");
	for (size_t g = 0; pid && g < sizeof(gaps_ms) / sizeof(gaps_ms[0]); g++) {
		for (int t = 0; pid && t < 1500; t += gaps_ms[g]) {
			char req[512];
			int n = snprintf(req, sizeof(req), "PUB $JS.API.CONSUMER.MSG.NEXT.KSHIELD_EVENTS"
					 ".kshield-collect %s %zu\r\n%s\r\n", inbox, sizeof(body) - 1, body);

			if (waitpid(pid, &status, WNOHANG) == pid) {
				pid = 0;
				break;
			}
			cr_assert_eq(write(fd, req, n), n);
			sent++;
			usleep(gaps_ms[g] * 1000);
		}
	}
	close(fd);
	if (pid)
		cr_assert_eq(waitpid(pid, &status, 0), pid);
	out = ks_read_file(log);
	cr_log_info("%d pull requests answered to %s; collector: %s", sent, inbox, out ? out : "?");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "collect %s %d after %d pull requests answered to it: %s",
		  WIFSIGNALED(status) ? "killed by signal" : "exited",
		  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), sent, out ? out : "");
	free(out);
	pg_count(host, &rows, &distinct);
	cr_expect_eq(rows, total, "rows in PostgreSQL");
	cr_expect_eq(distinct, total, "distinct sequences in PostgreSQL");
}

/* ---- signing, no servers ---- */

Test(fleet_sign, verify_statuses)
{
	char f[512], *out = NULL;
	json_object *o;
	int rc;

	setup();
	o = ks_run_json(({ snprintf(f, sizeof(f), "%s -j shield verify %s --keys %s/trust", ks_bin(),
				   obj, dir); f; }), &rc, NULL);
	cr_assert_eq(rc, 0);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "status")), "verified");
	json_object_put(o);

	ks_sh_ok("printf X | dd of=%s bs=1 seek=5000 conv=notrunc 2>/dev/null", obj);
	snprintf(f, sizeof(f), "%s -j shield verify %s --keys %s/trust", ks_bin(), obj, dir);
	o = ks_run_json(f, &rc, NULL);
	cr_expect_neq(rc, 0);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "status")), "bad-signature");
	json_object_put(o);

	ks_sh_ok("rm %s.sig", obj);
	o = ks_run_json(f, &rc, NULL);
	cr_expect_neq(rc, 0);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "status")), "unsigned");
	json_object_put(o);

	ks_sh_ok("%s shield keygen %s/rogue >/dev/null && %s shield sign %s --key %s/rogue.key >/dev/null",
	      ks_bin(), dir, ks_bin(), obj, dir);
	o = ks_run_json(f, &rc, NULL);
	cr_expect_neq(rc, 0);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "status")), "unknown-key");
	json_object_put(o);

	/* Keys are never overwritten; the secret key is private. */
	rc = ks_runf(NULL, NULL, "%s shield keygen %s/rogue", ks_bin(), dir);
	cr_expect_neq(rc, 0, "keygen overwrote a key");
	rc = ks_runf(&out, NULL, "stat -c %%a %s/rogue.key", dir);
	cr_expect_str_eq(out, "600\n");
	free(out);
	teardown();
}

/* Gated rollouts (issue 18): what the matrix proved travels with the shield.
 * A real matrix run of this host's kernel (matrix/run.sh, the "host" row:
 * every shield tested here for real) gives results.json; `shield proven`
 * turns it into signed summaries; a --gated deploy of a real shield proven
 * here enforces, one with no summary only audits ("unproven kernel") until
 * an operator promotes the host, and a summary altered after signing is
 * refused. */
#define PROVEN_SHIELD "cve-2024-1086"

static const char *dir_path_gated(void)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/gated/%s.bpf.o", dir, PROVEN_SHIELD);
	return p;
}

static json_object *status_of(const char *shield, const char *host)
{
	char cmd[1024];
	json_object *arr, *ph, *r = NULL;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j fleet status %s --nats %s", ks_bin(), shield, urls);
	arr = ks_run_json(cmd, &rc, NULL);
	cr_assert(arr && rc == 0, "fleet status %s failed", shield);
	if (json_object_object_get_ex(json_object_array_get_idx(arr, 0), "per_host", &ph))
		for (size_t k = 0; k < json_object_array_length(ph); k++)
			if (!strcmp(json_object_get_string(ks_json_get(json_object_array_get_idx(ph, k),
									"host")), host))
				r = json_object_get(json_object_array_get_idx(ph, k));
	if (r)
		json_object_object_add(r, "_summary", json_object_get(json_object_array_get_idx(arr, 0)));
	json_object_put(arr);
	cr_assert(r, "no status of %s from %s", shield, host);
	return r;
}

static const char *str_at(json_object *o, const char *path)
{
	const char *s = json_object_get_string(ks_json_get(o, path));

	return s ? s : "";
}

static void wait_for(const char *shield, const char *status, int timeout_s)
{
	ks_sh_ok("%s fleet wait %s --status %s --count 1 --timeout %d --nats %s >/dev/null", ks_bin(),
	      shield, status, timeout_s, urls);
}

Test(fleet, gated_rollout_enforces_only_on_proven_kernels, .timeout = 300)
{
	char build[512], *slash, m[32];
	json_object *h;

	cluster_up();
	baseline();
	snprintf(build, sizeof(build), "%s", ks_bin());
	slash = strrchr(build, '/');
	cr_assert(slash);
	*slash = '\0';
	/* The real matrix row of this kernel (its own bpffs root). A row
	 * failing for some shield must not stop us: results.json is what
	 * counts, and only its pass rows prove. */
	ks_sh_ok("BUILD=%s matrix/run.sh --only '^host$' --jobs 1 --out %s/m >%s/m.log 2>&1; "
	      "test -s %s/m/results.json", build, dir, dir, dir);
	ks_sh_ok("jq -e '[.[] | select(.shield == \"%s\" and .status == \"pass\" and "
	      "(.build_id | length) == 40 and (.sha256 | length) == 64)] | length == 1' "
	      "%s/m/results.json >/dev/null", PROVEN_SHIELD, dir);
	ks_sh_ok("mkdir -p %s/gated && cp %s/%s.bpf.o %s/gated/ && %s shield sign %s/gated/%s.bpf.o "
	      "--key %s/signer.key >/dev/null", dir, ks_shields_dir(), PROVEN_SHIELD, dir, ks_bin(),
	      dir, PROVEN_SHIELD, dir);
	ks_sh_ok("%s shield proven %s/m/results.json --out %s/gated --key %s/signer.key --shield %s "
	      ">/dev/null && test -s %s/gated/%s.proven.json.sig", ks_bin(), dir, dir, dir,
	      PROVEN_SHIELD, dir, PROVEN_SHIELD);
	/* A summary is about one object: another shield's is refused at deploy. */
	cr_expect_neq(ks_runf(NULL, NULL, "%s fleet deploy %s --gated --proven %s/gated/%s.proven.json "
			      "--hosts 'gate-*' --nats %s 2>/dev/null", ks_bin(), obj, dir,
			      PROVEN_SHIELD, urls), 0, "deployed with another object's summary");

	agent_start(0, "gate", NULL);

	/* 1. Proven here: enforces. */
	deploy(dir_path_gated(), "gate", "--gated");
	wait_for(PROVEN_SHIELD, "enforcing", 40);
	h = status_of(PROVEN_SHIELD, "gate-0");
	cr_expect_str_eq(str_at(h, "gate"), "proven", "gate_why: %s", str_at(h, "gate_why"));
	cr_expect_str_eq(str_at(h, "mode"), "enforce");
	cr_expect_eq(json_object_get_int(ks_json_get(h, "_summary.kernels.proven")), 1);
	cr_expect_eq(json_object_get_int(ks_json_get(h, "_summary.kernels.unproven")), 0);
	json_object_put(h);

	/* 2. No summary: unproven kernel, audit only, until promoted. */
	deploy(obj, "gate", "--gated");
	wait_for(SHIELD, "auditing", 40);
	h = status_of(SHIELD, "gate-0");
	cr_expect_str_eq(str_at(h, "gate"), "unproven");
	cr_expect(strstr(str_at(h, "gate_why"), "unproven kernel"), "why: %s", str_at(h, "gate_why"));
	cr_expect_eq(json_object_get_int(ks_json_get(h, "_summary.kernels.unproven")), 1);
	json_object_put(h);
	{
		char *out = NULL;

		cr_expect_eq(ks_runf(&out, NULL, "%s fleet status %s --nats %s", ks_bin(), SHIELD, urls), 0);
		cr_expect(out && strstr(out, " 0/1/0 ") && strstr(out, "unproven kernel"),
			  "fleet status text:\n%s", out);
		free(out);
	}
	cr_expect_str_eq(loaded_mode(0, m, sizeof(m)), "audit", "unproven kernel not in audit");
	expect_trigger_passes("on an unproven kernel (audit only)");
	ks_sh_ok("%s fleet promote %s --host 'gate-*' --nats %s >/dev/null", ks_bin(), SHIELD, urls);
	wait_for(SHIELD, "enforcing", 40);
	h = status_of(SHIELD, "gate-0");
	cr_expect(json_object_get_boolean(ks_json_get(h, "promoted")), "not reported promoted");
	cr_expect_eq(json_object_get_int(ks_json_get(h, "_summary.kernels.promoted")), 1);
	json_object_put(h);
	cr_expect(trigger_errno_eperm(), "promoted host does not enforce");

	/* 3. A summary changed after signing (a kernel added to its proven
	 * list by hand): the agent refuses the record, nothing changes. */
	ks_sh_ok("jq '.proven += [.proven[0] | .release = \"forged\"]' %s/gated/%s.proven.json "
	      ">%s/f.json && mv %s/f.json %s/gated/%s.proven.json", dir, PROVEN_SHIELD, dir, dir, dir,
	      PROVEN_SHIELD);
	deploy(dir_path_gated(), "gate", "--gated");
	wait_for(PROVEN_SHIELD, "refused", 40);
	h = status_of(PROVEN_SHIELD, "gate-0");
	cr_expect(strstr(str_at(h, "error"), "proven summary"), "error: %s", str_at(h, "error"));
	json_object_put(h);

	ks_sh_ok("%s fleet rollback %s --nats %s >/dev/null", ks_bin(), SHIELD, urls);
	ks_sh_ok("%s fleet rollback %s --nats %s >/dev/null", ks_bin(), PROVEN_SHIELD, urls);
	wait_for(SHIELD, "unloaded", 40);
}

/* ---- shipping after the wall clock stepped back: no agent, no BPF ---- */

/* `kshield fleet ship` once; returns the events it shipped. */
static long long ship_once(const char *db, const char *host)
{
	char cmd[1024];
	json_object *o;
	long long n;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j fleet ship --store %s --host %s --nats %s", ks_bin(), db,
		 host, urls);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o && rc == 0, "fleet ship failed");
	n = json_object_get_int64(ks_json_get(o, "shipped"));
	json_object_put(o);
	return n;
}

/* `kshield collect --drain`; returns what it received. */
static long long collect_drain(void)
{
	char cmd[1024];
	json_object *o;
	long long n;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j collect --pg '%s' --drain --nats %s", ks_bin(), conninfo, urls);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o && rc == 0, "collect failed");
	n = json_object_get_int64(ks_json_get(o, "received"));
	json_object_put(o);
	return n;
}

/* Rows written through the store library (bench/store_ingest steps), as
 * an agent whose wall clock stepped writes them; pids count from @pid. */
static void store_steps(const char *db, long pid, const char *segments)
{
	char bench[512];

	snprintf(bench, sizeof(bench), "%s", ks_bin());
	*strrchr(bench, '/') = '\0';
	strcat(bench, "/bench/store_ingest");
	ks_sh_ok("%s steps %s %ld %s", bench, db, pid, segments);
}

/* Each pid of @host once in PostgreSQL, 1..@n: rows, distinct (host, seq)
 * and distinct pids all @n. */
static void expect_pg_once(const char *host, long long n, const char *when)
{
	char *out = NULL;
	long long rows = -1, seqs = -1, pids = -1, lo = -1, hi = -1;
	int rc = ks_runf(&out, NULL, "psql '%s' -Atc \"SELECT count(*), count(DISTINCT seq), "
			 "count(DISTINCT data->>'pid'), min((data->>'pid')::bigint), "
			 "max((data->>'pid')::bigint) FROM ks_events WHERE host = '%s'\"", conninfo, host);

	cr_assert_eq(rc, 0, "psql failed");
	cr_assert_eq(sscanf(out, "%lld|%lld|%lld|%lld|%lld", &rows, &seqs, &pids, &lo, &hi), 5,
		     "psql said '%s'", out);
	free(out);
	cr_expect_eq(rows, n, "%s: %lld rows in PostgreSQL, want %lld", when, rows, n);
	cr_expect_eq(seqs, n, "%s: %lld distinct seq, want %lld", when, seqs, n);
	cr_expect(pids == n && lo == 1 && hi == n, "%s: pids %lld distinct, %lld..%lld, want 1..%lld",
		  when, pids, lo, hi, n);
}

/* A scratch dir and no shield: the tests of shipping alone load nothing. */
static void events_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-fleet-test-%d", getpid());
	ks_sh_ok("rm -rf %s && mkdir -p %s", dir, dir);
	memset(agents, 0, sizeof(agents));
}

/* The wall clock stepped back: rows stored after the step have times (the
 * store's row key, and the shipped-up-to mark) below rows already shipped.
 * Every one of them ships, once, and nothing shipped before is sent again;
 * re-shipping the same range stores nothing twice. */
TestSuite(fleet_ship, .init = events_setup, .fini = teardown, .timeout = 180);

Test(fleet_ship, events_stored_after_a_clock_step_back_ship_exactly_once)
{
	const long long sec = 1000000000LL, t = (long long)time(NULL) * sec;
	char db[300], host[64], seg[512];

	cluster_up();
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(host, sizeof(host), "step%d", getpid());

	/* 3000 rows over the last two hours (2.4 s apart), all shipped */
	snprintf(seg, sizeof(seg), "%lld:3000:%lld", t - 7200 * sec, 2400 * sec / 1000);
	store_steps(db, 1, seg);
	cr_expect_eq(ship_once(db, host), 3000, "before the step");

	/* The clock steps back 1 h (2000 rows 1.5 s apart, between the rows
	 * above), then 30 min more (1000 rows 1 s apart): all below the mark */
	snprintf(seg, sizeof(seg), "%lld:2000:%lld %lld:1000:%lld", t - 3600 * sec, 1500 * sec / 1000,
		 t - 5400 * sec, sec);
	store_steps(db, 3001, seg);
	cr_expect_eq(ship_once(db, host), 3000, "after stepping back: the new rows alone");
	cr_expect_eq(ship_once(db, host), 0, "shipped twice");

	/* The clock is past the newest row again: ordinary rows above the mark */
	snprintf(seg, sizeof(seg), "%lld:500:%lld", t + 60 * sec, sec / 1000);
	store_steps(db, 6001, seg);
	cr_expect_eq(ship_once(db, host), 500, "after the clock caught up");

	collect_drain();
	expect_pg_once(host, 6500, "shipped");

	/* The same range again, from another mark (frames that JetStream has
	 * not seen) and from none: PostgreSQL's key keeps one of each. */
	ks_sh_ok("sqlite3 %s \"UPDATE fleet_shipped SET upto = %lld\"", db, t - 4000 * sec);
	cr_expect_geq(ship_once(db, host), 500, "re-ship from a mark");
	cr_expect_geq(collect_drain(), 500, "re-shipped from a mark, collected");
	expect_pg_once(host, 6500, "re-shipped from a mark");
	ks_sh_ok("sqlite3 %s \"DELETE FROM fleet_shipped\"", db);
	cr_expect_eq(ship_once(db, host), 6500, "re-ship of everything");
	collect_drain();
	expect_pg_once(host, 6500, "re-shipped everything");
}

/* The same while the rows are being written: the store commits every 8192
 * rows and the shipper passes over them meanwhile, as the agent's does. */
Test(fleet_ship, events_stored_while_shipping_after_a_step_back_ship_exactly_once)
{
	const long long sec = 1000000000LL, t = (long long)time(NULL) * sec;
	char db[300], host[64], seg[512], bench[512];
	long long shipped = 0, passes = 0;
	pid_t pid;
	int status;

	cluster_up();
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(host, sizeof(host), "stepw%d", getpid());
	snprintf(seg, sizeof(seg), "%lld:20000:%lld", t - 7200 * sec, 360 * sec / 1000);
	store_steps(db, 1, seg);
	shipped += ship_once(db, host);

	/* stepped back 1 h: 100000 rows 30 ms apart between those above, then
	 * 20000 past them, written while passes run */
	snprintf(bench, sizeof(bench), "%s", ks_bin());
	*strrchr(bench, '/') = '\0';
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[1024];

		/* ten writers one after another, as an agent restarted
		 * while the clock is behind: each steps back again */
		snprintf(cmd, sizeof(cmd), "set -e; for k in 0 1 2 3 4 5 6 7 8 9; do "
			 "%s/bench/store_ingest steps %s $((20001 + k * 10000)) "
			 "$((%lld + k * 10000 * %lld)):10000:%lld; sleep 0.2; done; "
			 "exec %s/bench/store_ingest steps %s 120001 %lld:20000:%lld", bench, db,
			 t - 3600 * sec, 30 * sec / 1000, 30 * sec / 1000, bench, db, t + 60 * sec,
			 sec / 1000);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		shipped += ship_once(db, host);
		passes++;
	}
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "store_ingest steps failed");
	shipped += ship_once(db, host);
	cr_log_info("%lld events shipped for 140000 stored, %lld passes while writing", shipped, passes);
	cr_expect_geq(passes, 1, "no pass ran while the rows were written");
	cr_expect_geq(shipped, 140000);
	collect_drain();
	expect_pg_once(host, 140000, "written while shipping");
}

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* PostgreSQL's rows of @host whose exec args hold @marker: rows, and
 * distinct (host, seq) in @seqs. */
static long long pg_marker(const char *host, const char *marker, long long *seqs)
{
	char *out = NULL;
	long long rows = -1;
	int rc = ks_runf(&out, NULL, "psql '%s' -Atc \"SELECT count(*), count(DISTINCT seq) FROM "
			 "ks_events WHERE host = '%s' AND kind = 'exec' AND data->>'binary' = '/bin/true' "
			 "AND data->>'args' LIKE '%%%s-%%'\"", conninfo, host, marker);

	cr_assert_eq(rc, 0, "psql failed");
	cr_assert_eq(sscanf(out, "%lld|%lld", &rows, seqs), 2, "psql said '%s'", out);
	free(out);
	return rows;
}

/* One integer from the store (-1 on none). */
static long long store_int(const char *db, const char *sql)
{
	char *out = NULL;
	long long v = -1;

	ks_runf(&out, NULL, "sqlite3 %s \"%s\" 2>/dev/null", db, sql);
	if (out && *out)
		v = atoll(out);
	free(out);
	return v;
}

/* @n execs of /bin/true with @marker in their args, all stored by the
 * agent (up to 20 s); returns the newest one's ts. (The queries' own sh
 * and sqlite3 execs name the marker too: /bin/true's rows alone.) */
static long long execs_stored(const char *db, const char *marker, int n)
{
	char q[300];
	long long got = -1;

	ks_sh_ok("for i in $(seq %d); do /bin/true %s-$i; done", n, marker);
	snprintf(q, sizeof(q), "SELECT count(*) FROM events WHERE kind = 'exec' AND "
		 "binary = '/bin/true' AND args LIKE '%%%s-%%'", marker);
	for (int i = 0; i < 200 && got != n; i++, usleep(100 * 1000))
		got = store_int(db, q);
	cr_assert_eq(got, n, "%lld of %d execs of %s stored", got, n, marker);
	snprintf(q, sizeof(q), "SELECT max(ts) FROM events WHERE kind = 'exec' AND "
		 "binary = '/bin/true' AND args LIKE '%%%s-%%'", marker);
	return store_int(db, q);
}

/* The same through the agent's own shipping thread (`kshield agent
 * --fleet`, as bench/faults.sh runs it): its wall clock steps back 1 h
 * (tests/clockshift.c: for the agent alone, the host's clock is shared),
 * so the execs it stores then sit below the rows it has shipped (table
 * late), then forward again. Each exec reaches PostgreSQL once. */
Test(fleet_ship, the_agents_shipper_ships_events_stored_after_a_clock_step_back_once,
     .timeout = 300)
{
	static const struct {
		const char *what;
		long long offset_s;	/* the agent's clock, from the real one */
		bool below;		/* stored below the shipped-up-to mark */
	} steps[] = {
		{ "before", 0, false },
		{ "1 h back", -3600, true },
		{ "back to now", 0, false },
	};
	const int n = 200;
	const double t0 = mono_s();
	char db[300], host[64], lib[300], shift[300], marker[3][64], bpffs[128];
	long long newest[3];
	pid_t pid;

	cluster_up();
	snprintf(db, sizeof(db), "%s/events.db", dir);
	snprintf(host, sizeof(host), "agstep%d", getpid());
	snprintf(lib, sizeof(lib), "%s", ks_bin());
	*strrchr(lib, '/') = '\0';
	strcat(lib, "/tests/clockshift.so");
	cr_assert_eq(access(lib, R_OK), 0, "%s is missing: make %s", lib, lib);
	snprintf(shift, sizeof(shift), "%s/clockshift", dir);
	ks_sh_ok("echo 0 > %s", shift);
	ks_sh_ok("%s shield keygen %s/signer >/dev/null && mkdir -p %s/keys && cp %s/signer.pub %s/keys/",
		 ks_bin(), dir, dir, dir, dir);
	/* the root teardown() removes: named here, not in the child */
	snprintf(bpffs, sizeof(bpffs), "/sys/fs/bpf/ks-fleet-%d-0", getpid());
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[2048];

		snprintf(cmd, sizeof(cmd), "KS_CLOCK_SHIFT_FILE=%s LD_PRELOAD=%s exec %s --bpffs %s "
			 "agent --no-shields --no-flow --metrics off --store %s --fleet %s --keys %s/keys "
			 "--state %s/state --host %s >>%s/agent-0.log 2>&1",
			 shift, lib, agent_bin(), bpffs, db, host_urls, dir, dir, host, dir);
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	agents[0] = pid;
	{
		char log[300], *text = NULL;

		snprintf(log, sizeof(log), "%s/agent-0.log", dir);
		for (int k = 0; k < 300 && !(text && strstr(text, "storing events")); k++) {
			free(text);
			usleep(100 * 1000);
			text = ks_read_file(log);
		}
		cr_assert(text && strstr(text, "storing events"), "the agent is not storing: %s",
			  text ? text : "(no log)");
		free(text);
	}

	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		long long mark = -1;

		ks_sh_ok("echo %lld > %s.new && mv %s.new %s", steps[i].offset_s, shift, shift, shift);
		usleep(1500 * 1000);	/* the agent's next tick sees the step */
		snprintf(marker[i], sizeof(marker[i]), "ks-agstep-%d-%zu", getpid(), i);
		newest[i] = execs_stored(db, marker[i], n);
		mark = shipped_mark(db, host);
		if (steps[i].below)
			cr_expect_lt(newest[i], mark, "%s: the execs were stored above the shipped-up-to "
				     "mark (%lld, newest %lld): not a step back", steps[i].what, mark,
				     newest[i]);
		/* shipped: every exec at or below the mark, none listed late */
		for (int k = 0; k < 300 && mark < newest[i]; k++, usleep(100 * 1000))
			mark = shipped_mark(db, host);
		cr_assert_geq(mark, newest[i], "%s: the mark never reached the execs", steps[i].what);
		cr_log_info("%s: execs stored and shipped at %.1f s", steps[i].what, mono_s() - t0);
	}
	{
		char q[300];
		long long left = -1;

		snprintf(q, sizeof(q), "SELECT count(*) FROM late WHERE ts IN (SELECT ts FROM events "
			 "WHERE kind = 'exec' AND binary = '/bin/true' AND args LIKE '%%%s-%%')",
			 marker[1]);
		for (int k = 0; k < 300 && left != 0; k++, usleep(100 * 1000))
			left = store_int(db, q);
		cr_expect_eq(left, 0, "%lld execs stored after the step back still listed in table late",
			     left);
	}
	/* all shipped (the marks above): a drain or two brings them in */
	long long rows[3] = { 0 }, seqs[3] = { 0 };

	for (int k = 0, all = 0; k < 6 && !all; k++) {
		collect_drain();
		cr_log_info("drain %d done at %.1f s", k + 1, mono_s() - t0);
		all = 1;
		for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
			all &= (rows[i] = pg_marker(host, marker[i], &seqs[i])) >= n;
	}
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		cr_expect_eq(rows[i], n, "%s: %lld of %d execs in PostgreSQL", steps[i].what, rows[i], n);
		cr_expect_eq(seqs[i], n, "%s: %lld distinct seq, want %d", steps[i].what, seqs[i], n);
	}
}
