// SPDX-License-Identifier: GPL-2.0-only
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
KSHIELD_META(signs, "kind = 'userns'");
KSHIELD_VARIANTS("lsm,fmod_ret,kprobe,tp");
/* What a hit's argument words are (KSHIELD_ARGS, bpf/sdk/shield.bpf.h). */
/* exe: the executable that was not allowed (the ks_userns_allow key) */
#define EXE "exe_dev:dev exe_ino:uint"
KSHIELD_ARGS("userns_create", EXE " euid:int");
KSHIELD_ARGS("sys_enter_unshare", EXE " flags:flags:clone_flags");
KSHIELD_ARGS("sys_enter_clone", EXE " flags:flags:clone_flags");
KSHIELD_ARGS("sys_enter_clone3", EXE " flags:flags:clone_flags");
KSHIELD_ARGS("task_newtask", EXE " flags:flags:clone_flags child_tid:int");
KSHIELD_ARGS("sys_exit_setns", "userns:hex userns_inum:uint");
KS_VALS_CLONE_FLAGS;
KSHIELD_META(variant_lsm, "lsm/userns_create (6.1+): EPERM for callers other than root of the initial namespace whose executable is not in maps/ks_userns_allow");
KSHIELD_META(variant_fmod_ret, "fmod_ret on security_create_user_ns (6.1+): the lsm body without bpf in lsm= (needs BPF trampolines); EPERM");
KSHIELD_META(variant_tp, "fallback: SIGKILL for the same callers at sys_enter_unshare with CLONE_NEWUSER, and at the entry of clone/clone3 with CLONE_NEWUSER (the caller: a fork with a fatal signal pending makes no child), with task:task_newtask behind it for clone3 flags changed by another thread after the entry read (caller killed, child killed at its return from clone on x86-64, at the entry of its first syscall on arm64, where the fork return passes no sys_exit: that syscall completes), and for whoever setns()es into a namespace a killed task made; post-hoc: the syscall itself completes; 32-bit unshare, clone and clone3 from raw_tp/sys_enter, the exits of 32-bit unshare, clone, clone3 and setns from raw_tp/sys_exit (both loaded where the kernel runs 32-bit code: a namespace made by a killed 32-bit caller is recorded for the setns check like a native one); where tracepoint links cannot be pinned (before 5.15) the same programs run on raw tracepoints (sys_enter/sys_exit filtered by syscall number, task_newtask)");
KSHIELD_META(variant_kprobe, "kprobe on the entry functions of unshare, clone and clone3 (__x64_sys_*, and for 32-bit callers __ia32_sys_unshare, __ia32_compat_sys_ia32_clone, __ia32_sys_clone3; arm64 __arm64_sys_*, AArch32 callers included), for kernels without BPF trampolines built with BPF_KPROBE_OVERRIDE: the same callers refused with EPERM by bpf_override_return before any namespace or child exists; behind it the tp variant's task:task_newtask kill for clone3 flags changed by another thread after the entry read, with its exits and its setns check");
KSHIELD_META(prevents_kprobe, "native,clone,clone3,setns-zombie,compat-i386,compat-arm,setns-zombie-compat-i386,setns-zombie-compat-arm,compat-i386-clone,compat-i386-clone3,compat-arm-clone,compat-arm-clone3");
KSHIELD_META(prevents_lsm, "native,clone,clone3,setns-zombie,compat-i386,compat-arm,setns-zombie-compat-i386,setns-zombie-compat-arm,compat-i386-clone,compat-i386-clone3,compat-arm-clone,compat-arm-clone3");
/* tp and clone: the caller is killed at the entry of clone/clone3, so
 * copy_process() (which fails a fork with a signal pending) makes no child.
 * The kill at task_newtask alone came after its checks: the child existed,
 * and on arm64, whose fork return passes no sys_exit, ran code of its own
 * in the namespace (the clone paths' pipe shows it on 6.1.0-47 and
 * 5.10.0-32 arm64; on x86-64 6.18 the child was killed). */
KSHIELD_META(prevents_tp, "native,clone,clone3,setns-zombie,compat-i386,compat-arm,setns-zombie-compat-i386,setns-zombie-compat-arm,compat-i386-clone,compat-i386-clone3,compat-arm-clone,compat-arm-clone3");


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
	return ks_deny(key.dev, key.ino,
			 BPF_CORE_READ(cred, euid.val), 0);
}

