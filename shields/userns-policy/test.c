/* Trigger and benign cases for userns-policy.
 *
 * trigger: an unprivileged user (uid 65534) creates a user namespace with
 * unshare(CLONE_NEWUSER), the first step of most unprivileged kernel
 * exploits. The guarded call is unshare.
 * benign: root of the initial namespace creates one; then this binary is
 * put on the allow-list (by inode and name, as allow.sh does) and the same
 * unprivileged unshare goes through; the entry is removed again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include "pins.h"
#include "selftest.h"
#include "allow.h"

#define NOBODY 65534

/* Drop to nobody and unshare a user namespace: a case result. */
static int unshare_as_nobody(char *why, size_t len)
{
	int err = ks_test_drop_to(NOBODY, NOBODY), rc;

	if (err) {
		snprintf(why, len, "drop to uid %d: %s", NOBODY, strerror(-err));
		return err;
	}
	rc = unshare(CLONE_NEWUSER);	/* before reading errno */
	return ks_case_from(rc, errno, "unshare(CLONE_NEWUSER) as nobody", why, len);
}

static int trigger(char *why, size_t len)
{
	return unshare_as_nobody(why, len);
}

/* Allow-list key and value of /proc/self/exe. */
static int self_entry(struct ks_userns_allow_key *k, struct ks_userns_allow_val *v,
		      char *why, size_t len)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	const char *base;

	if (n < 0 || stat("/proc/self/exe", &st)) {
		snprintf(why, len, "/proc/self/exe: %s", strerror(errno));
		return -errno;
	}
	path[n] = '\0';
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	memset(k, 0, sizeof(*k));
	memset(v, 0, sizeof(*v));
	k->dev = major(st.st_dev) << 20 | minor(st.st_dev);
	k->ino = st.st_ino;
	snprintf(v->name, sizeof(v->name), "%s", base);
	return 0;
}

static int benign(char *why, size_t len)
{
	struct ks_userns_allow_key k;
	struct ks_userns_allow_val v;
	char map[PATH_MAX];
	int fd, rc, status;
	pid_t pid;

	if (geteuid() != 0) {
		snprintf(why, len, "the benign case needs real root");
		return -EPERM;
	}
	/* Root of the initial namespace: not restricted. */
	pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		snprintf(why, len, "unshare(CLONE_NEWUSER) as root failed");
		return -EPERM;
	}

	/* An allow-listed binary, run by an unprivileged user. */
	rc = self_entry(&k, &v, why, len);
	if (rc)
		return rc;
	ks_pin_path(map, sizeof(map), "%s/%s", KS_PIN_MAPS, KS_USERNS_ALLOW_MAP);
	fd = bpf_obj_get(map);
	if (fd < 0) {
		snprintf(why, len, "open allow-list %s: %s", map, strerror(errno));
		return -errno;
	}
	if (bpf_map_update_elem(fd, &k, &v, BPF_ANY)) {
		snprintf(why, len, "add %s to the allow-list: %s", v.name, strerror(errno));
		rc = -errno;
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		char w[256] = "";
		int r = unshare_as_nobody(w, sizeof(w));

		_exit(r == KS_CASE_PASSED ? 0 : r == KS_CASE_REFUSED ? 1 : 2);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		snprintf(why, len, "allow-listed unshare as nobody died");
		rc = -EINTR;
	} else if (WEXITSTATUS(status)) {
		snprintf(why, len, "allow-listed %s (dev %u ino %llu) could not unshare as nobody: %s",
			 v.name, k.dev, (unsigned long long)k.ino,
			 WEXITSTATUS(status) == 1 ? "refused" : "error");
		rc = -EPERM;
	} else {
		rc = KS_CASE_PASSED;
	}
	bpf_map_delete_elem(fd, &k);
out:
	close(fd);
	return rc;
}

KSHIELD_TEST("userns-policy", trigger, benign);
