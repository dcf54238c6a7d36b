// SPDX-License-Identifier: MIT
/* test_fleet_btf.c - kernels' BTF travelling in a shield's signed bundle
 * (fleet_btf.h): `fleet deploy --btf DIR` stores each <build-id>.btf and
 * lists it in the signed record; a host whose kernel has no BTF (here:
 * $KSHIELD_SYSFS_BTF pointing nowhere, and a build ID of our own in
 * $KSHIELD_KERNEL_NOTES) takes the one for its build ID, checked against
 * the record, into btf_dir, and `btf find` names the bundle as its source.
 * Bytes that differ from what the record says (put into the objects bucket
 * behind kshield's back: tests/fleet/kv-put-raw.sh) and records whose
 * signature fails are refused with one line and nothing is written.
 *
 * Nothing here loads BPF: `fleet btf` stops once the BTF is kept, and the
 * fleet agent runs with --control-plane (it checks objects and BTF, loads
 * nothing). The BTF files are the host's /sys/kernel/btf/vmlinux cut by
 * `kshield btf min` for one shield each: a few hundred bytes and 8 KB, two
 * different valid BTFs. Uses the NATS cluster of test_fleet.c (same
 * directory, stopped by its POST_ALL hook).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/stat.h>
#include "fleet_harness.h"

#define ID_A "00112233445566778899aabbccddeeff00112233"	/* "this kernel" */
#define ID_B "ffeeddccbbaa99887766554433221100ffeeddcc"	/* another one */

static char dir[256], cdir[256], urls[512], host_urls[512], nobtf[1024], key_env[300];
static pid_t agent = -1;

/* The cluster of test_fleet.c: one per test runner. */
static void cluster_up(void)
{
	ks_fleet_cluster_up(cdir, sizeof(cdir), urls, sizeof(urls), host_urls, sizeof(host_urls));
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-fleet-btf-%d", getpid());
	ks_sh_ok("rm -rf %s && mkdir -p %s/trust %s/bundle %s/btf", dir, dir, dir, dir);
	ks_sh_ok("%s shield keygen %s/signer >/dev/null && cp %s/signer.pub %s/trust/", ks_bin(), dir,
	      dir, dir);
	snprintf(key_env, sizeof(key_env), "%s/signer.key", dir);
	setenv("KSHIELD_FLEET_KEY", key_env, 1);	/* signs the desired records */
	/* Two different BTFs, named as `btf export`/`btf min` name them. */
	ks_sh_ok("%s btf min --shield cve-2023-4911 --no-agent -o %s/bundle/" ID_A ".btf >/dev/null && "
	      "%s btf min --shield cve-2021-4034 --no-agent -o %s/bundle/" ID_B ".min.btf >/dev/null",
	      ks_bin(), dir, ks_bin(), dir);
	ks_fake_notes(dir, ID_A);
	/* This "host": no BTF of its own, kernel ID_A, its own btf_dir. */
	snprintf(nobtf, sizeof(nobtf), "env -u DEBUGINFOD_URLS KSHIELD_SYSFS_BTF=/nonexistent "
		 "KSHIELD_KERNEL_NOTES=%s/notes KSHIELD_BTF_DIR=%s/btf", dir, dir);
}

static void teardown(void)
{
	if (agent > 0) {
		kill(agent, SIGTERM);
		waitpid(agent, NULL, 0);
		agent = -1;
	}
	ks_runf(NULL, NULL, "rm -rf %s", dir);
}

TestSuite(fleet_btf, .init = setup, .fini = teardown, .timeout = 120);

/* Sign bundled shield @shield and deploy it to hosts @hosts with the BTF. */
static void deploy(const char *shield, const char *hosts)
{
	ks_sh_ok("cp %s/%s.bpf.o %s/ && %s shield sign %s/%s.bpf.o --key %s/signer.key >/dev/null",
	      ks_shields_dir(), shield, dir, ks_bin(), dir, shield, dir);
	ks_sh_ok("%s fleet deploy %s/%s.bpf.o --hosts '%s' --btf %s/bundle --nats %s >/dev/null",
	      ks_bin(), dir, shield, hosts, dir, urls);
}

