// SPDX-License-Identifier: MIT
/* guard.c - the user side of the tamper guard: load its BPF object (LSM
 * variant first, the recording tracepoint variant where BPF LSM is missing),
 * pin it under <bpffs>/guard, register the agent, and keep the set of
 * protected link and map ids current. The `guard` noun is in src/cmd/guard.c.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "btf_find.h"
#include "err.h"
#include "file.h"
#include "guard.h"
#include "sysinfo.h"
#include "fit.h"
#include <kshield/shield.h>
#include "pins.h"
#include "sign.h"
#include "guard.skel.h"

const char *ks_tamper_op_str(__u32 op)
{
	static const char *s[] = {
		[KS_TAMPER_DETACH] = "detach", [KS_TAMPER_MAP] = "map_write",
		[KS_TAMPER_UNLINK] = "unlink", [KS_TAMPER_UMOUNT] = "umount",
		[KS_TAMPER_SIGNAL] = "signal", [KS_TAMPER_PTRACE] = "ptrace",
		[KS_TAMPER_REPAIRED] = "repaired", [KS_TAMPER_OPEN] = "open_write",
		[KS_TAMPER_CGROUP] = "cgroup", [KS_TAMPER_CONFIG] = "config",
		[KS_TAMPER_OOM] = "oom_adj",
	};
	return op < KS_TAMPER_OP_MAX && s[op] ? s[op] : "unknown";
}

/* Kernel dev_t encoding (MKDEV) of a user-space st_dev. */
static __u32 kdev(dev_t d)
{
	return (major(d) << 20) | minor(d);
}

static int guard_pin(char *buf, size_t len, const char *what)
{
	return ks_pin_path(buf, len, "%s/%s", KS_PIN_GUARD, what);
}

static int open_cfg(bool rdonly)
{
	char path[PATH_MAX];
	int fd;

	guard_pin(path, sizeof(path), KS_PIN_CFG);
	fd = rdonly ? ks_pin_open_ro(path) : bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* Fill the parts of the config that say who and what is protected. */
static int describe(struct ks_guard_cfg *c)
{
	struct stat st;

	if (stat(ks_bpffs_root, &st))
		return ks_err(-errno, "can't stat %s: %s", ks_bpffs_root, strerror(errno));
	c->root_ino = st.st_ino;
	c->root_dev = kdev(st.st_dev);
	if (stat("/proc/self/exe", &st))
		return ks_err(-errno, "can't stat /proc/self/exe: %s", strerror(errno));
	c->exe_ino = st.st_ino;
	c->exe_dev = kdev(st.st_dev);
	return 0;
}

static int write_cfg(int fd, const struct ks_guard_cfg *c)
{
	__u32 zero = 0;

	if (!bpf_map_update_elem(fd, &zero, c, 0))
		return 0;
	if (errno == EPERM)
		return ks_err(-EPERM, "the guard refused: a kshield agent is running and holds "
			      "it, or this is not the kshield binary it trusts (see docs/guard.md)");
	return ks_err(-errno, "can't write the guard's config: %s", strerror(errno));
}

static bool in_variant(const char *prog, const char *v)
{
	size_t n = strlen(v);

	return (!strncmp(prog, v, n) && prog[n] == '_' && prog[n + 1] == '_') ||
	       !strncmp(prog, "common__", 8);
}

/* Load, configure, attach and pin variant @v. Nothing stays on failure. */
/* The token keys, frozen: an array of KS_GUARD_KEYS_MAX raw public keys
 * that no process (and no BPF program: BPF_F_RDONLY_PROG) can change once
 * made. Returns its fd or -errno (why in @why). */
static int make_keys(const unsigned char (*pks)[KS_PUBKEY_LEN], int n, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_RDONLY_PROG);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ks_guard_keys", sizeof(__u32), KS_PUBKEY_LEN,
				KS_GUARD_KEYS_MAX, &o);

	if (fd < 0) {
		snprintf(why, whylen, "keys map: %s", strerror(errno));
		return -errno;
	}
	for (__u32 i = 0; i < (__u32)n; i++)
		if (bpf_map_update_elem(fd, &i, pks[i], 0))
			goto fail;
	if (!bpf_map_freeze(fd))
		return fd;
