// SPDX-License-Identifier: MIT
/* hookfind.c - refusal points on the paths from user space to a kernel
 * function (hookfind.h): the module set, the breadth-first walk over
 * callers, and the rows each function on the way gives.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dwarf.h>
#include "err.h"
#include "callgraph.h"
#include "clock.h"
#include "dispatch_table.h"
#include "kmodtree.h"
#include "member.h"
#include "registry.h"
#include "hookfind.h"

enum hop {
	HOP_SOURCE,		/* one of the functions asked about */
	HOP_CALL,		/* calls child */
	HOP_INLINED,		/* child is inlined into it */
	HOP_CALLBACK,		/* passes &child to a function that calls it */
	HOP_TABLE,		/* calls through the struct member child sits in */
	HOP_REGISTERED,		/* dispatches what a registrar recorded */
	HOP_NAMED,		/* calls through a run-time callback (dispatch_table.c) */
	HOP_GUESS,		/* holds a pointer to the struct and calls through a pointer */
	HOP_MADE,		/* makes (looks up by name) the object holding child (registry.h) */
};

/* Functions on paths after which the no-row fallback's guesses stop: a
 * guess through a notifier chain reaches half the kernel (32k functions,
 * minutes of search), and the nearest rows are found long before. */
#define FALLBACK_MAX 2000
#define KS_STR2(x) #x
#define KS_STR(x) KS_STR2(x)

struct lost {
	int dist;
	char *what;
};

struct search {
	struct ks_cg *g;
	const struct ks_hooks_query *q;
	struct ks_hooks_result *r;
	struct ks_kmodtree tree;
	int maxdist;
	bool guess;		/* q->guess, or the fallback when nothing else gave a row */
	bool capped;		/* the fallback stopped at FALLBACK_MAX functions */
	uint8_t module_done[KS_CG_MAX_FILES];	/* ks_module_makers followed */

	/* per function */
	int *dist;
	uint32_t *child;
	uint8_t *hop;
	size_t *hop_idx;	/* edge (CALL, INLINED) or ref (CALLBACK) index */
	char **note;		/* TABLE, REGISTERED, NAMED, CALLBACK: what was followed */
	uint32_t *queue;
	size_t nqueue;
	uint32_t nf;		/* functions when the arrays were made */

	/* refs and drefs by function (counting sort) */
	uint32_t *ref_first, *ref_idx, *dref_first, *dref_idx;

	/* every caller -> callee step seen (also to functions already
	 * visited): walked forward from the syscall entries, it says which
	 * functions user space reaches */
	struct link { uint32_t from, to; bool guess; } *links;
	size_t nlinks, links_cap;
	uint8_t *reach;		/* 1: reached from a syscall entry; 2: only through a guess */
	uint8_t *guessed;	/* per function: its path to the function has a guess */
	bool phase2;		/* guessing: members without a known dispatcher */
	const char *hook_list;	/* the variable whose members are the LSM hooks, NULL unknown */
	struct guess { uint32_t f; char sname[96]; char note[256]; } *guesses;
	size_t nguesses, guesses_cap;
	uint32_t *entry;	/* the entry it was reached from */

	struct ks_hook_row *rows;
	uint32_t *row_at;	/* per row: the function holding it */
	size_t nrows, rows_cap;
	struct lost *lost;
	size_t nlost, lost_cap;
	char want[64][64];	/* modules to read next */
	int nwant;
	int err;
};

static void appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static const char *fname(const struct search *s, uint32_t f)
{
	return s->g->funcs[f].name;
}

/* ---- modules -------------------------------------------------------- */

static void want_module(struct search *s, const char *name)
{
	if (!name || ks_cg_has_file(s->g, name))
		return;
	for (int i = 0; i < s->nwant; i++)
		if (!strcmp(s->want[i], name))
			return;
	if (s->nwant < 64)
		snprintf(s->want[s->nwant++], sizeof(s->want[0]), "%s", name);
}

