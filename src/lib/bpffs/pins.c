// SPDX-License-Identifier: MIT
/* pins.c - kshield's bpffs directory tree: checks that it really is bpffs
 * (a plain directory there would make pins vanish silently), creates it, and
 * removes a shield's pins. Also finds the cgroup2 mount, which differs
 * between unified and hybrid hosts. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "err.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <kshield/shield.h>
#include "pins.h"

const char *ks_bpffs_root = KS_PIN_ROOT_DEFAULT;

int ks_pin_path(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = snprintf(buf, len, "%s/", ks_bpffs_root);
	va_list ap;
	int m;

	if (n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	return m < 0 || (size_t)m >= len - n ? -ENAMETOOLONG : 0;
}

static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int ks_pins_init(void)
{
	char parent[PATH_MAX], path[PATH_MAX];
	struct statfs fs;
	char *slash;
	int err;

	/* The root itself may not exist yet: check the nearest existing
	 * ancestor is on bpffs. */
	snprintf(parent, sizeof(parent), "%s", ks_bpffs_root);
	while (statfs(parent, &fs)) {
		slash = strrchr(parent, '/');
		if (!slash || slash == parent)
			return ks_err(-ENOENT, "bpffs root %s does not exist", ks_bpffs_root);
		*slash = '\0';
	}
	if (fs.f_type != BPF_FS_MAGIC)
		return ks_err(-ENODEV, "%s is not on a bpf file system: "
			      "mount it with 'mount -t bpf bpf /sys/fs/bpf'", parent);
	if (geteuid() != 0 && access(parent, W_OK))
		return ks_err(-EPERM, "not privileged: run kshield as root "
			      "(needs CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN)");
	ks_pin_path(path, sizeof(path), "%s", KS_PIN_SHIELDS);
	err = mkdir_p(path);
	if (!err) {
		ks_pin_path(path, sizeof(path), "%s", KS_PIN_MAPS);
		err = mkdir_p(path);
	}
	if (err)
		return ks_err(err, "can't create %s: %s", path, strerror(-err));
	return 0;
}

int ks_pins_remove_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno != ENOENT)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && errno != ENOENT)
		err = -errno;
	return err;
}

static const char *shape(char *buf, size_t len, enum bpf_map_type type, __u32 key,
			 __u32 val, __u32 max, __u32 flags)
{
	snprintf(buf, len, "%s %u/%u x%u flags 0x%x", libbpf_bpf_map_type_str(type) ?
		 libbpf_bpf_map_type_str(type) : "?", key, val, max, flags);
	return buf;
}

int ks_pins_migrate(struct bpf_object *obj, char *what, size_t len)
{
	char maps[PATH_MAX], old[PATH_MAX], was[96], now[96];
	struct bpf_map *map;
	size_t used = 0;
	int moved = 0;

	what[0] = '\0';
	ks_pin_path(maps, sizeof(maps), "%s/", KS_PIN_MAPS);
	bpf_object__for_each_map(map, obj) {
		const char *path = bpf_map__pin_path(map);
		struct bpf_map_info info = {};
		__u32 ilen = sizeof(info);
		int fd;

		if (!path || strncmp(path, maps, strlen(maps)))
			continue;
		fd = ks_pin_open_ro(path);
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
			close(fd);
			continue;
		}
		close(fd);
		/* libbpf reuses a pin only when all of these match */
		if (info.type == bpf_map__type(map) && info.key_size == bpf_map__key_size(map) &&
		    info.value_size == bpf_map__value_size(map) &&
		    info.max_entries == bpf_map__max_entries(map) &&
		    info.map_flags == bpf_map__map_flags(map))
			continue;
		snprintf(old, sizeof(old), "%s" KS_PIN_OLD_MAP "%s_%u", maps, bpf_map__name(map), info.id);
		if (rename(path, old))
			return ks_err(-errno, "can't move the incompatible pin %s aside: %s", path,
				      strerror(errno));
		used += snprintf(what + used, used < len ? len - used : 0, "%s%s (was %s, now %s)",
				 moved++ ? ", " : "", bpf_map__name(map),
				 shape(was, sizeof(was), info.type, info.key_size, info.value_size,
				       info.max_entries, info.map_flags),
				 shape(now, sizeof(now), bpf_map__type(map), bpf_map__key_size(map),
				       bpf_map__value_size(map), bpf_map__max_entries(map),
				       bpf_map__map_flags(map)));
	}
	return moved;
}

int ks_pin_open_ro(const char *path)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);

	return bpf_obj_get_opts(path, &opts);
}

int ks_pins_old_maps(const char *name, bool rdonly, void (*fn)(int fd, void *ctx), void *ctx)
{
	char dir[PATH_MAX], prefix[128], path[PATH_MAX + 256];
	struct dirent *de;
	int n = 0, fd;
	DIR *d;

	ks_pin_path(dir, sizeof(dir), "%s", KS_PIN_MAPS);
	snprintf(prefix, sizeof(prefix), KS_PIN_OLD_MAP "%s_", name);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = rdonly ? ks_pin_open_ro(path) : bpf_obj_get(path);
		if (fd < 0)
			continue;
		fn(fd, ctx);
		close(fd);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}
