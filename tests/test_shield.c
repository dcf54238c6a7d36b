// SPDX-License-Identifier: MIT
/* test_shield.c - the shield loader on this host's real kernel, driven
 * through the kshield binary: enforcement, audit, survival of the loader's
 * death, unload, new-before-old replacement, and every bad input's one-line
 * error with nothing left pinned. The fixture-sockopt fixture enforces
 * here through cgroup/setsockopt (the host refuses BPF LSM and
 * trampolines); `kshield test` is shown on cve-2021-3156 (its tp variant
 * runs here) and on coverage fixtures built from it. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include "harness.h"

#define SHIELD KS_SOCKOPT_SHIELD
/* A real shield whose `kshield test` runs here (tp variant). */
#define TESTED "cve-2021-3156"
/* The exploit's trigger shape: table replace from a new user+net ns. */
#define TRIGGER "unshare -Urn iptables-legacy -w -A INPUT -j ACCEPT"
/* The same call by real root (initial user ns), in a scratch net ns. */
#define BENIGN "unshare -n iptables-legacy -w -A INPUT -j ACCEPT"

static char root[128];
static char obj[512], tested_obj[512];

static void setup(void)
{
	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-test-%d", getpid());
	snprintf(obj, sizeof(obj), "%s/" KS_SOCKOPT_OBJ, ks_fixtures_dir());
	snprintf(tested_obj, sizeof(tested_obj), "%s/" TESTED ".bpf.o", ks_shields_dir());
	setenv("KSHIELD_BPFFS", root, 1);
}

static void teardown(void)
{
	ks_runf(NULL, NULL, "%s shield unload %s; rm -rf %s", ks_bin(), SHIELD, root);
	/* t12's second root, loaded there whatever the test's outcome. */
	ks_runf(NULL, NULL, "%s --bpffs %s-other shield unload %s; rm -rf %s-other",
		ks_bin(), root, TESTED, root);
}

TestSuite(shield, .init = setup, .fini = teardown);

static int sh(const char *cmd)
{
	return ks_run(cmd, NULL, NULL);
}

static json_object *shield_state(void)
{
	char cmd[256];
	json_object *arr, *o = NULL;

	snprintf(cmd, sizeof(cmd), "%s -j shield list", ks_bin());
	arr = ks_run_json(cmd, NULL, NULL);
	cr_assert(arr && json_object_is_type(arr, json_type_array), "shield list -j is not an array");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (!strcmp(json_object_get_string(ks_json_get(e, "name")), SHIELD))
			o = json_object_get(e);
	}
	json_object_put(arr);
	return o;
}

static long long hits(const char *verdict)
{
	char path[64];
	json_object *o = shield_state();
	long long n;

	cr_assert(o, "shield not listed");
	snprintf(path, sizeof(path), "verdicts.%s", verdict);
	n = json_object_get_int64(ks_json_get(o, path));
	json_object_put(o);
	return n;
}

static void load(const char *extra)
{
	char *err;
	int rc = ks_runf(NULL, &err, "%s shield load %s %s", ks_bin(), obj, extra);

	cr_assert_eq(rc, 0, "load failed: %s", err);
	free(err);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

Test(shield, t01_enforces_and_records_a_hit)
{
	json_object *o;

	cr_assert_eq(sh(TRIGGER " 2>/dev/null"), 0, "trigger must pass before the shield is loaded");
	load("");
	o = shield_state();
	cr_assert(o);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "mode")), "enforce");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "variant")), "cgroup");
	cr_expect_eq(json_object_get_int(ks_json_get(o, "links")), 1);
	json_object_put(o);

	cr_assert_neq(sh(TRIGGER " 2>/dev/null"), 0, "trigger passed while enforcing");
	cr_assert_eq(hits("refused"), 1, "one refusal must be counted");
	cr_assert_eq(sh(BENIGN), 0, "real root's iptables must keep working");
	cr_assert_eq(hits("refused"), 1, "real root must not be counted");
}

Test(shield, t02_audit_allows_and_counts_then_enforce_again)
{
	load("--audit");
	cr_assert_eq(sh(TRIGGER), 0, "audit mode must let the trigger through");
	cr_assert_eq(hits("audited"), 1);
	cr_assert_eq(hits("refused"), 0);
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield mode %s enforce", ks_bin(), SHIELD), 0);
	cr_assert_neq(sh(TRIGGER " 2>/dev/null"), 0, "mode change must take effect at once");
	cr_assert_eq(hits("refused"), 1);
}

