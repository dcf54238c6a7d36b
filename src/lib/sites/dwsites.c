// SPDX-License-Identifier: MIT
/* dwsites.c - find every out-of-line and inlined copy of a user-space
 * function in build-ID matched DWARF (see dwsites.h for the contract).
 *
 * The walk covers every unit libdw knows (dwarf_get_units): ordinary and
 * LTO units (abstract origins in other units are followed through
 * dwarf_attr_integrate), DWZ partial units with the alt file attached, and
 * the split halves of skeleton units (-gsplit-dwarf). Addresses come from
 * the debug file; file offsets, sections, symbols and instruction bytes come
 * from the binary that will actually be probed. The debug file is found by
 * debugfile.c; where each argument lives is decoded by dwloc.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <gelf.h>
#include "array.h"
#include "err.h"
#include "hex.h"
#include "debugfile.h"
#include "dwloc.h"
#include "dwsites.h"

/* ---- the binary that gets probed ---------------------------------------- */

struct sym {
	__u64 addr, size;
	const char *name;
};

/* Text ranges of a vmlinux where the kernel refuses kprobes, bounded by
 * linker-script symbols (<name>_start, <name>_end), and why. */
static const struct { const char *name, *why; } no_kprobe_text[] = {
	{ "__kprobes_text", "kprobes' own code (__kprobes)" },
	{ "__noinstr_text", "noinstr code, which must not be instrumented" },
	{ "__entry_text", "entry code" },
	{ "__irqentry_text", "irq entry code" },
	{ "__softirqentry_text", "softirq entry code" },
	/* arm64 (arch_populate_kprobe_blacklist) */
	{ "__idmap_text", "identity-mapped code" },
	{ "__hyp_text", "hypervisor code" },
	{ "__hyp_idmap_text", "identity-mapped hypervisor code" },
	{ "__hibernate_exit_text", "hibernation exit code" },
};

struct bin_info {
	struct ks_elf_file f;
	bool pie;
	bool kernel;			/* a vmlinux: kprobes at symbol+offset */
	unsigned machine;		/* e_machine: whose registers DWARF names */
	__u64 text_start[ARRAY_SIZE(no_kprobe_text)], text_end[ARRAY_SIZE(no_kprobe_text)];
	__u64 *blacklist;		/* NOKPROBE_SYMBOL addresses (_kprobe_blacklist) */
	__u64 banner;			/* address of linux_banner, 0 unknown */
	size_t nblacklist;
	size_t nphdr;
	struct ks_elf_file symsrc;	/* debug file when the binary is stripped */
	struct sym *syms;
	size_t nsyms;
};

static void load_syms(struct bin_info *b, Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		b->syms = calloc(n, sizeof(*b->syms));
		if (!b->syms)
			return;
		for (i = 0; i < n; i++) {
			GElf_Sym s;

			if (!gelf_getsym(data, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_value)
				continue;
			b->syms[b->nsyms].addr = s.st_value;
			b->syms[b->nsyms].size = s.st_size;
			b->syms[b->nsyms].name = elf_strptr(elf, sh.sh_link, s.st_name);
			b->nsyms++;
		}
		return;
	}
}

static const struct sym *sym_at(const struct bin_info *b, __u64 addr)
{
	size_t i;

	for (i = 0; i < b->nsyms; i++)
		if (b->syms[i].name && addr >= b->syms[i].addr &&
		    addr < b->syms[i].addr + (b->syms[i].size ? b->syms[i].size : 1))
			return &b->syms[i];
	return NULL;
}

