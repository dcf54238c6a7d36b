/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* sites.h - the contract between user space and a uprobe or kprobe program
 * attached at many DWARF-resolved sites of one function (out-of-line copies and inlined
 * copies alike; see src/lib/sites/dwsites.h).
 *
 * Each attached site carries its index as the BPF cookie. An inlined copy
 * does not receive its arguments in the calling-convention registers, so
 * user space writes, per site, where each formal parameter lives at the
 * site's entry (taken from DWARF) into an array map named "ks_sites" indexed
 * by the cookie, when the program's object declares one. bpf/sdk/sites.bpf.h
 * reads an argument through that table.
 */
#ifndef KSHIELD_SITES_H
#define KSHIELD_SITES_H

#define KS_SITES_MAX		256	/* sites per attached program */
#define KS_SITE_MAX_ARGS	6

enum ks_argloc_kind {
	KS_ARGLOC_UNAVAILABLE = 0,	/* optimised out, or not expressible here */
	KS_ARGLOC_REG,			/* value is in register @reg */
	KS_ARGLOC_CONST,		/* value is the constant @value */
	KS_ARGLOC_MEM,			/* value is the 8 bytes at reg + value */
	KS_ARGLOC_ADDR,			/* value is the 8 bytes at address @value */
};

/* @reg is an index into the architecture's user pt_regs viewed as an array
 * of 8-byte words (x86_64: struct pt_regs; arm64: user_pt_regs), so the
 * BPF side needs no DWARF register table. */
struct ks_argloc {
	__u32 kind;			/* enum ks_argloc_kind */
	__u32 reg;
	__s64 value;
	__u32 size;			/* bytes of the parameter's type, 0 unknown */
	__u32 pad;
};

struct ks_site_info {
	__u32 nargs;
	__u32 inlined;			/* 1 for an inlined copy */
	__u32 kernel;			/* 1 at a kprobe: memory arguments are kernel memory */
	__u32 pad;
	__u64 addr;			/* link-time address, for reports */
	struct ks_argloc args[KS_SITE_MAX_ARGS];
};

/* Per-site counter of bpf/inline_probe.bpf.c ("site_hits" map, indexed by
 * the cookie): hits, and parameter 0 as read at the last hit. */
struct ks_site_hits {
	__u64 hits;
	__u64 arg0;
	__u32 arg0_ok;
	__u32 pad;
};

#endif /* KSHIELD_SITES_H */
