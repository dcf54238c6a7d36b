// SPDX-License-Identifier: MIT
/* hooks.c - the `kshield hooks` noun: where can the paths from user space
 * to a kernel function be refused? (src/lib/hooks/hookfind.h)
 *
 *	kshield hooks FUNCTION[,FUNCTION...] [--kernel RELEASE]... [--vmlinux PATH]
 *	kshield hooks --shield NAME|FILE [--kernel RELEASE]...
 *
 * The DWARF comes from the running kernel's debug file (by build ID), a
 * given vmlinux (modules beside it in a -dbg tree), or the matrix's -dbg
 * cache for a release ($KSHIELD_DBGTREE, default
 * /var/cache/kshield-matrix/dbgtree, filled by matrix/dbgtree.sh).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "argfmt.h"
#include "debugfile.h"
#include "hookfind.h"
#include "kernel_sites.h"
#include "meta.h"

#define MAX_KERNELS 8
#define MAX_SHIELD_HOOKS 32
#define DBGTREE_DEFAULT "/var/cache/kshield-matrix/dbgtree"

static int hooks_help(void)
{
	fprintf(stderr,
		"Usage: kshield hooks FUNCTION[,FUNCTION...] [--kernel RELEASE]... [--vmlinux PATH]\n"
		"                     [--max-distance N] [--top N | --all] [--guess] [-j]\n"
		"       kshield hooks --shield NAME|FILE [same options]\n"
		"\n"
		"The refusal points on the paths from user space to FUNCTION (a function a\n"
		"CVE fix changed), nearest first: LSM hooks (lsm and fmod_ret variants,\n"
		"EPERM), tracepoints and syscall entries (tp, SIGKILL), and the netlink\n"
		"message types and io_uring opcodes that lead there; where a path was lost.\n"
		"\n"
		"  --kernel RELEASE   the -dbg tree of RELEASE in $KSHIELD_DBGTREE (default\n"
		"                     $KSHIELD_MATRIX_CACHE/dbgtree, else " DBGTREE_DEFAULT ";\n"
		"                     matrix/dbgtree.sh fills it);\n"
		"                     repeat to compare kernels\n"
		"  --vmlinux PATH     a vmlinux with DWARF; modules from PATH's -dbg tree\n"
		"  (neither)          the running kernel's debug file, by build ID\n"
		"  --shield NAME      FUNCTION from the shield's fix_function metadata; also\n"
		"                     says which rows are the shield's own hooks\n"
		"  --max-distance N   calls to walk up from FUNCTION (default 20)\n"
		"  --top N            rows shown (default 15); --all: every row\n"
		"  --guess            follow struct members no dispatcher table names through\n"
		"                     the functions that hold that struct and call through a\n"
		"                     pointer (rows marked [guessed], ranked after sure ones)\n"
		"See docs/hooks.md.\n");
	return 0;
}

struct kernel {
	char error[512];		/* this kernel's query failed: why */
	char release[128];
	char vmlinux[PATH_MAX];
	char modules[PATH_MAX];		/* "" when none */
	struct ks_hooks_result res;
};

struct shield_hook {
	char section[128];
	enum ks_hook_kind kind;
	char name[96];
};