/* The sha256 of dir/@name in hex (free() it). */
static char *sha256_of(const char *name)
{
	char *out = NULL;

	cr_assert_eq(ks_runf(&out, NULL, "sha256sum %s/%s | cut -c1-64", dir, name), 0);
	out[64] = '\0';
	return out;
}

static bool exists(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st);
}

/* `kshield ARGS` on this "host"; its exit status, stdout, stderr. */
static int host_run(char **out, char **err, const char *args)
{
	return ks_runf(out, err, "%s %s %s", nobtf, ks_bin(), args);
}

/* The lines of @s (a trailing newline ends the last). */
static int lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

Test(fleet_btf, deploy_carries_btf_and_host_keeps_its_own)
{
	char args[1024], *out = NULL, *err = NULL, *sha_a, *sha_b;
	json_object *rec, *body;
	struct stat st;
	int rc;

	cluster_up();
	deploy("cve-2023-4911", "nobody-*");
	sha_a = sha256_of("bundle/" ID_A ".btf");
	sha_b = sha256_of("bundle/" ID_B ".min.btf");

	/* The signed body lists both builds, by the sha256 of their bytes. */
	snprintf(args, sizeof(args), "%s fleet record cve-2023-4911 --nats %s", ks_bin(), urls);
	rec = ks_run_json(args, &rc, NULL);
	cr_assert(rec && !rc);
	body = ks_json_parse(json_object_get_string(ks_json_get(rec, "signed")));
	cr_assert_not_null(body);
	cr_expect_str_eq(json_object_get_string(ks_json_get(body, "btf." ID_A ".sha256")), sha_a);
	cr_expect_str_eq(json_object_get_string(ks_json_get(body, "btf." ID_B ".sha256")), sha_b);
	snprintf(args, sizeof(args), "%s/bundle/" ID_A ".btf", dir);
	cr_expect(!stat(args, &st) && json_object_get_int64(ks_json_get(body, "btf." ID_A ".size")) ==
		  st.st_size, "size of ID_A's BTF not in the record");
	json_object_put(body);
	json_object_put(rec);

	/* No BTF here and none in btf_dir: the lookup says what to do. */
	rc = host_run(NULL, &err, "btf find");
	cr_expect_neq(rc, 0);
	cr_expect(strstr(err, "no BTF found for build ID " ID_A), "%s", err);
	free(err);

	/* From any record that lists this kernel: only ID_A's is kept, the
	 * bundle's very bytes. */
	snprintf(args, sizeof(args), "fleet btf --keys %s/trust --nats %s", dir, host_urls);
	rc = host_run(&out, &err, args);
	cr_assert_eq(rc, 0, "%s%s", out, err);
	cr_expect(strstr(out, "signed bundle of cve-2023-4911: checked against the signed record "
			 "and kept"), "%s", out);
	free(out);
	free(err);
	ks_sh_ok("cmp %s/btf/" ID_A ".btf %s/bundle/" ID_A ".btf", dir, dir);
	cr_expect(!exists("btf/" ID_B ".btf"), "another kernel's BTF was kept here");

	rc = host_run(&out, &err, "btf find");
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "no BTF: using BTF from the signed bundle of cve-2023-4911 for build "
			 "ID " ID_A), "%s", out);
	free(out);
	free(err);

	/* btf_dir first: a file there is kept, the bundle's not fetched. */
	snprintf(args, sizeof(args), "fleet btf cve-2023-4911 --keys %s/trust --nats %s", dir,
		 host_urls);
	rc = host_run(&out, &err, args);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "btf_dir has it already"), "%s", out);
	free(out);
	free(err);

	/* Replaced since by other bytes: no longer named as the bundle's. */
	ks_sh_ok("cp %s/bundle/" ID_B ".min.btf %s/btf/" ID_A ".btf", dir, dir);
	rc = host_run(&out, &err, "-j btf find");
	cr_assert_eq(rc, 0, "%s", err);
	body = ks_json_parse(out);
	cr_expect_str_eq(json_object_get_string(ks_json_get(body, "source")), "btf_dir");
	json_object_put(body);
	free(out);
	free(err);
	free(sha_a);
	free(sha_b);
}

