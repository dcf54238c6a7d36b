// SPDX-License-Identifier: MIT
/* test_fleet_sites.c - kernel sites manifests shipped with a shield through
 * the fleet: `fleet deploy --sites` stores one manifest per kernel build,
 * the agent installs only the one for its kernel (here a build ID of our
 * own, KSHIELD_KERNEL_NOTES) into its sites directory after checking its
 * sha256 and its signature against --keys, and refuses a forged one
 * without touching what it installed before. The shield is the kprobe
 * fixture: on a kernel without kprobes it then fails to load ("failed",
 * not "refused"), which is what this host can show; the guests of `make
 * matrix-dbg` load it. Uses the NATS cluster of test_fleet.c (same
 * directory, stopped by its POST_ALL hook).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/stat.h>
#include "fleet_harness.h"

#define SHIELD "kernel-sites-fixture"
#define ID_A "00112233445566778899aabbccddeeff00112233"
#define ID_B "ffeeddccbbaa99887766554433221100ffeeddcc"

static char dir[256], cdir[256], urls[512], host_urls[512], key_env[300];
static pid_t agent = -1;

/* The cluster of test_fleet.c: one per test runner. */
static void cluster_up(void)
{
	ks_fleet_cluster_up(cdir, sizeof(cdir), urls, sizeof(urls), host_urls, sizeof(host_urls));
}

/* dir/NAME: a manifest of build @id listing do_sys_open (one site). */
static void manifest(const char *name, const char *id, int offset)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"kshield_sites\": 1, \"build_id\": \"%s\", \"release\": \"6.1.0-test\","
		" \"arch\": \"x86_64\", \"vmlinux\": \"/nowhere\", \"functions\": ["
		" {\"function\": \"do_sys_open\", \"sites\": ["
		"  {\"id\": 0, \"addr\": \"0xffffffff81001010\", \"kind\": \"inlined\","
		"   \"caller\": \"g\", \"symbol\": \"g\", \"symbol_offset\": %d, \"probeable\": true,"
		"   \"args\": []}]}]}\n", id, offset);
	fclose(f);
}

static void setup(void)
{
	const char *fx = getenv("KSHIELD_FIXTURES");

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	snprintf(dir, sizeof(dir), "/tmp/ks-fleet-sites-%d", getpid());
	ks_sh_ok("rm -rf %s && mkdir -p %s/trust %s/sites && cp %s/kernel-sites.bpf.o %s/", dir, dir,
	      dir, fx, dir);
	ks_sh_ok("%s shield keygen %s/signer >/dev/null && cp %s/signer.pub %s/trust/", ks_bin(), dir,
	      dir, dir);
	ks_sh_ok("%s shield sign %s/kernel-sites.bpf.o --key %s/signer.key >/dev/null", ks_bin(), dir,
	      dir);
	/* The desired records' signing key (fleet deploy, rollback). */
	snprintf(key_env, sizeof(key_env), "%s/signer.key", dir);
	setenv("KSHIELD_FLEET_KEY", key_env, 1);
	ks_fake_notes(dir, ID_A);
}

static void teardown(void)
{
	if (agent > 0) {
		kill(agent, SIGTERM);
		waitpid(agent, NULL, 0);
		agent = -1;
	}
	ks_runf(NULL, NULL, "rm -rf /sys/fs/bpf/ks-fleet-sites-%d %s", getpid(), dir);
}

TestSuite(fleet_sites, .init = setup, .fini = teardown, .timeout = 120);

static json_object *wait_status(const char *status)
{
	char cmd[1024], *err = NULL;
	json_object *o;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j fleet wait %s --status %s --count 1 --timeout 30 --nats %s",
		 ks_bin(), SHIELD, status, urls);
	o = ks_run_json(cmd, &rc, &err);
	cr_assert_eq(rc, 0, "the agent never reported %s: %s", status, err);
	free(err);
	return o;
}