static int addr_to_offset(const struct bin_info *b, __u64 addr, __u64 *off)
{
	size_t i;

	for (i = 0; i < b->nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(b->f.elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_filesz) {
			if (!(ph.p_flags & PF_X))
				return -ENOEXEC;
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ERANGE;
}

/* Name of the executable section holding @addr, or NULL. */
static const char *exec_section_at(const struct bin_info *b, __u64 addr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(b->f.elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(b->f.elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_type == SHT_PROGBITS && addr >= sh.sh_addr &&
		    addr < sh.sh_addr + sh.sh_size)
			return elf_strptr(b->f.elf, shstrndx, sh.sh_name) ?: "?";
	}
	return NULL;
}

static bool in_exec_section(const struct bin_info *b, __u64 addr)
{
	return exec_section_at(b, addr) != NULL;
}

/* What a vmlinux says about where kprobes may go: the bounds of the text
 * ranges the kernel refuses (linker-script symbols) and the addresses of
 * the NOKPROBE_SYMBOL functions (the _kprobe_blacklist section). */
static void load_kernel_limits(struct bin_info *b)
{
	Elf *elf = b->f.elf;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			size_t k, len;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) == STT_FUNC)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "linux_banner"))
				b->banner = sym.st_value;
			for (k = 0; name && k < ARRAY_SIZE(no_kprobe_text); k++) {
				len = strlen(no_kprobe_text[k].name);
				if (strncmp(name, no_kprobe_text[k].name, len))
					continue;
				if (!strcmp(name + len, "_start"))
					b->text_start[k] = sym.st_value;
				else if (!strcmp(name + len, "_end"))
					b->text_end[k] = sym.st_value;
			}
		}
	}
	scn = ks_elf_find_section(elf, "_kprobe_blacklist");
	if (scn) {
		Elf_Data *data = elf_getdata(scn, NULL);

		if (data && data->d_buf && (b->blacklist = malloc(data->d_size ?: 1))) {
			memcpy(b->blacklist, data->d_buf, data->d_size);
			b->nblacklist = data->d_size / sizeof(__u64);
		}
	}
}

static int sym_count(const struct bin_info *b, const char *name)
{
	size_t i;
	int n = 0;

	for (i = 0; i < b->nsyms; i++)
		n += b->syms[i].name && !strcmp(b->syms[i].name, name);
	return n;
}

/* ---- instructions ------------------------------------------------------ */

/* Why the instruction starting at @b cannot carry a uprobe, or NULL. Only
 * the cases a compiler's entry address can plausibly land on: a breakpoint
 * someone already planted, and traps the kernel refuses to single-step. */
static const char *insn_refused(unsigned machine, const unsigned char *b, size_t n)
{
	size_t i = 0;

	if (machine != EM_X86_64)
		return NULL;

	/* Legacy prefixes, then REX. */
	while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0x2e || b[i] == 0x3e ||
			 b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65 || b[i] == 0x36 ||
			 b[i] == 0xf0 || b[i] == 0xf2 || b[i] == 0xf3))
		i++;
	if (i < n && (b[i] & 0xf0) == 0x40)
		i++;
	if (i >= n)
		return "a run of prefixes";
	switch (b[i]) {
	case 0xcc:
		return "int3 (already a breakpoint)";
	case 0xcd:
	case 0xce:
	case 0xf1:
		return "a software interrupt, which uprobes refuse";
	case 0xf4:
		return "hlt, which uprobes refuse";
	case 0x0f:
		if (i + 1 < n && (b[i + 1] == 0x0b || b[i + 1] == 0xff || b[i + 1] == 0xb9))
			return "an undefined-instruction trap (ud0/ud1/ud2)";
		break;
	}
	return NULL;
}

/* ---- the DWARF walk ----------------------------------------------------- */

struct walk {
	struct ks_sites *s;
	const char *fn;
	int cap;
	struct bin_info *bin;
	Dwarf_Die cudie;		/* unit of the DIEs being walked */
	Dwarf_Die skel;			/* its skeleton, for split units */
	bool has_skel;
	Dwarf_CFI *cfi;			/* the binary's .eh_frame, or NULL */
	Dwarf_Lines *lines;
	size_t nlines;
	bool lines_loaded;
	int err;
};

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));

	return n;
}

static bool name_matches(Dwarf_Die *die, const char *fn)
{
	Dwarf_Attribute a;
	const char *n = die_name(die);

	if (n && !strcmp(n, fn))
		return true;
	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	return n && !strcmp(n, fn);
}

static bool has_code(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
	       dwarf_hasattr(die, DW_AT_entry_pc);
}

static int entry_addr(Dwarf_Die *die, Dwarf_Addr *pc)
{
	Dwarf_Addr base, start, end;

	if (!dwarf_entrypc(die, pc))
		return 0;
	if (dwarf_ranges(die, 0, &base, &start, &end) > 0) {
		*pc = start;
		return 0;
	}
	return -ENODATA;
}

