// SPDX-License-Identifier: MIT
/* callgraph.c - a kernel's call graph from DWARF call sites and inlined
 * subroutines, plus the traces function pointers leave (callgraph.h):
 * the nodes and their names, and the graph's files and indexes. The DWARF
 * walk is callgraph_dwarf.c, the data references callgraph_refs.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dwarf.h>
#include <gelf.h>
#include "clock.h"
#include "err.h"
#include "debugfile.h"
#include "callgraph.h"
#include "callgraph_int.h"

#define POOL_BLOCK (1u << 20)


/* ---- names ---------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

char *ks_cg_pool_dup(struct ks_cg *g, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p;

	if (n > g->pool_left) {
		size_t sz = n > POOL_BLOCK ? n + sizeof(char *) : POOL_BLOCK;
		char *blk = malloc(sz);

		if (!blk)
			return NULL;
		/* blocks are chained through their first word, for ks_cg_free */
		memcpy(blk, &g->strpool, sizeof(char *));
		g->strpool = blk;
		g->pool_cur = blk + sizeof(char *);
		g->pool_left = sz - sizeof(char *);
	}
	p = g->pool_cur;
	memcpy(p, s, n);
	g->pool_cur += n;
	g->pool_left -= n;
	return p;
}

int ks_cg_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 1024;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * elem);
	if (!p)
		return ks_err(-ENOMEM, "out of memory building the call graph");
	*arr = p;
	*cap = n;
	return 0;
}

/* Two indexes over the nodes: by key (hash), by display name (nhash,
 * the first node of each name; further ones chained by next_same). */
static void hash_put(uint32_t *h, uint32_t cap, const char *s, uint32_t id)
{
	uint32_t j = hash_str(s) & (cap - 1);

	while (h[j] != KS_CG_NONE)
		j = (j + 1) & (cap - 1);
	h[j] = id;
}

static int rehash(struct ks_cg *g)
{
	uint32_t cap = g->hash_cap ? g->hash_cap * 2 : 1u << 16, i;
	uint32_t *h = malloc(cap * sizeof(*h)), *nh = malloc(cap * sizeof(*nh));

	if (!h || !nh) {
		free(h);
		free(nh);
		return -ENOMEM;
	}
	memset(h, 0xff, cap * sizeof(*h));
	memset(nh, 0xff, cap * sizeof(*nh));
	for (i = 0; i < g->nfuncs; i++) {
		hash_put(h, cap, g->funcs[i].key, i);
		if (ks_cg_lookup(g, g->funcs[i].name) == i)
			hash_put(nh, cap, g->funcs[i].name, i);
	}
	free(g->hash);
	free(g->nhash);
	g->hash = h;
	g->nhash = nh;
	g->hash_cap = cap;
	return 0;
}

static uint32_t find_in(const struct ks_cg *g, const uint32_t *h, const char *s, bool by_key)
{
	uint32_t j;

	if (!g->hash_cap)
		return KS_CG_NONE;
	j = hash_str(s) & (g->hash_cap - 1);
	while (h[j] != KS_CG_NONE) {
		const struct ks_cg_func *f = &g->funcs[h[j]];

		if (!strcmp(by_key ? f->key : f->name, s))
			return h[j];
		j = (j + 1) & (g->hash_cap - 1);
	}
	return KS_CG_NONE;
}

uint32_t ks_cg_lookup(const struct ks_cg *g, const char *name)
{
	return find_in(g, g->nhash, name, false);
}

uint32_t ks_cg_next_same(const struct ks_cg *g, uint32_t id)
{
	return id < g->nfuncs ? g->funcs[id].next_same : KS_CG_NONE;
}

/* The node keyed @key (displayed as @name), made when new; KS_CG_NONE
 * when out of memory. */
static uint32_t intern_key(struct ks_cg *g, const char *key, const char *name)
{
	uint32_t id = find_in(g, g->hash, key, true), first;
	size_t cap = g->funcs_cap;
	struct ks_cg_func *f;

	if (id != KS_CG_NONE)
		return id;
	if ((g->nfuncs + 1) * 2 > g->hash_cap && rehash(g))
		return KS_CG_NONE;
	if (ks_cg_grow((void **)&g->funcs, &cap, g->nfuncs + 1, sizeof(*g->funcs)))
		return KS_CG_NONE;
	g->funcs_cap = cap;
	id = g->nfuncs++;
	f = &g->funcs[id];
	memset(f, 0, sizeof(*f));
	f->next_same = KS_CG_NONE;
	f->key = ks_cg_pool_dup(g, key);
	f->name = strcmp(key, name) ? ks_cg_pool_dup(g, name) : f->key;
	if (!f->key || !f->name)
		return KS_CG_NONE;
	hash_put(g->hash, g->hash_cap, key, id);
	first = ks_cg_lookup(g, name);
	if (first == KS_CG_NONE) {
		hash_put(g->nhash, g->hash_cap, name, id);
	} else {
		/* after the first: the first stays the name's canonical node */
		f->next_same = g->funcs[first].next_same;
		g->funcs[first].next_same = id;
	}
	return id;
}

