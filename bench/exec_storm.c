// SPDX-License-Identifier: MIT
/* exec_storm.c - fork + exec /bin/true N times; prints wall and CPU seconds.
 * The monitor's cost on process creation (exec, exit, fork hooks).
 *	exec_storm N [RATE]
 * With RATE, the execs are paced at RATE a second (exec i starts at
 * i / RATE s; one that falls behind does not sleep): a steady load for
 * bench/rated.sh instead of a burst. */
#include <stdio.h>
#include <stdlib.h>
#include "pace.h"
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	double rate = argc > 2 ? atof(argv[2]) : 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		pace(&a, i, rate);
		pid_t pid = fork();

		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* wall seconds, then CPU seconds spent by the storm itself (user +
	 * system, where the kernel runs the monitor's programs): the CPU
	 * figure is what neighbours on a shared machine disturb least. */
	struct rusage me, kids;
	getrusage(RUSAGE_SELF, &me);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("%.4f %.4f %d\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
	       me.ru_utime.tv_sec + me.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec +
	       (me.ru_utime.tv_usec + me.ru_stime.tv_usec + kids.ru_utime.tv_usec +
		kids.ru_stime.tv_usec) / 1e6, (int)getpid());
	return 0;
}
