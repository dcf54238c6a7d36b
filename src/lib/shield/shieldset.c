// SPDX-License-Identifier: MIT
/* shieldset.c - reconcile a shields directory with the pinned shields (see
 * shieldset.h), validate it without loading (--check), and verify that what
 * the agent loaded is still pinned and attached (tamper detection on kernels
 * where the guard cannot refuse tampering).
 *
 * All loading goes through ks_shield_load(), which is all-or-nothing and
 * new-before-old, so a failed or interrupted sync never leaves a shield
 * unenforced that was enforcing before.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "array.h"
#include "err.h"
#include "hex.h"
#include "kernel_sites.h"
#include "loader.h"
#include "meta.h"
#include "pins.h"
#include "proven.h"
#include "shieldset.h"
#include "weaken.h"

const char *ks_sync_action_str(enum ks_sync_action a)
{
	static const char *s[] = {
		[KS_SYNC_ADOPTED] = "adopted", [KS_SYNC_MODE] = "mode",
		[KS_SYNC_LOADED] = "loaded", [KS_SYNC_REPLACED] = "replaced",
		[KS_SYNC_UNLOADED] = "unloaded", [KS_SYNC_REPAIRED] = "repaired",
		[KS_SYNC_FAILED] = "failed", [KS_SYNC_OK] = "ok",
		[KS_SYNC_REFUSED] = "refused",
	};
	return a < ARRAY_SIZE(s) ? s[a] : "?";
}

static struct ks_sync_item *add_item(struct ks_sync_result *res, const char *name,
				     const char *object, enum ks_sync_action a)
{
	struct ks_sync_item *it, *p = realloc(res->items, (res->n + 1) * sizeof(*it));

	if (!p)
		return NULL;
	res->items = p;
	it = &p[res->n++];
	memset(it, 0, sizeof(*it));
	snprintf(it->name, sizeof(it->name), "%s", name ? name : "");
	snprintf(it->object, sizeof(it->object), "%s", object ? object : "");
	it->action = a;
	return it;
}

static void fail_item(struct ks_sync_result *res, struct ks_sync_item *it, int err)
{
	if (!it)
		return;
	it->action = KS_SYNC_FAILED;
	it->err = err;
	snprintf(it->why, sizeof(it->why), "%s", ks_errmsg()[0] ? ks_errmsg() : strerror(-err));
	res->nfailed++;
}

static void warn(struct ks_sync_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(struct ks_sync_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->nwarn == (int)ARRAY_SIZE(res->warn))
		return;
	va_start(ap, fmt);
	vsnprintf(res->warn[res->nwarn++], sizeof(res->warn[0]), fmt, ap);
	va_end(ap);
}

void ks_sync_result_free(struct ks_sync_result *res)
{
	free(res->items);
	memset(res, 0, sizeof(*res));
}

/* Objects of the directory: sorted "*.bpf.o" paths. */
struct entries {
	int n;
	char (*path)[PATH_MAX];
};

static int cmp_path(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int scan_dir(const char *dir, struct entries *e)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	memset(e, 0, sizeof(*e));
	if (!d)
		return ks_err(-errno, "can't read shields directory %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		void *p;

		if (de->d_name[0] == '.' || len < 7 || strcmp(de->d_name + len - 6, ".bpf.o"))
			continue;
		p = realloc(e->path, (e->n + 1) * sizeof(*e->path));
		if (!p) {
			closedir(d);
			return ks_err(-ENOMEM, "out of memory");
		}
		e->path = p;
		snprintf(e->path[e->n++], PATH_MAX, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	qsort(e->path, e->n, sizeof(*e->path), cmp_path);
	return 0;
}

/* <bpffs>/agent/owned, created when @create. Returns an fd or -errno. */
static int owned_map(bool create)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int fd, err;

	ks_pin_path(path, sizeof(path), "%s", "agent/owned");
	fd = bpf_obj_get(path);
	if (fd >= 0 || !create)
		return fd >= 0 ? fd : -errno;
	ks_pin_path(dir, sizeof(dir), "%s", "agent");
	if (mkdir(dir, 0700) && errno != EEXIST)
		return ks_err(-errno, "can't create %s: %s", dir, strerror(errno));
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "ks_owned", KS_NAME_LEN,
			    sizeof(struct ks_owned), 1024, NULL);
	if (fd < 0)
		return ks_err(-errno, "can't create the owned-shields map: %s", strerror(errno));
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		close(fd);
		return ks_err(err, "can't pin %s: %s", path, strerror(-err));
	}
	return fd;
}