/* ---- tp: fallback without BPF trampolines ----
 * A tracepoint cannot refuse, it can only SIGKILL the current task, and the
 * syscall still completes. unshare() changes only the caller, so killing
 * the caller ends its namespace. clone() creates a child that already lives
 * in the new namespace and would survive its parent's death: the caller is
 * killed at the entry of clone/clone3, before any child exists, and
 * task:task_newtask (the kernel's own flags, no user-memory race) catches
 * a clone3 whose flags changed after that read: it kills the caller and
 * dooms the child, killed at its return from clone (x86-64) or at its first
 * syscall (arm64). */

/* Tasks whose refusal lands at their syscall's return: children of refused
 * clones, until they reach sys_exit_clone (arm64: their first syscall's
 * entry), and refused unshare callers,
 * until sys_exit_unshare. By thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);	/* 1: unshare caller, DOOMED_CHILD: child */
} doomed SEC(".maps");

#define DOOMED_CHILD	2

/* User namespaces that a killed task created. The namespace outlives its
 * creator while anything holds it: the creator's zombie (its parent can
 * open /proc/PID/ns/user until it reaps it), an nsfs fd opened in the
 * moment before the kill landed, a pidfd. Its owner (same uid outside) may
 * setns into it and hold every capability there; whoever enters one is
 * killed at the return from setns. Keyed by address and inode number, so a
 * freed namespace whose address is reused by another is not mistaken for
 * it unless both match. */
struct ns_key {
	__u64 addr;
	__u32 inum;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct ns_key);
	__type(value, __u8);
} doomed_ns SEC(".maps");

/* The current task's user namespace. */
static __always_inline struct ns_key current_ns(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct user_namespace *ns = BPF_CORE_READ(task, cred, user_ns);
	struct ns_key k = {
		.addr = (__u64)(long)ns,
		.inum = BPF_CORE_READ(ns, ns.inum),
	};

	return k;
}

/* At the return of a refused call: remember the namespace the task now
 * lives in when the call made one, and kill the task (again: a SIGKILL
 * sent at entry is still pending, this one covers a task that was only
 * doomed). */
static __always_inline void doomed_exit(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ns_key k;
	__u8 one = 1;

	if (!bpf_map_lookup_elem(&doomed, &tid))
		return;
	bpf_map_delete_elem(&doomed, &tid);
	if (ret != 0)
		return;
	k = current_ns();
	if (k.addr)
		bpf_map_update_elem(&doomed_ns, &k, &one, BPF_ANY);
	bpf_send_signal(SIGKILL);
}

KS_SYSCALL_ENTER(tp__unshare, unshare)
{
	struct ks_userns_allow_key key = {};

	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 one = 1;

	if ((args[0] & CLONE_NEWUSER) && !allowed(&key) &&
	    ks_kill("sys_enter_unshare", key.dev, key.ino, args[0], 0))
		bpf_map_update_elem(&doomed, &tid, &one, BPF_ANY);
	return 0;
}

KS_SYSCALL_EXIT(tp__unshare_exit, unshare)
{
	doomed_exit(ret);
	return 0;
}

/* setns() into a namespace a killed task made (through /proc/PID/ns/user
 * of its zombie, an nsfs fd or a pidfd): judged at the return, where the
 * caller's credentials already name the namespace it entered, whichever
 * kind of descriptor it used. */
static __always_inline void setns_exit(long ret)
{
	struct ns_key k;

	if (ret != 0)
		return;
	k = current_ns();
	if (bpf_map_lookup_elem(&doomed_ns, &k))
		ks_kill("sys_exit_setns", k.addr, k.inum, 0, 0);
}

KS_SYSCALL_EXIT(tp__setns_exit, setns)
{
	setns_exit(ret);
	return 0;
}

/* clone and clone3 with CLONE_NEWUSER: the caller is killed at entry, so
 * that no child is made at all: copy_process() checks for a pending signal
 * before it builds the child and again before it makes it visible, and
 * fails the fork (-ERESTARTNOINTR) when one is pending. A kill only at
 * task_newtask comes after both checks: the child exists and, on arm64,
 * whose fork return passes no sys_exit, runs code of its own (a kill at its
 * first syscall's entry would still let that syscall complete). clone's
 * flags are a register; clone3's are in user memory, which another thread
 * may change after this read: task_newtask below judges the kernel's own
 * copy and catches that race (caller killed, child doomed: killed at its
 * return from clone on x86-64, not on arm64). */
