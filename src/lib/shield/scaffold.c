// SPDX-License-Identifier: MIT
/* scaffold.c - `kshield shield new` (scaffold.h): a new shield's folder,
 * written from the hook(s) and the trigger syscall. The LSM hooks'
 * arguments come from the kernel's BTF (the security_<hook> prototype, as
 * libbpf's btf_dump writes a declaration), the syscall's ways in from the
 * table below; everything the author has to write is a TODO that keeps
 * the shield from refusing, killing or passing anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "err.h"
#include "scaffold.h"

/* bpf/sdk/fit.bpf.h's syscalls (tests/unit/test_scaffold.c checks them):
 * name, 32-bit number, i386 socketcall, io_uring opcode, data, fd. */
const struct ks_scaffold_syscall ks_scaffold_syscalls[] = {
	{ "accept", true, 5, "IORING_OP_ACCEPT", false, true },
	{ "accept4", true, 18, "IORING_OP_ACCEPT", false, true },
	{ "add_key", true, 0, NULL, false, false },
	{ "bind", true, 2, "IORING_OP_BIND (6.11+)", false, true },
	{ "bpf", true, 0, NULL, false, true },
	{ "clone", true, 0, NULL, false, false },
	{ "clone3", true, 0, NULL, false, false },
	{ "connect", true, 3, "IORING_OP_CONNECT", false, true },
	{ "execve", true, 0, NULL, false, false },
	{ "execveat", true, 0, NULL, false, true },
	{ "fsconfig", true, 0, NULL, false, true },
	{ "fsmount", true, 0, NULL, false, true },
	{ "fsopen", true, 0, NULL, false, true },
	{ "fspick", true, 0, NULL, false, true },
	{ "getsockopt", true, 15, "IORING_OP_URING_CMD SOCKET_URING_OP_GETSOCKOPT (6.7+)", false, true },
	{ "io_submit", false, 0, NULL, false, true },
	{ "io_uring_enter", true, 0, NULL, false, true },
	{ "io_uring_register", true, 0, NULL, false, true },
	{ "io_uring_setup", true, 0, NULL, false, true },
	{ "ioctl", true, 0, NULL, false, true },
	{ "keyctl", true, 0, NULL, false, false },
	{ "kill", true, 0, NULL, false, false },
	{ "listen", true, 4, "IORING_OP_LISTEN (6.11+)", false, true },
	{ "memfd_create", true, 0, NULL, false, true },
	{ "mmap", false, 0, NULL, false, true },
	{ "mount", true, 0, NULL, false, false },
	{ "move_mount", true, 0, NULL, false, true },
	{ "msgsnd", true, 0, NULL, false, false },
	{ "openat", true, 0, "IORING_OP_OPENAT", false, true },
	{ "perf_event_open", true, 0, NULL, false, true },
	{ "pipe2", true, 0, NULL, false, true },
	{ "pwrite64", true, 0, "IORING_OP_WRITE", true, true },
	{ "pwritev", true, 0, "IORING_OP_WRITEV", true, true },
	{ "pwritev2", true, 0, "IORING_OP_WRITEV", true, true },
	{ "read", true, 0, "IORING_OP_READ", true, true },
	{ "readv", true, 0, "IORING_OP_READV", true, true },
	{ "recvfrom", true, 12, "IORING_OP_RECV", true, true },
	{ "recvmsg", true, 17, "IORING_OP_RECVMSG", true, true },
	{ "request_key", true, 0, NULL, false, false },
	{ "sendfile64", true, 0, NULL, true, true },
	{ "sendmmsg", true, 20, NULL, true, true },
	{ "sendmsg", true, 16, "IORING_OP_SENDMSG", true, true },
	{ "sendto", true, 11, "IORING_OP_SEND", true, true },
	{ "setns", true, 0, NULL, false, true },
	{ "setsockopt", true, 14, "IORING_OP_URING_CMD SOCKET_URING_OP_SETSOCKOPT (6.7+)", false, true },
	{ "socket", true, 1, "IORING_OP_SOCKET (5.19+)", false, true },
	{ "splice", true, 0, "IORING_OP_SPLICE", false, true },
	{ "tee", true, 0, "IORING_OP_TEE", false, true },
	{ "tgkill", true, 0, NULL, false, false },
	{ "umount2", true, 0, NULL, false, false },
	{ "unlinkat", true, 0, "IORING_OP_UNLINKAT", false, true },
	{ "unshare", true, 0, NULL, false, false },
	{ "userfaultfd", true, 0, NULL, false, true },
	{ "vmsplice", true, 0, NULL, false, true },
	{ "write", true, 0, "IORING_OP_WRITE", true, true },
	{ "writev", true, 0, "IORING_OP_WRITEV", true, true },
	{ NULL, false, 0, NULL, false, false },
};

