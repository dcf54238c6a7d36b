/* guard.bpf.c - the tamper guard: keeps anyone but kshield's own agent from
 * detaching kshield's links, writing its maps, removing its pins, unmounting
 * the bpffs that holds them, and killing, stopping or tracing the agent.
 *
 * Two variants, chosen by src/lib/guard/guard.c:
 *   lsm__*  BPF LSM hooks: the attempt is refused with EPERM (while the guard
 *           is enabled) and recorded as a KS_EV_TAMPER event.
 *   tp__*   syscall tracepoints, for kernels without BPF LSM: the attempt is
 *           only recorded (who, what); the agent repairs what was undone.
 * common__* programs belong to both.
 *
 * Who is trusted (see docs/guard.md): pid 1 (the service manager), the agent
 * whose tgid the agent itself wrote into guard_cfg (cleared by the exit
 * tracepoint when it dies, so a recycled pid is never trusted), and, only
 * while no agent is registered, a process running the kshield binary recorded
 * at load (by inode and device, not by name).
 */
#include "kshield.bpf.h"
#include <kshield/guard.h>

char LICENSE[] SEC("license") = "GPL";

#define SIGHUP	1
#define SIGCHLD	17
#define SIGCONT	18
#define SIGURG	23
#define SIGWINCH 28
#define AT_FDCWD -100

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_guard_cfg);
} guard_cfg SEC(".maps");

/* kshield's links and maps (struct ks_guard_id), filled by the agent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ks_guard_id);
	__type(value, __u32);
} guard_ids SEC(".maps");

/* Attempts per enum ks_tamper_op, for `kshield status`. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KS_TAMPER_OP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} guard_stats SEC(".maps");

static __always_inline struct ks_guard_cfg *gcfg(void)
{
	__u32 zero = 0;
	struct ks_guard_cfg *c = bpf_map_lookup_elem(&guard_cfg, &zero);

	/* Not configured yet (between load and the agent's first write). */
	return c && c->root_ino ? c : NULL;
}

static __always_inline bool same_inode(struct inode *ino, __u64 i_ino, __u32 dev)
{
	return ino && BPF_CORE_READ(ino, i_ino) == i_ino && BPF_CORE_READ(ino, i_sb, s_dev) == dev;
}

static __always_inline bool trusted(const struct ks_guard_cfg *c)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *t;

	if (tgid == 1)
		return true;
	if (c->agent_tgid)
		return tgid == c->agent_tgid;
	t = (struct task_struct *)bpf_get_current_task();
	return same_inode(BPF_CORE_READ(t, mm, exe_file, f_inode), c->exe_ino, c->exe_dev);
}

/* Is @d the bpffs root or below it? Pins sit at most 3 levels down. */
static __always_inline bool under_root(struct dentry *d, const struct ks_guard_cfg *c)
{
	for (int i = 0; i < 6 && d; i++) {
		struct dentry *p;

		if (same_inode(BPF_CORE_READ(d, d_inode), c->root_ino, c->root_dev))
			return true;
		p = BPF_CORE_READ(d, d_parent);
		if (p == d)
			break;
		d = p;
	}
	return false;
}

/* Record an attempt; returns the LSM verdict (-EPERM when refused). */
static __always_inline int tamper(const struct ks_guard_cfg *c, __u32 op, __u32 target,
				  __u32 arg, struct dentry *d, bool lsm)
{
	bool deny = lsm && c->enabled;
	struct ks_tamper_event *e;
	__u64 *n;

	n = bpf_map_lookup_elem(&guard_stats, &op);
	if (n)
		(*n)++;
	e = ks_reserve(KS_EV_TAMPER, sizeof(*e));
	if (e) {
		ks_fill_hdr(&e->hdr, KS_EV_TAMPER, sizeof(*e));
		e->op = op;
		e->ret = deny ? -EPERM : 0;
		e->id = target;
		e->arg = arg;
		e->target[0] = '\0';
		if (d)
			bpf_probe_read_kernel_str(e->target, sizeof(e->target),
						  BPF_CORE_READ(d, d_name.name));
		bpf_ringbuf_submit(e, 0);
	}
	return deny ? -EPERM : 0;
}

/* Signals that end, stop or otherwise take the agent down. */
static __always_inline bool harmful(int sig)
{
	return sig != 0 && sig != SIGHUP && sig != SIGCHLD && sig != SIGCONT &&
	       sig != SIGURG && sig != SIGWINCH;
}

/* The kernel object behind file descriptor @fd of the current task. */
static __always_inline void *fd_object(int fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f ? BPF_CORE_READ(f, private_data) : NULL;
}

/* If @fd is one of kshield's links (@type KS_GUARD_LINK) or maps, its id.
 * A file that is not a link/map reads as some id that is not in guard_ids;
 * the bpf() call would fail on it anyway. */
