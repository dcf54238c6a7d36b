// SPDX-License-Identifier: MIT
/* guard_syscalls.c - the syscalls the tamper guard watches, in a loop, for
 * bench/guard.sh: "unlink" (create and unlink a file, N times: the
 * unlinkat tracepoint / inode_unlink hook), "kill" (kill(self, 0): the
 * kill tracepoint / task_kill hook; signal 0 is filtered first), "bpf"
 * (BPF_MAP_LOOKUP_ELEM on an array map: the bpf tracepoint / lsm hook).
 *
 *	guard_syscalls unlink|kill|bpf N
 */
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000;
	char path[64];

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "unlink")) {
		snprintf(path, sizeof(path), "/tmp/ks-guard-bench-%d", getpid());
		for (long i = 0; i < n; i++) {
			int fd = open(path, O_CREAT | O_WRONLY, 0600);

			if (fd < 0 || close(fd) || unlinkat(AT_FDCWD, path, 0))
				return 1;
		}
	} else if (!strcmp(argv[1], "kill")) {
		for (long i = 0; i < n; i++)
			if (kill(getpid(), 0))
				return 1;
	} else if (!strcmp(argv[1], "bpf")) {
		union bpf_attr a = { .map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
				     .value_size = 8, .max_entries = 1 };
		int fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
		__u32 key = 0;
		__u64 val;

		if (fd < 0)
			return 1;
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = (__u64)(unsigned long)&key;
		a.value = (__u64)(unsigned long)&val;
		for (long i = 0; i < n; i++)
			if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)))
				return 1;
	} else {
		return 2;
	}
	return 0;
}