static void load_lines(struct walk *w)
{
	if (w->lines_loaded)
		return;
	w->lines_loaded = true;
	if (dwarf_getsrclines(&w->cudie, &w->lines, &w->nlines) && w->has_skel)
		if (dwarf_getsrclines(&w->skel, &w->lines, &w->nlines))
			w->lines = NULL;
	if (!w->lines)
		w->nlines = 0;
}

/* A line-table row starts exactly at @addr: the compiler put an
 * instruction boundary there. */
static bool line_row_at(struct walk *w, Dwarf_Addr addr)
{
	size_t i;

	load_lines(w);
	for (i = 0; i < w->nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(w->lines, i);
		Dwarf_Addr a;

		if (l && !dwarf_lineaddr(l, &a) && a == addr)
			return true;
	}
	return false;
}

static void call_site(struct walk *w, Dwarf_Die *die, struct ks_site *site)
{
	Dwarf_Attribute a;
	Dwarf_Word idx, line;
	Dwarf_Files *files;
	size_t nfiles;
	const char *f = NULL;

	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &line))
		site->call_line = line;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx))
		return;
	if (!dwarf_getsrcfiles(&w->cudie, &files, &nfiles) && idx < nfiles)
		f = dwarf_filesrc(files, idx, NULL, NULL);
	if (f) {
		const char *slash = strrchr(f, '/');

		snprintf(site->call_file, sizeof(site->call_file), "%s", slash ? slash + 1 : f);
	}
}

/* One parameter of a copy at @pc: its name, and where it lives (dwloc.h). */
static void describe_arg(struct walk *w, Dwarf_Die *param, Dwarf_Die *fn, Dwarf_Addr fn_entry,
			 Dwarf_Addr pc, struct ks_site_arg *arg)
{
	const struct ks_dwloc ctx = {
		.machine = w->bin->machine, .cfi = w->cfi,
		.pie = w->bin->pie, .kernel = w->bin->kernel,
	};

	snprintf(arg->name, sizeof(arg->name), "%s", die_name(param) ?: "?");
	ks_describe_arg(&ctx, param, fn, fn_entry, pc, &arg->where, arg->loc, sizeof(arg->loc));
}

static void describe_args(struct walk *w, Dwarf_Die *die, Dwarf_Die *fn, Dwarf_Addr fn_entry,
			  Dwarf_Addr pc, struct ks_site *site);

/* Can a kprobe sit at this kernel copy? It is placed at symbol+offset
 * (KASLR moves addresses, not offsets), so the symbol must name one
 * function only; the kernel itself refuses some text, and the offset must
 * start an instruction (the kernel checks too, at attach time). */
static void kernel_probeable(struct walk *w, struct ks_site *site, const struct sym *sym)
{
	struct bin_info *b = w->bin;
	__u64 pc = site->addr;
	const char *sec = exec_section_at(b, pc), *bad;
	unsigned char insn[16];
	__u64 foff;
	size_t i;
	int dups;

	site->probeable = false;
	if (!sec) {
		snprintf(site->why, sizeof(site->why), "0x%llx is not inside an executable section",
			 (unsigned long long)pc);
		return;
	}
	if (!strncmp(sec, ".init.", 6) || !strncmp(sec, ".exit.", 6)) {
		snprintf(site->why, sizeof(site->why), "in %s: __init/__exit code, freed or "
			 "never run after boot", sec);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(no_kprobe_text); i++)
		if (b->text_start[i] && pc >= b->text_start[i] && pc < b->text_end[i]) {
			snprintf(site->why, sizeof(site->why), "in %s: %s, where the kernel "
				 "refuses kprobes", no_kprobe_text[i].name, no_kprobe_text[i].why);
			return;
		}
	if (!sym) {
		snprintf(site->why, sizeof(site->why), "no function symbol covers 0x%llx: a "
			 "kprobe is placed at symbol+offset", (unsigned long long)pc);
		return;
	}
	for (i = 0; i < b->nblacklist; i++)
		if (b->blacklist[i] == sym->addr) {
			snprintf(site->why, sizeof(site->why), "%s is NOKPROBE_SYMBOL (the kprobe "
				 "blacklist)", sym->name);
			return;
		}
	dups = sym_count(b, sym->name);
	if (dups > 1) {
		snprintf(site->why, sizeof(site->why), "%d functions are named %s: %s+0x%llx "
			 "would be ambiguous", dups, sym->name, sym->name,
			 (unsigned long long)site->symbol_offset);
		return;
	}
	if (sym->addr != pc && !line_row_at(w, pc)) {
		snprintf(site->why, sizeof(site->why), "no line-table row or symbol starts at "
			 "0x%llx: an instruction boundary there cannot be proven",
			 (unsigned long long)pc);
		return;
	}
	if (!addr_to_offset(b, pc, &foff) && pread(b->f.fd, insn, sizeof(insn), foff) > 1 &&
	    (bad = insn_refused(b->machine, insn, sizeof(insn)))) {
		snprintf(site->why, sizeof(site->why), "the instruction at 0x%llx is %s",
			 (unsigned long long)pc, bad);
		return;
	}
	site->probeable = true;
}

