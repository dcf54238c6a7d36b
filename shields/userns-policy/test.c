// SPDX-License-Identifier: MIT
/* Trigger and benign cases for userns-policy.
 *
 * Trigger paths, each by an unprivileged user (uid 65534) gaining a user
 * namespace, the first step of most unprivileged kernel exploits:
 *   native       unshare(CLONE_NEWUSER)
 *   clone        clone(CLONE_NEWUSER): the child is born in the namespace
 *   clone3       the same through clone3
 *   setns-zombie a child unshares and is gone (killed, for the tp variant);
 *                the parent opens /proc/CHILD/ns/user of the zombie before
 *                reaping it and setns()es into the namespace: passed when
 *                it got in and lived on.
 *   compat-i386, compat-arm  unshare(CLONE_NEWUSER) by a static 32-bit
 *                program (compat/unshare.c)
 *   compat-i386-clone, -clone3 (-arm-)  clone/clone3(CLONE_NEWUSER) by
 *                that program; went through when its child ran
 *   setns-zombie-compat-i386, -arm  setns-zombie with that 32-bit program
 *                as the child
 * benign: root of the initial namespace creates one; then this binary is
 * put on the allow-list (by inode and name, as allow.sh does) and the same
 * unprivileged unshare goes through; the entry is removed again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/sched.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include "pins.h"
#include "shieldtest.h"
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

/* The child of a successful clone: it lived long enough to return. */
#define CHILD_RAN 42

/* clone, or clone3 when @path->way, with CLONE_NEWUSER as nobody, by a
 * helper process whose child writes to a pipe: went through when the child
 * ran code of its own in the namespace, whatever became of the helper (tp
 * kills the caller: the helper dying says nothing about the child). */
static int clone_as_nobody(const struct ks_path *path, char *why, size_t len)
{
	const int three = path->way;
	int p[2], status;
	pid_t helper, pid;
	char byte;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC))
		return ks_case_from(-1, errno, "pipe", why, len);
	fflush(NULL);
	helper = fork();
	if (helper < 0)
		return ks_case_from(-1, errno, "fork", why, len);
	if (helper == 0) {
		close(p[0]);
		if (ks_test_drop_to(NOBODY, NOBODY))
			_exit(3);
		if (three) {
			struct clone_args a = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };

			pid = syscall(SYS_clone3, &a, sizeof(a));
		} else {
			pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
		}
		if (pid == 0)
			_exit(write(p[1], "r", 1) == 1 ? CHILD_RAN : 2);
		if (pid < 0)
			_exit(errno == EPERM ? 1 : 2);
		waitpid(pid, &status, 0);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], &byte, 1);	/* EOF once helper and child are gone */
	close(p[0]);
	if (waitpid(helper, &status, 0) < 0)
		return ks_case_from(-1, errno, "waitpid (clone helper)", why, len);
	if (n == 1)
		return KS_CASE_PASSED;
	if ((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
	    (WIFEXITED(status) && WEXITSTATUS(status) == 1))
		return KS_CASE_REFUSED;
	snprintf(why, len, "%s(CLONE_NEWUSER) as nobody: the helper ended with status 0x%x "
		 "and its child wrote nothing", three ? "clone3" : "clone", status);
	return -EIO;
}

/* The namespace of a child that unshared and is gone, entered by its
 * parent through the zombie's /proc/PID/ns/user. With @p->way (compat)
 * the child execs the 32-bit compat/unshare.c (exit 0 made, 1 EPERM, 5
 * error): a 32-bit unshare's exit must record the namespace as a native
 * one's. */