static __always_inline __u32 guarded_fd(int fd, __u32 type)
{
	void *obj = fd_object(fd);
	struct ks_guard_id key = { .type = type };

	if (!obj)
		return 0;
	if (type == KS_GUARD_LINK)
		key.id = BPF_CORE_READ((struct bpf_link *)obj, id);
	else
		key.id = BPF_CORE_READ((struct bpf_map *)obj, id);
	return key.id && bpf_map_lookup_elem(&guard_ids, &key) ? key.id : 0;
}

/* What bpf(@cmd) with map/link fd @fd would change, or 0. */
static __always_inline int check_bpf(const struct ks_guard_cfg *c, int cmd, int fd, bool lsm)
{
	__u32 id;

	switch (cmd) {
	case BPF_LINK_DETACH:
	case BPF_LINK_UPDATE:
		id = guarded_fd(fd, KS_GUARD_LINK);
		return id ? tamper(c, KS_TAMPER_DETACH, id, cmd, NULL, lsm) : 0;
	case BPF_MAP_UPDATE_ELEM:
	case BPF_MAP_DELETE_ELEM:
	case BPF_MAP_LOOKUP_AND_DELETE_ELEM:
	case BPF_MAP_FREEZE:
	case BPF_MAP_UPDATE_BATCH:
	case BPF_MAP_DELETE_BATCH:
	case BPF_MAP_LOOKUP_AND_DELETE_BATCH:
		id = guarded_fd(fd, KS_GUARD_MAP);
		return id ? tamper(c, KS_TAMPER_MAP, id, cmd, NULL, lsm) : 0;
	}
	return 0;
}

/* The fd a bpf() command acts on, from its attr. */
static __always_inline int attr_fd(int cmd, union bpf_attr *attr, bool user)
{
	__u32 fd = 0;
	void *p;

	switch (cmd) {
	case BPF_LINK_DETACH:
		p = &attr->link_detach.link_fd;
		break;
	case BPF_LINK_UPDATE:
		p = &attr->link_update.link_fd;
		break;
	case BPF_MAP_UPDATE_BATCH:
	case BPF_MAP_DELETE_BATCH:
	case BPF_MAP_LOOKUP_AND_DELETE_BATCH:
		p = &attr->batch.map_fd;
		break;
	default:
		p = &attr->map_fd;
	}
	if (user)
		bpf_probe_read_user(&fd, sizeof(fd), p);
	else
		bpf_probe_read_kernel(&fd, sizeof(fd), p);
	return fd;
}

/* ---- lsm variant: refuse ---- */

SEC("lsm/bpf")
int BPF_PROG(lsm__bpf, int cmd, union bpf_attr *attr, unsigned int size)
{
	struct ks_guard_cfg *c = gcfg();

	if (!c || trusted(c))
		return 0;
	return check_bpf(c, cmd, attr_fd(cmd, attr, false), true);
}

static __always_inline int check_dentry(struct dentry *d, __u32 op)
{
	struct ks_guard_cfg *c = gcfg();

	if (!c || !under_root(d, c) || trusted(c))
		return 0;
	return tamper(c, op, 0, 0, d, true);
}

SEC("lsm/inode_unlink")
int BPF_PROG(lsm__inode_unlink, struct inode *dir, struct dentry *dentry)
{
	return check_dentry(dentry, KS_TAMPER_UNLINK);
}

SEC("lsm/inode_rmdir")
int BPF_PROG(lsm__inode_rmdir, struct inode *dir, struct dentry *dentry)
{
	return check_dentry(dentry, KS_TAMPER_UNLINK);
}

SEC("lsm/inode_rename")
int BPF_PROG(lsm__inode_rename, struct inode *old_dir, struct dentry *old_dentry,
	     struct inode *new_dir, struct dentry *new_dentry)
{
	int err = check_dentry(old_dentry, KS_TAMPER_UNLINK);

	return err ? err : check_dentry(new_dentry, KS_TAMPER_UNLINK);
}

SEC("lsm/sb_umount")
int BPF_PROG(lsm__sb_umount, struct vfsmount *mnt, int flags)
{
	struct ks_guard_cfg *c = gcfg();

	if (!c || BPF_CORE_READ(mnt, mnt_sb, s_dev) != c->root_dev || trusted(c))
		return 0;
	return tamper(c, KS_TAMPER_UMOUNT, 0, flags, NULL, true);
}