/* $KSHIELD_DBGTREE, else matrix/dbgtree.sh's: $KSHIELD_MATRIX_CACHE/dbgtree */
static const char *dbgtree(void)
{
	static char dir[PATH_MAX];

	if (getenv("KSHIELD_DBGTREE"))
		return getenv("KSHIELD_DBGTREE");
	if (getenv("KSHIELD_MATRIX_CACHE")) {
		snprintf(dir, sizeof(dir), "%s/dbgtree", getenv("KSHIELD_MATRIX_CACHE"));
		return dir;
	}
	return DBGTREE_DEFAULT;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* .../usr/lib/debug/boot/vmlinux-REL -> .../usr/lib/debug/lib/modules/REL */
static void modules_beside(const char *vmlinux, const char *release, char *out, size_t len)
{
	char dir[PATH_MAX], *slash;
	const char *base = strrchr(vmlinux, '/') ? strrchr(vmlinux, '/') + 1 : vmlinux;
	const char *rel = release && release[0] ? release :
			  !strncmp(base, "vmlinux-", 8) ? base + 8 : NULL;

	out[0] = 0;
	if (!rel)
		return;
	snprintf(dir, sizeof(dir), "%s", vmlinux);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;	/* .../boot */
	snprintf(out, len, "%s/../lib/modules/%s", dir, rel);
	if (is_dir(out))
		return;
	snprintf(out, len, "%s/lib/modules/%s", dir, rel);
	if (!is_dir(out))
		out[0] = 0;
}

static int kernel_from_release(struct kernel *k, const char *release)
{
	snprintf(k->release, sizeof(k->release), "%s", release);
	snprintf(k->vmlinux, sizeof(k->vmlinux), "%s/linux-image-%s/usr/lib/debug/boot/vmlinux-%s",
		 dbgtree(), release, release);
	if (access(k->vmlinux, R_OK))
		return ks_err(-ENOENT, "no -dbg tree for %s in %s: run matrix/dbgtree.sh linux-image-%s",
			      release, dbgtree(), release);
	snprintf(k->modules, sizeof(k->modules), "%s/linux-image-%s/usr/lib/debug/lib/modules/%s",
		 dbgtree(), release, release);
	if (!is_dir(k->modules))
		k->modules[0] = 0;
	return 0;
}

static int kernel_running(struct kernel *k)
{
	char id[KS_BUILD_ID_HEX];
	const char *src;
	struct utsname u;
	int err;

	uname(&u);
	snprintf(k->release, sizeof(k->release), "%s", u.release);
	err = ks_kernel_build_id(id, sizeof(id));
	if (!err)
		err = ks_kernel_vmlinux_find(id, u.release, 0, k->vmlinux, sizeof(k->vmlinux), &src);
	if (err)
		return ks_err_ctx(err, "the running kernel's DWARF (or give --kernel RELEASE / --vmlinux PATH)");
	snprintf(k->modules, sizeof(k->modules), "/usr/lib/debug/lib/modules/%s", u.release);
	if (!is_dir(k->modules))
		k->modules[0] = 0;
	return 0;
}

/* The shield object @name (a path, or NAME in the shields directory). */
static void shield_path(const char *name, char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (strchr(name, '/') || strstr(name, ".bpf.o")) {
		snprintf(out, len, "%s", name);
		return;
	}
	if (getenv("KSHIELD_SHIELDS")) {
		snprintf(out, len, "%s/%s.bpf.o", getenv("KSHIELD_SHIELDS"), name);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		*strrchr(exe, '/') = 0;
		snprintf(out, len, "%s/shields/%s.bpf.o", exe, name);
		if (!access(out, R_OK))
			return;
	}
	snprintf(out, len, "/usr/lib/kshield/shields/%s.bpf.o", name);
}

/* The shield's fix_function and the hooks its programs attach to. */
static int shield_hooks(const char *path, char *funcs, size_t flen, struct shield_hook *h, int *nh)
{
	struct ks_meta meta;
	struct bpf_object *obj;
	struct bpf_program *p;
	const char *ff;
	int err = ks_meta_read(path, &meta);

	*nh = 0;
	if (err)
		return err;
	ff = ks_meta_get(&meta, "fix_function");
	if (!ff) {
		ks_meta_free(&meta);
		return ks_err(-ENOENT, "%s has no fix_function metadata: name the function instead", path);
	}
	snprintf(funcs, flen, "%s", ff);
	/* syscall hooks run by the dispatcher: "sys.PROG=enter NR,NR" */
	for (int i = 0; i < meta.n && *nh < MAX_SHIELD_HOOKS; i++) {
		char *v, *tok, *save = NULL, buf[256];
		bool abi32;

		if (strncmp(meta.key[i], "sys.", 4))
			continue;
		snprintf(buf, sizeof(buf), "%s", meta.val[i]);
		v = strchr(buf, ' ');
		if (!v || strncmp(buf, "enter", 5))
			continue;
		abi32 = !strncmp(buf, "enter32", 7);
		for (tok = strtok_r(v + 1, ", ", &save); tok && *nh < MAX_SHIELD_HOOKS;
		     tok = strtok_r(NULL, ", ", &save)) {
			const char *sc = ks_syscall_name(strtoull(tok, NULL, 0), abi32);
			bool dup = false;

			if (!sc)
				continue;
			for (int j = 0; j < *nh; j++)
				dup |= h[j].kind == KS_HOOK_SYSCALL && !strcmp(h[j].name, sc);
			if (dup)
				continue;
			snprintf(h[*nh].section, sizeof(h[*nh].section), "%s (%s)", meta.key[i] + 4, buf);
			h[*nh].kind = KS_HOOK_SYSCALL;
			snprintf(h[*nh].name, sizeof(h[*nh].name), "%s", sc);
			(*nh)++;
		}
	}
	ks_meta_free(&meta);
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return ks_err(-errno, "can't open %s as a BPF object", path);
	bpf_object__for_each_program(p, obj) {
		const char *sec = bpf_program__section_name(p);
		enum ks_hook_kind kind;
		char name[96];
		bool dup = false;

		if (*nh >= MAX_SHIELD_HOOKS || !ks_hook_of_section(sec, &kind, name, sizeof(name)))
			continue;
		for (int j = 0; j < *nh; j++)
			dup |= h[j].kind == kind && !strcmp(h[j].name, name);
		if (dup)
			continue;
		snprintf(h[*nh].section, sizeof(h[*nh].section), "%s", sec);
		h[*nh].kind = kind;
		snprintf(h[*nh].name, sizeof(h[*nh].name), "%s", name);
		(*nh)++;
	}
	bpf_object__close(obj);
	return 0;
}

/* 1-based rank of (kind, name) in @r, 0 when absent. */
static int rank_of(const struct ks_hooks_result *r, enum ks_hook_kind kind, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].kind == kind && !strcmp(r->rows[i].name, name))
			return i + 1;
	return 0;
}

