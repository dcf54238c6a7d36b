// SPDX-License-Identifier: MIT
/* attacks.c - the tamper guard attacked on purpose (attacks.h): a child
 * process loads the guard and registers as its agent; this process, not
 * the agent, then unlinks and renames pins, detaches links, writes the
 * guard's map (also through a descriptor raced between two maps), opens
 * kshield's maps and links writable, signals, ptraces, freezes and kills
 * the agent (directly, through O_ASYNC and through its cgroup), and reads
 * back what the guard recorded once the agent is gone.
 */
#define _GNU_SOURCE	/* F_SETSIG */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "array.h"
#include "attacks.h"
#include "attacks_int.h"
#include "clock.h"
#include "err.h"
#include "file.h"
#include "guard.h"
#include "pins.h"
#include "sign.h"
#include "sysinfo.h"
#include "weaken.h"
#include <kshield/shield.h>

void ks_attacks_check(struct ks_guard_attacks *t, const char *name, bool ok, const char *fmt, ...)
{
	va_list ap;
	struct ks_attack_check *c;

	if (t->n == (int)ARRAY_SIZE(t->c))
		return;
	c = &t->c[t->n++];
	c->name = name;
	c->ok = ok;
	va_start(ap, fmt);
	vsnprintf(c->got, sizeof(c->got), fmt, ap);
	va_end(ap);
}

/* An attempt not made here, and why. */
static void note(struct ks_guard_attacks *t, const char *why)
{
	if (t->note)
		t->note(why);
}

/* An attempt that the LSM guard must refuse with EPERM; the recording
 * variant lets it through (any result). */
static void attempt(struct ks_guard_attacks *t, const char *name, int rc, int err)
{
	if (t->lsm)
		ks_attacks_check(t, name, rc < 0 && err == EPERM, "%s", rc < 0 ? strerror(err) : "succeeded");
	else
		ks_attacks_check(t, name, true, "%s (recorded only)", rc < 0 ? strerror(err) : "succeeded");
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct ks_guard_attacks *t = ctx;
	const struct ks_tamper_event *e = data;

	if (len < sizeof(*e) || e->hdr.kind != KS_EV_TAMPER || e->op >= KS_TAMPER_OP_MAX)
		return 0;
	/* token refusals: by the kshield commands this process runs */
	if (e->op == KS_TAMPER_CONFIG && e->ret == -EPERM)
		t->refusals++;
	if (e->hdr.tgid != (__u32)t->me)
		return 0;
	t->seen[e->op]++;
	t->seen_denied[e->op] += e->ret == -EPERM;
	return 0;
}

void ks_attacks_drain(struct ks_guard_attacks *t)
{
	char path[PATH_MAX];
	struct ring_buffer *rb;
	int fd;

	ks_pin_path(path, sizeof(path), "%s/ks_events", KS_PIN_MAPS);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		ks_attacks_check(t, "ring buffer", false, "can't open %s: %s", path, strerror(errno));
		return;
	}
	rb = ring_buffer__new(fd, on_event, t, NULL);
	if (rb) {
		ring_buffer__consume(rb);
		ring_buffer__free(rb);
	}
	close(fd);
}

