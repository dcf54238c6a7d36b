// SPDX-License-Identifier: MIT
/* trap_cost.c - baseline for bench/inline_sites.sh: the cost of one int3
 * trap delivered to user space as SIGTRAP, the mechanism under every uprobe
 * hit (a uprobe adds a second trap or an emulation step, and the BPF run).
 * Prints nanoseconds per trap. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void on_trap(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 20000;
	struct timespec a, b;

	signal(SIGTRAP, on_trap);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		__asm__ volatile("int3");
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
