// SPDX-License-Identifier: MIT
/* sysinfo.c - read the kernel facts `kshield probe` reports (see sysinfo.h).
 *
 * The kernel build ID comes from the GNU build-id note the kernel exports in
 * /sys/kernel/notes: together with the release it names the exact build, which
 * is what a fleet report or a debuginfo lookup needs. LSMs and lockdown live
 * in securityfs, which minimal systems (busybox guests, some containers) do
 * not mount.
 */
#define _GNU_SOURCE	/* unshare */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "btf_find.h"
#include "err.h"
#include "buildid.h"
#include "sysinfo.h"

#define SECURITYFS "/sys/kernel/security"

/* Read a small file into @buf (NUL-terminated, trailing newline dropped).
 * Returns bytes read or a negative errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

/* "none [integrity] confidentiality" -> "integrity". */
static void parse_lockdown(const char *text, char *out, size_t len)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;

	if (a && b && (size_t)(b - a - 1) < len)
		snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
	else
		snprintf(out, len, "unknown");
}

/* Fill lsms/lockdown from a mounted securityfs. Returns 0 if the LSM list
 * was readable. */
static int read_security_files(char *lsms, size_t llen, char *lockdown, size_t dlen)
{
	char buf[256];

	if (read_small(SECURITYFS "/lsm", lsms, llen) < 0)
		return -1;
	if (read_small(SECURITYFS "/lockdown", buf, sizeof(buf)) >= 0)
		parse_lockdown(buf, lockdown, dlen);
	else	/* lockdown LSM not built in: nothing is locked down */
		snprintf(lockdown, dlen, strstr(lsms, "lockdown") ? "unknown" : "none");
	return 0;
}

/* securityfs is not mounted: mount it in a private mount namespace of a
 * child, so the host's mount table is untouched and concurrent probes do not
 * race on mounting and unmounting it. The child sends "lsms\0lockdown\0". */
static int read_security_private(struct ks_sysinfo *si)
{
	char buf[512];
	int p[2], status;
	ssize_t n = 0, r;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char lsms[256], ld[32];
		int len;

		close(p[0]);
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("securityfs", SECURITYFS, "securityfs", 0, NULL) ||
		    read_security_files(lsms, sizeof(lsms), ld, sizeof(ld)))
			_exit(1);
		len = snprintf(buf, sizeof(buf), "%s%c%s", lsms, '\0', ld);
		_exit(write(p[1], buf, len + 1) == len + 1 ? 0 : 1);
	}
	close(p[1]);
	while (n < (ssize_t)sizeof(buf) - 1 && (r = read(p[0], buf + n, sizeof(buf) - 1 - n)) > 0)
		n += r;
	close(p[0]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || n < 2)
		return -1;
	buf[n] = '\0';
	snprintf(si->lsms, sizeof(si->lsms), "%s", buf);
	snprintf(si->lockdown, sizeof(si->lockdown), "%s", buf + strlen(buf) + 1);
	return 0;
}

/* Undo /proc/mounts' octal escapes (\040 for space) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

int ks_mounts_of_type(const char *type, char out[][256], int max)
{
	char line[1024], mnt[512], fstype[64];
	FILE *f = fopen("/proc/mounts", "re");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %511s %63s", mnt, fstype) != 2 || strcmp(fstype, type))
			continue;
		unescape(mnt);
		snprintf(out[n++], 256, "%s", mnt);
	}
	fclose(f);
	return n;
}

int ks_sysinfo_read(struct ks_sysinfo *si)
{
	struct utsname u;

	memset(si, 0, sizeof(*si));
	if (!uname(&u)) {
		snprintf(si->release, sizeof(si->release), "%s", u.release);
		snprintf(si->machine, sizeof(si->machine), "%s", u.machine);
	}
	if (ks_kernel_build_id(si->build_id, sizeof(si->build_id)))
		si->build_id[0] = '\0';	/* "" if none; the probe reports it */
	si->btf = ks_btf_kernel_has();

	snprintf(si->lockdown, sizeof(si->lockdown), "unknown");
	if (!read_security_files(si->lsms, sizeof(si->lsms), si->lockdown, sizeof(si->lockdown)) ||
	    !read_security_private(si))
		si->lsms_known = true;
	else
		si->lsms[0] = '\0';

	si->nbpffs = ks_mounts_of_type("bpf", si->bpffs, KS_SYSINFO_MAX_MOUNTS);
	si->ncgroup2 = ks_mounts_of_type("cgroup2", si->cgroup2, KS_SYSINFO_MAX_MOUNTS);
	return 0;
}

/* BPF LSM programs load and attach even when "bpf" is not among the active
 * LSMs (lsm= boot parameter), but then they never run: a shield would look
 * loaded and refuse nothing. Returns true when bpf is known to be inactive,
 * with the list of active LSMs in @lsms. */
bool ks_bpf_lsm_inactive(char *lsms, size_t len)
{
	static struct ks_sysinfo si;
	static bool read;
	char list[sizeof(si.lsms) + 2];

	if (!read) {
		ks_sysinfo_read(&si);
		read = true;
	}
	if (!si.lsms_known)
		return false;
	snprintf(lsms, len, "%s", si.lsms);
	snprintf(list, sizeof(list), ",%s,", si.lsms);
	return !strstr(list, ",bpf,");
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

#define KS_TRACEFS	"/sys/kernel/tracing"

int ks_tracefs_ensure(void)
{
	if (!access(KS_TRACEFS "/events", F_OK) ||
	    !access("/sys/kernel/debug/tracing/events", F_OK))
		return 0;
	if (!mount("tracefs", KS_TRACEFS, "tracefs", 0, NULL) &&
	    !access(KS_TRACEFS "/events", F_OK))
		return 0;
	return ks_err(-ENOENT, "tracepoint programs need tracefs, which is not mounted and "
		      "could not be mounted at " KS_TRACEFS " (%s): mount it with "
		      "'mount -t tracefs tracefs " KS_TRACEFS "'", strerror(errno));
}