static void owned_put(int fd, const char *name, const char *entry)
{
	char key[KS_NAME_LEN] = {};
	struct ks_owned o = {};
	struct ks_shield_state st;

	snprintf(key, sizeof(key), "%s", name);
	snprintf(o.entry, sizeof(o.entry), "%s", entry);
	if (!ks_shield_get(name, &st))
		o.nlinks = st.nlinks;
	bpf_map_update_elem(fd, key, &o, BPF_ANY);
}

/* The shield's pinned links: how many, and how many of them are defunct
 * (a cgroup link detached with BPF_LINK_DETACH keeps its pin but no longer
 * belongs to any cgroup). */
static void count_links(const char *name, int *total, int *dead)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;

	*total = *dead = 0;
	ks_pin_path(dir, sizeof(dir), KS_PIN_SHIELDS "/%s", name);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (!ks_pin_is_link(de->d_name))
			continue;
		(*total)++;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			/* EPERM: the guard keeps it from us, so it is there */
			*dead += errno != EPERM;
			continue;
		}
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_CGROUP && !info.cgroup.cgroup_id)
			(*dead)++;
		close(fd);
	}
	if (d)
		closedir(d);
}

/* May @kind ("audit", "unload") of shield @name happen? Refused (and the
 * item marked so) while the guard is on and no signed token allows it. */
/* A warning for each shield the config names that none of the @nnames
 * objects in the directory (@names) provides. */
static void warn_objectless(const struct ks_config *cfg, struct ks_sync_result *res,
			    char (*names)[KS_NAME_LEN], int nnames)
{
	for (int i = 0; names && i < cfg->nshields; i++) {
		bool found = false;

		for (int j = 0; j < nnames; j++)
			found |= !strcmp(names[j], cfg->shields[i].name);
		if (!found)
			warn(res, "%s:%d: shield %s has no object in %s", cfg->path,
			     cfg->shields[i].line, cfg->shields[i].name, cfg->shields_dir);
	}
}

static bool may_weaken(const struct ks_config *cfg, struct ks_sync_result *res,
		       struct ks_sync_item *it, const char *kind, const char *name)
{
	char action[KS_NAME_LEN + 16];

	snprintf(action, sizeof(action), "%s:%s", kind, name);
	ks_err(0, "%s", "");
	if (!ks_weaken_check(cfg, action))
		return true;
	if (it) {
		it->action = KS_SYNC_REFUSED;
		it->err = -EPERM;
		snprintf(it->why, sizeof(it->why), "%s", ks_errmsg());
		res->nrefused++;
	}
	return false;
}

static bool under_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return !strncmp(path, dir, n) && path[n] == '/';
}

/* Load @path from @buf (bytes already read and verified), or, with @buf
 * NULL, read and verify it now against @keys_dir. */
static int load_one(struct ks_sync_result *res, struct ks_sync_item *it, const char *path,
		    const void *buf, size_t len, const char *keys_dir, enum ks_mode mode,
		    enum ks_sync_action ok)
{
	struct ks_load_result lr;
	int err;

	ks_err(0, "%s", "");
	err = buf ? ks_shield_load_buf(path, buf, len, mode, &lr) :
		    ks_shield_load_signed(path, keys_dir, mode, &lr);
	if (err) {
		fail_item(res, it, err);
		return err;
	}
	it->action = ok;
	snprintf(it->variant, sizeof(it->variant), "%s", lr.variant);
	return 0;
}

/* Gated (cfg->gated): may @variant of the object @sha enforce on this
 * kernel? Its proven summary is NAME.proven.json beside @path (verified
 * against keys_dir when set); none, or one that does not verify, leaves
 * the kernel unproven. Refused kernels never enforce; unproven ones only
 * with shield.<name>.promote = on. Says why in @it. */