/* The status record of our host. */
static json_object *host_status(const char *host)
{
	char cmd[1024];
	json_object *arr, *s, *hosts, *r = NULL;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j fleet status %s --nats %s", ks_bin(), SHIELD, urls);
	arr = ks_run_json(cmd, &rc, NULL);
	cr_assert(arr && rc == 0, "fleet status failed");
	s = json_object_array_get_idx(arr, 0);
	hosts = ks_json_get(s, "per_host");
	for (size_t i = 0; hosts && i < json_object_array_length(hosts); i++)
		if (!strcmp(json_object_get_string(ks_json_get(json_object_array_get_idx(hosts, i),
								"host")) ?: "", host))
			r = json_object_get(json_object_array_get_idx(hosts, i));
	json_object_put(arr);
	return r;
}

Test(fleet_sites, agent_installs_its_kernels_verified_manifest)
{
	char host[64], *a = NULL, *b = NULL;
	json_object *st;
	pid_t pid, me = getpid();	/* the child's getpid() differs: teardown removes ours */

	cluster_up();
	snprintf(host, sizeof(host), "ksites-%d", me);
	manifest("a.json", ID_A, 16);
	manifest("b.json", ID_B, 32);
	ks_sh_ok("%s sites sign %s/a.json --key %s/signer.key >/dev/null && "
	      "%s sites sign %s/b.json --key %s/signer.key >/dev/null", ks_bin(), dir, dir, ks_bin(),
	      dir, dir);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[2048];

		snprintf(cmd, sizeof(cmd), "KSHIELD_KERNEL_NOTES=%s/notes KSHIELD_SITES_DIR=%s/sites "
			 "exec %s --bpffs /sys/fs/bpf/ks-fleet-sites-%d fleet agent --nats %s --keys "
			 "%s/trust --host %s --state %s/state --resync 5 >%s/agent.log 2>&1", dir, dir,
			 ks_bin(), me, host_urls, dir, host, dir, dir);
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	agent = pid;

	ks_sh_ok("%s fleet deploy %s/kernel-sites.bpf.o --hosts '%s' --sites %s/a.json --sites %s/b.json "
	      "--nats %s", ks_bin(), dir, host, dir, dir, urls);
	json_object_put(wait_status("failed"));
	st = host_status(host);
	cr_assert_not_null(st);
	/* Past the signatures: the load itself is what failed here. */
	cr_expect_str_eq(json_object_get_string(ks_json_get(st, "status")), "failed");
	cr_expect_null(strstr(json_object_get_string(ks_json_get(st, "error")), "signature"), "%s",
		       json_object_get_string(st));
	cr_expect_not_null(strstr(json_object_get_string(ks_json_get(st, "error")), "kprobe"), "%s",
			   json_object_get_string(st));
	json_object_put(st);
	cr_expect_eq(ks_runf(NULL, NULL, "cmp %s/a.json %s/sites/" ID_A ".json && cmp %s/a.json.sig "
			     "%s/sites/" ID_A ".json.sig", dir, dir, dir, dir), 0,
		     "this kernel's manifest and signature not installed");
	ks_runf(&a, NULL, "ls %s/sites", dir);
	cr_expect_null(strstr(a, ID_B), "another kernel's manifest installed: %s", a);
	free(a);

	/* Forged: this kernel's manifest altered after signing (an offset of
	 * the forger's choice), signature kept. Refused; the installed one
	 * stays as it was. */
	manifest("forged.json", ID_A, 17);
	ks_sh_ok("cp %s/a.json.sig %s/forged.json.sig", dir, dir);
	ks_sh_ok("%s fleet deploy %s/kernel-sites.bpf.o --hosts '%s' --sites %s/forged.json --nats %s",
	      ks_bin(), dir, host, dir, urls);
	json_object_put(wait_status("refused"));
	st = host_status(host);
	cr_assert_not_null(st);
	cr_expect_not_null(strstr(json_object_get_string(ks_json_get(st, "error")), "bad signature"),
			   "%s", json_object_get_string(st));
	cr_expect_not_null(strstr(json_object_get_string(ks_json_get(st, "error")), ID_A), "%s",
			   json_object_get_string(st));
	json_object_put(st);
	ks_runf(&b, NULL, "cat %s/sites/" ID_A ".json", dir);
	cr_expect_not_null(strstr(b, "\"symbol_offset\": 16"), "forged manifest installed: %s", b);
	free(b);
	ks_sh_ok("%s fleet rollback %s --nats %s", ks_bin(), SHIELD, urls);
}