fail:
	snprintf(why, whylen, "keys map: %s", strerror(errno));
	close(fd);
	return -errno;
}

static int load_variant(const char *v, bool enable, const unsigned char (*pks)[KS_PUBKEY_LEN],
			int npks, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct ks_kernel_offers offers;
	char maps[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 64];
	struct bpf_link *links[16];
	struct ks_guard_cfg c = {};
	struct bpf_program *prog;
	struct guard_bpf *skel;
	int err, n = 0, i, keys = -1;
	__u32 zero = 0;

	ks_pin_path(maps, sizeof(maps), "%s", KS_PIN_MAPS);
	ks_pin_path(dir, sizeof(dir), "%s", KS_PIN_GUARD);
	opts.pin_root_path = maps;
	if ((err = ks_btf_open_opts(&opts))) {
		snprintf(why, whylen, "%s", ks_errmsg());
		return err;
	}
	skel = guard_bpf__open_opts(&opts);
	if (!skel) {
		snprintf(why, whylen, "open: %s", strerror(errno));
		return -errno;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, in_variant(bpf_program__name(prog), v));
	/* raw tracepoint twins where tracepoint links cannot be pinned */
	ks_fit_select(skel->obj);
	/* What the kernel lacks, named before libbpf says only ESRCH: lsm
	 * and fmod_ret attach by the kernel's own BTF, never an external one. */
	ks_kernel_offers(skel->obj, &offers);
	if ((err = ks_fit_variant_needs(skel->obj, &offers, why, whylen)))
		goto out;
	if ((err = ks_fit_prepare(skel->obj))) {
		snprintf(why, whylen, "can't fit the guard to this kernel: %s", strerror(-err));
		goto out;
	}
	if ((err = ks_pins_migrate(skel->obj, why, whylen)) < 0) {
		snprintf(why, whylen, "%s", ks_errmsg());
		goto out;
	}
	why[0] = '\0';
	err = guard_bpf__load(skel);
	if (err) {
		snprintf(why, whylen, "load: %s%s", strerror(-err),
			 err == -EPERM ? " (no BPF LSM / trampolines on this kernel)" : "");
		goto out;
	}
	if (!strcmp(v, "lsm")) {
		char lsms[256];

		if (ks_bpf_lsm_inactive(lsms, sizeof(lsms))) {
			snprintf(why, whylen, "bpf is not an active LSM here (active: %s)", lsms);
			err = -EOPNOTSUPP;
			goto out;
		}
	}
	err = describe(&c);
	if (err) {
		snprintf(why, whylen, "%s", ks_errmsg());
		goto out;
	}
	c.enabled = enable;
	c.agent_tgid = getpid();
	c.lsm = !strcmp(v, "lsm") ? 1 : !strcmp(v, "fmod_ret") ? 2 : 0;
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.common__refused), &info,
					     &len))
			c.refused_prog = info.id;
	}
	bpf_map__update_elem(skel->maps.guard_cfg, &zero, sizeof(zero), &c, sizeof(c), 0);
	bpf_object__for_each_program(prog, skel->obj) {
		if (!bpf_program__autoload(prog) || prog == skel->progs.common__refused)
			continue;
		if (bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT &&
		    (err = ks_tracefs_ensure())) {
			snprintf(why, whylen, "%s: %s", bpf_program__name(prog), ks_errmsg());
			goto out;
		}
		links[n] = bpf_program__attach(prog);
		if (!links[n]) {
			err = -errno;
			snprintf(why, whylen, "%s: attach: %s", bpf_program__name(prog),
				 ks_attach_strerror(err));
			goto out;
		}
		n++;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(why, whylen, "can't create %s: %s", dir, strerror(-err));
		goto out;
	}
	/* cfg first: its pin is what says "the guard is loaded". */
	snprintf(path, sizeof(path), "%s/%s", dir, KS_PIN_IDS);
	err = bpf_map__pin(skel->maps.guard_ids, path);
	snprintf(path, sizeof(path), "%s/%s", dir, KS_PIN_STATS);
	if (!err)
		err = bpf_map__pin(skel->maps.guard_stats, path);
	if (!err && (keys = make_keys(pks, npks, why, whylen)) < 0)
		err = keys;
	snprintf(path, sizeof(path), "%s/%s", dir, KS_PIN_KEYS);
	if (!err && bpf_obj_pin(keys, path))
		err = -errno;
	snprintf(path, sizeof(path), "%s/%s", dir, KS_PIN_REFUSED);
	if (!err)
		err = bpf_program__pin(skel->progs.common__refused, path);
	i = 0;
	bpf_object__for_each_program(prog, skel->obj) {
		if (err || !bpf_program__autoload(prog) || prog == skel->progs.common__refused)
			continue;
		snprintf(path, sizeof(path), "%s/" KS_PIN_LINK "%s", dir, bpf_program__name(prog));
		err = bpf_link__pin(links[i++], path);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, KS_PIN_CFG);
	if (!err)
		err = bpf_map__pin(skel->maps.guard_cfg, path);
	if (err && !why[0])
		snprintf(why, whylen, "can't pin under %s: %s", dir, strerror(-err));
