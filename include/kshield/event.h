/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* event.h - the one definition of every record kshield's BPF side sends to
 * user space through the shared ring buffer, and of the counters beside it.
 *
 * Included by BPF programs (after vmlinux.h) and by user space (after
 * <linux/types.h>), so it uses only __u32/__u64 style types and fixed sizes.
 * Every record starts with struct ks_hdr; hdr.kind selects the payload and
 * hdr.size is the whole record's size, so readers can skip kinds they do not
 * know (an older agent reading a newer shield's events).
 */
#ifndef KSHIELD_EVENT_H
#define KSHIELD_EVENT_H

#define KS_COMM_LEN	16
#define KS_NAME_LEN	32	/* shield names */
#define KS_HOOK_LEN	32
#define KS_VARIANT_LEN	16
#define KS_PATH_LEN	256
#define KS_ARGV_LEN	512
#define KS_ALG_LEN	64	/* sockaddr_alg.salg_name */

/* Slots of the pinned ks_lost counters: more than there are kinds, so a
 * new kind does not change the layout of a map that outlives the agent. */
#define KS_LOST_SLOTS	32

/* Size of the ring buffer shared by the monitor and every shield. */
#define KS_RINGBUF_SIZE	(16u << 20)

enum ks_kind {
	KS_EV_EXEC = 1,
	KS_EV_EXIT,
	KS_EV_CONNECT,
	KS_EV_ACCEPT,
	KS_EV_LISTEN,
	KS_EV_SOCKET,
	KS_EV_USERNS,
	KS_EV_PRIVILEGE,
	KS_EV_BPF,
	KS_EV_SHIELD,
	KS_EV_ALG_BIND,
	KS_EV_TAMPER,
	KS_EV_FLOW,
	KS_EV_KIND_MAX,
};

/* Common header: who did it, and when (CLOCK_BOOTTIME ns; user space maps it
 * to CLOCK_REALTIME). exec_id ties the event to the exec of its process. */
struct ks_hdr {
	__u32 kind;
	__u32 size;
	__u64 ts_ns;
	__u32 pid;
	__u32 tgid;
	__u32 ppid;
	__u32 uid;
	__u32 euid;
	__u32 _pad;
	__u64 cgroup_id;
	__u64 exec_id;
	char comm[KS_COMM_LEN];
};

/* Verdicts of a shield hit. */
enum ks_verdict {
	KS_VERDICT_REFUSED = 0,	/* enforce mode: the call was refused */
	KS_VERDICT_AUDITED = 1,	/* audit mode: would have refused, allowed */
	KS_VERDICT_KILLED = 2,	/* enforce mode, last-resort variant: SIGKILL */
	KS_VERDICT_MAX,
};

struct ks_shield_event {
	struct ks_hdr hdr;
	char shield[KS_NAME_LEN];
	char hook[KS_HOOK_LEN];
	char variant[KS_VARIANT_LEN];
	__u32 verdict;		/* enum ks_verdict */
	__u32 mode;		/* enum ks_mode */
	__u64 args[4];		/* shield-chosen argument words; what they mean, per
				 * (shield, hook), the shield's object says
				 * (KSHIELD_ARGS; readers show them by name) */
};

/* ---- Monitor payloads (bpf/monitor.bpf.c) ----
 *
 * Exec ids: hdr.exec_id names the image a process is running. The monitor
 * assigns (CLOCK_BOOTTIME ns of the exec << 8) | cpu at sched_process_exec
 * and stores it in ks_exec_ids[tgid]; a forked child inherits its parent's
 * id until it execs. Two execs share an id only if they happen in the same
 * nanosecond of uptime on the same CPU number, so ids are unique within a
 * boot and, in practice, across boots in one store. 0 = unknown (a process
 * that started before the monitor was loaded).
 */

/* Flags of struct ks_exec_event. */
#define KS_EXEC_SETUID		(1u << 0)	/* euid != uid after exec */
#define KS_EXEC_SETGID		(1u << 1)	/* egid != gid after exec */
#define KS_EXEC_SECURE		(1u << 2)	/* bprm->secureexec: set-id or file caps */
#define KS_EXEC_ARGV_TRUNC	(1u << 3)	/* argv longer than KS_ARGV_LEN */
#define KS_EXEC_PATH_TRUNC	(1u << 4)

struct ks_exec_event {
	struct ks_hdr hdr;
	__u64 parent_exec_id;	/* image this process ran before (fork parent's) */
	__u32 flags;		/* KS_EXEC_* */
	__u32 argv_len;		/* bytes used in argv; args are NUL-separated */
	char path[KS_PATH_LEN];	/* as passed to execve (bprm->filename) */
	char argv[KS_ARGV_LEN];
};

struct ks_exit_event {
	struct ks_hdr hdr;
	__u32 exit_code;	/* status as wait() reports it (code << 8 | signal) */
	__u32 _pad;
	__u64 lifetime_ns;	/* since the process (thread group) started */
};

/* connect / accept / listen (TCP over IPv4 or IPv6). IPv4 addresses are
 * stored in the first 4 bytes of the 16-byte arrays. */
#define KS_CONN_ESTABLISHED	(1u << 0)	/* connect: handshake completed */
#define KS_CONN_NO_OWNER	(1u << 1)	/* process unknown (began before the monitor) */

struct ks_conn_event {
	struct ks_hdr hdr;
	__u16 family;		/* AF_INET / AF_INET6 */
	__u16 lport;		/* host order */
	__u16 rport;
	__u16 flags;		/* KS_CONN_* */
	__u8 laddr[16];
	__u8 raddr[16];
};

/* flow: the traffic of one TCP or UDP socket (IPv4/IPv6), sent when it
 * closes and, while it moves data, every mon_config.flow_interval_ns
 * (interim records carry the totals so far, not deltas: the newest record
 * of a flow is its total). Bytes are payload (TCP/UDP data, no headers;
 * TCP: the socket's own counters, each byte once however often it was
 * retransmitted; an interim TCP record's bytes_out is what was
 * acknowledged so far); packets are the segments that carry payload
 * (UDP: gso_segs; TCP: data_segs_out/in, retransmitted segments again;
 * pure ACKs and handshakes are not counted).
 * hdr is the owner: the process that connected, the listener that
 * accepted, or for UDP the first sender (else the process that closed
 * it). Addresses are those of the first packet (UDP: KS_FLOW_PEERS says
 * later packets had other peers). */
#define KS_FLOW_FINAL		(1u << 0)	/* socket closed: these are its totals */
#define KS_FLOW_NO_OWNER	(1u << 1)	/* process unknown */
#define KS_FLOW_PEERS		(1u << 2)	/* UDP: more than one remote address */
#define KS_FLOW_UNTRACKED	(1u << 3)	/* TCP: no state at close, or state made after
						 * payload moved (table full, or older than the
						 * monitor): start and owner may be unknown */

struct ks_flow_event {
	struct ks_hdr hdr;
	__u64 cookie;		/* socket cookie (unique per boot) */
	__u64 start_ns;		/* CLOCK_BOOTTIME of connect/accept or first packet */
	__u64 bytes_out, bytes_in;
	__u64 pkts_out, pkts_in;
	__u16 family;		/* AF_INET / AF_INET6 */
	__u16 lport;		/* host order */
	__u16 rport;
	__u8 proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	__u8 flags;		/* KS_FLOW_* */
	__u8 laddr[16];
	__u8 raddr[16];
};

/* socket(2) of a family (and for netlink, a protocol) the monitor watches. */
struct ks_socket_event {
	struct ks_hdr hdr;
	__s32 family;
	__s32 type;
	__s32 protocol;
	__s32 ret;		/* fd or -errno */
};

/* Creation of a user namespace (unshare/clone/clone3 with CLONE_NEWUSER)
 * by a process whose euid is not 0. */
struct ks_userns_event {
	struct ks_hdr hdr;
	__u64 flags;		/* clone flags */
	__u32 syscall;		/* KS_USERNS_UNSHARE / _CLONE / _CLONE3 */
	__s32 ret;
};
#define KS_USERNS_UNSHARE	1
#define KS_USERNS_CLONE		2
#define KS_USERNS_CLONE3	3

/* Credentials rose without a set-id / file-capability exec. */
struct ks_priv_event {
	struct ks_hdr hdr;
	__u32 old_uid, old_euid, old_suid;	/* the baseline (last exec) */
	__u32 new_uid, new_euid, new_suid;
	__u64 old_caps;				/* permitted at baseline */
	__u64 new_caps;				/* effective now */
	__u32 where;				/* KS_PRIV_AT_* */
	__u32 _pad;
};
#define KS_PRIV_AT_EXEC		1
#define KS_PRIV_AT_FORK		2
#define KS_PRIV_AT_SYSCALL	3	/* a watched syscall (socket, bind, ...) */
#define KS_PRIV_AT_EXIT		4

/* bpf(BPF_PROG_LOAD) by a process other than the agent. */
struct ks_bpf_event {
	struct ks_hdr hdr;
	__u32 cmd;
	__u32 prog_type;
	__u32 insn_cnt;
	__s32 ret;
	char prog_name[16];
};

/* bind(2) with an AF_ALG address: the algorithm type and name asked for. */
struct ks_alg_bind_event {
	struct ks_hdr hdr;
	char type[16];
	char name[KS_ALG_LEN];
	__u32 feat;
	__u32 mask;
	__s32 ret;
	__u32 _pad;
};

/* Someone other than the agent touched kshield's pins or links (the tamper
 * guard, bpf/guard.bpf.c, and the agent's own checks fill this). */
struct ks_tamper_event {
	struct ks_hdr hdr;
	__u32 op;		/* KS_TAMPER_* */
	__s32 ret;		/* what the caller got (-EPERM when refused) */
	char target[KS_PATH_LEN];
	__u32 id;		/* link or map id, or the pid signalled */
	__u32 arg;		/* signal number, bpf command, umount flags */
};
#define KS_TAMPER_UNLINK	1	/* unlink/rename under the bpffs root */
#define KS_TAMPER_DETACH	2	/* link detach/update */
#define KS_TAMPER_SIGNAL	3	/* signal to the agent */
#define KS_TAMPER_MAP		4	/* write to a kshield map */
#define KS_TAMPER_UMOUNT	5	/* umount of the bpffs holding the pins */
#define KS_TAMPER_PTRACE	6	/* ptrace / process_vm_* of the agent */
#define KS_TAMPER_REPAIRED	7	/* agent: pins/links found undone, restored */
#define KS_TAMPER_OPEN		8	/* writable open of a kshield map or link (by pin or id) */
#define KS_TAMPER_CGROUP	9	/* cgroup.kill/freeze/limits of the agent's cgroup */
#define KS_TAMPER_CONFIG	10	/* a weakening without a valid token (agent or kshield binary) */
#define KS_TAMPER_OOM		11	/* oom_score_adj / oom_adj of the agent */
#define KS_TAMPER_OP_MAX	12

/* What the agent publishes about itself, in the monitor's pinned
 * "mon_agent" array (entry 0), so `kshield stats` reads it while the agent
 * runs and after it is gone. */
struct ks_agent_stats {
	__u32 tgid;		/* running agent, 0 when it exited cleanly */
	__u32 _pad;
	__u64 received;		/* records read from the ring buffer */
	__u64 stored;		/* rows committed */
	__u64 unstored;		/* records that could not be stored */
	__u64 store_errors;	/* failed commits */
	__u64 updated_realtime_ns;
};

/* Programs of the monitor that have a twin (bpf/monitor.bpf.c MON_TWIN):
 * their slot in mon_busy, whose per-CPU value the twin fills when it did
 * a run the first had to skip. */
enum ks_mon_twin {
	KS_TWIN_EXEC,		/* mon_exec */
	KS_TWIN_FORK,		/* mon_fork */
	KS_TWIN_SOCK,		/* mon_sock_state */
	KS_TWINS
};

struct ks_mon_busy {
	__u32 busy;		/* 1 while the first program runs on this CPU */
	__u32 _pad;
	__u64 rescued;		/* runs its twin did in its place */
};

/* Monitor knobs in the pinned "mon_config" array (entry 0). */
/* ks_monitor_cfg.flags */
#define KS_MON_NO_FLOW	(1u << 0)	/* flow accounting off: no flow records at all */

struct ks_monitor_cfg {
	__u32 wakeup_every;	/* force a consumer wakeup every N events (per CPU) */
	__u32 flags;		/* KS_MON_*; was padding (same layout) */
	__u64 families;		/* bit per address family to report at socket() */
	__u32 netlink_protos;	/* bit per netlink protocol to report */
	__u32 _pad2;
	__u64 object_hash;	/* FNV-1a of the monitor object that is attached */
	__u64 flow_interval_ns;	/* interim flow records this often (0: 60 s) */
};

#endif /* KSHIELD_EVENT_H */