const struct ks_scaffold_syscall *ks_scaffold_syscall(const char *name)
{
	for (const struct ks_scaffold_syscall *s = ks_scaffold_syscalls; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* One LSM hook as the shield declares it. */
struct hook {
	const char *name;
	char args[512];		/* "struct socket *sock, int level, int optname" */
	char deny[160];		/* "level, optname, 0, 0": ks_deny's four values */
	char named[256];	/* "level:int optname:int": KSHIELD_ARGS's slots */
	char filter[160];	/* "MAY_WRITE, S_IFREG": a hot hook's KS_SECURITY_FILTER */
};

/* The hooks whose programs run in a chain with a filter
 * (bpf/sdk/fpchain.bpf.h's __KS_HOT_*). */
static bool hot_hook(const char *hook)
{
	return !strcmp(hook, "file_permission");
}

/* Without --filter: what the trigger syscall asks of the file. */
static const char *default_filter(const char *syscall)
{
	static const char *const reads[] = { "read", "readv", "pread64", "preadv", "preadv2" };

	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		if (!strcmp(reads[i], syscall))
			return "MAY_READ:S_IFREG";
	return "MAY_WRITE:S_IFREG";
}

static const char *const may_names[] = {
	"MAY_EXEC", "MAY_WRITE", "MAY_READ", "MAY_APPEND", "MAY_ACCESS", "MAY_OPEN", "MAY_CHDIR",
};
static const char *const type_names[] = {
	"S_IFSOCK", "S_IFLNK", "S_IFREG", "S_IFBLK", "S_IFDIR", "S_IFCHR", "S_IFIFO",
};

static bool in_names(const char *const *names, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], w))
			return true;
	return false;
}

/* --filter "MAY_WRITE:S_IFREG" as KS_SECURITY_FILTER's arguments after the
 * name ("MAY_WRITE, S_IFREG"; several bits: "MAY_READ | MAY_WRITE"). */
static int filter_args(const char *spec, char *out, size_t len)
{
	char buf[160], names[128] = "", *types, *w, *save;
	size_t n = 0;
	int nmask = 0, ntypes = 0;
	unsigned mask = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	types = strchr(buf, ':');
	if (!types || !types[1])
		return ks_err(-EINVAL, "bad --filter '%s': want MASK:TYPES, like MAY_WRITE:S_IFREG", spec);
	*types++ = '\0';
	out[0] = '\0';
	for (w = strtok_r(buf, ",| ", &save); w; w = strtok_r(NULL, ",| ", &save), nmask++) {
		size_t i;

		for (i = 0; i < sizeof(may_names) / sizeof(may_names[0]); i++)
			if (!strcmp(may_names[i], w))
				break;
		if (i == sizeof(may_names) / sizeof(may_names[0]))
			return ks_err(-EINVAL, "--filter: '%s' is not a mask bit (MAY_READ, MAY_WRITE, "
				      "MAY_EXEC, MAY_APPEND, MAY_OPEN, ...)", w);
		mask |= 1u << i;	/* MAY_EXEC 0x1, MAY_WRITE 0x2, ... in this order */
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 nmask ? "|" : "", w);
	}
	/* the loader reads the mask as one number: several bits are written so */
	if (nmask == 1)
		n = snprintf(out, len, "%s", names);
	else if (nmask)
		n = snprintf(out, len, "0x%x /* %s */", mask, names);
	for (w = strtok_r(types, ",| ", &save); w; w = strtok_r(NULL, ",| ", &save), ntypes++) {
		if (!in_names(type_names, sizeof(type_names) / sizeof(type_names[0]), w))
			return ks_err(-EINVAL, "--filter: '%s' is not an inode type (S_IFREG, S_IFIFO, "
				      "S_IFSOCK, S_IFCHR, S_IFDIR, S_IFBLK, S_IFLNK)", w);
		n += snprintf(out + n, len > n ? len - n : 0, ", %s", w);
	}
	if (!nmask || !ntypes || n >= len)
		return ks_err(-EINVAL, "bad --filter '%s': want MASK:TYPES, like MAY_WRITE:S_IFREG", spec);
	return 0;
}

struct decl {
	char *buf;
	size_t len, cap;
};

static void decl_printf(void *ctx, const char *fmt, va_list ap)
{
	struct decl *d = ctx;

	if (d->len < d->cap)
		d->len += vsnprintf(d->buf + d->len, d->cap - d->len, fmt, ap);
}

