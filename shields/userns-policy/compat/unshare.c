/* unshare.c - the compat (32-bit) path of userns-policy, built static for
 * i386 and AArch32 and run by test.c on 64-bit guests after it dropped to
 * an unprivileged uid: unshare(CLONE_NEWUSER) through the 32-bit syscall
 * table, which the syscall tracepoints (the tp variant's 64-bit programs)
 * do not see.
 *
 * Exit (ks_test_run_compat): 0 the namespace was made, 1 refused (EPERM),
 * 5 any other error (stderr says what).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	if (!unshare(CLONE_NEWUSER))
		return 0;
	if (errno == EPERM)
		return 1;
	fprintf(stderr, "32-bit unshare(CLONE_NEWUSER): %s\n", strerror(errno));
	return 5;
}
