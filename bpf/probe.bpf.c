// SPDX-License-Identifier: GPL-2.0-only
/* probe.bpf.c - one minimal program per attach type that `kshield probe`
 * tests. The loader (src/lib/kernel/probe_hooks.c) enables one program at a time
 * (autoload), loads it, attaches it and, where cheap, checks that it fired,
 * then destroys everything: the kernel answer is what counts, not a config
 * file.
 *
 * Every program only counts hits from the probing process (probe_tgid), so
 * the moment it spends attached to a global hook changes nothing for anyone
 * else. Names are "probe_<hook>" as in src/lib/kernel/probe_hooks.c's table.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* Hit counters indexed by the hook's position in ks_probe_hook_names[]
 * (src/lib/kernel/probe_hooks.c): several programs may share one loaded object. */
enum {
	H_LSM, H_FENTRY, H_FEXIT, H_FMOD_RET, H_KPROBE, H_KPROBE_OVERRIDE,
	H_UPROBE, H_TRACEPOINT, H_RAW_TRACEPOINT, H_TP_BTF, H_MAX = 13,
};

const volatile __u32 probe_tgid;
__u64 hits[H_MAX];

static __always_inline void count(int hook)
{
	if ((bpf_get_current_pid_tgid() >> 32) == probe_tgid)
		__sync_fetch_and_add(&hits[hook], 1);
}

/* BPF LSM: allow everything (0), just be attached. */
SEC("lsm/socket_create")
int BPF_PROG(probe_lsm)
{
	count(H_LSM);
	return 0;
}

/* Trampolines on a security_* function that every kernel has. */
SEC("fentry/security_socket_create")
int BPF_PROG(probe_fentry)
{
	count(H_FENTRY);
	return 0;
}

SEC("fexit/security_socket_create")
int BPF_PROG(probe_fexit)
{
	count(H_FEXIT);
	return 0;
}

/* fmod_ret returning 0 keeps the original return value. */
SEC("fmod_ret/security_socket_create")
int BPF_PROG(probe_fmod_ret)
{
	count(H_FMOD_RET);
	return 0;
}

SEC("kprobe/security_socket_create")
int BPF_KPROBE(probe_kprobe)
{
	count(H_KPROBE);
	return 0;
}

/* bpf_override_return needs CONFIG_BPF_KPROBE_OVERRIDE to load and an
 * ALLOW_ERROR_INJECTION function to attach. Overriding should_failslab
 * with 0 is what it returns anyway when fault injection is off, and only
 * the probing process is affected. */
SEC("kprobe/should_failslab")
int BPF_KPROBE(probe_kprobe_override)
{
	if ((bpf_get_current_pid_tgid() >> 32) != probe_tgid)
		return 0;
	__sync_fetch_and_add(&hits[H_KPROBE_OVERRIDE], 1);
	bpf_override_return(ctx, 0);
	return 0;
}

/* Attached by offset to a function of the probing binary itself (libbpf
 * 1.1 has no BPF_UPROBE; BPF_KPROBE is the same for uprobes). */
SEC("uprobe")
int BPF_KPROBE(probe_uprobe)
{
	count(H_UPROBE);
	return 0;
}

/* raw_syscalls/sys_enter exists wherever syscall tracepoints do, and the
 * probing process triggers it with any syscall. */
SEC("tracepoint/raw_syscalls/sys_enter")
int probe_tracepoint(void *ctx)
{
	count(H_TRACEPOINT);
	return 0;
}

SEC("raw_tracepoint/sys_enter")
int probe_raw_tracepoint(void *ctx)
{
	count(H_RAW_TRACEPOINT);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(probe_tp_btf)
{
	count(H_TP_BTF);
	return 0;
}

/* Cgroup programs allow (1) everything; they sit on the cgroup2 root only
 * for the moment it takes to attach and detach them. */
SEC("cgroup/sock_create")
int probe_cgroup_sock_create(struct bpf_sock *sk)
{
	return 1;
}

SEC("cgroup/setsockopt")
int probe_cgroup_sockopt(struct bpf_sockopt *ctx)
{
	return 1;
}
