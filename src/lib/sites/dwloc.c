// SPDX-License-Identifier: MIT
/* dwloc.c - where a parameter lives at one address, from its DWARF
 * location description (see dwloc.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <gelf.h>
#include "array.h"
#include "dwloc.h"

/* ---- registers ---------------------------------------------------------- */

/* DWARF register number of @machine -> (index into pt_regs viewed as
 * 8-byte words, name). User and kernel pt_regs share that layout on x86_64
 * and arm64. */
static int dwarf_reg(unsigned machine, unsigned r, const char **name)
{
	static const struct { int idx; const char *name; } x86[] = {
		{ 10, "rax" }, { 12, "rdx" }, { 11, "rcx" }, { 5, "rbx" },
		{ 13, "rsi" }, { 14, "rdi" }, { 4, "rbp" }, { 19, "rsp" },
		{ 9, "r8" }, { 8, "r9" }, { 7, "r10" }, { 6, "r11" },
		{ 3, "r12" }, { 2, "r13" }, { 1, "r14" }, { 0, "r15" },
	};
	static const char *const a64[] = {
		"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
		"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20",
		"x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",
	};

	*name = "?";
	if (machine == EM_X86_64 && r < ARRAY_SIZE(x86)) {
		*name = x86[r].name;
		return x86[r].idx;
	}
	if (machine == EM_AARCH64 && r <= 31) {
		*name = a64[r];
		return r;
	}
	return -1;
}

/* ---- location descriptions ---------------------------------------------- */

/* Frame base of @fn at @pc as (register index, offset), for DW_OP_fbreg. */
static int frame_base(const struct ks_dwloc *ctx, Dwarf_Die *fn, Dwarf_Addr pc,
		      Dwarf_Addr fn_entry, int *reg, __s64 *off, const char **rname,
		      const char **why)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, pc, &ops, &n, 1) != 1 || n < 1) {
		*why = "no frame base here";
		return -1;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		Dwarf_Frame *frame;
		Dwarf_Op *cfa;
		size_t ncfa;

		/* The CFA at @pc from the binary's call frame information:
		 * usually "rsp + k" at this very instruction. */
		if (ctx->cfi && !dwarf_cfi_addrframe(ctx->cfi, pc, &frame)) {
			int ok = !dwarf_frame_cfa(frame, &cfa, &ncfa) && ncfa == 1;

			/* libdw hands a register+offset rule back as bregx. */
			if (ok && cfa[0].atom == DW_OP_bregx) {
				*reg = dwarf_reg(ctx->machine, cfa[0].number, rname);
				*off = (__s64)cfa[0].number2;
			} else if (ok && cfa[0].atom >= DW_OP_breg0 && cfa[0].atom <= DW_OP_breg31) {
				*reg = dwarf_reg(ctx->machine, cfa[0].atom - DW_OP_breg0, rname);
				*off = (__s64)cfa[0].number;
			} else {
				ok = 0;
			}
			free(frame);
			if (ok && *reg >= 0)
				return 0;
		}
		/* Without usable CFI the CFA is known only at the function's
		 * entry, where the call has just pushed the return address. */
		if (pc != fn_entry) {
			*why = "frame base is the CFA, and no CFI describes it here";
			return -1;
		}
		if (ctx->machine == EM_X86_64) {
			*reg = dwarf_reg(ctx->machine, 7, rname);
			*off = 8;
			return 0;
		}
		if (ctx->machine == EM_AARCH64) {
			*reg = dwarf_reg(ctx->machine, 31, rname);
			*off = 0;
			return 0;
		}
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 && n == 1) {
		*reg = dwarf_reg(ctx->machine, ops[0].atom - DW_OP_breg0, rname);
		*off = (__s64)ops[0].number;
		return *reg < 0 ? -1 : 0;
	}
	*why = "frame base expression not supported";
	return -1;
}

