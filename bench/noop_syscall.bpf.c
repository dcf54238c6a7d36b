// SPDX-License-Identifier: GPL-2.0-only
/* Empty programs on raw_tp/sys_enter and raw_tp/sys_exit: the floor that
 * any syscall hook pays on a kernel without BPF trampolines. Attaching
 * either sets the syscall-tracepoint flag on every thread, so each syscall
 * takes the slow entry and runs the program; nothing kshield does there
 * can cost less than this. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("raw_tp/sys_enter")
int noop_enter(void *ctx)
{
	return 0;
}

SEC("raw_tp/sys_exit")
int noop_exit(void *ctx)
{
	return 0;
}
