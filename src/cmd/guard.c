/* guard.c - the `kshield guard` commands: status, on, off, load, unload
 * and selftest. The selftest is what the kernel matrix runs in each guest:
 * it plays both the agent and an attacker and checks that the guard refuses
 * (BPF LSM) or at least records (tracepoint variant) every attempt, that the
 * agent's death frees its slot, and that the deliberate off switch works.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "guard.h"
#include "pins.h"
#include "store.h"
#include "sysinfo.h"
#include "units.h"
#include "weaken.h"
#include <kshield/shield.h>

static struct json_object *state_json(const struct ks_guard_state *st)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_object();

	json_object_object_add(o, "loaded", json_object_new_boolean(st->loaded));
	if (!st->loaded)
		return o;
	json_object_object_add(o, "variant", json_object_new_string(st->variant));
	json_object_object_add(o, "refuses", json_object_new_boolean(st->lsm && st->enabled));
	json_object_object_add(o, "enabled", json_object_new_boolean(st->enabled));
	json_object_object_add(o, "agent_pid", json_object_new_int64(st->agent_tgid));
	for (__u32 op = 1; op < KS_TAMPER_OP_MAX; op++)
		json_object_object_add(a, ks_tamper_op_str(op), json_object_new_uint64(st->attempts[op]));
	json_object_object_add(o, "attempts", a);
	if (st->why_no_lsm[0])
		json_object_object_add(o, "why_no_lsm", json_object_new_string(st->why_no_lsm));
	return o;
}

static void print_state(const struct ks_guard_state *st)
{
	__u64 total = 0;

	if (json_output) {
		ks_json_print(state_json(st));
		return;
	}
	if (!st->loaded) {
		printf("guard: not loaded\n");
		return;
	}
	for (int i = 1; i < KS_TAMPER_OP_MAX; i++)
		total += st->attempts[i];
	printf("guard: %s (%s variant: %s)\n", st->enabled ? "on" : "off", st->variant,
	       st->lsm ? "refuses tampering" : "records tampering only, no BPF LSM");
	printf("agent: %s", st->agent_tgid ? "" : "none registered\n");
	if (st->agent_tgid)
		printf("pid %u\n", st->agent_tgid);
	printf("tampering attempts: %llu\n", (unsigned long long)total);
}

static int guard_help(void);

/* A guard command that takes no arguments: true to go on, else return *@rc. */
static bool no_args(const char *cmd, int argc, char **argv, int *rc)
{
	static const struct ks_opt none[] = { OPT_END };

	return ks_opts_parse(cmd, none, argc, argv, 0, NULL, guard_help, rc);
}

static int do_gstatus(int argc, char **argv)
{
	struct ks_guard_state st;
	int err;

	if (!no_args("guard status", argc, argv, &err))
		return err;
	err = ks_guard_get(&st);
	if (err && err != -ENOENT)
		return ks_report(err);
	print_state(&st);
	return 0;
}

static int set(bool on)
{
	int err = ks_guard_set(on);

	if (err)
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "enabled", json_object_new_boolean(on));
		ks_json_print(o);
	} else {
		printf("guard %s\n", on ? "on" : "off");
	}
	return 0;
}

static int do_on(int argc, char **argv)
{
	int rc;

	if (!no_args("guard on", argc, argv, &rc))
		return rc;
	return set(true);
}

static int do_off(int argc, char **argv)
{
	int rc;

	if (!no_args("guard off", argc, argv, &rc))
		return rc;
	return set(false);
}

/* Load by hand (the agent does this itself when the config says
 * guard = on). The calling process registers and exits, leaving the
 * guard with no agent: the kshield binary is then the trusted one. */
static int do_load(int argc, char **argv)
{
	struct ks_guard_state st;
	bool off = false;
	const struct ks_opt opts[] = { OPT_FLAG("--off", &off), OPT_END };
	int err;

	if (!ks_opts_parse("guard load", opts, argc, argv, 0, NULL, guard_help, &err))
		return err;
	if ((err = ks_guard_load(!off, &st)))
		return ks_report(err);
	print_state(&st);
	return 0;
}

static int do_unload(int argc, char **argv)
{
	int err;

	if (!no_args("guard unload", argc, argv, &err))
		return err;
	err = ks_guard_unload();
	if (err)
		return ks_report(err);
	if (!json_output)
		printf("guard unloaded\n");
	return 0;
}

