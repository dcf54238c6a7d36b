// SPDX-License-Identifier: MIT
/* hookpoints.c - the refusal points one function on a path gives
 * `kshield hooks` (hookfind.h): the security_* functions it calls (LSM
 * and fmod_ret rows, with the hook's arguments from DWARF), those of a
 * helper off the path that passes their verdict on, and the tracepoints
 * it fires; each marked as running before or after its call towards the
 * function asked about.
 */
#include <stdio.h>
#include <string.h>
#include <dwarf.h>
#include "callgraph.h"
#include "dispatch_table.h"
#include "member.h"
#include "hookfind_int.h"

/* ---- refusal points of one function on the path ---------------------- */

static void type_str(Dwarf_Die *t, char *buf, size_t len, int depth)
{
	Dwarf_Attribute a;
	Dwarf_Die in;
	bool has_in = dwarf_attr_integrate(t, DW_AT_type, &a) && dwarf_formref_die(&a, &in);
	const char *name = dwarf_diename(t);

	if (depth > 8) {
		ks_hooks_appendf(buf, len, "?");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
		if (has_in)
			type_str(&in, buf, len, depth + 1);
		else
			ks_hooks_appendf(buf, len, "void");
		ks_hooks_appendf(buf, len, " *");
		return;
	case DW_TAG_const_type:
		ks_hooks_appendf(buf, len, "const ");
		if (has_in)
			type_str(&in, buf, len, depth + 1);
		else
			ks_hooks_appendf(buf, len, "void");
		return;
	case DW_TAG_volatile_type:
		if (has_in)
			type_str(&in, buf, len, depth + 1);
		return;
	case DW_TAG_structure_type:
		ks_hooks_appendf(buf, len, "struct %s", name ? name : "?");
		return;
	case DW_TAG_union_type:
		ks_hooks_appendf(buf, len, "union %s", name ? name : "?");
		return;
	case DW_TAG_enumeration_type:
		ks_hooks_appendf(buf, len, "enum %s", name ? name : "?");
		return;
	case DW_TAG_subroutine_type:
		ks_hooks_appendf(buf, len, "fn");
		return;
	default:
		ks_hooks_appendf(buf, len, "%s", name ? name : "?");
	}
}

/* "struct socket *sock, int level, int optname" of security function @f;
 * *@is_void when it returns nothing (a hook that cannot refuse). */
static void hook_args(const struct search *s, uint32_t f, char *buf, size_t len, bool *is_void)
{
	const struct ks_cg_func *fn = &s->g->funcs[f];
	Dwarf_Attribute ra;
	Dwarf_Die die, p;

	buf[0] = 0;
	*is_void = false;
	if (!fn->die || !dwarf_offdie(s->g->file[fn->file].dw, fn->die, &die))
		return;
	*is_void = !dwarf_attr_integrate(&die, DW_AT_type, &ra);
	if (dwarf_child(&die, &p))
		return;
	do {
		Dwarf_Attribute a;
		Dwarf_Die t;
		const char *pn;

		if (dwarf_tag(&p) != DW_TAG_formal_parameter)
			continue;
		if (buf[0])
			ks_hooks_appendf(buf, len, ", ");
		if (dwarf_attr_integrate(&p, DW_AT_type, &a) && dwarf_formref_die(&a, &t))
			type_str(&t, buf, len, 0);
		pn = dwarf_diename(&p);
		if (pn) {
			if (buf[strlen(buf) - 1] != '*')
				ks_hooks_appendf(buf, len, " ");
			ks_hooks_appendf(buf, len, "%s", pn);
		}
	} while (dwarf_siblingof(&p, &p) == 0);
}

/* Whether the call at (@concrete, @pc) runs after @f's call towards the
 * function; *@known false when the addresses cannot tell. */
static bool runs_after(const struct search *s, uint32_t f, uint32_t concrete, uint64_t pc,
		       bool *known)
{
	const struct ks_cg *g = s->g;
	uint32_t n;
	const uint32_t *out;
	bool any_after = false, any_before = false;

	*known = false;
	switch (s->hop[f]) {
	case HOP_CALL:
	case HOP_INLINED: {
		const struct ks_cg_edge *e = &g->edges[s->hop_idx[f]];

		if (e->concrete != concrete)
			return false;
		*known = true;
		return pc > e->pc;
	}
	case HOP_CALLBACK: {
		const struct ks_cg_ref *r = &g->refs[s->hop_idx[f]];

		if (r->concrete != concrete)
			return false;
		*known = true;
		return pc > r->pc;
	}
	case HOP_NAMED:
		return false;	/* the dispatcher reaches it further down: unknown */
	case HOP_TABLE:
	case HOP_REGISTERED:
		/* through a pointer: before if some indirect call follows it */
		out = ks_cg_callees(g, f, &n);
		for (uint32_t i = 0; i < n; i++) {
			const struct ks_cg_edge *e = &g->edges[out[i]];

			if (e->kind != KS_CG_INDIRECT || e->concrete != concrete)
				continue;
			if (e->pc > pc)
				any_before = true;
			else
				any_after = true;
		}
		*known = any_before || any_after;
		return !any_before && any_after;
	default:
		return false;
	}
}

/* @e: a security_ or tracepoint call in @f (or in @via, inlined into @f).
 * @off: the call in @f to the out-of-line helper holding @e, when the
 * helper is off the path (rw_verify_area -> security_file_permission):
 * the row is one call further and ordered by that call. */