/* Rows of every kernel's first @top (all: 0), each once, in the order of
 * their best rank: which kernels have which refusal point. */
struct merged {
	enum ks_hook_kind kind;
	const char *name;
	int best;
};

static int merged_cmp(const void *a, const void *b)
{
	const struct merged *x = a, *y = b;

	return x->best != y->best ? x->best - y->best : strcmp(x->name, y->name);
}

static struct merged *merge_rows(struct kernel *k, int nk, int top, size_t *n)
{
	size_t cap = 0, m = 0;
	struct merged *out = NULL;

	for (int i = 0; i < nk; i++) {
		const struct ks_hooks_result *r = &k[i].res;
		size_t lim = top > 0 && (size_t)top < r->nrows ? (size_t)top : r->nrows;

		for (size_t j = 0; j < lim; j++) {
			size_t x;

			for (x = 0; x < m; x++)
				if (out[x].kind == r->rows[j].kind && !strcmp(out[x].name, r->rows[j].name))
					break;
			if (x < m) {
				if ((int)j + 1 < out[x].best)
					out[x].best = j + 1;
				continue;
			}
			if (m == cap) {
				struct merged *p = realloc(out, (cap = cap ? 2 * cap : 32) * sizeof(*p));

				if (!p)
					break;
				out = p;
			}
			out[m].kind = r->rows[j].kind;
			out[m].name = r->rows[j].name;
			out[m++].best = j + 1;
		}
	}
	if (out)
		qsort(out, m, sizeof(*out), merged_cmp);
	*n = m;
	return out;
}

static struct json_object *row_json(const struct ks_hook_row *row, int rank)
{
	struct json_object *o = json_object_new_object();
	char v[64];

