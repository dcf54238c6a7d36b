/* userns-policy: unprivileged user namespaces only for allow-listed
 * binaries. Many kernel LPEs (nf_tables, x_tables, fsconfig, cls_route,
 * DirtyFrag ESP, ...) start with an unprivileged user gaining CAP_SYS_ADMIN
 * or CAP_NET_ADMIN in a new user namespace. Refusing all user namespaces
 * breaks rootless containers, browsers' sandboxes and flatpak; this shield
 * refuses them for every binary except those on an allow-list identified
 * by executable inode and file name (never by comm, which any process sets
 * itself).
 *
 * Root in the initial user namespace is not restricted (it needs no user
 * namespace to reach those code paths). The allow-list lives in a map
 * pinned by name, filled with bpftool (see allow.sh and README.md).
 */
#include "shield.bpf.h"
#include "allow.h"

KSHIELD_NAME("userns-policy");
KSHIELD_META(summary, "unprivileged user namespace creation only for allow-listed binaries (by executable inode and name)");
KSHIELD_META(refs, "https://lwn.net/Articles/903580/");
KSHIELD_META(hunt, "SELECT * FROM events WHERE ts BETWEEN :since AND :until AND (kind = 'userns' OR (kind = 'shield' AND shield = 'userns-policy')) ORDER BY ts");
KSHIELD_VARIANTS("lsm,tp");
KSHIELD_META(variant_lsm, "lsm/userns_create (6.1+): EPERM for callers other than root of the initial namespace whose executable is not in maps/ks_userns_allow");
KSHIELD_META(variant_tp, "fallback: SIGKILL at sys_enter_unshare/clone/clone3 with CLONE_NEWUSER for the same callers (io_uring cannot create user namespaces; the check reads clone3's flags from user memory)");

#define CLONE_NEWUSER	0x10000000

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct ks_userns_allow_key);
	__type(value, struct ks_userns_allow_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_userns_allow SEC(".maps");

/* Scratch for the executable's name (too big for the stack next to the
 * event code on 6.1). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_userns_allow_val);
} name_buf SEC(".maps");

/* May the current task create a user namespace? Fills @key for the event. */
static __always_inline bool allowed(struct ks_userns_allow_key *key)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	const struct ks_userns_allow_val *want;
	struct ks_userns_allow_val *got;
	struct file *exe;
	struct inode *inode;
	__u32 zero = 0;

	if (BPF_CORE_READ(task, cred, euid.val) == 0 &&
	    BPF_CORE_READ(task, cred, user_ns, level) == 0)
		return true;
	exe = BPF_CORE_READ(task, mm, exe_file);
	if (!exe)
		return true;	/* kernel threads */
	inode = BPF_CORE_READ(exe, f_inode);
	key->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key->_pad = 0;
	key->ino = BPF_CORE_READ(inode, i_ino);
	want = bpf_map_lookup_elem(&ks_userns_allow, key);
	if (!want)
		return false;
	got = bpf_map_lookup_elem(&name_buf, &zero);
	if (!got)
		return false;
	__builtin_memset(got->name, 0, sizeof(got->name));
	if (bpf_probe_read_kernel_str(got->name, sizeof(got->name),
				      BPF_CORE_READ(exe, f_path.dentry, d_name.name)) < 0)
		return false;
	for (int i = 0; i < KS_USERNS_NAME_LEN; i++) {
		if (got->name[i] != want->name[i])
			return false;
		if (!got->name[i])
			break;
	}
	return true;
}

SEC("lsm/userns_create")
int BPF_PROG(lsm__userns_create, const struct cred *cred)
{
	struct ks_userns_allow_key key = {};

	if (allowed(&key))
		return 0;
	return ks_refuse("userns_create", key.dev, key.ino,
			 BPF_CORE_READ(cred, euid.val), 0) ? -EPERM : 0;
}

/* @which: 0 unshare, 1 clone, 2 clone3 (recorded in the event). */
static __always_inline void tp_check(__u64 flags, int which)
{
	struct ks_userns_allow_key key = {};

	if (!(flags & CLONE_NEWUSER) || allowed(&key))
		return;
	ks_kill("sys_enter_clone", key.dev, key.ino, flags, which);
}

SEC("tracepoint/syscalls/sys_enter_unshare")
int tp__unshare(struct trace_event_raw_sys_enter *ctx)
{
	tp_check(ctx->args[0], 0);
	return 0;
}

/* clone's flags are its first argument on every architecture. */
SEC("tracepoint/syscalls/sys_enter_clone")
int tp__clone(struct trace_event_raw_sys_enter *ctx)
{
	tp_check(ctx->args[0], 1);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_clone3")
int tp__clone3(struct trace_event_raw_sys_enter *ctx)
{
	__u64 flags = 0;

	/* struct clone_args starts with __u64 flags. */
	if (bpf_probe_read_user(&flags, sizeof(flags), (const void *)ctx->args[0]))
		return 0;
	tp_check(flags, 2);
	return 0;
}