static void point_row(struct search *s, uint32_t f, const struct ks_cg_edge *e, uint32_t via,
		      const struct ks_cg_edge *off)
{
	const char *callee = fname(s, e->callee);
	enum ks_hook_kind kind;
	const char *name;
	struct ks_hook_row *row;
	bool after, known, guessed;

	if (!strncmp(callee, "security_", 9) && callee[9]) {
		kind = KS_HOOK_LSM;
		name = callee + 9;
	} else if (!strncmp(callee, "__traceiter_", 12) && callee[12]) {
		kind = KS_HOOK_TRACEPOINT;
		name = callee + 12;
	} else if (!strncmp(callee, "__SCT__tp_func_", 15) && callee[15]) {
		kind = KS_HOOK_TRACEPOINT;	/* the static call x86 tracepoints make */
		name = callee + 15;
	} else {
		return;
	}
	if (off && kind != KS_HOOK_LSM)
		return;
	after = off ? runs_after(s, f, off->concrete, off->pc, &known) :
		      runs_after(s, f, e->concrete, e->pc, &known);
	if (!s->reach[f])
		return;	/* only kernel threads, boot or other callers lead here */
	guessed = s->guessed[f] || s->reach[f] == 2;
	row = ks_hooks_row_get(s, kind, name);
	if (!row || !ks_hooks_row_better(row, s->dist[f] + (off ? 1 : 0), after, guessed))
		return;
	s->row_at[row - s->rows] = f;
	row->guessed = guessed;
	row->distance = s->dist[f] + (off ? 1 : 0);
	row->off_path = off != NULL;
	row->rare = kind == KS_HOOK_LSM && ks_hook_rare(name);
	row->after = after;
	row->order_known = known;
	row->variants = kind == KS_HOOK_LSM ? KS_VARIANT_LSM | KS_VARIANT_FMOD_RET : KS_VARIANT_TP;
	/* lsm/X needs X in the kernel's hook list; fmod_ret needs
	 * security_X out of line (a trampoline attaches to its entry) */
	if (kind == KS_HOOK_LSM && s->hook_list && !ks_var_has_member(s->g, s->hook_list, name))
		row->variants &= ~KS_VARIANT_LSM;
	if (kind == KS_HOOK_LSM && !(s->g->funcs[e->callee].flags & KS_CGF_OUTLINE))
		row->variants &= ~KS_VARIANT_FMOD_RET;
	snprintf(row->at, sizeof(row->at), "%s", fname(s, f));
	snprintf(row->via, sizeof(row->via), "%s", via != KS_CG_NONE ? fname(s, via) : "");
	if (kind == KS_HOOK_LSM) {
		hook_args(s, e->callee, row->detail, sizeof(row->detail), &row->no_verdict);
		if (row->no_verdict)
			row->variants = 0;
	}
	ks_hooks_path_of(s, f, row);
}

/* An out-of-line helper called from @f, off the path, that calls a
 * security_ function itself and passes its verdict on (it returns a
 * value): rw_verify_area -> security_file_permission, inode_permission ->
 * security_inode_permission. Its hook refuses the call on the path as
 * well as one on the path would. */
static void off_path_checks(struct search *s, uint32_t f, const struct ks_cg_edge *call)
{
	const struct ks_cg *g = s->g;
	uint32_t c = call->callee, n;
	const struct ks_cg_func *fn = &g->funcs[c];
	const uint32_t *out;
	Dwarf_Attribute a;
	Dwarf_Die die;

	if (!strncmp(fn->name, "security_", 9) || !(fn->flags & KS_CGF_OUTLINE) || !fn->die ||
	    !dwarf_offdie(g->file[fn->file].dw, fn->die, &die) ||
	    !dwarf_attr_integrate(&die, DW_AT_type, &a))
		return;	/* a void helper passes no verdict on */
	out = ks_cg_callees(g, c, &n);
	for (uint32_t i = 0; i < n; i++) {
		const struct ks_cg_edge *e = &g->edges[out[i]];

		if (e->kind == KS_CG_CALL && e->concrete == c && e->caller == c &&
		    !strncmp(g->funcs[e->callee].name, "security_", 9))
			point_row(s, f, e, c, call);
	}
}

/* socketcall(2) and ipc(2) inline every call they multiplex: the hooks of
 * the others (bind, listen beside sendto) are no refusal points of the
 * path through one of them. */
static bool multiplexer(const struct search *s, uint32_t f)
{
	char abi[16];
	const char *sc = ks_syscall_of(fname(s, f), abi, sizeof(abi));

	return sc && (!strcmp(sc, "socketcall") || !strcmp(sc, "ipc"));
}

void ks_hooks_points_of(struct search *s, uint32_t f)
{
	const struct ks_cg *g = s->g;
	uint32_t n, m;
	const uint32_t *out = ks_cg_callees(g, f, &n), *out2;

	for (uint32_t i = 0; i < n; i++) {
		const struct ks_cg_edge *e = &g->edges[out[i]];

		point_row(s, f, e, KS_CG_NONE, NULL);
		if (e->kind == KS_CG_CALL && s->dist[e->callee] < 0)
			off_path_checks(s, f, e);
		/* one level into helpers inlined here that are not on a path
		 * themselves (those give their own rows) */
		if (e->kind != KS_CG_INLINED || s->dist[e->callee] >= 0 || multiplexer(s, f))
			continue;
		out2 = ks_cg_callees(g, e->callee, &m);
		for (uint32_t j = 0; j < m; j++) {
			const struct ks_cg_edge *e2 = &g->edges[out2[j]];

			if (e2->concrete == e->concrete)
				point_row(s, f, e2, e->callee, NULL);
		}
	}
}
