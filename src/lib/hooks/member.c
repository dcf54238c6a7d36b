// SPDX-License-Identifier: MIT
/* member.c - the struct member holding a function pointer in static data
 * (member.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <gelf.h>
#include "member.h"

static bool die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type);
}

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

int ks_member_walk(Dwarf_Die *type, uint64_t off, struct ks_member_at *out)
{
	Dwarf_Die t = *type, named;
	const char *tname = NULL;
	int depth;

	for (depth = 0; depth < 16; depth++) {
		int tag = dwarf_tag(&t);

		if (tag == DW_TAG_typedef || tag == DW_TAG_const_type || tag == DW_TAG_volatile_type) {
			if (tag == DW_TAG_typedef)
				tname = dwarf_diename(&t);
			if (!die_type(&t, &t))
				return -EINVAL;
			continue;
		}
		if (tag == DW_TAG_pointer_type)
			return off == 0 && out->member[0] ? 0 : -EINVAL;
		if (tag == DW_TAG_array_type) {
			Dwarf_Die elem;
			Dwarf_Word esz;

			if (!die_type(&t, &elem) || dwarf_aggregate_size(&elem, &esz) || !esz)
				return -EINVAL;
			if (out->nindex < KS_MEMBER_MAX_INDEX)
				out->index[out->nindex++] = off / esz;
			appendf(out->expr, sizeof(out->expr), "[%ld]", (long)(off / esz));
			off %= esz;
			t = elem;
			tname = NULL;
			continue;
		}
		if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
			const char *sname = dwarf_diename(&t) ? dwarf_diename(&t) : tname;
			Dwarf_Die m;
			bool found = false;

			if (dwarf_child(&t, &m))
				return -EINVAL;
			do {
				Dwarf_Attribute a;
				Dwarf_Word loc = 0, msz;
				Dwarf_Die mt;

				if (dwarf_tag(&m) != DW_TAG_member)
					continue;
				if (dwarf_attr(&m, DW_AT_data_member_location, &a))
					dwarf_formudata(&a, &loc);
				if (!die_type(&m, &mt) || dwarf_aggregate_size(&mt, &msz))
					continue;
				if (off < loc || off >= loc + msz)
					continue;
				if (dwarf_diename(&m)) {
					snprintf(out->member, sizeof(out->member), "%s.%s",
						 sname ? sname : "?", dwarf_diename(&m));
					appendf(out->expr, sizeof(out->expr), ".%s", dwarf_diename(&m));
				}
				off -= loc;
				named = mt;
				t = named;
				tname = NULL;
				found = true;
				break;
			} while (dwarf_siblingof(&m, &m) == 0);
			if (!found)
				return -EINVAL;
			continue;
		}
		return -EINVAL;
	}
	return -EINVAL;
}

static int osym_cmp(const void *a, const void *b)
{
	const struct ks_cg_osym *x = a, *y = b;

	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* File @f's object symbols, sorted, made once. */
