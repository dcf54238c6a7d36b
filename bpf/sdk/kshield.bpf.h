/* SPDX-License-Identifier: GPL-2.0-only */
/* kshield.bpf.h - what every kshield BPF object shares: the ring buffer to
 * user space, per-kind loss counters, the exec-id table, and the helper that
 * fills the common event header.
 *
 * The maps are pinned by name (LIBBPF_PIN_BY_NAME under <bpffs>/kshield/maps)
 * so the monitor and every shield write into the same buffer, and events
 * produced while the agent is down stay there until it returns.
 */
#ifndef KSHIELD_BPF_H
#define KSHIELD_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <kshield/event.h>
#include "fit.bpf.h"

#ifndef EPERM
#define EPERM 1
#endif
#ifndef SIGKILL
#define SIGKILL 9
#endif

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, KS_RINGBUF_SIZE);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_events SEC(".maps");

/* Events that found the ring buffer full, per kind. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KS_LOST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_lost SEC(".maps");

/* tgid -> exec id of the process's current image; written by the monitor's
 * exec handler, read by everyone who fills a header. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_exec_ids SEC(".maps");

static __always_inline void ks_count_lost(__u32 kind)
{
	__u64 *n = bpf_map_lookup_elem(&ks_lost, &kind);

	if (n)
		(*n)++;
}

/* Reserve a record of @size for @kind, or count it lost and return NULL. */
static __always_inline void *ks_reserve(__u32 kind, __u32 size)
{
	void *e = bpf_ringbuf_reserve(&ks_events, size, 0);

	if (!e)
		ks_count_lost(kind);
	return e;
}

/* The header of the current task, without the time (ts_ns 0): for a header
 * kept to name the owner of a record sent later, with its own time. (A
 * clock read costs ~50-100 ns under a hypervisor's clock source.) */
static __always_inline void ks_fill_owner(struct ks_hdr *h, __u32 kind, __u32 size)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u64 ug = bpf_get_current_uid_gid();
	__u32 tgid = id >> 32;
	__u64 *exec_id;

	h->kind = kind;
	h->size = size;
	h->ts_ns = 0;
	h->pid = (__u32)id;
	h->tgid = tgid;
	h->ppid = BPF_CORE_READ(task, real_parent, tgid);
	h->uid = (__u32)ug;
	h->euid = BPF_CORE_READ(task, cred, euid.val);
	h->_pad = 0;
	h->cgroup_id = bpf_get_current_cgroup_id();
	exec_id = bpf_map_lookup_elem(&ks_exec_ids, &tgid);
	h->exec_id = exec_id ? *exec_id : 0;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

static __always_inline void ks_fill_hdr(struct ks_hdr *h, __u32 kind, __u32 size)
{
	ks_fill_owner(h, kind, size);
	h->ts_ns = bpf_ktime_get_boot_ns();
}

#endif /* KSHIELD_BPF_H */
