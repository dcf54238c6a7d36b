// SPDX-License-Identifier: GPL-2.0
/* sysdispatch.bpf.c - the one program on raw_tp/sys_enter and the one on
 * raw_tp/sys_exit for all of kshield's syscall hooks (bpf/sdk/syscalls.bpf.h).
 * An unregistered syscall costs one array lookup; a registered one its
 * chain's socket filter, then its programs as tail calls. User space
 * (src/lib/dispatch/) fills the maps and attaches these only while some
 * chain of their hook is not empty.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "fit.bpf.h"
#include "syscalls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Who registered what (struct ks_sys_slot): read and written by user space
 * only, so that any later kshield process can rebuild the chains. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_SYS_SLOTS);
	__type(key, __u32);
	__type(value, struct ks_sys_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_sys_slots SEC(".maps");

/* Argument @i of the syscall in progress, from its saved registers. */
static __always_inline __u64 sys_arg(struct pt_regs *regs, int i, bool abi32)
{
	__u64 a[6];

	if (abi32)
		KS_SYS_ARGS32(regs, a);
	else
		KS_SYS_ARGS(regs, a);
	return i >= 0 && i < 6 ? a[i & 7] : 0;
}

/* Does the chain's socket filter let this call through? */
static __always_inline bool sock_match(struct pt_regs *regs, const struct ks_sys_chain *ch,
				       bool abi32)
{
	struct sock *sk;
	__u16 family;

	if (ch->sock_arg < 0)
		return true;
	sk = ks_fd_sock((int)sys_arg(regs, ch->sock_arg, abi32));
	if (!sk)
		return false;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	return family < 64 && (ch->families & (1ULL << family));
}

static __always_inline int dispatch(struct bpf_raw_tracepoint_args *ctx, __u32 hook,
				    long nr, __u32 cur)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	struct ks_sys_chain *ch;
	struct ks_sys_cursor *c;
	__u32 idx;
	bool abi32;

	if (nr < 0 || nr >= KS_SYS_NR_MAX)
		return 0;
	idx = KS_SYS_CHAIN(hook, nr);
	ch = bpf_map_lookup_elem(&ks_sys_chains, &idx);
	if (!ch || (!ch->n && !ch->abi32))
		return 0;
	/* Something is registered for this number in one ABI or the other:
	 * only now is it worth asking which ABI the call is in. */
	abi32 = ks_in_compat32();
	if (abi32) {
		if (!ch->abi32)
			return 0;
		idx = KS_SYS_CHAIN(hook + KS_SYS_ENTER32, nr);
		ch = bpf_map_lookup_elem(&ks_sys_chains, &idx);
		if (!ch)
			return 0;
	}
	if (!ch->n || (hook == KS_SYS_ENTER && !sock_match(regs, ch, abi32)))
		return 0;
	c = bpf_map_lookup_elem(&ks_sys_cur, &cur);
	if (!c)
		return 0;
	c->chain = idx;
	c->pos = 0;
	bpf_tail_call(ctx, &ks_sys_progs, ch->slot[0]);
	return 0;
}

SEC("raw_tp/sys_enter")
int ks_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return dispatch(ctx, KS_SYS_ENTER, (long)ctx->args[1], KS_SYS_CUR_ENTER);
}

SEC("raw_tp/sys_exit")
int ks_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];

	return dispatch(ctx, KS_SYS_EXIT, (long)KS_SYS_NR(regs), KS_SYS_CUR_EXIT);
}
