// SPDX-License-Identifier: MIT
/* probe.c - `kshield probe`: what this kernel offers to BPF shields.
 *
 *	kshield probe [HOOK...]		kernel facts, then every hook (or the named ones)
 *
 * Each hook is tested by loading and attaching a minimal program
 * (probe_hooks.c); kernel facts come from sysinfo.c. The JSON form is one
 * object: release, build_id, btf, lsms, lockdown, bpffs, cgroup2, hooks
 * {name: bool}, hook_errors {name: reason}, tamper_guard, elapsed_ms. It is
 * what the kernel matrix records for each guest, so keep it stable.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "btf_find.h"
#include "cli.h"
#include "clock.h"
#include "probe_hooks.h"
#include "sysinfo.h"

static int probe_help(void)
{
	fprintf(stderr,
		"Usage: kshield probe [HOOK...]\n"
		"\n"
		"Report what this kernel offers to BPF shields: release, build ID, BTF,\n"
		"active LSMs, lockdown mode, bpffs and cgroup2 mounts, and for each hook\n"
		"whether a minimal program of that kind loads and attaches here (and why\n"
		"not). Nothing stays loaded afterwards. With HOOK names, probe only those.\n"
		"\n"
		"HOOK := { lsm | fentry | fexit | fmod_ret | kprobe | kprobe_override |\n"
		"          uprobe | tracepoint | raw_tracepoint | tp_btf |\n"
		"          cgroup_sock_create | cgroup_sockopt | ringbuf }\n"
		"\n"
		"With -j: one JSON object; \"hooks\" maps each HOOK to true/false and\n"
		"\"hook_errors\" gives the reason for each false one.\n");
	return 0;
}

/* Effective capabilities from /proc/self/status. Without CAP_BPF and
 * CAP_PERFMON (or CAP_SYS_ADMIN, which covers both) every load fails with
 * EPERM, which would read as "this kernel refuses everything". */
static bool privileged(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return true;	/* cannot tell: let the kernel answer */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff >> 21 & 1) /* CAP_SYS_ADMIN */ ||
	       ((eff >> 39 & 1) && (eff >> 38 & 1)) /* CAP_BPF, CAP_PERFMON */;
}

static struct json_object *str_array(char list[][256], int n)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(list[i]));
	return a;
}

/* Comma list from securityfs as a JSON array, or null when unknown. */
static struct json_object *lsm_array(const struct ks_sysinfo *si)
{
	struct json_object *a;
	char buf[sizeof(si->lsms)], *tok, *save;

	if (!si->lsms_known)
		return NULL;
	a = json_object_new_array();
	snprintf(buf, sizeof(buf), "%s", si->lsms);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		json_object_array_add(a, json_object_new_string(tok));
	return a;
}