/* Read module @i of the tree and what it depends on. */
static int load_module(struct search *s, int i, int depth)
{
	struct ks_kmod *m = &s->tree.mod[i];
	int err;

	if (ks_cg_has_file(s->g, m->name) || depth > 16)
		return 0;
	err = ks_cg_add(s->g, m->path, m->name);
	if (err)
		return err;
	for (int d = 0; d < m->ndeps; d++) {
		int j = ks_kmodtree_find(&s->tree, m->deps[d]);

		if (j >= 0 && (err = load_module(s, j, depth + 1)))
			return err;
	}
	return 0;
}

/* ---- rows ----------------------------------------------------------- */

static struct ks_hook_row *row_get(struct search *s, enum ks_hook_kind kind, const char *name)
{
	struct ks_hook_row *row;

	for (size_t i = 0; i < s->nrows; i++)
		if (s->rows[i].kind == kind && !strcmp(s->rows[i].name, name))
			return &s->rows[i];
	if (s->nrows == s->rows_cap) {
		size_t cap = s->rows_cap ? 2 * s->rows_cap : 64;
		struct ks_hook_row *p = realloc(s->rows, cap * sizeof(*p));
		uint32_t *a = realloc(s->row_at, cap * sizeof(*a));

		if (a)
			s->row_at = a;
		if (!p || !a) {
			free(p == s->rows ? NULL : p);
			s->err = -ENOMEM;
			return NULL;
		}
		s->rows = p;
		s->rows_cap = cap;
	}
	s->row_at[s->nrows] = KS_CG_NONE;
	row = &s->rows[s->nrows++];
	memset(row, 0, sizeof(*row));
	row->kind = kind;
	row->distance = -1;
	snprintf(row->name, sizeof(row->name), "%s", name);
	return row;
}

/* @cand better than what @row holds (a fresh row holds nothing)? */
static bool row_better(const struct ks_hook_row *row, int dist, bool after, bool guessed)
{
	if (row->distance < 0)
		return true;
	if (row->guessed != guessed)
		return row->guessed;
	if (row->after != after)
		return row->after;
	return dist < row->distance;
}

static void lostf(struct search *s, int dist, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < s->nlost; i++)
		if (!strcmp(s->lost[i].what, buf))
			return;
	if (s->nlost == s->lost_cap) {
		size_t cap = s->lost_cap ? 2 * s->lost_cap : 64;
		struct lost *p = realloc(s->lost, cap * sizeof(*p));

		if (!p)
			return;
		s->lost = p;
		s->lost_cap = cap;
	}
	s->lost[s->nlost].dist = dist;
	s->lost[s->nlost++].what = strdup(buf);
}

/* The path from @at down to the function asked about. */
static void path_of(const struct search *s, uint32_t at, struct ks_hook_row *row)
{
	uint32_t cur = at;
	int guard = 0;

	row->path[0] = row->inlined[0] = 0;
	appendf(row->path, sizeof(row->path), "%s", fname(s, at));
	while (s->hop[cur] != HOP_SOURCE && guard++ < 64) {
		uint32_t c = s->child[cur];

		appendf(row->path, sizeof(row->path), " > %s", fname(s, c));
		if (s->hop[cur] == HOP_INLINED) {
			const struct ks_cg_edge *e = &s->g->edges[s->hop_idx[cur]];

			appendf(row->path, sizeof(row->path), " (inlined)");
			appendf(row->inlined, sizeof(row->inlined), "%s%s in %s", row->inlined[0] ? "; " : "",
				fname(s, c), fname(s, e->concrete));
		}
		if (s->note[cur])
			appendf(row->path, sizeof(row->path), " [%s]", s->note[cur]);
		cur = c;
	}
}

/* ---- the walk --------------------------------------------------------- */