static void decl_str(struct decl *d, const char *str)
{
	if (d->len < d->cap)
		d->len += snprintf(d->buf + d->len, d->cap - d->len, "%s", str);
}

/* The argument list of security_<hook> in @btf, in @h. */
/* @from: the BTF's file, NULL for the running kernel's (for errors). */
static int hook_args(const struct btf *btf, const char *from, struct hook *h)
{
	char fn[128];
	const struct btf_type *t, *proto;
	const struct btf_param *p;
	struct decl d = { .buf = h->args, .cap = sizeof(h->args) };
	struct btf_dump *dump;
	int id, lsm, nscalar = 0, n;
	char deny[4][64] = { "0", "0", "0", "0" };
	size_t nn = 0;

	snprintf(fn, sizeof(fn), "security_%s", h->name);
	id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC);
	if (id < 0)
		return ks_err(-ENOENT, "LSM hook '%s' does not exist in %s%s (no %s): "
			      "check the name with 'kshield hooks FUNCTION'", h->name,
			      from ? from : "this kernel's BTF", from ? "'s BTF" : "", fn);
	proto = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	t = btf__type_by_id(btf, proto->type);
	while (t && (btf_is_typedef(t) || btf_is_const(t) || btf_is_volatile(t)))
		t = btf__type_by_id(btf, t->type);
	if (!proto->type || !t || !btf_is_int(t))
		return ks_err(-EINVAL, "%s does not return int: KS_SECURITY_HOOK cannot refuse "
			      "there; write an fentry program for a void hook", fn);
	/* The LSM hook's own prototype (bpf_lsm_<hook>), where BTF has it:
	 * KS_SECURITY_HOOK gives both programs one argument list. */
	snprintf(fn, sizeof(fn), "bpf_lsm_%s", h->name);
	lsm = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC);
	if (lsm > 0) {
		const struct btf_type *lp = btf__type_by_id(btf, btf__type_by_id(btf, lsm)->type);
		bool same = btf_vlen(lp) == btf_vlen(proto);

		for (int i = 0; same && i < btf_vlen(lp); i++)
			same = btf_params(lp)[i].type == btf_params(proto)[i].type;
		if (!same)
			return ks_err(-EINVAL, "the LSM hook %s and security_%s take different "
				      "arguments: one KS_SECURITY_HOOK cannot serve both; write two "
				      "programs around a shared helper (bpf/sdk/shield.bpf.h)",
				      h->name, h->name);
	}
	snprintf(fn, sizeof(fn), "security_%s", h->name);
	if (!btf_vlen(proto))
		return ks_err(-EINVAL, "%s takes no arguments: KS_SECURITY_HOOK needs at least one", fn);
	dump = btf_dump__new(btf, decl_printf, &d, NULL);
	if (!dump)
		return ks_err(-errno, "btf_dump: %s", strerror(errno));
	p = btf_params(proto);
	n = btf_vlen(proto);
	h->args[0] = '\0';
	for (int i = 0; i < n; i++, p++) {
		char pname[64];
		const char *nm = btf__name_by_offset(btf, p->name_off);
		const struct btf_type *pt = btf__type_by_id(btf, p->type);
		DECLARE_LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o, .field_name = pname);

		snprintf(pname, sizeof(pname), "%s", nm && *nm ? nm : "");
		if (!pname[0])
			snprintf(pname, sizeof(pname), "arg%d", i);
		if (i)
			decl_str(&d, ", ");
		btf_dump__emit_type_decl(dump, p->type, &o);
		while (pt && (btf_is_typedef(pt) || btf_is_const(pt) || btf_is_volatile(pt)))
			pt = btf__type_by_id(btf, pt->type);
		/* ks_deny's example values: the hook's numbers first */
		if (nscalar < 4 && pt && (btf_is_int(pt) || btf_is_enum(pt)))
			snprintf(deny[nscalar++], sizeof(deny[0]), "%s", pname);
	}
	btf_dump__free(dump);
	if (d.len >= d.cap)
		return ks_err(-E2BIG, "%s: argument list too long", fn);
	snprintf(h->deny, sizeof(h->deny), "%s, %s, %s, %s", deny[0], deny[1], deny[2], deny[3]);
	/* the same values by name: a permission mask as its MAY_* bits */
	h->named[0] = '\0';
	for (int i = 0; i < nscalar && nn < sizeof(h->named); i++)
		nn += snprintf(h->named + nn, sizeof(h->named) - nn, "%s%s:%s", i ? " " : "", deny[i],
			       !strcmp(deny[i], "mask") ? "flags:may_mask" : "int");
	if (!nscalar)
		snprintf(h->named, sizeof(h->named), "-");
	return 0;
}

