/* SPDX-License-Identifier: MIT */
/* dispatch_table.h - where the kernel calls through a function pointer: a
 * small, documented table of what the call graph cannot see.
 *
 * A function found in static data sits in a member of some struct
 * ("nfnl_callback.call" in nf_tables_cb[NFT_MSG_NEWSETELEM]); the table says
 * which functions call through that member (nfnetlink_rcv_batch,
 * nfnetlink_rcv_msg), and what the array index means when the struct sits
 * in an array (the nfnetlink message type, the io_uring opcode). A function
 * registered at boot by passing its address to a registrar
 * (rtnl_register(PF_UNSPEC, RTM_NEWTFILTER, tc_new_tfilter, ...)) is
 * called by the registrar's dispatcher, and the registrar's other constant
 * arguments say which message. A few callbacks are stored at run time into
 * a struct on the stack (netlink_kernel_cfg.input) and are named here.
 *
 * Dispatchers absent from a kernel (renamed between series) are skipped;
 * list every series' name.
 */
#ifndef KSHIELD_DISPATCH_TABLE_H
#define KSHIELD_DISPATCH_TABLE_H

#include <stdbool.h>
#include <stdint.h>

enum ks_entry_kind {
	KS_ENTRY_NONE,
	KS_ENTRY_NETLINK,	/* the index / constant is a netlink message type */
	KS_ENTRY_URING,		/* the index is an io_uring opcode */
};

/* struct.member -> the functions calling through it. */
struct ks_dispatch {
	const char *member;		/* "nfnl_callback.call" */
	const char *dispatchers;	/* comma list */
	const char *module;		/* module defining them, NULL: vmlinux */
	enum ks_entry_kind entry;	/* what an array index of the table means */
	const char *family;		/* "nfnetlink", "rtnetlink" ... */
};

/* registrar(..., &fn, ...) -> fn's dispatchers. */
struct ks_registrar {
	const char *name;		/* "rtnl_register" */
	int fn_arg;			/* which argument is the function (0-based) */
	int type_arg;			/* which constant argument is the message type, -1 */
	const char *dispatchers;
	enum ks_entry_kind entry;
	const char *family;
};

/* A callback stored at run time: fn -> member it is stored in. */
struct ks_named_cb {
	const char *fn;
	const char *member;
};

/* The enumerator prefix naming the index of table @object under @d
 * ("NFT_MSG_" for nf_tables_cb, "IORING_OP_" for the opcode table), or
 * NULL. */
const char *ks_index_prefix(const struct ks_dispatch *d, const char *object);
/* The same for a registrar's message type ("RTM_"). */
const char *ks_registrar_prefix(const struct ks_registrar *r);

/* The entry for @member ("struct.member"), or NULL. */
const struct ks_dispatch *ks_dispatch_find(const char *member);
/* The entry for registrar @name, or NULL. */
const struct ks_registrar *ks_registrar_find(const char *name);
/* The member run-time callback @fn is stored in, or NULL. */
const char *ks_named_cb_member(const char *fn);
/* Whether @fn is a hub the search does not walk up through (schedule,
 * do_exit, task_work_run: reached from everywhere). */
bool ks_hub(const char *fn);
/* Whether @name is in the comma list @list. */
bool ks_list_has(const char *list, const char *name);
/* The syscall an entry function is for: "__x64_sys_setsockopt" ->
 * "setsockopt" (and *@abi "x64"; "ia32", "ia32_compat", "" for
 * __do_sys_/__se_sys_), or NULL when @fn is not a syscall entry. */
const char *ks_syscall_of(const char *fn, char *abi, size_t abilen);

#endif /* KSHIELD_DISPATCH_TABLE_H */