/* ---- selftest ---- */

struct check {
	const char *name;
	bool ok;
	char got[160];
};

struct selftest {
	bool lsm;
	int n;
	struct check c[48];
	int seen[KS_TAMPER_OP_MAX];	/* tamper events from us, by op */
	int seen_denied[KS_TAMPER_OP_MAX];
	pid_t me;
	bool umount_tried;
};

static void check(struct selftest *t, const char *name, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void check(struct selftest *t, const char *name, bool ok, const char *fmt, ...)
{
	va_list ap;
	struct check *c;

	if (t->n == (int)(sizeof(t->c) / sizeof(t->c[0])))
		return;
	c = &t->c[t->n++];
	c->name = name;
	c->ok = ok;
	va_start(ap, fmt);
	vsnprintf(c->got, sizeof(c->got), fmt, ap);
	va_end(ap);
}

/* An attempt that the LSM guard must refuse with EPERM; the recording
 * variant lets it through (any result). */
static void attempt(struct selftest *t, const char *name, int rc, int err)
{
	if (t->lsm)
		check(t, name, rc < 0 && err == EPERM, "%s", rc < 0 ? strerror(err) : "succeeded");
	else
		check(t, name, true, "%s (recorded only)", rc < 0 ? strerror(err) : "succeeded");
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct selftest *t = ctx;
	const struct ks_tamper_event *e = data;

	if (len < sizeof(*e) || e->hdr.kind != KS_EV_TAMPER || e->hdr.tgid != (__u32)t->me ||
	    e->op >= KS_TAMPER_OP_MAX)
		return 0;
	t->seen[e->op]++;
	t->seen_denied[e->op] += e->ret == -EPERM;
	return 0;
}

static void drain_events(struct selftest *t)
{
	char path[PATH_MAX];
	struct ring_buffer *rb;
	int fd;

	ks_pin_path(path, sizeof(path), "%s/ks_events", KS_PIN_MAPS);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		check(t, "ring buffer", false, "can't open %s: %s", path, strerror(errno));
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
static void umount_attempt(struct selftest *t)
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

/* The agent half: load the guard, pin a decoy, report, wait. */
static void agent_child(int report, int wait_fd)
{
	struct ks_guard_state st;
	char path[PATH_MAX];
	int err, fd, msg[2] = { 0, 0 };

	signal(SIGUSR2, SIG_IGN);
	err = ks_guard_load(true, &st);
	if (!err) {
		ks_pin_path(path, sizeof(path), "%s", "selftest");
		mkdir(path, 0700);
		ks_pin_path(path, sizeof(path), "%s", "selftest/decoy");
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ks_decoy", 4, 4, 1, NULL);
		if (fd < 0 || bpf_obj_pin(fd, path))
			err = -errno;
		ks_guard_protect();
	}
	msg[0] = err;
	msg[1] = st.lsm;
	if (write(report, msg, sizeof(msg)) != sizeof(msg))
		_exit(1);
	if (err)
		fprintf(stderr, "guard selftest: agent: %s\n", ks_errmsg());
	while (read(wait_fd, msg, 1) > 0)
		;
	_exit(0);
}

/* Is a process running another binary refused while no agent runs? */
static int rm_as_other_binary(const char *path)
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

/* A writable fd of a kshield map, by pin and by id, and any fd of one of
 * its links: what every detach, update or map write needs. Read-only map
 * fds stay for everyone. */
static void open_attempts(struct selftest *t)
{
	char path[PATH_MAX];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), link_id = 0;
	struct ks_guard_id k, next;
	void *kp = NULL;
	int fd, ro, rc, e;

	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_CFG);
	ro = ks_pin_open_ro(path);
	check(t, "read-only open of a kshield map allowed", ro >= 0, "%s",
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
	if (ro >= 0)
		close(ro);

	/* A link id from the guard's own list (readable by anyone). */
	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_IDS);
	ro = ks_pin_open_ro(path);
	while (ro >= 0 && !link_id && !bpf_map_get_next_key(ro, kp, &next)) {
		k = next;
		kp = &k;
		if (k.type == KS_GUARD_LINK)
			link_id = k.id;
	}
	if (ro >= 0)
		close(ro);
	check(t, "a link id is in the guard's list", link_id != 0, "id %u", link_id);
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
	(void)rc;
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

static void race_attempt(struct selftest *t)
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
		check(t, "fd race on the guard's map", false, "setup: %s", strerror(errno));
		goto out;
	}
	r.decoy = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ks_race", 4, sizeof(cfg), 1, NULL);
	r.n = dup(r.decoy);
	if (r.decoy < 0 || r.n < 0 || pthread_create(&th, NULL, flipper, &r)) {
		check(t, "fd race on the guard's map", false, "setup: %s", strerror(errno));
		goto out;
	}
	cfg.enabled = 0;
	/* At most RACE_WRITES: each refused write is a tamper record, and the
	 * ring buffer (read only at the end, once the agent is gone) must keep
	 * room for the attempts that follow. The old guard lost within 1500. */
	for (double t0 = now_s(); now_s() - t0 < 1.5 && tries < RACE_WRITES; tries++) {
		bpf_map_update_elem(r.n, &zero, &cfg, 0);
		if (!bpf_map_lookup_elem(ro, &zero, &now) && !now.enabled)
			break;
	}
	r.stop = 1;
	pthread_join(th, NULL);
	bpf_map_lookup_elem(ro, &zero, &now);
	if (t->lsm)
		check(t, "fd race on the guard's map", now.enabled, "%ld writes, guard %s", tries,
		      now.enabled ? "still on" : "turned OFF");
	if (!now.enabled) {	/* put it back for the checks that follow */
		now.enabled = 1;
		bpf_map_update_elem(r.target, &zero, &now, 0);
	}