static void add_site(struct walk *w, Dwarf_Die *die, enum ks_site_kind kind,
		     Dwarf_Die *fn, const char *caller)
{
	struct ks_sites *s = w->s;
	struct ks_site *site;
	const struct sym *sym;
	Dwarf_Addr pc, fn_entry = 0;
	int i;

	if (entry_addr(die, &pc))
		return;
	for (i = 0; i < s->nsites; i++)
		if (s->site[i].addr == pc)
			return;	/* one probe per address: nested copies share it */
	if (s->nsites == w->cap) {
		int cap = w->cap ? 2 * w->cap : 16;
		struct ks_site *ns = realloc(s->site, cap * sizeof(*ns));

		if (!ns) {
			w->err = -ENOMEM;
			return;
		}
		s->site = ns;
		w->cap = cap;
	}
	site = &s->site[s->nsites++];
	memset(site, 0, sizeof(*site));
	site->addr = pc;
	site->kind = kind;
	snprintf(site->caller, sizeof(site->caller), "%s", caller ?: "?");
	sym = sym_at(w->bin, pc);
	if (sym) {
		snprintf(site->symbol, sizeof(site->symbol), "%s", sym->name);
		site->symbol_offset = pc - sym->addr;
	}
	if (kind == KS_SITE_INLINED)
		call_site(w, die, site);
	else if (sym && strcmp(sym->name, w->fn))
		site->kind = KS_SITE_CLONE;

	/* Can a uprobe sit here? */
	site->probeable = true;
	if (kind != KS_SITE_INLINED && sym && strstr(sym->name, ".part.")) {
		site->probeable = false;
		site->covered = true;
		snprintf(site->why, sizeof(site->why),
			 "partial-inlining tail %s: reached only through inlined heads, which are probed",
			 sym->name);
	} else if (w->bin->kernel) {
		site->offset = site->symbol_offset;
		kernel_probeable(w, site, sym);
	} else if (addr_to_offset(w->bin, pc, &site->offset)) {
		site->probeable = false;
		snprintf(site->why, sizeof(site->why),
			 "0x%llx is not in an executable segment of the binary",
			 (unsigned long long)pc);
	} else if (!in_exec_section(w->bin, pc)) {
		site->probeable = false;
		snprintf(site->why, sizeof(site->why),
			 "0x%llx is not inside an executable section", (unsigned long long)pc);
	} else if (!(sym && sym->addr == pc) && !line_row_at(w, pc)) {
		site->probeable = false;
		snprintf(site->why, sizeof(site->why),
			 "no line-table row or symbol starts at 0x%llx: an instruction "
			 "boundary there cannot be proven", (unsigned long long)pc);
	} else {
		unsigned char insn[16];
		const char *bad = NULL;

		if (pread(w->bin->f.fd, insn, sizeof(insn), site->offset) < 2) {
			site->probeable = false;
			snprintf(site->why, sizeof(site->why), "can't read the instruction at offset 0x%llx",
				 (unsigned long long)site->offset);
		} else if ((bad = insn_refused(w->bin->machine, insn, sizeof(insn)))) {
			site->probeable = false;
			snprintf(site->why, sizeof(site->why), "the instruction at 0x%llx is %s",
				 (unsigned long long)pc, bad);
		}
	}

	/* Arguments where they are at the entry of this copy, in declaration
	 * order: the concrete DIE's parameters may come in any order, and an
	 * optimised-out one may be missing altogether. */
	if (fn && kind != KS_SITE_INLINED)
		fn_entry = pc;
	else if (fn)
		entry_addr(fn, &fn_entry);
	describe_args(w, die, kind == KS_SITE_INLINED ? fn : die, fn_entry, pc, site);
}

