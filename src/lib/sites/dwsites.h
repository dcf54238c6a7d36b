/* SPDX-License-Identifier: MIT */
/* dwsites.h - every copy of a user-space function, from build-ID matched
 * DWARF: the out-of-line copies (DW_TAG_subprogram with code) and the
 * inlined ones (DW_TAG_inlined_subroutine whose abstract origin is the
 * function), each with its entry address, file offset, call site, whether a
 * uprobe can sit there, and where its arguments live at that address.
 *
 * The DWARF comes from the debug file that matches the binary's build ID
 * (debugfile.h); DWZ alt files (.gnu_debugaltlink) and split DWARF (.dwo
 * next to the skeleton's comp_dir) are followed. Where arguments live is
 * decoded by dwloc.h.
 */
#ifndef KSHIELD_DWSITES_H
#define KSHIELD_DWSITES_H

#include <stdbool.h>
#include <limits.h>
#include <linux/types.h>
#include <kshield/sites.h>
#include "debugfile.h"

enum ks_site_kind {
	KS_SITE_OUTLINE,	/* out-of-line copy: the symbol's own entry */
	KS_SITE_CLONE,		/* out-of-line specialised copy (constprop, isra) */
	KS_SITE_INLINED,	/* inlined into a caller */
};

struct ks_site_arg {
	char name[64];
	char loc[96];		/* human form: "rdi", "const 7", "[rsp+8]", or
				 * "unavailable at this site (...)" */
	struct ks_argloc where;
};

struct ks_site {
	__u64 addr;		/* link-time virtual address of the entry */
	__u64 offset;		/* file offset of the entry (uprobe offset) */
	enum ks_site_kind kind;
	char caller[128];	/* function the copy lives in */
	char symbol[128];	/* ELF symbol covering addr, "" when stripped */
	__u64 symbol_offset;	/* addr - symbol's start (a kprobe's sym+off) */
	char call_file[128];	/* call site of an inlined copy */
	int call_line;
	bool probeable;
	bool covered;		/* not probed on purpose: other sites see its calls */
	char why[160];		/* why not probeable */
	int nargs;
	struct ks_site_arg args[KS_SITE_MAX_ARGS];
};

struct ks_sites {
	char binary[PATH_MAX];
	char function[128];
	char build_id[KS_BUILD_ID_HEX];
	char debug_file[PATH_MAX];	/* where the DWARF came from */
	const char *debug_source;	/* "binary", "build-id dir", "debuginfod" */
	char alt_file[PATH_MAX];	/* DWZ alt file, "" when none */
	int split_units;		/* skeleton units whose .dwo was read */
	int missing_dwo;		/* skeleton units whose .dwo was not found */
	bool kernel;			/* sites in a vmlinux: probed at symbol+offset */
	char release[128];		/* kernel release from linux_banner, "" unknown */
	char arch[16];			/* "x86_64", "aarch64": whose registers args name */
	int nsites;
	struct ks_site *site;		/* sorted by address */
};

/* Resolve "PATH:FUNCTION" or "BUILDID:FUNCTION" (a build ID names the
 * binary through the running processes' mappings) into @binary and
 * @function (target_spec.c). Returns 0 or -errno with a message recorded. */
int ks_target_parse(const char *spec, char *binary, size_t blen,
		    char *function, size_t flen);

/* Every copy of @function in @binary. Sites are listed even when not
 * probeable (site->probeable false, site->why says why). Returns 0 (with
 * zero sites when the function has none: -ENOENT with a message), or -errno.
 * Free with ks_sites_free(). */
int ks_sites_find(const char *binary, const char *function, struct ks_sites *out);

/* Every copy of kernel @function in the vmlinux debug file @vmlinux (its
 * own DWARF and symtab, whatever kernel runs here: the caller checks build
 * IDs). Each copy is expressed KASLR-independently as site->symbol +
 * site->symbol_offset (site->offset holds the same offset) and checked for
 * what a kprobe needs: an instruction boundary, a unique symbol, none of the
 * text the kernel refuses kprobes in (noinstr, entry, kprobes, irqentry,
 * NOKPROBE_SYMBOL, __init). Same return values as ks_sites_find(). */
int ks_sites_find_vmlinux(const char *vmlinux, const char *function, struct ks_sites *out);
void ks_sites_free(struct ks_sites *s);

/* Per-site table for the "ks_sites" map (see kshield/sites.h). */
void ks_site_info(const struct ks_site *site, struct ks_site_info *info);

const char *ks_site_kind_name(enum ks_site_kind k);

#endif /* KSHIELD_DWSITES_H */