out:
	if (ro >= 0)
		close(ro);
	if (r.target >= 0)
		close(r.target);
	if (r.n >= 0)
		close(r.n);
	if (r.decoy >= 0)
		close(r.decoy);
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
static void cgroup_attempts(struct selftest *t, pid_t agent, char cgs[2][PATH_MAX])
{
	const char *root = ks_cgroup2_path();
	char path[PATH_MAX + 32], pid[32];
	int fd, rc, e;

	if (!root) {
		fprintf(stderr, "guard selftest: no cgroup2 mount: cgroup checks not run\n");
		return;
	}
	snprintf(pid, sizeof(pid), "%d", agent);
	for (int i = 0; i < 2; i++) {
		snprintf(cgs[i], PATH_MAX, "%s/ks-guard-selftest-%d-%d", root, (int)getpid(), i);
		if (mkdir(cgs[i], 0755) && errno != EEXIST) {
			check(t, "cgroup setup", false, "mkdir %s: %s", cgs[i], strerror(errno));
			cgs[i][0] = '\0';
			return;
		}
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgs[0]);
	if (write_file(path, pid)) {
		check(t, "cgroup setup", false, "move the agent: %s", strerror(errno));
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
		fprintf(stderr, "guard selftest: no cgroup.kill on this kernel (before 5.14): not tried\n");
		return;
	}
	rc = write_file(path, "1");
	e = errno;
	usleep(100000);
	attempt(t, "kill the agent's cgroup (cgroup.kill)", rc, e);
	check(t, "agent alive after cgroup.kill", alive(agent), "%s",
	      alive(agent) ? "alive" : "dead");
	if (!alive(agent))
		return;
	/* Opened while the agent is elsewhere, written after it moved in. */
	snprintf(path, sizeof(path), "%s/cgroup.kill", cgs[1]);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgs[1]);
	if (fd < 0 || write_file(path, pid)) {
		check(t, "cgroup setup", false, "second cgroup: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	rc = write(fd, "1", 1) < 0 ? -1 : 0;
	e = errno;
	close(fd);
	usleep(100000);
	attempt(t, "cgroup.kill opened before the agent moved in", rc, e);
	check(t, "agent alive after the moved cgroup.kill", alive(agent), "%s",
	      alive(agent) ? "alive" : "dead");
}

/* F_SETOWN(agent) + F_SETSIG(SIGKILL) + O_ASYNC: SIGKILL delivered by the
 * pipe becoming readable (file_send_sigiotask), not by kill(). */
static void sigio_attempt(struct selftest *t, pid_t agent)
{
	int p[2];

	if (pipe(p)) {
		check(t, "SIGKILL through O_ASYNC", false, "pipe: %s", strerror(errno));
		return;
	}
	if (fcntl(p[0], F_SETOWN, agent) || fcntl(p[0], F_SETSIG, SIGKILL) ||
	    fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK)) {
		check(t, "SIGKILL through O_ASYNC", false, "fcntl: %s", strerror(errno));
	} else {
		if (write(p[1], "x", 1) != 1)
			check(t, "SIGKILL through O_ASYNC", false, "write: %s", strerror(errno));
		usleep(100000);
		check(t, "SIGKILL through O_ASYNC (F_SETOWN+F_SETSIG)", alive(agent), "agent %s",
		      alive(agent) ? "alive" : "killed");
	}
	close(p[0]);
	close(p[1]);
}

