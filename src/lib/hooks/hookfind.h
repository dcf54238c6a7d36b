/* SPDX-License-Identifier: MIT */
/* hookfind.h - `kshield hooks FUNCTION`: the refusal points on the paths
 * from user space to a kernel function, from one kernel build's DWARF.
 *
 * The search walks callers breadth-first from the function (several
 * functions: all at distance 0) up to the syscall entries, through direct
 * calls, inlined copies, callbacks passed as constant arguments, static
 * tables (dispatch_table.h says who calls through which member) and
 * registrations. Each function on the way contributes the security_*
 * functions it calls (LSM hooks, also fmod_ret-able) and the tracepoints it
 * fires; the syscall entries reached, the netlink message types and the
 * io_uring opcodes that lead there are rows too (hookrank.h orders them).
 * Where a path cannot be followed (no caller, no known dispatcher) it is
 * said, nearest first.
 *
 * Modules: the one defining the function is read with its depends=
 * closure; then every module calling into a module function on the path
 * (an undefined symbol of its name), and every module holding a
 * dispatcher, until nothing new is needed.
 */
#ifndef KSHIELD_HOOKFIND_H
#define KSHIELD_HOOKFIND_H

#include <stdbool.h>
#include <stddef.h>
#include "hookrank.h"

struct ks_hooks_query {
	const char *functions;		/* comma list */
	const char *vmlinux;		/* vmlinux with DWARF */
	const char *modules_dir;	/* .ko files with DWARF (NULL: vmlinux only) */
	int max_distance;		/* 0: 20 */
	bool guess;			/* follow members no table names through the
					 * functions holding their struct (lower
					 * confidence: rows marked guessed) */
};

struct ks_hooks_result {
	struct ks_hook_row *rows;	/* ranked */
	size_t nrows;
	char **lost;			/* "lost at X (distance N): why", nearest first */
	size_t nlost;
	char where[1024];		/* where each function is defined, and inlined */
	char missing[512];		/* functions asked about that this build lacks */
	char files[2048];		/* files read: "vmlinux,nf_tables,nfnetlink" */
	size_t nfuncs, nedges;		/* graph size */
	size_t visited;			/* functions on paths */
	double load_secs, search_secs;
};

/* Run @q (one at a time per process: the module scan and the variable
 * index sort use static state). Returns 0 (rows may be empty: then lost says why), or -errno
 * with a message (no such function in this build, unreadable DWARF). */
int ks_hooks_find(const struct ks_hooks_query *q, struct ks_hooks_result *r);
void ks_hooks_result_free(struct ks_hooks_result *r);

#endif /* KSHIELD_HOOKFIND_H */