out:
	ks_zclose(&keys);
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	if (err)
		ks_pins_remove_dir(dir);
	guard_bpf__destroy(skel);
	return err;
}

int ks_guard_get_at(const char *gdir, struct ks_guard_state *st)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 vals[ncpu > 0 ? ncpu : 1];
	char path[PATH_MAX];
	struct ks_guard_cfg c;
	__u32 zero = 0;
	int fd;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/%s", gdir, KS_PIN_CFG);
	fd = ks_pin_open_ro(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &zero, &c)) {
		int err = -errno;

		close(fd);
		return ks_err(err, "can't read the guard's config: %s", strerror(-err));
	}
	close(fd);
	st->loaded = true;
	st->lsm = c.lsm != 0;
	st->enabled = c.enabled;
	st->agent_tgid = c.agent_tgid;
	st->refused_prog = c.refused_prog;
	snprintf(st->variant, sizeof(st->variant), "%s", c.lsm == 1 ? "lsm" :
		 c.lsm == 2 ? "fmod_ret" : "tp");
	st->nkeys = ks_guard_keys_at(gdir, NULL, 0);
	snprintf(path, sizeof(path), "%s/%s", gdir, KS_PIN_STATS);
	fd = ks_pin_open_ro(path);
	for (__u32 k = 0; fd >= 0 && k < KS_TAMPER_OP_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int i = 0; i < ncpu; i++)
			st->attempts[k] += vals[i];
	}
	ks_zclose(&fd);
	return 0;
}

int ks_guard_get(struct ks_guard_state *st)
{
	char gdir[PATH_MAX];

	guard_pin(gdir, sizeof(gdir), "");
	gdir[strlen(gdir) - 1] = '\0';	/* no trailing '/' */
	return ks_guard_get_at(gdir, st);
}

int ks_guard_keys_at(const char *gdir, unsigned char (*pks)[KS_PUBKEY_LEN], int max)
{
	static const unsigned char none[KS_PUBKEY_LEN];
	unsigned char pk[KS_PUBKEY_LEN];
	char path[PATH_MAX];
	int fd, n = 0;

	snprintf(path, sizeof(path), "%s/%s", gdir, KS_PIN_KEYS);
	fd = ks_pin_open_ro(path);
	if (fd < 0)
		return -errno;
	for (__u32 i = 0; i < KS_GUARD_KEYS_MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, pk) || !memcmp(pk, none, sizeof(pk)))
			continue;
		if (pks && n < max)
			memcpy(pks[n], pk, sizeof(pk));
		n++;
	}
	close(fd);
	return pks && n > max ? max : n;
}