void ks_describe_arg(const struct ks_dwloc *ctx, Dwarf_Die *param, Dwarf_Die *fn,
		     Dwarf_Addr fn_entry, Dwarf_Addr pc, struct ks_argloc *l, char *loc,
		     size_t loclen)
{
	Dwarf_Attribute a, ta;
	Dwarf_Die type;
	Dwarf_Word size;
	Dwarf_Op *ops;
	size_t n;
	const char *rn, *why = NULL;
	int r;

	memset(l, 0, sizeof(*l));
	if (dwarf_formref_die(dwarf_attr_integrate(param, DW_AT_type, &ta), &type) &&
	    !dwarf_aggregate_size(&type, &size))
		l->size = size;

	if (!dwarf_attr(param, DW_AT_location, &a)) {
		Dwarf_Sword sv;

		if (dwarf_attr(param, DW_AT_const_value, &a) && !dwarf_formsdata(&a, &sv)) {
			l->kind = KS_ARGLOC_CONST;
			l->value = sv;
			snprintf(loc, loclen, "const %lld", (long long)sv);
			return;
		}
		why = "optimised out";
		goto unavailable;
	}
	r = dwarf_getlocation_addr(&a, pc, &ops, &n, 1);
	if (r <= 0 || !n) {
		why = "no location at this address";
		goto unavailable;
	}

	if (n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
		r = dwarf_reg(ctx->machine, ops[0].atom - DW_OP_reg0, &rn);
	else if (n == 1 && ops[0].atom == DW_OP_regx)
		r = dwarf_reg(ctx->machine, ops[0].number, &rn);
	else
		r = -2;
	if (r >= 0) {
		l->kind = KS_ARGLOC_REG;
		l->reg = r;
		snprintf(loc, loclen, "%s", rn);
		return;
	}
	if (r == -1) {
		why = "register unknown to kshield";
		goto unavailable;
	}

	/* breg: memory at reg+off, or with stack_value the value reg+off. */
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 &&
	    (n == 1 || (n == 2 && ops[1].atom == DW_OP_stack_value && !ops[0].number))) {
		r = dwarf_reg(ctx->machine, ops[0].atom - DW_OP_breg0, &rn);
		if (r < 0) {
			why = "register unknown to kshield";
			goto unavailable;
		}
		l->reg = r;
		l->value = (__s64)ops[0].number;
		if (n == 2) {
			l->kind = KS_ARGLOC_REG;
			snprintf(loc, loclen, "%s", rn);
		} else {
			l->kind = KS_ARGLOC_MEM;
			snprintf(loc, loclen, "[%s%+lld]", rn, (long long)l->value);
		}
		return;
	}
	if (n == 1 && ops[0].atom == DW_OP_fbreg) {
		__s64 off;

		if (frame_base(ctx, fn, pc, fn_entry, &r, &off, &rn, &why))
			goto unavailable;
		l->kind = KS_ARGLOC_MEM;
		l->reg = r;
		l->value = off + (__s64)ops[0].number;
		snprintf(loc, loclen, "[%s%+lld]", rn, (long long)l->value);
		return;
	}
	/* Constants: litN / constN / constu / consts followed by stack_value. */
	if (n == 2 && ops[1].atom == DW_OP_stack_value) {
		unsigned at = ops[0].atom;
		bool c = true;

		if (at >= DW_OP_lit0 && at <= DW_OP_lit31)
			l->value = at - DW_OP_lit0;
		else if (at == DW_OP_const1s || at == DW_OP_const2s || at == DW_OP_const4s ||
			 at == DW_OP_const8s || at == DW_OP_consts)
			l->value = (__s64)ops[0].number;
		else if (at == DW_OP_const1u || at == DW_OP_const2u || at == DW_OP_const4u ||
			 at == DW_OP_const8u || at == DW_OP_constu)
			l->value = (__s64)ops[0].number;
		else
			c = false;
		if (c) {
			l->kind = KS_ARGLOC_CONST;
			snprintf(loc, loclen, "const %lld", (long long)l->value);
			return;
		}
	}
	if (n == 1 && ops[0].atom == DW_OP_implicit_value && ops[0].number <= 8) {
		Dwarf_Block blk;

		if (!dwarf_getlocation_implicit_value(&a, &ops[0], &blk)) {
			__u64 v = 0;

			memcpy(&v, blk.data, blk.length);
			l->kind = KS_ARGLOC_CONST;
			l->value = (__s64)v;
			snprintf(loc, loclen, "const %lld", (long long)l->value);
			return;
		}
	}
	if (n == 1 && ops[0].atom == DW_OP_addr && !ctx->pie && !ctx->kernel) {
		l->kind = KS_ARGLOC_ADDR;
		l->value = (__s64)ops[0].number;
		snprintf(loc, loclen, "[0x%llx]", (unsigned long long)ops[0].number);
		return;
	}
	switch (ops[0].atom) {
	case DW_OP_entry_value:
	case DW_OP_GNU_entry_value:
		why = "only the caller's entry value is described";
		break;
	case DW_OP_addr:
		why = ctx->kernel ? "a kernel global, moved by KASLR"
				     : "a global in a PIE, address unknown to BPF";
		break;
	default:
		why = n > 1 && ops[1].atom == DW_OP_piece ? "split across pieces"
							   : "location expression not supported";
	}
unavailable:
	l->kind = KS_ARGLOC_UNAVAILABLE;
	snprintf(loc, loclen, "unavailable at this site (%s)", why);
}
