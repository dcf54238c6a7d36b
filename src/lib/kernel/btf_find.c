// SPDX-License-Identifier: MIT
/* btf_find.c - the running kernel's BTF by its build ID when the kernel
 * carries none (see btf_find.h). The build ID and the debug-file lookups
 * are the sites subsystem's (kernel_sites.h, debugfile.h): one reader of
 * /sys/kernel/notes, one debuginfod client.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <gelf.h>
#include <sodium.h>
#include "array.h"
#include "btf_find.h"
#include "debugfile.h"
#include "err.h"
#include "file.h"
#include "hex.h"
#include "buildid.h"

static char dir_set[PATH_MAX];
static pthread_mutex_t found_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ks_btf_src found;	/* valid once found.source[0] is set */

void ks_btf_set_dir(const char *dir)
{
	if (dir && *dir)
		snprintf(dir_set, sizeof(dir_set), "%s", dir);
}

const char *ks_btf_dir(void)
{
	const char *d = getenv("KSHIELD_BTF_DIR");

	if (dir_set[0])
		return dir_set;
	return d && *d ? d : KS_BTF_DIR_DEFAULT;
}

bool ks_btf_kernel_has(void)
{
	const char *p = getenv("KSHIELD_SYSFS_BTF");

	return !access(p && *p ? p : KS_SYSFS_BTF, R_OK);
}

/* A truncated download must not reach libbpf, whose complaint would be a
 * page of log. */
int ks_btf_check(const char *path)
{
	struct btf *btf = btf__parse(path, NULL);
	int err = libbpf_get_error(btf);

	if (err)
		return ks_err(-EINVAL, "%s is not BTF (%s): remove it or replace it with the "
			      "kernel's BTF (kshield btf export)", path, strerror(-err));
	btf__free(btf);
	return 0;
}

int ks_btf_check_buf(const void *buf, size_t len)
{
	struct btf *btf = len <= UINT32_MAX ? btf__new(buf, len) : NULL;
	int err = btf ? libbpf_get_error(btf) : -EINVAL;

	if (err)
		return ks_err(-EINVAL, "not raw BTF (%s, %zu bytes)", strerror(-err), len);
	btf__free(btf);
	return 0;
}

/* Run @argv[0] (stdin and stdout /dev/null) and wait. Returns its exit
 * status, 127 when it could not be run, or -errno; the end of what it said
 * on stderr, its last line, in @msg. */