/* The test's paths, as the syscall allows them. */
enum way { WAY_NATIVE, WAY_URING, WAY_SPLICE, WAY_COMPAT, WAY_SOCKETCALL, WAY_CLONE, WAY_PRE };

struct path {
	enum way way;
	const char *name;	/* in test.c (C expression) */
	const char *title;	/* in README.md and comments */
};

static int paths_of(const struct ks_scaffold_syscall *sc, struct path *p)
{
	int n = 0;

	p[n++] = (struct path){ WAY_NATIVE, "\"native\"", "native" };
	if (sc->uring)
		p[n++] = (struct path){ WAY_URING, "\"io-uring\"", "io-uring" };
	if (sc->splice)
		p[n++] = (struct path){ WAY_SPLICE, "\"splice\"", "splice" };
	if (sc->abi32)
		p[n++] = (struct path){ WAY_COMPAT, "\"compat-\" KS_ABI32_NAME", "compat-i386, compat-arm" };
	if (sc->socketcall)
		p[n++] = (struct path){ WAY_SOCKETCALL, "\"compat-\" KS_ABI32_NAME \"-socketcall\"",
					"compat-i386-socketcall" };
	if (sc->fd)
		p[n++] = (struct path){ WAY_CLONE, "\"clone-files\"", "clone-files" };
	p[n++] = (struct path){ WAY_PRE, "\"pre-existing\"", "pre-existing" };
	return n;
}

/* What each path's case has to do, said in its "not written yet". */
static const char *path_todo(enum way w, const struct ks_scaffold_syscall *sc)
{
	static char buf[160];

	switch (w) {
	case WAY_NATIVE:
		snprintf(buf, sizeof(buf), "%s(2) by the syscall, as the public exploit calls it",
			 sc->name);
		return buf;
	case WAY_URING:
		snprintf(buf, sizeof(buf), "%s, no syscall (ks_fx_uring_op)", sc->uring);
		return buf;
	case WAY_SPLICE:
		return "its data from a file's page cache by splice (ks_fx_splice_send)";
	case WAY_COMPAT:
		snprintf(buf, sizeof(buf), "%s(2) by a 32-bit program, compat/PROG.c "
			 "(ks_test_run_compat)", sc->name);
		return buf;
	case WAY_SOCKETCALL:
		snprintf(buf, sizeof(buf), "i386 socketcall(%d, ...) by a 32-bit program",
			 sc->socketcall);
		return buf;
	case WAY_CLONE:
		return "the object made by a child sharing the fd table (ks_fx_clone_files)";
	case WAY_PRE:
		return "the object made in setup_before(), before the shield loads";
	}
	return "";
}

/* @words after @first on the first line, then on lines starting with
 * @cont, none (but a single long word) past column 80 (tabs 8). */
static void wrap(FILE *f, const char *first, const char *cont, const char *words)
{
	char *copy = strdup(words), *save = NULL;
	int col = 0;

	for (const char *c = first; *c; c++)
		col = *c == '\t' ? (col + 8) & ~7 : col + 1;
	fputs(first, f);
	for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save)) {
		int n = strlen(w);

		if (col + 1 + n > 80 && col > 0) {
			int c2 = 0;

			for (const char *c = cont; *c; c++)
				c2 = *c == '\t' ? (c2 + 8) & ~7 : c2 + 1;
			fprintf(f, "\n%s%s", cont, w);
			col = c2 + n;
		} else {
			fprintf(f, " %s", w);
			col += 1 + n;
		}
	}
	fputc('\n', f);
	free(copy);
}

/* "@first arg, arg, ...)" with the arguments wrapped after their commas
 * (continuation lines indented two tabs), none past column 80. */
static void wrap_args(FILE *f, const char *first, const char *args)
{
	int col = strlen(first);
	const char *a = args;

	fputs(first, f);
	while (*a) {
		const char *e = strstr(a, ", ");
		int n = e ? (int)(e - a) + 1 : (int)strlen(a) + 1;	/* with ',' or ')' */

		if (col + 1 + n > 80) {
			fputs("\n\t\t", f);
			col = 16;
		} else {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s%s", n - 1, a, e ? "," : ")");
		col += n;
		a = e ? e + 2 : a + strlen(a);
	}
	fputc('\n', f);
}