Test(shield, t03_survives_sigkill_of_the_loader)
{
	char *err;
	int rc;

	/* strace turns the loader's exit into a SIGKILL: nothing it might do
	 * on a clean exit happens. */
	rc = ks_runf(NULL, &err, "strace -qq -o /dev/null -e trace=exit_group "
		     "-e inject=exit_group:signal=KILL %s shield load %s", ks_bin(), obj);
	cr_assert_eq(rc, 128 + SIGKILL, "loader was not killed (rc %d): %s", rc, err);
	free(err);
	cr_assert_neq(sh(TRIGGER " 2>/dev/null"), 0, "shield stopped enforcing when its loader died");
	cr_assert_eq(hits("refused"), 1);
}

Test(shield, t04_unload_restores_the_call_and_removes_pins)
{
	char dir[256];

	load("");
	cr_assert_neq(sh(TRIGGER " 2>/dev/null"), 0);
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield unload %s", ks_bin(), SHIELD), 0);
	cr_assert_eq(sh(TRIGGER), 0, "trigger must pass after unload");
	snprintf(dir, sizeof(dir), "%s/shields", root);
	cr_assert_eq(count_entries(dir), 0, "pins left behind after unload");
}

Test(shield, t05_replace_is_new_before_old_with_no_gap)
{
	char cmd[1024], *out;
	json_object *o;
	int passed;

	load("");
	/* Hammer the trigger while the shield is replaced ten times: not one
	 * call may get through. */
	snprintf(cmd, sizeof(cmd),
		 "n=0; (for i in $(seq 10); do %s shield load %s >/dev/null || exit 9; done) & l=$!; "
		 "while kill -0 $l 2>/dev/null; do " TRIGGER " 2>/dev/null && n=$((n+1)); done; "
		 "wait $l || echo loadfail; echo $n", ks_bin(), obj);
	cr_assert_eq(ks_run(cmd, &out, NULL), 0);
	cr_assert_null(strstr(out, "loadfail"), "a replacing load failed");
	passed = atoi(out);
	free(out);
	cr_assert_eq(passed, 0, "%d trigger calls passed during replacement", passed);
	o = shield_state();
	cr_assert_eq(json_object_get_int(ks_json_get(o, "links")), 1, "links must not pile up");
	json_object_put(o);
	cr_assert_neq(sh(TRIGGER " 2>/dev/null"), 0);
}

/* Each bad input: non-zero exit, exactly one "error: " line, no pins. */
static void expect_error(const char *args, const char *needle)
{
	char *out, *err, dir[256];
	int rc = ks_runf(&out, &err, "%s %s", ks_bin(), args);

	cr_expect_neq(rc, 0, "'%s' should fail", args);
	cr_expect(!strncmp(err, "error: ", 7), "'%s': stderr is not one error line: %s", args, err);
	cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "'%s': more than one line: %s", args, err);
	cr_expect(strstr(err, needle), "'%s': expected '%s' in: %s", args, needle, err);
	snprintf(dir, sizeof(dir), "%s/shields", root);
	cr_expect_eq(count_entries(dir), 0, "'%s' left pins behind", args);
	free(out);
	free(err);
}

