// SPDX-License-Identifier: MIT
/* ksites-drv.c - drive one path into the kernel's do_sys_open from user
 * space, for tests/guest/kernel-sites.sh: each PATH kind reaches a different
 * copy (inlined into its syscall, or the out-of-line one).
 *
 *	ksites-drv KIND FILE [N]	KIND := open | openat | creat | open32 | openat32 | creat32
 *
 * The *32 kinds enter through int 0x80 (the ia32 syscall table: the compat
 * copies); FILE is copied below 4 GiB for them (a static, non-PIE binary's
 * .bss). Built static (gcc -static -no-pie): the guest has no libc. On
 * arm64 only openat exists (no open, creat or int 0x80).
 * Exit 0 when the call returned (any result; it is printed), 2 on usage.
 * With N, the call (and close) is made N times and one JSON line gives the
 * mean time per call (bench: the same loop with and without the probes).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
static char path32[256];	/* below 4 GiB in a non-PIE binary */

static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}
#endif

static long call(const char *kind, const char *file)
{
	long r;

	(void)file;
	if (!strcmp(kind, "openat"))
		r = syscall(SYS_openat, AT_FDCWD, file, O_RDONLY | O_CREAT, 0600);
#if defined(__x86_64__)	/* arm64 has neither open nor creat, nor int 0x80 */
	else if (!strcmp(kind, "open"))
		r = syscall(SYS_open, file, O_RDONLY | O_CREAT, 0600);
	else if (!strcmp(kind, "creat"))
		r = syscall(SYS_creat, file, 0600);
	/* i386 numbers: open 5, creat 8, openat 295. */
	else if (!strcmp(kind, "open32"))
		r = int80(5, (long)path32, O_RDONLY | O_CREAT, 0600);
	else if (!strcmp(kind, "openat32"))
		r = int80(295, AT_FDCWD, (long)path32, O_RDONLY | O_CREAT);
	else if (!strcmp(kind, "creat32"))
		r = int80(8, (long)path32, 0600, 0);
#endif
	else
		r = -1000;
	return r;
}

int main(int argc, char **argv)
{
	const char *kind = argc >= 3 ? argv[1] : "";
	const char *file = argc >= 3 ? argv[2] : "";
	long r, n = argc == 4 ? atol(argv[3]) : 0, i;
	struct timespec t0, t1;

	if (strlen(file) >= 256 || argc > 4)
		return 2;
#if defined(__x86_64__)
	strcpy(path32, file);
#endif
	if (n > 0) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < n; i++)
			if ((r = call(kind, file)) >= 0)
				close(r);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("{\"kind\": \"%s\", \"calls\": %ld, \"ns_per_call\": %.0f}\n", kind, n,
		       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
		return r == -1000 ? 2 : 0;
	}
	r = call(kind, file);
	if (r == -1000) {
		fprintf(stderr, "usage: ksites-drv open|openat|creat|open32|openat32|creat32 FILE [N]\n");
		return 2;
	}
	printf("%s %s: %ld\n", kind, file, r);
	return 0;
}
