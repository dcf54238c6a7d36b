/* SPDX-License-Identifier: MIT */
/* hookrank.h - the rows of `kshield hooks`: refusal points on the paths
 * from user space to a kernel function, and their order.
 *
 * Order (tiers, then nearest to the function first):
 *   0  LSM hooks that run before the next call towards the function, or
 *      whose order is unknown: lsm and fmod_ret refuse with EPERM before
 *      the bug runs, the clean refusal;
 *   1  tracepoints and syscall entries: tp variants, SIGKILL (the call in
 *      progress may complete first);
 *   2  points like those whose path has a guessed step (a member no table
 *      names, followed through functions that hold its struct and call
 *      through a pointer): lower confidence;
 *   3  what reaches the function: netlink message types, io_uring opcodes
 *      (what a hook above filters on, not hooks themselves);
 *   4  LSM hooks that run only after the next call (too late to refuse),
 *      those returning void (security_sk_classify_flow: no verdict), and
 *      those that refuse only a rare event on the way (ks_hook_rare: a
 *      module request, the SQPOLL thread's creation), not the path.
 * An LSM hook one call off the path (a helper on the path calls it and
 * returns its verdict: rw_verify_area -> security_file_permission) counts
 * as on the path, one call further.
 * Within a tier: distance, then kind, then name.
 */
#ifndef KSHIELD_HOOKRANK_H
#define KSHIELD_HOOKRANK_H

#include <stdbool.h>
#include <stddef.h>

enum ks_hook_kind {
	KS_HOOK_LSM,
	KS_HOOK_TRACEPOINT,
	KS_HOOK_SYSCALL,
	KS_HOOK_NETLINK,
	KS_HOOK_URING,
};

#define KS_VARIANT_LSM		(1u << 0)	/* lsm/HOOK, EPERM */
#define KS_VARIANT_FMOD_RET	(1u << 1)	/* fmod_ret/security_HOOK, EPERM */
#define KS_VARIANT_TP		(1u << 2)	/* tracepoint, SIGKILL */

struct ks_hook_row {
	enum ks_hook_kind kind;
	char name[96];		/* "netlink_send", "setsockopt", "rtnetlink 44" */
	char detail[256];	/* LSM: the hook's arguments; syscall: ABIs; netlink: table */
	int distance;		/* calls between the point and the function */
	bool after;		/* runs after the call towards the function */
	bool order_known;	/* whether @after was decided from addresses */
	bool no_verdict;	/* LSM hook returning void: it cannot refuse */
	bool guessed;		/* its path has a guessed step: lower confidence */
	bool off_path;		/* in a helper one call off the path (via) */
	bool rare;		/* refuses only a rare event on the way (ks_hook_rare) */
	char at[128];		/* the function on the path holding it */
	char via[128];		/* the inlined helper holding the call, "" */
	char from[64];		/* a syscall reaching it ("sendmsg"): the tp variant's kill point */
	char path[1024];	/* at > ... > function, with inlined and table hops marked */
	char inlined[512];	/* inlined hops on that path: "callee in caller; ..." */
	unsigned variants;	/* KS_VARIANT_* */
	unsigned kernels;	/* bit i: found on the i-th kernel queried */
};

/* Whether LSM hook @name refuses only a rare event (a module load, a
 * firmware read, the SQPOLL thread's creation), not the call it sits on. */
bool ks_hook_rare(const char *name);
/* Tier of @r (see above). */
int ks_hook_tier(const struct ks_hook_row *r);
/* qsort comparator: the order above. */
int ks_hook_row_cmp(const void *a, const void *b);
void ks_hook_rows_rank(struct ks_hook_row *rows, size_t n);
const char *ks_hook_kind_name(enum ks_hook_kind k);
/* "lsm,fmod_ret" / "tp" / "-" */
void ks_hook_variants_str(unsigned v, char *buf, size_t len);
/* The row a shield program section names: "lsm/netlink_send" and
 * "fmod_ret/security_netlink_send" -> LSM netlink_send; "tp/syscalls/
 * sys_enter_fsconfig" -> syscall fsconfig. Returns false for others. */
bool ks_hook_of_section(const char *sec, enum ks_hook_kind *kind, char *name, size_t len);

#endif /* KSHIELD_HOOKRANK_H */
