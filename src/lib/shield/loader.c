// SPDX-License-Identifier: MIT
/* loader.c - load a shield object, choose its strongest variant that this
 * kernel accepts, attach it and pin it under <bpffs>/shields/<name>/.
 *
 * Loading is all or nothing: a variant is built in a staging directory
 * (_new_<name>; bpffs refuses dots in names) and only renamed into place once
 * every program of it is attached and pinned. A shield that is already loaded
 * keeps enforcing until the new one is attached: the old directory is renamed
 * aside (_old_<name>) and removed only after the new one is in place, so for a
 * moment both enforce and there is never a moment when neither does.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "array.h"
#include "clock.h"
#include "err.h"
#include "file.h"
#include "fit.h"
#include "btf_find.h"
#include "loader.h"
#include "sysdispatch.h"
#include "fpdispatch.h"
#include "meta.h"
#include "pins.h"
#include "sysinfo.h"
#include "kernel_sites.h"
#include "uprobe_sites.h"

#define LOG_BUF_SIZE (16 * 1024 * 1024)	/* 5.10 fails a load whose log overflows */

static __u64 realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The program libbpf names when one fails to load: it loads them in
 * order and stops at the first refusal, but leaves no trace of which on
 * the object (all are unloaded again). Caught from its own message while
 * bpf_object__load runs, which still goes on to the previous printer. */
static libbpf_print_fn_t load_print_next;
static char load_failed_prog[128];

static int load_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[256];
	const char *p;
	va_list aq;

	va_copy(aq, ap);
	vsnprintf(line, sizeof(line), fmt, aq);
	va_end(aq);
	if (!load_failed_prog[0] && (p = strstr(line, "prog '")) && strstr(line, "failed to load"))
		sscanf(p + 6, "%127[^']", load_failed_prog);
	return load_print_next ? load_print_next(level, fmt, ap) : 0;
}

/* What the shield's "requires" and variant @v's "requires_<v>" metadata
 * ask of the kernel (comma lists, ks_kernel_meets) that this kernel lacks:
 * a reason in @why and -EOPNOTSUPP, or 0. "compat": 32-bit syscalls, for
 * a variant that watches only them; "before-X.Y" and "no-member:S.M": the
 * window of kernels where the shield's bug can exist. */
static int variant_unneeded(const struct ks_meta *meta, const char *v, char *why, size_t len)
{
	char key[96], list[256], what[160], *tok, *save;
	const char *req;
	int err;

	for (int i = 0; i < 2; i++) {
		snprintf(key, sizeof(key), i ? "requires_%s" : "requires", v);
		req = ks_meta_get(meta, key);
		if (!req)
			continue;
		snprintf(list, sizeof(list), "%s", req);
		for (tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
			err = ks_kernel_meets(tok, what, sizeof(what));
			if (!err)
				continue;
			if (err == -EINVAL)
				snprintf(why, len, "%s: %s", key, what);
			else if (!strcmp(tok, "compat"))
				snprintf(why, len, "%s, the only paths %s watches: nothing to guard "
					 "here", what, v);
			else
				snprintf(why, len, "%s (%s %s): the bug cannot exist here, nothing to "
					 "guard", what, key, tok);
			return err;
		}
	}
	return 0;
}

static bool prog_in_variant(const struct bpf_program *prog, const char *variant)
{
	const char *name = bpf_program__name(prog);
	size_t n = strlen(variant);

	return !strncmp(name, variant, n) && name[n] == '_' && name[n + 1] == '_';
}

/* The last few lines of a verifier log that say why it gave up: its
 * closing statistics ("processed N insns", "verification time") are not. */
static void log_tail(char *log, char *out, size_t len, int lines)
{
	char *line[lines];
	int n = 0, i;
	size_t off = 0;

	for (char *p = strtok(log, "\n"); p; p = strtok(NULL, "\n")) {
		if (!*p || !strncmp(p, "processed ", 10) || !strncmp(p, "verification time", 17) ||
		    !strncmp(p, "stack depth", 11))
			continue;
		line[n++ % lines] = p;
	}
	out[0] = '\0';
	for (i = n > lines ? n - lines : 0; i < n && off < len; i++)
		off += snprintf(out + off, len - off, "%s%s", off ? " | " : "", line[i % lines]);
}