static bool gate_allows(const struct ks_config *cfg, const char *path, const char *name,
			const unsigned char sha[32], const char *variant, struct ks_sync_item *it)
{
	char ppath[4200], hex[65], why[512] = "";
	json_object *proven = NULL;
	enum ks_gate g;

	ks_hex(sha, 32, hex, sizeof(hex));
	ks_proven_path(path, ppath, sizeof(ppath));
	if (!access(ppath, F_OK) && ks_proven_read(ppath, cfg->keys_dir, &proven, NULL, NULL))
		snprintf(why, sizeof(why), " (%s)", ks_errmsg());
	g = ks_proven_judge_here(proven, hex, variant, it->why, sizeof(it->why));
	json_object_put(proven);
	if (why[0] && strlen(it->why) + strlen(why) < sizeof(it->why))
		strcat(it->why, why);
	snprintf(it->gate, sizeof(it->gate), "%s", ks_gate_name(g));
	it->promoted = g == KS_GATE_UNPROVEN && ks_config_promoted(cfg, name);
	if (g == KS_GATE_PROVEN)
		it->why[0] = '\0';
	return g == KS_GATE_PROVEN || it->promoted;
}

/* The mode a new object loads in. Gated, the variant is not known before
 * the load: a kernel where this object was proven (some variant passed on
 * this build, none failed) loads it enforcing at once, so a replacement
 * leaves no gap; any other loads in audit and never enforces unjudged. */
static enum ks_mode first_mode(const struct ks_config *cfg, const char *path, const char *name,
			       const unsigned char sha[32], bool gated, enum ks_mode mode,
			       struct ks_sync_item *it)
{
	if (!gated)
		return mode;
	it->mode = gate_allows(cfg, path, name, sha, KS_PROVEN_ANY_VARIANT, it) ? mode
										 : KS_MODE_AUDIT;
	return it->mode;
}

/* One sync's working set: the directory's entries, the names they
 * provide so far, and the entries that exist but could not be read. */
struct sync_run {
	const struct ks_config *cfg;
	struct ks_sync_result *res;
	struct entries e;
	char (*names)[KS_NAME_LEN];
	int nnames;
	char *failed_paths;
	int ofd;		/* the owned map */
};

/* The shield @name is loaded already (@st): adopt the object, change its
 * mode, or replace it, as @meta and the config say. */
static void sync_loaded(struct sync_run *r, struct ks_sync_item *it, const char *path,
			const char *name, const struct ks_shield_state *st,
			const struct ks_meta *meta, const char *buf, size_t len,
			enum ks_mode mode, bool *gated)
{
	const struct ks_config *cfg = r->cfg;
	bool same = !memcmp(st->cfg.sha256, meta->sha256, sizeof(meta->sha256));
	int err;

	snprintf(it->variant, sizeof(it->variant), "%s", st->cfg.variant);
	if (*gated && same && !gate_allows(cfg, path, name, meta->sha256, st->cfg.variant, it)) {
		mode = KS_MODE_AUDIT;
		it->mode = mode;
		*gated = false;	/* judged: the same object, the same variant */
	} else if (*gated && same) {
		*gated = false;	/* proven (or promoted) here: as configured */
	}
	if (st->cfg.mode == KS_MODE_ENFORCE && mode == KS_MODE_AUDIT &&
	    !may_weaken(cfg, r->res, it, "audit", name)) {
		it->mode = st->cfg.mode;	/* stays enforcing, as it was */
	} else if (same) {
		it->action = KS_SYNC_ADOPTED;
		if (st->cfg.mode != mode) {
			err = ks_shield_set_mode(name, mode);
			if (err)
				fail_item(r->res, it, err);
			else
				it->action = KS_SYNC_MODE;
		}
	} else {
		enum ks_mode first = first_mode(cfg, path, name, meta->sha256, *gated, mode, it);

		/* An unproven replacement of an enforcing object is a
		 * weakening: with the guard on, it needs a token. */
		if (st->cfg.mode == KS_MODE_ENFORCE && first == KS_MODE_AUDIT &&
		    !may_weaken(cfg, r->res, it, "audit", name))
			it->mode = st->cfg.mode;	/* the old object stays, enforcing */
		else
			load_one(r->res, it, path, buf, len, NULL, first, KS_SYNC_REPLACED);
	}
}

/* Entry @i of the directory: read and verify it once, then load, adopt or
 * replace its shield. 0, or -ENOMEM (the item could not be recorded). */
