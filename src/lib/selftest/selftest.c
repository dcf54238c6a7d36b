/* selftest.c - runs a shield's registered test cases around a real load of
 * the shield (the contract is in selftest.h), and the helpers cases use.
 *
 * The sequence proves each claim against its own baseline on this kernel:
 *   1. trigger without the shield must PASS (else the test proves nothing);
 *   2. load (enforce): trigger must be REFUSED and counted as a hit;
 *   3. benign must PASS with the shield enforcing;
 *   4. audit mode: trigger must PASS and be counted as audited;
 *   5. unload: trigger must PASS again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "err.h"
#include "loader.h"
#include "meta.h"
#include "pins.h"
#include "selftest.h"

#define CASE_TIMEOUT_S 20

static struct ks_shield_test *tests;

void ks_test_register(struct ks_shield_test *t)
{
	t->next = tests;
	tests = t;
}

struct ks_shield_test *ks_test_find(const char *name)
{
	for (struct ks_shield_test *t = tests; t; t = t->next)
		if (!strcmp(t->shield, name))
			return t;
	return NULL;
}

struct ks_shield_test *ks_test_first(void)
{
	return tests;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

int ks_test_enter_userns(int netns)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int err;

	if (unshare(CLONE_NEWUSER | (netns ? CLONE_NEWNET : 0)))
		return -errno;
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", uid);
	err = write_file("/proc/self/uid_map", map);
	if (err)
		return err;
	snprintf(map, sizeof(map), "0 %u 1", gid);
	return write_file("/proc/self/gid_map", map);
}

int ks_test_fd_from_userns(int netns, int (*make)(void))
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	int sv[2], err = 0, fd = -1, status;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof(err) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		close(sv[0]);
		err = ks_test_enter_userns(netns);
		if (!err)
			fd = make();
		if (fd < 0) {
			err = err ? err : fd;	/* no descriptor: just the error */
			m.msg_control = NULL;
			m.msg_controllen = 0;
		} else {
			c = CMSG_FIRSTHDR(&m);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		_exit(sendmsg(sv[1], &m, 0) < 0);
	}
	close(sv[1]);
	if (recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC) < 0)
		err = -errno;
	close(sv[0]);
	if (waitpid(pid, &status, 0) < 0 && !err)
		err = -errno;
	c = CMSG_FIRSTHDR(&m);
	if (!err && c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	else if (!err)
		err = -EIO;
	return err ? err : fd;
}

int ks_test_drop_to(unsigned uid, unsigned gid)
{
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
		return -errno;
	return 0;
}

int ks_case_from(int rc, int err, const char *what, char *why, size_t len)
{
	if (rc >= 0)
		return KS_CASE_PASSED;
	if (err == EPERM)
		return KS_CASE_REFUSED;
	snprintf(why, len, "%s: %s", what, strerror(err));
	return -err;
}

/* Run @fn in a child; map its exit to a case result. */
static int run_case(ks_case_fn fn, char *why, size_t len)
{
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	why[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char buf[512] = "";
		int rc;

		close(pfd[0]);
		alarm(CASE_TIMEOUT_S);
		rc = fn(buf, sizeof(buf));
		if (write(pfd[1], buf, strlen(buf)) < 0)
			_exit(3);
		_exit(rc == KS_CASE_PASSED ? 0 : rc == KS_CASE_REFUSED ? 1 : 2);
	}
	close(pfd[1]);
	n = read(pfd[0], why, len - 1);
	why[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGKILL)
			return KS_CASE_REFUSED;
		snprintf(why, len, "case died of signal %d%s", WTERMSIG(status),
			 WTERMSIG(status) == SIGALRM ? " (timed out)" : "");
		return -EINTR;
	}
	switch (WEXITSTATUS(status)) {
	case 0: return KS_CASE_PASSED;
	case 1: return KS_CASE_REFUSED;
	default:
		if (!why[0])
			snprintf(why, len, "case failed to run");
		return -EIO;
	}
}

static const char *case_str(int r)
{
	return r == KS_CASE_PASSED ? "passed" : r == KS_CASE_REFUSED ? "refused" : "error";
}

