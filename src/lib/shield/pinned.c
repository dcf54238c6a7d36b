// SPDX-License-Identifier: MIT
/* pinned.c - shields already loaded, through their pins under
 * <bpffs>/shields/<name>/ (loader.h): unload one (and wait until its
 * programs are gone), switch its mode, read its state and hit counts, list
 * them all; and the lock that loads and unloads take.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "err.h"
#include "fpdispatch.h"
#include "loader.h"
#include "pins.h"
#include "sysdispatch.h"

/* Serialise loads and unloads between kshield processes (an agent reloading
 * on SIGHUP while someone runs `kshield shield load`): the staging and
 * swapping of a load assume one writer. Returns an fd to close, or -errno. */
int ks_shields_lock(void)
{
	char dir[PATH_MAX];
	int fd;

	ks_pin_path(dir, sizeof(dir), "%s", KS_PIN_SHIELDS);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ks_err(-errno, "can't open %s: %s", dir, strerror(errno));
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return ks_err(-errno, "can't lock %s: %s", dir, strerror(errno));
	}
	return fd;
}

static int shield_dir(const char *name, char *dir, size_t len)
{
	if (!name[0] || name[0] == '.' || name[0] == '_' || strchr(name, '/') || strlen(name) >= KS_NAME_LEN)
		return ks_err(-EINVAL, "invalid shield name '%s'", name);
	ks_pin_path(dir, len, KS_PIN_SHIELDS "/%s", name);
	if (access(dir, F_OK))
		return ks_err(-ENOENT, "shield %s is not loaded (see 'kshield shield list')", name);
	return 0;
}

/* IDs of the programs behind the link pins in @dir, each once (a program
 * at every copy of a function has hundreds of links). */
static int link_prog_ids(const char *dir, __u32 *ids, int max)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (de = readdir(d)) && n < max) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (!ks_pin_is_link(de->d_name) && !ks_pin_is_prog(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (ks_pin_is_prog(de->d_name)) {
			struct bpf_prog_info pinfo = {};
			__u32 plen = sizeof(pinfo);

			if (!bpf_obj_get_info_by_fd(fd, &pinfo, &plen))
				info.prog_id = pinfo.id;
		} else if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			info.prog_id = 0;
		}
		if (info.prog_id) {
			int i = 0;

			while (i < n && ids[i] != info.prog_id)
				i++;
			if (i == n)
				ids[n++] = info.prog_id;
		}
		close(fd);
	}
	if (d)
		closedir(d);
	return n;
}

/* Unpinning drops the last reference to a link, but the kernel detaches it
 * from a deferred work item. Wait (up to 5 s) until each program is gone,
 * which happens only after its link's release: when unload returns, the
 * shield no longer enforces. */
static void wait_progs_gone(const __u32 *ids, int n)
{
	for (int i = 0; i < n; i++) {
		for (int tries = 0; tries < 5000; tries++) {
			int fd = bpf_prog_get_fd_by_id(ids[i]);

			if (fd < 0)
				break;
			close(fd);
			usleep(1000);
		}
	}
}

int ks_shield_unload(const char *name)
{
	char dir[PATH_MAX];
	__u32 ids[64];
	int lockfd, n, err = shield_dir(name, dir, sizeof(dir));

	if (err)
		return err;
	lockfd = ks_shields_lock();
	if (lockfd < 0)
		return lockfd;
	n = link_prog_ids(dir, ids, 64);
	{
		char owner[KS_NAME_LEN + 16];

		snprintf(owner, sizeof(owner), KS_PIN_SHIELDS "/%s", name);
		err = ks_sysd_drop(owner, NULL, 0);
		if (!err)
			err = ks_fpd_drop(owner, NULL, 0);
	}
	if (err) {
		close(lockfd);
		return err;
	}
	ks_sysd_sweep();
	ks_fpd_sweep();
	err = ks_pins_remove_dir(dir);
	close(lockfd);
	if (err)
		return ks_err(err, "can't remove %s: %s", dir, strerror(-err));
	wait_progs_gone(ids, n);
	return 0;
}

static int open_pinned(const char *dir, const char *what, bool rdonly)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, what);
	fd = rdonly ? ks_pin_open_ro(path) : bpf_obj_get(path);
	if (fd < 0)
		return ks_err(-errno, "can't open pinned %s: %s", path, strerror(errno));
	return fd;
}

int ks_shield_set_mode(const char *name, enum ks_mode mode)
{
	struct ks_shield_cfg cfg;
	char dir[PATH_MAX], owner[KS_NAME_LEN + 16];
	__u32 zero = 0;
	int fd, err = shield_dir(name, dir, sizeof(dir));

	if (err)
		return err;
	fd = open_pinned(dir, KS_PIN_CFG, false);
	if (fd < 0)
		return fd;
	/* Exit hooks back in before the entry hooks start killing; out only
	 * once they no longer do (ks_sysd_set_audit). */
	snprintf(owner, sizeof(owner), KS_PIN_SHIELDS "/%s", name);
	if (mode != KS_MODE_AUDIT && (err = ks_sysd_set_audit(owner, false))) {
		close(fd);
		return err;
	}
	err = bpf_map_lookup_elem(fd, &zero, &cfg);
	if (!err) {
		cfg.mode = mode;
		err = bpf_map_update_elem(fd, &zero, &cfg, 0);
	}
	if (err)
		err = ks_err(-errno, "can't update mode of %s: %s", name, strerror(errno));
	close(fd);
	if (!err && mode == KS_MODE_AUDIT)
		err = ks_sysd_set_audit(owner, true);
	return err;
}

int ks_shield_get(const char *name, struct ks_shield_state *st)
{
	int ncpu = libbpf_num_possible_cpus();
	char dir[PATH_MAX];
	__u64 vals[ncpu > 0 ? ncpu : 1];
	struct dirent *de;
	__u32 zero = 0;
	DIR *d;
	int fd, err = shield_dir(name, dir, sizeof(dir));

	memset(st, 0, sizeof(*st));
	if (err)
		return err;
	snprintf(st->name, sizeof(st->name), "%s", name);
	fd = open_pinned(dir, KS_PIN_CFG, true);
	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &zero, &st->cfg);
	close(fd);
	if (err)
		return ks_err(-errno, "can't read %s/cfg: %s", dir, strerror(errno));
	fd = open_pinned(dir, KS_PIN_STATS, true);
	if (fd < 0)
		return fd;
	for (__u32 k = 0; k < KS_VERDICT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			st->hits[k] += vals[c];
	}
	close(fd);
	d = opendir(dir);
	while (d && (de = readdir(d)))
		if (ks_pin_is_link(de->d_name))
			st->nlinks++;
		else if (ks_pin_is_prog(de->d_name))
			st->nsys++;
	if (d)
		closedir(d);
	return 0;
}

int ks_shield_list(struct ks_shield_state **out, int *n)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0, cap = 0;

	*out = NULL;
	*n = 0;
	ks_pin_path(dir, sizeof(dir), "%s", KS_PIN_SHIELDS);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : ks_err(-errno, "can't list %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_name[0] == '_')
			continue;
		if (*n == cap) {
			struct ks_shield_state *p;

			cap = cap ? cap * 2 : 8;
			p = realloc(*out, cap * sizeof(**out));
			if (!p) {
				err = ks_err(-ENOMEM, "out of memory");
				break;
			}
			*out = p;
		}
		if (!ks_shield_get(de->d_name, &(*out)[*n]))
			(*n)++;
	}
	closedir(d);
	return err;
}