static void rm_tree(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			rm_tree(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* When the root's parent directory is a bpffs mount of its own (the
 * matrix mounts one for the selftest), try to unmount it: with the pins
 * gone, every link they hold would detach. */
static void umount_attempt(struct ks_guard_attacks *t)
{
	char mnt[PATH_MAX], up[PATH_MAX + 4];
	struct stat a, b;
	char *slash;
	int rc;

	snprintf(mnt, sizeof(mnt), "%s", ks_bpffs_root);
	slash = strrchr(mnt, '/');
	if (!slash || slash == mnt)
		return;
	*slash = '\0';
	snprintf(up, sizeof(up), "%s/..", mnt);
	if (stat(mnt, &a) || stat(up, &b) || a.st_dev == b.st_dev)
		return;		/* not a mount point: nothing to try */
	t->umount_tried = true;
	rc = umount2(mnt, MNT_DETACH);
	attempt(t, "unmount the bpffs", rc, errno);
}

/* What the agent half tells the attacker once it is ready (one write,
 * below PIPE_BUF: atomic). */
struct agent_report {
	int err;
	int lsm;
	char variant[16];
	char why[256];		/* the agent's error message when err */
};

/* The agent half: load the guard, pin a decoy, report, wait. */
/* A stand-in for a loaded shield: shields/FAKE_SHIELD/cfg, enforcing; what
 * `shield mode` and `shield unload` act on. */
static int pin_fake_shield(void)
{
	struct ks_shield_cfg cfg = { .mode = KS_MODE_ENFORCE };
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, err = 0;

	ks_pin_path(path, sizeof(path), KS_PIN_SHIELDS);
	mkdir(path, 0700);
	ks_pin_path(path, sizeof(path), KS_PIN_SHIELDS "/" FAKE_SHIELD);
	mkdir(path, 0700);
	ks_pin_path(path, sizeof(path), KS_PIN_SHIELDS "/" FAKE_SHIELD "/" KS_PIN_CFG);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ks_fake_cfg", 4, sizeof(cfg), 1, NULL);
	if (fd < 0 || bpf_map_update_elem(fd, &zero, &cfg, 0) || bpf_obj_pin(fd, path))
		err = -errno;
	ks_zclose(&fd);
	return err;
}

/* Loads the guard (registering itself as the agent) once @go says so, so
 * that the attacker can open files of this process before it is the agent. */
static void agent_child(int go, int report, int wait_fd, const char *keys)
{
	struct agent_report r = { 0 };
	struct ks_guard_state st;
	char path[PATH_MAX], c;
	int err, fd;

	signal(SIGUSR2, SIG_IGN);
	if (read(go, &c, 1) != 1)
		_exit(1);
	close(go);
	err = ks_guard_load(true, keys, &st);
	if (!err) {
		ks_pin_path(path, sizeof(path), "%s", "selftest");
		mkdir(path, 0700);
		ks_pin_path(path, sizeof(path), "%s", "selftest/decoy");
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ks_decoy", 4, 4, 1, NULL);
		if (fd < 0 || bpf_obj_pin(fd, path))
			err = -errno;
		if (!err)
			err = pin_fake_shield();
		ks_guard_protect();
	}
	r.err = err;
	r.lsm = st.lsm;
	snprintf(r.variant, sizeof(r.variant), "%s", st.variant);
	if (err)
		snprintf(r.why, sizeof(r.why), "%s", ks_errmsg());
	if (write(report, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	while (read(wait_fd, &c, 1) > 0)
		;
	_exit(0);
}

/* Is a process running another binary refused while no agent runs? */
int ks_attacks_rm_as_other(const char *path)
{
	const char *rm = !access("/bin/rm", X_OK) ? "/bin/rm" : "/bin/busybox";
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		if (!strcmp(rm, "/bin/rm"))
			execl(rm, "rm", "-f", path, (char *)NULL);
		execl(rm, "rm", "-f", path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static bool alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

/* A writable fd of a kshield map, by pin and by id, and any fd of one of
 * its links: what every detach, update or map write needs. Read-only map
 * fds stay for everyone. */
static void open_attempts(struct ks_guard_attacks *t)
{
	char path[PATH_MAX];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), link_id = 0;
	struct ks_guard_id k, next;
	void *kp = NULL;
	int fd, ro, e;

	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_CFG);
	ro = ks_pin_open_ro(path);
	ks_attacks_check(t, "read-only open of a kshield map allowed", ro >= 0, "%s",
			 ro >= 0 ? "opened" : strerror(errno));
	fd = bpf_obj_get(path);
	e = errno;
	if (fd >= 0)
		close(fd);
	attempt(t, "writable open of a kshield map by pin", fd, e);
	if (ro >= 0 && !bpf_obj_get_info_by_fd(ro, &info, &len)) {
		fd = bpf_map_get_fd_by_id(info.id);
		e = errno;
		if (fd >= 0)
			close(fd);
		attempt(t, "writable open of a kshield map by id", fd, e);
	}
	ks_zclose(&ro);

	/* A link id from the guard's own list (readable by anyone). */
	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_IDS);
	ro = ks_pin_open_ro(path);
	while (ro >= 0 && !link_id && !bpf_map_get_next_key(ro, kp, &next)) {
		k = next;
		kp = &k;
		if (k.type == KS_GUARD_LINK)
			link_id = k.id;
	}
	ks_zclose(&ro);
	ks_attacks_check(t, "a link id is in the guard's list", link_id != 0, "id %u", link_id);
	if (link_id) {
		fd = bpf_link_get_fd_by_id(link_id);
		e = errno;
		if (fd >= 0)
			close(fd);
		attempt(t, "open a kshield link by id", fd, e);
	}
	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_LINK "common__exit");
	fd = bpf_obj_get(path);
	e = errno;
	if (fd >= 0)
		close(fd);
	attempt(t, "open a kshield link by pin", fd, e);
}

/* The descriptor race: one thread flips fd N between a decoy map (the
 * guard lets writes to it through) and the guard's cfg map, the other
 * writes "enabled = 0" through fd N. Deciding on the fd in lsm/bpf loses
 * when the flip lands between the hook and the syscall's own lookup. */
struct race {
	int n, decoy, target;
	volatile int stop;
};

static void *flipper(void *arg)
{
	struct race *r = arg;

	while (!r->stop) {
		dup2(r->decoy, r->n);
		dup2(r->target, r->n);
	}
	return NULL;
}

#define RACE_WRITES 20000

static void race_attempt(struct ks_guard_attacks *t)
{
	struct race r = { .n = -1 };
	struct ks_guard_cfg cfg, now;
	char path[PATH_MAX];
	__u32 zero = 0;
	pthread_t th;
	long tries = 0;
	int ro;

	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_CFG);
	ro = ks_pin_open_ro(path);
	r.target = bpf_obj_get(path);	/* writable where the guard allows it */
	if (r.target < 0)
		r.target = dup(ro);
	if (ro < 0 || r.target < 0 || bpf_map_lookup_elem(ro, &zero, &cfg)) {
		ks_attacks_check(t, "fd race on the guard's map", false, "setup: %s", strerror(errno));
		goto out;
	}
	r.decoy = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ks_race", 4, sizeof(cfg), 1, NULL);
	r.n = dup(r.decoy);
	if (r.decoy < 0 || r.n < 0 || pthread_create(&th, NULL, flipper, &r)) {
		ks_attacks_check(t, "fd race on the guard's map", false, "setup: %s", strerror(errno));
		goto out;
	}
	cfg.enabled = 0;
	/* At most RACE_WRITES: each refused write is a tamper record, and the
	 * ring buffer (read only at the end, once the agent is gone) must keep
	 * room for the attempts that follow. The old guard lost within 1500. */
	for (int64_t t0 = ks_mono_ms(); ks_mono_ms() - t0 < 1500 && tries < RACE_WRITES; tries++) {
		bpf_map_update_elem(r.n, &zero, &cfg, 0);
		if (!bpf_map_lookup_elem(ro, &zero, &now) && !now.enabled)
			break;
	}
	r.stop = 1;
	pthread_join(th, NULL);
	bpf_map_lookup_elem(ro, &zero, &now);
	if (t->lsm)
		ks_attacks_check(t, "fd race on the guard's map", now.enabled, "%ld writes, guard %s", tries,
				 now.enabled ? "still on" : "turned OFF");
	if (!now.enabled) {	/* put it back for the checks that follow */
		now.enabled = 1;
		bpf_map_update_elem(r.target, &zero, &now, 0);
	}
out:
	ks_zclose(&ro);
	ks_zclose(&r.target);
	ks_zclose(&r.n);
	ks_zclose(&r.decoy);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = write(fd, s, strlen(s)) < 0 ? -1 : 0;
	if (rc) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

/* Kill or freeze the agent through its cgroup, without any signal syscall:
 * cgroup.freeze and cgroup.kill of its cgroup, and cgroup.kill of another
 * cgroup opened first, the agent moved into it afterwards. */
static void cgroup_attempts(struct ks_guard_attacks *t, pid_t agent, char cgs[2][PATH_MAX])
{
	const char *root = ks_cgroup2_path();
	char path[PATH_MAX + 32], pid[32];
	int fd, rc, e;

	if (!root) {
		note(t, "no cgroup2 mount: cgroup checks not run");
		return;
	}
	snprintf(pid, sizeof(pid), "%d", agent);
	for (int i = 0; i < 2; i++) {
		snprintf(cgs[i], PATH_MAX, "%s/ks-guard-selftest-%d-%d", root, (int)getpid(), i);
		if (mkdir(cgs[i], 0755) && errno != EEXIST) {
			ks_attacks_check(t, "cgroup setup", false, "mkdir %s: %s", cgs[i], strerror(errno));
			cgs[i][0] = '\0';
			return;
		}
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgs[0]);
	if (write_file(path, pid)) {
		ks_attacks_check(t, "cgroup setup", false, "move the agent: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cgs[0]);
	if (!access(path, F_OK)) {
		rc = write_file(path, "1");
		e = errno;
		if (!rc)
			write_file(path, "0");
		attempt(t, "freeze the agent's cgroup", rc, e);
	}
	snprintf(path, sizeof(path), "%s/cgroup.kill", cgs[0]);
	if (access(path, F_OK)) {
		note(t, "no cgroup.kill on this kernel (before 5.14): not tried");
		return;
	}
	rc = write_file(path, "1");
	e = errno;
	usleep(100000);
	attempt(t, "kill the agent's cgroup (cgroup.kill)", rc, e);
	ks_attacks_check(t, "agent alive after cgroup.kill", alive(agent), "%s",
			 alive(agent) ? "alive" : "dead");
	if (!alive(agent))
		return;
	/* Opened while the agent is elsewhere, written after it moved in. */
	snprintf(path, sizeof(path), "%s/cgroup.kill", cgs[1]);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgs[1]);
	if (fd < 0 || write_file(path, pid)) {
		ks_attacks_check(t, "cgroup setup", false, "second cgroup: %s", strerror(errno));
		ks_zclose(&fd);
		return;
	}
	rc = write(fd, "1", 1) < 0 ? -1 : 0;
	e = errno;
	close(fd);
	usleep(100000);
	attempt(t, "cgroup.kill opened before the agent moved in", rc, e);
	ks_attacks_check(t, "agent alive after the moved cgroup.kill", alive(agent), "%s",
			 alive(agent) ? "alive" : "dead");
}

/* F_SETOWN(agent) + F_SETSIG(SIGKILL) + O_ASYNC: SIGKILL delivered by the
 * pipe becoming readable (file_send_sigiotask), not by kill(). */
static void sigio_attempt(struct ks_guard_attacks *t, pid_t agent)
{
	int p[2];

	if (pipe(p)) {
		ks_attacks_check(t, "SIGKILL through O_ASYNC", false, "pipe: %s", strerror(errno));
		return;
	}
	if (fcntl(p[0], F_SETOWN, agent) || fcntl(p[0], F_SETSIG, SIGKILL) ||
	    fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK)) {
		ks_attacks_check(t, "SIGKILL through O_ASYNC", false, "fcntl: %s", strerror(errno));
	} else {
		if (write(p[1], "x", 1) != 1)
			ks_attacks_check(t, "SIGKILL through O_ASYNC", false, "write: %s", strerror(errno));
		usleep(100000);
		ks_attacks_check(t, "SIGKILL through O_ASYNC (F_SETOWN+F_SETSIG)", alive(agent), "agent %s",
				 alive(agent) ? "alive" : "killed");
	}
	close(p[0]);
	close(p[1]);
}

/* The attacker's first moves, each by this (non-agent) process: a pin
 * unlinked, a link detached, the guard's map written, the agent signalled;
 * with BPF LSM also SIGKILL, ptrace, the guard's pins renamed and the
 * bpffs unmounted. */
static void unlink_attempt(struct ks_guard_attacks *t)
{
	char dir[PATH_MAX];
	int fd, rc, e;

	ks_pin_path(dir, sizeof(dir), "%s", "selftest");
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	rc = unlinkat(fd, "decoy", 0);
	e = errno;
	close(fd);
	attempt(t, "unlink a pin", rc, e);
}

static void detach_attempt(struct ks_guard_attacks *t)
{
	char path[PATH_MAX];
	int fd, rc, e;

	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_LINK "common__exit");
	fd = bpf_obj_get(path);
	rc = fd < 0 ? -1 : bpf_link_detach(fd);
	e = errno;
	ks_zclose(&fd);
	attempt(t, "detach a link", rc, e);
}