static __u64 hits(const char *name, enum ks_verdict v)
{
	struct ks_shield_state st;

	if (ks_shield_get(name, &st))
		return 0;
	return v == KS_VERDICT_REFUSED ? st.hits[KS_VERDICT_REFUSED] + st.hits[KS_VERDICT_KILLED]
				       : st.hits[v];
}

/* Is kernel module @name (as in "modules" metadata) loaded or built in? */
static bool module_present(const char *name, const char *release)
{
	char m[64], path[128], line[256];
	bool found = false;
	FILE *f;

	snprintf(m, sizeof(m), "%s", name);
	for (char *p = m; *p; p++)
		if (*p == '-')
			*p = '_';
	snprintf(path, sizeof(path), "/sys/module/%s", m);
	if (!access(path, F_OK))
		return true;
	/* Built-in modules without parameters have no /sys/module entry. */
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.builtin", release);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *b = strrchr(line, '/'), *dot;

		b = b ? b + 1 : line;
		dot = strstr(b, ".ko");
		if (!dot)
			continue;
		*dot = '\0';
		for (char *p = b; *p; p++)
			if (*p == '-')
				*p = '_';
		found = !strcmp(b, m);
	}
	if (f)
		fclose(f);
	return found;
}

/* The modules of @object's "modules" metadata this kernel has neither
 * loaded nor built in, as "a, b" in @buf ("" when none). */
static void modules_absent(const char *object, char *buf, size_t len)
{
	struct ks_meta meta;
	const char *list;
	struct utsname u;
	char *copy, *save = NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (uname(&u) || ks_meta_read(object, &meta))
		return;
	list = ks_meta_get(&meta, "modules");
	copy = list ? strdup(list) : NULL;
	for (char *m = copy ? strtok_r(copy, ",", &save) : NULL; m; m = strtok_r(NULL, ",", &save))
		if (*m && !module_present(m, u.release) && n < len)
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", m);
	free(copy);
	ks_meta_free(&meta);
}

/* Programs of @object already loaded in this kernel (by name, as the kernel
 * keeps it: the first BPF_OBJ_NAME_LEN - 1 characters, and by type), as
 * "name (id N), ..." in @buf ("" when none): the same shield loaded under
 * another bpffs root or by the agent refuses the baseline trigger. */
static void loaded_elsewhere(const char *object, char *buf, size_t len)
{
	struct bpf_object *obj = bpf_object__open_file(object, NULL);
	struct bpf_program *prog;
	__u32 id = 0;
	size_t n = 0;

	buf[0] = '\0';
	if (!obj)
		return;
	while (n < len && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 ilen = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &ilen) || !info.name[0]) {
			close(fd);
			continue;
		}
		close(fd);
		bpf_object__for_each_program(prog, obj) {
			const char *pn = bpf_program__name(prog);

			if (info.type == bpf_program__type(prog) &&
			    !strncmp(pn, info.name, BPF_OBJ_NAME_LEN - 1) &&
			    strlen(info.name) == (strlen(pn) < BPF_OBJ_NAME_LEN - 1 ?
						  strlen(pn) : BPF_OBJ_NAME_LEN - 1)) {
				n += snprintf(buf + n, len - n, "%s%s (id %u)", n ? ", " : "",
					      pn, id);
				break;
			}
		}
	}
	bpf_object__close(obj);
}

/* Record the first failure only: it is the one that explains the rest. */
#define FAIL(...) do { if (!r->error[0]) snprintf(r->error, sizeof(r->error), __VA_ARGS__); } while (0)

