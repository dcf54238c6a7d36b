/* SPDX-License-Identifier: MIT */
/* monitor.h - load the BPF monitor (bpf/monitor.bpf.c) and pin it under
 * <bpffs root>/monitor/, or adopt the one already pinned there, so that it
 * keeps recording into the pinned ring buffer while no agent runs.
 *
 * Pins: monitor/link_<program> (one per attached program) and
 * monitor/mon_<map> (its own maps); the ring buffer, loss counters and exec
 * ids are the shared maps under <bpffs root>/maps.
 */
#ifndef KSHIELD_MONITOR_H
#define KSHIELD_MONITOR_H

#include <stdbool.h>
#include <linux/types.h>
#include <kshield/event.h>

struct ks_monitor {
	struct monitor_bpf *skel;	/* held only for links that cannot be pinned */
	int events_fd;			/* ks_events ring buffer */
	int lost_fd;			/* ks_lost */
	int config_fd;			/* mon_config */
	int agent_fd;			/* mon_agent */
	bool adopted;			/* found pinned and current: not reloaded */
	bool replaced;			/* pinned but stale or partial: reloaded */
	int nlinks;
	int unpinned;			/* links held by this process only (no perf links: < 5.15) */
	int flow_detached;		/* flow link pins dropped at adoption (flow off) */
	bool sys_fentry;		/* syscalls seen by fentry/fexit, not tracepoints */
	char sys_fentry_why[256];	/* why fentry was refused here, or "" */
	char migrated[512];		/* shared maps of an older shape set aside, or "" */
};

/* Whether the monitor sees its syscalls by fentry/fexit on their own
 * functions (kernels with BPF trampolines: no other syscall pays) rather
 * than by the syscall tracepoints; known once the monitor started. */
bool ks_monitor_sys_fentry(void);

/* Default socket families (and netlink protocols) reported at socket(). */
void ks_monitor_default_cfg(struct ks_monitor_cfg *cfg);

/* Adopt the pinned monitor when it is complete and built from this
 * binary's object; otherwise load, attach and pin a new one (new links are
 * attached before stale ones are unpinned). @cfg, when not NULL, is written
 * to mon_config. Returns 0 or a negative errno with a message recorded. */
int ks_monitor_start(struct ks_monitor *m, const struct ks_monitor_cfg *cfg);
/* Attach the flow accounting programs (default) or not; set before
 * ks_monitor_start(). An adopted monitor gains or loses them to match. */
void ks_monitor_set_flow(bool on);
/* Whether flows are accounted per send/receive call on this kernel (6.5+),
 * not per packet: nothing then runs for a connection that moves no data. */
bool ks_monitor_flow_per_call(void);
/* Per packet even where per call is possible (the 5.10-6.4 way, to test
 * it on a newer kernel); set before ks_monitor_start(). */
void ks_monitor_set_flow_per_packet(bool on);
/* Close our descriptors; the pinned monitor keeps running. */
void ks_monitor_close(struct ks_monitor *m);
/* Unpin the monitor's links and maps: it stops. */
int ks_monitor_remove(void);

/* Per-kind losses summed over CPUs, from the pinned ks_lost map and any
 * older-shape one set aside (shields loaded before still count there). */
int ks_monitor_read_lost(__u64 lost[KS_EV_KIND_MAX]);
/* Runs of the monitor's pinned programs that the kernel skipped (a run
 * that would have overlapped another on its CPU) and no twin did in their
 * place: records never made, summed, and into @which (when not NULL)
 * "program N, ..." for those that lost runs. */
int ks_monitor_read_missed(__u64 *missed, char *which, size_t len);
/* The agent's published counters from the pinned mon_agent map. */
int ks_monitor_read_agent(struct ks_agent_stats *st);
/* Flow table fill: connections tracked in the pinned mon_flows map and its
 * capacity (an LRU map: when full, the oldest flows are evicted). */
int ks_monitor_flow_fill(__u32 *used, __u32 *max);
/* Whether the monitor is pinned (and how many links). */
int ks_monitor_links(void);

/* The monitor's BPF object as built in (for `kshield btf min`). */
const void *ks_monitor_elf(size_t *len);

#endif