/* Is the guard pinned at @gdir loaded, on, and guarding file system @dev? */
static bool guards_dev(const char *gdir, __u32 dev)
{
	char path[PATH_MAX];
	struct ks_guard_cfg c;
	__u32 zero = 0;
	int fd;
	bool yes;

	snprintf(path, sizeof(path), "%s/%s", gdir, KS_PIN_CFG);
	fd = ks_pin_open_ro(path);
	if (fd < 0)
		return false;
	yes = !bpf_map_lookup_elem(fd, &zero, &c) && c.enabled && c.root_dev == dev;
	close(fd);
	return yes;
}

int ks_guard_find(const char *target, char *gdir, size_t len)
{
	char real[PATH_MAX], p[PATH_MAX], cfg[PATH_MAX + 16], *slash;
	struct stat st;

	/* The deepest existing part of @target, symlinks resolved: a root
	 * whose shields/ is a symlink into the real one is the real one. */
	snprintf(p, sizeof(p), "%s", target);
	while (!realpath(p, real)) {
		slash = strrchr(p, '/');
		if (!slash || slash == p)
			return -ENOENT;
		*slash = '\0';
	}
	if (stat(real, &st))
		return -ENOENT;
	for (;;) {
		snprintf(cfg, sizeof(cfg), "%s/%s/%s", real, KS_PIN_GUARD, KS_PIN_CFG);
		if (!access(cfg, F_OK)) {
			snprintf(gdir, len, "%s/%s", real, KS_PIN_GUARD);
			return 0;
		}
		slash = strrchr(real, '/');
		if (!slash || slash == real)
			break;
		*slash = '\0';
	}
	/* A bind mount of the real root's directories is no ancestor of
	 * theirs: the production guard, when on, claims its whole bpffs. */
	snprintf(p, sizeof(p), "%s/%s", KS_PIN_ROOT_DEFAULT, KS_PIN_GUARD);
	if (guards_dev(p, kdev(st.st_dev))) {
		snprintf(gdir, len, "%s", p);
		return 0;
	}
	return -ENOENT;
}

int ks_guard_record_refusal(const char *gdir, const char *action)
{
	__u64 args[12] = { KS_TAMPER_CONFIG };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));
	struct ks_guard_state st;
	int fd, err;

	/* By id: a program pin opens read-write only, and the guard refuses
	 * that to anyone but the agent while one runs. */
	if ((err = ks_guard_get_at(gdir, &st)))
		return err;
	if (!st.refused_prog)
		return -ENOENT;
	snprintf((char *)&args[1], 11 * sizeof(__u64), "%s", action);
	fd = bpf_prog_get_fd_by_id(st.refused_prog);
	if (fd < 0)
		return -errno;
	err = bpf_prog_test_run_opts(fd, &o) ? -errno : 0;
	close(fd);
	return err;
}