/* The DIE that declares the parameters: follow abstract_origin and
 * specification to the end of the chain. */
static bool origin_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die cur = *die;
	int depth;

	for (depth = 0; depth < 8; depth++) {
		if (!dwarf_formref_die(dwarf_attr(&cur, DW_AT_abstract_origin, &a), out) &&
		    !dwarf_formref_die(dwarf_attr(&cur, DW_AT_specification, &a), out))
			return depth > 0;
		cur = *out;
	}
	return true;
}

static void describe_args(struct walk *w, Dwarf_Die *die, Dwarf_Die *fn, Dwarf_Addr fn_entry,
			  Dwarf_Addr pc, struct ks_site *site)
{
	Dwarf_Die decl, p, c;

	if (!origin_of(die, &decl))
		decl = *die;
	if (dwarf_child(&decl, &p))
		return;
	do {
		Dwarf_Off want = dwarf_dieoffset(&p);
		Dwarf_Attribute a;
		Dwarf_Die o;
		bool found = false;
		struct ks_site_arg *arg;

		if (dwarf_tag(&p) != DW_TAG_formal_parameter)
			continue;
		if (site->nargs == KS_SITE_MAX_ARGS)
			break;
		arg = &site->args[site->nargs++];
		if (!memcmp(&decl, die, sizeof(decl))) {
			describe_arg(w, &p, fn, fn_entry, pc, arg);
			continue;
		}
		if (!dwarf_child(die, &c)) {
			do {
				if (dwarf_tag(&c) == DW_TAG_formal_parameter &&
				    dwarf_formref_die(dwarf_attr(&c, DW_AT_abstract_origin, &a), &o) &&
				    dwarf_dieoffset(&o) == want && o.cu == p.cu) {
					describe_arg(w, &c, fn, fn_entry, pc, arg);
					found = true;
					break;
				}
			} while (!dwarf_siblingof(&c, &c));
		}
		if (!found) {
			memset(arg, 0, sizeof(*arg));
			snprintf(arg->name, sizeof(arg->name), "%s", die_name(&p) ?: "?");
			snprintf(arg->loc, sizeof(arg->loc), "unavailable at this site (optimised out)");
		}
	} while (!dwarf_siblingof(&p, &p));
}

/* DIEs that can contain code or other functions; types are skipped so that
 * large binaries walk quickly. */
static bool descend(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_skeleton_unit:
	case DW_TAG_namespace:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	}
	return false;
}

static void walk_dies(struct walk *w, Dwarf_Die *die, Dwarf_Die *fn, const char *caller)
{
	Dwarf_Die cur = *die, child, fn_here;

	do {
		int tag = dwarf_tag(&cur);
		Dwarf_Die *sub_fn = fn;
		const char *sub_caller = caller;

		if (tag == DW_TAG_subprogram && has_code(&cur)) {
			fn_here = cur;
			sub_fn = &fn_here;
			sub_caller = die_name(&cur);
			if (name_matches(&cur, w->fn))
				add_site(w, &cur, KS_SITE_OUTLINE, &fn_here, sub_caller);
		} else if (tag == DW_TAG_inlined_subroutine && name_matches(&cur, w->fn)) {
			add_site(w, &cur, KS_SITE_INLINED, fn, caller);
		}
		if (w->err)
			return;
		if (descend(tag) && !dwarf_child(&cur, &child))
			walk_dies(w, &child, sub_fn, sub_caller);
	} while (!dwarf_siblingof(&cur, &cur));
}

/* ---- DWZ alt files ------------------------------------------------------ */

struct alt {
	struct ks_elf_file f;
	Dwarf *dw;
};

/* Attach the .gnu_debugaltlink file: libdw's own search first, then ours
 * (relative to the debug file, the build-id trees, debuginfod). */