static int run_tool(char *const argv[], char *msg, size_t len)
{
	char buf[1024];
	int p[2], status;
	ssize_t n = 0, r;
	pid_t pid;

	msg[0] = '\0';
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(p[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	/* Keep the end of what it says: the last line names the failure. */
	while ((r = read(p[0], buf + n, sizeof(buf) - 1 - n)) > 0) {
		n += r;
		if (n == (ssize_t)sizeof(buf) - 1) {
			memmove(buf, buf + n / 2, n - n / 2);
			n -= n / 2;
		}
	}
	close(p[0]);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	snprintf(msg, len, "%s", strrchr(buf, '\n') ? strrchr(buf, '\n') + 1 : buf);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* @tmp (written by a tool that exited with @rc, saying @msg) renamed over
 * @out; the temporary removed on every failure. */
static int tool_result(const char *tool, const char *pkg, int rc, const char *msg,
		       const char *tmp, const char *out)
{
	int err;

	if (rc == 127) {
		unlink(tmp);
		return ks_err(-ENOEXEC, "%s not found: install %s", tool, pkg);
	}
	if (rc || access(tmp, R_OK)) {
		unlink(tmp);
		return ks_err(rc < 0 ? rc : -EIO, "%s failed%s%s", tool, msg[0] ? ": " : "", msg);
	}
	if (rename(tmp, out)) {
		err = -errno;
		unlink(tmp);
		return ks_err(err, "can't write %s: %s", out, strerror(-err));
	}
	return 0;
}

int ks_btf_encode(const char *vmlinux, const char *out)
{
	char tmp[PATH_MAX + 32], arg[PATH_MAX + 64], msg[256];
	char *argv[] = { "pahole", arg, (char *)vmlinux, NULL };
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp%d", out, (int)getpid());
	snprintf(arg, sizeof(arg), "--btf_encode_detached=%s", tmp);
	rc = run_tool(argv, msg, sizeof(msg));
	return tool_result("pahole --btf_encode_detached", "dwarves (pahole) to make BTF from DWARF",
			   rc, msg, tmp, out);
}

/* Type @id of @src added to @dst with the same shape, structs, unions and
 * named enums as forward declarations (a tracepoint's argument list
 * without the layouts behind its pointers). The new id, or -errno. */
static int copy_shape(struct btf *dst, const struct btf *src, __u32 id, int depth)
{
	const struct btf_type *t = btf__type_by_id(src, id);
	const char *name;
	int ref;

	if (!id)
		return 0;	/* void */
	if (!t || depth > 16)
		return -EINVAL;
	name = btf__name_by_offset(src, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		return btf__add_int(dst, name, t->size, btf_int_encoding(t));
	case BTF_KIND_STRUCT:
		return btf__add_fwd(dst, name, BTF_FWD_STRUCT);
	case BTF_KIND_UNION:
		return btf__add_fwd(dst, name, BTF_FWD_UNION);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return name && *name ? btf__add_fwd(dst, name, BTF_FWD_ENUM)
				     : btf__add_int(dst, "int", t->size, BTF_INT_SIGNED);
	case BTF_KIND_PTR:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPEDEF:
		if ((ref = copy_shape(dst, src, t->type, depth + 1)) < 0)
			return ref;
		switch (btf_kind(t)) {
		case BTF_KIND_PTR: return btf__add_ptr(dst, ref);
		case BTF_KIND_CONST: return btf__add_const(dst, ref);
		case BTF_KIND_VOLATILE: return btf__add_volatile(dst, ref);
		case BTF_KIND_RESTRICT: return btf__add_restrict(dst, ref);
		default: return btf__add_typedef(dst, name, ref);
		}
	case BTF_KIND_FUNC_PROTO: {
		const struct btf_param *p = btf_params(t);
		int vlen = btf_vlen(t), ids[32], ret, fp;

		if (vlen > (int)ARRAY_SIZE(ids))
			return -E2BIG;
		/* Parameters follow their prototype: their types first. */
		for (int i = 0; i < vlen; i++)
			if ((ids[i] = copy_shape(dst, src, p[i].type, depth + 1)) < 0)
				return ids[i];
		if ((ret = copy_shape(dst, src, t->type, depth + 1)) < 0 ||
		    (fp = btf__add_func_proto(dst, ret)) < 0)
			return ret < 0 ? ret : fp;
		for (int i = 0; i < vlen; i++)
			if ((ret = btf__add_func_param(dst, btf__name_by_offset(src, p[i].name_off),
						       ids[i])) < 0)
				return ret;
		return fp;
	}
	default:
		return -EOPNOTSUPP;
	}
}

/* The tracepoints of @path's raw_tp and tp_btf sections, appended to
 * @tps (a "\0"-separated list of @len bytes). */
static int trace_sections(const char *path, char *tps, size_t *len, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return ks_err(-errno, "can't open %s: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		err = ks_err(-ENOEXEC, "%s is not an ELF object", path);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name, *tp = NULL;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strncmp(name, "raw_tp/", 7) || !strncmp(name, "tp_btf/", 7))
			tp = name + 7;
		else if (!strncmp(name, "raw_tracepoint/", 15))
			tp = name + 15;
		if (tp && *len + strlen(tp) + 1 < cap) {
			memcpy(tps + *len, tp, strlen(tp) + 1);
			*len += strlen(tp) + 1;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* bpftool keeps the types the objects' CO-RE relocations name. A
 * tracepoint's btf_trace_<name> typedef is named by none, yet the loader
 * asks for it to know the tracepoint is in the build (fit.c: "__opt"
 * programs, and a raw_tp one's where the kernel has no BTF): without it a
 * min BTF silently drops those programs. Add to @out the typedef of each
 * raw_tp and tp_btf section of @objs that @full has. */
static int keep_trace_typedefs(const char *full, const char *out, const char *const *objs, int n)
{
	struct btf *src = NULL, *dst = NULL;
	char tps[8192], name[300];
	size_t len = 0;
	const void *raw;
	__u32 rawlen;
	int err = 0, added = 0;

	for (int i = 0; i < n && !err; i++)
		err = trace_sections(objs[i], tps, &len, sizeof(tps));
	if (err || !len)
		return err;
	src = btf__parse(full, NULL);
	dst = btf__parse(out, NULL);
	if (libbpf_get_error(src) || libbpf_get_error(dst)) {
		err = ks_err(-EINVAL, "can't read back %s or %s as BTF", full, out);
		goto out;
	}
	for (size_t off = 0; off < len && !err; off += strlen(tps + off) + 1) {
		int sid, ref;

		snprintf(name, sizeof(name), "btf_trace_%s", tps + off);
		if (btf__find_by_name_kind(dst, name, BTF_KIND_TYPEDEF) >= 0 ||
		    (sid = btf__find_by_name_kind(src, name, BTF_KIND_TYPEDEF)) < 0)
			continue;	/* kept already, or not in this build */
		ref = copy_shape(dst, src, btf__type_by_id(src, sid)->type, 0);
		if (ref < 0 || (ref = btf__add_typedef(dst, name, ref)) < 0)
			err = ks_err(ref, "can't add %s to %s: %s", name, out, strerror(-ref));
		else
			added++;
	}
	if (!err && added && (err = btf__dedup(dst, NULL)))
		err = ks_err(err, "can't deduplicate %s: %s", out, strerror(-err));
	if (!err && added) {
		raw = btf__raw_data(dst, &rawlen);
		err = raw ? ks_write_file_atomic(out, raw, rawlen, 0644)
			  : ks_err(-ENOMEM, "can't write %s", out);
	}
out:
	if (!libbpf_get_error(src))
		btf__free(src);
	if (!libbpf_get_error(dst))
		btf__free(dst);
	return err;
}

int ks_btf_min(const char *btf, const char *out, const char *const *objs, int n)
{
	char tmp[PATH_MAX + 32], msg[256];
	char **argv = calloc(n + 6, sizeof(*argv));
	int rc, i;

	if (!argv)
		return ks_err(-ENOMEM, "out of memory");
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", out, (int)getpid());
	argv[0] = "bpftool";
	argv[1] = "gen";
	argv[2] = "min_core_btf";
	argv[3] = (char *)btf;
	argv[4] = tmp;
	for (i = 0; i < n; i++)
		argv[5 + i] = (char *)objs[i];
	rc = run_tool(argv, msg, sizeof(msg));
	free(argv);
	if ((rc = tool_result("bpftool gen min_core_btf", "bpftool", rc, msg, tmp, out)))
		return rc;
	return keep_trace_typedefs(btf, out, objs, n);
}

/* btf_dir, created when missing (it is where conversions are cached). */
static int dir_make(const char *d)
{
	if (mkdir(d, 0755) && errno != EEXIST)
		return ks_err(-errno, "can't create btf_dir %s: %s", d, strerror(errno));
	return 0;
}

/* From debuginfod: the build's .BTF section, kept in btf_dir (the
 * client's cache may be cleaned); where btf_dir is read-only, used from
 * the cache. */
static int from_debuginfod(struct ks_btf_src *s, const char *cached)
{
	char got[PATH_MAX], *buf = NULL;
	size_t len;
	int err;

	if (ks_debuginfod_section(s->build_id, ".BTF", got, sizeof(got)))
		return -ENOENT;
	if ((err = ks_btf_check(got)))
		return err;
	snprintf(s->source, sizeof(s->source), "debuginfod");
	if (!dir_make(ks_btf_dir()) && !ks_read_file(got, &buf, &len) &&
	    !ks_write_file_atomic(cached, buf, len, 0644)) {
		snprintf(s->path, sizeof(s->path), "%s", cached);
#ifdef KSHIELD_STATIC
		unlink(got);	/* our own download (debugfile.c), not a client's cache */
#endif
	} else {
		snprintf(s->path, sizeof(s->path), "%s", got);
	}
	free(buf);
	return 0;
}

/* From the build's DWARF, wherever the sites lookups find a vmlinux with
 * this build ID (debug package, .build-id trees, debuginfod), converted. */
static int from_dwarf(struct ks_btf_src *s, const char *cached)
{
	static const struct { const char *found, *source; } names[] = {
		{ "debug package", "debug package DWARF" },
		{ "build-id dir", "build-id dir DWARF" },
		{ "debuginfod", "debuginfod DWARF" },
	};
	char dbg[PATH_MAX];
	const char *src = NULL;
	struct utsname u;
	int err;

	uname(&u);
	err = ks_kernel_vmlinux_find(s->build_id, u.release, 0, dbg, sizeof(dbg), &src);
	if (err)
		return err == -EILSEQ ? err : -ENOENT;
	if ((err = dir_make(ks_btf_dir())) || (err = ks_btf_encode(dbg, cached)))
		return ks_err_ctx(err, "BTF from %s", dbg);
	if ((err = ks_btf_check(cached)))
		return err;
	snprintf(s->source, sizeof(s->source), "DWARF");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(src, names[i].found))
			snprintf(s->source, sizeof(s->source), "%s", names[i].source);
	snprintf(s->path, sizeof(s->path), "%s", cached);
	return 0;
}

/* The sha256 of file @path in hex, or -errno. */
static int file_sha256(const char *path, char hex[65])
{
	unsigned char h[32];
	char *buf;
	size_t len;
	int err = ks_read_file(path, &buf, &len);

	if (err)
		return err;
	crypto_hash_sha256(h, (unsigned char *)buf, len);
	free(buf);
	ks_hex(h, sizeof(h), hex, 65);
	return 0;
}

/* Where btf_dir's @cached came from: "the signed bundle of SHIELD" when
 * its .from says so and the file is still the one written then, else
 * "btf_dir" (a file put there by hand, or replaced since). */
static void bundled_from(const char *cached, char *source, size_t n)
{
	char from[PATH_MAX + 8], shield[128], sha[65], now[65], *buf = NULL;
	size_t len;

	snprintf(source, n, "btf_dir");
	snprintf(from, sizeof(from), "%s.from", cached);
	if (access(from, F_OK) || ks_read_file(from, &buf, &len))
		return;
	if (sscanf(buf, "shield %127s sha256 %64s", shield, sha) == 2 && strlen(sha) == 64 &&
	    !file_sha256(cached, now) && !strcmp(now, sha))
		snprintf(source, n, "the signed bundle of %s", shield);
	free(buf);
}

int ks_btf_keep_bundled(const char *build_id, const void *buf, size_t len, const char *from,
			const char *sha)
{
	char cached[PATH_MAX + 200], note[PATH_MAX + 210], line[256];
	int err;

	snprintf(cached, sizeof(cached), "%s/%s.btf", ks_btf_dir(), build_id);
	snprintf(note, sizeof(note), "%s.from", cached);
	snprintf(line, sizeof(line), "shield %s sha256 %s\n", from, sha);
	/* Parsed before it is where the loaders look; its note before it, so
	 * that the file is never there without the note naming it. */
	if ((err = ks_btf_check_buf(buf, len)) || (err = dir_make(ks_btf_dir())) ||
	    (err = ks_write_file_atomic(note, line, strlen(line), 0644)))
		return err;
	return ks_write_file_atomic(cached, buf, len, 0644);
}

static int find(struct ks_btf_src *s)
{
	char cached[PATH_MAX + 200];
	int err;

	memset(s, 0, sizeof(*s));
	if (ks_btf_kernel_has()) {
		snprintf(s->source, sizeof(s->source), "kernel");
		return 0;
	}
	if ((err = ks_kernel_build_id(s->build_id, sizeof(s->build_id))))
		return ks_err_ctx(err, "no BTF in this kernel, and no build ID to find it by");
	snprintf(cached, sizeof(cached), "%s/%s.btf", ks_btf_dir(), s->build_id);
	if (!access(cached, F_OK)) {
		if ((err = ks_btf_check(cached)))
			return err;
		snprintf(s->path, sizeof(s->path), "%s", cached);
		bundled_from(cached, s->source, sizeof(s->source));
		return 0;
	}
	err = from_debuginfod(s, cached);
	if (err == -ENOENT)
		err = from_dwarf(s, cached);
	if (err == -ENOENT)
		return ks_err(-ENOENT, "no BTF found for build ID %s: put %s.btf in %s",
			      s->build_id, s->build_id, ks_btf_dir());
	return err;
}

int ks_btf_find(struct ks_btf_src *out)
{
	int err = 0;

	pthread_mutex_lock(&found_lock);
	if (!found.source[0])
		err = find(&found);
	if (!err)
		*out = found;
	else
		found.source[0] = '\0';	/* try again next time: the file may come */
	pthread_mutex_unlock(&found_lock);
	return err;
}

int ks_btf_open_opts(struct bpf_object_open_opts *opts)
{
	struct ks_btf_src s;
	int err = ks_btf_find(&s);

	if (err)
		return err;
	/* found.path stays as it is once found: libbpf copies it at open. */
	opts->btf_custom_path = found.path[0] ? found.path : NULL;
	return 0;
}