static void map_write_attempt(struct ks_guard_attacks *t)
{
	char path[PATH_MAX];
	struct ks_guard_cfg cfg;
	__u32 zero = 0;
	int fd, rc, e;

	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_CFG);
	fd = bpf_obj_get(path);
	rc = fd < 0 || bpf_map_lookup_elem(fd, &zero, &cfg) ? -1 :
	     bpf_map_update_elem(fd, &zero, &cfg, 0);	/* same value: harmless if let through */
	e = errno;
	ks_zclose(&fd);
	attempt(t, "write the guard's map", rc, e);
}

static void signal_attempt(struct ks_guard_attacks *t, pid_t agent)
{
	int rc = kill(agent, SIGUSR2);	/* the agent ignores it if let through */

	attempt(t, "signal the agent", rc, errno);
}

static void kill_attempt(struct ks_guard_attacks *t, pid_t agent)
{
	int rc = kill(agent, SIGKILL);

	attempt(t, "SIGKILL the agent", rc, errno);
}

static void ptrace_attempt(struct ks_guard_attacks *t, pid_t agent)
{
	int rc = ptrace(PTRACE_ATTACH, agent, 0, 0), e = errno;

	if (!rc)
		ptrace(PTRACE_DETACH, agent, 0, 0);
	attempt(t, "ptrace the agent", rc, e);
}