static void run_guesses(struct search *s);

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
	struct ks_hook_row *row = row_get(s, kind, name);

	if (!row || !row_better(row, dist, false, s->guessed[at]))
		return;
	s->row_at[row - s->rows] = at;
	row->guessed = s->guessed[at];
	row->variants = kind == KS_HOOK_SYSCALL ? KS_VARIANT_TP : 0;
	row->distance = dist;
	row->order_known = true;
	snprintf(row->detail, sizeof(row->detail), "%s", detail);
	snprintf(row->at, sizeof(row->at), "%s", fname(s, at));
	path_of(s, at, row);
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
			lostf(s, s->dist[f], "lost at %s: registered by %s() in %s, no dispatcher known for %s",
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
		run_guesses(s);
}

static void run_guesses(struct search *s)
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
			lostf(s, s->dist[f], "lost at %s: in %s (%s), member not resolved from DWARF",
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
			lostf(s, s->dist[f], "lost at %s: in %s (%s), no dispatcher known for %s (%s%s%s)%s%s",
			      fname(s, f), ma.expr, ma.member, ma.member, why,
			      why2[0] ? "; " : "", why2,
			      mm > 0 ? "; followed the module's registrations instead" : "",
			      s->guess ? " (followed as a guess: functions holding that struct and calling through a pointer)" : "");
			(*said)++;
			add_guess(s, f, ma.member, ma.expr);
			continue;
		}
		want_module(s, disp->module);
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

