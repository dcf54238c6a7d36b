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
	__u64 args[4];		/* shield-chosen argument words */
};

#endif /* KSHIELD_EVENT_H */