static const char *way_enum[] = {
	[WAY_NATIVE] = "WAY_NATIVE", [WAY_URING] = "WAY_URING", [WAY_SPLICE] = "WAY_SPLICE",
	[WAY_COMPAT] = "WAY_COMPAT", [WAY_SOCKETCALL] = "WAY_SOCKETCALL",
	[WAY_CLONE] = "WAY_CLONE", [WAY_PRE] = "WAY_PRE",
};

static void write_shield(FILE *f, const struct ks_scaffold *s, const struct hook *h,
			 const struct ks_scaffold_syscall *sc)
{
	/* what loads into the kernel is GPL-2.0-only (LICENSE) */
	fprintf(f,
"// SPDX-License-Identifier: GPL-2.0-only\n"
"/* %s: %s. Written by `kshield shield new`: it loads,\n"
" * refuses nothing and kills nothing until the TODOs below are written.\n"
" *\n"
" * TODO: what the exploit does, which call is the narrow gate, and what\n"
" * ordinary use of the same subsystem looks like (it must pass).\n"
" */\n"
"#include \"shield.bpf.h\"\t/* the SDK: KS_SECURITY_HOOK, ks_deny, KSHIELD_ARGS */\n"
"#include \"kconst.bpf.h\"\t/* the kernel's constants: MAY_*, S_IF*, AF_*, MSG_* */\n"
"\n"
"KSHIELD_NAME(\"%s\");\n"
"KSHIELD_META(cve, \"%s\");\n"
"KSHIELD_META(summary, \"TODO: one line: the exploit's trigger, as this shield refuses it\");\n"
"KSHIELD_META(refs, \"https://nvd.nist.gov/vuln/detail/%s\");\n"
"/* TODO: an SQL condition on events, what the exploit leaves besides a hit\n"
" * (kshield hunt %s); this one matches nothing. */\n"
"KSHIELD_META(signs, \"(1 = 0)\");\n"
"/* The functions the kernel's fix changed (kshield hooks FUNCTION). */\n"
"KSHIELD_META(fix_function, \"%s\");\n"
"KSHIELD_VARIANTS(\"lsm,fmod_ret,tp\");\n"
"/* What each variant covers, by the test's path names (test.c's table):\n"
" * none yet. Name a path once its case is written and the variant proven\n"
" * on it; a path in neither list is \"not covered\" (a partial result). */\n"
"KSHIELD_META(prevents_lsm, \"\");\t/* fmod_ret: the same */\n"
"KSHIELD_META(prevents_tp, \"\");\n"
"KSHIELD_META(detects_tp, \"\");\n",
		s->name, s->cve, s->name, s->cve, s->cve, s->name,
		s->fix_function ? s->fix_function : "");
	/* the event's four words by name, as ks_deny/ks_kill below pass them */
	fprintf(f, "/* What a hit's four argument words are: how agents show it, read\n"
		" * from this object (TODO: name them as the calls below pass them). */\n");
	for (int i = 0; i < s->nhooks; i++)
		fprintf(f, "KSHIELD_ARGS(\"%s\", \"%s\");\n", h[i].name, h[i].named);
	fprintf(f, "KSHIELD_ARGS(\"sys_enter_%s\", \"arg0:hex arg1:hex arg2:hex\");\n", sc->name);
	for (int i = 0; i < s->nhooks; i++)
		if (strstr(h[i].named, "may_mask")) {
			fprintf(f, "KS_VALS_MAY_MASK;\n");
			break;
		}
	for (int i = 0; i < s->nhooks; i++) {
		char first[256];

		fprintf(f, "\n/* lsm/%s, and the same body as fmod_ret on\n * security_%s. */\n",
			h[i].name, h[i].name);
		snprintf(first, sizeof(first), "KS_SECURITY_HOOK(%s, %s,", h[i].name, h[i].name);
		wrap_args(f, first, h[i].args);
		fprintf(f,
"{\n"
"\t/* TODO: return 0 unless this call is the exploit's trigger; then record\n"
"\t * it and refuse (EPERM; 0 in audit mode), with up to four values for\n"
"\t * the event (named by KSHIELD_ARGS above):\n"
"\t *\treturn ks_deny(%s);\n"
"\t */\n"
"\treturn 0;\n"
"}\n", h[i].deny);
		if (h[i].filter[0])
			fprintf(f, "/* %s runs for every read and write: its programs run in a\n"
				" * chain that calls this one only for a mask with one of these bits\n"
				" * on an inode of one of these types (TODO: the narrowest the\n"
				" * trigger needs; `kshield shield new --filter MASK:TYPES`). */\n"
				"KS_SECURITY_FILTER(%s, %s);\n", h[i].name, h[i].name, h[i].filter);
	}
	fprintf(f,
"\n"
"/* tp: the fallback where the kernel has no BPF trampolines (SIGKILL at the\n"
" * syscall's entry, run by the syscall dispatcher). args[0..5] are the\n"
" * call's arguments. */\n"
"KS_SYSCALL_ENTER(tp__%s, %s)\n"
"{\n"
"\t/* TODO: return 0 unless args[] are the trigger's; then\n"
"\t *\tks_kill(\"sys_enter_%s\", args[0], args[1], args[2], 0);\n"
"\t */\n"
"\treturn 0;\n"
"}\n",
		sc->name, sc->name, sc->name);
	if (sc->abi32)
		fprintf(f, "/* The same body for the 32-bit %s(2). */\n"
			"KS_SYSCALL_ENTER32(tp__%s, %s)\n", sc->name, sc->name, sc->name);
	if (sc->socketcall)
		fprintf(f, "/* ... and for i386 socketcall(%d, args) (nothing on arm64). */\n"
			"KS_SOCKETCALL32(tp__%s, %d)\n", sc->socketcall, sc->name, sc->socketcall);
}