static int objects_of(struct ks_cg_file *f)
{
	Elf *elf = f->ef.elf;
	size_t i, cnt;

	if (f->objs || !f->symdata)
		return f->objs ? 0 : -ENOENT;
	cnt = f->symdata->d_size / sizeof(Elf64_Sym);
	f->objs = malloc((cnt + 1) * sizeof(*f->objs));
	if (!f->objs)
		return -ENOMEM;
	for (i = 1; i < cnt; i++) {
		GElf_Sym sym;
		GElf_Shdr sh;
		Elf_Scn *scn;
		struct ks_cg_osym *o = &f->objs[f->nobjs];

		if (!gelf_getsym(f->symdata, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    !sym.st_size || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		scn = elf_getscn(elf, sym.st_shndx);
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		o->shndx = sym.st_shndx;
		o->start = f->rel ? sym.st_value : sym.st_value - sh.sh_addr;
		o->size = sym.st_size;
		o->name = elf_strptr(elf, f->strndx, sym.st_name);
		if (o->name)
			f->nobjs++;
	}
	qsort(f->objs, f->nobjs, sizeof(*f->objs), osym_cmp);
	return 0;
}

/* The object symbol of file @f covering offset @off of section @shndx. */
static const char *object_at(struct ks_cg_file *f, uint32_t shndx, uint64_t off, uint64_t *obj_off)
{
	size_t lo = 0, hi;

	if (objects_of(f))
		return NULL;
	hi = f->nobjs;
	/* the last object starting at or before (shndx, off) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct ks_cg_osym *o = &f->objs[mid];

		if (o->shndx < shndx || (o->shndx == shndx && o->start <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	{
		const struct ks_cg_osym *o = &f->objs[lo - 1];

		if (o->shndx != shndx || off >= o->start + o->size)
			return NULL;
		*obj_off = off - o->start;
		return o->name;
	}
}

static const struct ks_cg *vars_g;

static int var_cmp(const void *a, const void *b)
{
	uint32_t x = vars_g->vars[*(const uint32_t *)a].name, y = vars_g->vars[*(const uint32_t *)b].name;

	return x < y ? -1 : x > y;
}

/* The DWARF type of the top-level variable @name of file @fi. */
static bool var_type(struct ks_cg *g, const char *name, int fi, Dwarf_Die *type)
{
	uint32_t id = ks_cg_lookup(g, name);
	size_t lo = 0, hi = g->nvars;
	Dwarf_Die var;

	if (id == KS_CG_NONE)
		return false;
	if (!g->vars_by_name) {
		g->vars_by_name = malloc((g->nvars + 1) * sizeof(uint32_t));
		if (!g->vars_by_name)
			return false;
		for (size_t i = 0; i < g->nvars; i++)
			g->vars_by_name[i] = i;
		vars_g = g;
		qsort(g->vars_by_name, g->nvars, sizeof(uint32_t), var_cmp);
	}
	while (lo < hi) {	/* the first variable named id */
		size_t mid = (lo + hi) / 2;

		if (g->vars[g->vars_by_name[mid]].name < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < g->nvars && g->vars[g->vars_by_name[lo]].name == id; lo++) {
		const struct ks_cg_var *v = &g->vars[g->vars_by_name[lo]];

		if (v->file == fi)
			return dwarf_offdie(g->file[fi].dw, v->die, &var) && die_type(&var, type);
	}
	return false;
}

bool ks_var_has_member(struct ks_cg *g, const char *var, const char *member)
{
	Dwarf_Die t, m;

	if (!var_type(g, var, 0, &t))
		return false;
	while (dwarf_tag(&t) == DW_TAG_typedef || dwarf_tag(&t) == DW_TAG_const_type ||
	       dwarf_tag(&t) == DW_TAG_volatile_type)
		if (!die_type(&t, &t))
			return false;
	if (dwarf_child(&t, &m))
		return false;
	do {
		if (dwarf_tag(&m) == DW_TAG_member && dwarf_diename(&m) &&
		    !strcmp(dwarf_diename(&m), member))
			return true;
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

bool ks_var_exists(struct ks_cg *g, const char *var)
{
	Dwarf_Die t;

	return var_type(g, var, 0, &t);
}

int ks_member_at(struct ks_cg *g, const struct ks_cg_dref *d, struct ks_member_at *out)
{
	struct ks_cg_file *f = &g->file[d->file];
	uint64_t obj_off = 0;
	const char *obj = object_at(f, d->shndx, d->off, &obj_off);
	Dwarf_Die type;

	memset(out, 0, sizeof(*out));
	if (!obj)
		return -ENOENT;
	snprintf(out->object, sizeof(out->object), "%s", obj);
	snprintf(out->expr, sizeof(out->expr), "%s", obj);
	if (!var_type(g, obj, d->file, &type))
		return -ENOENT;
	return ks_member_walk(&type, obj_off, out);
}

const char *ks_cg_object_in(struct ks_cg *g, int fi, uint32_t shndx, uint64_t off)
{
	uint64_t obj_off;

	return object_at(&g->file[fi], shndx, off, &obj_off);
}

const char *ks_cg_object_at(struct ks_cg *g, int fi, uint64_t addr)
{
	uint64_t obj_off;

	return ks_cg_object_off(g, fi, addr, &obj_off);
}

const char *ks_cg_object_off(struct ks_cg *g, int fi, uint64_t addr, uint64_t *off)
{
	struct ks_cg_file *f = &g->file[fi];
	Elf_Scn *scn = NULL;
	uint64_t obj_off, *o = off ? off : &obj_off;

	if (f->rel) {
		Dwarf_Addr a = addr, bias;

		scn = dwfl_module_address_section(f->mod, &a, &bias);
		return scn ? object_at(f, elf_ndxscn(scn), a, o) : NULL;
	}
	while ((scn = elf_nextscn(f->ef.elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && !(sh.sh_flags & SHF_EXECINSTR) &&
		    addr >= sh.sh_addr && addr < sh.sh_addr + sh.sh_size)
			return object_at(f, elf_ndxscn(scn), addr - sh.sh_addr, o);
	}
	return NULL;
}

const char *ks_var_struct(struct ks_cg *g, const char *obj, int fi)
{
	Dwarf_Die t;

	if (!var_type(g, obj, fi, &t))
		return NULL;
	for (int i = 0; i < 8; i++) {
		int tag = dwarf_tag(&t);

		if (tag == DW_TAG_structure_type)
			return dwarf_diename(&t);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_array_type)
			return NULL;
		if (!die_type(&t, &t))
			return NULL;
	}
	return NULL;
}


/* vmlinux has no relocations: its data words equal to an object's start
 * are found in one pass, kept as odrefs of file 0 (made on first use). */
static int index_vmlinux_objects(struct ks_cg *g)
{
	struct ks_cg_file *f = &g->file[0];
	Elf_Scn *scn = NULL;

	if (f->rel || f->odrefs_done)
		return 0;
	f->odrefs_done = true;
	if (objects_of(f))
		return 0;
	while ((scn = elf_nextscn(f->ef.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type != SHT_PROGBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		for (uint64_t o = 0; o + 8 <= d->d_size; o += 8) {
			uint64_t v, off;
			const char *name;

			memcpy(&v, (char *)d->d_buf + o, 8);
			if (v < 0xffffffff80000000ull)
				continue;
			name = ks_cg_object_off(g, 0, v, &off);
			if (!name || off)
				continue;
			if (g->nodrefs == g->odrefs_cap) {
				size_t cap = g->odrefs_cap ? 2 * g->odrefs_cap : 4096;
				struct ks_cg_odref *p = realloc(g->odrefs, cap * sizeof(*p));

				if (!p)
					return -ENOMEM;
				g->odrefs = p;
				g->odrefs_cap = cap;
			}
			g->odrefs[g->nodrefs++] = (struct ks_cg_odref){
				.obj = name, .file = 0, .shndx = elf_ndxscn(scn), .off = o };
		}
	}
	return 0;
}

int ks_obj_refs(struct ks_cg *g, const char *obj, int fi, struct ks_member_at *out, int *outfile,
		int max)
{
	int n = 0;

	if (!g->file[fi].rel && index_vmlinux_objects(g))
		return 0;
	for (size_t i = 0; i < g->nodrefs && n < max; i++) {
		const struct ks_cg_odref *o = &g->odrefs[i];
		struct ks_cg_dref d = { .file = o->file, .shndx = o->shndx, .off = o->off };

		if (o->file != fi || strcmp(o->obj, obj))
			continue;
		if (ks_member_at(g, &d, &out[n]) == 0) {
			outfile[n] = fi;
			n++;
		}
	}
	return n;
}