static int sync_entry(struct sync_run *r, int i)
{
	const struct ks_config *cfg = r->cfg;
	struct ks_sync_result *res = r->res;
	const char *path = r->e.path[i];
	struct ks_shield_state st;
	struct ks_sync_item *it;
	struct ks_meta meta;
	char keyid[KS_KEYID_LEN], *buf = NULL;
	const char *name;
	enum ks_mode mode;
	bool dup = false, gated;
	size_t len = 0;
	int err;

	ks_err(0, "%s", "");
	it = add_item(res, NULL, path, KS_SYNC_FAILED);
	if (!it)
		return ks_err(-ENOMEM, "out of memory");
	/* Read once: the bytes verified are the bytes loaded. */
	err = ks_shield_read(path, cfg->keys_dir, &buf, &len, keyid);
	if (!err)
		err = ks_meta_read_buf(path, buf, len, &meta);
	if (err) {
		free(buf);
		/* A dangling link is a removed object; anything else
		 * is a broken one whose previous version stays. */
		if (err != -ENOENT)
			r->failed_paths[i] = 1;
		fail_item(res, it, err);
		return 0;
	}
	name = ks_meta_get(&meta, "name");
	snprintf(it->name, sizeof(it->name), "%s", name);
	for (int j = 0; j < r->nnames; j++)
		dup |= !strcmp(r->names[j], name);
	if (dup) {
		ks_err(-EEXIST, "%s: shield %s is already provided by another object "
		       "in %s", path, name, cfg->shields_dir);
		fail_item(res, it, -EEXIST);
		ks_meta_free(&meta);
		free(buf);
		return 0;
	}
	snprintf(r->names[r->nnames++], KS_NAME_LEN, "%s", name);
	mode = ks_config_mode(cfg, name);
	it->mode = mode;
	gated = cfg->gated && mode == KS_MODE_ENFORCE;

	if (!ks_shield_get(name, &st))
		sync_loaded(r, it, path, name, &st, &meta, buf, len, mode, &gated);
	else
		load_one(res, it, path, buf, len, NULL,
			 first_mode(cfg, path, name, meta.sha256, gated, mode, it), KS_SYNC_LOADED);
	/* Gated, new object: it enforces only when the variant that
	 * loaded is proven (or promoted) here. */
	if (gated && (it->action == KS_SYNC_LOADED || it->action == KS_SYNC_REPLACED)) {
		enum ks_mode now = it->mode;

		if (!gate_allows(cfg, path, name, meta.sha256, it->variant, it))
			it->mode = KS_MODE_AUDIT;
		else
			it->mode = KS_MODE_ENFORCE;
		if (it->mode != now && (err = ks_shield_set_mode(name, it->mode)))
			fail_item(res, it, err);
	}
	free(buf);
	/* Owned from now on, even when a replacement failed: its old
	 * version came from this directory too. */
	if (it->action != KS_SYNC_FAILED || !ks_shield_get(name, &st))
		owned_put(r->ofd, name, path);
	ks_meta_free(&meta);
	return 0;
}

/* Unload the shields this directory provided whose object is gone. */
static void prune_gone(struct sync_run *r)
{
	char key[KS_NAME_LEN], next[KS_NAME_LEN];
	int err;
	void *k;

	for (k = NULL; !bpf_map_get_next_key(r->ofd, k, next); k = key) {
		struct ks_owned o;
		bool present = false;
		int j;

		memcpy(key, next, sizeof(key));
		if (bpf_map_lookup_elem(r->ofd, key, &o))
			continue;
		for (j = 0; j < r->nnames; j++)
			present |= !strcmp(r->names[j], key);
		for (j = 0; j < r->e.n; j++)
			present |= r->failed_paths[j] && !strcmp(r->e.path[j], o.entry);
		if (present)
			continue;
		/* Only what this directory provided: an agent pointed at
		 * another directory leaves the first one's shields alone. */
		if (!under_dir(o.entry, r->cfg->shields_dir))
			continue;
		struct ks_sync_item *it = add_item(r->res, key, o.entry, KS_SYNC_UNLOADED);
		struct ks_shield_state st;

		if (!ks_shield_get(key, &st) && !may_weaken(r->cfg, r->res, it, "unload", key))
			continue;	/* still owned, still loaded */
		if (!ks_shield_get(key, &st)) {
			ks_err(0, "%s", "");
			err = ks_shield_unload(key);
			if (err) {
				fail_item(r->res, it, err);
				continue;
			}
		}
		bpf_map_delete_elem(r->ofd, key);
		k = NULL;	/* the deleted key can't be iterated from */
	}
}