static void write_test(FILE *f, const struct ks_scaffold *s, const struct ks_scaffold_syscall *sc,
		       const struct path *p, int np)
{
	char line[256];

	fputs("// SPDX-License-Identifier: MIT\n", f);	/* user space (LICENSE) */
	snprintf(line, sizeof(line), "/* Trigger and benign cases for %s (%s). Written by", s->name,
		 s->cve);
	wrap(f, line, " * ", "`kshield shield new`: every case says \"not written yet\" (KS_CASE_TODO) "
	     "until it is written, and `kshield test` fails until then. The contract: "
	     "src/lib/shieldtest/shieldtest.h; a full example: shields/cve-2026-43500/test.c.");
	fprintf(f, " *\n * Paths (the table at the bottom; delete a row that cannot reach the bug\n"
		" * and say why in README.md):\n");
	for (int i = 0; i < np; i++) {
		snprintf(line, sizeof(line), " *   %s:", p[i].title);
		wrap(f, line, " *\t", path_todo(p[i].way, sc));
	}
	fprintf(f,
" */\n"
"#define _GNU_SOURCE\n"
"#include <errno.h>\n"
"#include <stdio.h>\n"
"#include <string.h>\n"
"#include <unistd.h>\n"
"#include <sys/syscall.h>\n"
"#include \"shieldtest.h\"\n"
"#include \"shieldtest_effect.h\"\n"
"\n");
	wrap(f, "enum way {", "\t", "");
	for (int i = 0; i < np; i++)
		fprintf(f, "\t%s,\n", way_enum[p[i].way]);
	fprintf(f, "};\n"
"\n"
"/* The effect oracle: once the trigger went through, look for what the\n"
" * exploit does (a read-only scratch file's page cache changed:\n"
" * ks_fx_scratch + ks_fx_page_cache_wait; the kernel's own answer to what\n"
" * its fix refuses; ...). KS_CASE_EFFECT when seen (the bug is live here),\n"
" * KS_CASE_NOEFFECT when checked and absent (fixed here), with what was\n"
" * seen in @why either way: the baseline's answer is the row's\n"
" * `vulnerable`. KS_CASE_PASSED: no oracle (vulnerable unknown). Where the\n"
" * fixed kernel refuses the guarded call itself with the shield's errno\n"
" * (EPERM), the case returns KS_CASE_FIXED (ks_case_fixed_from). */\n"
"static int effect(char *why, size_t len)\n"
"{\n"
"\t/* TODO */\n"
"\treturn ks_case_todo(\"the effect oracle\", why, len);\n"
"}\n"
"\n"
"/* Every path: the exploit's calls by way @p->way up to the guarded one\n"
" * (its result through ks_case_from(): EPERM is KS_CASE_REFUSED; another\n"
" * step that fails: ks_fx_step_failed()), then the oracle. */\n"
"static int trigger(const struct ks_path *p, char *why, size_t len)\n"
"{\n"
"\tint rc;\n"
"\n"
"\tswitch (p->way) {\n");
	for (int i = 0; i < np; i++) {
		snprintf(line, sizeof(line), "%s: %s", p[i].title, path_todo(p[i].way, sc));
		fprintf(f, "\tcase %s:\t/* TODO */\n"
			"\t\trc = ks_case_todo(\"%s\",\n\t\t\t\t  why, len);\n\t\tbreak;\n",
			way_enum[p[i].way], path_todo(p[i].way, sc));
	}
	fprintf(f,
"\tdefault:\n"
"\t\trc = ks_case_todo(p->name, why, len);\n"
"\t}\n"
"\treturn rc == KS_CASE_PASSED ? effect(why, len) : rc;\n"
"}\n"
"\n"
"/* pre-existing: runs in the case's child before the shield loads; the\n"
" * child waits (its objects open) until the load is done, then trigger()\n"
" * goes on. KS_CASE_PASSED, or <0 with @why. */\n"
"static int setup_before(const struct ks_path *p, char *why, size_t len)\n"
"{\n"
"\t/* TODO: make the object the trigger then uses (a static the case\n"
"\t * reads; @p->way says which path) */\n"
"\t(void)p;\n"
"\treturn ks_case_todo(\"%s\",\n\t\t\t    why, len);\n"
"}\n"
"\n"
"/* Ordinary use of the same subsystem: must pass with the shield enforcing. */\n"
"static int benign(char *why, size_t len)\n"
"{\n"
"\t/* TODO: what every system does with %s(2) every day */\n"
"\treturn ks_case_todo(\"benign: ordinary %s(2) use\", why, len);\n"
"}\n"
"\n"
"KSHIELD_TEST_PATHS(\"%s\", benign,\n",
		path_todo(WAY_PRE, sc), sc->name, sc->name, s->name);
	for (int i = 0; i < np; i++) {
		const char *end = i + 1 < np ? "," : ");";

		if (p[i].way == WAY_SOCKETCALL)
			fprintf(f, "\tKS_IF_SOCKETCALL32({ %s,\n\t\t\t     .call = trigger, .way = %s })%s\n",
				p[i].name, way_enum[p[i].way], end);
		else if (p[i].way == WAY_PRE)
			fprintf(f, "\t{ %s, .call = trigger, .call_before = setup_before,\n"
				"\t  .way = %s }%s\n", p[i].name, way_enum[p[i].way], end);
		else
			fprintf(f, "\t{ %s, .call = trigger, .way = %s }%s\n", p[i].name,
				way_enum[p[i].way], end);
	}
}

