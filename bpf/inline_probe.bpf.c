// SPDX-License-Identifier: GPL-2.0-only
/* inline_probe.bpf.c - count the hits of every copy of a function (a
 * uprobe or a kprobe at each), one counter per site (the link's BPF cookie), and remember the first
 * parameter's value at the last hit. With kill set, SIGKILL the caller
 * instead of letting the copy run: the uprobe-shield behaviour, used by
 * `kshield sites trace --kill` and the inline tests.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sites.bpf.h"

#ifndef SIGKILL
#define SIGKILL 9
#endif

char LICENSE[] SEC("license") = "GPL";

const volatile bool kill = false;
/* Count only this process (kprobes fire for everyone); 0: all. */
__u32 only_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_SITES_MAX);
	__type(key, __u32);
	__type(value, struct ks_site_hits);
} site_hits SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(site_hit)
{
	__u32 id = ks_site_id(ctx);
	struct ks_site_hits *h = bpf_map_lookup_elem(&site_hits, &id);
	__u64 v;

	if (only_tgid && (bpf_get_current_pid_tgid() >> 32) != only_tgid)
		return 0;
	if (h) {
		__sync_fetch_and_add(&h->hits, 1);
		if (!ks_site_arg(ctx, 0, &v)) {
			h->arg0 = v;
			h->arg0_ok = 1;
		}
	}
	if (kill)
		bpf_send_signal(SIGKILL);
	return 0;
}