static bool is_cgroup_prog(const struct bpf_program *prog)
{
	switch (bpf_program__type(prog)) {
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
		return true;
	default:
		return false;
	}
}

static int pin_map(struct bpf_object *obj, const char *map, const char *dir)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, map);
	char path[PATH_MAX];

	if (!m)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, map + 3 /* "ks_" */);
	return bpf_map__pin(m, path);
}

/* A uprobe program of a shield whose target names a user-space function
 * ("PATH:FUNCTION" or "BUILDID:FUNCTION"), or a kprobe program of one whose
 * target is "kernel:FUNCTION": attached at every copy of it. Returns the
 * kernel function name for the latter through @kfn. */
static bool is_site_target(const struct bpf_program *prog, const struct ks_meta *meta,
			   const char **kfn)
{
	const char *t = ks_meta_get(meta, "target"), *sec = bpf_program__section_name(prog);

	*kfn = NULL;
	if (!t || !strchr(t, ':'))
		return false;
	if (!strncmp(t, "kernel:", 7)) {
		*kfn = t + 7;
		return !strncmp(sec, "kprobe", 6);
	}
	return !strncmp(sec, "uprobe", 6);
}

/* The links of one variant: a program's only link (site -1), or one per
 * copy of its target function (site = that copy's index, its cookie).
 * Grown as needed: a function like copy_from_user has hundreds of copies. */
struct links {
	struct bpf_link **l;
	int *site;
	int n, cap;
};

