/* SPDX-License-Identifier: MIT */
/* member.h - which struct member a function pointer in static data sits in,
 * from the object's DWARF type: the data word at nf_tables_cb + 0x1e0 is
 * nf_tables_cb[12].call, a "nfnl_callback.call".
 */
#ifndef KSHIELD_MEMBER_H
#define KSHIELD_MEMBER_H

#include "callgraph.h"

#define KS_MEMBER_MAX_INDEX 4

struct ks_member_at {
	char object[128];	/* the variable: "nf_tables_cb" */
	char member[160];	/* innermost struct and member: "nfnl_callback.call" */
	char expr[256];		/* "nf_tables_cb[12].call" */
	long index[KS_MEMBER_MAX_INDEX];	/* array indexes, outermost first */
	int nindex;
};

/* Resolve data reference @d of graph @g. Returns 0, or -ENOENT when no
 * object symbol or no DWARF variable covers it (then out->object may
 * still name the symbol), -EINVAL when the type walk does not end at a
 * pointer member. Makes @g's object-symbol and variable indexes on first
 * use. */
int ks_member_at(struct ks_cg *g, const struct ks_cg_dref *d, struct ks_member_at *out);

/* Whether vmlinux's variable @var exists, and whether its struct type has
 * a member named @member: the LSM hook list is the members of
 * security_hook_heads (up to 6.8) or static_calls_table (6.9+). */
bool ks_var_exists(struct ks_cg *g, const char *var);
bool ks_var_has_member(struct ks_cg *g, const char *var, const char *member);

/* Walk type @type from byte @off down to the pointer it holds, writing the
 * member path into @out (pure DWARF: unit-tested on the build's own). */
int ks_member_walk(Dwarf_Die *type, uint64_t off, struct ks_member_at *out);

/* The object symbol of file @fi at address @addr (as DWARF gives it,
 * bias added), or NULL. */
const char *ks_cg_object_at(struct ks_cg *g, int fi, uint64_t addr);
/* The same, and the offset of @addr in it. */
const char *ks_cg_object_off(struct ks_cg *g, int fi, uint64_t addr, uint64_t *off);
/* The object symbol of file @fi covering (@shndx, @off), or NULL. */
const char *ks_cg_object_in(struct ks_cg *g, int fi, uint32_t shndx, uint64_t off);
/* The struct type name of variable @obj of file @fi (arrays of structs:
 * the element's), or NULL. */
const char *ks_var_struct(struct ks_cg *g, const char *obj, int fi);
/* Where the address of object @obj of file @fi sits in static data: up to
 * @max members of other objects ("hfsc_qdisc_ops" holding hfsc_class_ops
 * in its Qdisc_ops.cl_ops); vmlinux's data is scanned for the address,
 * modules' relocations were kept (odrefs). Returns how many. */
int ks_obj_refs(struct ks_cg *g, const char *obj, int fi, struct ks_member_at *out, int *outfile,
		int max);

#endif /* KSHIELD_MEMBER_H */