int ks_test_run(const struct ks_shield_test *t, const char *object, struct ks_test_result *r)
{
	char why[512];
	__u64 before;
	int c, err;

	memset(r, 0, sizeof(*r));
	snprintf(r->shield, sizeof(r->shield), "%s", t->shield);
	if (!ks_shield_get(t->shield, &(struct ks_shield_state){}))
		return ks_err(-EBUSY, "shield %s is already loaded under %s: unload it "
			      "or use another --bpffs root to test it", t->shield, ks_bpffs_root);

	/* 1. Baseline: without the shield the trigger must go through. */
	c = run_case(t->trigger, why, sizeof(why));
	if (c != KS_CASE_PASSED) {
		char absent[256] = "";

		/* Not applicable: a module the test needs is not in this
		 * kernel, or the case says the kernel lacks what the trigger
		 * needs. Any other error is the trigger failing: a failure. */
		if (c < 0)
			modules_absent(object, absent, sizeof(absent));
		if (absent[0]) {
			r->not_applicable = true;
			snprintf(r->na_reason, sizeof(r->na_reason),
				 "module(s) %s not loaded or built in here (trigger: %s)", absent,
				 why[0] ? why : "failed");
			FAIL("trigger does not pass without the shield (%s)%s%s; module(s) not "
			     "loaded or built in here: %s", case_str(c), why[0] ? ": " : "", why, absent);
			return 0;
		}
		/* Refused: most likely by this very shield, loaded elsewhere
		 * (another bpffs root, the agent). Not a pass, not n/a: the
		 * test did not run; say so and what to do. */
		if (c == KS_CASE_REFUSED)
			loaded_elsewhere(object, r->refused_by, sizeof(r->refused_by));
		if (r->refused_by[0]) {
			FAIL("not run: the trigger is already refused here by %s, this shield "
			     "loaded elsewhere (another bpffs root or the agent: see 'kshield "
			     "status'); unload it there to test", r->refused_by);
			return 0;
		}
		if (c < 0 && !strncmp(why, KS_CASE_NA, strlen(KS_CASE_NA))) {
			r->not_applicable = true;
			snprintf(r->na_reason, sizeof(r->na_reason), "%s", why + strlen(KS_CASE_NA));
		}
		FAIL("trigger does not pass without the shield (%s)%s%s", case_str(c),
		     why[0] ? ": " : "", why);
		return 0;
	}

	/* 2. Enforce. */
	err = ks_shield_load(object, KS_MODE_ENFORCE, &r->load);
	if (err) {
		r->unsupported = r->load.ntried > 0 && !r->load.variant[0];
		FAIL("%s", ks_errmsg());
		return 0;
	}
	snprintf(r->variant, sizeof(r->variant), "%s", r->load.variant);
	before = hits(t->shield, KS_VERDICT_REFUSED);
	c = run_case(t->trigger, why, sizeof(why));
	r->ran_enforce = true;
	r->trigger_case = c;
	r->trigger_refused = c == KS_CASE_REFUSED;
	if (!r->trigger_refused)
		FAIL("trigger not refused while enforcing (%s)%s%s", case_str(c),
		     why[0] ? ": " : "", why);
	else if (hits(t->shield, KS_VERDICT_REFUSED) <= before)
		FAIL("trigger refused but no hit recorded: something else refused it");
	r->hit_recorded = hits(t->shield, KS_VERDICT_REFUSED) > before;

	/* 3. Ordinary use of the subsystem. */
	c = run_case(t->benign, why, sizeof(why));
	r->ran_benign = true;
	r->benign_ok = c == KS_CASE_PASSED;
	if (!r->benign_ok)
		FAIL("benign case broken by the shield (%s)%s%s", case_str(c),
		     why[0] ? ": " : "", why);

	/* 4. Audit: allowed, but counted. */
	if (ks_shield_set_mode(t->shield, KS_MODE_AUDIT)) {
		FAIL("%s", ks_errmsg());
	} else {
		before = hits(t->shield, KS_VERDICT_AUDITED);
		c = run_case(t->trigger, why, sizeof(why));
		r->ran_audit = true;
		r->audit_ok = c == KS_CASE_PASSED && hits(t->shield, KS_VERDICT_AUDITED) > before;
		if (!r->audit_ok)
			FAIL("audit mode: trigger %s, audited hits %s", case_str(c),
			     hits(t->shield, KS_VERDICT_AUDITED) > before ? "counted" : "not counted");
		ks_shield_set_mode(t->shield, KS_MODE_ENFORCE);
	}

	/* 5. Unload: back to the baseline. */
	if (ks_shield_unload(t->shield)) {
		FAIL("%s", ks_errmsg());
	} else {
		c = run_case(t->trigger, why, sizeof(why));
		r->ran_unload = true;
		r->unload_ok = c == KS_CASE_PASSED;
		if (!r->unload_ok)
			FAIL("trigger still %s after unload", case_str(c));
	}
	return 0;
}
