/* member.c - the struct member holding a function pointer in static data
 * (member.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

/* The object symbol of file @f covering offset @off of section @shndx. */
static const char *object_at(const struct ks_cg_file *f, uint32_t shndx, uint64_t off,
			     uint64_t *obj_off)
{
	Elf *elf = f->ef.elf;
	Elf_Scn *scn = elf_getscn(elf, shndx);
	GElf_Shdr sh;
	size_t i, cnt;

	if (!scn || !gelf_getshdr(scn, &sh) || !f->symdata)
		return NULL;
	cnt = f->symdata->d_size / sizeof(Elf64_Sym);
	for (i = 1; i < cnt; i++) {
		GElf_Sym sym;
		uint64_t v;

		if (!gelf_getsym(f->symdata, i, &sym) || sym.st_shndx != shndx ||
		    GELF_ST_TYPE(sym.st_info) != STT_OBJECT || !sym.st_size)
			continue;
		v = f->rel ? sym.st_value : sym.st_value - sh.sh_addr;
		if (off >= v && off < v + sym.st_size) {
			*obj_off = off - v;
			return elf_strptr(elf, f->strndx, sym.st_name);
		}
	}
	return NULL;
}

int ks_member_at(const struct ks_cg *g, const struct ks_cg_dref *d, struct ks_member_at *out)
{
	const struct ks_cg_file *f = &g->file[d->file];
	uint64_t obj_off = 0;
	const char *obj = object_at(f, d->shndx, d->off, &obj_off);
	uint32_t id;
	Dwarf_Die var, type;

	memset(out, 0, sizeof(*out));
	if (!obj)
		return -ENOENT;
	snprintf(out->object, sizeof(out->object), "%s", obj);
	snprintf(out->expr, sizeof(out->expr), "%s", obj);
	id = ks_cg_lookup(g, obj);
	for (size_t i = 0; id != KS_CG_NONE && i < g->nvars; i++) {
		if (g->vars[i].name != id || g->vars[i].file != d->file)
			continue;
		if (!dwarf_offdie(f->dw, g->vars[i].die, &var) || !die_type(&var, &type))
			return -ENOENT;
		return ks_member_walk(&type, obj_off, out);
	}
	return -ENOENT;
}
