/* syscall_loop.c - unrelated syscalls for bench/harm.sh: N calls of one
 * kind, the least ns per call of R runs printed. A syscall no shield cares
 * about must cost what it costs with nothing loaded.
 *   syscall_loop getppid|stat|rw512|rw4k N [R]
 * rw512/rw4k: read from /dev/zero and write to /dev/null (one of each per
 * iteration). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	static char buf[4096];
	long n = argc > 2 ? atol(argv[2]) : 0, r = argc > 3 ? atol(argv[3]) : 3;
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
	double best = 0;
	struct stat st;
	size_t bs = 0;

	if (argc < 3 || n <= 0 || zero < 0 || null < 0) {
		fprintf(stderr, "usage: syscall_loop getppid|stat|rw512|rw4k N [RUNS]\n");
		return 2;
	}
	if (!strcmp(argv[1], "rw512"))
		bs = 512;
	else if (!strcmp(argv[1], "rw4k"))
		bs = 4096;
	for (long k = 0; k < r; k++) {
		double t0 = now_ns(), t;

		for (long i = 0; i < n; i++) {
			if (bs) {
				if (read(zero, buf, bs) != (ssize_t)bs || write(null, buf, bs) != (ssize_t)bs)
					return 1;
			} else if (argv[1][0] == 's') {
				if (stat("/usr/bin/env", &st))
					return 1;
			} else {
				syscall(SYS_getppid);
			}
		}
		t = (now_ns() - t0) / n;
		if (!k || t < best)
			best = t;
	}
	printf("%.1f\n", best);
	return 0;
}
