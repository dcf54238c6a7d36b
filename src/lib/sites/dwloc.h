/* SPDX-License-Identifier: MIT */
/* dwloc.h - where a function's parameter lives at one address, decoded
 * from its DWARF location description: a register, memory at register +
 * offset (DW_OP_fbreg through the frame base, itself through the binary's
 * call frame information), a constant, or a fixed address; otherwise why
 * BPF cannot read it there. Registers are numbered as pt_regs seen as
 * 8-byte words, on x86_64 and arm64, whatever the host resolving them.
 */
#ifndef KSHIELD_DWLOC_H
#define KSHIELD_DWLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <elfutils/libdw.h>
#include <kshield/sites.h>

/* What decoding needs to know about the binary a copy lives in. */
struct ks_dwloc {
	unsigned machine;	/* e_machine: whose register numbers DWARF uses */
	Dwarf_CFI *cfi;		/* call frame information, or NULL */
	bool pie;		/* DW_OP_addr is not an address BPF can read */
	bool kernel;		/* DW_OP_addr is moved by KASLR */
};

/* Where @param (a DW_TAG_formal_parameter) is at @pc, in a copy of @fn
 * that starts at @fn_entry: into @l (KS_ARGLOC_UNAVAILABLE when it can't
 * be read there), and in words into @loc: "rdi", "const 7", "[rsp+8]",
 * "unavailable at this site (optimised out)". */
void ks_describe_arg(const struct ks_dwloc *ctx, Dwarf_Die *param, Dwarf_Die *fn,
		     Dwarf_Addr fn_entry, Dwarf_Addr pc, struct ks_argloc *l, char *loc,
		     size_t loclen);

#endif /* KSHIELD_DWLOC_H */