static void rename_attempt(struct ks_guard_attacks *t)
{
	char path[PATH_MAX], to[PATH_MAX];
	int rc, e;

	ks_pin_path(path, sizeof(path), "%s", KS_PIN_GUARD);
	ks_pin_path(to, sizeof(to), "%s", "moved");
	rc = rename(path, to);
	e = errno;
	if (!rc)
		rename(to, path);
	attempt(t, "rename the guard's pins", rc, e);
}

/* The agent made the OOM killer's first choice, no signal involved; also
 * through @early, its oom_score_adj opened for writing before it loaded
 * the guard and became the agent (why the guard judges at each write: an
 * open-time check would have let that open through). */
static void oom_attempt(struct ks_guard_attacks *t, pid_t agent, int early)
{
	const char *knobs[] = { "oom_score_adj", "oom_adj" };
	char path[64];
	int rc, e;

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", agent, knobs[i]);
		if (access(path, F_OK))
			continue;
		rc = write_file(path, i ? "15" : "1000");
		e = errno;
		attempt(t, i ? "oom_adj of the agent" : "oom_score_adj of the agent", rc, e);
	}
	if (early < 0) {
		ks_attacks_check(t, "oom_score_adj opened before the agent registered", false,
				 "open: %s", strerror(-early));
		return;
	}
	rc = write(early, "1000", 4) < 0 ? -1 : 0;
	e = errno;
	attempt(t, "oom_score_adj opened before the agent registered", rc, e);
}

