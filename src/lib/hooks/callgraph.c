// SPDX-License-Identifier: MIT
/* callgraph.c - a kernel's call graph from DWARF call sites and inlined
 * subroutines, plus the traces function pointers leave (callgraph.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dwarf.h>
#include <gelf.h>
#include "array.h"
#include "clock.h"
#include "err.h"
#include "debugfile.h"
#include "callgraph.h"
#include "member.h"

#ifndef DW_TAG_GNU_call_site
#define DW_TAG_GNU_call_site		0x4109
#define DW_TAG_GNU_call_site_parameter	0x410a
#endif
#ifndef DW_AT_GNU_call_site_value
#define DW_AT_GNU_call_site_value	0x2111
#endif

#define POOL_BLOCK (1u << 20)


/* ---- names ---------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static char *pool_dup(struct ks_cg *g, const char *s)
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

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
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
	if (grow((void **)&g->funcs, &cap, g->nfuncs + 1, sizeof(*g->funcs)))
		return KS_CG_NONE;
	g->funcs_cap = cap;
	id = g->nfuncs++;
	f = &g->funcs[id];
	memset(f, 0, sizeof(*f));
	f->next_same = KS_CG_NONE;
	f->key = pool_dup(g, key);
	f->name = strcmp(key, name) ? pool_dup(g, name) : f->key;
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
static uint32_t intern(struct ks_cg *g, const char *name)
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
static uint32_t intern_die(struct ks_cg *g, Dwarf_Die *die, const char *name)
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

/* ---- DWARF walk ----------------------------------------------------- */

struct walk {
	struct ks_cg *g;
	int fi;
	int err;
	/* the function being walked: struct types it holds pointers to, and
	 * whether it calls through a pointer (a possible dispatcher) */
	const char *held[32];
	int nheld;
	bool indirect;
	const char **seen;	/* first enumerator names of the enums kept */
	size_t nseen, seen_cap;
};

/* The struct a parameter or variable of type @die points to ("struct
 * nfnetlink_subsystem *ss" -> "nfnetlink_subsystem"), or NULL. */
static const char *pointee_struct(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	bool ptr = false;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return NULL;
	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&t);

		if (tag == DW_TAG_pointer_type) {
			if (ptr)
				return NULL;
			ptr = true;
		} else if (tag == DW_TAG_structure_type) {
			return ptr ? dwarf_diename(&t) : NULL;
		} else if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
			   tag != DW_TAG_volatile_type) {
			return NULL;
		}
		if (!dwarf_attr_integrate(&t, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
			return NULL;
	}
	return NULL;
}

static void note_held(struct walk *w, Dwarf_Die *die)
{
	const char *sn = pointee_struct(die);

	if (!sn)
		return;
	for (int i = 0; i < w->nheld; i++)
		if (w->held[i] == sn || !strcmp(w->held[i], sn))
			return;
	if (w->nheld < (int)(ARRAY_SIZE(w->held)))
		w->held[w->nheld++] = sn;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	if (!dwarf_attr_integrate(die, DW_AT_name, &a))
		return NULL;
	return dwarf_formstring(&a);
}

static int add_edge(struct walk *w, uint32_t caller, uint32_t callee, uint32_t concrete,
		    enum ks_cg_kind kind, uint64_t pc)
{
	struct ks_cg *g = w->g;
	struct ks_cg_edge *e;

	if (grow((void **)&g->edges, &g->edges_cap, g->nedges + 1, sizeof(*e)))
		return -ENOMEM;
	e = &g->edges[g->nedges++];
	e->caller = caller;
	e->callee = callee;
	e->concrete = concrete;
	e->kind = kind;
	e->file = w->fi;
	e->pc = pc;
	return 0;
}

