/* SPDX-License-Identifier: MIT */
/* probe_hooks.h - does this kernel accept a BPF program of a given kind?
 * Answered by loading (and attaching, and where cheap triggering) a minimal
 * program, never by reading a config file. Used by `kshield probe` and by
 * anything that must explain what it can do here (shield info, status).
 */
#ifndef KSHIELD_PROBE_HOOKS_H
#define KSHIELD_PROBE_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#define KS_PROBE_NHOOKS 13

/* The hook names, in report order: lsm, fentry, fexit, fmod_ret, kprobe,
 * kprobe_override, uprobe, tracepoint, raw_tracepoint, tp_btf,
 * cgroup_sock_create, cgroup_sockopt, ringbuf. */
extern const char *const ks_probe_hook_names[KS_PROBE_NHOOKS];

/* Probe hook @name. Returns 1 when it works, 0 when the kernel refuses it
 * (@why gets one line: the stage and errno, e.g. "load: EPERM (Operation
 * not permitted)"), or -ENOENT for an unknown name (message recorded).
 * Nothing stays loaded or attached afterwards, whatever the outcome; the
 * libbpf log is silenced unless @show_log (the verifier's last words are
 * in @why either way). Needs root (CAP_BPF, CAP_PERFMON,
 * CAP_NET_ADMIN for cgroup hooks). May mount tracefs when it is absent. */
int ks_probe_hook(const char *name, bool show_log, char *why, size_t len);

struct ks_probe_result {
	const char *name;	/* in: hook name */
	int works;		/* out: 1 works, 0 refused */
	char why[256];		/* out: reason when refused */
};

/* Probe the hooks named in @res[0..@n) in parallel (one thread each: most
 * of the time is the kernel waiting for RCU grace periods). Returns 0, or
 * -ENOENT / -E2BIG before probing anything when a name is unknown or @n
 * exceeds KS_PROBE_NHOOKS. Same guarantees as ks_probe_hook(). */
int ks_probe_hooks(struct ks_probe_result *res, int n, bool show_log);

#endif
