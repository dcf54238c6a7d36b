/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* fpdispatch.h - the file_permission dispatcher's tables, shared by BPF
 * and user space (bpf/sdk/fpchain.bpf.h, bpf/fpdispatch.bpf.c,
 * src/lib/dispatch/fpdispatch.c).
 *
 * file_permission runs on every read() and write() of the machine. Each
 * program attached to it is one more trampoline enter and exit on each of
 * them, so the shields' file_permission checks are not attached: one
 * kshield program per variant (lsm/file_permission, or fmod_ret on
 * security_file_permission) checks the chain's filter (the call's mask,
 * the inode's file type) and runs the registered checks as tail calls.
 *
 * Included by BPF programs (after vmlinux.h) and by user space (after
 * <linux/types.h>).
 */
#ifndef KSHIELD_FPDISPATCH_H
#define KSHIELD_FPDISPATCH_H

/* The two chains: programs of one prog type and attach hook each (a prog
 * array takes programs of its first user's type and, on newer kernels,
 * hook only). */
enum ks_fp_variant {
	KS_FP_LSM = 0,		/* lsm/file_permission */
	KS_FP_FMOD_RET = 1,	/* fmod_ret/security_file_permission */
	KS_FP_VARIANTS = 2,
};

/* Registered programs at once, per variant (the prog arrays' size; a
 * power of two). */
#define KS_FP_SLOTS		64
/* Programs per chain: the dispatcher's tail call is the first of at most
 * 33 in a row (MAX_TAIL_CALL_CNT). */
#define KS_FP_CHAIN_LEN		32
/* No slot: the end of a chain, or a program not in one. */
#define KS_FP_NONE		0xffff

struct ks_fp_chain {
	__u32 n;		/* programs in the chain */
	__u32 all;		/* some program wants every call: no filter */
	__u32 mask;		/* else: the call's mask has one of these bits (MAY_*) */
	__u32 modes;		/* and the inode's type is one of these (bit i_mode >> 12) */
	__u16 first;		/* slot of the first program */
	__u16 next[KS_FP_SLOTS];	/* slot after each slot, KS_FP_NONE at the end */
	__u16 _pad;
};

/* One registered program (the pinned registry ks_fp_slots, KS_FP_SLOTS
 * per variant: variant * KS_FP_SLOTS + slot). */
struct ks_fp_slot {
	__u32 prog_id;		/* 0: free */
	__u32 all;		/* no filter declared */
	__u32 mask;
	__u32 modes;
	char owner[48];		/* pin directory under the bpffs root: "shields/<name>" */
	char prog[64];
};

#endif /* KSHIELD_FPDISPATCH_H */
