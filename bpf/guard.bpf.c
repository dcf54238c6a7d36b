// SPDX-License-Identifier: GPL-2.0-only
/* guard.bpf.c - the tamper guard: keeps anyone but kshield's own agent from
 * detaching kshield's links, writing its maps, removing its pins, unmounting
 * the bpffs that holds them, and killing, stopping or tracing the agent.
 *
 * Three variants, chosen by src/lib/guard/guard.c in this order:
 *   lsm__*      BPF LSM hooks: the attempt is refused with EPERM (while the
 *               guard is enabled) and recorded as a KS_EV_TAMPER event.
 *   fmod_ret__* the same bodies (guard_<name>) as fmod_ret on the kernel's
 *               security_<hook> functions: refuses the same way on kernels
 *               with BPF trampolines but without bpf in lsm= (a nonzero
 *               return skips the security_ function, every LSM included).
 *   tp__*       syscall tracepoints, for kernels without either: the attempt
 *               is only recorded (who, what); the agent repairs what was
 *               undone.
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
#define SIGIO	29
#define AT_FDCWD -100
#define FMODE_WRITE 0x2
#define MAY_WRITE 0x2
#define CGROUP2_SUPER_MAGIC 0x63677270
#define PROC_SUPER_MAGIC 0x9fa0
#define PT_PTRACED 0x1
#define PTRACE_MODE_ATTACH 0x02

/* One guard body, guard_<name>(call), as both refusing variants: the BPF
 * LSM hook lsm__<name> on @hook, and fmod_ret__<name> on the kernel's
 * security function @fn (the same body: see above). @args are the hook's
 * typed arguments, @call their names. */
