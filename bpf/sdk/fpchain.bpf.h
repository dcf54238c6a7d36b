/* SPDX-License-Identifier: GPL-2.0-only */
/* fpchain.bpf.h - where a shield's file_permission check runs: in the
 * chain of the one kshield program on that hook (bpf/fpdispatch.bpf.c,
 * src/lib/dispatch/fpdispatch.c), not attached on its own.
 *
 * Nothing to write for it: KS_SECURITY_HOOK on file_permission makes its
 * programs chain members (metadata "fp.<name>") that end by tail-calling
 * the next member when they made no decision. One declaration more lets
 * the dispatcher skip the chain for calls no member wants:
 *
 *	KS_SECURITY_FILTER(file_permission__sendpage, MAY_WRITE, S_IFSOCK);
 *
 * (the call's mask has one of the bits given, and the file's inode is of
 * one of the types given; the body still checks what it needs). Without
 * a filter the chain runs for every call. The loader registers the
 * programs; where the kernel refuses the chain it attaches them directly,
 * as before, and says so.
 */
#ifndef KSHIELD_FPCHAIN_BPF_H
#define KSHIELD_FPCHAIN_BPF_H

#include <kshield/shield.h>
#include <kshield/fpdispatch.h>

/* The hooks whose KS_SECURITY_HOOK programs are chained: __KS_HOT_<hook>
 * defined as "0,". x86-64 only: tail calls from programs with BPF-to-BPF
 * calls (bpf_loop callbacks) need JIT support for the mix, which arm64
 * got after its first BPF trampolines; there they attach on their own. */
#if defined(__TARGET_ARCH_x86)
#define __KS_HOT_file_permission 0,
#endif
#define __ks_take2(a, b, ...)	b
#define __ks_is_hot(arg)	__ks_take2(arg 1, 0, 0)
/* 1 when @hook's programs are chained here, else 0 (a constant). */
#define KS_HOOK_IS_HOT(hook)	__ks_is_hot(__KS_HOT_##hook)

#define ___KS_CAT(a, b)		a##b
#define __KS_CAT(a, b)		___KS_CAT(a, b)

/* The dispatcher's maps, pinned by name beside ks_events. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, KS_FP_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_fp_progs_lsm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, KS_FP_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_fp_progs_fmod_ret SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_FP_VARIANTS);
	__type(key, __u32);
	__type(value, struct ks_fp_chain);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_fp_chains SEC(".maps");

/* The end of a chain member: its @verdict when it made a decision, else
 * the next member's (a tail call), else 0. @self: the member's slot. */
static __always_inline int ks_fp_next(void *ctx, __u32 variant, void *progs, int verdict,
				      __u32 self)
{
	struct ks_fp_chain *ch;
	__u16 nx;

	if (verdict || self >= KS_FP_SLOTS)
		return verdict;
	ch = bpf_map_lookup_elem(&ks_fp_chains, &variant);
	if (!ch)
		return 0;
	nx = ch->next[self & (KS_FP_SLOTS - 1)];
	if (nx < KS_FP_SLOTS)
		bpf_tail_call(ctx, progs, nx);
	return 0;
}

/* For KS_SECURITY_HOOK @name on a hot @hook: "fp.<name>=<hook>" (its
 * programs are chained), and ks_fp_self, the object's slot in its chain,
 * written by the loader when it registers the program (KS_FP_NONE:
 * attached on its own). One per object: a shield has at most one
 * KS_SECURITY_HOOK on a hot hook (a second one fails to compile here). */
#define __KS_FP_META_0(name, hook)
#define __KS_FP_META_1(name, hook)					\
	static const char __ks_fp_##name[]				\
	__attribute__((section(KS_META_SECTION), used)) = "fp." #name "=" #hook; \
	static volatile __u32 ks_fp_self SEC(".data.ks_fp") = KS_FP_NONE;
#define __KS_FP_META(name, hook)					\
	__KS_CAT(__KS_FP_META_, KS_HOOK_IS_HOT(hook))(name, hook)
/* The slot of a program on @hook: ks_fp_self where it is chained. */
#define __KS_FP_SELF_0		KS_FP_NONE
#define __KS_FP_SELF_1		ks_fp_self
#define KS_FP_SELF(hook)	__KS_CAT(__KS_FP_SELF_, KS_HOOK_IS_HOT(hook))

/* "fpf.<name>=<mask> <type>,...": run the chain only for calls whose mask
 * has a bit of @mask and whose file's inode is of one of the S_IF* types
 * given. */
#define __KS_FP_STR(...)	#__VA_ARGS__
#define __KS_FP_XSTR(...)	__KS_FP_STR(__VA_ARGS__)
#define KS_SECURITY_FILTER(name, mask, types...)			\
	static const char __ks_fpf_##name[]				\
	__attribute__((section(KS_META_SECTION), used)) =		\
		"fpf." #name "=" __KS_FP_XSTR(mask) " " __KS_FP_XSTR(types)

#endif /* KSHIELD_FPCHAIN_BPF_H */