static void write_readme(FILE *f, const struct ks_scaffold *s, const struct hook *h,
			 const struct ks_scaffold_syscall *sc, const struct path *p, int np)
{
	fprintf(f,
"# %s: %s (TODO: the bug's name)\n"
"\n"
"**Blocks** TODO: the exploit's trigger, as the shield refuses it, and why\n"
"that call is the narrow gate.\n"
"\n"
"**Leaves alone** TODO: the ordinary uses of the same subsystem, and what the\n"
"shield costs (who would be refused).\n"
"\n"
"| variant | hook | kernels |\n"
"|---|---|---|\n"
"| `lsm` | ", s->name, s->cve);
	for (int i = 0; i < s->nhooks; i++)
		fprintf(f, "%s`lsm/%s`", i ? ", " : "", h[i].name);
	fprintf(f, ": TODO, EPERM | BPF LSM with trampolines |\n| `fmod_ret` | ");
	for (int i = 0; i < s->nhooks; i++)
		fprintf(f, "%sfmod_ret on `security_%s`", i ? ", " : "", h[i].name);
	fprintf(f, ": the same body, EPERM | BPF trampolines without `bpf` in `lsm=` |\n"
"| `tp` | `%s` entry (syscall dispatcher)%s%s: TODO, SIGKILL | fallback |\n"
"\n"
"**Needs** TODO: the kernel modules the test loads (metadata `modules`), and\n"
"the kernels the bug is in (fix: `%s`).\n"
"\n"
"**Paths** (trigger cases of `test.c`):\n"
"\n"
"| path | how | `lsm` | `tp` |\n"
"|---|---|---|---|\n",
		sc->name, sc->abi32 ? ", 32-bit entry" : "",
		sc->socketcall ? ", i386 socketcall" : "",
		s->fix_function && *s->fix_function ? s->fix_function : "TODO");
	for (int i = 0; i < np; i++)
		fprintf(f, "| `%s` | %s | not written yet | not written yet |\n", p[i].title,
			path_todo(p[i].way, sc));
	fprintf(f,
"\n"
"**Effect**: TODO: what the oracle checks, why it is sound, and where it was\n"
"measured (`vulnerable` yes/no per kernel of the matrix).\n"
"\n"
"**Benign case**: TODO.\n"
"\n"
"**Hunt**: TODO: what `signs` looks for (`kshield hunt %s`).\n", s->name);
}

