// SPDX-License-Identifier: MIT
/* callgraph_refs.c - the traces function pointers leave in a file's data
 * (callgraph.h): vmlinux's data words that are a function's address, a
 * module's data relocations naming a function or an object, and the
 * addresses a module's code takes rather than calls.
 */
#include <errno.h>
#include <string.h>
#include <gelf.h>
#include "callgraph.h"
#include "callgraph_int.h"
#include "member.h"

/* ---- data references ------------------------------------------------ */

static int add_dref(struct ks_cg *g, int fi, const char *fn, size_t shndx, uint64_t off)
{
	uint32_t id = ks_cg_intern(g, fn);

	if (id == KS_CG_NONE ||
	    ks_cg_grow((void **)&g->drefs, &g->drefs_cap, g->ndrefs + 1, sizeof(*g->drefs)))
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

			name = ks_cg_fsym_find(f->syms, f->nsyms, (uint64_t)sym.st_shndx << 40 | (uint64_t)a);
			func = name != NULL;
			if (!name && a >= 0)
				name = ks_cg_object_in(g, fi, sym.st_shndx, (uint64_t)a);
		}
		if (!name || !*name || !(holder = fsym_holding(f->syms, f->nsyms, sh->sh_info, r.r_offset)))
			continue;
		if (ks_cg_grow((void **)&g->crefs, &g->crefs_cap, g->ncrefs + 1, sizeof(*g->crefs)))
			return -ENOMEM;
		g->crefs[g->ncrefs++] = (struct ks_cg_cref){ .name = name, .holder = holder, .file = fi,
							      .func = func };
	}
	return 0;
}

/* vmlinux: every aligned data word that is a function's address. Modules:
 * every data relocation naming a function (or .text + its offset). */
int ks_cg_scan_data(struct ks_cg *g, int fi)
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
				if (v < lo || v > hi || !(fn = ks_cg_fsym_find(syms, nsyms, v)))
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
					fn = ks_cg_fsym_find(syms, nsyms, (uint64_t)sym.st_shndx << 40 |
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
				if (fn && *fn && !ks_cg_grow((void **)&g->odrefs, &g->odrefs_cap, g->nodrefs + 1,
							     sizeof(*g->odrefs)))
					g->odrefs[g->nodrefs++] = (struct ks_cg_odref){
						.obj = fn, .file = fi, .shndx = sh.sh_info, .off = r.r_offset };
			}
		}
	}
	return err;
}
