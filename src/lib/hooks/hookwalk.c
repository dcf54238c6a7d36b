// SPDX-License-Identifier: MIT
/* hookwalk.c - the breadth-first walk of `kshield hooks` (hookfind.h)
 * over the callers of each function on a path: direct calls, inlined
 * copies, callbacks passed as constant arguments, static tables and their
 * dispatchers, registrations, objects made by name, and, when guessing,
 * the functions holding a struct whose member no table names. Where no
 * caller is found it says why (ks_hooks_lostf).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "callgraph.h"
#include "dispatch_table.h"
#include "member.h"
#include "registry.h"
#include "hookfind_int.h"

/* ---- the walk --------------------------------------------------------- */

static void visit(struct search *s, uint32_t f, uint32_t child, enum hop hop, size_t idx,
		  const char *note)
{
	if (f == KS_CG_NONE || f == s->g->indirect)
		return;
	if (s->nlinks == s->links_cap) {
		size_t cap = s->links_cap ? 2 * s->links_cap : 4096;
		struct link *p = realloc(s->links, cap * sizeof(*p));

		if (!p) {
			s->err = -ENOMEM;
			return;
		}
		s->links = p;
		s->links_cap = cap;
	}
	s->links[s->nlinks].from = f;
	s->links[s->nlinks].guess = hop == HOP_GUESS;
	s->links[s->nlinks++].to = child;
	if (s->dist[f] >= 0)
		return;
	if (s->guess && !s->q->guess && s->nqueue >= FALLBACK_MAX) {
		s->capped = true;	/* the fallback's guesses stop here */
		return;
	}
	s->dist[f] = s->dist[child] + 1;
	s->guessed[f] = s->guessed[child] || hop == HOP_GUESS;
	s->child[f] = child;
	s->hop[f] = hop;
	s->hop_idx[f] = idx;
	s->note[f] = note ? strdup(note) : NULL;
	s->queue[s->nqueue++] = f;
}

/* Visit each dispatcher of comma list @list that this graph has. */
static int visit_list(struct search *s, const char *list, uint32_t child, enum hop hop,
		      const char *note)
{
	char buf[512], *save = NULL, *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (uint32_t d = ks_cg_lookup(s->g, tok); d != KS_CG_NONE; d = ks_cg_next_same(s->g, d)) {
			if (!(s->g->funcs[d].flags & (KS_CGF_OUTLINE | KS_CGF_INLINED)))
				continue;
			visit(s, d, child, hop, 0, note);
			n++;
		}
	}
	return n;
}

static void entry_row(struct search *s, enum ks_hook_kind kind, const char *name,
		      const char *detail, int dist, uint32_t at)
{
	struct ks_hook_row *row = ks_hooks_row_get(s, kind, name);

	if (!row || !ks_hooks_row_better(row, dist, false, s->guessed[at]))
		return;
	s->row_at[row - s->rows] = at;
	row->guessed = s->guessed[at];
	row->variants = kind == KS_HOOK_SYSCALL ? KS_VARIANT_TP : 0;
	row->distance = dist;
	row->order_known = true;
	snprintf(row->detail, sizeof(row->detail), "%s", detail);
	snprintf(row->at, sizeof(row->at), "%s", fname(s, at));
	ks_hooks_path_of(s, at, row);
}

static void expand_refs(struct search *s, uint32_t f, int *found, int *said)
{
	struct ks_cg *g = s->g;

	uint32_t cf = ks_cg_canonical(g, f);	/* refs are kept by name */

	for (uint32_t k = s->ref_first[cf]; k < s->ref_first[cf + 1]; k++) {
		const struct ks_cg_ref *r = &g->refs[s->ref_idx[k]];
		char note[512];

		if (r->to == g->indirect)
			continue;
		if (!ks_cg_is_init(g, r->concrete)) {
			snprintf(note, sizeof(note), "passed to %s", fname(s, r->to));
			visit(s, r->holder, f, HOP_CALLBACK, s->ref_idx[k], note);
			(*found)++;
			continue;
		}
		const struct ks_registrar *reg = ks_registrar_find(fname(s, r->to));

		if (!reg || reg->fn_arg != r->argno) {
			ks_hooks_lostf(s, s->dist[f], "lost at %s: registered by %s() in %s, no dispatcher known for %s",
				       fname(s, f), fname(s, r->to), fname(s, r->holder), fname(s, r->to));
			(*said)++;
			continue;
		}
		long type = -1;

		for (int c = 0; c < r->nconst; c++)
			if (r->const_argno[c] == reg->type_arg)
				type = r->consts[c];
		snprintf(note, sizeof(note), "%s(type %ld) in %s", reg->name, type, fname(s, r->holder));
		if (visit_list(s, reg->dispatchers, f, HOP_REGISTERED, note))
			(*found)++;
		if (reg->entry == KS_ENTRY_NETLINK && type >= 0) {
			const char *prefix = ks_registrar_prefix(reg);
			const char *en = prefix ? ks_cg_enumerator(g, prefix, type) : NULL;
			char name[96];

			if (en)
				snprintf(name, sizeof(name), "%s %s", reg->family, en);
			else
				snprintf(name, sizeof(name), "%s %ld", reg->family, type);
			snprintf(note, sizeof(note), "%s(..., %ld, %s) in %s", reg->name, type,
				 fname(s, f), fname(s, r->holder));
			entry_row(s, KS_HOOK_NETLINK, name, note, s->dist[f] + 1, f);
		}
	}
}

