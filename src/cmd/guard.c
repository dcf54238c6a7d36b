/* guard.c - the `kshield guard` commands: status, on, off, load, unload
 * and selftest. The selftest is what the kernel matrix runs in each guest:
 * it plays both the agent and an attacker and checks that the guard refuses
 * (BPF LSM) or at least records (tracepoint variant) every attempt, that the
 * agent's death frees its slot, and that the deliberate off switch works.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "guard.h"
#include "pins.h"
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

static int do_gstatus(int argc, char **argv)
{
	struct ks_guard_state st;
	int err;

	(void)argc;
	(void)argv;
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
	(void)argc;
	(void)argv;
	return set(true);
}

static int do_off(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return set(false);
}

/* Load by hand (the agent does this itself when the config says
 * guard = on). The calling process registers and exits, leaving the
 * guard with no agent: the kshield binary is then the trusted one. */
static int do_load(int argc, char **argv)
{
	struct ks_guard_state st;
	bool enable = !(argc > 0 && !strcmp(argv[0], "--off"));
	int err = ks_guard_load(enable, &st);

	if (err)
		return ks_report(err);
	print_state(&st);
	return 0;
}

static int do_unload(int argc, char **argv)
{
	int err;

	(void)argc;
	(void)argv;
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
	struct check c[24];
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

static int do_selftest(int argc, char **argv)
{
	struct selftest t = { .me = getpid() };
	char path[PATH_MAX], dir[PATH_MAX];
	int rep[2], hold[2], msg[2] = { -EIO, 0 }, fd, rc, e, status, failed = 0;
	bool made_root = access(ks_bpffs_root, F_OK) != 0;
	struct ks_guard_state st;
	struct ks_guard_cfg cfg;
	__u32 zero = 0;
	pid_t agent;

	(void)argc;
	(void)argv;
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

	drain_events(&t);
	{
		static const struct { __u32 op; const char *what; bool lsm_only; } want[] = {
			{ KS_TAMPER_UNLINK, "unlink recorded", false },
			{ KS_TAMPER_DETACH, "detach recorded", false },
			{ KS_TAMPER_MAP, "map write recorded", false },
			{ KS_TAMPER_SIGNAL, "signal recorded", false },
			{ KS_TAMPER_PTRACE, "ptrace recorded", true },
			{ KS_TAMPER_UMOUNT, "umount recorded", true },
		};
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			__u32 op = want[i].op;

			if ((want[i].lsm_only && !t.lsm) ||
			    (op == KS_TAMPER_UMOUNT && !t.umount_tried))
				continue;
			check(&t, want[i].what, t.seen[op] > 0 && (!t.lsm || t.seen_denied[op] > 0),
			      "%d event(s), %d refused", t.seen[op], t.seen_denied[op]);
		}
	}

	/* The agent stops (as the service manager would stop it): its slot
	 * must be freed at its exit, and the kshield binary trusted again. */
	close(hold[1]);
	waitpid(agent, &status, 0);
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

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr,
		"Usage: kshield guard { status | on | off | load [--off] | unload | selftest }\n"
		"\n"
		"  status     is the guard loaded, refusing (BPF LSM) or recording only, who is the agent\n"
		"  on | off   turn refusing on or off; only the agent, or the kshield binary\n"
		"             while no agent runs, may (stop the service first: docs/guard.md)\n"
		"  load       load the guard by hand (the agent does it when guard = on)\n"
		"  unload     remove the guard's pins (turn it off first)\n"
		"  selftest   play agent and attacker in a scratch --bpffs root; exit 0 if every\n"
		"             check passed (the kernel matrix runs this in each guest)\n");
	return 0;
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
		{ 0 }
	};
	return cmd_select(cmds, argc, argv, do_help);
}