/* A process running the kshield binary that is not the agent (trusted
 * while no agent runs): no ptrace, no PTRACE_TRACEME, and no exec of the
 * binary by a traced process. */
static void ptrace_kshield_attempts(struct ks_guard_attacks *t)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 64];
	int status, rc, e;
	ssize_t n;
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	rc = ptrace(PTRACE_ATTACH, pid, 0, 0);
	e = errno;
	if (!rc)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	attempt(t, "ptrace a kshield process (not the agent)", rc, e);

	pid = fork();
	if (pid == 0)
		_exit(ptrace(PTRACE_TRACEME, 0, 0, 0) ? (errno == EPERM ? 1 : 2) : 0);
	waitpid(pid, &status, 0);
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
	attempt(t, "PTRACE_TRACEME in a kshield process", rc ? -1 : 0, rc == 1 ? EPERM : EIO);

	/* A shell (not kshield: tracing it is allowed), stopped by itself
	 * until it is traced, execs the kshield binary. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "kill -STOP $$; exec %s guard status >/dev/null 2>&1", exe);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, WUNTRACED);
	rc = ptrace(PTRACE_SEIZE, pid, 0, 0);
	kill(pid, SIGCONT);
	if (rc) {
		ks_attacks_check(t, "exec of kshield while traced", false, "seize: %s", strerror(errno));
		waitpid(pid, NULL, 0);
		return;
	}
	for (;;) {
		if (waitpid(pid, &status, 0) < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (WIFSTOPPED(status)) {
			int sig = WSTOPSIG(status);

			ptrace(PTRACE_CONT, pid, 0, sig == SIGTRAP || sig == SIGSTOP ? 0 : sig);
		}
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	/* sh reports a refused exec as 126; 0 means kshield ran traced */
	attempt(t, "exec of kshield while traced", rc ? -1 : 0, rc ? EPERM : 0);
	if (t->lsm && rc)
		snprintf(t->c[t->n - 1].got, sizeof(t->c[0].got), "sh exited %d", rc);
}