static int setns_zombie(const struct ks_path *p, char *why, size_t len)
{
	const bool compat = p->way;
	int err = ks_test_drop_to(NOBODY, NOBODY), fd, rc, st[2];
	char path[64], prog[PATH_MAX];
	siginfo_t si;
	pid_t pid;

	if (err) {
		snprintf(why, len, "drop to uid %d: %s", NOBODY, strerror(-err));
		return err;
	}
	if (compat) {
		rc = ks_test_compat_path("userns-policy", "unshare", prog, sizeof(prog), why, len);
		if (rc)
			return rc;
	}
	/* A user's own processes are dumpable; one that dropped from root
	 * is not, and /proc/PID/ns would be closed to it. (An exec by a
	 * task whose ids all match makes it dumpable again.) */
	prctl(PR_SET_DUMPABLE, 1);
	if (pipe2(st, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (!compat)
			_exit(unshare(CLONE_NEWUSER) ? 1 : CHILD_RAN);
		execl(prog, prog, (char *)NULL);
		err = errno;
		if (write(st[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(st[1]);
	if (read(st[0], &err, sizeof(err)) != sizeof(err))
		err = 0;	/* exec'd (EOF at the exec) */
	close(st[0]);
	/* Wait for it to end, without reaping it. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0)
		return -errno;
	if (err) {
		waitpid(pid, NULL, 0);
		return ks_test_compat_exec_failed(prog, err, why, len);
	}
	if (si.si_code == CLD_EXITED && si.si_status == 1) {
		waitpid(pid, NULL, 0);
		return KS_CASE_REFUSED;		/* the unshare itself was refused */
	}
	if (si.si_code == CLD_EXITED && si.si_status != 0 && si.si_status != CHILD_RAN) {
		waitpid(pid, NULL, 0);
		snprintf(why, len, "the %sunshare child exited with status %d",
			 compat ? "32-bit " : "", si.si_status);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		snprintf(why, len, "open %s of the zombie: %s", path, strerror(err));
		waitpid(pid, NULL, 0);
		return -err;
	}
	rc = setns(fd, CLONE_NEWUSER);
	err = errno;
	close(fd);
	waitpid(pid, NULL, 0);
	return ks_case_from(rc, err, "setns into the zombie's user namespace", why, len);
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

/* compat-i386, compat-arm: the unshare made by a 32-bit program
 * (compat/unshare.c) run as nobody. */
static int trigger_compat(char *why, size_t len)
{
	char *argv[] = { NULL };
	int err = ks_test_drop_to(NOBODY, NOBODY);

	if (err) {
		snprintf(why, len, "drop to uid %d: %s", NOBODY, strerror(-err));
		return err;
	}
	return ks_test_run_compat("userns-policy", "unshare", argv, why, len);
}

/* compat-i386-clone, -clone3 (and -arm-): clone(CLONE_NEWUSER) (@path->arg) by the
 * 32-bit program, whose child writes to a pipe: went through when the
 * child ran code of its own in the namespace, whatever became of its
 * parent (tp kills the caller; a child it made is killed apart). */
static int compat_clone(const struct ks_path *path, char *why, size_t len)
{
	const char *mode = path->arg;
	int err = ks_test_drop_to(NOBODY, NOBODY), p[2], rc;
	char byte;
	ssize_t n;

	if (err) {
		snprintf(why, len, "drop to uid %d: %s", NOBODY, strerror(-err));
		return err;
	}
	if (pipe2(p, O_CLOEXEC))
		return ks_case_from(-1, errno, "pipe", why, len);
	rc = ks_test_run_compat_fd("userns-policy", "unshare", p[1], mode, why, len);
	close(p[1]);
	/* EOF once the child is gone too (it holds the write end). */
	n = read(p[0], &byte, 1);
	close(p[0]);
	if (rc < 0)
		return rc;
	if (n == 1)
		return KS_CASE_PASSED;	/* the child ran in the namespace */
	if (rc == KS_CASE_PASSED) {
		snprintf(why, len, "the 32-bit %s child exited without writing to the pipe", mode);
		return -EIO;
	}
	return KS_CASE_REFUSED;
}


KSHIELD_TEST_PATHS("userns-policy", benign,
	{ "native", unshare_as_nobody },
	{ "clone", .call = clone_as_nobody, .way = 0 },
	{ "clone3", .call = clone_as_nobody, .way = 1 },
	{ "setns-zombie", .call = setns_zombie, .way = 0 },
	{ "compat-" KS_ABI32_NAME, trigger_compat },
	{ "compat-" KS_ABI32_NAME "-clone", .call = compat_clone, .arg = "clone" },
	{ "compat-" KS_ABI32_NAME "-clone3", .call = compat_clone, .arg = "clone3" },
	/* the zombie a 32-bit unshare left */
	{ "setns-zombie-compat-" KS_ABI32_NAME, .call = setns_zombie, .way = 1 });
