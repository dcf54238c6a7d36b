// SPDX-License-Identifier: GPL-2.0-only
/* monitor.bpf.c - kshield's monitor: what ran, what it connected to, and the
 * symptoms exploits leave (odd socket families, AF_ALG binds, unprivileged
 * user namespaces, BPF loads, credentials that rose without a set-id exec).
 *
 * Only hooks that exist on every kernel from 5.10 are required: tp_btf and
 * classic tracepoints (sched, sock, syscalls); where BPF trampolines exist
 * the watched syscalls are seen by fentry/fexit on their own functions
 * instead (MON_SYSCALL); no kprobes. A kernel without BTF of its own has
 * neither tp_btf nor trampolines: there the "__nobtf" programs take the
 * tp_btf ones' places at the same raw tracepoints, reading through probed
 * CO-RE reads against the BTF found for it (src/lib/kernel/btf_find.h).
 * Everything is filtered here so that the ring buffer carries only what
 * the store keeps.
 *
 * Records are submitted with BPF_RB_NO_WAKEUP and a forced wakeup every
 * mon_config.wakeup_every records per CPU: a wakeup is an inter-processor
 * interrupt, which costs more than the record itself (PLATFORM.md). The
 * agent drains the buffer on a short timer for the low-rate case.
 *
 * The shared maps (ks_events, ks_lost, ks_exec_ids) come from kshield.bpf.h;
 * the mon_* maps are the monitor's own, pinned by the agent under
 * <bpffs>/monitor/ so that a restarted agent adopts this instance.
 */
#include "kshield.bpf.h"
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#define AF_INET		2
#define AF_NETLINK	16
#define AF_INET6	10
#define AF_ALG		38
#define IPPROTO_TCP	6
#define CLONE_NEWUSER	0x10000000ULL
#define BPF_PROG_LOAD_CMD 5

/* TCP states (include/net/tcp_states.h) */
#define TCP_ESTABLISHED	1
#define TCP_SYN_SENT	2
#define TCP_SYN_RECV	3
#define TCP_CLOSE	7
#define TCP_LISTEN	10

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_monitor_cfg);
} mon_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_agent_stats);
} mon_agent SEC(".maps");

/* Credentials a thread group may legitimately return to: those it had at
 * its last exec (or when first seen). */
struct cred_base {
	__u32 uid, euid, suid;
	__u32 _pad;
	__u64 caps;		/* permitted */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct cred_base);
} mon_creds SEC(".maps");

/* A watched syscall's record, made at sys_enter and sent at sys_exit with
 * the result. Keyed by pid_tgid (one syscall at a time per thread). */
struct pending {
	__u32 kind;
	__u32 _pad;
	union {
		struct ks_socket_event sock;
		struct ks_userns_event userns;
		struct ks_bpf_event bpf;
		struct ks_alg_bind_event alg;
	};
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct pending);
} mon_pending SEC(".maps");

/* Socket cookie -> the header of the process that called connect(), from
 * connect to close (the handshake completes in softirq, where current is
 * anybody; the flow accounting names the owner from it). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct ks_hdr);
} mon_socks SEC(".maps");

/* Listening (family, port) -> the header of the process that listened;
 * accepted connections are attributed to it. */
struct listen_key {
	__u16 family;
	__u16 port;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct listen_key);
	__type(value, struct ks_hdr);
} mon_listeners SEC(".maps");

/* The header of the process listening on local @port (host order), or
 * NULL; an IPv4 connection may be a client of a dual-stack IPv6 listener. */
static __always_inline struct ks_hdr *listener_of(__u16 family, __u16 port)
{
	struct listen_key lk = { .family = family, .port = port };
	struct ks_hdr *h = bpf_map_lookup_elem(&mon_listeners, &lk);

	if (!h && family == AF_INET) {
		lk.family = AF_INET6;
		h = bpf_map_lookup_elem(&mon_listeners, &lk);
	}
	return h;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} mon_wake SEC(".maps");

