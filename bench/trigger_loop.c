// SPDX-License-Identifier: MIT
/* trigger_loop.c - the enforcement check of bench/rated.sh's fault steps:
 * every INTERVAL_MS, a child calls socket(AF_RXRPC), which the
 * cve-2026-43500 shield refuses (tp variant: SIGKILL at sys_enter_socket;
 * lsm/fmod_ret: EPERM). The host has no AF_RXRPC, so without the shield the
 * call fails with EAFNOSUPPORT and the child exits 0: that is a lapse.
 *	trigger_loop INTERVAL_MS
 * Runs until SIGINT/SIGTERM, then prints "attempts N refused R lapses L".
 * Each lapse is printed at once with its CLOCK_REALTIME second. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 50, attempts = 0, refused = 0, lapses = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec iv = { ms / 1000, (ms % 1000) * 1000000 };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			int fd = socket(33 /* AF_RXRPC */, SOCK_DGRAM, 0);

			_exit(fd >= 0 ? 0 : errno == EPERM ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0)
			continue;
		attempts++;
		if ((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
		    (WIFEXITED(status) && WEXITSTATUS(status) == 1)) {
			refused++;
		} else {
			lapses++;
			printf("lapse at %ld\n", (long)time(NULL));
			fflush(stdout);
		}
		nanosleep(&iv, NULL);
	}
	printf("attempts %ld refused %ld lapses %ld\n", attempts, refused, lapses);
	return 0;
}