Test(shield, t06_bad_inputs_give_one_line_and_leave_no_pin)
{
	char args[1024];
	const char *fx = getenv("KSHIELD_FIXTURES");

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	expect_error("shield load /etc/passwd", "not an ELF file");
	expect_error("shield load /bin/true", "not a BPF object");
	snprintf(args, sizeof(args), "shield load %s/not-a-shield.bpf.o", fx);
	expect_error(args, "not a kshield shield");
	snprintf(args, sizeof(args), "shield load %s/verifier-reject.bpf.o", fx);
	expect_error(args, "verifier: ");
	expect_error(args, "invalid access to map value");
	snprintf(args, sizeof(args), "shield load %s/lsm-only.bpf.o", fx);
	expect_error(args, "no variant of fixture-lsm-only loads on this kernel: lsm: lsm__create: load: Operation not permitted");
	expect_error("shield load /nonexistent.bpf.o", "can't open /nonexistent.bpf.o");
	expect_error("shield unload no-such-shield", "shield no-such-shield is not loaded");
	expect_error("shield mode no-such-shield audit", "is not loaded");
	expect_error("shield mode " SHIELD " sideways", "unknown mode 'sideways'");
	expect_error("shield frobnicate", "unknown command 'frobnicate'");
	snprintf(args, sizeof(args), "--bpffs /tmp/ks-not-bpffs shield load %s", obj);
	expect_error(args, "not on a bpf file system: mount it with 'mount -t bpf bpf /sys/fs/bpf'");
	snprintf(args, sizeof(args), "shield load %s", obj);
	{
		char *err;
		int rc = ks_runf(NULL, &err, "setpriv --reuid 65534 --regid 65534 --clear-groups "
				 "%s shield load %s", ks_bin(), obj);

		cr_expect_neq(rc, 0);
		cr_expect(strstr(err, "error: not privileged"), "unprivileged load: %s", err);
		free(err);
	}
}

Test(shield, t07_json_errors_and_listing)
{
	char *out, *err;
	json_object *o;
	int rc;

	rc = ks_runf(&out, &err, "%s -j shield unload nope", ks_bin());
	cr_assert_neq(rc, 0);
	o = ks_json_parse(err);
	cr_assert(o, "-j error is not JSON: %s", err);
	cr_assert(strstr(json_object_get_string(ks_json_get(o, "error")), "not loaded"));
	json_object_put(o);
	free(out);
	free(err);

	/* Unambiguous prefixes work, like bpftool. */
	load("");
	rc = ks_runf(&out, NULL, "%s -j sh li", ks_bin());
	cr_assert_eq(rc, 0);
	o = ks_json_parse(out);
	cr_assert(o && json_object_array_length(o) == 1);
	json_object_put(o);
	free(out);
}

Test(shield, t08_info_reads_metadata_without_loading)
{
	char cmd[600], dir[256];
	json_object *o;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j shield info %s/cve-2021-22555.bpf.o", ks_bin(),
		 ks_shields_dir());
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o && rc == 0);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "name")), "cve-2021-22555");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "cve")), "CVE-2021-22555");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "variants")), "lsm,fmod_ret,kprobe,tp");
	/* Coverage per variant, from prevents_<v> / detects_<v>. */
	cr_expect_str_eq(json_object_to_json_string_ext(ks_json_get(o, "coverage.fmod_ret.prevents"),
							JSON_C_TO_STRING_PLAIN),
			 "[\"compat-ipt\",\"compat-ip6t\",\"compat-arpt\",\"socketcall-ipt\",\"int80-ipt\"]");
	cr_expect_eq(json_object_array_length(ks_json_get(o, "coverage.kprobe.prevents")), 5);
	cr_expect_eq(json_object_array_length(ks_json_get(o, "coverage.tp.prevents")), 0);
	cr_expect_eq(json_object_array_length(ks_json_get(o, "coverage.tp.detects")), 5);
	cr_expect(json_object_get_boolean(ks_json_get(o, "coverage.tp.declared")));
	cr_expect(ks_json_get(o, "hunt"));
	cr_expect_eq(strlen(json_object_get_string(ks_json_get(o, "sha256"))), 64);
	json_object_put(o);
	snprintf(dir, sizeof(dir), "%s/shields", root);
	cr_expect_eq(count_entries(dir), 0, "info must not load anything");
}

Test(shield, t09_test_proves_the_shield_here)
{
	char cmd[600];
	json_object *o;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j test " TESTED " --object %s", ks_bin(), tested_obj);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o, "kshield test printed no JSON");
	cr_expect_eq(rc, 0, "error: %s", json_object_get_string(ks_json_get(o, "error")));
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "variant")), "tp");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "paths.0.name")), "native");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "paths.0.status")), "prevented");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "paths.0.coverage")), "prevents");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "vulnerable")), "unknown");
	cr_expect(!json_object_get_boolean(ks_json_get(o, "partial")));
	cr_expect(json_object_get_boolean(ks_json_get(o, "trigger_refused")));
	cr_expect(json_object_get_boolean(ks_json_get(o, "benign_ok")));
	cr_expect(json_object_get_boolean(ks_json_get(o, "audit_ok")));
	cr_expect(json_object_get_boolean(ks_json_get(o, "unload_ok")));
	json_object_put(o);
}