/* Scratch for the exec record's previous id when the buffer is full. */
static __always_inline struct ks_monitor_cfg *cfg(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&mon_config, &zero);
}

/* Flow accounting off (--no-flow): its links are not attached, and TCP
 * close sends no record from the socket's counters either. */
static __always_inline bool no_flow(void)
{
	struct ks_monitor_cfg *c = cfg();

	return c && (c->flags & KS_MON_NO_FLOW);
}

/* Submit flags: wake the consumer only every wakeup_every-th record. */
static __always_inline __u64 wake_flags(void)
{
	struct ks_monitor_cfg *c = cfg();
	__u32 zero = 0, *n = bpf_map_lookup_elem(&mon_wake, &zero);
	__u32 every = c && c->wakeup_every ? c->wakeup_every : 1024;

	if (!n)
		return 0;
	if (++*n >= every) {
		*n = 0;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void submit(void *e)
{
	bpf_ringbuf_submit(e, wake_flags());
}

static __always_inline void output(void *data, __u32 size, __u32 kind)
{
	if (bpf_ringbuf_output(&ks_events, data, size, wake_flags()))
		ks_count_lost(kind);
}

/* ---- privilege rise ---- */

static __always_inline void read_creds(struct task_struct *t, struct cred_base *c,
				       bool effective)
{
	const struct cred *cr = BPF_CORE_READ(t, cred);

	c->uid = BPF_CORE_READ(cr, uid.val);
	c->euid = BPF_CORE_READ(cr, euid.val);
	c->suid = BPF_CORE_READ(cr, suid.val);
	c->_pad = 0;
	/* kernel_cap_t is u32[2] before 6.3 and one u64 since: the same eight
	 * little-endian bytes either way. */
	c->caps = 0;
	/* Capabilities inside a user namespace of one's own are not
	 * privilege over the system (that is the `userns` event's business). */
	if (BPF_CORE_READ(cr, user_ns, level) != 0)
		return;
	if (effective)
		bpf_probe_read_kernel(&c->caps, 8, &cr->cap_effective);
	else
		bpf_probe_read_kernel(&c->caps, 8, &cr->cap_permitted);
}

static __always_inline bool had_root(const struct cred_base *b)
{
	return b->uid == 0 || b->euid == 0 || b->suid == 0;
}

/* Compare the current thread's credentials with its group's baseline and
 * report a rise that no exec explains; the baseline then follows, so one
 * rise is reported once. */
static __always_inline void priv_check(__u32 where)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct cred_base *base, cur, perm;
	struct ks_priv_event *e;

	base = bpf_map_lookup_elem(&mon_creds, &tgid);
	read_creds(t, &cur, true);
	if (!base) {
		read_creds(t, &perm, false);
		bpf_map_update_elem(&mon_creds, &tgid, &perm, BPF_ANY);
		return;
	}
	if (!((cur.euid == 0 || cur.uid == 0) && !had_root(base)) &&
	    !(cur.caps & ~base->caps))
		return;
	e = ks_reserve(KS_EV_PRIVILEGE, sizeof(*e));
	if (e) {
		ks_fill_hdr(&e->hdr, KS_EV_PRIVILEGE, sizeof(*e));
		e->old_uid = base->uid;
		e->old_euid = base->euid;
		e->old_suid = base->suid;
		e->old_caps = base->caps;
		e->new_uid = cur.uid;
		e->new_euid = cur.euid;
		e->new_suid = cur.suid;
		e->new_caps = cur.caps;
		e->where = where;
		e->_pad = 0;
		submit(e);
	}
	read_creds(t, &perm, false);
	bpf_map_update_elem(&mon_creds, &tgid, &perm, BPF_ANY);
}

/* ---- a second program for runs the kernel would skip ---- */

/* The kernel runs a BPF program at most once per CPU at a time and skips a
 * run that would overlap (counted only in the program's recursion_misses).
 * Overlaps happen: a softirq's state change interrupts the program running
 * for a process's own (connect, close), and where tracepoints run their
 * programs preemptibly (7.x kernels) a task preempted inside a program
 * makes the next task on that CPU skip it. Under TCG that lost about 1
 * flow record in 1000, and in the guest flow check's burst of 1000 short
 * and 40 long connections on 7.3, 2.4% of all runs (mon_sock_state 54,
 * mon_flow_send 49, mon_fork 5, ...).
 * So the programs whose records matter most and run seldom (exec, fork, a
 * socket's state change) have a twin on the same hook, which does the
 * work only while the first is busy on this CPU (mon_busy): a run the
 * first had to skip. The twin costs every event one more program run
 * (about 70 ns here), so the per-call flow programs, which run for every
 * send and receive, have none. What is still skipped is counted: the agent
 * sums recursion_misses, less what the twins did, into the losses table as
 * 'missed'. (A variant that kept its CPU with bpf_preempt_disable, 6.10+,
 * was measured on 7.3 and skipped as often: not kept.) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KS_TWINS);
	__type(key, __u32);
	__type(value, struct ks_mon_busy);
} mon_busy SEC(".maps");

static __always_inline struct ks_mon_busy *twin_busy(__u32 slot)
{
	return bpf_map_lookup_elem(&mon_busy, &slot);
}

/* The program @name on @sec running @call, and @twin running it when
 * @name is busy on this CPU, counting it in .rescued (the agent:
 * lost = @name's recursion_misses - rescued). Only @name writes .busy and
 * only the twin .rescued, and no two runs of one program overlap on a
 * CPU: no atomics needed. */
#define MON_TWIN_AS(sec, name, twin, slot, call, args...)			\
SEC(sec)									\
int BPF_PROG(name, args)							\
{										\
	struct ks_mon_busy *b = twin_busy(slot);				\
										\
	if (b)									\
		b->busy = 1;							\
	call;									\
	if (b)									\
		b->busy = 0;							\
	return 0;								\
}										\
										\
SEC(sec)									\
int BPF_PROG(twin, args)							\
{										\
	struct ks_mon_busy *b = twin_busy(slot);				\
										\
	if (b && b->busy) {							\
		b->rescued++;							\
		call;								\
	}									\
	return 0;								\
}

/* @name with its twin @name_twin */
#define MON_TWIN(sec, name, slot, call, args...)				\
	MON_TWIN_AS(sec, name, name##_twin, slot, call, args)

/* The same pair for a kernel without BTF of its own, at the raw
 * tracepoint: name__nobtf and name_twin__nobtf (both end in the suffix
 * the loader's choice goes by, ks_fit_kernel_btf). */
#define MON_TWIN_NOBTF(tp, name, slot, call, args...)				\
	MON_TWIN_AS("raw_tp/" tp, name##__nobtf, name##_twin__nobtf, slot, call, args)

/* ---- exec / fork / exit ---- */

/* Exec and fork, each at its tp_btf tracepoint (with its twin, MON_TWIN)
 * and, for kernels without BTF of their own (src/lib/kernel/btf_find.h),
 * at the same raw tracepoint ("__nobtf", with its twin): every read is a
 * probed CO-RE read, so one body serves both. */
static __always_inline void on_exec(struct task_struct *p, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 id = (bpf_ktime_get_boot_ns() << 8) | (bpf_get_smp_processor_id() & 0xff);
	struct cred_base cur, *base;
	__u64 prev = 0, *prevp, start, end, n;
	struct ks_exec_event *e;
	bool secure;
	long len;

	prevp = bpf_map_lookup_elem(&ks_exec_ids, &tgid);
	if (prevp)
		prev = *prevp;
	bpf_map_update_elem(&ks_exec_ids, &tgid, &id, BPF_ANY);

	/* A rise that shows up at a plain exec happened before it. */
	secure = BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec);
	base = bpf_map_lookup_elem(&mon_creds, &tgid);
	if (base && !secure)
		priv_check(KS_PRIV_AT_EXEC);
	read_creds(p, &cur, false);
	bpf_map_update_elem(&mon_creds, &tgid, &cur, BPF_ANY);

	e = ks_reserve(KS_EV_EXEC, sizeof(*e));
	if (!e)
		return;
	ks_fill_hdr(&e->hdr, KS_EV_EXEC, sizeof(*e));
	e->parent_exec_id = prev;
	e->flags = secure ? KS_EXEC_SECURE : 0;
	{
		const struct cred *cr = BPF_CORE_READ(p, cred);

		if (BPF_CORE_READ(cr, euid.val) != BPF_CORE_READ(cr, uid.val))
			e->flags |= KS_EXEC_SETUID;
		if (BPF_CORE_READ(cr, egid.val) != BPF_CORE_READ(cr, gid.val))
			e->flags |= KS_EXEC_SETGID;
	}
	len = bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename));
	if (len < 0)
		e->path[0] = '\0';
	else if (len >= (long)sizeof(e->path))
		e->flags |= KS_EXEC_PATH_TRUNC;
	start = BPF_CORE_READ(p, mm, arg_start);
	end = BPF_CORE_READ(p, mm, arg_end);
	n = end > start ? end - start : 0;
	if (n > KS_ARGV_LEN) {
		n = KS_ARGV_LEN;
		e->flags |= KS_EXEC_ARGV_TRUNC;
	}
	barrier_var(n);
	if (n > KS_ARGV_LEN)
		n = KS_ARGV_LEN;
	if (n && bpf_probe_read_user(e->argv, n, (void *)start))
		n = 0;
	e->argv_len = n;
	submit(e);
}

