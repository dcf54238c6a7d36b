// SPDX-License-Identifier: MIT
/* argsrc.c - where the library finds a shield's object when a reader
 * first wants its event arguments by name (events.h): the object its
 * loaded instance came from (the path in its pinned cfg), else NAME.bpf.o,
 * else the newest NAME-*.bpf.o (what the fleet agent fetched), in each
 * directory added. An agent learns the objects it loads as it loads them
 * (ks_meta_args_learn in the loader); this is for the other readers
 * (`kshield events`, `hunt`) and the shields loaded before it started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "err.h"
#include "events.h"
#include "loader.h"
#include "meta.h"
#include "pins.h"

#define MAX_DIRS 8

static char dirs[MAX_DIRS][PATH_MAX];
static int ndirs;

int ks_meta_args_learn(const struct ks_meta *meta)
{
	const char *name = ks_meta_get(meta, "name");

	if (!name)
		return -ENOENT;
	return ks_shield_args_learn(name, meta->key, meta->val, meta->n);
}

/* Learn @path when it is @shield's object. */
static bool learn_path(const char *path, const char *shield)
{
	struct ks_meta meta;
	bool ok;

	if (ks_meta_read(path, &meta))
		return false;
	ok = !strcmp(ks_meta_get(&meta, "name"), shield);
	if (ok)
		ks_meta_args_learn(&meta);
	ks_meta_free(&meta);
	return ok;
}

/* The newest file matching @pattern that is @shield's object ("foo-*"
 * matches foo-bar's objects too). */
static bool learn_newest(const char *pattern, const char *shield)
{
	struct timespec t = { 0, 0 };
	struct ks_meta meta, best = { 0 };
	struct stat st;
	glob_t g;
	bool ok = false;

	if (glob(pattern, 0, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (stat(g.gl_pathv[i], &st) || (ok && (st.st_mtim.tv_sec < t.tv_sec ||
		    (st.st_mtim.tv_sec == t.tv_sec && st.st_mtim.tv_nsec <= t.tv_nsec))))
			continue;
		if (ks_meta_read(g.gl_pathv[i], &meta))
			continue;
		if (strcmp(ks_meta_get(&meta, "name"), shield)) {
			ks_meta_free(&meta);
			continue;
		}
		if (ok)
			ks_meta_free(&best);
		best = meta;
		t = st.st_mtim;
		ok = true;
	}
	globfree(&g);
	if (ok) {
		ks_meta_args_learn(&best);
		ks_meta_free(&best);
	}
	return ok;
}

static void resolve(const char *shield)
{
	struct ks_shield_state st;
	char saved[512], path[PATH_MAX + 64];

	/* a failed lookup here is no failure of the caller's */
	snprintf(saved, sizeof(saved), "%s", ks_errmsg());
	if (!strpbrk(shield, "/*?[") && *shield) {
		if (!ks_shield_get(shield, &st) && st.cfg.object[0] &&
		    learn_path(st.cfg.object, shield))
			goto out;
		for (int i = 0; i < ndirs; i++) {
			snprintf(path, sizeof(path), "%s/%s.bpf.o", dirs[i], shield);
			if (learn_path(path, shield))
				goto out;
			snprintf(path, sizeof(path), "%s/%s-*.bpf.o", dirs[i], shield);
			if (learn_newest(path, shield))
				goto out;
		}
	}
out:
	if (*saved)
		ks_err(-EINVAL, "%s", saved);
	else
		ks_err_clear();
}

void ks_shield_args_add_dir(const char *dir)
{
	for (int i = 0; i < ndirs; i++)
		if (!strcmp(dirs[i], dir))
			return;
	if (dir && *dir && ndirs < MAX_DIRS)
		snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s", dir);
	ks_shield_args_set_resolver(resolve);
}
