/* ksites-drv.c - drive one path into the kernel's do_sys_open from user
 * space, for tests/guest/kernel-sites.sh: each PATH kind reaches a different
 * copy (inlined into its syscall, or the out-of-line one).
 *
 *	ksites-drv KIND FILE	KIND := open | openat | creat | open32 | openat32 | creat32
 *
 * The *32 kinds enter through int 0x80 (the ia32 syscall table: the compat
 * copies); FILE is copied below 4 GiB for them (a static, non-PIE binary's
 * .bss). Built static (gcc -static -no-pie): the guest has no libc.
 * Exit 0 when the call returned (any result; it is printed), 2 on usage.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static char path32[256];	/* below 4 GiB in a non-PIE binary */

#if defined(__x86_64__)
static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}
#endif

int main(int argc, char **argv)
{
	const char *kind = argc == 3 ? argv[1] : "";
	const char *file = argc == 3 ? argv[2] : "";
	long r;

	if (strlen(file) >= sizeof(path32))
		return 2;
	strcpy(path32, file);
	if (!strcmp(kind, "open"))
		r = syscall(SYS_open, file, O_RDONLY | O_CREAT, 0600);
	else if (!strcmp(kind, "openat"))
		r = syscall(SYS_openat, AT_FDCWD, file, O_RDONLY | O_CREAT, 0600);
	else if (!strcmp(kind, "creat"))
		r = syscall(SYS_creat, file, 0600);
#if defined(__x86_64__)
	/* i386 numbers: open 5, creat 8, openat 295. */
	else if (!strcmp(kind, "open32"))
		r = int80(5, (long)path32, O_RDONLY | O_CREAT, 0600);
	else if (!strcmp(kind, "openat32"))
		r = int80(295, AT_FDCWD, (long)path32, O_RDONLY | O_CREAT);
	else if (!strcmp(kind, "creat32"))
		r = int80(8, (long)path32, 0600, 0);
#endif
	else {
		fprintf(stderr, "usage: ksites-drv open|openat|creat|open32|openat32|creat32 FILE\n");
		return 2;
	}
	printf("%s %s: %ld\n", kind, file, r);
	return 0;
}