/* The node for a name from a symbol table (no DWARF at hand): the name's
 * first node, or a new one. */
uint32_t ks_cg_intern(struct ks_cg *g, const char *name)
{
	uint32_t id = ks_cg_lookup(g, name);

	return id != KS_CG_NONE ? id : intern_key(g, name, name);
}

uint32_t ks_cg_canonical(const struct ks_cg *g, uint32_t id)
{
	uint32_t c = id < g->nfuncs ? ks_cg_lookup(g, g->funcs[id].name) : KS_CG_NONE;

	return c != KS_CG_NONE ? c : id;
}

/* The node for function DIE @die named @name: static functions of .c
 * files are told apart by their file (two static store_status() in
 * unrelated drivers are two nodes); external ones and header inlines are
 * one node per name. */
uint32_t ks_cg_intern_die(struct ks_cg *g, Dwarf_Die *die, const char *name)
{
	Dwarf_Attribute a;
	bool ext = false;
	const char *file;
	size_t n;
	char key[512];

	if (dwarf_attr_integrate(die, DW_AT_external, &a))
		dwarf_formflag(&a, &ext);
	if (ext)
		return intern_key(g, name, name);
	file = dwarf_decl_file(die);
	n = file ? strlen(file) : 0;
	if (!file)
		return intern_key(g, name, name);
	if (n > 2 && !strcmp(file + n - 2, ".h")) {
		uint32_t id = intern_key(g, name, name);

		if (id != KS_CG_NONE)
			g->funcs[id].flags |= KS_CGF_HDR_STATIC;
		return id;
	}
	snprintf(key, sizeof(key), "%s@%s", name, file);
	return intern_key(g, key, name);
}

/* ---- the graph -------------------------------------------------------- */

static const Dwfl_Callbacks offline_cb = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

int ks_cg_init(struct ks_cg *g)
{
	memset(g, 0, sizeof(*g));
	g->pool_left = 0;
	g->dwfl = dwfl_begin(&offline_cb);
	if (!g->dwfl)
		return ks_err(-ENOMEM, "libdwfl: %s", dwfl_errmsg(-1));
	g->indirect = ks_cg_intern(g, "<indirect>");
	return g->indirect == KS_CG_NONE ? -ENOMEM : 0;
}

void ks_cg_free(struct ks_cg *g)
{
	char *blk = g->strpool;

	while (blk) {
		char *next;

		memcpy(&next, blk, sizeof(char *));
		free(blk);
		blk = next;
	}
	free(g->vars_by_name);
	for (int i = 0; i < g->nfiles; i++) {
		free(g->file[i].objs);
		free(g->file[i].syms);
		ks_elf_close(&g->file[i].ef);
	}
	if (g->dwfl)
		dwfl_end(g->dwfl);
	free(g->funcs);
	free(g->hash);
	free(g->nhash);
	free(g->edges);
	free(g->by_callee);
	free(g->by_caller);
	free(g->refs);
	free(g->drefs);
	free(g->orefs);
	free(g->odrefs);
	free(g->crefs);
	free(g->holders);
	free(g->vars);
	free(g->enums);
	memset(g, 0, sizeof(*g));
	g->pool_left = 0;
}

bool ks_cg_has_file(const struct ks_cg *g, const char *name)
{
	int i;

	for (i = 0; i < g->nfiles; i++)
		if (!strcmp(g->file[i].name, name))
			return true;
	return false;
}

