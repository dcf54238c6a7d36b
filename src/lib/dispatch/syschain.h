// SPDX-License-Identifier: MIT
/* syschain.h - the syscall dispatcher's tables (include/kshield/syscalls.h)
 * as built from its registry: pure, no BPF, so that the unit tests can
 * check the layout of long chains without a kernel.
 */
#ifndef KSHIELD_SYSCHAIN_H
#define KSHIELD_SYSCHAIN_H

#include <linux/types.h>
#include <stddef.h>
#include <kshield/syscalls.h>

struct ks_sys_table {
	struct ks_sys_chain ch[KS_SYS_HOOKS * KS_SYS_NR_MAX];	/* ks_sys_chains */
	struct ks_sys_bits bits;				/* ks_sys_bits[0] */
	int segs[2];	/* per direction (0 entry, 1 exit), the most segments of
			 * any chain: the dispatcher programs to attach */
};

/* "enter", "exit", "enter32", "exit32". */
const char *ks_sys_hook_name(int hook);

/* Fill @t from the registry @s (@n slots; the exit hooks of a paused
 * slot left out). Members keep the registry's order: the first 32 of a
 * chain in its head, the next 32 in a pool entry the head's `next`
 * names, and so on. Fails, with @why, when a chain would hold more than
 * KS_SYS_SEGS * KS_SYS_CHAIN_LEN programs or the pool is used up. */
int ks_sys_table_build(const struct ks_sys_slot *s, __u32 n, struct ks_sys_table *t,
		       char *why, size_t len);

#endif