MON_TWIN("tp_btf/sched_process_exec", mon_exec, KS_TWIN_EXEC, on_exec(p, bprm),
	 struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)

MON_TWIN_NOBTF("sched_process_exec", mon_exec, KS_TWIN_EXEC, on_exec(p, bprm),
	       struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)

static __always_inline void on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ctgid = BPF_CORE_READ(child, tgid), ptgid = BPF_CORE_READ(parent, tgid);
	struct cred_base c;
	__u64 *id;

	if (BPF_CORE_READ(child, pid) != ctgid)
		return;	/* a thread: same process, same image */
	priv_check(KS_PRIV_AT_FORK);
	id = bpf_map_lookup_elem(&ks_exec_ids, &ptgid);
	if (id)
		bpf_map_update_elem(&ks_exec_ids, &ctgid, id, BPF_ANY);
	read_creds(child, &c, false);
	bpf_map_update_elem(&mon_creds, &ctgid, &c, BPF_ANY);
}

MON_TWIN("tp_btf/sched_process_fork", mon_fork, KS_TWIN_FORK, on_fork(parent, child),
	 struct task_struct *parent, struct task_struct *child)

MON_TWIN_NOBTF("sched_process_fork", mon_fork, KS_TWIN_FORK, on_fork(parent, child),
	       struct task_struct *parent, struct task_struct *child)