/* x86-64 argument registers by DWARF register number; -1: not one. */
static int reg_argno(int reg)
{
	switch (reg) {
	case 5: return 0;	/* rdi */
	case 4: return 1;	/* rsi */
	case 1: return 2;	/* rdx */
	case 2: return 3;	/* rcx */
	case 8: return 4;
	case 9: return 5;
	default: return -1;
	}
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct ks_cg_fsym *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static const char *fsym_find(struct ks_cg_fsym *s, size_t n, uint64_t key)
{
	struct ks_cg_fsym k = { .key = key }, *r = bsearch(&k, s, n, sizeof(*s), fsym_cmp);

	return r ? r->name : NULL;
}

/* Function symbols of @elf, sorted by key. */
static struct ks_cg_fsym *func_syms(Elf *elf, bool rel, size_t *n, Elf_Data **symdata,
			      size_t *strndx)
{
	Elf_Scn *scn = NULL;
	struct ks_cg_fsym *s = NULL;

	*n = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		*symdata = elf_getdata(scn, NULL);
		*strndx = sh.sh_link;
		cnt = sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : sizeof(GElf_Sym));
		s = malloc((cnt + 1) * sizeof(*s));
		if (!s || !*symdata)
			return s;
		for (i = 0; i < cnt; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(*symdata, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
				continue;
			s[*n].key = rel ? ((uint64_t)sym.st_shndx << 40 | sym.st_value) : sym.st_value;
			s[*n].name = elf_strptr(elf, *strndx, sym.st_name);
			if (s[*n].name)
				(*n)++;
		}
		break;
	}
	if (s)
		qsort(s, *n, sizeof(*s), fsym_cmp);
	return s;
}

/* A function's address, from the file's symbol table: its name, or NULL
 * when @addr is not a function's entry. */
static const char *func_at(struct ks_cg *g, int fi, Dwarf_Addr addr)
{
	struct ks_cg_file *f = &g->file[fi];
	uint64_t key = addr;

	if (f->rel) {
		Dwarf_Addr bias;
		Elf_Scn *scn = dwfl_module_address_section(f->mod, &addr, &bias);

		if (!scn)
			return NULL;
		key = (uint64_t)elf_ndxscn(scn) << 40 | addr;
	}
	return fsym_find(f->syms, f->nsyms, key);
}

/* The constant arguments of call site @cs, and each function address
 * passed as one (a ref). */