static int do_selftest(int argc, char **argv)
{
	struct selftest t = { .me = getpid() };
	char path[PATH_MAX], dir[PATH_MAX], cgs[2][PATH_MAX] = { "", "" };
	int rep[2], hold[2], msg[2] = { -EIO, 0 }, fd, rc, e, status, failed = 0;
	bool made_root = access(ks_bpffs_root, F_OK) != 0;
	struct ks_guard_state st;
	struct ks_guard_cfg cfg;
	__u32 zero = 0;
	pid_t agent;

	if (!no_args("guard selftest", argc, argv, &rc))
		return rc;
	if (!access(ks_bpffs_root, F_OK)) {
		ks_pin_path(path, sizeof(path), "%s", KS_PIN_GUARD);
		if (!access(path, F_OK))
			return ks_report(ks_err(-EEXIST, "a guard is already loaded under %s: run the "
						"selftest with its own --bpffs root", ks_bpffs_root));
	}
	rc = ks_pins_init();
	if (rc)
		return ks_report(rc);
	if (pipe(rep) || pipe(hold))
		return ks_report(ks_err(-errno, "pipe: %s", strerror(errno)));
	agent = fork();
	if (agent == 0) {
		close(rep[0]);
		close(hold[1]);
		agent_child(rep[1], hold[0]);
	}
	close(rep[1]);
	close(hold[0]);
	if (read(rep[0], msg, sizeof(msg)) != sizeof(msg) || msg[0]) {
		close(hold[1]);
		waitpid(agent, NULL, 0);
		rm_tree(ks_bpffs_root);
		return ks_report(ks_err(msg[0] ? msg[0] : -EIO, "guard selftest: the agent "
					"could not load the guard (see above)"));
	}
	t.lsm = msg[1];

	/* The attacker's moves, each by this (non-agent) process. */
	ks_pin_path(dir, sizeof(dir), "%s", "selftest");
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	rc = unlinkat(fd, "decoy", 0);
	e = errno;
	close(fd);
	attempt(&t, "unlink a pin", rc, e);

	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_LINK "common__exit");
	fd = bpf_obj_get(path);
	rc = fd < 0 ? -1 : bpf_link_detach(fd);
	e = errno;
	if (fd >= 0)
		close(fd);
	attempt(&t, "detach a link", rc, e);

	ks_pin_path(path, sizeof(path), KS_PIN_GUARD "/" KS_PIN_CFG);
	fd = bpf_obj_get(path);
	rc = fd < 0 || bpf_map_lookup_elem(fd, &zero, &cfg) ? -1 :
	     bpf_map_update_elem(fd, &zero, &cfg, 0);	/* same value: harmless if let through */
	e = errno;
	if (fd >= 0)
		close(fd);
	attempt(&t, "write the guard's map", rc, e);

	rc = kill(agent, SIGUSR2);	/* the agent ignores it if let through */
	e = errno;
	attempt(&t, "signal the agent", rc, e);

	if (t.lsm) {
		char to[PATH_MAX];

		rc = kill(agent, SIGKILL);
		attempt(&t, "SIGKILL the agent", rc, errno);
		rc = ptrace(PTRACE_ATTACH, agent, 0, 0);
		e = errno;
		if (!rc)
			ptrace(PTRACE_DETACH, agent, 0, 0);
		attempt(&t, "ptrace the agent", rc, e);
		ks_pin_path(path, sizeof(path), "%s", KS_PIN_GUARD);
		ks_pin_path(to, sizeof(to), "%s", "moved");
		rc = rename(path, to);
		e = errno;
		if (!rc)
			rename(to, path);
		attempt(&t, "rename the guard's pins", rc, e);
		umount_attempt(&t);
	}
	open_attempts(&t);
	race_attempt(&t);
	if (t.lsm) {
		sigio_attempt(&t, agent);
		cgroup_attempts(&t, agent, cgs);
	}
	check(&t, "agent alive after every attempt", alive(agent), "%s",
	      alive(agent) ? "alive" : "dead");

	/* The agent stops (as the service manager would stop it): its slot
	 * must be freed at its exit, and the kshield binary trusted again. */
	close(hold[1]);
	waitpid(agent, &status, 0);
	for (int i = 0; i < 2; i++)
		if (cgs[i][0])
			rmdir(cgs[i]);

	/* Read as the kshield binary with no agent running: the ring
	 * buffer's fd is writable (its consumer position). */
	drain_events(&t);
	{
		/* With BPF LSM a link is never opened, so never detached. */
		static const struct { __u32 op; const char *what; bool lsm_only; } want[] = {
			{ KS_TAMPER_UNLINK, "unlink recorded", false },
			{ KS_TAMPER_MAP, "map write recorded", false },
			{ KS_TAMPER_SIGNAL, "signal recorded", false },
			{ KS_TAMPER_PTRACE, "ptrace recorded", true },
			{ KS_TAMPER_UMOUNT, "umount recorded", true },
			{ KS_TAMPER_OPEN, "writable opens recorded", true },
		};
		if (!t.lsm)
			check(&t, "detach recorded", t.seen[KS_TAMPER_DETACH] > 0, "%d event(s)",
			      t.seen[KS_TAMPER_DETACH]);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			__u32 op = want[i].op;

			if ((want[i].lsm_only && !t.lsm) ||
			    (op == KS_TAMPER_UMOUNT && !t.umount_tried))
				continue;
			check(&t, want[i].what, t.seen[op] > 0 && (!t.lsm || t.seen_denied[op] > 0),
			      "%d event(s), %d refused", t.seen[op], t.seen_denied[op]);
		}
	}

	if (t.lsm && cgs[0][0])
		check(&t, "cgroup writes recorded", t.seen_denied[KS_TAMPER_CGROUP] > 0,
		      "%d event(s), %d refused", t.seen[KS_TAMPER_CGROUP],
		      t.seen_denied[KS_TAMPER_CGROUP]);
	rc = ks_guard_get(&st);
	check(&t, "agent exit frees its slot", !rc && st.agent_tgid == 0, "agent pid %u",
	      st.agent_tgid);
	if (t.lsm) {
		ks_pin_path(path, sizeof(path), "%s", "selftest/decoy");
		rc = rm_as_other_binary(path);
		check(&t, "other binaries refused while no agent runs", rc != 0 && !access(path, F_OK),
		      "rm exited %d, decoy %s", rc, access(path, F_OK) ? "removed" : "still pinned");
	}
	rc = ks_guard_set(false);
	check(&t, "guard off by the kshield binary, no agent running", !rc, "%s",
	      rc ? ks_errmsg() : "off");
	if (t.lsm) {
		ks_pin_path(path, sizeof(path), "%s", "selftest/decoy");
		rc = rm_as_other_binary(path);
		check(&t, "guard off: pins removable", access(path, F_OK) != 0,
		      "rm exited %d", rc);
	}
	rc = ks_guard_unload();
	check(&t, "guard unload", !rc, "%s", rc ? ks_errmsg() : "unloaded");

	/* Leave nothing behind. */
	ks_pin_path(path, sizeof(path), "%s", "selftest");
	rm_tree(path);
	if (made_root)
		rm_tree(ks_bpffs_root);

	for (int i = 0; i < t.n; i++)
		failed += !t.c[i].ok;
	if (json_output) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		json_object_object_add(o, "refuses", json_object_new_boolean(t.lsm));
		for (int i = 0; i < t.n; i++) {
			struct json_object *c = json_object_new_object();

			json_object_object_add(c, "name", json_object_new_string(t.c[i].name));
			json_object_object_add(c, "ok", json_object_new_boolean(t.c[i].ok));
			json_object_object_add(c, "got", json_object_new_string(t.c[i].got));
			json_object_array_add(arr, c);
		}
		json_object_object_add(o, "checks", arr);
		json_object_object_add(o, "passed", json_object_new_boolean(!failed));
		ks_json_print(o);
	} else {
		printf("guard selftest (%s)\n", t.lsm ? "BPF LSM: refuses" :
		       "no BPF LSM: records only");
		for (int i = 0; i < t.n; i++)
			printf("  %-4s %-48s %s\n", t.c[i].ok ? "ok" : "FAIL", t.c[i].name, t.c[i].got);
		printf("%s\n", failed ? "FAILED" : "passed");
	}
	return failed ? 1 : 0;
}