static void expand(struct search *s, uint32_t f)
{
	struct ks_cg *g = s->g;
	const char *name = fname(s, f), *sc, *member;
	char abi[16];
	uint32_t n;
	const uint32_t *in;
	int found = 0, said = 0;

	sc = ks_syscall_of(name, abi, sizeof(abi));
	if (sc) {
		struct ks_hook_row *row = row_get(s, KS_HOOK_SYSCALL, sc);

		if (!row)
			return;
		if (abi[0] && !strstr(row->detail, abi))
			appendf(row->detail, sizeof(row->detail), "%s%s", row->detail[0] ? "," : "", abi);
		if (row_better(row, s->dist[f], false, s->guessed[f])) {
			char detail[256];

			snprintf(detail, sizeof(detail), "%s", row->detail);
			entry_row(s, KS_HOOK_SYSCALL, sc, detail, s->dist[f], f);
		}
		return;	/* user space is reached */
	}
	if (ks_hub(name)) {
		lostf(s, s->dist[f], "stopped at %s: reached from everywhere (scheduler, exit, softirq, socket backlog), not followed",
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
			lostf(s, s->dist[f], "lost at %s: no direct caller, no table holds it (a pointer stored at run time?); followed %s's registrations instead",
			      name, s->g->file[s->g->funcs[f].file].name);
		else if (mm == 0)
			lostf(s, s->dist[f], "lost at %s: no direct caller, no table holds it (a pointer stored at run time, a work item or a kernel thread%s%s)",
			      name, why[0] ? "; " : "", why);
	}
}

/* ---- refusal points of one function on the path ---------------------- */

static void type_str(Dwarf_Die *t, char *buf, size_t len, int depth)
{
	Dwarf_Attribute a;
	Dwarf_Die in;
	bool has_in = dwarf_attr_integrate(t, DW_AT_type, &a) && dwarf_formref_die(&a, &in);
	const char *name = dwarf_diename(t);

	if (depth > 8) {
		appendf(buf, len, "?");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
		if (has_in)
			type_str(&in, buf, len, depth + 1);
		else
			appendf(buf, len, "void");
		appendf(buf, len, " *");
		return;
	case DW_TAG_const_type:
		appendf(buf, len, "const ");
		if (has_in)
			type_str(&in, buf, len, depth + 1);
		else
			appendf(buf, len, "void");
		return;
	case DW_TAG_volatile_type:
		if (has_in)
			type_str(&in, buf, len, depth + 1);
		return;
	case DW_TAG_structure_type:
		appendf(buf, len, "struct %s", name ? name : "?");
		return;
	case DW_TAG_union_type:
		appendf(buf, len, "union %s", name ? name : "?");
		return;
	case DW_TAG_enumeration_type:
		appendf(buf, len, "enum %s", name ? name : "?");
		return;
	case DW_TAG_subroutine_type:
		appendf(buf, len, "fn");
		return;
	default:
		appendf(buf, len, "%s", name ? name : "?");
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
			appendf(buf, len, ", ");
		if (dwarf_attr_integrate(&p, DW_AT_type, &a) && dwarf_formref_die(&a, &t))
			type_str(&t, buf, len, 0);
		pn = dwarf_diename(&p);
		if (pn) {
			if (buf[strlen(buf) - 1] != '*')
				appendf(buf, len, " ");
			appendf(buf, len, "%s", pn);
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
	row = row_get(s, kind, name);
	if (!row || !row_better(row, s->dist[f] + (off ? 1 : 0), after, guessed))
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
	path_of(s, f, row);
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

static void points_of(struct search *s, uint32_t f)
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

/* ---- one search over the current graph ----------------------------------- */

/* Whether the graph has code of a function named @name. */
static bool has_code(const struct ks_cg *g, const char *name)
{
	for (uint32_t f = ks_cg_lookup(g, name); f != KS_CG_NONE; f = ks_cg_next_same(g, f))
		if (g->funcs[f].flags & (KS_CGF_OUTLINE | KS_CGF_INLINED))
			return true;
	return false;
}

static int index_by_func(uint32_t nfuncs, size_t n, const void *arr, size_t elem, size_t func_off,
			 uint32_t **first, uint32_t **idx)
{
	uint32_t *pos;

	*first = calloc(nfuncs + 2, sizeof(uint32_t));
	*idx = malloc((n + 1) * sizeof(uint32_t));
	pos = calloc(nfuncs + 2, sizeof(uint32_t));
	if (!*first || !*idx || !pos) {
		free(pos);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t f;

		memcpy(&f, (const char *)arr + i * elem + func_off, sizeof(f));
		(*first)[f + 1]++;
	}
	for (uint32_t f = 1; f <= nfuncs; f++)
		(*first)[f] += (*first)[f - 1];
	memcpy(pos, *first, (nfuncs + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++) {
		uint32_t f;

		memcpy(&f, (const char *)arr + i * elem + func_off, sizeof(f));
		(*idx)[pos[f]++] = i;
	}
	free(pos);
	return 0;
}

static void search_reset(struct search *s)
{
	for (uint32_t i = 0; s->note && i < s->nf; i++)
		free(s->note[i]);
	free(s->dist);
	free(s->child);
	free(s->hop);
	free(s->hop_idx);
	free(s->note);
	free(s->queue);
	free(s->ref_first);
	free(s->ref_idx);
	free(s->dref_first);
	free(s->dref_idx);
	free(s->rows);
	free(s->row_at);
	free(s->links);
	free(s->reach);
	free(s->entry);
	free(s->guessed);
	free(s->guesses);
	s->guessed = NULL;
	s->guesses = NULL;
	s->nguesses = s->guesses_cap = 0;
	s->links = NULL;
	s->reach = NULL;
	s->entry = NULL;
	s->row_at = NULL;
	s->nlinks = s->links_cap = 0;
	for (size_t i = 0; i < s->nlost; i++)
		free(s->lost[i].what);
	free(s->lost);
	s->dist = NULL;
	s->child = s->queue = NULL;
	s->hop = NULL;
	s->hop_idx = NULL;
	s->note = NULL;
	s->ref_first = s->ref_idx = s->dref_first = s->dref_idx = NULL;
	s->rows = NULL;
	s->nrows = s->rows_cap = 0;
	s->lost = NULL;
	s->nlost = s->lost_cap = 0;
	s->nwant = 0;
	s->nqueue = 0;
}

/* Forward from the syscall entries over the steps seen: what user space
 * reaches. */
static int mark_reach(struct search *s)
{
	uint32_t nf = s->nf, *first = NULL, *idx = NULL, *q;
	size_t nq = 0;
	char abi[16];
	int err;

	s->reach = calloc(nf, 1);
	s->entry = malloc(nf * sizeof(uint32_t));
	q = malloc(nf * sizeof(uint32_t));
	err = !s->reach || !s->entry || !q ? -ENOMEM :
	      index_by_func(nf, s->nlinks, s->links, sizeof(*s->links), offsetof(struct link, from),
			    &first, &idx);
	if (err) {
		free(q);
		return ks_err(-ENOMEM, "out of memory searching the call graph");
	}
	/* native entries first: a row reached by sendto and by i386's
	 * socketcall names sendto */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nqueue; i++) {
			uint32_t f = s->queue[i];
			const char *sc = ks_syscall_of(fname(s, f), abi, sizeof(abi));
			bool native = sc && !strstr(abi, "compat") && !strstr(abi, "ia32") &&
				      !strstr(fname(s, f), "compat") && strcmp(sc, "socketcall") &&
				      strcmp(sc, "ipc");

			if (!sc || s->reach[f] || native != !pass)
				continue;
			s->reach[f] = 1;
			s->entry[f] = f;
			q[nq++] = f;
		}
	/* confirmed steps first (reach 1), then guessed ones too (reach 2) */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t h = 0; h < nq; h++) {
			uint32_t f = q[h];

			for (uint32_t k = first[f]; k < first[f + 1]; k++) {
				const struct link *l = &s->links[idx[k]];

				if (s->reach[l->to] || (l->guess && !pass))
					continue;
				s->reach[l->to] = 1 + pass;
				s->entry[l->to] = s->entry[f];
				q[nq++] = l->to;
			}
		}
	}
	free(first);
	free(idx);
	free(q);
	return 0;
}

/* Entry rows (netlink types, opcodes) whose function user space does not
 * reach go. */
static void drop_unreached(struct search *s)
{
	size_t j = 0;

	for (size_t i = 0; i < s->nrows; i++) {
		uint32_t at = s->row_at[i];

		if (at != KS_CG_NONE && !s->reach[at])
			continue;
		if (at != KS_CG_NONE && s->reach[at] == 2)
			s->rows[i].guessed = true;
		if (at != KS_CG_NONE) {
			char abi[16];
			const char *sc = ks_syscall_of(fname(s, s->entry[at]), abi, sizeof(abi));

			snprintf(s->rows[i].from, sizeof(s->rows[i].from), "%s", sc ? sc : "");
		}
		s->rows[j] = s->rows[i];
		s->row_at[j++] = at;
	}
	s->nrows = j;
}

static int search_run(struct search *s, uint32_t *src, int nsrc)
{
	struct ks_cg *g = s->g;
	uint32_t nf = g->nfuncs;
	size_t head;

	search_reset(s);
	s->nf = nf;
	s->hook_list = ks_var_exists(g, "static_calls_table") ? "static_calls_table" :
		       ks_var_exists(g, "security_hook_heads") ? "security_hook_heads" : NULL;
	s->dist = malloc(nf * sizeof(int));
	s->child = calloc(nf, sizeof(uint32_t));
	s->hop = calloc(nf, 1);
	s->hop_idx = calloc(nf, sizeof(size_t));
	s->note = calloc(nf, sizeof(char *));
	s->queue = malloc(nf * sizeof(uint32_t));
	s->guessed = calloc(nf, 1);
	s->phase2 = false;
	if (!s->guessed || !s->dist || !s->child || !s->hop || !s->hop_idx || !s->note || !s->queue ||
	    index_by_func(nf, g->nrefs, g->refs, sizeof(*g->refs), offsetof(struct ks_cg_ref, func),
			  &s->ref_first, &s->ref_idx) ||
	    index_by_func(nf, g->ndrefs, g->drefs, sizeof(*g->drefs), offsetof(struct ks_cg_dref, func),
			  &s->dref_first, &s->dref_idx))
		return ks_err(-ENOMEM, "out of memory searching the call graph");
	memset(s->dist, 0xff, nf * sizeof(int));
	memset(s->module_done, 0, sizeof(s->module_done));
	s->capped = false;
	for (int i = 0; i < nsrc; i++) {
		if (s->dist[src[i]] >= 0)
			continue;
		s->dist[src[i]] = 0;
		s->hop[src[i]] = HOP_SOURCE;
		s->queue[s->nqueue++] = src[i];
	}
	for (head = 0; head < s->nqueue && !s->err; head++)
		expand(s, s->queue[head]);
	s->phase2 = true;	/* the confirmed search is done: now the guesses */
	if (s->guess)
		run_guesses(s);
	else
		s->nguesses = 0;
	for (; head < s->nqueue && !s->err; head++)
		expand(s, s->queue[head]);
	if (!s->err)
		s->err = mark_reach(s);
	for (head = 0; head < s->nqueue && !s->err; head++)
		points_of(s, s->queue[head]);
	drop_unreached(s);
	/* importers of module functions on the path are callers not read yet */
	for (head = 0; head < s->nqueue; head++) {
		const struct ks_cg_func *fn = &g->funcs[s->queue[head]];

		if (!(fn->flags & KS_CGF_OUTLINE) || !g->file[fn->file].rel || s->guessed[s->queue[head]])
			continue;	/* guesses read no more modules */
		for (int m = 0; m < s->tree.n; m++)
			if (!ks_cg_has_file(g, s->tree.mod[m].name) &&
			    ks_kmodtree_imports(&s->tree, m, fn->name))
				want_module(s, s->tree.mod[m].name);
	}
	return s->err;
}

static int lost_cmp(const void *a, const void *b)
{
	const struct lost *x = a, *y = b;

	return x->dist != y->dist ? x->dist - y->dist : strcmp(x->what, y->what);
}

int ks_hooks_find(const struct ks_hooks_query *q, struct ks_hooks_result *r)
{
	struct ks_cg g;
	struct search s = { .g = &g, .q = q, .r = r };
	uint32_t src[32];
	int nsrc = 0, err, iter;
	char list[1024], *save = NULL, *tok;
	int64_t t0 = ks_mono_ns(), t1;

	memset(r, 0, sizeof(*r));
	s.maxdist = q->max_distance > 0 ? q->max_distance : 20;
	err = ks_cg_init(&g);
	if (err)
		return err;
	err = ks_cg_add(&g, q->vmlinux, "vmlinux");
	if (!err && q->modules_dir)
		err = ks_kmodtree_scan(q->modules_dir, &s.tree);
	snprintf(list, sizeof(list), "%s", q->functions);
	for (tok = strtok_r(list, ", ", &save); !err && tok; tok = strtok_r(NULL, ", ", &save)) {
		int m, idx[8], n;

		if (has_code(&g, tok))
			continue;
		m = s.tree.n ? ks_kmodtree_defining(&s.tree, tok) : -1;
		if (m >= 0) {
			err = load_module(&s, m, 0);
			continue;
		}
		/* static and inlined everywhere: no symbol, only DWARF */
		n = s.tree.n ? ks_kmodtree_mentioning(&s.tree, tok, idx, 8) : 0;
		for (int i = 0; i < n && !err; i++)
			err = load_module(&s, idx[i], 0);
	}
	s.guess = q->guess;
again:
	for (iter = 0; !err && iter < 8; iter++) {
		err = ks_cg_finish(&g);
		if (err)
			break;
		nsrc = 0;
		r->missing[0] = 0;
		snprintf(list, sizeof(list), "%s", q->functions);
		for (tok = strtok_r(list, ", ", &save); tok && nsrc < 32; tok = strtok_r(NULL, ", ", &save)) {
			if (!has_code(&g, tok)) {
				appendf(r->missing, sizeof(r->missing), "%s%s", r->missing[0] ? "," : "", tok);
				continue;
			}
			for (uint32_t f = ks_cg_lookup(&g, tok); f != KS_CG_NONE && nsrc < 32;
			     f = ks_cg_next_same(&g, f))
				if (g.funcs[f].flags & (KS_CGF_OUTLINE | KS_CGF_INLINED))
					src[nsrc++] = f;
		}
		if (!nsrc) {
			err = ks_err(-ENOENT, "%s: in neither %s nor a module of %s (not built in this kernel, or check the name)",
				     q->functions, q->vmlinux, q->modules_dir ? q->modules_dir : "(no modules given)");
			break;
		}
		t1 = ks_mono_ns();
		err = search_run(&s, src, nsrc);
		r->search_secs += (ks_mono_ns() - t1) / 1e9;
		if (err || !s.nwant)
			break;
		for (int w = 0; !err && w < s.nwant; w++) {
			int m = ks_kmodtree_find(&s.tree, s.want[w]);

			if (m >= 0)
				err = load_module(&s, m, 0);
		}
	}
	/* "lost" is never the whole answer: with no sure path, the guesses
	 * (functions holding the struct and calling through a pointer) */
	if (!err && !s.nrows && !s.guess) {
		s.guess = true;
		goto again;
	}
	if (!err && s.guess && !q->guess)
		lostf(&s, -1, "no sure path from user space: the rows are guesses (--guess), through the functions holding a struct whose member no table names%s",
		      s.capped ? " (stopped at " KS_STR(FALLBACK_MAX) " functions on paths: --guess walks them all)" : "");
	if (!err) {
		/* where the functions are, and where they are inlined */
		for (int i = 0; i < nsrc; i++) {
			const struct ks_cg_func *fn = &g.funcs[src[i]];
			uint32_t n, shown = 0;
			const uint32_t *in = ks_cg_callers(&g, src[i], &n);

			appendf(r->where, sizeof(r->where), "%s%s: %s%s", i ? "; " : "", fn->name,
				(fn->flags & KS_CGF_OUTLINE) ? g.file[fn->file].name : "",
				(fn->flags & KS_CGF_OUTLINE) ? "" : "no out-of-line copy");
			for (uint32_t k = 0; k < n && shown < 6; k++) {
				const struct ks_cg_edge *e = &g.edges[in[k]];

				if (e->kind != KS_CG_INLINED)
					continue;
				appendf(r->where, sizeof(r->where), "%s%s", shown++ ? ", " : ", inlined into ",
					g.funcs[e->concrete].name);
			}
		}
		for (int i = 0; i < g.nfiles; i++)
			appendf(r->files, sizeof(r->files), "%s%s", i ? "," : "", g.file[i].name);
		ks_hook_rows_rank(s.rows, s.nrows);
		r->rows = s.rows;
		r->nrows = s.nrows;
		s.rows = NULL;
		s.nrows = 0;
		qsort(s.lost, s.nlost, sizeof(*s.lost), lost_cmp);
		r->lost = calloc(s.nlost + 1, sizeof(char *));
		for (size_t i = 0; r->lost && i < s.nlost; i++) {
			r->lost[i] = s.lost[i].what;
			s.lost[i].what = NULL;
		}
		r->nlost = r->lost ? s.nlost : 0;
		r->nfuncs = g.nfuncs;
		r->nedges = g.nedges;
		r->visited = s.nqueue;
	}
	search_reset(&s);
	ks_kmodtree_free(&s.tree);
	ks_cg_free(&g);
	r->load_secs = (ks_mono_ns() - t0) / 1e9 - r->search_secs;
	return err;
}

void ks_hooks_result_free(struct ks_hooks_result *r)
{
	for (size_t i = 0; i < r->nlost; i++)
		free(r->lost[i]);
	free(r->lost);
	free(r->rows);
	memset(r, 0, sizeof(*r));
}