static void call_params(struct walk *w, Dwarf_Die *cs, uint32_t holder, uint32_t concrete,
			uint32_t to, uint64_t pc)
{
	struct ks_cg *g = w->g;
	struct ks_cg_ref r = { .holder = holder, .concrete = concrete, .to = to,
			       .file = w->fi, .pc = pc };
	uint32_t funcs[6];
	int8_t argnos[6];
	int nf = 0, i;
	Dwarf_Die p;

	if (dwarf_child(cs, &p))
		return;
	do {
		int tag = dwarf_tag(&p), argno = -1;
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t nops;

		if (tag != DW_TAG_call_site_parameter && tag != DW_TAG_GNU_call_site_parameter)
			continue;
		if (dwarf_attr(&p, DW_AT_location, &a) &&
		    dwarf_getlocation(&a, &ops, &nops) == 0 && nops == 1 &&
		    ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
			argno = reg_argno(ops[0].atom - DW_OP_reg0);
		if (!dwarf_attr(&p, DW_AT_call_value, &a) &&
		    !dwarf_attr(&p, DW_AT_GNU_call_site_value, &a))
			continue;
		if (dwarf_getlocation(&a, &ops, &nops) || nops != 1)
			continue;
		if (ops[0].atom == DW_OP_addr) {
			uint64_t addr = ops[0].number + g->file[w->fi].bias;
			const char *fn = func_at(g, w->fi, addr), *obj;

			if (fn && nf < 6) {
				argnos[nf] = argno;
				funcs[nf++] = intern(g, fn);
			} else if (!fn && (obj = ks_cg_object_at(g, w->fi, addr))) {
				if (grow((void **)&g->orefs, &g->orefs_cap, g->norefs + 1,
					 sizeof(*g->orefs))) {
					w->err = -ENOMEM;
					return;
				}
				g->orefs[g->norefs++] = (struct ks_cg_oref){
					.obj = obj, .holder = holder, .concrete = concrete, .to = to,
					.file = w->fi, .objfile = w->fi, .argno = argno };
			}
		} else if (r.nconst < KS_CG_MAX_CONSTS) {
			int64_t v;

			if (ops[0].atom >= DW_OP_lit0 && ops[0].atom <= DW_OP_lit31)
				v = ops[0].atom - DW_OP_lit0;
			else if (ops[0].atom == DW_OP_constu || ops[0].atom == DW_OP_consts ||
				 (ops[0].atom >= DW_OP_const1u && ops[0].atom <= DW_OP_const8s))
				v = (int64_t)ops[0].number;
			else
				continue;
			r.const_argno[r.nconst] = argno;
			r.consts[r.nconst++] = v;
		}
	} while (dwarf_siblingof(&p, &p) == 0);

	for (i = 0; i < nf; i++) {
		if (funcs[i] == KS_CG_NONE ||
		    grow((void **)&g->refs, &g->refs_cap, g->nrefs + 1, sizeof(r))) {
			w->err = -ENOMEM;
			return;
		}
		r.func = funcs[i];
		r.argno = argnos[i];
		g->refs[g->nrefs++] = r;
	}
}

static uint64_t die_pc(Dwarf_Die *die, bool call_site)
{
	Dwarf_Attribute a;
	Dwarf_Addr pc;

	if (call_site) {
		if ((dwarf_attr(die, DW_AT_call_return_pc, &a) || dwarf_attr(die, DW_AT_low_pc, &a) ||
		     dwarf_attr(die, DW_AT_call_pc, &a)) && !dwarf_formaddr(&a, &pc))
			return pc;
		return 0;
	}
	if (!dwarf_entrypc(die, &pc) || !dwarf_lowpc(die, &pc))
		return pc;
	{
		Dwarf_Addr base, start, end;

		if (dwarf_ranges(die, 0, &base, &start, &end) > 0)
			return start;
	}
	return 0;
}

static void walk_body(struct walk *w, Dwarf_Die *parent, uint32_t logical, uint32_t concrete)
{
	struct ks_cg *g = w->g;
	Dwarf_Addr bias = g->file[w->fi].bias;
	Dwarf_Die c;

	if (dwarf_child(parent, &c))
		return;
	do {
		int tag = dwarf_tag(&c);
		const char *name;
		uint32_t id;

		if (w->err)
			return;
		switch (tag) {
		case DW_TAG_lexical_block:
			walk_body(w, &c, logical, concrete);
			break;
		case DW_TAG_formal_parameter:
		case DW_TAG_variable:
			note_held(w, &c);
			break;
		case DW_TAG_inlined_subroutine:
			name = die_name(&c);
			if (!name)
				break;
			id = intern_die(g, &c, name);
			if (id == KS_CG_NONE) {
				w->err = -ENOMEM;
				return;
			}
			g->funcs[id].flags |= KS_CGF_INLINED;
			if (add_edge(w, logical, id, concrete, KS_CG_INLINED, die_pc(&c, false) + bias))
				w->err = -ENOMEM;
			walk_body(w, &c, id, concrete);
			break;
		case DW_TAG_call_site:
		case DW_TAG_GNU_call_site: {
			Dwarf_Attribute a;
			Dwarf_Die o;
			uint64_t pc = die_pc(&c, true) + bias;

			if ((dwarf_attr(&c, DW_AT_call_origin, &a) ||
			     dwarf_attr(&c, DW_AT_abstract_origin, &a)) &&
			    dwarf_formref_die(&a, &o) && (name = die_name(&o))) {
				id = intern_die(g, &o, name);
				if (id == KS_CG_NONE || add_edge(w, logical, id, concrete, KS_CG_CALL, pc)) {
					w->err = -ENOMEM;
					return;
				}
				call_params(w, &c, logical, concrete, id, pc);
			} else {
				w->indirect = true;
				if (add_edge(w, logical, g->indirect, concrete, KS_CG_INDIRECT, pc))
					w->err = -ENOMEM;
				call_params(w, &c, logical, concrete, g->indirect, pc);
			}
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static void top_subprogram(struct walk *w, Dwarf_Die *die)
{
	struct ks_cg *g = w->g;
	const char *name = die_name(die);
	uint64_t lo;
	uint32_t id;
	bool outline;

	if (!name)
		return;
	id = intern_die(g, die, name);
	if (id == KS_CG_NONE) {
		w->err = -ENOMEM;
		return;
	}
	if (!g->funcs[id].ret_struct) {
		const char *rs = pointee_struct(die);

		g->funcs[id].ret_struct = rs ? pool_dup(g, rs) : NULL;
	}
	lo = die_pc(die, false);
	outline = lo || dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
	if (outline) {
		struct ks_cg_func *f = &g->funcs[id];

		if (!(f->flags & KS_CGF_OUTLINE)) {
			f->lowpc = lo + g->file[w->fi].bias;
			f->file = w->fi;
			f->die = dwarf_dieoffset(die);
		}
		f->flags |= KS_CGF_OUTLINE;
		w->nheld = 0;
		w->indirect = false;
		walk_body(w, die, id, id);
		for (int i = 0; w->indirect && i < w->nheld && !w->err; i++) {
			if (grow((void **)&g->holders, &g->holders_cap, g->nholders + 1,
				 sizeof(*g->holders))) {
				w->err = -ENOMEM;
				break;
			}
			g->holders[g->nholders].func = id;
			g->holders[g->nholders++].sname = w->held[i];
		}
	} else if (!g->funcs[id].die && !dwarf_hasattr(die, DW_AT_declaration)) {
		g->funcs[id].file = w->fi;
		g->funcs[id].die = dwarf_dieoffset(die);
	}
}

static void top_variable(struct walk *w, Dwarf_Die *die)
{
	struct ks_cg *g = w->g;
	const char *name;
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;
	uint32_t id;

	if (!dwarf_attr(die, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &nops) ||
	    nops != 1 || ops[0].atom != DW_OP_addr)
		return;
	name = die_name(die);
	if (!name)
		return;
	id = intern(g, name);
	if (id == KS_CG_NONE ||
	    grow((void **)&g->vars, &g->vars_cap, g->nvars + 1, sizeof(*g->vars))) {
		w->err = -ENOMEM;
		return;
	}
	g->vars[g->nvars].name = id;
	g->vars[g->nvars].file = w->fi;
	g->vars[g->nvars++].die = dwarf_dieoffset(die);
}

static void top_enum(struct walk *w, Dwarf_Die *die)
{
	struct ks_cg *g = w->g;
	const char *first;
	Dwarf_Die c;

	if (dwarf_child(die, &c) || !(first = dwarf_diename(&c)))
		return;
	/* .debug_str is merged: one string, one pointer, within a file */
	if (w->nseen * 2 >= w->seen_cap) {
		size_t cap = w->seen_cap ? 2 * w->seen_cap : 4096;
		const char **ns = calloc(cap, sizeof(*ns));

		if (!ns) {
			w->err = -ENOMEM;
			return;
		}
		for (size_t i = 0; i < w->seen_cap; i++)
			if (w->seen[i]) {
				size_t j = ((uintptr_t)w->seen[i] >> 3) & (cap - 1);

				while (ns[j])
					j = (j + 1) & (cap - 1);
				ns[j] = w->seen[i];
			}
		free(w->seen);
		w->seen = ns;
		w->seen_cap = cap;
	}
	{
		size_t j = ((uintptr_t)first >> 3) & (w->seen_cap - 1);

		while (w->seen[j] && w->seen[j] != first)
			j = (j + 1) & (w->seen_cap - 1);
		if (w->seen[j])
			return;
		w->seen[j] = first;
		w->nseen++;
	}
	if (grow((void **)&g->enums, &g->enums_cap, g->nenums + 1, sizeof(*g->enums))) {
		w->err = -ENOMEM;
		return;
	}
	g->enums[g->nenums].file = w->fi;
	g->enums[g->nenums].die = dwarf_dieoffset(die);
	g->enums[g->nenums++].first = first;
}

const char *ks_cg_enumerator(const struct ks_cg *g, const char *prefix, long value)
{
	size_t n = strlen(prefix);

	for (size_t i = 0; i < g->nenums; i++) {
		Dwarf_Die e, c;

		if (strncmp(g->enums[i].first, prefix, n) ||
		    !dwarf_offdie(g->file[g->enums[i].file].dw, g->enums[i].die, &e) || dwarf_child(&e, &c))
			continue;
		do {
			Dwarf_Attribute a;
			Dwarf_Sword v;
			const char *name = dwarf_diename(&c);

			if (name && !strncmp(name, prefix, n) && dwarf_attr(&c, DW_AT_const_value, &a) &&
			    !dwarf_formsdata(&a, &v) && v == value)
				return name;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	return NULL;
}

static int walk_dwarf(struct ks_cg *g, int fi)
{
	struct walk w = { .g = g, .fi = fi };
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, c;
	uint8_t unit_type;
	Dwarf_Half version;

	while (dwarf_get_units(g->file[fi].dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		if (dwarf_child(&cudie, &c))
			continue;
		do {
			int tag = dwarf_tag(&c);

			if (tag == DW_TAG_subprogram)
				top_subprogram(&w, &c);
			else if (tag == DW_TAG_variable)
				top_variable(&w, &c);
			else if (tag == DW_TAG_enumeration_type)
				top_enum(&w, &c);
			if (w.err) {
				free(w.seen);
				return ks_err(w.err, "out of memory reading %s", g->file[fi].path);
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	free(w.seen);
	return 0;
}

/* ---- data references ------------------------------------------------ */

static int add_dref(struct ks_cg *g, int fi, const char *fn, size_t shndx, uint64_t off)
{
	uint32_t id = intern(g, fn);

	if (id == KS_CG_NONE ||
	    grow((void **)&g->drefs, &g->drefs_cap, g->ndrefs + 1, sizeof(*g->drefs)))
		return -ENOMEM;
	g->drefs[g->ndrefs].func = id;
	g->drefs[g->ndrefs].file = fi;
	g->drefs[g->ndrefs].shndx = shndx;
	g->drefs[g->ndrefs++].off = off;
	return 0;
}

static bool data_section(GElf_Shdr *sh)
{
	return (sh->sh_flags & SHF_ALLOC) && !(sh->sh_flags & SHF_EXECINSTR) &&
	       sh->sh_type == SHT_PROGBITS;
}

/* The function of a module holding (@shndx, @off): the last function
 * symbol at or before it in that section. */
static const char *fsym_holding(const struct ks_cg_fsym *s, size_t n, uint32_t shndx, uint64_t off)
{
	uint64_t key = (uint64_t)shndx << 40 | off;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s[mid].key <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && s[lo - 1].key >> 40 == shndx ? s[lo - 1].name : NULL;
}

/* A module's text relocations that take an address rather than call:
 * every type but R_X86_64_PLT32 (calls and tail calls). */
static int scan_code_refs(struct ks_cg *g, int fi, GElf_Shdr *sh, Elf_Data *d)
{
	struct ks_cg_file *f = &g->file[fi];
	size_t cnt = d ? d->d_size / sizeof(Elf64_Rela) : 0;

	for (size_t i = 0; i < cnt; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name = NULL, *holder;
		bool func = false;
		int t;

		if (!gelf_getrela(d, i, &r) || !gelf_getsym(f->symdata, GELF_R_SYM(r.r_info), &sym))
			continue;
		t = GELF_R_TYPE(r.r_info);
		if (t == R_X86_64_PLT32 || t == R_X86_64_NONE)
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF) {
			name = elf_strptr(f->ef.elf, f->strndx, sym.st_name);
			func = true;
		} else if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_shndx != SHN_UNDEF &&
			   sym.st_shndx < SHN_LORESERVE) {
			name = elf_strptr(f->ef.elf, f->strndx, sym.st_name);
		} else if (GELF_ST_TYPE(sym.st_info) == STT_SECTION && sym.st_shndx < SHN_LORESERVE) {
			/* lea .rodata+x(%rip): PC32 addends are off by the 4 bytes after */
			int64_t a = r.r_addend + (t == R_X86_64_PC32 ? 4 : 0);

			name = fsym_find(f->syms, f->nsyms, (uint64_t)sym.st_shndx << 40 | (uint64_t)a);
			func = name != NULL;
			if (!name && a >= 0)
				name = ks_cg_object_in(g, fi, sym.st_shndx, (uint64_t)a);
		}
		if (!name || !*name || !(holder = fsym_holding(f->syms, f->nsyms, sh->sh_info, r.r_offset)))
			continue;
		if (grow((void **)&g->crefs, &g->crefs_cap, g->ncrefs + 1, sizeof(*g->crefs)))
			return -ENOMEM;
		g->crefs[g->ncrefs++] = (struct ks_cg_cref){ .name = name, .holder = holder, .file = fi,
							      .func = func };
	}
	return 0;
}

/* vmlinux: every aligned data word that is a function's address. Modules:
 * every data relocation naming a function (or .text + its offset). */
static int scan_data(struct ks_cg *g, int fi)
{
	struct ks_cg_file *f = &g->file[fi];
	struct ks_elf_file ef = f->ef;
	struct ks_cg_fsym *syms = f->syms;
	size_t nsyms = f->nsyms, strndx = f->strndx;
	Elf_Data *symdata = f->symdata;
	Elf_Scn *scn = NULL;
	bool rel = f->rel;
	int err = 0;

	while (!err && (scn = elf_nextscn(ef.elf, scn))) {
		GElf_Shdr sh, tsh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (!rel && data_section(&sh)) {
			uint64_t lo = syms[0].key, hi = nsyms ? syms[nsyms - 1].key : 0, o;

			d = elf_getdata(scn, NULL);
			if (!d || !d->d_buf)
				continue;
			for (o = 0; !err && o + 8 <= d->d_size; o += 8) {
				uint64_t v;
				const char *fn;

				memcpy(&v, (char *)d->d_buf + o, 8);
				if (v < lo || v > hi || !(fn = fsym_find(syms, nsyms, v)))
					continue;
				err = add_dref(g, fi, fn, elf_ndxscn(scn), o);
			}
		} else if (rel && sh.sh_type == SHT_RELA) {
			Elf_Scn *tgt = elf_getscn(ef.elf, sh.sh_info);
			size_t i, cnt;

			if (tgt && gelf_getshdr(tgt, &tsh) && (tsh.sh_flags & SHF_EXECINSTR) &&
			    (tsh.sh_flags & SHF_ALLOC)) {
				err = scan_code_refs(g, fi, &sh, elf_getdata(scn, NULL));
				continue;
			}
			if (!tgt || !gelf_getshdr(tgt, &tsh) || !data_section(&tsh))
				continue;
			d = elf_getdata(scn, NULL);
			cnt = d ? d->d_size / sizeof(Elf64_Rela) : 0;
			for (i = 0; !err && i < cnt; i++) {
				GElf_Rela r;
				GElf_Sym sym;
				const char *fn = NULL;

				if (!gelf_getrela(d, i, &r) ||
				    !gelf_getsym(symdata, GELF_R_SYM(r.r_info), &sym))
					continue;
				/* a module's own function, or one of vmlinux's
				 * (undefined here: no type) */
				if (!r.r_addend && (GELF_ST_TYPE(sym.st_info) == STT_FUNC ||
						    (sym.st_shndx == SHN_UNDEF &&
						     GELF_ST_TYPE(sym.st_info) == STT_NOTYPE)))
					fn = elf_strptr(ef.elf, strndx, sym.st_name);
				else if (GELF_ST_TYPE(sym.st_info) == STT_SECTION)
					fn = fsym_find(syms, nsyms, (uint64_t)sym.st_shndx << 40 |
								    (uint64_t)r.r_addend);
				if (fn && *fn) {
					err = add_dref(g, fi, fn, sh.sh_info, r.r_offset);
					continue;
				}
				if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_shndx != SHN_UNDEF &&
				    sym.st_shndx < SHN_LORESERVE)
					fn = elf_strptr(ef.elf, strndx, sym.st_name);
				else if (GELF_ST_TYPE(sym.st_info) == STT_SECTION)
					fn = ks_cg_object_in(g, fi, sym.st_shndx, (uint64_t)(sym.st_value + r.r_addend));
				if (fn && *fn && !grow((void **)&g->odrefs, &g->odrefs_cap, g->nodrefs + 1,
						       sizeof(*g->odrefs)))
					g->odrefs[g->nodrefs++] = (struct ks_cg_odref){
						.obj = fn, .file = fi, .shndx = sh.sh_info, .off = r.r_offset };
			}
		}
	}
	return err;
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
	g->indirect = intern(g, "<indirect>");
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
	f->syms = func_syms(f->ef.elf, f->rel, &f->nsyms, &f->symdata, &f->strndx);
	if (!f->syms || !f->symdata)
		return ks_err(-ENODATA, "%s has no symbol table", path);
	err = walk_dwarf(g, g->nfiles - 1);
	if (!err)
		err = scan_data(g, g->nfiles - 1);
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