SEC("tracepoint/sched/sched_process_exit")
int mon_exit(void *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct ks_exit_event *e;

	/* Only the last thread of the group: signal->live already dropped. */
	if (BPF_CORE_READ(t, signal, live.counter) != 0)
		return 0;
	priv_check(KS_PRIV_AT_EXIT);
	e = ks_reserve(KS_EV_EXIT, sizeof(*e));
	if (e) {
		ks_fill_hdr(&e->hdr, KS_EV_EXIT, sizeof(*e));
		e->exit_code = BPF_CORE_READ(t, exit_code);
		e->_pad = 0;
		e->lifetime_ns = e->hdr.ts_ns - BPF_CORE_READ(t, group_leader, start_boottime);
		submit(e);
	}
	bpf_map_delete_elem(&ks_exec_ids, &tgid);
	bpf_map_delete_elem(&mon_creds, &tgid);
	return 0;
}

/* ---- watched syscalls: record at enter, send with the result at exit ---- */

struct sys_enter_ctx {
	__u64 _ent;
	long nr;
	unsigned long args[6];
};

struct sys_exit_ctx {
	__u64 _ent;
	long nr;
	long ret;
};

static __always_inline struct pending *pending_new(__u32 kind)
{
	static const struct pending zero;
	__u64 key = bpf_get_current_pid_tgid();
	struct pending *p;

	bpf_map_update_elem(&mon_pending, &key, &zero, BPF_ANY);
	p = bpf_map_lookup_elem(&mon_pending, &key);
	if (p)
		p->kind = kind;
	return p;
}

