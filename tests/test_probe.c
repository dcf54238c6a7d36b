// SPDX-License-Identifier: MIT
/* test_probe.c - `kshield probe` against this host's real kernel.
 *
 * The expected answers are the measured truth of the development machine
 * kind (docs: /work/shared/brief/PLATFORM.md): no BPF trampolines (lsm,
 * fentry, fexit, fmod_ret refused with EPERM) and no kprobes, while uprobes,
 * tracepoints, cgroup hooks and ring buffers work. If this host changes,
 * these tests must fail: that is the point of probing.
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include "array.h"
#include "harness.h"

static const char *const hooks_false[] = {
	"lsm", "fentry", "fexit", "fmod_ret", "kprobe", "kprobe_override",
};
static const char *const hooks_true[] = {
	"uprobe", "tracepoint", "raw_tracepoint", "tp_btf",
	"cgroup_sock_create", "cgroup_sockopt", "ringbuf",
};

/* Run `kshield probe ARGS -j`, assert success and clean stderr, return JSON. */
static json_object *probe_json(const char *args)
{
	char *out, *err;
	int rc = ks_runf(&out, &err, "%s probe %s -j", ks_bin(), args);
	json_object *o = ks_json_parse(out);

	cr_assert_eq(rc, 0, "probe exited %d, stderr: %s", rc, err);
	cr_assert_not_null(o, "probe -j did not print JSON: %s", out);
	/* Refusals are answers, not warnings: libbpf must stay quiet. */
	cr_expect_str_empty(err, "unexpected stderr: %s", err);
	free(out);
	free(err);
	return o;
}

static bool hook(json_object *o, const char *name)
{
	char path[64];
	json_object *v;

	snprintf(path, sizeof(path), "hooks.%s", name);
	v = ks_json_get(o, path);
	cr_assert_not_null(v, "no hooks.%s in probe output", name);
	cr_assert(json_object_is_type(v, json_type_boolean), "hooks.%s is not a boolean", name);
	return json_object_get_boolean(v);
}

static bool array_has(json_object *arr, const char *s)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s))
			return true;
	return false;
}

/* Number of loaded BPF programs named probe_* (the probe object's). */
static int probe_progs_loaded(void)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strncmp(info.name, "probe_", 6))
			n++;
		close(fd);
	}
	return n;
}

Test(probe, t01_reports_all_13_hooks)
{
	json_object *o = probe_json(""), *hooks = ks_json_get(o, "hooks");

	cr_assert_not_null(hooks);
	cr_assert_eq(json_object_object_length(hooks), 13, "hooks: %s",
		     json_object_to_json_string(hooks));
	json_object_put(o);
}

Test(probe, t02_host_truth)
{
	json_object *o = probe_json("");

	for (size_t i = 0; i < ARRAY_SIZE(hooks_false); i++)
		cr_expect(!hook(o, hooks_false[i]), "%s should be refused on this host",
			  hooks_false[i]);
	for (size_t i = 0; i < ARRAY_SIZE(hooks_true); i++)
		cr_expect(hook(o, hooks_true[i]), "%s should work on this host: %s", hooks_true[i],
			  json_object_to_json_string(ks_json_get(o, "hook_errors")));
	/* No BPF LSM here, so no tamper guard. */
	cr_expect(json_object_is_type(ks_json_get(o, "tamper_guard"), json_type_boolean));
	cr_expect(!json_object_get_boolean(ks_json_get(o, "tamper_guard")));
	json_object_put(o);
}

Test(probe, t03_refused_hooks_say_why_with_errno)
{
	json_object *o = probe_json(""), *errs = ks_json_get(o, "hook_errors");
	regex_t re;

	cr_assert_not_null(errs);
	cr_assert_eq(regcomp(&re, "^(load|attach|map create): E[A-Z0-9]+ \\(", REG_EXTENDED), 0);
	for (size_t i = 0; i < ARRAY_SIZE(hooks_false); i++) {
		json_object *why;

		cr_assert(json_object_object_get_ex(errs, hooks_false[i], &why),
			  "no hook_errors.%s", hooks_false[i]);
		cr_expect_eq(regexec(&re, json_object_get_string(why), 0, NULL, 0), 0,
			     "%s: reason without errno: '%s'", hooks_false[i],
			     json_object_get_string(why));
	}
	/* The trampoline refusal on this kernel is EPERM before the verifier. */
	cr_expect_str_eq(json_object_get_string(ks_json_get(errs, "lsm")),
			 "load: EPERM (Operation not permitted)");
	/* Working hooks have no error entry. */
	for (size_t i = 0; i < ARRAY_SIZE(hooks_true); i++)
		cr_expect(!json_object_object_get_ex(errs, hooks_true[i], NULL),
			  "hook_errors has working hook %s", hooks_true[i]);
	regfree(&re);
	json_object_put(o);
}