static __always_inline int clone_enter(__u64 flags, bool three)
{
	struct ks_userns_allow_key key = {};

	if (!(flags & CLONE_NEWUSER) || allowed(&key))
		return 0;
	if (three)
		ks_kill("sys_enter_clone3", key.dev, key.ino, flags, 0);
	else
		ks_kill("sys_enter_clone", key.dev, key.ino, flags, 0);
	return 0;
}

/* clone3's flags: the first u64 of its struct clone_args (the same layout
 * for 32-bit callers), when the size given covers them; else 0 (the call
 * fails, or task_newtask sees what it made). */
static __always_inline __u64 clone3_flags(const __u64 *args)
{
	__u64 flags = 0;

	if (args[1] < sizeof(flags) ||
	    bpf_probe_read_user(&flags, sizeof(flags), (const void *)(long)args[0]))
		return 0;
	return flags;
}

KS_SYSCALL_ENTER(tp__clone, clone)
{
	return clone_enter(args[0], false);
}

KS_SYSCALL_ENTER(tp__clone3, clone3)
{
	return clone_enter(clone3_flags(args), true);
}

/* The entries of 32-bit unshare, clone and clone3, which the native
 * hooks never see (the dispatcher tells the ABIs apart). */
KS_SYSCALL_ENTER32(tp__unshare, unshare)
KS_SYSCALL_ENTER32(tp__clone, clone)
KS_SYSCALL_ENTER32(tp__clone3, clone3)

/* arm64: the child of a clone refused only at task_newtask (clone3 flags
 * changed by another thread after the entry check) returns to user space
 * without a sys_exit; it is killed at the entry of its first syscall, which
 * still completes (post-hoc, as a killed unshare), and the namespace it
 * lives in is recorded for the setns check. Every syscall runs this
 * program: the count of such children not yet seen is its fast path, one
 * load when it is zero. x86-64
 * kills the child at its return from clone (sys_exit_clone*): not there. */
#if defined(__TARGET_ARCH_arm64)
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} doomed_children SEC(".maps");

static __always_inline void doomed_child_count(__s64 d)
{
	__u32 zero = 0;
	__s64 *n = bpf_map_lookup_elem(&doomed_children, &zero);

	if (n)
		__sync_fetch_and_add(n, d);
}

/* The current task's entry in doomed when it is a doomed child (an unshare
 * caller's waits for its sys_exit_unshare), and the count; NULL else. */
static __always_inline __s64 *doomed_child(__u32 tid)
{
	__u32 zero = 0;
	__s64 *n = bpf_map_lookup_elem(&doomed_children, &zero);
	__u8 *v;

	if (!n || *n <= 0)
		return NULL;
	v = bpf_map_lookup_elem(&doomed, &tid);
	if (!v || *v != DOOMED_CHILD)
		return NULL;
	bpf_map_delete_elem(&doomed, &tid);
	__sync_fetch_and_add(n, -1);
	return n;
}

static __always_inline int doomed_child_enter(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ns_key k;
	__u8 one = 1;

	if (!doomed_child(tid))
		return 0;
	k = current_ns();
	if (k.addr)
		bpf_map_update_elem(&doomed_ns, &k, &one, BPF_ANY);
	bpf_send_signal(SIGKILL);
	return 0;
}

SEC("raw_tp/sys_enter")
int tp__doomed_child_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return doomed_child_enter();
}

/* A doomed child that ends before any syscall (a fault) takes its entry
 * along: a later task given its thread id must not inherit it. */
SEC("raw_tp/sched_process_exit")
int tp__doomed_child_gone(struct bpf_raw_tracepoint_args *ctx)
{
	doomed_child((__u32)bpf_get_current_pid_tgid());
	return 0;
}

/* The same behind the kprobe variant's task_newtask. */
SEC("raw_tp/sys_enter")
int kprobe__doomed_child_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return doomed_child_enter();
}

SEC("raw_tp/sched_process_exit")
int kprobe__doomed_child_gone(struct bpf_raw_tracepoint_args *ctx)
{
	doomed_child((__u32)bpf_get_current_pid_tgid());
	return 0;
}
#else
static __always_inline void doomed_child_count(__s64 d) {}
#endif

