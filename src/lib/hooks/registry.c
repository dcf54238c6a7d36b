// SPDX-License-Identifier: MIT
/* registry.c - the paths that make an object registered by name
 * (registry.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "callgraph.h"
#include "member.h"
#include "registry.h"

/* A struct returned by more functions than this is a general type, not a
 * registry's (struct sock *, struct page *). */
#define MAX_LOOKUPS 12

/* Indexes of the graph's object references and return types, made on
 * first use and again when the graph grows (one graph at a time). */
static struct {
	const struct ks_cg *g;
	size_t norefs;
	uint32_t nfuncs;
	uint32_t *by_obj;		/* oref indexes by object name */
	uint32_t *hold_first, *hold_idx;	/* oref indexes by holder */
	uint32_t *by_ret;		/* function ids by ret_struct */
	uint32_t nret;
} ix;

static const struct ks_cg *sort_g;

static int obj_cmp(const void *a, const void *b)
{
	return strcmp(sort_g->orefs[*(const uint32_t *)a].obj, sort_g->orefs[*(const uint32_t *)b].obj);
}

static int ret_cmp(const void *a, const void *b)
{
	return strcmp(sort_g->funcs[*(const uint32_t *)a].ret_struct,
		      sort_g->funcs[*(const uint32_t *)b].ret_struct);
}

