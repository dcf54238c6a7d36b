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
#include "cli.h"
#include "pins.h"

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
	ks_pin_path(path, sizeof(path), "%s", "shields");
	err = mkdir_p(path);
	if (!err) {
		ks_pin_path(path, sizeof(path), "%s", "maps");
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

const char *ks_cgroup2_path(void)
{
	static char path[PATH_MAX];
	char dev[256], mnt[PATH_MAX], type[64];
	FILE *f = fopen("/proc/mounts", "re");

	if (!f)
		return NULL;
	path[0] = '\0';
	while (fscanf(f, "%255s %4095s %63s %*[^\n]\n", dev, mnt, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(path, sizeof(path), "%s", mnt);
			break;
		}
	}
	fclose(f);
	return path[0] ? path : NULL;
}
