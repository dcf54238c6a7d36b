// SPDX-License-Identifier: MIT
/* rawtp_attach.c - attach a pinned program to a raw tracepoint and pin
 * the link, so that a bench can put a program on a hook and take it off
 * again (rm of the link pin detaches it):
 *	rawtp_attach PROG_PIN TRACEPOINT LINK_PIN
 * e.g. after `bpftool prog loadall noop_syscall.bpf.o DIR`:
 *	rawtp_attach DIR/noop_enter sys_enter DIR/link_enter */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

/* Raw bpf(2): the generic bench rule links no libbpf. */
static int sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

int main(int argc, char **argv)
{
	union bpf_attr a;
	int prog, link;

	if (argc != 4) {
		fprintf(stderr, "usage: rawtp_attach PROG_PIN TRACEPOINT LINK_PIN\n");
		return 2;
	}
	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)argv[1];
	prog = sys_bpf(BPF_OBJ_GET, &a);
	if (prog < 0) {
		fprintf(stderr, "rawtp_attach: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (uintptr_t)argv[2];
	a.raw_tracepoint.prog_fd = prog;
	link = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
	if (link < 0) {
		fprintf(stderr, "rawtp_attach: attach to %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)argv[3];
	a.bpf_fd = link;
	if (sys_bpf(BPF_OBJ_PIN, &a) < 0) {
		fprintf(stderr, "rawtp_attach: pin %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	return 0;
}
