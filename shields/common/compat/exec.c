// SPDX-License-Identifier: MIT
/* exec.c - the 32-bit caller of the set-ID exec tests (cve-2021-4034,
 * cve-2023-4911; src/lib/shieldtest/shieldtest_exec.c), built static for
 * i386 and AArch32: the exec through the 32-bit syscall table
 * (compat_sys_execve, compat_sys_execveat).
 *
 *   exec execve|execveat PATH null|empty|ARGV0
 *
 * execs PATH with a NULL argv ("null"), the empty argv { NULL } ("empty")
 * or { ARGV0 }, and this process's environment. With no arguments it
 * exits 0 at once: it then stands in for a set-user-ID program linked
 * against this compiler's static glibc (cve-2023-4911's effect path).
 * Exit: 64 + errno when the exec failed, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char *one[] = { NULL, NULL };
	char **args = one;
	const char *dir, *name;
	int fd;

	if (argc <= 1)
		return 0;
	if (argc != 4)
		return 2;
	if (!strcmp(argv[3], "null"))
		args = NULL;
	else if (strcmp(argv[3], "empty"))
		one[0] = argv[3];
	if (!strcmp(argv[1], "execve")) {
		syscall(SYS_execve, argv[2], args, environ);
		return 64 + errno;
	}
	/* execveat(dirfd, base name): the directory opened O_PATH. */
	name = strrchr(argv[2], '/');
	if (!name)
		return 2;
	dir = argv[2];
	argv[2][name - argv[2]] = 0;
	fd = open(dir, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return 64 + errno;
	syscall(SYS_execveat, fd, name + 1, args, environ, 0);
	return 64 + errno;
}