static int links_add(struct links *ls, struct bpf_link *l, int site)
{
	if (ls->n == ls->cap) {
		int cap = ls->cap ? ls->cap * 2 : 16;
		struct bpf_link **nl = realloc(ls->l, cap * sizeof(*nl));
		int *ns;

		if (!nl)
			return -ENOMEM;
		ls->l = nl;
		ns = realloc(ls->site, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		ls->site = ns;
		ls->cap = cap;
	}
	ls->l[ls->n] = l;
	ls->site[ls->n++] = site;
	return 0;
}

/* Pinned links outlive these handles; unpinned ones (a failed load)
 * detach here, several at once (uprobe_sites.h). */
static void links_free(struct links *ls)
{
	ks_uprobe_links_free(ls->l, ls->n);
	free(ls->site);
	memset(ls, 0, sizeof(*ls));
}

/* Resolve the copies of the variant's site target, once for all its site
 * programs, before the load: the per-site argument map "ks_sites" is sized
 * KS_SITES_MAX at compile time and grows here to the number of copies.
 * Returns 0 with s->nsites == 0 when the variant has no site program. */
static int resolve_sites(struct bpf_object *obj, const struct ks_meta *meta,
			 struct ks_sites *s, char *why, size_t len)
{
	struct bpf_program *prog, *first = NULL;
	struct bpf_map *sm = bpf_object__find_map_by_name(obj, "ks_sites");
	const char *kfn = NULL, *t = ks_meta_get(meta, "target");
	char kwhy[128], binary[PATH_MAX], function[128];
	int err;

	memset(s, 0, sizeof(*s));
	bpf_object__for_each_program(prog, obj)
		if (bpf_program__autoload(prog) && is_site_target(prog, meta, &kfn)) {
			first = prog;
			break;
		}
	if (!first)
		return 0;
	if (kfn) {
		/* Before resolving: no vmlinux or manifest can help here. */
		if (!ks_kprobes_available(kwhy, sizeof(kwhy)))
			err = ks_err(-EOPNOTSUPP, "%s", kwhy);
		else if ((err = ks_kernel_sites(kfn, NULL, s)))
			ks_err_ctx(err, "target kernel:%s", kfn);
	} else {
		err = ks_target_parse(t, binary, sizeof(binary), function, sizeof(function));
		if (!err)
			err = ks_sites_find(binary, function, s);
		if (err && !strstr(ks_errmsg(), t))
			ks_err_ctx(err, "target %s", t);
	}
	if (!err && sm && s->nsites > (int)bpf_map__max_entries(sm) &&
	    (err = bpf_map__set_max_entries(sm, s->nsites)))
		ks_err(err, "can't size ks_sites for %d copies: %s", s->nsites, strerror(-err));
	if (err)
		snprintf(why, len, "%s: %s", bpf_program__name(first), ks_errmsg());
	return err;
}

/* One variant being tried: what its stages share, freed by attempt_free().
 * The stages fill @why (one line) and return 0 or -errno. */
struct attempt {
	const struct ks_meta *meta;
	const char *variant;
	struct bpf_object *obj;
	struct links links;
	struct ks_sites sites;
	char *log;		/* the verifier's, for every program of the variant */
	int cgfd;		/* the cgroup2 root, once a cgroup program needs it */
	char *why;
	size_t whylen;
};

static void attempt_free(struct attempt *at)
{
	links_free(&at->links);
	ks_sites_free(&at->sites);
	ks_zclose(&at->cgfd);
	bpf_object__close(at->obj);
	free(at->log);
}

/* Open the object from @buf (the bytes hashed and verified by the caller,
 * never the file again: it may have changed since) with the variant's
 * programs only, fitted to this kernel (twins chosen, maps converted),
 * what it cannot get here named, its site targets resolved. */
static int open_variant(struct attempt *at, const void *buf, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct ks_kernel_offers offers;
	struct bpf_program *prog;
	char maps[PATH_MAX];
	int nprogs = 0, err;

	ks_pin_path(maps, sizeof(maps), "%s", KS_PIN_MAPS);
	opts.pin_root_path = maps;
	opts.object_name = ks_meta_get(at->meta, "name");
	if ((err = ks_btf_open_opts(&opts))) {
		snprintf(at->why, at->whylen, "%s", ks_errmsg());
		return err;
	}
	at->obj = bpf_object__open_mem(buf, len, &opts);
	if (!at->obj) {
		err = -errno;
		snprintf(at->why, at->whylen, "malformed BPF object: %s", strerror(-err));
		return err;
	}
	at->log = calloc(1, LOG_BUF_SIZE);
	bpf_object__for_each_program(prog, at->obj) {
		bool mine = prog_in_variant(prog, at->variant);

		bpf_program__set_autoload(prog, mine);
		if (mine)
			nprogs++;
	}
	if (!nprogs) {
		snprintf(at->why, at->whylen, "no programs named %s__*", at->variant);
		return -ENOENT;
	}
	/* What this kernel lacks, named before the verifier says EINVAL:
	 * the kernel's own BTF, bpf_loop, bpf_override_return (fit.h). */
	ks_fit_select(at->obj);
	ks_kernel_offers(at->obj, &offers);
	if ((err = ks_fit_variant_needs(at->obj, &offers, at->why, at->whylen)))
		return err;
	/* One log for all: libbpf loads them in order and stops at the
	 * first refusal, so it ends with the refused program's verifier log. */
	bpf_object__for_each_program(prog, at->obj)
		if (bpf_program__autoload(prog) && at->log)
			bpf_program__set_log_buf(prog, at->log, LOG_BUF_SIZE);
	if ((err = ks_fit_prepare(at->obj))) {
		snprintf(at->why, at->whylen, "can't fit the maps to this kernel: %s",
			 strerror(-err));
		return err;
	}
	bpf_object__for_each_program(prog, at->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (ks_fit_link_unpinnable(prog)) {
			snprintf(at->why, at->whylen, "%s: this kernel cannot pin "
				 "tracepoint/kprobe links (BPF perf links, 5.15+), so the "
				 "variant would stop when kshield exits", bpf_program__name(prog));
			return -EOPNOTSUPP;
		}
	}
	err = resolve_sites(at->obj, at->meta, &at->sites, at->why, at->whylen);
	if (err)
		return err;
	/* shared maps pinned by an older kshield: set aside (see pins.h) */
	if ((err = ks_pins_migrate(at->obj, at->why, at->whylen)) < 0) {
		snprintf(at->why, at->whylen, "%s", ks_errmsg());
		return err;
	}
	at->why[0] = '\0';
	return 0;
}

/* Load the variant's programs into the kernel. A refusal names the
 * program and the verifier's last lines; LSM programs that would never run
 * (bpf not in lsm=) are refused here too. */
static int load_variant(struct attempt *at)
{
	struct bpf_program *prog;
	int err;

	load_failed_prog[0] = '\0';
	load_print_next = libbpf_set_print(load_print);
	err = bpf_object__load(at->obj);
	libbpf_set_print(load_print_next);
	if (err) {
		char tail[400] = "";

		/* Which program failed: the one libbpf named, else the first
		 * of the variant (trampoline refusals log nothing). */
		if (at->log && at->log[0])
			log_tail(at->log, tail, sizeof(tail), 3);
		prog = load_failed_prog[0] ?
		       bpf_object__find_program_by_name(at->obj, load_failed_prog) : NULL;
		if (!prog)
			bpf_object__for_each_program(prog, at->obj)
				if (bpf_program__autoload(prog))
					break;
		snprintf(at->why, at->whylen, "%s: load: %s%s%s%s%s",
			 prog ? bpf_program__name(prog) : at->variant, strerror(-err),
			 err == -EPERM && !tail[0] ? " (program type refused by this kernel)" : "",
			 err == -ESRCH ? " (this kernel has no such hook: " : "",
			 err == -ESRCH && prog ? bpf_program__section_name(prog) : "",
			 err == -ESRCH ? ")" : "");
		snprintf(at->why + strlen(at->why), at->whylen - strlen(at->why), "%s%s",
			 tail[0] ? "; verifier: " : "", tail);
		return err;
	}
	/* Checked after the load: kernels that refuse LSM programs outright
	 * never pay for reading the LSM list. */
	bpf_object__for_each_program(prog, at->obj) {
		char lsms[256];

		if (bpf_program__autoload(prog) && bpf_program__type(prog) == BPF_PROG_TYPE_LSM &&
		    ks_bpf_lsm_inactive(lsms, sizeof(lsms))) {
			snprintf(at->why, at->whylen, "%s: bpf is not an active LSM here "
				 "(active: %s), so LSM programs would never run; boot with "
				 "lsm=...,bpf", bpf_program__name(prog), lsms);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* The shield's runtime configuration (struct ks_shield_cfg), before any
 * program can run. */
static int configure_variant(struct attempt *at, const char *path, int idx, enum ks_mode mode)
{
	struct ks_shield_cfg cfg = {};
	__u32 zero = 0;
	int err;

	cfg.mode = mode;
	cfg.variant_idx = idx;
	cfg.loaded_realtime_ns = realtime_ns();
	snprintf(cfg.variant, sizeof(cfg.variant), "%s", at->variant);
	memcpy(cfg.sha256, at->meta->sha256, sizeof(cfg.sha256));
	if (!realpath(path, cfg.object))
		snprintf(cfg.object, sizeof(cfg.object), "%s", path);
	err = bpf_map__update_elem(bpf_object__find_map_by_name(at->obj, "ks_cfg"),
				   &zero, sizeof(zero), &cfg, sizeof(cfg), 0);
	if (err)
		snprintf(at->why, at->whylen, "can't write ks_cfg: %s", strerror(-err));
	return err;
}

/* Attach every program of the variant but those the syscall dispatcher
 * runs: at each copy of a site target, on the cgroup2 root, or where its
 * section says. The links go to at->links. */
static int attach_variant(struct attempt *at)
{
	struct bpf_program *prog;
	int err = 0;

	bpf_object__for_each_program(prog, at->obj) {
		const char *kfn;
		struct bpf_link *l;

		if (!bpf_program__autoload(prog) || ks_sysd_is_dispatched(prog, at->meta) ||
		    ks_fpd_is_chained(prog, at->meta))
			continue;	/* a dispatcher runs it: no link of its own */
		if (is_site_target(prog, at->meta, &kfn)) {
			struct bpf_map *sm = bpf_object__find_map_by_name(at->obj, "ks_sites");
			struct bpf_link **sl = NULL;
			int sn = 0, j, k;

			/* Every inlined and out-of-line copy of the target
			 * function, one link each (uprobe_sites.h,
			 * kernel_sites.h), in site order. */
			if (kfn)
				err = ks_kprobe_attach_resolved(prog, &at->sites, sm, 0, &sl, &sn);
			else
				err = ks_uprobe_attach_resolved(prog, &at->sites, -1, sm, 0, &sl, &sn);
			if (!err && !sn) {
				ks_uprobe_links_free(sl, sn);
				err = ks_err(-ENOENT, "no probeable sites");
			}
			if (err) {
				snprintf(at->why, at->whylen, "%s: %s", bpf_program__name(prog),
					 ks_errmsg());
				return err;
			}
			/* Unprobeable copies (covered by their heads) have no
			 * link: name each pin after its copy, as its cookie. */
			for (j = 0, k = 0; j < sn && !err; j++, k++) {
				while (k < at->sites.nsites && !at->sites.site[k].probeable)
					k++;
				err = links_add(&at->links, sl[j], k);
				if (err)
					bpf_link__destroy(sl[j]);
			}
			for (; j < sn; j++)
				bpf_link__destroy(sl[j]);
			free(sl);
			if (err) {
				snprintf(at->why, at->whylen, "out of memory");
				return err;
			}
			continue;
		}
		if (is_cgroup_prog(prog)) {
			const char *cg = ks_cgroup2_path();

			if (at->cgfd < 0 && cg)
				at->cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (at->cgfd < 0) {
				snprintf(at->why, at->whylen, "%s: no cgroup2 mount found in /proc/mounts",
					 bpf_program__name(prog));
				return -ENOENT;
			}
			l = bpf_program__attach_cgroup(prog, at->cgfd);
		} else {
			if (bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT &&
			    (err = ks_tracefs_ensure())) {
				snprintf(at->why, at->whylen, "%s: %s", bpf_program__name(prog),
					 ks_errmsg());
				return err;
			}
			l = bpf_program__attach(prog);
		}
		if (!l) {
			err = -errno;
			snprintf(at->why, at->whylen, "%s: attach: %s", bpf_program__name(prog),
				 ks_attach_strerror(err));
			return err;
		}
		if ((err = links_add(&at->links, l, -1))) {
			bpf_link__destroy(l);
			snprintf(at->why, at->whylen, "out of memory");
			return err;
		}
	}
	return 0;
}

/* Pin into @dir: every link (a program's links are contiguous: its only
 * link, or one per copy in increasing site order), every program the
 * dispatcher runs, and the shield's cfg and stats maps. */
static int pin_variant(struct attempt *at, const char *dir)
{
	struct bpf_program *prog;
	char lpath[PATH_MAX];
	int err, i = 0;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(at->why, at->whylen, "can't create %s: %s", dir, strerror(-err));
		return err;
	}
	bpf_object__for_each_program(prog, at->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		if (ks_sysd_is_dispatched(prog, at->meta) || ks_fpd_is_chained(prog, at->meta)) {
			snprintf(lpath, sizeof(lpath), "%s/" KS_PIN_PROG "%s", dir,
				 bpf_program__name(prog));
			err = bpf_program__pin(prog, lpath);
			if (err) {
				snprintf(at->why, at->whylen, "can't pin %s: %s", lpath,
					 strerror(-err));
				return err;
			}
			continue;
		}
		do {
			if (at->links.site[i] < 0)
				snprintf(lpath, sizeof(lpath), "%s/" KS_PIN_LINK "%s", dir,
					 bpf_program__name(prog));
			else
				snprintf(lpath, sizeof(lpath), "%s/" KS_PIN_LINK "%s" KS_PIN_SITE "%d",
					 dir, bpf_program__name(prog), at->links.site[i]);
			err = bpf_link__pin(at->links.l[i++], lpath);
			if (err) {
				snprintf(at->why, at->whylen, "can't pin %s: %s", lpath,
					 strerror(-err));
				return err;
			}
		} while (i < at->links.n && at->links.site[i] > at->links.site[i - 1] &&
			 at->links.site[i - 1] >= 0);
	}
	err = pin_map(at->obj, "ks_cfg", dir);
	if (!err)
		err = pin_map(at->obj, "ks_stats", dir);
	if (err)
		snprintf(at->why, at->whylen, "can't pin maps in %s: %s", dir, strerror(-err));
	return err;
}

/* Open, load, configure, attach and pin variant @v of @path into @dir,
 * then put its syscall programs into the dispatcher. Fills @try with the
 * reason on failure; leaves nothing attached or registered on failure. */
/* One variant of a shield object to try (try_variant()). */
struct variant_req {
	const char *path;		/* the object's file */
	const void *buf;		/* its bytes, read once */
	size_t len;
	const struct ks_meta *meta;
	const char *variant;		/* its name, */
	int idx;			/* and its place in "variants" */
	enum ks_mode mode;
	const char *dir;		/* the staging directory it is pinned in */
};

static int try_variant(const struct variant_req *rq, struct ks_variant_try *try,
		       struct ks_load_result *res)
{
	const struct ks_meta *meta = rq->meta;
	const char *v = rq->variant, *dir = rq->dir;
	enum ks_mode mode = rq->mode;
	struct attempt at = { .meta = meta, .variant = v, .cgfd = -1,
			      .why = try->why, .whylen = sizeof(try->why) };
	char owner[KS_NAME_LEN + 16];
	int err;

	snprintf(try->name, sizeof(try->name), "%s", v);
	err = variant_unneeded(meta, v, try->why, sizeof(try->why));
	if (err) {
		try->unneeded = err == -EOPNOTSUPP;
		return try->err = err;
	}
	if (!(err = open_variant(&at, rq->buf, rq->len)) && !(err = load_variant(&at)) &&
	    !(err = configure_variant(&at, rq->path, rq->idx, mode)) && !(err = attach_variant(&at)) &&
	    !(err = pin_variant(&at, dir))) {
		const struct ks_sysd_add_opts so = {
			.audit = mode == KS_MODE_AUDIT,
			.ids = res->sys_ids, .max = ARRAY_SIZE(res->sys_ids), .n = &res->nsys,
			.why = try->why, .whylen = sizeof(try->why),
		};
		const struct ks_fpd_add_opts fo = {
			.ids = res->fp_ids, .max = ARRAY_SIZE(res->fp_ids), .n = &res->nfp,
			.why = try->why, .whylen = sizeof(try->why),
		};

		/* Last, so that nothing after it can fail: the syscall
		 * programs go into the dispatcher's chains under the name the
		 * shield will have (the shield lock keeps sweeps away until it
		 * has it). */
		snprintf(owner, sizeof(owner), KS_PIN_SHIELDS "/%s", ks_meta_get(meta, "name"));
		err = ks_sysd_add(owner, at.obj, meta, &so);
		/* Its file_permission checks into that hook's chain (or
		 * attached on their own where the kernel refuses it). */
		if (!err && (err = ks_fpd_add(owner, dir, at.obj, meta, &fo))) {
			ks_sysd_drop_ids(res->sys_ids, res->nsys);
			res->nsys = 0;
		}
	}
	if (err && at.obj)
		ks_pins_remove_dir(dir);
	attempt_free(&at);
	return try->err = err;
}

/* Finish an interrupted replacement: a shield directory renamed aside and
 * never removed, or a staging directory never renamed into place. */
static void recover(const char *final, const char *staged, const char *old)
{
	if (access(final, F_OK) && !access(old, F_OK))
		rename(old, final);
	ks_pins_remove_dir(old);
	ks_pins_remove_dir(staged);
}

int ks_shield_read(const char *path, const char *keys_dir, char **buf, size_t *len,
		   char keyid[KS_KEYID_LEN])
{
	char sigpath[PATH_MAX + 8], real[PATH_MAX], *sig = NULL;
	size_t siglen;
	int err;

	keyid[0] = '\0';
	err = ks_read_file(path, buf, len);
	if (err || !keys_dir || !keys_dir[0])
		return err;
	/* FILE.sig beside the entry, else beside what a symlink points to */
	snprintf(sigpath, sizeof(sigpath), "%s.sig", path);
	if (access(sigpath, F_OK) && realpath(path, real))
		snprintf(sigpath, sizeof(sigpath), "%s.sig", real);
	if (!access(sigpath, F_OK) && (err = ks_read_file(sigpath, &sig, &siglen)))
		goto out;
	err = ks_sign_verify(*buf, *len, sig, keys_dir, keyid);
	if (err) {
		char why[256];

		snprintf(why, sizeof(why), "%s", ks_errmsg());
		err = ks_err(err, "%s (keys_dir %s is set: shields must be signed by one of its "
			     "keys; `kshield shield sign`)", why, keys_dir);
	}
out:
	free(sig);
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

int ks_shield_load(const char *path, enum ks_mode mode, struct ks_load_result *res)
{
	return ks_shield_load_signed(path, NULL, mode, res);
}

int ks_shield_load_signed(const char *path, const char *keys_dir, enum ks_mode mode,
			  struct ks_load_result *res)
{
	char keyid[KS_KEYID_LEN], *buf;
	size_t len;
	int err;

	memset(res, 0, sizeof(*res));
	err = ks_shield_read(path, keys_dir, &buf, &len, keyid);
	if (err)
		return err;
	err = ks_shield_load_buf(path, buf, len, mode, res);
	free(buf);
	return err;
}

int ks_shield_load_buf(const char *path, const void *buf, size_t len, enum ks_mode mode,
		       struct ks_load_result *res)
{
	char final[PATH_MAX], staged[PATH_MAX], old[PATH_MAX], *list, *v, *save;
	struct ks_meta meta;
	int64_t t0 = ks_mono_ns();
	int err, idx = 0, lockfd = -1;
	size_t off;

	memset(res, 0, sizeof(*res));
	err = ks_meta_read_buf(path, buf, len, &meta);
	if (err)
		return err;
	snprintf(res->name, sizeof(res->name), "%s", ks_meta_get(&meta, "name"));
	{
		/* No BTF for this kernel: one line, before anything is tried. */
		struct ks_btf_src btf;

		if ((err = ks_btf_find(&btf)))
			goto out_meta;
	}
	err = ks_pins_init();
	if (err)
		goto out_meta;
	lockfd = ks_shields_lock();
	if (lockfd < 0) {
		err = lockfd;
		goto out_meta;
	}
	ks_pin_path(final, sizeof(final), KS_PIN_SHIELDS "/%s", res->name);
	ks_pin_path(staged, sizeof(staged), KS_PIN_SHIELDS "/" KS_PIN_STAGED "%s", res->name);
	ks_pin_path(old, sizeof(old), KS_PIN_SHIELDS "/" KS_PIN_RETIRED "%s", res->name);
	recover(final, staged, old);
	ks_sysd_sweep();	/* registrations whose pins were removed by hand */
	ks_fpd_sweep();

	list = strdup(ks_meta_get(&meta, "variants"));
	err = -ENOENT;
	for (v = strtok_r(list, ", ", &save); v && res->ntried < KS_MAX_VARIANTS;
	     v = strtok_r(NULL, ", ", &save), idx++) {
		const struct variant_req rq = {
			.path = path, .buf = buf, .len = len, .meta = &meta,
			.variant = v, .idx = idx, .mode = mode, .dir = staged,
		};

		err = try_variant(&rq, &res->tried[res->ntried++], res);
		if (!err) {
			snprintf(res->variant, sizeof(res->variant), "%s", v);
			break;
		}
	}
	free(list);
	if (err) {
		char why[900] = "";

		for (int i = 0; i < res->ntried; i++) {
			off = strlen(why);
			snprintf(why + off, sizeof(why) - off, "%s%s: %s", i ? "; " : "",
				 res->tried[i].name, res->tried[i].why);
		}
		err = ks_err(err, "no variant of %s loads on this kernel: %s", res->name, why);
		goto out_meta;
	}

	/* New attached and pinned: swap it in, then let the old one go. */
	if (!access(final, F_OK)) {
		res->replaced = true;
		if (rename(final, old)) {
			err = ks_err(-errno, "can't move old %s aside: %s", final, strerror(errno));
			ks_sysd_drop_ids(res->sys_ids, res->nsys);
			ks_fpd_drop_ids(res->fp_ids, res->nfp);
			ks_pins_remove_dir(staged);
			goto out_meta;
		}
	}
	if (rename(staged, final)) {
		err = ks_err(-errno, "can't move %s into place: %s", staged, strerror(errno));
		ks_sysd_drop_ids(res->sys_ids, res->nsys);
		ks_fpd_drop_ids(res->fp_ids, res->nfp);
		ks_pins_remove_dir(staged);
		if (res->replaced)
			rename(old, final);
		goto out_meta;
	}
	/* The old instance's syscall programs leave the chains before its
	 * links go: the new one's are in already. */
	{
		char owner[KS_NAME_LEN + 16];

		snprintf(owner, sizeof(owner), KS_PIN_SHIELDS "/%s", res->name);
		ks_sysd_drop(owner, res->sys_ids, res->nsys);
		ks_fpd_drop(owner, res->fp_ids, res->nfp);
	}
	ks_pins_remove_dir(old);
	res->load_ms = (ks_mono_ns() - t0) / 1e6;
	/* its hits are read by the names this object gives them; a table
	 * it gets wrong costs names, never the load */
	if (ks_meta_args_learn(&meta))
		ks_err_clear();
out_meta:
	ks_zclose(&lockfd);
	ks_meta_free(&meta);
	return err;
}