static __always_inline int newtask(__u64 flags, __u32 child)
{
	struct ks_userns_allow_key key = {};
	__u8 child_mark = DOOMED_CHILD;

	if (!(flags & CLONE_NEWUSER) || allowed(&key))
		return 0;
	if (ks_kill("task_newtask", key.dev, key.ino, flags, child)) {
		bpf_map_update_elem(&doomed, &child, &child_mark, BPF_ANY);
		doomed_child_count(1);
	}
	return 0;
}

SEC("tracepoint/task/task_newtask")
int tp__newtask(struct trace_event_raw_task_newtask *ctx)
{
	return newtask(ctx->clone_flags, ctx->pid);
}

/* Its twin where tracepoint links cannot be pinned (fit.bpf.h). */
SEC("raw_tp/task_newtask")
int tp__newtask__raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[0];

	return newtask(ctx->args[1], BPF_CORE_READ(child, pid));
}

KS_SYSCALL_EXIT(tp__clone_exit, clone)
{
	doomed_exit(ret);
	return 0;
}

KS_SYSCALL_EXIT(tp__clone3_exit, clone3)
{
	doomed_exit(ret);
	return 0;
}

/* The exits of 32-bit unshare, clone, clone3 and setns: without them a
 * namespace made by a killed 32-bit unshare caller was not recorded for
 * the setns check, and a 32-bit clone's doomed child was not killed at its
 * return. */
KS_SYSCALL_EXIT32(tp__unshare_exit, unshare)
KS_SYSCALL_EXIT32(tp__setns_exit, setns)
KS_SYSCALL_EXIT32(tp__clone_exit, clone)
KS_SYSCALL_EXIT32(tp__clone3_exit, clone3)

/* ---- kprobe: refused at the syscall's entry function ----
 * bpf_override_return (bpf/sdk/override.bpf.h): the caller's unshare,
 * clone or clone3 returns EPERM without running, so no namespace and no
 * child exist, and the caller lives. clone3's flags are read from user
 * memory, which another thread may change after this read: the tp
 * variant's task_newtask kill stays behind it (below), with the exits and
 * the setns check that finish it. */
static __always_inline int userns_deny(__u64 flags, const char *ks_hook)
{
	struct ks_userns_allow_key key = {};

	if (!(flags & CLONE_NEWUSER) || allowed(&key))
		return 0;
	return ks_deny(key.dev, key.ino, flags, 0);
}

KS_SYSCALL_KPROBE(kprobe__unshare, unshare)
{
	return userns_deny(args[0], ks_hook);
}

KS_SYSCALL_KPROBE(kprobe__clone, clone)
{
	return userns_deny(args[0], ks_hook);
}

KS_SYSCALL_KPROBE(kprobe__clone3, clone3)
{
	return userns_deny(clone3_flags(args), ks_hook);
}

KS_SYSCALL_KPROBE32(kprobe__unshare, unshare)
KS_SYSCALL_KPROBE32(kprobe__clone3, clone3)
/* i386 clone enters compat_sys_ia32_clone on x86-64 (flags first, as
 * clone's); __ia32_sys_clone is in no syscall table (a program there was
 * never run: the 32-bit clone was killed by the task_newtask kill behind
 * it, not refused). AArch32 clone enters __arm64_sys_clone, the native
 * program's function. */
#if defined(__TARGET_ARCH_x86)
KS_COMPAT_SYSCALL_KPROBE32(kprobe__clone, ia32_clone)
#endif

SEC("tracepoint/task/task_newtask")
int kprobe__newtask(struct trace_event_raw_task_newtask *ctx)
{
	return newtask(ctx->clone_flags, ctx->pid);
}

SEC("raw_tp/task_newtask")
int kprobe__newtask__raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[0];

	return newtask(ctx->args[1], BPF_CORE_READ(child, pid));
}

KS_SYSCALL_EXIT(kprobe__clone_exit, clone)
{
	doomed_exit(ret);
	return 0;
}

KS_SYSCALL_EXIT(kprobe__clone3_exit, clone3)
{
	doomed_exit(ret);
	return 0;
}

KS_SYSCALL_EXIT(kprobe__setns_exit, setns)
{
	setns_exit(ret);
	return 0;
}

KS_SYSCALL_EXIT32(kprobe__clone_exit, clone)
KS_SYSCALL_EXIT32(kprobe__clone3_exit, clone3)
KS_SYSCALL_EXIT32(kprobe__setns_exit, setns)