SEC("lsm/task_kill")
int BPF_PROG(lsm__task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig)
{
	struct ks_guard_cfg *c = gcfg();
	__u32 tgid;

	if (!c || !c->agent_tgid || !harmful(sig))
		return 0;
	tgid = BPF_CORE_READ(p, tgid);
	if (tgid != c->agent_tgid || trusted(c))
		return 0;
	return tamper(c, KS_TAMPER_SIGNAL, tgid, sig, NULL, true);
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(lsm__ptrace, struct task_struct *child, unsigned int mode)
{
	struct ks_guard_cfg *c = gcfg();
	__u32 tgid;

	if (!c || !c->agent_tgid)
		return 0;
	tgid = BPF_CORE_READ(child, tgid);
	if (tgid != c->agent_tgid || trusted(c))
		return 0;
	return tamper(c, KS_TAMPER_PTRACE, tgid, mode, NULL, true);
}

/* ---- tp variant: record only ---- */

SEC("tp/syscalls/sys_enter_kill")
int tp__kill(struct trace_event_raw_sys_enter *ctx)
{
	struct ks_guard_cfg *c = gcfg();
	int pid = ctx->args[0], sig = ctx->args[1];

	/* kill(-pgrp) reaches the agent only if it is in that group;
	 * the agent runs in its own session, so positive pids suffice. */
	if (!c || !c->agent_tgid || pid != (int)c->agent_tgid || !harmful(sig) || trusted(c))
		return 0;
	tamper(c, KS_TAMPER_SIGNAL, pid, sig, NULL, false);
	return 0;
}

SEC("tp/syscalls/sys_enter_tgkill")
int tp__tgkill(struct trace_event_raw_sys_enter *ctx)
{
	struct ks_guard_cfg *c = gcfg();
	int tgid = ctx->args[0], sig = ctx->args[2];

	if (!c || !c->agent_tgid || tgid != (int)c->agent_tgid || !harmful(sig) || trusted(c))
		return 0;
	tamper(c, KS_TAMPER_SIGNAL, tgid, sig, NULL, false);
	return 0;
}

SEC("tp/syscalls/sys_enter_bpf")
int tp__bpf(struct trace_event_raw_sys_enter *ctx)
{
	struct ks_guard_cfg *c = gcfg();
	int cmd = ctx->args[0];

	if (!c || trusted(c))
		return 0;
	check_bpf(c, cmd, attr_fd(cmd, (union bpf_attr *)ctx->args[1], true), false);
	return 0;
}

/* unlinkat(dfd, name, flags) of a relative name (what `rm -r` uses for
 * everything below the directory it was given) is judged by the directory
 * it is relative to. Absolute names are not resolved here: best effort,
 * the agent's periodic pin check notices and repairs the damage anyway. */
SEC("tp/syscalls/sys_enter_unlinkat")
int tp__unlinkat(struct trace_event_raw_sys_enter *ctx)
{
	struct ks_guard_cfg *c = gcfg();
	struct task_struct *t;
	struct dentry *d = NULL;
	struct file *f;
	int dfd = ctx->args[0];
	char first = 0;

	if (!c || trusted(c))
		return 0;
	bpf_probe_read_user(&first, 1, (void *)ctx->args[1]);
	if (first == '/')
		return 0;	/* absolute: left to the agent's pin check */
	if (dfd == AT_FDCWD) {
		t = (struct task_struct *)bpf_get_current_task();
		d = BPF_CORE_READ(t, fs, pwd.dentry);
	} else {
		t = (struct task_struct *)bpf_get_current_task();
		struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
		struct file **fds = BPF_CORE_READ(fdt, fd);

		if (dfd < 0 || (unsigned int)dfd >= BPF_CORE_READ(fdt, max_fds))
			return 0;
		f = NULL;
		bpf_probe_read_kernel(&f, sizeof(f), &fds[dfd]);
		if (!f)
			return 0;
		d = BPF_CORE_READ(f, f_path.dentry);
	}
	if (d && under_root(d, c)) {
		struct ks_tamper_event *e;
		__u32 op = KS_TAMPER_UNLINK;
		__u64 *n = bpf_map_lookup_elem(&guard_stats, &op);

		if (n)
			(*n)++;
		e = ks_reserve(KS_EV_TAMPER, sizeof(*e));
		if (e) {
			ks_fill_hdr(&e->hdr, KS_EV_TAMPER, sizeof(*e));
			e->op = op;
			e->ret = 0;
			e->id = 0;
			e->arg = ctx->args[2];
			bpf_probe_read_user_str(e->target, sizeof(e->target), (void *)ctx->args[1]);
			bpf_ringbuf_submit(e, 0);
		}
	}
	return 0;
}

/* ---- both ---- */

/* The agent is gone: nobody is the agent until the next one registers.
 * Runs before the pid can be recycled, so a new process with the same pid
 * is never mistaken for the agent. */
SEC("raw_tp/sched_process_exit")
int common__exit(void *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u32 zero = 0, tgid = bpf_get_current_pid_tgid() >> 32;
	struct ks_guard_cfg *c = bpf_map_lookup_elem(&guard_cfg, &zero);

	if (c && c->agent_tgid && tgid == c->agent_tgid &&
	    BPF_CORE_READ(t, signal, live.counter) == 0)
		c->agent_tgid = 0;
	return 0;
}
