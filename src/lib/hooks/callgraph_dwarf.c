// SPDX-License-Identifier: MIT
/* callgraph_dwarf.c - the call graph's DWARF walk (callgraph.h): each
 * file's functions, their call sites and inlined copies (the edges), the
 * function addresses passed as constant arguments, the struct types a
 * function holds pointers to, the variables, and the enums kept for their
 * names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <gelf.h>
#include "array.h"
#include "err.h"
#include "callgraph.h"
#include "callgraph_int.h"
#include "member.h"

#ifndef DW_TAG_GNU_call_site
#define DW_TAG_GNU_call_site		0x4109
#define DW_TAG_GNU_call_site_parameter	0x410a
#endif
#ifndef DW_AT_GNU_call_site_value
#define DW_AT_GNU_call_site_value	0x2111
#endif

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

	if (ks_cg_grow((void **)&g->edges, &g->edges_cap, g->nedges + 1, sizeof(*e)))
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

const char *ks_cg_fsym_find(struct ks_cg_fsym *s, size_t n, uint64_t key)
{
	struct ks_cg_fsym k = { .key = key }, *r = bsearch(&k, s, n, sizeof(*s), fsym_cmp);

	return r ? r->name : NULL;
}

/* Function symbols of @elf, sorted by key. */
struct ks_cg_fsym *ks_cg_func_syms(Elf *elf, bool rel, size_t *n, Elf_Data **symdata,
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
	return ks_cg_fsym_find(f->syms, f->nsyms, key);
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
				funcs[nf++] = ks_cg_intern(g, fn);
			} else if (!fn && (obj = ks_cg_object_at(g, w->fi, addr))) {
				if (ks_cg_grow((void **)&g->orefs, &g->orefs_cap, g->norefs + 1,
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
		    ks_cg_grow((void **)&g->refs, &g->refs_cap, g->nrefs + 1, sizeof(r))) {
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
			id = ks_cg_intern_die(g, &c, name);
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
				id = ks_cg_intern_die(g, &o, name);
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
	id = ks_cg_intern_die(g, die, name);
	if (id == KS_CG_NONE) {
		w->err = -ENOMEM;
		return;
	}
	if (!g->funcs[id].ret_struct) {
		const char *rs = pointee_struct(die);

		g->funcs[id].ret_struct = rs ? ks_cg_pool_dup(g, rs) : NULL;
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
			if (ks_cg_grow((void **)&g->holders, &g->holders_cap, g->nholders + 1,
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
	id = ks_cg_intern(g, name);
	if (id == KS_CG_NONE ||
	    ks_cg_grow((void **)&g->vars, &g->vars_cap, g->nvars + 1, sizeof(*g->vars))) {
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
	if (ks_cg_grow((void **)&g->enums, &g->enums_cap, g->nenums + 1, sizeof(*g->enums))) {
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

int ks_cg_walk_dwarf(struct ks_cg *g, int fi)
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