static int attach_alt(Dwarf *dw, const char *debug_file, struct ks_sites *s, struct alt *alt)
{
	const char *name;
	const void *id;
	ssize_t n = dwelf_dwarf_gnu_debugaltlink(dw, &name, &id);
	char hex[KS_BUILD_ID_HEX], path[PATH_MAX];
	const char *src;
	int err;

	if (n <= 0)
		return 0;	/* no alt file */
	ks_hex(id, n, hex, sizeof(hex));
	if (dwarf_getalt(dw)) {
		snprintf(s->alt_file, sizeof(s->alt_file), "%s", name);
		return 0;
	}
	err = -ENOENT;
	if (name[0] != '/') {
		const char *slash = strrchr(debug_file, '/');

		snprintf(path, sizeof(path), "%.*s/%s", slash ? (int)(slash - debug_file) : 1,
			 slash ? debug_file : ".", name);
		err = ks_debug_check(path, hex);
	} else {
		snprintf(path, sizeof(path), "%s", name);
		err = ks_debug_check(path, hex);
	}
	if (err)
		err = ks_lookup_by_build_id(hex, 0, path, sizeof(path), &src);
	if (err == -ENOENT)
		return ks_err(err, "DWZ alt file %s (build ID %s) not found", name, hex);
	if (err)
		return err;
	if ((err = ks_elf_open(path, &alt->f)))
		return err;
	alt->dw = dwarf_begin_elf(alt->f.elf, DWARF_C_READ, NULL);
	if (!alt->dw) {
		ks_elf_close(&alt->f);
		return ks_err(-EINVAL, "can't read DWARF of alt file %s: %s", path, dwarf_errmsg(-1));
	}
	dwarf_setalt(dw, alt->dw);
	snprintf(s->alt_file, sizeof(s->alt_file), "%s", path);
	return 0;
}

/* ---- entry point -------------------------------------------------------- */

