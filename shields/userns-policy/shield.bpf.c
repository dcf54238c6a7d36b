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
KSHIELD_VARIANTS("lsm,fmod_ret,tp");
KSHIELD_META(variant_lsm, "lsm/userns_create (6.1+): EPERM for callers other than root of the initial namespace whose executable is not in maps/ks_userns_allow");
KSHIELD_META(variant_fmod_ret, "fmod_ret on security_create_user_ns (6.1+): the lsm body without bpf in lsm= (needs BPF trampolines); EPERM");
KSHIELD_META(variant_tp, "fallback: SIGKILL for the same callers at sys_enter_unshare with CLONE_NEWUSER, and at task:task_newtask for clone/clone3 with CLONE_NEWUSER (the caller, and the new child at its return from clone, before it runs its own code); post-hoc: the syscall itself completes");

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

KS_SECURITY_HOOK_FN(userns_create, userns_create, security_create_user_ns, const struct cred *cred)
{
	struct ks_userns_allow_key key = {};

	if (allowed(&key))
		return 0;
	return ks_refuse("userns_create", key.dev, key.ino,
			 BPF_CORE_READ(cred, euid.val), 0) ? -EPERM : 0;
}

/* ---- tp: fallback without BPF trampolines ----
 * A tracepoint cannot refuse, it can only SIGKILL the current task, and the
 * syscall still completes. unshare() changes only the caller, so killing
 * the caller ends its namespace. clone() creates a child that already lives
 * in the new namespace and would survive its parent's death: the clone is
 * judged at task:task_newtask (the kernel's own flags, no user-memory race),
 * which kills the caller and dooms the child, and the child is killed at
 * its first step, its return from clone, before it runs any code of its own. */

/* Children of refused clones, by pid, until they reach sys_exit_clone. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} doomed SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_unshare")
int tp__unshare(struct trace_event_raw_sys_enter *ctx)
{
	struct ks_userns_allow_key key = {};

	if ((ctx->args[0] & CLONE_NEWUSER) && !allowed(&key))
		ks_kill("sys_enter_unshare", key.dev, key.ino, ctx->args[0], 0);
	return 0;
}

SEC("tracepoint/task/task_newtask")
int tp__newtask(struct trace_event_raw_task_newtask *ctx)
{
	struct ks_userns_allow_key key = {};
	__u64 flags = ctx->clone_flags;
	__u32 child = ctx->pid;
	__u8 one = 1;

	if (!(flags & CLONE_NEWUSER) || allowed(&key))
		return 0;
	if (ks_kill("task_newtask", key.dev, key.ino, flags, child))
		bpf_map_update_elem(&doomed, &child, &one, BPF_ANY);
	return 0;
}

static __always_inline void child_exit(long ret)
{
	__u32 pid = (__u32)bpf_get_current_pid_tgid();

	if (ret != 0 || !bpf_map_lookup_elem(&doomed, &pid))
		return;
	bpf_map_delete_elem(&doomed, &pid);
	bpf_send_signal(SIGKILL);
}

SEC("tracepoint/syscalls/sys_exit_clone")
int tp__clone_exit(struct trace_event_raw_sys_exit *ctx)
{
	child_exit(ctx->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_clone3")
int tp__clone3_exit(struct trace_event_raw_sys_exit *ctx)
{
	child_exit(ctx->ret);
	return 0;
}