/* Send the pending record of @kind, if this thread has one, with @ret. */
static __always_inline void pending_send(__u32 kind, long ret)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&mon_pending, &key);

	if (!p || p->kind != kind)
		return;
	switch (kind) {
	case KS_EV_SOCKET:
		p->sock.ret = ret;
		output(&p->sock, sizeof(p->sock), kind);
		break;
	case KS_EV_USERNS:
		p->userns.ret = ret;
		output(&p->userns, sizeof(p->userns), kind);
		break;
	case KS_EV_BPF:
		p->bpf.ret = ret;
		output(&p->bpf, sizeof(p->bpf), kind);
		break;
	case KS_EV_ALG_BIND:
		p->alg.ret = ret;
		output(&p->alg, sizeof(p->alg), kind);
		break;
	}
	bpf_map_delete_elem(&mon_pending, &key);
}

/* fentry/fexit on the syscall's own function (x86-64 __x64_sys_*, arm64
 * __arm64_sys_*): its one argument, the saved registers, is not read
 * through the context (on 5.10 its BTF type is a bare forward declaration,
 * which the verifier refuses to let a program read), but from the task's
 * own saved frame (ks_syscall_regs); the return value is the context's
 * second word. */
#if defined(__TARGET_ARCH_arm64)
#define MON_SYS "__arm64_sys_"
#else
#define MON_SYS "__x64_sys_"
#endif

/* Each watched syscall two ways, with the same bodies: the syscall
 * tracepoints (mon_<sc>_enter/_exit), which every syscall of every task
 * pays for once one is attached (the syscall slow path), and fentry/fexit
 * on the syscall's own function (mon_<sc>_fentry/_fexit), which only its
 * calls pay for; the loader takes fentry where the kernel has BPF
 * trampolines (src/lib/monitor/monitor.c). */