static void print_list(const char *label, char list[][256], int n)
{
	printf("%-14s", label);
	if (!n)
		printf("(not mounted)");
	for (int i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", list[i]);
	printf("\n");
}

int do_probe(int argc, char **argv)
{
	struct ks_probe_result res[KS_PROBE_NHOOKS];
	struct ks_sysinfo si;
	struct ks_btf_src btf = { .source = "kernel" };
	char btf_line[512] = "";
	int i, n = 0, lsm = -1, fmod = -1, err, btf_err = 0;
	int64_t t0 = ks_mono_ns();

	static const struct ks_opt none[] = { OPT_END };

	if (!ks_opts_parse("probe", none, argc, argv, argc, &argc, probe_help, &err))
		return err;
	for (i = 0; i < argc; i++) {
		int k;

		for (k = 0; k < KS_PROBE_NHOOKS; k++)
			if (!strcmp(argv[i], ks_probe_hook_names[k]))
				break;
		if (k == KS_PROBE_NHOOKS)
			return ks_usage("unknown hook '%s'; see 'kshield probe help'", argv[i]);
		if (n < KS_PROBE_NHOOKS)
			res[n++].name = ks_probe_hook_names[k];
	}
	if (!argc)
		for (n = 0; n < KS_PROBE_NHOOKS; n++)
			res[n].name = ks_probe_hook_names[n];

	if (!privileged())
		return ks_report(ks_err(-EPERM, "probing needs root (CAP_BPF and CAP_PERFMON, or "
					"CAP_SYS_ADMIN): without them every hook looks refused"));
	ks_sysinfo_read(&si);
	/* No BTF of its own: which file the probes (and every loader)
	 * relocate against, or the one line that says what to put where. */
	if (!si.btf && (btf_err = ks_btf_find(&btf)))
		snprintf(btf_line, sizeof(btf_line), "%s", ks_errmsg());
	else if (!si.btf)
		snprintf(btf_line, sizeof(btf_line), "no BTF: using BTF from %s for build ID %s",
			 btf.source, btf.build_id);
	err = ks_probe_hooks(res, n, verbose);
	if (err)
		return ks_report(err);
	for (i = 0; i < n; i++) {
		if (!strcmp(res[i].name, "lsm"))
			lsm = i;
		if (!strcmp(res[i].name, "fmod_ret"))
			fmod = i;
	}
	/* BPF LSM built in but left out of lsm=: programs attach and never run. */
	if (lsm >= 0 && !res[lsm].works && si.lsms_known && !strstr(si.lsms, "bpf")) {
		size_t l = strlen(res[lsm].why);

		snprintf(res[lsm].why + l, sizeof(res[lsm].why) - l,
			 "; bpf is not an active LSM (boot with lsm=...,bpf)");
	}
	double elapsed = (ks_mono_ns() - t0) / 1e6;

	if (json_output) {
		struct json_object *o = json_object_new_object();
		struct json_object *hooks = json_object_new_object();
		struct json_object *errs = json_object_new_object();

		json_object_object_add(o, "release", json_object_new_string(si.release));
		json_object_object_add(o, "machine", json_object_new_string(si.machine));
		json_object_object_add(o, "build_id", si.build_id[0] ?
				       json_object_new_string(si.build_id) : NULL);
		json_object_object_add(o, "btf", json_object_new_boolean(si.btf));
		if (!si.btf) {
			json_object_object_add(o, "btf_source", btf_err ? NULL :
					       json_object_new_string(btf.source));
			json_object_object_add(o, "btf_path", btf_err ? NULL :
					       json_object_new_string(btf.path));
			json_object_object_add(o, "btf_error", btf_err ?
					       json_object_new_string(btf_line) : NULL);
		}
		json_object_object_add(o, "lsms", lsm_array(&si));
		json_object_object_add(o, "lockdown", json_object_new_string(si.lockdown));
		json_object_object_add(o, "bpffs", str_array(si.bpffs, si.nbpffs));
		json_object_object_add(o, "cgroup2", str_array(si.cgroup2, si.ncgroup2));
		for (i = 0; i < n; i++) {
			json_object_object_add(hooks, res[i].name, json_object_new_boolean(res[i].works));
			if (!res[i].works)
				json_object_object_add(errs, res[i].name, json_object_new_string(res[i].why));
		}
		json_object_object_add(o, "hooks", hooks);
		json_object_object_add(o, "hook_errors", errs);
		/* The tamper guard refuses through BPF LSM, else fmod_ret on the
		 * security_* functions: null when neither was probed. */
		json_object_object_add(o, "tamper_guard", lsm < 0 && fmod < 0 ? NULL :
				       json_object_new_boolean((lsm >= 0 && res[lsm].works) ||
							       (fmod >= 0 && res[fmod].works)));
		json_object_object_add(o, "elapsed_ms", json_object_new_double(elapsed));
		ks_json_print(o);
		return 0;
	}

	printf("%-14s%s (%s)\n", "kernel", si.release, si.machine);
	printf("%-14s%s\n", "build id", si.build_id[0] ? si.build_id : "(none)");
	printf("%-14s%s\n", "btf", si.btf ? "yes" : btf_line);
	printf("%-14s%s\n", "lsms", si.lsms_known ? si.lsms : "unknown (no securityfs)");
	printf("%-14s%s\n", "lockdown", si.lockdown);
	print_list("bpffs", si.bpffs, si.nbpffs);
	print_list("cgroup2", si.cgroup2, si.ncgroup2);
	if (lsm >= 0 || fmod >= 0)
		printf("%-14s%s\n", "tamper guard", lsm >= 0 && res[lsm].works ? "available (BPF LSM)" :
		       fmod >= 0 && res[fmod].works ? "available (fmod_ret on security_* functions)" :
		       "unavailable (no BPF LSM, no trampolines): tampering is detected, not refused");
	printf("\n%-20s %-5s %s\n", "HOOK", "WORKS", "WHY NOT");
	for (i = 0; i < n; i++)
		printf("%-20s %-5s %s\n", res[i].name, res[i].works ? "yes" : "no",
		       res[i].works ? "" : res[i].why);
	if (verbose)
		printf("\nprobed in %.0f ms\n", elapsed);
	return 0;
}
