/* SPDX-License-Identifier: MIT */
/* sysdispatch.h - the syscall dispatcher's user half: registers the
 * syscall programs of a loaded object (bpf/sdk/syscalls.bpf.h) under an owner,
 * rebuilds the chains, and keeps the dispatcher's two programs attached
 * (pinned under <bpffs>/dispatch/) exactly while some chain of their hook
 * is not empty. Callers serialise (the shield lock): a sweep must not run
 * while a load registers programs under a directory it has yet to rename
 * into place.
 */
#ifndef KSHIELD_SYSDISPATCH_H
#define KSHIELD_SYSDISPATCH_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct bpf_program;
struct ks_meta;

/* Is @prog run by the dispatcher (a "sys.<prog>" registration in @meta,
 * for its own name or the name without "__noloop")? Such a program is
 * loaded but never attached on its own. */
bool ks_sysd_is_dispatched(const struct bpf_program *prog, const struct ks_meta *meta);

/* How ks_sysd_add() registers, and where it says what it did. */
struct ks_sysd_add_opts {
	bool audit;		/* the owner starts in audit mode, so its exit hooks
				 * stay out of the chains (ks_sysd_set_audit) */
	__u32 *ids;		/* the registered programs' ids: at most max, */
	int max;
	int *n;			/* ... *n of them */
	char *why;		/* on error, what to do (whylen bytes) */
	size_t whylen;
};

/* Register every loaded dispatched program of @obj under @owner (a path
 * under the bpffs root whose removal means "gone": "shields/<name>"), as
 * @o says. On error nothing of @obj stays registered and o->why says what
 * to do. */
int ks_sysd_add(const char *owner, struct bpf_object *obj, const struct ks_meta *meta,
		const struct ks_sysd_add_opts *o);

/* An exit hook finishes what a kill at entry began (a namespace made by a
 * killed caller, a doomed child): in audit mode nothing was killed, so the
 * dispatcher leaves @owner's exit hooks out of its chains, and with none
 * left its sys_exit program is detached: every syscall on the machine then
 * pays for sys_enter only. Called when @owner's mode changes: before the
 * mode turns to enforce, after it turns to audit. */
int ks_sysd_set_audit(const char *owner, bool audit);

/* Unregister @owner's programs, except those whose ids are in @keep
 * (the new instance of a replaced shield). */
int ks_sysd_drop(const char *owner, const __u32 *keep, int nkeep);

/* Unregister the programs whose ids are in @ids (a load undone). */
int ks_sysd_drop_ids(const __u32 *ids, int n);

/* Unregister programs whose owner's directory no longer exists (its pins
 * were removed by hand). Returns how many. */
int ks_sysd_sweep(void);

/* How many programs the dispatcher runs, and whether its enter and exit
 * programs are attached: for status and tests. */
int ks_sysd_count(int *nprogs, bool *enter, bool *exit);

/* The dispatcher's BPF object as built in (for `kshield btf min`). */
const void *ks_sysd_elf(size_t *len);

#endif