Test(shield, t10_version_and_help_at_every_level)
{
	char *out, *err;

	cr_expect_eq(ks_runf(&out, NULL, "%s --version", ks_bin()), 0);
	cr_expect(!strncmp(out, "kshield ", 8));
	free(out);
	cr_expect_eq(ks_runf(NULL, &err, "%s help", ks_bin()), 0);
	cr_expect(strstr(err, "Usage: kshield"));
	free(err);
	cr_expect_eq(ks_runf(NULL, &err, "%s shield help", ks_bin()), 0);
	cr_expect(strstr(err, "kshield shield load FILE"));
	free(err);
	cr_expect_eq(ks_runf(NULL, &err, "%s test help", ks_bin()), 0);
	cr_expect(strstr(err, "kshield test NAME"));
	free(err);
}

/* Plain text of `kshield test` says what did not run: "n/a: <reason>" when
 * the trigger cannot run here, "unprotected: <why>" when no variant loads,
 * and never "ok" for a step that did not run. */
Test(shield, t11_test_plain_text_never_says_ok_for_what_did_not_run)
{
	const char *fx = getenv("KSHIELD_FIXTURES");
	char *out, *err, prefix[64], cmd[512];
	json_object *o;
	int rc;

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	/* The trigger runs here, then no variant of the fixture loads. */
	rc = ks_runf(&out, &err, "%s test " TESTED " --object %s/lsm-only.bpf.o", ks_bin(), fx);
	cr_expect_eq(rc, 1, "stderr: %s", err);
	snprintf(prefix, sizeof(prefix), "%-22s unprotected: no variant of ", TESTED);
	cr_expect(!strncmp(out, prefix, strlen(prefix)), "got: %s", out);
	cr_expect(!strstr(out, " ok"), "a step that did not run says ok: %s", out);
	free(out);
	free(err);

	/* AF_RXRPC is a module that this host's kernel cannot load. */
	snprintf(cmd, sizeof(cmd), "%s -j test cve-2026-43500", ks_bin());
	o = ks_run_json(cmd, NULL, NULL);
	if (!o || !json_object_get_boolean(ks_json_get(o, "not_applicable"))) {
		json_object_put(o);
		cr_skip("cve-2026-43500 runs on this host: no n/a case to show");
	}
	json_object_put(o);
	rc = ks_runf(&out, &err, "%s test cve-2026-43500", ks_bin());
	cr_expect_eq(rc, 1, "stderr: %s", err);
	snprintf(prefix, sizeof(prefix), "%-22s n/a: ", "cve-2026-43500");
	cr_expect(!strncmp(out, prefix, strlen(prefix)), "got: %s", out);
	cr_expect(strlen(out) > strlen(prefix) + 1 && !strchr(out, '\n')[1], "one line with a reason: %s", out);
	cr_expect(!strstr(out, " ok") && !strstr(out, " benign "), "got: %s", out);
	free(out);
	free(err);
}

/* The same shield enforcing under another bpffs root refuses the baseline
 * trigger: the test says it did not run, names the program that refused,
 * and fails (not a pass, not n/a); once unloaded there, the test passes. */
