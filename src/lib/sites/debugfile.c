/* debugfile.c - ELF build IDs and the debug file that carries a build's
 * DWARF: the binary itself, the .build-id trees, debuginfod (see
 * debugfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#ifndef KSHIELD_STATIC
#include <elfutils/debuginfod.h>
#include "dl.h"
#endif
#include "err.h"
#include "hex.h"
#include "debugfile.h"

#ifndef KSHIELD_STATIC
/* libdebuginfod (and curl, GnuTLS, Kerberos under it) is mapped only when
 * a lookup asks the servers (dl.h). */
#define DEBUGINFOD_FNS(X) X(debuginfod_begin) X(debuginfod_end) X(debuginfod_find_debuginfo) \
	X(debuginfod_find_section)
static struct { DEBUGINFOD_FNS(KS_DL_PTR) } dif;
static struct ks_dl dif_dl = KS_DL_INIT("libdebuginfod.so.1", "libdebuginfod1", "debuginfod");

static int dif_bind(struct ks_dl *d)
{
#define BIND(f) KS_DL_BIND(d, dif, f)
	DEBUGINFOD_FNS(BIND)
#undef BIND
	return 0;
}
#endif

/* ---- ELF helpers -------------------------------------------------------- */

int ks_elf_open(const char *path, struct ks_elf_file *f)
{
	f->elf = NULL;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return ks_err(-errno, "can't open %s: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		if (f->elf)
			elf_end(f->elf);
		close(f->fd);
		f->fd = -1;
		return ks_err(-ENOEXEC, "%s is not an ELF file", path);
	}
	return 0;
}

void ks_elf_close(struct ks_elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}

int ks_elf_build_id(Elf *elf, char *hex, size_t len)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0)
		return -ENODATA;
	ks_hex(id, n, hex, len);
	return n;
}

int ks_build_id_file(const char *path, char *hex, size_t len)
{
	struct ks_elf_file f;
	int n = ks_elf_open(path, &f);

	if (n)
		return n;
	n = ks_elf_build_id(f.elf, hex, len);
	ks_elf_close(&f);
	if (n < 0)
		return ks_err(n, "%s has no GNU build ID note", path);
	return n;
}

Elf_Scn *ks_elf_find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* A .debug_info section with contents, not just a .gnu_debuglink. */
bool ks_elf_has_own_dwarf(Elf *elf)
{
	Elf_Scn *scn = ks_elf_find_section(elf, ".debug_info");
	GElf_Shdr sh;

	if (!scn)
		scn = ks_elf_find_section(elf, ".zdebug_info");
	return scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

bool ks_elf_has_dwarf(const char *path)
{
	struct ks_elf_file f;
	bool r;

	if (ks_elf_open(path, &f))
		return false;
	r = ks_elf_has_own_dwarf(f.elf);
	ks_elf_close(&f);
	return r;
}

bool ks_elf_has_btf(const char *path)
{
	struct ks_elf_file f;
	bool r;

	if (ks_elf_open(path, &f))
		return false;
	r = ks_elf_find_section(f.elf, ".BTF") != NULL;
	ks_elf_close(&f);
	return r;
}

/* ---- debug file lookup -------------------------------------------------- */

int ks_debug_check(const char *path, const char *want)
{
	char got[KS_BUILD_ID_HEX];
	struct ks_elf_file f;

	if (access(path, R_OK))
		return -ENOENT;
	if (ks_elf_open(path, &f))
		return -ENOENT;
	if (ks_elf_build_id(f.elf, got, sizeof(got)) < 0)
		got[0] = 0;
	ks_elf_close(&f);
	if (strcmp(got, want))
		return ks_err(-EILSEQ, "debug file %s has build ID %s, binary has %s: "
			      "refusing it (offsets from another build would corrupt the target)",
			      path, got[0] ? got : "(none)", want);
	return 0;
}

static const char *debug_dirs(void)
{
	const char *d = getenv("KSHIELD_DEBUG_DIRS");

	return d && *d ? d : "/usr/lib/debug";
}

int ks_lookup_by_build_id(const char *build_id, unsigned flags, char *path, size_t len,
			  const char **source)
{
	char dirs[PATH_MAX], *save = NULL, *d;
	int mismatch = 0, err;

	(void)flags;	/* the static build has no debuginfod */
	if (strlen(build_id) < 4)
		return -ENOENT;
	snprintf(dirs, sizeof(dirs), "%s", debug_dirs());
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(path, len, "%s/.build-id/%.2s/%s.debug", d, build_id, build_id + 2);
		err = ks_debug_check(path, build_id);
		if (!err) {
			*source = "build-id dir";
			return 0;
		}
		if (err == -EILSEQ)
			mismatch = err;
	}
#ifndef KSHIELD_STATIC
	if (!(flags & KS_DEBUG_LOCAL) && getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS")) {
		debuginfod_client *c;
		char *got = NULL;
		int fd = -1;

		if ((err = ks_dl_load(&dif_dl, dif_bind)))
			return err;	/* not installed: say so, not "no debug info" */
		if ((c = dif.debuginfod_begin())) {
			fd = dif.debuginfod_find_debuginfo(c, (const unsigned char *)build_id, 0, &got);
			dif.debuginfod_end(c);
		}
		if (fd >= 0) {
			close(fd);
			snprintf(path, len, "%s", got);
			free(got);
			err = ks_debug_check(path, build_id);
			if (!err) {
				*source = "debuginfod";
				return 0;
			}
			if (err == -EILSEQ)
				mismatch = err;
		}
	}
#endif
	if (mismatch)
		return mismatch;
	return -ENOENT;
}

int ks_debug_find(const char *build_id, const char *binary, unsigned flags,
		  char *path, size_t len, const char **source)
{
	int err;

	if (binary) {
		struct ks_elf_file f;

		if (!ks_elf_open(binary, &f)) {
			bool own = ks_elf_has_own_dwarf(f.elf);

			ks_elf_close(&f);
			if (own) {
				snprintf(path, len, "%s", binary);
				*source = "binary";
				return 0;
			}
		}
	}
	if (!build_id || !*build_id)
		return ks_err(-ENOENT, "%s has no DWARF and no build ID to look it up by",
			      binary ? binary : "binary");
	err = ks_lookup_by_build_id(build_id, flags, path, len, source);
	if (err == -ENOENT)
		return ks_err(err, "no debug info for build ID %s (searched %s%s)", build_id,
			      debug_dirs(),
			      flags & KS_DEBUG_LOCAL ? ""
			      : getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS")
				      ? " and debuginfod" : "; DEBUGINFOD_URLS is unset");
	return err;
}

int ks_debuginfod_section(const char *build_id, const char *section, char *path, size_t len)
{
#ifndef KSHIELD_STATIC
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	char *got = NULL;
	int fd = -ENOENT, err;

	if (!urls || !*urls)
		return -ENOENT;
	if ((err = ks_dl_load(&dif_dl, dif_bind)))
		return err;
	if ((c = dif.debuginfod_begin())) {
		fd = dif.debuginfod_find_section(c, (const unsigned char *)build_id, 0, section, &got);
		dif.debuginfod_end(c);
	}
	if (fd < 0)
		return -ENOENT;
	close(fd);
	snprintf(path, len, "%s", got);
	free(got);
	return 0;
#else
	(void)build_id;
	(void)section;
	(void)path;
	(void)len;
	return -ENOENT;	/* the static build has no debuginfod */
#endif
}