/* `kshield guard token --key KEY [--host H] [--expires DUR] [--out FILE]
 * ACTION...`: made where the shield key lives, copied to the host's
 * weaken_token path, then SIGHUP. */
static int do_token(int argc, char **argv)
{
	const char *key = NULL, *out = NULL, *expires = "1h";
	char host[256] = "", allow[2048] = "", *text = NULL;
	__u64 ns = 0;
	size_t used = 0;
	int err;
	FILE *f;
	const char *host_arg = NULL;
	const struct ks_opt opts[] = {
		OPT_VAL("--key", &key), OPT_VAL("--host", &host_arg), OPT_VAL("--expires", &expires),
		OPT_VAL("--out", &out), OPT_END
	};

	if (!ks_opts_parse("guard token", opts, argc, argv, argc, &argc, guard_help, &err))
		return err;
	gethostname(host, sizeof(host) - 1);
	if (host_arg)
		snprintf(host, sizeof(host), "%s", host_arg);
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];

		if (!strncmp(o, "audit:", 6) || !strncmp(o, "unload:", 7) || !strcmp(o, "guard-off")) {
			used += snprintf(allow + used, used < sizeof(allow) ? sizeof(allow) - used : 0,
					 "%s%s", used ? "," : "", o);
		} else {
			return ks_report(ks_err(-EINVAL, "guard token: unknown argument '%s' (actions: "
						"audit:NAME, unload:NAME, guard-off)", o));
		}
	}
	if (!key || !used)
		return ks_report(ks_err(-EINVAL, "usage: kshield guard token --key KEYFILE [--host "
					"HOST|'*'] [--expires 1h] [--out FILE] ACTION..."));
	if ((err = ks_duration_parse(expires, "--expires", &ns)))
		return ks_report(err);
	err = ks_weaken_token(key, host, (long long)time(NULL) + (long long)(ns / 1000000000ULL),
			      allow, &text);
	if (err)
		return ks_report(err);
	f = out ? fopen(out, "we") : stdout;
	if (!f) {
		free(text);
		return ks_report(ks_err(-errno, "can't write %s: %s", out, strerror(errno)));
	}
	fputs(text, f);
	if (out)
		fclose(f);
	free(text);
	return 0;
}