static int cmp_site(const void *a, const void *b)
{
	const struct ks_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The release in a vmlinux's linux_banner ("Linux version 6.1.0-47-... "). */
static void kernel_release(struct bin_info *b, char *out, size_t len)
{
	char buf[256];
	__u64 foff;

	out[0] = 0;
	if (!b->banner || addr_to_offset(b, b->banner, &foff) == -ERANGE)
		return;
	if (pread(b->f.fd, buf, sizeof(buf) - 1, foff) < 16)
		return;
	buf[sizeof(buf) - 1] = 0;
	if (!strncmp(buf, "Linux version ", 14))
		snprintf(out, len, "%.*s", (int)strcspn(buf + 14, " "), buf + 14);
}

static int find_sites(const char *binary, const char *function, struct ks_sites *s,
		      bool kernel)
{
	bool own_cfi = true;
	struct bin_info bin = { .f = { -1, NULL }, .symsrc = { -1, NULL } };
	struct ks_elf_file dbg = { -1, NULL };
	struct alt alt = { { -1, NULL }, NULL };
	struct walk w = { .s = s, .fn = function, .bin = &bin };
	Dwarf *dw = NULL;
	Dwarf_CU *cu = NULL;
	GElf_Ehdr eh;
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->binary, sizeof(s->binary), "%s", binary);
	snprintf(s->function, sizeof(s->function), "%s", function);
	if ((err = ks_elf_open(binary, &bin.f)))
		return err;
	if (!gelf_getehdr(bin.f.elf, &eh) || elf_getphdrnum(bin.f.elf, &bin.nphdr)) {
		err = ks_err(-ENOEXEC, "%s: unreadable ELF header", binary);
		goto out;
	}
	bin.pie = eh.e_type == ET_DYN;
	bin.kernel = s->kernel = kernel;
	bin.machine = eh.e_machine;
	snprintf(s->arch, sizeof(s->arch), "%s", eh.e_machine == EM_X86_64 ? "x86_64"
		 : eh.e_machine == EM_AARCH64 ? "aarch64" : "unknown");
	if (ks_elf_build_id(bin.f.elf, s->build_id, sizeof(s->build_id)) < 0)
		s->build_id[0] = 0;
	if (kernel) {
		/* A vmlinux debug file is its own binary: symtab, DWARF, text. */
		if (!ks_elf_has_own_dwarf(bin.f.elf)) {
			err = ks_err(-ENODATA, "%s has no DWARF: give the vmlinux of the kernel's "
				     "-dbg package (usr/lib/debug/boot/vmlinux-*)", binary);
			goto out;
		}
		snprintf(s->debug_file, sizeof(s->debug_file), "%s", binary);
		s->debug_source = "vmlinux";
	} else {
		err = ks_debug_find(s->build_id, binary, 0, s->debug_file, sizeof(s->debug_file),
				    &s->debug_source);
		if (err)
			goto out;
	}
	if ((err = ks_elf_open(s->debug_file, &dbg)))
		goto out;
	load_syms(&bin, bin.f.elf);
	if (!bin.nsyms)
		load_syms(&bin, dbg.elf);
	if (kernel) {
		load_kernel_limits(&bin);
		kernel_release(&bin, s->release, sizeof(s->release));
	}
	dw = dwarf_begin_elf(dbg.elf, DWARF_C_READ, NULL);
	if (!dw) {
		err = ks_err(-ENODATA, "can't read DWARF in %s: %s", s->debug_file,
			     dwarf_errmsg(-1));
		goto out;
	}
	if ((err = attach_alt(dw, s->debug_file, s, &alt)))
		goto out;
	w.cfi = dwarf_getcfi_elf(bin.f.elf);
	if (!w.cfi) {
		/* x86 vmlinux has no .eh_frame (ORC), but .debug_frame. */
		w.cfi = dwarf_getcfi(dw);
		own_cfi = false;
	}

	for (;;) {
		Dwarf_CU *next;
		Dwarf_Half version;
		uint8_t type;
		Dwarf_Die cudie, subdie;
		int r = dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie);

		if (r)
			break;
		cu = next;
		w.lines_loaded = false;
		w.lines = NULL;
		w.has_skel = false;
		if (type == DW_UT_skeleton) {
			if (!subdie.addr || dwarf_tag(&subdie) == DW_TAG_invalid) {
				s->missing_dwo++;
				continue;
			}
			s->split_units++;
			w.skel = cudie;
			w.has_skel = true;
			w.cudie = subdie;
		} else {
			w.cudie = cudie;
		}
		walk_dies(&w, &w.cudie, NULL, NULL);
		if (w.err) {
			err = ks_err(w.err, "walking DWARF of %s: %s", s->debug_file, strerror(-w.err));
			goto out;
		}
	}
	if (s->nsites)
		qsort(s->site, s->nsites, sizeof(*s->site), cmp_site);
	if (!s->nsites)
		err = ks_err(-ENOENT, "no copy of %s with code in %s%s", function, s->debug_file,
			     s->missing_dwo ? " (some split DWARF .dwo files were not found)" : "");
out:
	if (w.cfi && own_cfi)
		dwarf_cfi_end(w.cfi);
	if (dw)
		dwarf_end(dw);
	if (alt.dw)
		dwarf_end(alt.dw);
	ks_elf_close(&alt.f);
	ks_elf_close(&dbg);
	ks_elf_close(&bin.f);
	free(bin.syms);
	free(bin.blacklist);
	if (err) {
		free(s->site);
		s->site = NULL;
		s->nsites = 0;
	}
	return err;
}

int ks_sites_find(const char *binary, const char *function, struct ks_sites *s)
{
	return find_sites(binary, function, s, false);
}

int ks_sites_find_vmlinux(const char *vmlinux, const char *function, struct ks_sites *s)
{
	return find_sites(vmlinux, function, s, true);
}

void ks_sites_free(struct ks_sites *s)
{
	free(s->site);
	s->site = NULL;
	s->nsites = 0;
}

void ks_site_info(const struct ks_site *site, struct ks_site_info *info)
{
	int i;

	memset(info, 0, sizeof(*info));
	info->nargs = site->nargs;
	info->inlined = site->kind == KS_SITE_INLINED;
	info->addr = site->addr;
	for (i = 0; i < site->nargs; i++)
		info->args[i] = site->args[i].where;
}

const char *ks_site_kind_name(enum ks_site_kind k)
{
	switch (k) {
	case KS_SITE_OUTLINE:
		return "outline";
	case KS_SITE_CLONE:
		return "clone";
	case KS_SITE_INLINED:
		return "inlined";
	}
	return "?";
}