int ks_shieldset_sync(const struct ks_config *cfg, struct ks_sync_result *res)
{
	struct sync_run r = { .cfg = cfg, .res = res, .ofd = -1 };
	int err;

	memset(res, 0, sizeof(*res));
	err = ks_pins_init();
	if (err)
		return err;
	err = scan_dir(cfg->shields_dir, &r.e);
	if (err)
		return err;
	r.ofd = owned_map(true);
	if (r.ofd < 0) {
		free(r.e.path);
		return r.ofd;
	}
	r.names = calloc(r.e.n + 1, sizeof(*r.names));
	r.failed_paths = calloc(r.e.n + 1, 1);
	if (!r.names || !r.failed_paths) {
		err = ks_err(-ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < r.e.n; i++)
		if ((err = sync_entry(&r, i)))
			goto out;
	prune_gone(&r);
	warn_objectless(cfg, res, r.names, r.nnames);
	err = res->nfailed ? -EAGAIN : 0;
out:
	close(r.ofd);
	free(r.names);
	free(r.failed_paths);
	free(r.e.path);
	return err;
}

/* Does every variant the object names have programs ("<v>__*")? */
static int check_variants(const char *path, const struct ks_meta *meta)
{
	char *list = strdup(ks_meta_get(meta, "variants")), *v, *save;
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	int err = 0, nv = 0;

	if (!obj) {
		err = -errno;
		free(list);
		return ks_err(err, "%s: malformed BPF object: %s", path, strerror(-err));
	}
	for (v = strtok_r(list, ", ", &save); v && !err; v = strtok_r(NULL, ", ", &save)) {
		struct bpf_program *prog;
		size_t n = strlen(v);
		int np = 0;

		nv++;
		bpf_object__for_each_program(prog, obj) {
			const char *pn = bpf_program__name(prog);

			np += !strncmp(pn, v, n) && pn[n] == '_' && pn[n + 1] == '_';
		}
		if (!np)
			err = ks_err(-ENOENT, "%s: variant %s has no programs named %s__*", path, v, v);
	}
	if (!err && !nv)
		err = ks_err(-ENOENT, "%s: empty variants list", path);
	bpf_object__close(obj);
	free(list);
	return err;
}

/* A shield on kernel:FUNCTION needs this kernel's sites (a manifest in
 * sites_dir, signed when keys_dir is set, or the local vmlinux): say now,
 * as a warning, when its kprobe variants will not load (others may). */
static void check_kernel_sites(struct ks_sync_result *res, const char *name,
			       const struct ks_meta *meta)
{
	const char *t = ks_meta_get(meta, "target");
	struct ks_sites s;

	if (!t || strncmp(t, "kernel:", 7))
		return;
	if (ks_kernel_sites(t + 7, NULL, &s)) {
		warn(res, "shield %s: no kprobe variant will load: %s", name, ks_errmsg());
		return;
	}
	ks_sites_free(&s);
}

int ks_shieldset_check(const struct ks_config *cfg, struct ks_sync_result *res)
{
	char (*names)[KS_NAME_LEN];
	struct entries e;
	int err, nnames = 0;

	memset(res, 0, sizeof(*res));
	err = scan_dir(cfg->shields_dir, &e);
	if (err)
		return err;
	names = calloc(e.n + 1, sizeof(*names));
	for (int i = 0; names && i < e.n; i++) {
		struct ks_sync_item *it = add_item(res, NULL, e.path[i], KS_SYNC_OK);
		struct ks_meta meta;
		bool dup = false;

		if (!it)
			break;
		ks_err(0, "%s", "");
		if (cfg->keys_dir[0]) {
			char keyid[KS_KEYID_LEN], *buf;
			size_t len;

			err = ks_shield_read(e.path[i], cfg->keys_dir, &buf, &len, keyid);
			if (err) {
				fail_item(res, it, err);
				continue;
			}
			free(buf);
		}
		err = ks_meta_read(e.path[i], &meta);
		if (err) {
			fail_item(res, it, err);
			continue;
		}
		snprintf(it->name, sizeof(it->name), "%s", ks_meta_get(&meta, "name"));
		it->mode = ks_config_mode(cfg, it->name);
		for (int j = 0; j < nnames; j++)
			dup |= !strcmp(names[j], it->name);
		if (dup)
			err = ks_err(-EEXIST, "%s: shield %s is already provided by another "
				     "object in %s", e.path[i], it->name, cfg->shields_dir);
		else
			err = check_variants(e.path[i], &meta);
		if (err)
			fail_item(res, it, err);
		else
			snprintf(names[nnames++], KS_NAME_LEN, "%s", it->name);
		if (!err)
			check_kernel_sites(res, it->name, &meta);
		ks_meta_free(&meta);
	}
	warn_objectless(cfg, res, names, nnames);
	free(names);
	free(e.path);
	return res->nfailed ? -EAGAIN : 0;
}

int ks_shieldset_verify(const struct ks_config *cfg, struct ks_sync_result *res)
{
	char key[KS_NAME_LEN], next[KS_NAME_LEN];
	int ofd, nrep = 0;
	void *k;

	memset(res, 0, sizeof(*res));
	ofd = owned_map(false);
	if (ofd < 0) {
		/* The record itself is gone: the whole tree was removed.
		 * Rebuild it; everything it loads was missing. */
		int err = ks_shieldset_sync(cfg, res);

		for (int i = 0; i < res->n; i++)
			if (res->items[i].action == KS_SYNC_LOADED) {
				res->items[i].action = KS_SYNC_REPAIRED;
				snprintf(res->items[i].why, sizeof(res->items[i].why),
					 "shield pins and the owned-shields record removed");
				nrep++;
			}
		return err && err != -EAGAIN ? err : nrep;
	}
	for (k = NULL; !bpf_map_get_next_key(ofd, k, next); k = key) {
		struct ks_shield_state st;
		struct ks_sync_item *it;
		struct ks_owned o;
		int total, dead, err;

		memcpy(key, next, sizeof(key));
		if (bpf_map_lookup_elem(ofd, key, &o))
			continue;
		err = ks_shield_get(key, &st);
		count_links(key, &total, &dead);
		if (!err && total >= (int)o.nlinks && !dead)
			continue;
		it = add_item(res, key, o.entry, KS_SYNC_REPAIRED);
		if (!it)
			break;
		if (err)
			snprintf(it->why, sizeof(it->why), "shield pins removed");
		else
			snprintf(it->why, sizeof(it->why), "%d of %u links missing, %d detached",
				 total < (int)o.nlinks ? (int)o.nlinks - total : 0, o.nlinks, dead);
		it->mode = err ? ks_config_mode(cfg, key) : (enum ks_mode)st.cfg.mode;
		char why[sizeof(it->why)];

		memcpy(why, it->why, sizeof(why));
		if (!load_one(res, it, o.entry, NULL, 0, cfg->keys_dir, it->mode, KS_SYNC_REPAIRED)) {
			memcpy(it->why, why, sizeof(why));
			owned_put(ofd, key, o.entry);
			nrep++;
		}
	}
	close(ofd);
	return nrep;
}

struct json_object *ks_sync_json(const struct ks_sync_result *res)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

	for (int i = 0; i < res->n; i++) {
		const struct ks_sync_item *it = &res->items[i];
		struct json_object *s = json_object_new_object();

		json_object_object_add(s, "name", json_object_new_string(it->name));
		json_object_object_add(s, "object", json_object_new_string(it->object));
		json_object_object_add(s, "action",
				       json_object_new_string(ks_sync_action_str(it->action)));
		if (it->name[0] && it->action != KS_SYNC_UNLOADED)
			json_object_object_add(s, "mode", json_object_new_string(ks_mode_str(it->mode)));
		if (it->variant[0])
			json_object_object_add(s, "variant", json_object_new_string(it->variant));
		if (it->gate[0])
			json_object_object_add(s, "gate", json_object_new_string(it->gate));
		if (it->promoted)
			json_object_object_add(s, "promoted", json_object_new_boolean(true));
		if (it->why[0])
			json_object_object_add(s, it->action == KS_SYNC_FAILED ? "error" : "why",
					       json_object_new_string(it->why));
		json_object_array_add(arr, s);
	}
	json_object_object_add(o, "shields", arr);
	json_object_object_add(o, "failed", json_object_new_int(res->nfailed));
	arr = json_object_new_array();
	for (int i = 0; i < res->nwarn; i++)
		json_object_array_add(arr, json_object_new_string(res->warn[i]));
	json_object_object_add(o, "warnings", arr);
	return o;
}