/* A member no table names: after the confirmed search, the functions
 * holding a pointer to its struct and calling through a pointer are taken
 * as its callers (rows through them are marked guessed). */
static void add_guess(struct search *s, uint32_t f, const char *member, const char *expr)
{
	struct guess *gs;
	const char *dot = strchr(member, '.');

	if (!dot)
		return;
	if (s->nguesses == s->guesses_cap) {
		size_t cap = s->guesses_cap ? 2 * s->guesses_cap : 64;
		struct guess *p = realloc(s->guesses, cap * sizeof(*p));

		if (!p)
			return;
		s->guesses = p;
		s->guesses_cap = cap;
	}
	gs = &s->guesses[s->nguesses++];
	gs->f = f;
	snprintf(gs->sname, sizeof(gs->sname), "%.*s", (int)(dot - member), member);
	snprintf(gs->note, sizeof(gs->note), "guessed: %s in %s", member, expr);
	if (s->phase2 && s->guess)
		ks_hooks_run_guesses(s);
}

void ks_hooks_run_guesses(struct search *s)
{
	const struct ks_cg *g = s->g;

	for (size_t i = 0; i < s->nguesses; i++) {
		const struct guess *gs = &s->guesses[i];

		for (size_t h = 0; h < g->nholders; h++)
			if (!strcmp(g->holders[h].sname, gs->sname) && g->holders[h].func != gs->f)
				visit(s, g->holders[h].func, gs->f, HOP_GUESS, 0, gs->note);
	}
	s->nguesses = 0;
}

static int visit_made(struct search *s, uint32_t f, const struct ks_made *m, int n)
{
	for (int i = 0; i < n; i++)
		visit(s, m[i].func, f, HOP_MADE, 0, m[i].note);
	return n;
}

/* A function reached only through pointers stored at run time, in a
 * module: the module's registrations are the way in (once per module). */
static int module_way_in(struct search *s, uint32_t f, char *why, size_t whylen)
{
	const struct ks_cg_func *fn = &s->g->funcs[f];
	struct ks_made m[KS_REGISTRY_MAX_MAKERS];
	int n;

	why[0] = 0;
	if (!s->g->file[fn->file].rel)
		return 0;
	if (s->module_done[fn->file]) {
		snprintf(why, whylen, "module %s: its registrations followed already", s->g->file[fn->file].name);
		return -1;
	}
	s->module_done[fn->file] = 1;
	n = ks_module_makers(s->g, fn->file, m, KS_REGISTRY_MAX_MAKERS, why, whylen);
	return visit_made(s, f, m, n);
}

static void expand_drefs(struct search *s, uint32_t f, int *found, int *said)
{
	struct ks_cg *g = s->g;

	uint32_t cf = ks_cg_canonical(g, f);	/* data references are kept by name */

	for (uint32_t k = s->dref_first[cf]; k < s->dref_first[cf + 1]; k++) {
		const struct ks_cg_dref *d = &g->drefs[s->dref_idx[k]];
		struct ks_member_at ma;
		const struct ks_dispatch *disp;
		char note[512];
		int err = ks_member_at(g, d, &ma);

		if (err == -ENOENT && !ma.object[0])
			continue;	/* not in an object: symbol tables, mcount records */
		if (err) {
			ks_hooks_lostf(s, s->dist[f], "lost at %s: in %s (%s), member not resolved from DWARF",
				       fname(s, f), ma.object, g->file[d->file].name);
			(*said)++;
			continue;
		}
		disp = ks_dispatch_find(ma.member);
		if (!disp) {
			struct ks_made m[KS_REGISTRY_MAX_MAKERS];
			char sname[160], why[256], why2[256], *dot;
			int nm, mm;

			snprintf(sname, sizeof(sname), "%s", ma.member);
			dot = strchr(sname, '.');
			if (dot)
				*dot = 0;
			nm = ks_registry_makers(g, ma.object, d->file, sname, m, KS_REGISTRY_MAX_MAKERS,
						why, sizeof(why));
			if (nm > 0) {
				(*found) += visit_made(s, f, m, nm);
				continue;
			}
			mm = module_way_in(s, f, why2, sizeof(why2));
			if (mm > 0)
				(*found) += mm;
			ks_hooks_lostf(s, s->dist[f], "lost at %s: in %s (%s), no dispatcher known for %s (%s%s%s)%s%s",
				       fname(s, f), ma.expr, ma.member, ma.member, why,
				       why2[0] ? "; " : "", why2,
				       mm > 0 ? "; followed the module's registrations instead" : "",
				       s->guess ? " (followed as a guess: functions holding that struct and calling through a pointer)" : "");
			(*said)++;
			add_guess(s, f, ma.member, ma.expr);
			continue;
		}
		ks_hooks_want_module(s, disp->module);
		snprintf(note, sizeof(note), "%s in %s", ma.member, ma.expr);
		if (visit_list(s, disp->dispatchers, f, HOP_TABLE, note))
			(*found)++;
		if (disp->entry != KS_ENTRY_NONE && ma.nindex) {
			char name[96];

			const char *prefix = ks_index_prefix(disp, ma.object);
			const char *en = prefix ? ks_cg_enumerator(g, prefix, ma.index[0]) : NULL;

			if (en)
				snprintf(name, sizeof(name), "%s", en);
			else if (disp->entry == KS_ENTRY_URING)
				snprintf(name, sizeof(name), "opcode %ld", ma.index[0]);
			else
				snprintf(name, sizeof(name), "%s %s", disp->family, ma.expr);
			if (en && disp->entry == KS_ENTRY_NETLINK) {
				snprintf(name, sizeof(name), "%s %s", disp->family, en);
			}
			entry_row(s, disp->entry == KS_ENTRY_URING ? KS_HOOK_URING : KS_HOOK_NETLINK,
				  name, note, s->dist[f] + 1, f);
		}
	}
}

