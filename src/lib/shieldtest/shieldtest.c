// SPDX-License-Identifier: MIT
/* shieldtest.c - the helpers shield test cases use (shieldtest.h): become
 * root of a user namespace, take a descriptor made inside one, drop
 * privileges, run this shield's 32-bit programs, and the case results of
 * syscall returns. The runner that drives the cases is shieldtest_run.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "shieldtest.h"
#include "shieldtest_effect.h"

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

int ks_test_enter_userns(int netns)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int err;

	if (unshare(CLONE_NEWUSER | (netns ? CLONE_NEWNET : 0)))
		return -errno;
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", uid);
	err = write_file("/proc/self/uid_map", map);
	if (err)
		return err;
	snprintf(map, sizeof(map), "0 %u 1", gid);
	return write_file("/proc/self/gid_map", map);
}

/* What the helper of ks_test_fd_from_userns runs (set before the fork). */
static int userns_netns;
static int (*userns_make)(void);

static int userns_helper(char *why, size_t len)
{
	int err = ks_test_enter_userns(userns_netns);

	(void)why;
	(void)len;
	return err ? err : userns_make();
}

int ks_test_fd_from_userns(int netns, int (*make)(void))
{
	char why[256];
	int fd;

	userns_netns = netns;
	userns_make = make;
	fd = ks_fx_fd_from_helper(userns_helper, why, sizeof(why));
	return fd == KS_FX_HELPER_KILLED ? -EIO : fd;	/* no descriptor came back */
}

int ks_test_drop_to(unsigned uid, unsigned gid)
{
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
		return -errno;
	return 0;
}

const char *ks_test_shields_dir = "/usr/lib/kshield/shields";

int ks_test_compat_path(const char *shield, const char *prog, char *path, size_t plen,
			char *why, size_t len)
{
	const char *abi = NULL;
	struct utsname u;

	if (uname(&u))
		return -errno;
	if (!strcmp(u.machine, "x86_64"))
		abi = "i386";
	else if (!strcmp(u.machine, "aarch64"))
		abi = "arm";
	if (!abi) {
		snprintf(why, len, KS_CASE_NA "no 32-bit compat test build for %s", u.machine);
		return -ENOTSUP;
	}
	snprintf(path, plen, "%s/%s/compat/%s.%s", ks_test_shields_dir, shield, prog, abi);
	if (access(path, X_OK)) {
		snprintf(why, len, "compat test program %s: %s (built by make from "
			 "shields/%s/compat/%s.c)", path, strerror(errno), shield, prog);
		return -ENOENT;
	}
	return 0;
}

int ks_test_compat_exec_failed(const char *path, int e, char *why, size_t len)
{
	if (e == ENOEXEC) {
		const char *base = strrchr(path, '/');

		snprintf(why, len, KS_CASE_NA "no 32-bit emulation here (exec of %s: %s)",
			 base ? base + 1 : path, strerror(e));
		return -ENOEXEC;
	}
	snprintf(why, len, "exec %s: %s", path, strerror(e));
	return -e;
}