	ks_hook_variants_str(row->variants, v, sizeof(v));
	json_object_object_add(o, "rank", json_object_new_int(rank));
	json_object_object_add(o, "kind", json_object_new_string(ks_hook_kind_name(row->kind)));
	json_object_object_add(o, "name", json_object_new_string(row->name));
	json_object_object_add(o, "distance", json_object_new_int(row->distance));
	json_object_object_add(o, "guessed", json_object_new_boolean(row->guessed));
	if (row->kind == KS_HOOK_LSM) {
		json_object_object_add(o, "after_next_call", json_object_new_boolean(row->after));
		json_object_object_add(o, "order_known", json_object_new_boolean(row->order_known));
		json_object_object_add(o, "can_refuse", json_object_new_boolean(!row->no_verdict));
		json_object_object_add(o, "args", json_object_new_string(row->detail));
	} else {
		json_object_object_add(o, "detail", json_object_new_string(row->detail));
	}
	json_object_object_add(o, "variants", json_object_new_string(v));
	json_object_object_add(o, "at", json_object_new_string(row->at));
	if (row->from[0])
		json_object_object_add(o, "from_syscall", json_object_new_string(row->from));
	if (row->via[0])
		json_object_object_add(o, "via", json_object_new_string(row->via));
	json_object_object_add(o, "path", json_object_new_string(row->path));
	if (row->inlined[0])
		json_object_object_add(o, "inlined", json_object_new_string(row->inlined));
	return o;
}

static void print_json(const char *funcs, struct kernel *k, int nk, const char *shield,
		       const struct shield_hook *sh, int nsh)
{
	struct json_object *o = json_object_new_object(), *ka = json_object_new_array();

	json_object_object_add(o, "function", json_object_new_string(funcs));
	for (int i = 0; i < nk; i++) {
		struct json_object *ko = json_object_new_object(), *rows = json_object_new_array(),
				   *lost = json_object_new_array();
		const struct ks_hooks_result *r = &k[i].res;

		json_object_object_add(ko, "release", json_object_new_string(k[i].release));
		json_object_object_add(ko, "vmlinux", json_object_new_string(k[i].vmlinux));
		if (k[i].error[0])
			json_object_object_add(ko, "error", json_object_new_string(k[i].error));
		json_object_object_add(ko, "where", json_object_new_string(r->where));
		if (r->missing[0])
			json_object_object_add(ko, "missing", json_object_new_string(r->missing));
		json_object_object_add(ko, "files", json_object_new_string(r->files));
		json_object_object_add(ko, "functions", json_object_new_int64(r->nfuncs));
		json_object_object_add(ko, "calls", json_object_new_int64(r->nedges));
		json_object_object_add(ko, "on_paths", json_object_new_int64(r->visited));
		json_object_object_add(ko, "load_secs", json_object_new_double(r->load_secs));
		json_object_object_add(ko, "search_secs", json_object_new_double(r->search_secs));
		for (size_t j = 0; j < r->nrows; j++)
			json_object_array_add(rows, row_json(&r->rows[j], j + 1));
		for (size_t j = 0; j < r->nlost; j++)
			json_object_array_add(lost, json_object_new_string(r->lost[j]));
		json_object_object_add(ko, "rows", rows);
		json_object_object_add(ko, "lost", lost);
		json_object_array_add(ka, ko);
	}
	json_object_object_add(o, "kernels", ka);
	if (nk > 1) {
		size_t nm;
		struct merged *m = merge_rows(k, nk, 0, &nm);
		struct json_object *ma = json_object_new_array();

		for (size_t j = 0; j < nm; j++) {
			struct json_object *mo = json_object_new_object(), *ranks = json_object_new_object();

			json_object_object_add(mo, "kind", json_object_new_string(ks_hook_kind_name(m[j].kind)));
			json_object_object_add(mo, "name", json_object_new_string(m[j].name));
			for (int i = 0; i < nk; i++) {
				int rk = rank_of(&k[i].res, m[j].kind, m[j].name);

				json_object_object_add(ranks, k[i].release, rk ? json_object_new_int(rk) : NULL);
			}
			json_object_object_add(mo, "rank", ranks);
			json_object_array_add(ma, mo);
		}
		free(m);
		json_object_object_add(o, "on_kernels", ma);
	}
	if (shield) {
		struct json_object *so = json_object_new_object(), *ha = json_object_new_array();

		json_object_object_add(so, "name", json_object_new_string(shield));
		for (int j = 0; j < nsh; j++) {
			struct json_object *h = json_object_new_object(), *ranks = json_object_new_object();

			json_object_object_add(h, "section", json_object_new_string(sh[j].section));
			json_object_object_add(h, "kind", json_object_new_string(ks_hook_kind_name(sh[j].kind)));
			json_object_object_add(h, "name", json_object_new_string(sh[j].name));
			for (int i = 0; i < nk; i++) {
				int rk = rank_of(&k[i].res, sh[j].kind, sh[j].name);

				json_object_object_add(ranks, k[i].release, rk ? json_object_new_int(rk) : NULL);
			}
			json_object_object_add(h, "rank", ranks);
			json_object_array_add(ha, h);
		}
		json_object_object_add(so, "hooks", ha);
		json_object_object_add(o, "shield", so);
	}
	ks_json_print(o);
}

