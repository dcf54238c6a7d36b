/* SPDX-License-Identifier: MIT */
/* fpdispatch.h - the file_permission dispatcher's user half: registers
 * the chained file_permission programs of a loaded shield
 * (bpf/sdk/fpchain.bpf.h) under an owner, rebuilds the chains, and keeps
 * the dispatcher's program of each variant (lsm/file_permission,
 * fmod_ret/security_file_permission) attached, pinned under
 * <bpffs>/dispatch/, exactly while its chain is not empty. Where the
 * kernel refuses the chain (the dispatcher does not load or attach, the
 * prog array refuses the program) the program is attached on its own, as
 * before, and one log line says so. Callers serialise (the shield lock).
 */
#ifndef KSHIELD_FPDISPATCH_LIB_H
#define KSHIELD_FPDISPATCH_LIB_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct bpf_program;
struct ks_meta;

/* Is @prog a chain member ("fp.<name>" in @meta for the KS_SECURITY_HOOK
 * it comes from)? Such a program is loaded but not attached by the
 * loader; ks_fpd_add() registers it, or attaches it where it cannot. */
bool ks_fpd_is_chained(const struct bpf_program *prog, const struct ks_meta *meta);

/* The chain filter chain member @prog declares (KS_SECURITY_FILTER;
 * s->all without one) into @s: its variant (enum ks_fp_variant), or
 * -errno with @why. */
struct ks_fp_slot;
int ks_fpd_filter(const struct ks_meta *meta, const char *prog, struct ks_fp_slot *s,
		  char *why, size_t len);

/* Where ks_fpd_add() says what it did (as ks_sysd_add_opts). */
struct ks_fpd_add_opts {
	__u32 *ids;		/* the registered programs' ids: at most max, */
	int max;
	int *n;			/* ... *n of them */
	char *why;		/* on error, what to do (whylen bytes) */
	size_t whylen;
};

/* Register every loaded chain member of @obj under @owner (as
 * ks_sysd_add), pinned as prog_<name> in @dir by the caller. A member
 * the kernel will not chain is attached on its own instead, its link
 * pinned in @dir (and its prog_ pin removed). The registered programs'
 * ids go to o->ids. On error (a fallback attach failed too) nothing of
 * @obj stays registered and o->why says so. */
int ks_fpd_add(const char *owner, const char *dir, struct bpf_object *obj,
	       const struct ks_meta *meta, const struct ks_fpd_add_opts *o);

/* Unregister @owner's programs but those whose ids are in @keep. */
int ks_fpd_drop(const char *owner, const __u32 *keep, int nkeep);

/* Unregister the programs whose ids are in @ids (a load undone). */
int ks_fpd_drop_ids(const __u32 *ids, int n);

/* Unregister programs whose owner's directory no longer exists. */
int ks_fpd_sweep(void);

/* How many programs the dispatcher runs, and which variants' programs
 * are attached (bit KS_FP_LSM, KS_FP_FMOD_RET): for status and tests. */
int ks_fpd_count(int *nprogs, unsigned *attached);

/* The dispatcher's BPF object as built in (for `kshield btf min`). */
const void *ks_fpd_elf(size_t *len);

#endif
