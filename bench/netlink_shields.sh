#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cost of the tp (syscall tracepoint) variant of the netlink-parsing shields
# (cve-2024-1086, cve-2023-32233, cve-2022-2588) on hosts without BPF LSM:
# they watch write/writev/sendto/sendmsg/sendmmsg of every process, so every
# write() pays for the fd lookup even when it is not a netlink send. Figures
# are CPU time per call (CLOCK_THREAD_CPUTIME_ID, median of 5 runs of 1M
# calls), with and without the shields, alternated over 3 rounds in the same
# run, printed as ratios. The LSM variants cost nothing outside netlink sends.
set -euo pipefail
cd "$(dirname "$0")/.."
KS=${KSHIELD:-build/kshield}
export KSHIELD_BPFFS=/sys/fs/bpf/ks-bench-netlink-$$
SHIELDS="cve-2024-1086 cve-2023-32233 cve-2022-2588"
tmp=$(mktemp -d)
trap 'for s in $SHIELDS; do $KS shield unload $s >/dev/null 2>&1 || true; done; rm -rf $tmp $KSHIELD_BPFFS' EXIT

cat > $tmp/loop.c <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int fd = open("/dev/null", O_WRONLY), n = 1000000, w = !strcmp(argv[1], "write");
	struct timespec a, z;
	char b[16] = { 0 };

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (int i = 0; i < n; i++)
		if (w ? write(fd, b, sizeof(b)) < 0 : syscall(SYS_getppid) < 0)
			return 1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &z);
	printf("%.1f\n", ((z.tv_sec - a.tv_sec) * 1e9 + (z.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
C
cc -O2 -o $tmp/loop $tmp/loop.c
med() { for i in 1 2 3 4 5; do $tmp/loop $1; done | sort -n | sed -n 3p; }

for call in write getppid; do
	for r in 1 2 3; do
		base=$(med $call)
		for s in $SHIELDS; do
			$KS shield load build/shields/$s.bpf.o >/dev/null
		done
		with=$(med $call)
		for s in $SHIELDS; do $KS shield unload $s; done
		variant=tp
		printf '%-8s round %d: %7.1f ns/call without, %7.1f with the three shields (%s): ratio %.2f\n' \
			$call $r "$base" "$with" $variant "$(echo "scale=3; $with/$base" | bc)"
	done
done