static int guard_help(void)
{
	fprintf(stderr,
		"Usage: kshield guard { status | on | off | load [--off] | unload | selftest | token }\n"
		"\n"
		"  status     is the guard loaded, refusing (BPF LSM) or recording only, who is the agent\n"
		"  on | off   turn refusing on or off; only the agent, or the kshield binary\n"
		"             while no agent runs, may (stop the service first: docs/guard.md)\n"
		"  load       load the guard by hand (the agent does it when guard = on)\n"
		"  unload     remove the guard's pins (turn it off first)\n"
		"  selftest   play agent and attacker in a scratch --bpffs root; exit 0 if every\n"
		"             check passed (the kernel matrix runs this in each guest)\n"
		"  token --key KEY [--host H] [--expires 1h] [--out FILE] ACTION...\n"
		"             a signed permission for weakening changes while the guard is on:\n"
		"             audit:NAME, unload:NAME, guard-off (the agent reads weaken_token)\n");
	return 0;
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return guard_help();
}

int do_guard(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "help", do_help },
		{ "status", do_gstatus },
		{ "on", do_on },
		{ "off", do_off },
		{ "load", do_load },
		{ "unload", do_unload },
		{ "selftest", do_selftest },
		{ "token", do_token },
		{ 0 }
	};
	return cmd_select(cmds, argc, argv, do_help);
}