int ks_cg_add(struct ks_cg *g, const char *path, const char *name)
{
	struct ks_cg_file *f;
	int64_t t0;
	GElf_Ehdr eh;
	Elf *elf;
	int err;

	if (g->nfiles >= KS_CG_MAX_FILES)
		return ks_err(-E2BIG, "more than %d files in one call graph", KS_CG_MAX_FILES);
	t0 = ks_mono_ns();
	free(g->vars_by_name);	/* more variables: remade on next use */
	g->vars_by_name = NULL;
	f = &g->file[g->nfiles];
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	snprintf(f->name, sizeof(f->name), "%s", name);
	dwfl_report_begin_add(g->dwfl);
	f->mod = dwfl_report_offline(g->dwfl, name, path, -1);
	dwfl_report_end(g->dwfl, NULL, NULL);
	if (!f->mod)
		return ks_err(-ENOENT, "can't read %s: %s", path, dwfl_errmsg(-1));
	f->dw = dwfl_module_getdwarf(f->mod, &f->bias);
	if (!f->dw)
		return ks_err(-ENODATA, "%s has no DWARF (a -dbg package's file is needed): %s",
			      path, dwfl_errmsg(-1));
	elf = dwfl_module_getelf(f->mod, &f->bias);
	f->rel = elf && gelf_getehdr(elf, &eh) && eh.e_type == ET_REL;
	err = ks_elf_open(path, &f->ef);
	if (err)
		return err;
	g->nfiles++;
	f->syms = ks_cg_func_syms(f->ef.elf, f->rel, &f->nsyms, &f->symdata, &f->strndx);
	if (!f->syms || !f->symdata)
		return ks_err(-ENODATA, "%s has no symbol table", path);
	err = ks_cg_walk_dwarf(g, g->nfiles - 1);
	if (!err)
		err = ks_cg_scan_data(g, g->nfiles - 1);
	f->secs = (ks_mono_ns() - t0) / 1e9;
	return err;
}

int ks_cg_finish(struct ks_cg *g)
{
	uint32_t i, *pos;
	size_t e;

	free(g->by_callee);
	free(g->by_caller);
	g->by_callee = malloc((g->nedges + 1) * sizeof(uint32_t));
	g->by_caller = malloc((g->nedges + 1) * sizeof(uint32_t));
	pos = calloc(g->nfuncs + 1, sizeof(uint32_t));
	if (!g->by_callee || !g->by_caller || !pos) {
		free(pos);
		return ks_err(-ENOMEM, "out of memory indexing the call graph");
	}
	for (i = 0; i < g->nfuncs; i++)
		g->funcs[i].ncallers = g->funcs[i].ncallees = 0;
	for (e = 0; e < g->nedges; e++) {
		g->funcs[g->edges[e].callee].ncallers++;
		g->funcs[g->edges[e].caller].ncallees++;
	}
	for (i = 0; i < g->nfuncs; i++) {
		g->funcs[i].first_caller = i ? g->funcs[i - 1].first_caller + g->funcs[i - 1].ncallers : 0;
		pos[i] = g->funcs[i].first_caller;
	}
	for (e = 0; e < g->nedges; e++)
		g->by_callee[pos[g->edges[e].callee]++] = e;
	for (i = 0; i < g->nfuncs; i++) {
		g->funcs[i].first_callee = i ? g->funcs[i - 1].first_callee + g->funcs[i - 1].ncallees : 0;
		pos[i] = g->funcs[i].first_callee;
	}
	for (e = 0; e < g->nedges; e++)
		g->by_caller[pos[g->edges[e].caller]++] = e;
	g->nindexed = g->nedges;
	free(pos);
	return 0;
}

const uint32_t *ks_cg_callees(const struct ks_cg *g, uint32_t func, uint32_t *n)
{
	if (func >= g->nfuncs || !g->by_caller) {
		*n = 0;
		return NULL;
	}
	*n = g->funcs[func].ncallees;
	return g->by_caller + g->funcs[func].first_callee;
}

const uint32_t *ks_cg_callers(const struct ks_cg *g, uint32_t func, uint32_t *n)
{
	if (func >= g->nfuncs || !g->by_callee) {
		*n = 0;
		return NULL;
	}
	*n = g->funcs[func].ncallers;
	return g->by_callee + g->funcs[func].first_caller;
}

const char *ks_cg_addr_symbol(const struct ks_cg *g, int file, uint64_t addr)
{
	GElf_Sym sym;
	GElf_Off off;

	if (file < 0 || file >= g->nfiles)
		return NULL;
	return dwfl_module_addrinfo(g->file[file].mod, addr, &off, &sym, NULL, NULL, NULL);
}

bool ks_cg_is_init(const struct ks_cg *g, uint32_t func)
{
	const struct ks_cg_func *f = &g->funcs[func];
	Dwarf_Addr addr = f->lowpc, bias;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf *elf;
	const char *name;

	if (!(f->flags & KS_CGF_OUTLINE))
		return false;
	scn = dwfl_module_address_section(g->file[f->file].mod, &addr, &bias);
	elf = dwfl_module_getelf(g->file[f->file].mod, &bias);
	if (!scn || !elf || elf_getshdrstrndx(elf, &shstrndx) || !gelf_getshdr(scn, &sh))
		return false;
	name = elf_strptr(elf, shstrndx, sh.sh_name);
	return name && !strncmp(name, ".init", 5);
}
