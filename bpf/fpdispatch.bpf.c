// SPDX-License-Identifier: GPL-2.0-only
/* fpdispatch.bpf.c - the one program on file_permission for all of
 * kshield's shields (bpf/sdk/fpchain.bpf.h): lsm/file_permission where
 * bpf is an active LSM, else fmod_ret on security_file_permission. A read
 * or write that no chained check wants costs one array lookup and two
 * loads; one that does runs the chain as tail calls. User space
 * (src/lib/dispatch/fpdispatch.c) fills the maps and attaches a variant's
 * program only while its chain is not empty.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <kshield/shield.h>
#include "fpchain.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Who registered what (struct ks_fp_slot), variant * KS_FP_SLOTS + slot:
 * read and written by user space only, so that any later kshield process
 * can rebuild the chains. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_FP_VARIANTS * KS_FP_SLOTS);
	__type(key, __u32);
	__type(value, struct ks_fp_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_fp_slots SEC(".maps");

#define S_IFMT_		00170000

/* @ctx: (file, mask, the verdict of the programs before). */
static __always_inline int dispatch(unsigned long long *ctx, __u32 variant, void *progs)
{
	struct file *file = (struct file *)ctx[0];
	int mask = (int)ctx[1], prev = (int)ctx[2];
	struct ks_fp_chain *ch;

	/* A decision already made is kept, and nothing run. */
	if (prev)
		return prev;
	ch = bpf_map_lookup_elem(&ks_fp_chains, &variant);
	if (!ch || !ch->n)
		return 0;
	if (!ch->all) {
		/* Plain loads through the hook's typed argument. */
		if (!(ch->mask & mask))
			return 0;
		if (!(ch->modes & (1u << ((file->f_inode->i_mode & S_IFMT_) >> 12))))
			return 0;
	}
	bpf_tail_call(ctx, progs, ch->first);
	return 0;
}

SEC("lsm/file_permission")
int ks_fp_lsm(unsigned long long *ctx)
{
	return dispatch(ctx, KS_FP_LSM, &ks_fp_progs_lsm);
}

SEC("fmod_ret/security_file_permission")
int ks_fp_fmod_ret(unsigned long long *ctx)
{
	return dispatch(ctx, KS_FP_FMOD_RET, &ks_fp_progs_fmod_ret);
}