static void print_plain(const char *funcs, struct kernel *k, int nk, int top, const char *shield,
			const struct shield_hook *sh, int nsh)
{
	for (int i = 0; i < nk; i++) {
		const struct ks_hooks_result *r = &k[i].res;
		size_t shown = top > 0 && (size_t)top < r->nrows ? (size_t)top : r->nrows;

		if (k[i].error[0]) {
			printf("%s on %s: %s\n\n", funcs, k[i].release, k[i].error);
			continue;
		}
		printf("%s on %s (%s)\n", funcs, k[i].release, r->where);
		if (r->missing[0])
			printf("not in this build: %s\n", r->missing);
		printf("%-4s %-10s %-28s %4s %-7s %-16s %s\n", "RANK", "KIND", "HOOK", "DIST", "ORDER",
		       "VARIANTS", "AT");
		for (size_t j = 0; j < shown; j++) {
			const struct ks_hook_row *row = &r->rows[j];
			char v[64];

			ks_hook_variants_str(row->variants, v, sizeof(v));
			printf("%-4zu %-10s %-28s %4d %-7s %-16s %s%s%s%s%s\n", j + 1,
			       ks_hook_kind_name(row->kind), row->name, row->distance,
			       row->kind != KS_HOOK_LSM ? "-" : row->no_verdict ? "void" : !row->order_known ? "?" :
			       row->after ? "after" : "before", v, row->at,
			       row->via[0] ? " (in " : "", row->via, row->via[0] ? ")" : "",
			       row->guessed ? "  [guessed]" : "");
			if (row->detail[0])
				printf("     %s: %s\n", row->kind == KS_HOOK_LSM ? "args" : "detail", row->detail);
			if (row->from[0] && row->kind != KS_HOOK_SYSCALL)
				printf("     path (from %s): %s\n", row->from, row->path);
			else
				printf("     path: %s\n", row->path);
			if (row->inlined[0])
				printf("     inlined: %s\n", row->inlined);
		}
		if (shown < r->nrows)
			printf("(%zu more rows: --all)\n", r->nrows - shown);
		if (r->nlost) {
			size_t nl = r->nlost < 8 ? r->nlost : 8;

			printf("paths lost (nearest first%s):\n", nl < r->nlost ? "; -j lists all" : "");
			for (size_t j = 0; j < nl; j++)
				printf("  %s\n", r->lost[j]);
		}
		printf("read %s: %zu functions, %zu calls, %zu on paths; %.1f s reading, %.2f s searching\n\n",
		       r->files, r->nfuncs, r->nedges, r->visited, r->load_secs, r->search_secs);
	}
	if (nk > 1) {
		size_t nm;
		struct merged *m = merge_rows(k, nk, top, &nm);

		printf("on which kernels (rank on each, - where absent):\n");
		for (size_t j = 0; j < nm; j++) {
			printf("  %-10s %-28s", ks_hook_kind_name(m[j].kind), m[j].name);
			for (int i = 0; i < nk; i++) {
				int rk = rank_of(&k[i].res, m[j].kind, m[j].name);

				if (rk)
					printf("  %s: %d", k[i].release, rk);
				else
					printf("  %s: -", k[i].release);
			}
			printf("\n");
		}
		free(m);
		printf("\n");
	}
	if (!shield)
		return;
	printf("shield %s: its hooks and their rank\n", shield);
	for (int j = 0; j < nsh; j++) {
		printf("  %-40s %-10s %-24s", sh[j].section, ks_hook_kind_name(sh[j].kind), sh[j].name);
		for (int i = 0; i < nk; i++) {
			int rk = rank_of(&k[i].res, sh[j].kind, sh[j].name);

			if (rk)
				printf("  %s: %d", k[i].release, rk);
			else
				printf("  %s: -", k[i].release);
		}
		printf("\n");
	}
}

