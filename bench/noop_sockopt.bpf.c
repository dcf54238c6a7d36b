// SPDX-License-Identifier: GPL-2.0-only
/* A cgroup/setsockopt program that does nothing: the floor that any
 * sockopt shield pays, since the kernel's cgroup sockopt path (copying the
 * option, locking the socket) costs the same whatever the program does. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("cgroup/setsockopt")
int noop(struct bpf_sockopt *ctx)
{
	ctx->optlen = 0;
	return 1;
}
