// SPDX-License-Identifier: MIT
/* hookfind.c - refusal points on the paths from user space to a kernel
 * function (hookfind.h): the module set, the rows, and one search over
 * the graph (the walk over callers: hookwalk.c; the rows each function on
 * the way gives: hookpoints.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "err.h"
#include "callgraph.h"
#include "clock.h"
#include "dispatch_table.h"
#include "kmodtree.h"
#include "member.h"
#include "hookfind.h"
#include "hookfind_int.h"

#define KS_STR2(x) #x
#define KS_STR(x) KS_STR2(x)

void ks_hooks_appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* ---- modules -------------------------------------------------------- */

void ks_hooks_want_module(struct search *s, const char *name)
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

struct ks_hook_row *ks_hooks_row_get(struct search *s, enum ks_hook_kind kind, const char *name)
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
bool ks_hooks_row_better(const struct ks_hook_row *row, int dist, bool after, bool guessed)
{
	if (row->distance < 0)
		return true;
	if (row->guessed != guessed)
		return row->guessed;
	if (row->after != after)
		return row->after;
	return dist < row->distance;
}

void ks_hooks_lostf(struct search *s, int dist, const char *fmt, ...)
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
void ks_hooks_path_of(const struct search *s, uint32_t at, struct ks_hook_row *row)
{
	uint32_t cur = at;
	int guard = 0;

	row->path[0] = row->inlined[0] = 0;
	ks_hooks_appendf(row->path, sizeof(row->path), "%s", fname(s, at));
	while (s->hop[cur] != HOP_SOURCE && guard++ < 64) {
		uint32_t c = s->child[cur];

		ks_hooks_appendf(row->path, sizeof(row->path), " > %s", fname(s, c));
		if (s->hop[cur] == HOP_INLINED) {
			const struct ks_cg_edge *e = &s->g->edges[s->hop_idx[cur]];

			ks_hooks_appendf(row->path, sizeof(row->path), " (inlined)");
			ks_hooks_appendf(row->inlined, sizeof(row->inlined), "%s%s in %s", row->inlined[0] ? "; " : "",
					 fname(s, c), fname(s, e->concrete));
		}
		if (s->note[cur])
			ks_hooks_appendf(row->path, sizeof(row->path), " [%s]", s->note[cur]);
		cur = c;
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
		ks_hooks_expand(s, s->queue[head]);
	s->phase2 = true;	/* the confirmed search is done: now the guesses */
	if (s->guess)
		ks_hooks_run_guesses(s);
	else
		s->nguesses = 0;
	for (; head < s->nqueue && !s->err; head++)
		ks_hooks_expand(s, s->queue[head]);
	if (!s->err)
		s->err = mark_reach(s);
	for (head = 0; head < s->nqueue && !s->err; head++)
		ks_hooks_points_of(s, s->queue[head]);
	drop_unreached(s);
	/* importers of module functions on the path are callers not read yet */
	for (head = 0; head < s->nqueue; head++) {
		const struct ks_cg_func *fn = &g->funcs[s->queue[head]];

		if (!(fn->flags & KS_CGF_OUTLINE) || !g->file[fn->file].rel || s->guessed[s->queue[head]])
			continue;	/* guesses read no more modules */
		for (int m = 0; m < s->tree.n; m++)
			if (!ks_cg_has_file(g, s->tree.mod[m].name) &&
			    ks_kmodtree_imports(&s->tree, m, fn->name))
				ks_hooks_want_module(s, s->tree.mod[m].name);
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
				ks_hooks_appendf(r->missing, sizeof(r->missing), "%s%s", r->missing[0] ? "," : "", tok);
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
		ks_hooks_lostf(&s, -1, "no sure path from user space: the rows are guesses (--guess), through the functions holding a struct whose member no table names%s",
			       s.capped ? " (stopped at " KS_STR(FALLBACK_MAX) " functions on paths: --guess walks them all)" : "");
	if (!err) {
		/* where the functions are, and where they are inlined */
		for (int i = 0; i < nsrc; i++) {
			const struct ks_cg_func *fn = &g.funcs[src[i]];
			uint32_t n, shown = 0;
			const uint32_t *in = ks_cg_callers(&g, src[i], &n);

			ks_hooks_appendf(r->where, sizeof(r->where), "%s%s: %s%s", i ? "; " : "", fn->name,
					 (fn->flags & KS_CGF_OUTLINE) ? g.file[fn->file].name : "",
					 (fn->flags & KS_CGF_OUTLINE) ? "" : "no out-of-line copy");
			for (uint32_t k = 0; k < n && shown < 6; k++) {
				const struct ks_cg_edge *e = &g.edges[in[k]];

				if (e->kind != KS_CG_INLINED)
					continue;
				ks_hooks_appendf(r->where, sizeof(r->where), "%s%s", shown++ ? ", " : ", inlined into ",
						 g.funcs[e->concrete].name);
			}
		}
		for (int i = 0; i < g.nfiles; i++)
			ks_hooks_appendf(r->files, sizeof(r->files), "%s%s", i ? "," : "", g.file[i].name);
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