void ks_hooks_expand(struct search *s, uint32_t f)
{
	struct ks_cg *g = s->g;
	const char *name = fname(s, f), *sc, *member;
	char abi[16];
	uint32_t n;
	const uint32_t *in;
	int found = 0, said = 0;

	sc = ks_syscall_of(name, abi, sizeof(abi));
	if (sc) {
		struct ks_hook_row *row = ks_hooks_row_get(s, KS_HOOK_SYSCALL, sc);

		if (!row)
			return;
		if (abi[0] && !strstr(row->detail, abi))
			ks_hooks_appendf(row->detail, sizeof(row->detail), "%s%s", row->detail[0] ? "," : "", abi);
		if (ks_hooks_row_better(row, s->dist[f], false, s->guessed[f])) {
			char detail[256];

			snprintf(detail, sizeof(detail), "%s", row->detail);
			entry_row(s, KS_HOOK_SYSCALL, sc, detail, s->dist[f], f);
		}
		return;	/* user space is reached */
	}
	if (ks_hub(name)) {
		ks_hooks_lostf(s, s->dist[f], "stopped at %s: reached from everywhere (scheduler, exit, softirq, socket backlog), not followed",
			       name);
		return;
	}
	if (s->dist[f] >= s->maxdist || ks_cg_is_init(g, f))
		return;	/* boot-time code: no path from user space through it */
	in = ks_cg_callers(g, f, &n);
	for (uint32_t i = 0; i < n; i++) {
		const struct ks_cg_edge *e = &g->edges[in[i]];

		if (e->kind == KS_CG_INDIRECT)
			continue;
		if ((!(g->funcs[e->caller].flags & KS_CGF_OUTLINE) ||
		     (g->funcs[e->caller].flags & KS_CGF_HDR_STATIC)) && e->concrete != e->caller) {
			/* an inline-only helper (NF_HOOK, a header's static inline) is one
			 * node for all its copies: go straight to the function holding
			 * this copy, or ipmr's NF_HOOK would lead to ip6_input's */
			char note[192];

			snprintf(note, sizeof(note), "in inlined %s", fname(s, e->caller));
			visit(s, e->concrete, f, e->kind == KS_CG_INLINED ? HOP_INLINED : HOP_CALL, in[i], note);
		} else {
			visit(s, e->caller, f, e->kind == KS_CG_INLINED ? HOP_INLINED : HOP_CALL, in[i], NULL);
		}
		found++;
	}
	expand_refs(s, f, &found, &said);
	expand_drefs(s, f, &found, &said);
	member = ks_named_cb_member(name);
	if (member) {
		const struct ks_dispatch *disp = ks_dispatch_find(member);

		if (disp && visit_list(s, disp->dispatchers, f, HOP_NAMED, member))
			found++;
	}
	if (!found && !said && !(s->hop[f] == HOP_SOURCE && n)) {
		struct ks_made m[KS_REGISTRY_MAX_MAKERS];
		int nm = ks_code_takers(g, name, g->funcs[f].file, true, m, 0, KS_REGISTRY_MAX_MAKERS);
		char why[256];
		int mm;

		if (nm > 0) {
			visit_made(s, f, m, nm);
			return;
		}
		mm = module_way_in(s, f, why, sizeof(why));

		if (mm > 0)
			ks_hooks_lostf(s, s->dist[f], "lost at %s: no direct caller, no table holds it (a pointer stored at run time?); followed %s's registrations instead",
				       name, s->g->file[s->g->funcs[f].file].name);
		else if (mm == 0)
			ks_hooks_lostf(s, s->dist[f], "lost at %s: no direct caller, no table holds it (a pointer stored at run time, a work item or a kernel thread%s%s)",
				       name, why[0] ? "; " : "", why);
	}
}