Test(probe, t04_kernel_facts)
{
	json_object *o = probe_json("ringbuf");
	struct utsname u;
	const char *bid;
	char *mounts = ks_read_file("/proc/mounts"), *line, *save;
	bool saw_cgroup2 = false;

	cr_assert_eq(uname(&u), 0);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "release")), u.release);
	bid = json_object_get_string(ks_json_get(o, "build_id"));
	cr_assert_not_null(bid, "no build_id");
	cr_expect(strlen(bid) >= 16 && strlen(bid) % 2 == 0 &&
		  strspn(bid, "0123456789abcdef") == strlen(bid), "bad build id '%s'", bid);
	cr_expect_eq(json_object_get_boolean(ks_json_get(o, "btf")),
		     access("/sys/kernel/btf/vmlinux", R_OK) == 0);
	/* securityfs is not mounted on this host: probe reads it anyway. */
	cr_expect(array_has(ks_json_get(o, "lsms"), "bpf"), "lsms: %s",
		  json_object_to_json_string(ks_json_get(o, "lsms")));
	cr_expect(array_has(ks_json_get(o, "lsms"), "lockdown"));
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "lockdown")), "integrity");
	cr_expect(array_has(ks_json_get(o, "bpffs"), "/sys/fs/bpf"));
	/* Every cgroup2 mount in /proc/mounts is reported. */
	for (line = strtok_r(mounts, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char mnt[512], type[64];

		if (sscanf(line, "%*s %511s %63s", mnt, type) == 2 && !strcmp(type, "cgroup2")) {
			saw_cgroup2 = true;
			cr_expect(array_has(ks_json_get(o, "cgroup2"), mnt), "cgroup2 %s missing", mnt);
		}
	}
	cr_expect(saw_cgroup2, "this host should have a cgroup2 mount");
	free(mounts);
	json_object_put(o);
}

Test(probe, t05_named_hooks_only)
{
	json_object *o = probe_json("uprobe ringbuf"), *hooks = ks_json_get(o, "hooks");

	cr_assert_eq(json_object_object_length(hooks), 2);
	cr_expect(hook(o, "uprobe"));
	cr_expect(hook(o, "ringbuf"));
	json_object_put(o);
}

Test(probe, t06_unknown_hook_is_a_usage_error)
{
	char *out, *err;
	int rc = ks_runf(&out, &err, "%s probe nosuchhook -j", ks_bin());
	json_object *e = ks_json_parse(err);

	cr_expect_eq(rc, 2, "exit %d", rc);
	cr_assert_not_null(e, "stderr is not a JSON error: %s", err);
	cr_expect(strstr(json_object_get_string(ks_json_get(e, "error")), "nosuchhook"));
	cr_expect_str_empty(out);
	json_object_put(e);
	free(out);
	free(err);
}

Test(probe, t07_plain_table)
{
	char *out, *err;
	int rc = ks_runf(&out, &err, "%s probe", ks_bin());

	cr_assert_eq(rc, 0, "stderr: %s", err);
	cr_expect(strstr(out, "HOOK"));
	cr_expect(strstr(out, "\nlsm "), "no lsm row: %s", out);
	cr_expect(strstr(out, "EPERM"));
	cr_expect(strstr(out, "tamper guard  unavailable"));
	cr_expect(strstr(out, "\nringbuf "));
	free(out);
	free(err);
}

/* Nothing the probe loaded outlives it. Other engineers' probes may run on
 * this kernel at the same moment, so wait (briefly) for a quiet instant
 * rather than expect one at once; a leak never becomes quiet. */
Test(probe, t08_leaves_nothing_loaded)
{
	int n = -1;

	for (int i = 0; i < 3; i++) {
		json_object_put(probe_json(""));
	}
	for (int i = 0; i < 50 && n; i++) {
		n = probe_progs_loaded();
		if (n)
			usleep(20000);
	}
	cr_expect_eq(n, 0, "%d probe_* programs still loaded after probe exited", n);
}

/* Without privileges every load fails with EPERM; probe must say that it
 * is not privileged rather than report a kernel that refuses everything. */
Test(probe, t09_unprivileged_is_an_error)
{
	char *out, *err;
	int rc = ks_runf(&out, &err, "setpriv --reuid=65534 --regid=65534 --clear-groups "
			 "--inh-caps=-all --bounding-set=-all %s probe -j", ks_bin());
	json_object *e = ks_json_parse(err);

	cr_expect_eq(rc, 1, "exit %d, stdout: %s", rc, out);
	cr_assert_not_null(e, "stderr is not a JSON error: %s", err);
	cr_expect(strstr(json_object_get_string(ks_json_get(e, "error")), "needs root"),
		  "error: %s", err);
	cr_expect_str_empty(out);
	json_object_put(e);
	free(out);
	free(err);
}