/* @text into @dir/@file, which must not exist. */
static int put(const char *dir, const char *file, char *text, size_t n)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "wx");
	if (!f)
		return ks_err(-errno, "%s: %s", path, strerror(errno));
	if (fwrite(text, 1, n, f) != n || fclose(f))
		return ks_err(-EIO, "%s: write failed", path);
	return 0;
}

static bool good_name(const char *n)
{
	if (!*n || strlen(n) >= 48 || *n == '.' || *n == '-')
		return false;
	for (const char *c = n; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || strchr("._-", *c)))
			return false;
	return true;
}

int ks_scaffold_write(const struct ks_scaffold *s, char *out, size_t outlen)
{
	const struct ks_scaffold_syscall *sc = ks_scaffold_syscall(s->syscall ? s->syscall : "");
	struct hook h[KS_SCAFFOLD_MAX_HOOKS] = { 0 };
	struct path p[8];
	struct btf *btf;
	char *text[3] = { NULL, NULL, NULL };
	size_t len[3] = { 0, 0, 0 };
	static const char *files[3] = { "shield.bpf.c", "test.c", "README.md" };
	int err = 0, np;
	unsigned y, n;
	char tail;
	bool hot = false;

	if (!s->name || !good_name(s->name))
		return ks_err(-EINVAL, "bad shield name '%s': lower-case letters, digits, '.', '_', '-'",
			      s->name ? s->name : "");
	if (!s->cve || sscanf(s->cve, "CVE-%4u-%u%c", &y, &n, &tail) != 2)
		return ks_err(-EINVAL, "bad --cve '%s': want CVE-YYYY-NNNN", s->cve ? s->cve : "");
	if (s->nhooks < 1)
		return ks_err(-EINVAL, "no --hook: give the LSM hook(s) to refuse at "
			      "(kshield hooks FUNCTION lists them)");
	if (!sc)
		return ks_err(-ENOENT, "no syscall number for '%s' in the SDK (bpf/sdk/fit.bpf.h): "
			      "add it with scripts/sysnr.sh %s", s->syscall ? s->syscall : "",
			      s->syscall ? s->syscall : "NAME");
	btf = s->btf_path ? btf__parse(s->btf_path, NULL) : btf__load_vmlinux_btf();
	if (!btf)
		return ks_err(-errno, "cannot read %s: %s", s->btf_path ? s->btf_path :
			      "the kernel's BTF (/sys/kernel/btf/vmlinux)", strerror(errno));
	for (int i = 0; i < s->nhooks && !err; i++) {
		h[i].name = s->hooks[i];
		/* the hook, whichever of its names was given */
		if (!strncmp(h[i].name, "security_", 9))
			h[i].name += 9;
		else if (!strncmp(h[i].name, "bpf_lsm_", 8))
			h[i].name += 8;
		for (int j = 0; j < i && !err; j++)
			if (!strcmp(h[i].name, h[j].name))
				err = ks_err(-EINVAL, "hook '%s' given twice", h[i].name);
		if (err)
			break;
		err = hook_args(btf, s->btf_path, &h[i]);
		if (!err && hot_hook(h[i].name))
			err = filter_args(s->filter ? s->filter : default_filter(sc->name), h[i].filter,
					  sizeof(h[i].filter));
		hot |= hot_hook(h[i].name);
	}
	btf__free(btf);
	if (!err && s->filter && !hot)
		err = ks_err(-EINVAL, "--filter is for file_permission (its programs run in a chain "
			     "that filters); no --hook here is");
	if (err)
		return err;
	np = paths_of(sc, p);

	for (int i = 0; i < 3; i++) {
		FILE *f = open_memstream(&text[i], &len[i]);

		if (!f) {
			err = ks_err(-ENOMEM, "out of memory");
			goto out;
		}
		if (i == 0)
			write_shield(f, s, h, sc);
		else if (i == 1)
			write_test(f, s, sc, p, np);
		else
			write_readme(f, s, h, sc, p, np);
		fclose(f);
	}
	snprintf(out, outlen, "%s/%s", s->dir ? s->dir : "shields", s->name);
	if (mkdir(out, 0755)) {
		err = errno == EEXIST ? ks_err(-EEXIST, "%s exists: pick another name or remove it", out)
				      : ks_err(-errno, "mkdir %s: %s", out, strerror(errno));
		goto out;
	}
	for (int i = 0; i < 3 && !err; i++)
		err = put(out, files[i], text[i], len[i]);
out:
	for (int i = 0; i < 3; i++)
		free(text[i]);
	return err;
}