#define GUARD_TWIN(name, hook, fn, call, args...)			\
SEC("lsm/" #hook)							\
int BPF_PROG(lsm__##name, args)						\
{									\
	return guard_##name call;					\
}									\
									\
SEC("fmod_ret/" #fn)							\
int BPF_PROG(fmod_ret__##name, args)					\
{									\
	return guard_##name call;					\
}

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

/* The agent's task (its thread group leader), noted by the guard itself
 * whenever the registered agent calls bpf(): the cgroup checks need the
 * agent's current cgroup, which an attacker can change by moving it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} guard_agent SEC(".maps");

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

/* Is @t running the kshield binary recorded at load? */
static __always_inline bool runs_kshield(struct task_struct *t, const struct ks_guard_cfg *c)
{
	return c->exe_ino && same_inode(BPF_CORE_READ(t, mm, exe_file, f_inode), c->exe_ino, c->exe_dev);
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
	return runs_kshield(t, c);
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

static __always_inline bool guarded_id(__u32 type, __u32 id)
{
	struct ks_guard_id key = { .type = type, .id = id };

	return id && bpf_map_lookup_elem(&guard_ids, &key);
}

static __always_inline void note_agent(const struct ks_guard_cfg *c)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u32 zero = 0;
	__u64 *slot;

	if (!c->agent_tgid || (bpf_get_current_pid_tgid() >> 32) != c->agent_tgid)
		return;
	slot = bpf_map_lookup_elem(&guard_agent, &zero);
	if (slot)
		*slot = (__u64)BPF_CORE_READ(t, group_leader);
}

static __always_inline int guard_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	struct ks_guard_cfg *c = gcfg();
	__u32 id;

	if (!c)
		return 0;
	note_agent(c);
	if (trusted(c))
		return 0;
	/* An fd of a kshield link is all it takes to detach or replace it:
	 * only the agent gets one (by pin: lsm__pin_open below). The id is
	 * in the attr, copied once: no descriptor to swap under us. */
	if (cmd == BPF_LINK_GET_FD_BY_ID) {
		id = BPF_CORE_READ(attr, link_id);
		return guarded_id(KS_GUARD_LINK, id) ? tamper(c, KS_TAMPER_OPEN, id, cmd, NULL, true) : 0;
	}
	/* Descriptor-based: only a second line now. The fd is looked up here
	 * and again by the syscall, so a thread swapping it in between wins;
	 * what makes that useless is that nobody but the agent can hold a
	 * writable fd of a kshield map or any fd of its links (below). */
	return check_bpf(c, cmd, attr_fd(cmd, attr, false), true);
}

GUARD_TWIN(bpf, bpf, security_bpf, (cmd, attr, size),
	   int cmd, union bpf_attr *attr, unsigned int size)

/* Every way to a map fd (BPF_OBJ_GET of a pin, BPF_MAP_GET_FD_BY_ID, map
 * creation) ends in bpf_map_new_fd(), which asks this hook with the mode the
 * fd will have. Decided on the map object itself: read-only fds stay
 * allowed (bpftool map dump, kshield status), writable ones are the agent's. */
static __always_inline int guard_bpf_map(struct bpf_map *map, unsigned int fmode)
{
	struct ks_guard_cfg *c = gcfg();
	__u32 id;

	if (!c || !(fmode & FMODE_WRITE))
		return 0;
	id = BPF_CORE_READ(map, id);
	if (!guarded_id(KS_GUARD_MAP, id) || trusted(c))
		return 0;
	return tamper(c, KS_TAMPER_OPEN, id, BPF_MAP_GET_FD_BY_ID, NULL, true);
}

GUARD_TWIN(bpf_map, bpf_map, security_bpf_map, (map, fmode),
	   struct bpf_map *map, unsigned int fmode)

/* BPF_OBJ_GET of a link pin has no bpf_link hook: it is refused at the
 * permission check on the pin's inode (links open read-write only). The
 * agent records its pins' inode numbers next to the object ids.
 *
 * This runs on every path component of every path walk (stat, open), and
 * stays here because nothing rarer sees the link: on BPF_OBJ_GET's way to
 * a link fd (bpf_obj_get_user, bpf_obj_do_get, bpf_link_new_fd; 6.1 and
 * 6.12) the only LSM calls are security_bpf, made before the kernel reads
 * the path from user memory (another thread can rewrite it after the
 * check), and this one (path_permission of the pin). The fd is made by
 * anon_inode_getfd, which asks no LSM with the link, and fmod_ret
 * attaches to security_ functions only. Refusing later is not possible
 * either: with a link fd in hand, BPF_LINK_DETACH and BPF_LINK_UPDATE
 * name it by fd number, which lsm__bpf can only resolve racily. */
static __always_inline int guard_pin_open(struct inode *inode, int mask)
{
	struct ks_guard_cfg *c;
	__u32 ino;

	/* Every path walk and open passes here: plain loads through the
	 * hook's typed argument first, no helper call. */
	if (!(mask & MAY_WRITE))
		return 0;
	c = gcfg();
	if (!c || inode->i_sb->s_dev != c->root_dev)
		return 0;
	ino = BPF_CORE_READ(inode, i_ino);
	if (!guarded_id(KS_GUARD_PIN, ino) || trusted(c))
		return 0;
	return tamper(c, KS_TAMPER_OPEN, ino, mask, NULL, true);
}

GUARD_TWIN(pin_open, inode_permission, security_inode_permission, (inode, mask),
	   struct inode *inode, int mask)

/* Names of cgroup files whose write kills, freezes or starves every task
 * below: refused in the agent's cgroup and each of its ancestors. */
static __always_inline bool cgroup_weapon(const char *n)
{
	/* "cgroup.kill", "cgroup.freeze", "memory.max", "memory.high", "pids.max" */
	if (n[0] == 'c' && n[1] == 'g' && n[2] == 'r' && n[3] == 'o' && n[4] == 'u' &&
	    n[5] == 'p' && n[6] == '.')
		return (n[7] == 'k' && n[8] == 'i' && n[9] == 'l' && n[10] == 'l' && !n[11]) ||
		       (n[7] == 'f' && n[8] == 'r' && n[9] == 'e' && n[10] == 'e' &&
			n[11] == 'z' && n[12] == 'e' && !n[13]);
	if (n[0] == 'm' && n[1] == 'e' && n[2] == 'm' && n[3] == 'o' && n[4] == 'r' &&
	    n[5] == 'y' && n[6] == '.')
		return (n[7] == 'm' && n[8] == 'a' && n[9] == 'x' && !n[10]) ||
		       (n[7] == 'h' && n[8] == 'i' && n[9] == 'g' && n[10] == 'h' && !n[11]);
	return n[0] == 'p' && n[1] == 'i' && n[2] == 'd' && n[3] == 's' && n[4] == '.' &&
	       n[5] == 'm' && n[6] == 'a' && n[7] == 'x' && !n[8];
}

/* Is the cgroup directory whose kernfs node is @kn the agent's cgroup or an
 * ancestor of it? Judged at the write, against the cgroup the agent is in
 * now (moving the agent first does not help). */
static __always_inline bool agent_under(const struct ks_guard_cfg *c, void *kn)
{
	struct task_struct *a;
	struct cgroup *cg;
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&guard_agent, &zero);

	if (!slot || !*slot)
		return false;
	a = (struct task_struct *)*slot;
	if (BPF_CORE_READ(a, tgid) != c->agent_tgid)
		return false;	/* not noted yet, or stale */
	cg = BPF_CORE_READ(a, cgroups, dfl_cgrp);
	for (int i = 0; i < 32 && cg; i++) {
		struct cgroup_subsys_state *p;

		if ((void *)BPF_CORE_READ(cg, kn) == kn)
			return true;
		p = BPF_CORE_READ(cg, self.parent);
		/* self is the first member of struct cgroup */
		cg = p ? (struct cgroup *)((void *)p - bpf_core_field_offset(struct cgroup, self)) : NULL;
	}
	return false;
}

/* "oom_score_adj" or "oom_adj": the agent made the OOM killer's first
 * choice (1000) without any signal. */
static __always_inline bool oom_knob(const char *n)
{
	if (n[0] != 'o' || n[1] != 'o' || n[2] != 'm' || n[3] != '_')
		return false;
	if (n[4] == 'a' && n[5] == 'd' && n[6] == 'j' && !n[7])
		return true;
	return n[4] == 's' && n[5] == 'c' && n[6] == 'o' && n[7] == 'r' && n[8] == 'e' &&
	       n[9] == '_' && n[10] == 'a' && n[11] == 'd' && n[12] == 'j' && !n[13];
}

/* The thread group of the task a /proc/PID/... (or .../task/TID/...) file
 * belongs to: the proc inode's struct pid, its PIDTYPE_PID task. */
static __always_inline __u32 proc_file_tgid(struct inode *ino)
{
	struct proc_inode *pi = (void *)ino - bpf_core_field_offset(struct proc_inode, vfs_inode);
	struct hlist_node *n = BPF_CORE_READ(pi, pid, tasks[PIDTYPE_PID].first);
	struct task_struct *t;

	if (!n)
		return 0;
	t = (void *)n - bpf_core_field_offset(struct task_struct, pid_links);
	return BPF_CORE_READ(t, tgid);
}

/* Checked at each write, on every read and write of the machine (the
 * body returns at its first tests; the cost is the hook's attachment).
 * Not at open, because two descriptors an open-time check lets through
 * become weapons afterwards, and nothing on their way asks an LSM again:
 *  - cgroup.kill (or .freeze, memory.max, ...) of a cgroup opened before
 *    the agent is moved below it: a cgroup v2 move (cgroup_procs_write)
 *    asks no LSM about the task moved (cgroup_may_write asks
 *    inode_permission of the common ancestor's cgroup.procs, without the
 *    task), and cgroup_kill() sends SIGKILL by send_sig(), past task_kill;
 *  - oom_score_adj of a process opened before it became the agent (the
 *    service manager's child before its exec of kshield: the fd follows
 *    the struct pid across exec); __set_oom_adj() asks capable() only to
 *    lower the score.
 * The selftest tries both ("cgroup.kill opened before the agent moved in",
 * "oom_score_adj opened before the agent registered"). */
static __always_inline int guard_file_permission(struct file *file, int mask)
{
	struct ks_guard_cfg *c;
	struct dentry *d;
	char name[16] = {};
	unsigned long magic;

	/* Every read and write on the machine passes here: plain loads
	 * through the hook's typed argument first, no helper call. */
	if (!(mask & MAY_WRITE))
		return 0;
	magic = file->f_inode->i_sb->s_magic;
	if (magic != CGROUP2_SUPER_MAGIC && magic != PROC_SUPER_MAGIC)
		return 0;
	c = gcfg();
	if (!c || !c->agent_tgid)
		return 0;
	d = BPF_CORE_READ(file, f_path.dentry);
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(d, d_name.name));
	if (magic == PROC_SUPER_MAGIC) {
		if (!oom_knob(name) || proc_file_tgid(file->f_inode) != c->agent_tgid ||
		    trusted(c))
			return 0;
		return tamper(c, KS_TAMPER_OOM, c->agent_tgid, mask, d, true);
	}
	if (!cgroup_weapon(name) ||
	    !agent_under(c, BPF_CORE_READ(d, d_parent, d_inode, i_private)) || trusted(c))
		return 0;
	return tamper(c, KS_TAMPER_CGROUP, c->agent_tgid, mask, d, true);
}

GUARD_TWIN(file_permission, file_permission, security_file_permission, (file, mask),
	   struct file *file, int mask)

/* F_SETOWN(agent) + F_SETSIG(SIGKILL) + O_ASYNC on any fd: the signal is
 * sent from whatever context makes the fd ready, without lsm/task_kill.
 * The agent uses no O_ASYNC, so no such signal to it is legitimate. */
static __always_inline int guard_sigio(struct task_struct *tsk, struct fown_struct *fown, int sig)
{
	struct ks_guard_cfg *c = gcfg();
	int s = sig ? sig : SIGIO;
	__u32 tgid;

	if (!c || !c->agent_tgid || !harmful(s))
		return 0;
	tgid = BPF_CORE_READ(tsk, tgid);
	if (tgid != c->agent_tgid)
		return 0;
	return tamper(c, KS_TAMPER_SIGNAL, tgid, s, NULL, true);
}

GUARD_TWIN(sigio, file_send_sigiotask, security_file_send_sigiotask, (tsk, fown, sig),
	   struct task_struct *tsk, struct fown_struct *fown, int sig)

static __always_inline int check_dentry(struct dentry *d, __u32 op)
{
	struct ks_guard_cfg *c = gcfg();

	if (!c || !under_root(d, c) || trusted(c))
		return 0;
	return tamper(c, op, 0, 0, d, true);
}

static __always_inline int guard_inode_unlink(struct inode *dir, struct dentry *dentry)
{
	return check_dentry(dentry, KS_TAMPER_UNLINK);
}

GUARD_TWIN(inode_unlink, inode_unlink, security_inode_unlink, (dir, dentry),
	   struct inode *dir, struct dentry *dentry)

static __always_inline int guard_inode_rmdir(struct inode *dir, struct dentry *dentry)
{
	return check_dentry(dentry, KS_TAMPER_UNLINK);
}

GUARD_TWIN(inode_rmdir, inode_rmdir, security_inode_rmdir, (dir, dentry),
	   struct inode *dir, struct dentry *dentry)

static __always_inline int guard_inode_rename(struct inode *old_dir, struct dentry *old_dentry, struct inode *new_dir, struct dentry *new_dentry)
{
	int err = check_dentry(old_dentry, KS_TAMPER_UNLINK);

	return err ? err : check_dentry(new_dentry, KS_TAMPER_UNLINK);
}

GUARD_TWIN(inode_rename, inode_rename, security_inode_rename,
	   (old_dir, old_dentry, new_dir, new_dentry),
	   struct inode *old_dir, struct dentry *old_dentry, struct inode *new_dir,
	   struct dentry *new_dentry)

static __always_inline int guard_sb_umount(struct vfsmount *mnt, int flags)
{
	struct ks_guard_cfg *c = gcfg();

	if (!c || BPF_CORE_READ(mnt, mnt_sb, s_dev) != c->root_dev || trusted(c))
		return 0;
	return tamper(c, KS_TAMPER_UMOUNT, 0, flags, NULL, true);
}

GUARD_TWIN(sb_umount, sb_umount, security_sb_umount, (mnt, flags),
	   struct vfsmount *mnt, int flags)

static __always_inline int guard_task_kill(struct task_struct *p, struct kernel_siginfo *info, int sig)
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

GUARD_TWIN(task_kill, task_kill, security_task_kill, (p, info, sig),
	   struct task_struct *p, struct kernel_siginfo *info, int sig)

/* ptrace, /proc/PID/mem and process_vm_readv/writev (all ask this hook)
 * of the agent, and of any process running the kshield binary (attach
 * mode: what gives its memory): that binary is trusted while no agent
 * runs, and a traced one runs the tracer's code. pid 1 alone may (the
 * agent traces nobody). */
static __always_inline int guard_ptrace(struct task_struct *child, unsigned int mode)
{
	struct ks_guard_cfg *c = gcfg();
	__u32 tgid, me = bpf_get_current_pid_tgid() >> 32;

	if (!c)
		return 0;
	tgid = BPF_CORE_READ(child, tgid);
	if (me == 1 || me == tgid)
		return 0;
	if (c->agent_tgid && tgid == c->agent_tgid) {
		if (trusted(c))
			return 0;
	} else if (!(mode & PTRACE_MODE_ATTACH) || !runs_kshield(child, c)) {
		return 0;	/* reading /proc/PID/stat, environ: ps and top */
	}
	return tamper(c, KS_TAMPER_PTRACE, tgid, mode, NULL, true);
}

GUARD_TWIN(ptrace, ptrace_access_check, security_ptrace_access_check, (child, mode),
	   struct task_struct *child, unsigned int mode)

/* PTRACE_TRACEME by a process running the kshield binary. */
static __always_inline int guard_traceme(struct task_struct *parent)
{
	struct ks_guard_cfg *c = gcfg();
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	if (!c || BPF_CORE_READ(parent, tgid) == 1 || !runs_kshield(t, c))
		return 0;
	return tamper(c, KS_TAMPER_PTRACE, bpf_get_current_pid_tgid() >> 32, 0, NULL, true);
}

GUARD_TWIN(traceme, ptrace_traceme, security_ptrace_traceme, (parent),
	   struct task_struct *parent)

/* Exec of the kshield binary by a traced process (PTRACE_TRACEME, or an
 * attach before the exec): the tracer would own the trusted process. */
static __always_inline int guard_exec_traced(struct linux_binprm *bprm)
{
	struct ks_guard_cfg *c = gcfg();
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	if (!c || !c->exe_ino || !(BPF_CORE_READ(t, ptrace) & PT_PTRACED) ||
	    !same_inode(BPF_CORE_READ(bprm, file, f_inode), c->exe_ino, c->exe_dev) ||
	    BPF_CORE_READ(t, parent, tgid) == 1)
		return 0;
	return tamper(c, KS_TAMPER_PTRACE, bpf_get_current_pid_tgid() >> 32, 0, NULL, true);
}

GUARD_TWIN(exec_traced, bprm_check_security, security_bprm_check, (bprm),
	   struct linux_binprm *bprm)

/* ---- tp variant: record only ----
 * Each program has a raw tracepoint twin (bpf/sdk/fit.bpf.h), loaded where
 * tracepoint links cannot be pinned (before 5.15). */

KS_TRACEPOINT_SYSCALL_ENTER(tp__kill, kill)
{
	struct ks_guard_cfg *c = gcfg();
	int pid = args[0], sig = args[1];

	/* kill(-pgrp) reaches the agent only if it is in that group;
	 * the agent runs in its own session, so positive pids suffice. */
	if (!c || !c->agent_tgid || pid != (int)c->agent_tgid || !harmful(sig) || trusted(c))
		return 0;
	tamper(c, KS_TAMPER_SIGNAL, pid, sig, NULL, false);
	return 0;
}

KS_TRACEPOINT_SYSCALL_ENTER(tp__tgkill, tgkill)
{
	struct ks_guard_cfg *c = gcfg();
	int tgid = args[0], sig = args[2];

	if (!c || !c->agent_tgid || tgid != (int)c->agent_tgid || !harmful(sig) || trusted(c))
		return 0;
	tamper(c, KS_TAMPER_SIGNAL, tgid, sig, NULL, false);
	return 0;
}

KS_TRACEPOINT_SYSCALL_ENTER(tp__bpf, bpf)
{
	struct ks_guard_cfg *c = gcfg();
	int cmd = args[0];

	if (!c || trusted(c))
		return 0;
	check_bpf(c, cmd, attr_fd(cmd, (union bpf_attr *)args[1], true), false);
	return 0;
}

/* unlinkat(dfd, name, flags) of a relative name (what `rm -r` uses for
 * everything below the directory it was given) is judged by the directory
 * it is relative to. Absolute names are not resolved here: best effort,
 * the agent's periodic pin check notices and repairs the damage anyway. */
KS_TRACEPOINT_SYSCALL_ENTER(tp__unlinkat, unlinkat)
{
	struct ks_guard_cfg *c = gcfg();
	struct task_struct *t;
	struct dentry *d = NULL;
	struct file *f;
	int dfd = args[0];
	char first = 0;

	if (!c || trusted(c))
		return 0;
	bpf_probe_read_user(&first, 1, (void *)args[1]);
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
			e->arg = args[2];
			bpf_probe_read_user_str(e->target, sizeof(e->target), (void *)args[1]);
			bpf_ringbuf_submit(e, 0);
		}
	}
	return 0;
}

