// SPDX-License-Identifier: MIT
/* syscall_loop.c - unrelated syscalls for bench/harm.sh: N calls of one
 * kind, the least ns per call of R runs printed. A syscall no shield cares
 * about must cost what it costs with nothing loaded.
 *   syscall_loop getppid|stat|rw512|rw4k|pipe512|pipexfer N [R]
 * rw512/rw4k: read from /dev/zero and write to /dev/null (one of each per
 * iteration). pipe512: write 512 B into a pipe and read them back (a pipe
 * shield's file_permission check runs on both). pipexfer: 512 B blocks
 * written into a pipe that a forked reader drains, what
 * `dd bs=512 | cat` does (ns per block).
 *   syscall_loop --floor1 getppid|... N [R]
 * the same with an empty BPF program on raw tracepoint sys_enter for the
 * whole run: the floor no syscall-entry shield can go below on a kernel
 * without kprobes or trampolines (raw bpf(2), no libbpf: the matrix's
 * guests run this static binary).
 *   syscall_loop int80
 * says whether this machine runs 32-bit syscalls ("yes"/"no"): a child
 * asks getpid through int $0x80 (x86-64; elsewhere "unknown"). A kernel
 * may have the 32-bit entry built in and still refuse it at run time. */
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void int80(void)
{
#if defined(__x86_64__)
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		long r;

		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");	/* i386 getpid */
		_exit(r == getpid() ? 0 : 1);
	}
	printf("%s\n", pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		       !WEXITSTATUS(status) ? "yes" : "no");
#else
	printf("unknown\n");
#endif
}

/* An empty program ("r0 = 0; exit") on sys_enter; its fd, or -1. */
static int floor1_attach(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int prog;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	a.insns = (unsigned long)insns;
	a.insn_cnt = 2;
	a.license = (unsigned long)"GPL";
	prog = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (prog < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (unsigned long)"sys_enter";
	a.raw_tracepoint.prog_fd = prog;
	return syscall(SYS_bpf, BPF_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
}

int main(int argc, char **argv)
{
	static char buf[4096];
	long n, r;
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
	double best = 0;
	struct stat st;
	size_t bs = 0;

	if (argc == 2 && !strcmp(argv[1], "int80")) {
		int80();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--floor1")) {
		if (floor1_attach() < 0) {
			perror("syscall_loop: an empty program on sys_enter (run as root, on a kernel with BPF)");
			return 1;
		}
		argv++;
		argc--;
	}
	n = argc > 2 ? atol(argv[2]) : 0;
	r = argc > 3 ? atol(argv[3]) : 3;
	if (argc < 3 || n <= 0 || zero < 0 || null < 0) {
		fprintf(stderr, "usage: syscall_loop [--floor1] getppid|stat|rw512|rw4k|pipe512|pipexfer N [RUNS]\n");
		return 2;
	}
	int p[2] = { -1, -1 }, xfer = !strcmp(argv[1], "pipexfer");

	if ((!strcmp(argv[1], "pipe512") || xfer) && pipe(p))
		return 1;
	if (!strcmp(argv[1], "rw512"))
		bs = 512;
	else if (!strcmp(argv[1], "rw4k"))
		bs = 4096;
	for (long k = 0; k < r; k++) {
		double t0 = now_ns(), t;
		pid_t pid = -1;
		int status;

		if (xfer) {
			pid = fork();
			if (pid == 0) {
				close(p[1]);
				for (long got = 0; got < n * 512;) {
					ssize_t m = read(p[0], buf, sizeof(buf));

					if (m <= 0)
						_exit(1);
					got += m;
				}
				_exit(0);
			}
		}
		for (long i = 0; i < n; i++) {
			if (xfer) {
				if (write(p[1], buf, 512) != 512)
					return 1;
			} else if (p[0] >= 0) {
				if (write(p[1], buf, 512) != 512 || read(p[0], buf, 512) != 512)
					return 1;
			} else if (bs) {
				if (read(zero, buf, bs) != (ssize_t)bs || write(null, buf, bs) != (ssize_t)bs)
					return 1;
			} else if (argv[1][0] == 's') {
				if (stat("/usr/bin/env", &st))
					return 1;
			} else {
				syscall(SYS_getppid);
			}
		}
		if (xfer && (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			     WEXITSTATUS(status)))
			return 1;
		t = (now_ns() - t0) / n;
		if (!k || t < best)
			best = t;
	}
	printf("%.1f\n", best);
	return 0;
}