int ks_test_run_compat(const char *shield, const char *prog, char *const argv[],
		       char *why, size_t len)
{
	char path[PATH_MAX], *args[16];
	int out[2], st[2], status, e = 0, n = 0;
	ssize_t got;
	pid_t pid;

	e = ks_test_compat_path(shield, prog, path, sizeof(path), why, len);
	if (e)
		return e;
	args[n++] = path;
	for (int i = 0; argv && argv[i] && n < 15; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	if (pipe2(out, O_CLOEXEC))
		return -errno;
	if (pipe2(st, O_CLOEXEC)) {
		e = -errno;
		close(out[0]);
		close(out[1]);
		return e;
	}
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 2);
		execv(path, args);
		e = errno;
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(127);
	}
	close(out[1]);
	close(st[1]);
	if (pid < 0) {
		e = -errno;
		close(out[0]);
		close(st[0]);
		return e;
	}
	if (read(st[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(st[0]);
	got = read(out[0], why, len - 1);
	why[got > 0 ? got : 0] = '\0';
	why[strcspn(why, "\n")] = '\0';
	close(out[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (e)
		return ks_test_compat_exec_failed(path, e, why, len);
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGKILL)
			return KS_CASE_REFUSED;
		snprintf(why, len, "%s died of signal %d", prog, WTERMSIG(status));
		return -EINTR;
	}
	switch (WEXITSTATUS(status)) {
	case 0: return KS_CASE_PASSED;
	case 1: return KS_CASE_REFUSED;
	case 2: return KS_CASE_EFFECT;
	case 3: return KS_CASE_NOEFFECT;
	case 4:
		if (strncmp(why, KS_CASE_NA, strlen(KS_CASE_NA)))
			snprintf(why, len, KS_CASE_NA "%s said so", prog);
		return -ENOTSUP;
	case 6: return KS_CASE_FIXED;	/* 5 is the programs' own "error" */
	}
	if (!why[0])
		snprintf(why, len, "%s exited with status %d", prog, WEXITSTATUS(status));
	return -EIO;
}

int ks_test_run_compat_fd(const char *shield, const char *prog, int fd, const char *arg,
			  char *why, size_t len)
{
	char fdarg[16];
	char *argv[] = { fdarg, (char *)arg, NULL };
	int dfd = fcntl(fd, F_DUPFD, 3), rc;

	if (dfd < 0)
		return ks_case_from(-1, errno, "fcntl(F_DUPFD)", why, len);
	snprintf(fdarg, sizeof(fdarg), "%d", dfd);
	rc = ks_test_run_compat(shield, prog, argv, why, len);
	close(dfd);
	return rc;
}

int ks_test_socket_compat(int family, int type, int protocol, int socketcall,
			  char *why, size_t len)
{
	char a[4][16], cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, byte;
	char *argv[] = { a[0], a[1], a[2], socketcall ? "socketcall" : "socket", a[3], NULL };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int sv[2], dfd, rc, fd = -1;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return ks_case_from(-1, errno, "socketpair", why, len);
	dfd = fcntl(sv[1], F_DUPFD, 3);		/* without FD_CLOEXEC: for the exec */
	close(sv[1]);
	if (dfd < 0) {
		rc = ks_case_from(-1, errno, "fcntl(F_DUPFD)", why, len);
		close(sv[0]);
		return rc;
	}
	snprintf(a[0], sizeof(a[0]), "%d", family);
	snprintf(a[1], sizeof(a[1]), "%d", type);
	snprintf(a[2], sizeof(a[2]), "%d", protocol);
	snprintf(a[3], sizeof(a[3]), "%d", dfd);
	rc = ks_test_run_compat("common", "socket", argv, why, len);
	close(dfd);
	if (rc == KS_CASE_PASSED) {
		if (recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) > 0 &&
		    (c = CMSG_FIRSTHDR(&m)) && c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
		if (fd < 0) {
			snprintf(why, len, "the 32-bit socket program passed no descriptor");
			rc = -EIO;
		}
	}
	close(sv[0]);
	if (rc == KS_CASE_PASSED)
		return fd;
	return rc == KS_CASE_REFUSED ? -EPERM : rc >= 0 ? -EIO : rc;
}

int ks_case_from(int rc, int err, const char *what, char *why, size_t len)
{
	if (rc >= 0)
		return KS_CASE_PASSED;
	if (err == EPERM)
		return KS_CASE_REFUSED;
	snprintf(why, len, "%s: %s", what, strerror(err));
	return -err;
}

int ks_case_fixed_from(int rc, int err, const char *what, char *why, size_t len)
{
	if (rc < 0 && err == EPERM) {
		snprintf(why, len, "%s: refused (EPERM)", what);
		return KS_CASE_FIXED;
	}
	return ks_case_from(rc, err, what, why, len);
}

int ks_case_todo(const char *what, char *why, size_t len)
{
	snprintf(why, len, "not written yet%s%s", what && *what ? ": " : "", what ? what : "");
	return KS_CASE_TODO;
}

int ks_case_fail(const char *what, int err, char *why, size_t len)
{
	snprintf(why, len, "%s: %s", what, strerror(-err));
	return err;
}

const char *ks_case_str(int r)
{
	switch (r) {
	case KS_CASE_PASSED: return "passed";
	case KS_CASE_REFUSED: return "refused";
	case KS_CASE_EFFECT: return "effect";
	case KS_CASE_NOEFFECT: return "no-effect";
	case KS_CASE_FIXED: return "fixed";
	case KS_CASE_TODO: return "not-written";
	default: return "error";
	}
}