/* ---- both ---- */

/* Not attached: user space runs it (BPF_PROG_TEST_RUN) to record a
 * weakening the kshield binary refused for want of a token, so that the
 * refusal reaches the store through the ring buffer like the guard's own
 * (while no agent runs too). args[0]: the op; args[1..11]: the action,
 * NUL-padded. Who: the calling process, as for every tamper event. */
SEC("raw_tp")
int common__refused(struct bpf_raw_tracepoint_args *ctx)
{
	struct ks_guard_cfg *c = gcfg();
	struct ks_tamper_event *e;
	__u32 op = ctx->args[0];
	__u64 *n;

	if (!c || op >= KS_TAMPER_OP_MAX)
		return 0;
	n = bpf_map_lookup_elem(&guard_stats, &op);
	if (n)
		(*n)++;
	e = ks_reserve(KS_EV_TAMPER, sizeof(*e));
	if (!e)
		return 0;
	ks_fill_hdr(&e->hdr, KS_EV_TAMPER, sizeof(*e));
	e->op = op;
	e->ret = -EPERM;
	e->id = 0;
	e->arg = 0;
	for (int i = 0; i < 11; i++)
		*(__u64 *)&e->target[i * 8] = ctx->args[i + 1];
	e->target[88] = '\0';
	bpf_ringbuf_submit(e, 0);
	return 0;
}

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
