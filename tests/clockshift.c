// SPDX-License-Identifier: MIT
/* clockshift.c - LD_PRELOAD shim for tests/test_agent.c t18: CLOCK_REALTIME
 * (clock_gettime, what kshield reads the wall clock with) moved by the
 * number of seconds in the file $KS_CLOCK_SHIFT_FILE, read at every call,
 * as if `date -s` had stepped the clock, without touching the host's clock
 * (which other processes share). Every other clock, sleep and timeout is
 * left alone; libfaketime also wraps usleep, epoll_wait and stat, and under
 * it the agent committed nothing for seconds after a step back. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int clock_gettime(clockid_t id, struct timespec *tp)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *path = getenv("KS_CLOCK_SHIFT_FILE");
	char buf[32] = "";
	int rc, fd;

	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, tp);
	if (rc || id != CLOCK_REALTIME || !path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return rc;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		tp->tv_sec += atol(buf);
	close(fd);
	return rc;
}