Test(shield, t12_test_names_the_shield_loaded_under_another_root)
{
#undef SHIELD
#define SHIELD TESTED
#define obj tested_obj
	char other[160], cmd[700], want[64];
	json_object *o;
	char *out, *err;
	int rc;

	snprintf(other, sizeof(other), "%s-other", root);
	cr_assert_eq(ks_runf(NULL, &err, "mkdir -p %s && %s --bpffs %s shield load %s",
			     other, ks_bin(), other, obj), 0, "load elsewhere: %s", err);
	free(err);

	snprintf(cmd, sizeof(cmd), "%s -j test %s --object %s", ks_bin(), SHIELD, obj);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o, "kshield test printed no JSON");
	cr_expect_eq(rc, 1);
	cr_expect(!json_object_get_boolean(ks_json_get(o, "trigger_refused")));
	cr_expect(!json_object_get_boolean(ks_json_get(o, "not_applicable")));
	cr_expect(strstr(json_object_get_string(ks_json_get(o, "refused_by")) ?: "",
			 "tp__exec (id "), "refused_by: %s",
		  json_object_get_string(ks_json_get(o, "refused_by")));
	json_object_put(o);

	rc = ks_runf(&out, &err, "%s test %s --object %s", ks_bin(), SHIELD, obj);
	cr_expect_eq(rc, 1, "stderr: %s", err);
	snprintf(want, sizeof(want), "%-22s not run: ", SHIELD);
	cr_expect(!strncmp(out, want, strlen(want)), "got: %s", out);
	cr_expect(strstr(out, "already refused here by tp__exec (id "), "got: %s", out);
	cr_expect(strstr(out, "unload it"), "got: %s", out);
	cr_expect(!strstr(out, " ok"), "got: %s", out);
	free(out);
	free(err);
	snprintf(cmd, sizeof(cmd), "%s/shields", root);
	cr_expect_eq(count_entries(cmd), 0, "the failed test left a shield pinned under %s", root);

	cr_assert_eq(ks_runf(NULL, &err, "%s --bpffs %s shield unload %s", ks_bin(), other,
			     SHIELD), 0, "unload elsewhere: %s", err);
	free(err);
	rc = ks_runf(&out, &err, "%s test %s --object %s", ks_bin(), SHIELD, obj);
	cr_expect_eq(rc, 0, "out: %s err: %s", out, err);
	free(out);
	free(err);
}
#undef obj

/* Coverage held path by path: the same cve-2021-3156 programs built with
 * coverage metadata that does not list its "native" path (partial: exit 1,
 * "tp: native not covered", never a pass), or lists it as detected only
 * (a hit must be recorded; pass, detect only). */
Test(shield, t13_test_holds_each_path_to_the_variants_claim)
{
	const char *fx = getenv("KSHIELD_FIXTURES");
	char *out = NULL, *err = NULL, cmd[600];
	json_object *o;
	int rc;

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	snprintf(cmd, sizeof(cmd), "%s -j test " TESTED " --object %s/coverage-uncovered.bpf.o",
		 ks_bin(), fx);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o, "kshield test printed no JSON");
	cr_expect_eq(rc, 1, "a partial test passed");
	cr_expect(json_object_get_boolean(ks_json_get(o, "partial")));
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "coverage_note")), "tp: native not covered");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "paths.0.status")), "not-covered");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "not_covered.0")), "native");
	json_object_put(o);
	rc = ks_runf(&out, &err, "%s test " TESTED " --object %s/coverage-uncovered.bpf.o", ks_bin(), fx);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(out, "partial: tp: native not covered"), "got: %s", out);
	free(out);
	free(err);

	snprintf(cmd, sizeof(cmd), "%s -j test " TESTED " --object %s/coverage-detects.bpf.o",
		 ks_bin(), fx);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o, "kshield test printed no JSON");
	cr_expect_eq(rc, 0, "error: %s", json_object_get_string(ks_json_get(o, "error")));
	cr_expect(json_object_get_boolean(ks_json_get(o, "detect_only")));
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "paths.0.status")), "detected");
	cr_expect(json_object_get_boolean(ks_json_get(o, "paths.0.hit")));
	json_object_put(o);
}

/* A tracepoint variant needs tracefs. Where it is not mounted (minimal
 * systems), kshield mounts it; where it cannot, the error names what is
 * missing and the command that fixes it. Both in a private mount namespace
 * of this test, so the host's mounts are untouched. */
#define TP_SHIELD "userns-policy"	/* lsm, fmod_ret, tp: tp on this host, with
					 * tracepoint/task/task_newtask (syscall
					 * hooks are raw tracepoints: no tracefs) */