/* Once the agent is gone: did the guard record (and, with BPF LSM, refuse)
 * each kind of attempt? */
static void recorded_checks(struct ks_guard_attacks *t, bool cgroups_tried)
{
	/* With BPF LSM a link is never opened, so never detached. */
	static const struct { __u32 op; const char *what; bool lsm_only; } want[] = {
		{ KS_TAMPER_UNLINK, "unlink recorded", false },
		{ KS_TAMPER_MAP, "map write recorded", false },
		{ KS_TAMPER_SIGNAL, "signal recorded", false },
		{ KS_TAMPER_PTRACE, "ptrace recorded", true },
		{ KS_TAMPER_OOM, "oom_score_adj recorded", true },
		{ KS_TAMPER_UMOUNT, "umount recorded", true },
		{ KS_TAMPER_OPEN, "writable opens recorded", true },
	};

	if (!t->lsm)
		ks_attacks_check(t, "detach recorded", t->seen[KS_TAMPER_DETACH] > 0, "%d event(s)",
				 t->seen[KS_TAMPER_DETACH]);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		__u32 op = want[i].op;

		if ((want[i].lsm_only && !t->lsm) ||
		    (op == KS_TAMPER_UMOUNT && !t->umount_tried))
			continue;
		ks_attacks_check(t, want[i].what, t->seen[op] > 0 && (!t->lsm || t->seen_denied[op] > 0),
				 "%d event(s), %d refused", t->seen[op], t->seen_denied[op]);
	}
	if (t->lsm && cgroups_tried)
		ks_attacks_check(t, "cgroup writes recorded", t->seen_denied[KS_TAMPER_CGROUP] > 0,
				 "%d event(s), %d refused", t->seen[KS_TAMPER_CGROUP],
				 t->seen_denied[KS_TAMPER_CGROUP]);
}