/* The agent's log and what fleet status says, when a wait failed. */
static void show_agent(void)
{
	char *out = NULL;

	ks_runf(&out, NULL, "cat %s/agent.log; %s fleet status --nats %s", dir, ks_bin(), urls);
	cr_log_error("%s", out);
	free(out);
}

Test(fleet_btf, tampered_btf_is_refused_and_nothing_kept)
{
	char args[1024], host[64], *out = NULL, *err = NULL, *sha_a;
	json_object *st;
	pid_t pid, me = getpid();
	int rc;

	cluster_up();
	snprintf(host, sizeof(host), "kbtf-%d", me);
	deploy("cve-2021-4034", host);
	sha_a = sha256_of("bundle/" ID_A ".btf");
	/* Another kernel's BTF (valid BTF, signed for ID_B) under ID_A's key. */
	ks_sh_ok("tests/fleet/kv-put-raw.sh %.*s kshield_objects %s %s/bundle/" ID_B ".min.btf",
	      (int)strcspn(urls, ","), urls, sha_a, dir);

	snprintf(args, sizeof(args), "fleet btf cve-2021-4034 --keys %s/trust --nats %s", dir,
		 host_urls);
	rc = host_run(&out, &err, args);
	cr_expect_neq(rc, 0, "tampered BTF accepted: %s", out);
	cr_expect_eq(lines(err), 1, "not one line: %s", err);
	cr_expect(strstr(err, "BTF for build ID " ID_A " in the signed bundle of cve-2021-4034 does "
			 "not match its signed sha256"), "%s", err);
	cr_expect(strstr(err, "refused, nothing loaded with it"), "%s", err);
	cr_expect(!exists("btf/" ID_A ".btf") && !exists("btf/" ID_A ".btf.from"),
		  "tampered BTF written to btf_dir");
	free(out);
	free(err);

	/* The fleet agent refuses the shield with that line. */
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char cmd[2048];

		snprintf(cmd, sizeof(cmd), "exec %s %s fleet agent --control-plane --nats %s --keys "
			 "%s/trust --host %s --state %s/state --resync 5 >%s/agent.log 2>&1", nobtf,
			 ks_bin(), host_urls, dir, host, dir, dir);
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	agent = pid;
	snprintf(args, sizeof(args), "%s -j fleet wait cve-2021-4034 --status refused --count 1 "
		 "--timeout 30 --nats %s", ks_bin(), urls);
	st = ks_run_json(args, &rc, &err);
	if (rc)
		show_agent();
	cr_assert_eq(rc, 0, "the agent never refused: %s", err);
	json_object_put(st);
	free(err);
	snprintf(args, sizeof(args), "%s -j fleet status cve-2021-4034 --nats %s", ks_bin(), urls);
	st = ks_run_json(args, &rc, NULL);
	cr_assert(st && !rc);
	cr_expect(strstr(json_object_get_string(ks_json_get(st, "0.per_host.0.error")) ?: "",
			 "BTF for build ID " ID_A " in the signed bundle of cve-2021-4034 does not "
			 "match its signed sha256"), "%s", json_object_to_json_string(st));
	json_object_put(st);

	/* Deployed again, the bytes are right again: the agent takes it. */
	deploy("cve-2021-4034", host);
	snprintf(args, sizeof(args), "%s -j fleet wait cve-2021-4034 --status enforcing --count 1 "
		 "--timeout 30 --nats %s", ks_bin(), urls);
	st = ks_run_json(args, &rc, &err);
	if (rc)
		show_agent();
	cr_expect_eq(rc, 0, "the agent never took the right BTF: %s", err);
	json_object_put(st);
	free(err);
	free(sha_a);
}

