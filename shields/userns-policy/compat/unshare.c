// SPDX-License-Identifier: MIT
/* unshare.c - the compat (32-bit) paths of userns-policy, built static for
 * i386 and AArch32 and run by test.c on 64-bit guests after it dropped to
 * an unprivileged uid: a user namespace through the 32-bit syscall table,
 * which the syscall tracepoints (the tp variant's 64-bit programs) do not
 * see.
 *
 *   unshare            unshare(CLONE_NEWUSER)
 *   unshare FD clone   clone(CLONE_NEWUSER) (clone3 with "clone3"): the
 *                      child, born in the namespace, writes a byte to FD
 *                      (a pipe the caller reads: did the child run code of
 *                      its own?) and exits
 *
 * Exit (ks_test_run_compat): 0 the namespace was made (clone: the child
 * ran), 1 refused (EPERM, or the child was killed), 5 any other error
 * (stderr says what).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_RAN 42

/* struct clone_args: every field 64-bit aligned, the same in 32-bit code. */
struct clone_args32 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

int main(int argc, char **argv)
{
	int fd, status, three;
	long pid;

	if (argc < 3) {
		if (!unshare(CLONE_NEWUSER))
			return 0;
		if (errno == EPERM)
			return 1;
		fprintf(stderr, "32-bit unshare(CLONE_NEWUSER): %s\n", strerror(errno));
		return 5;
	}
	fd = atoi(argv[1]);
	three = !strcmp(argv[2], "clone3");
	if (three) {
		struct clone_args32 a = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };

		pid = syscall(SYS_clone3, &a, sizeof(a));
	} else {
		pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	}
	if (pid == 0) {
		if (write(fd, "r", 1) != 1)
			_exit(5);
		_exit(CHILD_RAN);
	}
	if (pid < 0) {
		if (errno == EPERM)
			return 1;
		fprintf(stderr, "32-bit %s(CLONE_NEWUSER): %s\n", three ? "clone3" : "clone",
			strerror(errno));
		return 5;
	}
	if (waitpid(pid, &status, 0) < 0) {
		fprintf(stderr, "32-bit waitpid: %s\n", strerror(errno));
		return 5;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_RAN)
		return 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return 1;
	fprintf(stderr, "32-bit clone child ended with status 0x%x\n", status);
	return 5;
}