int do_hooks(int argc, char **argv)
{
	const char *releases[MAX_KERNELS], *vmlinux = NULL, *shield = NULL;
	struct kernel *k;
	struct shield_hook sh[MAX_SHIELD_HOOKS];
	char funcs[1024], spath[PATH_MAX];
	int nrel = 0, nk = 0, nsh = 0, maxdist = 0, top = 15, npos = 0, rc = 0, err = 0;
	bool all = false, guess = false;
	const struct ks_opt opts[] = {
		OPT_LIST("--kernel", releases, &nrel, MAX_KERNELS),
		OPT_VAL("--vmlinux", &vmlinux),
		OPT_VAL("--shield", &shield),
		OPT_INT("--max-distance", &maxdist),
		OPT_INT("--top", &top),
		OPT_FLAG("--all", &all),
		OPT_FLAG("--guess", &guess),
		OPT_END,
	};

	if (!ks_opts_parse("hooks", opts, argc, argv, 1, &npos, hooks_help, &rc))
		return rc;
	if (!shield && npos != 1)
		return ks_usage("hooks: name a FUNCTION or give --shield NAME; see 'kshield hooks help'");
	if (shield) {
		shield_path(shield, spath, sizeof(spath));
		err = shield_hooks(spath, funcs, sizeof(funcs), sh, &nsh);
		if (err)
			return ks_report(err);
		if (npos == 1)
			snprintf(funcs, sizeof(funcs), "%s", argv[0]);
	} else {
		snprintf(funcs, sizeof(funcs), "%s", argv[0]);
	}
	if (all)
		top = 0;
	k = calloc(MAX_KERNELS + 1, sizeof(*k));
	if (!k)
		return ks_report(-ENOMEM);
	for (int i = 0; i < nrel && !err; i++)
		err = kernel_from_release(&k[nk++], releases[i]);
	if (!err && vmlinux) {
		snprintf(k[nk].vmlinux, sizeof(k[nk].vmlinux), "%s", vmlinux);
		modules_beside(vmlinux, NULL, k[nk].modules, sizeof(k[nk].modules));
		snprintf(k[nk].release, sizeof(k[nk].release), "%s",
			 strrchr(vmlinux, '/') ? strrchr(vmlinux, '/') + 1 : vmlinux);
		nk++;
	}
	if (!err && !nk)
		err = kernel_running(&k[nk++]);
	/* one kernel lacking the function (not built there) does not stop
	 * the others: it says so in its place */
	int nfail = 0;

	for (int i = 0; i < nk && !err; i++) {
		struct ks_hooks_query q = {
			.functions = funcs,
			.vmlinux = k[i].vmlinux,
			.modules_dir = k[i].modules[0] ? k[i].modules : NULL,
			.max_distance = maxdist,
			.guess = guess,
		};
		int e = ks_hooks_find(&q, &k[i].res);

		if (e) {
			snprintf(k[i].error, sizeof(k[i].error), "%s", ks_errmsg());
			nfail++;
			if (e != -ENOENT || nk == 1)
				err = ks_err_ctx(e, "%s", k[i].release);
		}
	}
	if (!err && nfail == nk)
		err = ks_err(-ENOENT, "%s: %s", k[0].release, k[0].error);
	if (!err) {
		if (json_output)
			print_json(funcs, k, nk, shield, sh, nsh);
		else
			print_plain(funcs, k, nk, top, shield, sh, nsh);
	}
	for (int i = 0; i < nk; i++)
		ks_hooks_result_free(&k[i].res);
	free(k);
	return err ? ks_report(err) : 0;
}