Test(fleet_btf, btf_named_in_a_forged_record_is_refused)
{
	char args[1024], rec_path[512], *out = NULL, *err = NULL, *sha_a, *sha_b, *txt;
	json_object *rec;
	int rc;

	cluster_up();
	deploy("cve-2021-3156", "nobody-*");
	sha_a = sha256_of("bundle/" ID_A ".btf");
	sha_b = sha256_of("bundle/" ID_B ".min.btf");
	/* The stored record edited to name ID_B's bytes for ID_A, signature
	 * kept, and published as it is. */
	snprintf(args, sizeof(args), "%s fleet record cve-2021-3156 --nats %s", ks_bin(), urls);
	rec = ks_run_json(args, &rc, NULL);
	cr_assert(rec && !rc);
	txt = strdup(json_object_get_string(ks_json_get(rec, "signed")));
	cr_assert(strstr(txt, sha_a));
	memcpy(strstr(txt, sha_a), sha_b, 64);
	json_object_object_add(rec, "signed", json_object_new_string(txt));
	snprintf(rec_path, sizeof(rec_path), "%s/forged.json", dir);
	cr_assert_eq(json_object_to_file(rec_path, rec), 0);
	ks_sh_ok("%s fleet publish cve-2021-3156 %s --nats %s >/dev/null", ks_bin(), rec_path, urls);

	snprintf(args, sizeof(args), "fleet btf cve-2021-3156 --keys %s/trust --nats %s", dir,
		 host_urls);
	rc = host_run(&out, &err, args);
	cr_expect_neq(rc, 0, "forged record used: %s", out);
	cr_expect_eq(lines(err), 1, "not one line: %s", err);
	cr_expect(strstr(err, "desired record of cve-2021-3156"), "%s", err);
	cr_expect(!exists("btf/" ID_A ".btf"), "BTF from a forged record written to btf_dir");
	free(out);
	free(err);
	free(txt);
	free(sha_a);
	free(sha_b);
	json_object_put(rec);
}

Test(fleet_btf, deploy_refuses_what_is_not_a_kernels_btf)
{
	char *err = NULL;
	int rc;

	cluster_up();
	ks_sh_ok("cp %s/cve-2023-4911.bpf.o %s/ && %s shield sign %s/cve-2023-4911.bpf.o --key "
	      "%s/signer.key >/dev/null && mkdir -p %s/bad && echo garbage > %s/bad/" ID_A ".btf && "
	      "cp %s/bundle/" ID_A ".btf %s/bad/vmlinux.btf", ks_shields_dir(), dir, ks_bin(), dir,
	      dir, dir, dir, dir, dir);
	/* Not named by a build ID. */
	rc = ks_runf(NULL, &err, "%s fleet deploy %s/cve-2023-4911.bpf.o --hosts 'nobody-*' --btf "
		     "%s/bad/vmlinux.btf --nats %s", ks_bin(), dir, dir, urls);
	cr_expect_neq(rc, 0);
	cr_expect(strstr(err, "name it <build-id>.btf"), "%s", err);
	free(err);
	/* Not BTF. */
	rc = ks_runf(NULL, &err, "%s fleet deploy %s/cve-2023-4911.bpf.o --hosts 'nobody-*' --btf "
		     "%s/bad/" ID_A ".btf --nats %s", ks_bin(), dir, dir, urls);
	cr_expect_neq(rc, 0);
	cr_expect(strstr(err, "not raw BTF"), "%s", err);
	cr_expect_eq(lines(err), 1, "not one line: %s", err);
	free(err);
}
