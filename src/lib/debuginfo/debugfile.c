// SPDX-License-Identifier: MIT
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
#ifdef KSHIELD_STATIC
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#endif
#ifndef KSHIELD_STATIC
#include <elfutils/debuginfod.h>
#include "dl.h"
#endif
#include "err.h"
#include "file.h"
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
	ks_zclose(&f->fd);
	f->elf = NULL;
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

#ifdef KSHIELD_STATIC
/* GET @base ("http://HOST[:PORT][/PREFIX]") + "/" + @rpath into @out.
 * Returns 0 on a 200 with a body, else -ENOENT (any failure: the lookup
 * goes on to the next server or source). */
static int http_get(const char *base, const char *rpath, const char *out)
{
	char host[256], port[16] = "80", req[1024], buf[65536], tmp[PATH_MAX + 16] = "";
	const char *h = base + 7, *slash, *colon;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct timeval tv = { .tv_sec = 10 };
	size_t hlen, plen, have = 0;
	ssize_t n;
	int fd = -1, ofd = -1, err = -ENOENT;
	char *body;

	if (strncmp(base, "http://", 7))
		return -ENOENT;	/* https needs the dynamic build's client */
	slash = strchr(h, '/');
	hlen = slash ? (size_t)(slash - h) : strlen(h);
	colon = memchr(h, ':', hlen);
	if (colon) {
		snprintf(port, sizeof(port), "%.*s", (int)(h + hlen - colon - 1), colon + 1);
		hlen = colon - h;
	}
	snprintf(host, sizeof(host), "%.*s", (int)hlen, h);
	plen = slash ? strlen(slash) : 0;
	while (plen && slash[plen - 1] == '/')	/* "http://h/" and "http://h" alike */
		plen--;
	snprintf(req, sizeof(req), "GET %.*s/%s HTTP/1.0\r\nHost: %s\r\n\r\n", (int)plen,
		 plen ? slash : "", rpath, host);
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return -ENOENT;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto out;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		goto out;
	/* Status line and headers, then the body to the file. */
	while (have < sizeof(buf) - 1 && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += n;
		buf[have] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	body = strstr(buf, "\r\n\r\n");
	if (!body || strncmp(buf, "HTTP/1.", 7) || strncmp(buf + 8, " 200", 4))
		goto out;
	body += 4;
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", out, (int)getpid());
	ofd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ofd < 0)
		goto out;
	n = buf + have - body;
	if (n > 0 && write(ofd, body, n) != n)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(ofd, buf, n) != n)
			goto out;
	if (n == 0 && !close(ofd)) {
		ofd = -1;
		err = rename(tmp, out) ? -ENOENT : 0;
	}
out:
	ks_zclose(&ofd);
	if (err && tmp[0])
		unlink(tmp);
	ks_zclose(&fd);
	freeaddrinfo(ai);
	return err;
}
#endif

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
	/* The static build has no libdebuginfod (nor curl under it): plain
	 * http:// servers only, one GET each, the body into a file of ours. */
	const char *urls = getenv("DEBUGINFOD_URLS");
	char list[4096], *save = NULL, *u;

	if (!urls || !*urls)
		return -ENOENT;
	snprintf(path, len, "%s/kshield-debuginfod-%s%s", getenv("TMPDIR") ?: "/tmp", build_id,
		 section);
	snprintf(list, sizeof(list), "%s", urls);
	for (u = strtok_r(list, " ", &save); u; u = strtok_r(NULL, " ", &save)) {
		char rpath[512];

		snprintf(rpath, sizeof(rpath), "buildid/%s/section/%s", build_id, section);
		if (!http_get(u, rpath, path))
			return 0;
	}
	return -ENOENT;
#endif
}