#define MON_SYSCALL(sc, kind)						\
SEC("tracepoint/syscalls/sys_enter_" #sc)				\
int mon_##sc##_enter(struct sys_enter_ctx *ctx)				\
{									\
	sc##_enter(ctx->args);						\
	return 0;							\
}									\
SEC("tracepoint/syscalls/sys_exit_" #sc)				\
int mon_##sc##_exit(struct sys_exit_ctx *ctx)				\
{									\
	pending_send(kind, ctx->ret);					\
	return 0;							\
}									\
SEC("fentry/" MON_SYS #sc)						\
int mon_##sc##_fentry(unsigned long long *ctx)				\
{									\
	struct pt_regs *regs = ks_syscall_regs();			\
	unsigned long a[6];						\
									\
	if (!regs)							\
		return 0;						\
	KS_SYS_ARGS(regs, a);						\
	sc##_enter(a);							\
	return 0;							\
}									\
SEC("fexit/" MON_SYS #sc)						\
int mon_##sc##_fexit(unsigned long long *ctx)				\
{									\
	pending_send(kind, (long)ctx[1]);				\
	return 0;							\
}

static __always_inline void socket_enter(const unsigned long *args)
{
	struct ks_monitor_cfg *c = cfg();
	int family = args[0], type = args[1], proto = args[2];
	struct pending *p;

	if (!c || family < 0 || family >= 64 || !(c->families & (1ULL << family)))
		return;
	if (family == AF_NETLINK && (proto < 0 || proto >= 32 ||
				     !(c->netlink_protos & (1u << proto))))
		return;
	priv_check(KS_PRIV_AT_SYSCALL);
	p = pending_new(KS_EV_SOCKET);
	if (!p)
		return;
	ks_fill_hdr(&p->sock.hdr, KS_EV_SOCKET, sizeof(p->sock));
	p->sock.family = family;
	p->sock.type = type;
	p->sock.protocol = proto;
}
MON_SYSCALL(socket, KS_EV_SOCKET)

/* struct sockaddr_alg */
struct ks_sockaddr_alg {
	__u16 family;
	__u8 type[14];
	__u32 feat;
	__u32 mask;
	__u8 name[64];
};

static __always_inline void bind_enter(const unsigned long *args)
{
	const void *uaddr = (const void *)args[1];
	struct pending *p;
	__u16 family = 0;

	if (bpf_probe_read_user(&family, sizeof(family), uaddr) || family != AF_ALG)
		return;
	priv_check(KS_PRIV_AT_SYSCALL);
	p = pending_new(KS_EV_ALG_BIND);
	if (!p)
		return;
	ks_fill_hdr(&p->alg.hdr, KS_EV_ALG_BIND, sizeof(p->alg));
	bpf_probe_read_user(p->alg.type, 14, uaddr + 2);
	bpf_probe_read_user(&p->alg.feat, 4, uaddr + 16);
	bpf_probe_read_user(&p->alg.mask, 4, uaddr + 20);
	bpf_probe_read_user(p->alg.name, KS_ALG_LEN, uaddr + 24);
	p->alg.type[14] = p->alg.type[15] = 0;
	p->alg.name[KS_ALG_LEN - 1] = 0;
}
MON_SYSCALL(bind, KS_EV_ALG_BIND)

static __always_inline void userns_enter(__u64 flags, __u32 sc)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct pending *p;

	if (!(flags & CLONE_NEWUSER) || BPF_CORE_READ(t, cred, euid.val) == 0)
		return;
	priv_check(KS_PRIV_AT_SYSCALL);
	p = pending_new(KS_EV_USERNS);
	if (!p)
		return;
	ks_fill_hdr(&p->userns.hdr, KS_EV_USERNS, sizeof(p->userns));
	p->userns.flags = flags;
	p->userns.syscall = sc;
}

static __always_inline void unshare_enter(const unsigned long *args)
{
	userns_enter(args[0], KS_USERNS_UNSHARE);
}
MON_SYSCALL(unshare, KS_EV_USERNS)

/* The exit also runs in the child (ret 0) where the tracepoint sees it,
 * which has no pending record. */
static __always_inline void clone_enter(const unsigned long *args)
{
	userns_enter(args[0], KS_USERNS_CLONE);
}
MON_SYSCALL(clone, KS_EV_USERNS)

static __always_inline void clone3_enter(const unsigned long *args)
{
	__u64 flags = 0;

	bpf_probe_read_user(&flags, sizeof(flags), (void *)args[0]);
	userns_enter(flags, KS_USERNS_CLONE3);
}
MON_SYSCALL(clone3, KS_EV_USERNS)

static __always_inline void bpf_enter(const unsigned long *args)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	const union bpf_attr *uattr = (const void *)args[1];
	struct ks_agent_stats *agent;
	struct pending *p;

	if (args[0] != BPF_PROG_LOAD_CMD)
		return;
	/* The agent names itself by tgid in mon_agent: comm can be forged. */
	agent = bpf_map_lookup_elem(&mon_agent, &zero);
	if (agent && agent->tgid == tgid)
		return;
	priv_check(KS_PRIV_AT_SYSCALL);
	p = pending_new(KS_EV_BPF);
	if (!p)
		return;
	ks_fill_hdr(&p->bpf.hdr, KS_EV_BPF, sizeof(p->bpf));
	p->bpf.cmd = args[0];
	bpf_probe_read_user(&p->bpf.prog_type, 4, &uattr->prog_type);
	bpf_probe_read_user(&p->bpf.insn_cnt, 4, &uattr->insn_cnt);
	bpf_probe_read_user(p->bpf.prog_name, 16, &uattr->prog_name);
	p->bpf.prog_name[15] = 0;
}
MON_SYSCALL(bpf, KS_EV_BPF)

/* Field @f of kernel object @p: read in place where @p is the kernel's
 * typed pointer (tp_btf and the helpers that return one), by a probed
 * CO-RE read where it is a plain address (@probed: a raw tracepoint's
 * argument, the "__nobtf" programs). @probed is a constant at every call,
 * so each program has only its own way compiled in. */
#define KS_RD(probed, p, f) ((probed) ? BPF_CORE_READ(p, f) : (p)->f)

static __always_inline void sk_addrs(const struct sock *sk, __u16 *family, __u16 *lport,
				     __u16 *rport, __u8 *laddr, __u8 *raddr, const bool probed)
{
	__u16 fam = KS_RD(probed, sk, __sk_common.skc_family);

	*family = fam;
	/* inet_sport, not inet_num: at TCP_CLOSE the port is released */
	*lport = bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
	*rport = bpf_ntohs(KS_RD(probed, sk, __sk_common.skc_dport));
	__builtin_memset(laddr, 0, 16);
	__builtin_memset(raddr, 0, 16);
	if (fam == AF_INET) {
		*(__u32 *)laddr = KS_RD(probed, sk, __sk_common.skc_rcv_saddr);
		*(__u32 *)raddr = KS_RD(probed, sk, __sk_common.skc_daddr);
	} else {
		bpf_probe_read_kernel(laddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_probe_read_kernel(raddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
}

/* The 5-tuple of @sk into a record @e with family, lport, rport, laddr
 * and raddr (struct ks_conn_event, struct ks_flow_event); @probed as for
 * KS_RD. */
#define SK_ADDRS(sk, e, probed)							\
	sk_addrs(sk, &(e)->family, &(e)->lport, &(e)->rport, (e)->laddr, (e)->raddr, probed)

/* The cookie of @sk: from the helper where the program has the typed
 * pointer (ks_sock_cookie); where it has a plain address, the one the
 * kernel generated: a connecting socket has it from mon_cookie4/6__nobtf,
 * any other from its first packet (bpf_get_socket_cookie in
 * monitor_flow.bpf.h's per-packet programs), 0 before. */
static __always_inline __u64 sk_cookie(const struct sock *sk, const bool probed)
{
	if (probed)
		return BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);
	return ks_sock_cookie(sk);
}

/* ---- flow: bytes and packets per socket ---- */

#include "monitor_flow.bpf.h"

/* ---- TCP: connect / accept / listen from socket state changes ---- */

/* A BTF tracepoint (tp_btf), not the classic one: the socket itself gives
 * its cookie, which keys the connecting process's header in mon_socks for
 * the connection's life (the flow accounting takes its owner from there).
 * Without the kernel's own BTF, the same raw tracepoint (__nobtf): its
 * first argument is the socket too, read by probed reads. */

/* Emit a connection record whose process header is @owner (or unknown). */
static __always_inline void conn_emit(const struct sock *sk, __u32 kind,
				      const struct ks_hdr *owner, __u16 flags, const bool probed)
{
	struct ks_conn_event *e = ks_reserve(kind, sizeof(*e));

	if (!e)
		return;
	if (owner) {
		e->hdr = *owner;
	} else {
		__builtin_memset(&e->hdr, 0, sizeof(e->hdr));
		flags |= KS_CONN_NO_OWNER;
	}
	e->hdr.kind = kind;
	e->hdr.size = sizeof(*e);
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	e->flags = flags;
	SK_ADDRS(sk, e, probed);
	submit(e);
}

static __always_inline void sock_state(const struct sock *sk, int o, int n, const bool probed)
{
	struct listen_key lk = {};
	struct ks_hdr *h, hdr;
	__u64 cookie;

	if (KS_RD(probed, sk, sk_protocol) != IPPROTO_TCP)
		return;
	if (o == TCP_CLOSE && n == TCP_SYN_SENT) {
		/* connect(): process context; completed later in softirq */
		priv_check(KS_PRIV_AT_SYSCALL);
		/* the record gets its time when sent */
		ks_fill_owner(&hdr, KS_EV_CONNECT, sizeof(struct ks_conn_event));
		cookie = sk_cookie(sk, probed);
		/* before 5.12 no cookie yet: the connect goes without owner */
		if (cookie)
			bpf_map_update_elem(&mon_socks, &cookie, &hdr, BPF_ANY);
	} else if (o == TCP_SYN_SENT) {
		cookie = sk_cookie(sk, probed);
		h = bpf_map_lookup_elem(&mon_socks, &cookie);
		conn_emit(sk, KS_EV_CONNECT, h, n == TCP_ESTABLISHED ? KS_CONN_ESTABLISHED : 0,
			  probed);
		/* kept to the close only as the owner of its flow */
		if (h && (n != TCP_ESTABLISHED || no_flow()))
			bpf_map_delete_elem(&mon_socks, &cookie);
	} else if (n == TCP_LISTEN) {
		struct ks_conn_event *e;

		priv_check(KS_PRIV_AT_SYSCALL);
		e = ks_reserve(KS_EV_LISTEN, sizeof(*e));
		if (!e)
			return;
		ks_fill_hdr(&e->hdr, KS_EV_LISTEN, sizeof(*e));
		e->flags = 0;
		SK_ADDRS(sk, e, probed);
		lk.family = e->family;
		lk.port = e->lport;
		/* from the stack: 6.1 refuses ring buffer memory as a map value */
		hdr = e->hdr;
		bpf_map_update_elem(&mon_listeners, &lk, &hdr, BPF_ANY);
		submit(e);
	} else if (o == TCP_LISTEN && n == TCP_CLOSE) {
		/* The entry stays (LRU): connections it accepted still name it
		 * as their owner when their first data comes after it closed
		 * (inetd-style servers), and a new listener replaces it. */
	} else if (o == TCP_SYN_RECV && n == TCP_ESTABLISHED) {
		h = listener_of(KS_RD(probed, sk, __sk_common.skc_family),
				KS_RD(probed, sk, __sk_common.skc_num));
		conn_emit(sk, KS_EV_ACCEPT, h, 0, probed);
	} else if (n == TCP_CLOSE && o != TCP_LISTEN) {
		/* a connection ends: its flow's totals, its owner forgotten */
		if (no_flow())
			return;
		cookie = sk_cookie(sk, probed);
		flow_tcp_close(sk, cookie, probed);
		/* Only the connecting end has an entry. A delete locks its
		 * bucket with interrupts off even when it finds nothing
		 * (under a hypervisor that is the dearest part): look first. */
		if (bpf_map_lookup_elem(&mon_socks, &cookie))
			bpf_map_delete_elem(&mon_socks, &cookie);
	}
}

MON_TWIN("tp_btf/inet_sock_set_state", mon_sock_state, KS_TWIN_SOCK, sock_state(sk, o, n, false),
	 const struct sock *sk, int o, int n)

MON_TWIN_NOBTF("inet_sock_set_state", mon_sock_state, KS_TWIN_SOCK, sock_state(sk, o, n, true),
	       const struct sock *sk, int o, int n)

/* Without the kernel's own BTF the state change reads the cookie the
 * kernel generated (sk_cookie), which a socket has only once something
 * asked for it: these ask at connect(), before its change to SYN_SENT, so
 * that the connecting process is found at the handshake's end and by the
 * flow accounting. Only there: elsewhere the helper generates it. */
SEC("cgroup/connect4")
int mon_cookie4__nobtf(struct bpf_sock_addr *ctx)
{
	bpf_get_socket_cookie(ctx);
	return 1;
}

SEC("cgroup/connect6")
int mon_cookie6__nobtf(struct bpf_sock_addr *ctx)
{
	bpf_get_socket_cookie(ctx);
	return 1;
}