Test(shield, t14_tracepoint_variant_mounts_tracefs_or_says_what_is_missing)
{
	char *out = NULL, *err = NULL;
	int rc;

	rc = ks_runf(&out, &err,
		     "unshare -m --propagation private sh -c '"
		     "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; "
		     "grep -c \" tracefs \" /proc/mounts; "
		     "%s -j shield load %s/%s.bpf.o || exit 9; "
		     "grep -c \" tracefs \" /proc/mounts; %s shield unload %s'",
		     ks_bin(), ks_shields_dir(), TP_SHIELD, ks_bin(), TP_SHIELD);
	cr_assert_eq(rc, 0, "load without tracefs: rc %d, stderr: %s", rc, err);
	cr_expect(!strncmp(out, "0\n", 2), "tracefs still mounted in the namespace: %s", out);
	cr_expect(strstr(out, "\"variant\":\"tp\"") || strstr(out, "\"variant\": \"tp\""),
		  "not the tp variant: %s", out);
	cr_expect(strstr(out, "}\n1\n") || strstr(out, "\n1\n"), "kshield did not mount tracefs: %s", out);
	free(out);
	free(err);

	/* /sys/kernel hidden (BTF kept): tracefs has nowhere to go */
	rc = ks_runf(&out, &err,
		     "unshare -m --propagation private sh -c '"
		     "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; "
		     "mkdir -p /tmp/ks-btf-$$ && mount --bind /sys/kernel/btf /tmp/ks-btf-$$ && "
		     "mount -t tmpfs none /sys/kernel && mkdir /sys/kernel/btf && "
		     "mount --bind /tmp/ks-btf-$$ /sys/kernel/btf && "
		     "%s shield load %s/%s.bpf.o; rc=$?; umount /sys/kernel/btf /sys/kernel /tmp/ks-btf-$$; "
		     "rmdir /tmp/ks-btf-$$; exit $rc'",
		     ks_bin(), ks_shields_dir(), TP_SHIELD);
	cr_expect_neq(rc, 0, "loaded with nowhere to mount tracefs: %s", out);
	cr_expect(err && strstr(err, "tracepoint programs need tracefs") &&
		  strstr(err, "mount -t tracefs tracefs /sys/kernel/tracing"), "stderr: %s", err);
	free(out);
	free(err);
	ks_runf(NULL, NULL, "%s shield unload %s", ks_bin(), TP_SHIELD);
}

/* The dispatcher's sys_exit program is attached only while some shield
 * enforces with exit hooks: userns-policy's (tp) finish a kill begun at
 * entry, so in audit mode every syscall on the machine pays for sys_enter
 * only. */
static json_object *dispatcher(void)
{
	char cmd[256];
	json_object *o, *d;

	snprintf(cmd, sizeof(cmd), "%s -j status", ks_bin());
	o = ks_run_json(cmd, NULL, NULL);
	cr_assert(o, "status -j gave no JSON");
	d = json_object_get(ks_json_get(o, "syscall_dispatcher"));
	json_object_put(o);
	cr_assert(d, "status -j has no syscall_dispatcher");
	return d;
}

static void expect_dispatcher(bool enter, bool exit, const char *when)
{
	json_object *d = dispatcher();

	cr_expect_eq(json_object_get_boolean(ks_json_get(d, "sys_enter")), enter,
		     "sys_enter %s: want %s", when, enter ? "attached" : "off");
	cr_expect_eq(json_object_get_boolean(ks_json_get(d, "sys_exit")), exit,
		     "sys_exit %s: want %s", when, exit ? "attached" : "off");
	json_object_put(d);
}

Test(shield, t15_exit_hooks_run_only_while_enforcing)
{
	char path[512], *err;
	const char *variant;
	json_object *o;
	int rc;

	snprintf(path, sizeof(path), "%s/userns-policy.bpf.o", ks_shields_dir());
	rc = ks_runf(NULL, &err, "%s shield load %s --audit", ks_bin(), path);
	cr_assert_eq(rc, 0, "load failed: %s", err);
	free(err);
	snprintf(path, sizeof(path), "%s -j shield list", ks_bin());
	o = ks_run_json(path, NULL, NULL);
	cr_assert(o && json_object_array_length(o) == 1);
	variant = json_object_get_string(ks_json_get(json_object_array_get_idx(o, 0), "variant"));
	if (strcmp(variant, "tp")) {
		json_object_put(o);
		ks_runf(NULL, NULL, "%s shield unload userns-policy", ks_bin());
		cr_skip_test("userns-policy loaded variant %s here: no syscall hooks", variant);
	}
	json_object_put(o);
	expect_dispatcher(true, false, "in audit mode");
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield mode userns-policy enforce", ks_bin()), 0);
	expect_dispatcher(true, true, "once enforcing");
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield mode userns-policy audit", ks_bin()), 0);
	expect_dispatcher(true, false, "back in audit mode");
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield unload userns-policy", ks_bin()), 0);
	expect_dispatcher(false, false, "with nothing loaded");
}