static int index_graph(const struct ks_cg *g)
{
	uint32_t *pos;

	if (ix.g == g && ix.norefs == g->norefs && ix.nfuncs == g->nfuncs)
		return 0;
	free(ix.by_obj);
	free(ix.hold_first);
	free(ix.hold_idx);
	free(ix.by_ret);
	memset(&ix, 0, sizeof(ix));
	ix.by_obj = malloc((g->norefs + 1) * sizeof(uint32_t));
	ix.hold_idx = malloc((g->norefs + 1) * sizeof(uint32_t));
	ix.hold_first = calloc(g->nfuncs + 2, sizeof(uint32_t));
	ix.by_ret = malloc((g->nfuncs + 1) * sizeof(uint32_t));
	pos = calloc(g->nfuncs + 2, sizeof(uint32_t));
	if (!ix.by_obj || !ix.hold_idx || !ix.hold_first || !ix.by_ret || !pos) {
		free(pos);
		return -1;
	}
	sort_g = g;
	for (size_t i = 0; i < g->norefs; i++) {
		ix.by_obj[i] = i;
		ix.hold_first[g->orefs[i].holder + 1]++;
	}
	qsort(ix.by_obj, g->norefs, sizeof(uint32_t), obj_cmp);
	for (uint32_t f = 1; f <= g->nfuncs; f++)
		ix.hold_first[f] += ix.hold_first[f - 1];
	memcpy(pos, ix.hold_first, (g->nfuncs + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < g->norefs; i++)
		ix.hold_idx[pos[g->orefs[i].holder]++] = i;
	free(pos);
	for (uint32_t f = 0; f < g->nfuncs; f++)
		if (g->funcs[f].ret_struct)
			ix.by_ret[ix.nret++] = f;
	qsort(ix.by_ret, ix.nret, sizeof(uint32_t), ret_cmp);
	ix.g = g;
	ix.norefs = g->norefs;
	ix.nfuncs = g->nfuncs;
	return 0;
}

/* The range [*lo, return) of by_obj naming @obj. */
static size_t obj_range(const struct ks_cg *g, const char *obj, size_t *lo)
{
	size_t a = 0, b = g->norefs, e;

	while (a < b) {
		size_t m = (a + b) / 2;

		if (strcmp(g->orefs[ix.by_obj[m]].obj, obj) < 0)
			a = m + 1;
		else
			b = m;
	}
	for (e = a; e < g->norefs && !strcmp(g->orefs[ix.by_obj[e]].obj, obj); e++)
		;
	*lo = a;
	return e;
}

static size_t ret_range(const struct ks_cg *g, const char *sname, size_t *lo)
{
	size_t a = 0, b = ix.nret, e;

	while (a < b) {
		size_t m = (a + b) / 2;

		if (strcmp(g->funcs[ix.by_ret[m]].ret_struct, sname) < 0)
			a = m + 1;
		else
			b = m;
	}
	for (e = a; e < ix.nret && !strcmp(g->funcs[ix.by_ret[e]].ret_struct, sname); e++)
		;
	*lo = a;
	return e;
}

static bool has_code(const struct ks_cg *g, uint32_t f)
{
	return g->funcs[f].flags & (KS_CGF_OUTLINE | KS_CGF_INLINED);
}

static bool seen(const struct ks_made *out, int n, uint32_t f)
{
	for (int i = 0; i < n; i++)
		if (out[i].func == f)
			return true;
	return false;
}

/* Unregistering and registering twins are not makers. */
static bool registers(const char *name)
{
	size_t n = strlen(name);

	return strstr(name, "register") || (n > 5 && !strcmp(name + n - 5, "_exit")) ||
	       strstr(name, "cleanup_module");
}

static int add(struct ks_cg *g, struct ks_made *out, int n, int max, uint32_t f, const char *fmt,
	       const char *a, const char *b, const char *c, const char *d)
{
	if (n >= max || seen(out, n, f) || !has_code(g, f) || ks_cg_is_init(g, f) ||
	    registers(g->funcs[f].name))
		return n;
	out[n].func = f;
	snprintf(out[n].note, sizeof(out[n].note), fmt, a, b, c, d, g->funcs[f].name);
	return n + 1;
}

/* The makers for a registration of @obj (struct @sname) by @reg. */
static int makers_of(struct ks_cg *g, const char *obj, const char *sname, uint32_t reg,
		     uint32_t holder, bool heads, struct ks_made *out, int n, int max, char *why,
		     size_t whylen)
{
	uint32_t nret = 0;
	size_t lo = 0, hi = 0;
	const char *rname = g->funcs[reg].name, *hname = g->funcs[holder].name;

	if (sname) {
		hi = ret_range(g, sname, &lo);
		for (size_t k = lo; k < hi; k++) {
			uint32_t f = ix.by_ret[k];

			if (has_code(g, f) && f != reg && !ks_cg_is_init(g, f))
				nret++;
		}
	}
	if (nret > MAX_LOOKUPS)
		snprintf(why, whylen, "%s is registered by %s(), but %u functions return a struct %s (not a registry's lookup)",
			 obj, rname, nret, sname);
	for (size_t k = lo; nret <= MAX_LOOKUPS && k < hi; k++)
		if (ix.by_ret[k] != reg)
			n = add(g, out, n, max, ix.by_ret[k], "%s registered by %s() in %s; a struct %s found by %s",
				obj, rname, hname, sname);
	/* the registry heads the registrar passes on, and who else passes them */
	for (uint32_t k = ix.hold_first[reg]; heads && k < ix.hold_first[reg + 1]; k++) {
		const struct ks_cg_oref *h = &g->orefs[ix.hold_idx[k]];
		size_t ulo, uhi = obj_range(g, h->obj, &ulo);

		if (uhi - ulo > 64)
			continue;	/* a general object (init_net), not a registry head */
		for (size_t j = ulo; j < uhi; j++) {
			const struct ks_cg_oref *u = &g->orefs[ix.by_obj[j]];

			if (u->objfile != h->objfile || u->holder == reg || u->concrete == reg)
				continue;
			/* the function holding the call: a lock taken through an
			 * inlined spin_lock is read by its caller, not by spin_lock */
			n = add(g, out, n, max, u->concrete, "%s registered by %s() in %s, which keeps it in %s; that read by %s",
				obj, rname, hname, h->obj);
		}
	}
	return n;
}

uint32_t ks_cg_node_in(const struct ks_cg *g, const char *name, int fi)
{
	uint32_t first = ks_cg_lookup(g, name);

	for (uint32_t f = first; f != KS_CG_NONE; f = ks_cg_next_same(g, f))
		if (g->funcs[f].file == fi && (g->funcs[f].flags & KS_CGF_OUTLINE))
			return f;
	return first;
}

int ks_code_takers(struct ks_cg *g, const char *name, int fi, bool func, struct ks_made *out, int n,
		int max)
{
	for (size_t i = 0; i < g->ncrefs && n < max; i++) {
		const struct ks_cg_cref *c = &g->crefs[i];
		uint32_t h;

		if (c->file != fi || c->func != func || strcmp(c->name, name) || !strcmp(c->holder, name))
			continue;
		h = ks_cg_node_in(g, c->holder, fi);
		if (h != KS_CG_NONE)
			n = add(g, out, n, max, h, "&%s%s%s%s taken at run time in %s", name,
				"", "", "");
	}
	return n;
}

static int registry_makers(struct ks_cg *g, const char *obj, int fi, const char *sname, int depth,
			   struct ks_made *out, int n, int max, char *why, size_t whylen)
{
	bool registered = false;

	size_t lo, hi;

	if (index_graph(g))
		return n;
	if (!sname)
		sname = ks_var_struct(g, obj, fi);
	hi = obj_range(g, obj, &lo);
	for (size_t i = lo; i < hi && n < max; i++) {
		const struct ks_cg_oref *o = &g->orefs[ix.by_obj[i]];

		if (o->objfile != fi || !ks_cg_is_init(g, o->concrete))
			continue;
		registered = true;
		n = makers_of(g, obj, sname, o->to, o->holder, true, out, n, max, why, whylen);
		if (!n && !why[0])
			snprintf(why, whylen, "%s is registered by %s(), but no function returns a struct %s nor reads what %s() keeps it in",
				 obj, g->funcs[o->to].name, sname ? sname : "?", g->funcs[o->to].name);
	}
	if (!registered && depth < 3) {
		struct ks_member_at at[8];
		int atf[8], k = ks_obj_refs(g, obj, fi, at, atf, 8);

		for (int i = 0; i < k && n < max; i++) {
			char s2[160], *dot;

			snprintf(s2, sizeof(s2), "%s", at[i].member);
			dot = strchr(s2, '.');
			if (dot)
				*dot = 0;
			n = registry_makers(g, at[i].object, atf[i], s2, depth + 1, out, n, max, why, whylen);
		}
		if (!n)
			n = ks_code_takers(g, obj, fi, false, out, n, max);
		if (!k && !n && !why[0])
			snprintf(why, whylen, "%s is not registered in __init code, nor held by an object that is, nor set by a module's code", obj);
	}
	return n;
}

int ks_registry_makers(struct ks_cg *g, const char *obj, int fi, const char *sname,
		       struct ks_made *out, int max, char *why, size_t whylen)
{
	why[0] = 0;
	return registry_makers(g, obj, fi, sname, 0, out, 0, max, why, whylen);
}

int ks_module_makers(struct ks_cg *g, int fi, struct ks_made *out, int max, char *why,
		     size_t whylen)
{
	int n = 0;

	why[0] = 0;
	if (!g->file[fi].rel) {
		snprintf(why, whylen, "%s is no module", g->file[fi].name);
		return 0;
	}
	if (index_graph(g))
		return 0;
	for (size_t i = 0; i < g->norefs && n < max; i++) {
		const struct ks_cg_oref *o = &g->orefs[i];

		if (o->file != fi || o->objfile != fi || !ks_cg_is_init(g, o->concrete))
			continue;
		/* objects made by name only: a module's notifiers and pernet
		 * operations run for everyone's events */
		n = makers_of(g, o->obj, ks_var_struct(g, o->obj, fi), o->to, o->holder, false, out, n,
			      max, why, whylen);
	}
	if (!n && !why[0])
		snprintf(why, whylen, "module %s registers nothing its __init code names by address",
			 g->file[fi].name);
	return n;
}