int ks_guard_attacks_run(struct ks_guard_attacks *t, ks_attacks_note_fn note_fn)
{
	struct agent_report r = { .err = -EIO };
	char path[PATH_MAX], cgs[2][PATH_MAX] = { "", "" };
	bool made_root = access(ks_bpffs_root, F_OK) != 0;
	int rep[2], hold[2], go[2], status, err, early;
	ssize_t got;
	pid_t agent;

	char tmp[] = "/tmp/ks-guard-selftest-XXXXXX", keys[64], kid[KS_KEYID_LEN];

	memset(t, 0, sizeof(*t));
	t->me = getpid();
	t->note = note_fn;
	/* A shield key of our own: its public half is what the guard records. */
	if (!mkdtemp(tmp))
		return ks_err(-errno, "mkdtemp: %s", strerror(errno));
	snprintf(keys, sizeof(keys), "%s/keys", tmp);
	snprintf(path, sizeof(path), "%s/k", tmp);
	if (mkdir(keys, 0700) || (err = ks_sign_keygen(path, kid))) {
		rm_tree(tmp);
		return ks_err(-EIO, "guard selftest: can't make a key in %s", tmp);
	}
	snprintf(path, sizeof(path), "%s/k.pub", tmp);
	snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), "/k.pub");
	rename(path, keys);
	snprintf(keys, sizeof(keys), "%s/keys", tmp);
	if (!access(ks_bpffs_root, F_OK)) {
		ks_pin_path(path, sizeof(path), "%s", KS_PIN_GUARD);
		if (!access(path, F_OK))
			return ks_err(-EEXIST, "a guard is already loaded under %s: run the "
				      "selftest with its own --bpffs root", ks_bpffs_root);
	}
	err = ks_pins_init();
	if (err)
		return err;
	if (pipe(rep) || pipe(hold) || pipe(go))
		return ks_err(-errno, "pipe: %s", strerror(errno));
	agent = fork();
	if (agent == 0) {
		close(rep[0]);
		close(hold[1]);
		close(go[1]);
		agent_child(go[0], rep[1], hold[0], keys);
	}
	close(rep[1]);
	close(hold[0]);
	close(go[0]);
	/* Before the child is the agent: nothing refuses this open. */
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)agent);
	early = open(path, O_WRONLY | O_CLOEXEC);
	if (early < 0)
		early = -errno;
	got = write(go[1], "g", 1);	/* if not written, the child exits */
	close(go[1]);
	got = read(rep[0], &r, sizeof(r));
	if (got != sizeof(r) || r.err) {
		ks_zclose(&early);
		close(hold[1]);
		waitpid(agent, NULL, 0);
		rm_tree(ks_bpffs_root);
		rm_tree(tmp);
		if (got == sizeof(r)) {		/* the agent said why */
			char line[sizeof(r.why) + 16];

			snprintf(line, sizeof(line), "agent: %s", r.why);
			note(t, line);
		}
		return ks_err(r.err ? r.err : -EIO, "guard selftest: the agent "
			      "could not load the guard (see above)");
	}
	t->lsm = r.lsm;
	snprintf(t->variant, sizeof(t->variant), "%s", r.variant);

	unlink_attempt(t);
	detach_attempt(t);
	map_write_attempt(t);
	signal_attempt(t, agent);
	if (t->lsm) {
		kill_attempt(t, agent);
		ptrace_attempt(t, agent);
		oom_attempt(t, agent, early);
		ptrace_kshield_attempts(t);
		rename_attempt(t);
		umount_attempt(t);
	}
	open_attempts(t);
	race_attempt(t);
	if (t->lsm) {
		sigio_attempt(t, agent);
		cgroup_attempts(t, agent, cgs);
	}
	ks_attacks_check(t, "agent alive after every attempt", alive(agent), "%s",
			 alive(agent) ? "alive" : "dead");
	ks_zclose(&early);

	/* The agent stops (as the service manager would stop it): its slot
	 * must be freed at its exit, and the kshield binary trusted again. */
	close(hold[1]);
	waitpid(agent, &status, 0);
	for (int i = 0; i < 2; i++)
		if (cgs[i][0])
			rmdir(cgs[i]);

	/* Read as the kshield binary with no agent running: the ring
	 * buffer's fd is writable (its consumer position). */
	ks_attacks_drain(t);
	recorded_checks(t, cgs[0][0] != '\0');
	ks_attacks_no_agent(t, tmp);

	/* Leave nothing behind. */
	ks_pin_path(path, sizeof(path), "%s", "selftest");
	rm_tree(path);
	ks_pin_path(path, sizeof(path), "%s", KS_PIN_SHIELDS);
	rm_tree(path);
	rm_tree(tmp);
	if (made_root)
		rm_tree(ks_bpffs_root);
	return 0;
}

int ks_guard_attacks_failed(const struct ks_guard_attacks *t)
{
	int failed = 0;

	for (int i = 0; i < t->n; i++)
		failed += !t->c[i].ok;
	return failed;
}