int ks_guard_load(bool enable, const char *keys_dir, struct ks_guard_state *st)
{
	struct ks_guard_cfg c;
	__u32 zero = 0;
	int err, fd;

	err = ks_pins_init();
	if (err)
		return err;
	fd = open_cfg(false);
	if (fd >= 0) {
		/* Adopt: a previous agent loaded it. Register ourselves. */
		err = bpf_map_lookup_elem(fd, &zero, &c) ? -errno : 0;
		if (!err) {
			err = describe(&c);
			c.enabled = enable;
			c.agent_tgid = getpid();
			if (!err)
				err = write_cfg(fd, &c);
		} else {
			err = ks_err(err, "can't read the guard's config: %s", strerror(-err));
		}
		close(fd);
		if (err)
			return err;
	} else {
		char why_lsm[256] = "", why_fmod[256] = "", why_tp[256] = "";
		unsigned char pks[KS_GUARD_KEYS_MAX][KS_PUBKEY_LEN];
		int npks = ks_sign_dir_keys(keys_dir, pks, KS_GUARD_KEYS_MAX);

		/* Recorded now, never changed: a later keys_dir (edited config)
		 * is no source of trust while this guard is loaded. */
		if (npks < 0)
			return npks;
		err = load_variant("lsm", enable, pks, npks, why_lsm, sizeof(why_lsm));
		if (err)
			err = load_variant("fmod_ret", enable, pks, npks, why_fmod, sizeof(why_fmod));
		if (err)
			err = load_variant("tp", enable, pks, npks, why_tp, sizeof(why_tp));
		if (err)
			return ks_err(err, "can't load the guard: lsm: %s; fmod_ret: %s; tp: %s",
				      why_lsm, why_fmod, why_tp);
		err = ks_guard_get(st);
		if (!err && !st->lsm)
			snprintf(st->why_no_lsm, sizeof(st->why_no_lsm), "%s", why_lsm);
		if (!err && ks_guard_protect() < 0)
			err = -EIO;
		return err;
	}
	err = ks_guard_get(st);
	if (!err && ks_guard_protect() < 0)
		err = -EIO;
	return err;
}

/* The id in /proc/self/fdinfo/@fd ("link_id:" or "map_id:"). */
static int fd_id(int fd, __u32 *type, __u32 *id)
{
	char path[64], line[256];
	FILE *f;
	int found = -ENOENT;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "link_id: %u", id) == 1) {
			*type = KS_GUARD_LINK;
			found = 0;
		} else if (sscanf(line, "map_id: %u", id) == 1) {
			*type = KS_GUARD_MAP;
			found = 0;
		}
	}
	fclose(f);
	return found;
}

static int protect_dir(int idsfd, const char *dir, int depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct ks_guard_id key;
		struct stat st;
		__u32 one = 1;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR) {
			if (depth < 4)
				n += protect_dir(idsfd, path, depth + 1);
			continue;
		}
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!fd_id(fd, &key.type, &key.id) && !bpf_map_update_elem(idsfd, &key, &one, 0))
			n++;
		close(fd);
		/* The pin itself: a link has no hook of its own when opened
		 * by path, its pin's inode has (lsm__pin_open). */
		if (!stat(path, &st)) {
			key.type = KS_GUARD_PIN;
			key.id = st.st_ino;
			bpf_map_update_elem(idsfd, &key, &one, 0);
		}
	}
	closedir(d);
	return n;
}

int ks_guard_protect(void)
{
	char path[PATH_MAX];
	int fd, n;

	guard_pin(path, sizeof(path), KS_PIN_IDS);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : ks_err(-errno, "can't open %s: %s", path, strerror(errno));
	n = protect_dir(fd, ks_bpffs_root, 0);
	close(fd);
	return n;
}

int ks_guard_set(bool enabled)
{
	struct ks_guard_cfg c;
	__u32 zero = 0;
	int err, fd = open_cfg(false);

	if (fd < 0)
		return ks_err(fd, "the guard is not loaded under %s", ks_bpffs_root);
	err = bpf_map_lookup_elem(fd, &zero, &c) ? -errno : 0;
	if (!err) {
		c.enabled = enabled;
		err = write_cfg(fd, &c);
	} else {
		err = ks_err(err, "can't read the guard's config: %s", strerror(-err));
	}
	close(fd);
	return err;
}

int ks_guard_unload(void)
{
	char dir[PATH_MAX];
	int err;

	ks_pin_path(dir, sizeof(dir), "%s", KS_PIN_GUARD);
	if (access(dir, F_OK))
		return ks_err(-ENOENT, "the guard is not loaded under %s", ks_bpffs_root);
	err = ks_pins_remove_dir(dir);
	if (err)
		return ks_err(err, "can't remove %s: %s%s", dir, strerror(-err),
			      err == -EPERM ? " (the guard is on: turn it off first)" : "");
	return 0;
}

const void *ks_guard_elf(size_t *len)
{
	return guard_bpf__elf_bytes(len);
}
