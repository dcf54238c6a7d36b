/* SPDX-License-Identifier: MIT */
/* debugfile.h - ELF build IDs, and the debug file that carries the DWARF
 * of one build.
 *
 * Debug info is looked up by the binary's build ID: in the binary itself,
 * then in each debug root's .build-id tree ($KSHIELD_DEBUG_DIRS, colon
 * separated, default /usr/lib/debug), then through libdebuginfod when
 * $DEBUGINFOD_URLS is set. A debug file whose build ID differs from the
 * binary's is refused: a probe at an offset computed from another build
 * would corrupt the target's code.
 */
#ifndef KSHIELD_DEBUGFILE_H
#define KSHIELD_DEBUGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <gelf.h>

#define KS_BUILD_ID_HEX	(2 * 64 + 1)

/* Build ID of the ELF file @path as lowercase hex into @hex. Returns the
 * number of ID bytes, -ENODATA when it has none, or another -errno. */
int ks_build_id_file(const char *path, char *hex, size_t len);

#define KS_DEBUG_LOCAL	(1u << 0)	/* don't ask debuginfod */

/* Find the debug file for @build_id (hex). @binary may be NULL; when it
 * carries DWARF itself it is the answer. Fills @path and *@source. Returns 0,
 * -ENOENT when nothing was found, or -EILSEQ when a candidate was found but
 * its build ID does not match (message recorded). */
int ks_debug_find(const char *build_id, const char *binary, unsigned flags,
		  char *path, size_t len, const char **source);
/* 0 when @path exists and has build ID @build_id, -ENOENT when it does not
 * exist or is not ELF, -EILSEQ (message recorded) when the IDs differ. */
int ks_debug_check(const char *path, const char *build_id);
/* Whether the ELF file @path has DWARF sections / a .BTF section. */
bool ks_elf_has_dwarf(const char *path);
bool ks_elf_has_btf(const char *path);

/* ---- for the DWARF readers of this subsystem (dwsites.c) ---------------- */

/* An ELF file open for reading: fd -1 and elf NULL when closed. */
struct ks_elf_file {
	int fd;
	Elf *elf;
};

/* Open @path as ELF. Returns 0, or -errno (-ENOEXEC: not ELF) with a
 * message recorded. ks_elf_close() is safe on a closed file. */
int ks_elf_open(const char *path, struct ks_elf_file *f);
void ks_elf_close(struct ks_elf_file *f);
/* Build ID of @elf as hex into @hex: the number of ID bytes, or -ENODATA. */
int ks_elf_build_id(Elf *elf, char *hex, size_t len);
/* The section named @name, or NULL. */
Elf_Scn *ks_elf_find_section(Elf *elf, const char *name);
/* True when @elf has DWARF of its own, not just a .gnu_debuglink. */
bool ks_elf_has_own_dwarf(Elf *elf);
/* @build_id in the .build-id trees, then debuginfod (unless @flags has
 * KS_DEBUG_LOCAL): ks_debug_find() without the binary, and without a
 * message for -ENOENT. */
int ks_lookup_by_build_id(const char *build_id, unsigned flags, char *path, size_t len,
			  const char **source);

/* Section @section (".BTF") of build @build_id from the servers in
 * $DEBUGINFOD_URLS (debuginfod's /buildid/ID/section/NAME), into the
 * client's cache (the static build: plain http:// servers only, into
 * $TMPDIR): its path in @path. Returns 0, -ENOENT when unset or not
 * served, or the error of loading libdebuginfod. */
int ks_debuginfod_section(const char *build_id, const char *section, char *path, size_t len);

#endif /* KSHIELD_DEBUGFILE_H */
