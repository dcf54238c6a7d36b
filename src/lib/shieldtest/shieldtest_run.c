// SPDX-License-Identifier: MIT
/* shieldtest_run.c - runs a shield's registered test cases around a real
 * load of the shield (the contract is in shieldtest.h, the runner's side in
 * shieldtest_run.h).
 *
 * The sequence proves each claim against its own baseline on this kernel,
 * path by path (a path that cannot run here is n/a and skipped):
 *   1. each path without the shield must go through (else the test proves
 *      nothing); its effect, where the case checks one, says whether the
 *      kernel is vulnerable;
 *   2. load (enforce): a path the variant prevents must be REFUSED and
 *      counted, one it detects counted; one it does not cover is reported
 *      (the result is partial);
 *   3. benign must PASS with the shield enforcing;
 *   4. audit mode: each covered path must go through and be counted;
 *   5. unload: each path must go through again.
 * A case not written yet (KS_CASE_TODO) is left out of every step and
 * fails the test ("not written yet"); one refused as the kernel's own fix
 * refuses (KS_CASE_FIXED) went as far as the fix: a pass without the
 * shield, the shield's refusal while enforcing when the shield counted it.
 *
 * A shield whose check is a kernel state that only arises where its bug is
 * live (metadata "state_check", e.g. a pipe buffer of the page cache that
 * may be merged into) has nothing to refuse where the bug is fixed: there a
 * path with no effect without the shield and none with it, and no hit, is
 * "fixed here", not a failure to prevent (it is not counted in audit mode
 * either). A shield whose "requires" rule out this kernel (the bug cannot
 * exist here) is n/a, unless a path showed the effect without it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "err.h"
#include "hex.h"
#include "loader.h"
#include "meta.h"
#include "modules.h"
#include "pins.h"
#include "shieldtest_run.h"

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

/* A case's child: forked, maybe waiting (set up before the load) until
 * case_finish() lets it go on. */
struct case_proc {
	pid_t pid;
	int why_fd;	/* what the case says, read at the end */
	int go_fd;	/* closed by case_finish(): the child goes on */
};

static int case_exit(int rc)
{
	return rc == KS_CASE_PASSED ? 0 : rc == KS_CASE_REFUSED ? 1 :
	       rc == KS_CASE_EFFECT ? 4 : rc == KS_CASE_NOEFFECT ? 5 :
	       rc == KS_CASE_FIXED ? 6 : rc == KS_CASE_TODO ? 7 : 2;
}

/* Path @p's case, and what runs before it (KS_CASE_PASSED when none). */
static int path_run(const struct ks_path *p, char *why, size_t len)
{
	return p->call ? p->call(p, why, len) : p->run(why, len);
}

static int path_before(const struct ks_path *p, char *why, size_t len)
{
	return p->call_before ? p->call_before(p, why, len) :
	       p->before ? p->before(why, len) : KS_CASE_PASSED;
}

static bool path_has_before(const struct ks_path *p)
{
	return p->before || p->call_before;
}

/* Fork the case of @p (after its before step, when it has one). With
 * @hold, the child runs the before step, says so, and waits for
 * case_finish() before the case; this returns once the before step is
 * done. 0 or -errno. */
static int case_start(const struct ks_path *p, bool hold, struct case_proc *c)
{
	int pfd[2], go[2] = { -1, -1 }, ready[2] = { -1, -1 };
	char byte;

	c->pid = -1;
	c->go_fd = -1;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	if (hold && (pipe2(go, O_CLOEXEC) || pipe2(ready, O_CLOEXEC))) {
		int err = -errno;

		close(pfd[0]);
		close(pfd[1]);
		if (go[0] >= 0) {
			close(go[0]);
			close(go[1]);
		}
		return err;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(pfd[0]);
		close(pfd[1]);
		if (hold) {
			close(go[0]); close(go[1]); close(ready[0]); close(ready[1]);
		}
		return err;
	}
	if (c->pid == 0) {
		char buf[512] = "";
		int rc = KS_CASE_PASSED;

		close(pfd[0]);
		alarm(CASE_TIMEOUT_S);
		rc = path_before(p, buf, sizeof(buf));
		if (hold) {
			close(go[1]);
			close(ready[0]);
			if (rc == KS_CASE_PASSED) {
				alarm(0);	/* the load may take long (5.10 verifier) */
				if (write(ready[1], "r", 1) != 1 || read(go[0], &byte, 1) < 0)
					_exit(3);
				alarm(CASE_TIMEOUT_S);
			}
			close(ready[1]);
		}
		if (rc == KS_CASE_PASSED)
			rc = path_run(p, buf, sizeof(buf));
		if (write(pfd[1], buf, strlen(buf)) < 0)
			_exit(3);
		_exit(case_exit(rc));
	}
	close(pfd[1]);
	c->why_fd = pfd[0];
	if (hold) {
		close(go[0]);
		close(ready[1]);
		c->go_fd = go[1];
		/* Ready, or the child ended (@before failed): either way on. */
		if (read(ready[0], &byte, 1) < 0)
			byte = 0;
		close(ready[0]);
	}
	return 0;
}

/* Let a held child go on, wait for it; map its exit to a case result. */
static int case_finish(struct case_proc *c, char *why, size_t len)
{
	int status;
	ssize_t n;

	why[0] = '\0';
	if (c->go_fd >= 0) {
		/* A byte, not only EOF: children held after this one inherited
		 * its write end (fork without exec), so closing it alone is not
		 * seen while they wait. The child may be gone already (its
		 * @before failed): no SIGPIPE for that. */
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);

		if (write(c->go_fd, "g", 1) < 0) {
			/* gone: its result is read below all the same */
		}
		signal(SIGPIPE, old);
		close(c->go_fd);
	}
	c->go_fd = -1;
	n = read(c->why_fd, why, len - 1);
	why[n > 0 ? n : 0] = '\0';
	close(c->why_fd);
	if (waitpid(c->pid, &status, 0) < 0) {
		int err = errno;

		snprintf(why, len, "waitpid (case): %s", strerror(err));
		return -err;
	}
	c->pid = -1;
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
	case 4: return KS_CASE_EFFECT;
	case 5: return KS_CASE_NOEFFECT;
	case 6: return KS_CASE_FIXED;
	case 7: return KS_CASE_TODO;
	default:
		if (!why[0])
			snprintf(why, len, "case failed to run");
		return -EIO;
	}
}

/* Run path @p's case in a child (its before step, then the case); map its
 * exit to a case result. */
static int run_path(const struct ks_path *p, char *why, size_t len)
{
	struct case_proc c;
	int err;

	why[0] = '\0';
	err = case_start(p, false, &c);
	if (err)
		snprintf(why, len, "could not start the case: %s", strerror(-err));
	return err ? err : case_finish(&c, why, len);
}

static int run_case(ks_case_fn fn, char *why, size_t len)
{
	const struct ks_path p = { .name = "benign", .run = fn };

	return run_path(&p, why, len);
}

/* The call sequence went through (with or without the effect checked), or
 * as far as the kernel's own fix, which refused it (KS_CASE_FIXED: outside
 * the enforce step no shield counted it, so the fix did). */
static bool went_through(int c)
{
	return c == KS_CASE_PASSED || c == KS_CASE_EFFECT || c == KS_CASE_NOEFFECT ||
	       c == KS_CASE_FIXED;
}

/* The effect was checked and found absent, or the fix refused the call. */
static bool no_effect(int c)
{
	return c == KS_CASE_NOEFFECT || c == KS_CASE_FIXED;
}

static __u64 hits(const char *name, enum ks_verdict v)
{
	struct ks_shield_state st;

	if (ks_shield_get(name, &st))
		return 0;
	return v == KS_VERDICT_REFUSED ? st.hits[KS_VERDICT_REFUSED] + st.hits[KS_VERDICT_KILLED]
				       : st.hits[v];
}

/* "a, b" list append. */
static void list_add(char *buf, size_t len, const char *item)
{
	size_t n = strlen(buf);

	if (n < len)
		snprintf(buf + n, len - n, "%s%s", n ? ", " : "", item);
}

/* The modules of @object's "modules" metadata this kernel has neither
 * loaded nor built in, in @buf as "a, b not loaded; c not in this kernel"
 * ("" when none). */
static void modules_absent(const char *object, char *buf, size_t len)
{
	struct ks_meta meta;
	const char *list;
	struct utsname u;
	char *copy, *save = NULL, unloaded[256] = "", unknown[256] = "";

	buf[0] = '\0';
	if (uname(&u) || ks_meta_read(object, &meta))
		return;
	list = ks_meta_get(&meta, "modules");
	copy = list ? strdup(list) : NULL;
	for (char *m = copy ? strtok_r(copy, ",", &save) : NULL; m; m = strtok_r(NULL, ",", &save)) {
		int st = *m ? ks_module_state(m, u.release) : 1;

		if (st == 0)
			list_add(unloaded, sizeof(unloaded), m);
		else if (st < 0)
			list_add(unknown, sizeof(unknown), m);
	}
	free(copy);
	ks_meta_free(&meta);
	snprintf(buf, len, "%s%s%s%s%s", unloaded, unloaded[0] ? " not loaded" : "",
		 unloaded[0] && unknown[0] ? "; " : "", unknown, unknown[0] ? " not in this kernel" : "");
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

void ks_path_note(struct ks_path_result *p, const char *step, int c, const char *why)
{
	if (p->why[0])
		return;		/* the first reason stays */
	snprintf(p->why, sizeof(p->why), "%s: %s%s%s", step, ks_case_str(c),
		 why && why[0] ? ": " : "",
		 why && why[0] ? why : c < 0 ? " (the trigger gave no reason)" : "");
}

/* 1. Baseline: each path without the shield. Paths that cannot run here
 * are n/a; any other path must go through. Returns the number that went
 * through. */
static int baseline(const struct ks_shield_test *t, const char *object, struct ks_test_result *r)
{
	char why[512], absent[256];
	bool absent_read = false;
	int nrun = 0, nchecked = 0, nnoeffect = 0, neffect = 0;

	for (int i = 0; i < t->npaths; i++) {
		struct ks_path_result *p = &r->paths[i];
		int c = run_path(&t->paths[i], why, sizeof(why));

		p->baseline = c;
		if (c == KS_CASE_TODO) {	/* never a pass, never n/a */
			p->todo = true;
			snprintf(p->why, sizeof(p->why), "%s", why[0] ? why : "not written yet");
			list_add(r->todo, sizeof(r->todo), p->name);
			r->ntodo++;
			continue;
		}
		if (c == KS_CASE_EFFECT)	/* the evidence that the bug is live */
			snprintf(p->effect, sizeof(p->effect), "%s", why);
		/* ... or that it is not: kept, and shown, either way */
		if (c == KS_CASE_EFFECT || no_effect(c))
			snprintf(p->seen, sizeof(p->seen), "%s", why[0] ? why :
				 "effect checked, none seen (the case gave no reason)");
		if (went_through(c)) {
			nrun++;
			nchecked += c == KS_CASE_EFFECT || no_effect(c);
			neffect += c == KS_CASE_EFFECT;
			nnoeffect += no_effect(c);
			continue;
		}
		/* Not applicable: a module the test needs is not in this
		 * kernel, or the case says the kernel lacks what the trigger
		 * needs. Any other error is the trigger failing: a failure. */
		if (c < 0 && !strncmp(why, KS_CASE_NA, strlen(KS_CASE_NA))) {
			p->not_applicable = true;
			snprintf(p->why, sizeof(p->why), "%s", why + strlen(KS_CASE_NA));
			continue;
		}
		if (c < 0 && !absent_read) {
			modules_absent(object, absent, sizeof(absent));
			absent_read = true;
		}
		if (c < 0 && absent[0]) {
			p->not_applicable = true;
			/* What failed first: the shield's module list may
			 * name modules this kernel never needed (renamed,
			 * built in as library code). */
			snprintf(p->why, sizeof(p->why), "trigger: %s; the shield's module(s) %s",
				 why[0] ? why : "failed", absent);
			continue;
		}
		/* Refused: most likely by this very shield, loaded elsewhere
		 * (another bpffs root, the agent). Not a pass, not n/a: the
		 * test did not run; say so and what to do. */
		if (c == KS_CASE_REFUSED && !r->refused_by[0])
			loaded_elsewhere(object, r->refused_by, sizeof(r->refused_by));
		ks_path_note(p, "does not go through without the shield", c, why);
		if (t->npaths == 1)
			FAIL("trigger %s", p->why);
		else
			FAIL("%s: trigger %s", p->name, p->why);
	}
	r->vulnerable = neffect ? "yes" : nchecked && nnoeffect == nchecked ? "no" : "unknown";
	if (r->refused_by[0])
		snprintf(r->error, sizeof(r->error), "not run: the trigger is already refused here "
			 "by %s, this shield loaded elsewhere (another bpffs root or the agent: see "
			 "'kshield status'); unload it there to test", r->refused_by);
	if (!nrun && !r->error[0] && !r->ntodo) {
		/* Nothing to protect here: n/a, with each distinct reason
		 * once, after the paths that share it ("all N paths" when
		 * they all do). */
		bool same = true;

		r->not_applicable = true;
		for (int i = 1; i < t->npaths; i++)
			same &= !strcmp(r->paths[i].why, r->paths[0].why);
		if (t->npaths == 1)
			snprintf(r->na_reason, sizeof(r->na_reason), "%s", r->paths[0].why);
		else if (same)
			snprintf(r->na_reason, sizeof(r->na_reason), "%s (all %d paths)",
				 r->paths[0].why, t->npaths);
		for (int i = 0; !same && i < t->npaths; i++) {
			char names[KS_MAX_PATHS * KS_PATH_NAME_LEN] = "";
			size_t n = strlen(r->na_reason);
			bool seen = false;

			for (int j = 0; j < i && !seen; j++)
				seen = !strcmp(r->paths[j].why, r->paths[i].why);
			if (seen)
				continue;
			for (int k = i; k < t->npaths; k++)
				if (!strcmp(r->paths[k].why, r->paths[i].why))
					list_add(names, sizeof(names), r->paths[k].name);
			if (n < sizeof(r->na_reason))
				snprintf(r->na_reason + n, sizeof(r->na_reason) - n, "%s%s: %s",
					 n ? "; " : "", names, r->paths[i].why);
		}
		FAIL("no trigger path can run here: %s", r->na_reason);
	}
	return nrun;
}

/* 2. Enforcing: hold each runnable path to what the variant claims. */
static void enforce(const struct ks_shield_test *t, const struct ks_meta *meta,
		    struct ks_test_result *r, struct case_proc *held)
{
	char why[512], missed[192] = "";
	int nprev = 0, nprev_ok = 0, ndet = 0, ncov_hit = 0, nfixed = 0, first = -1;
	const char *state = ks_meta_get(meta, "state_check");

	for (int i = 0; i < t->npaths; i++) {
		struct ks_path_result *p = &r->paths[i];
		__u64 before, before_killed;
		int c;

		if (p->not_applicable || p->todo)
			continue;
		p->cov = ks_meta_coverage(meta, r->variant, p->name, NULL);
		before = hits(t->shield, KS_VERDICT_REFUSED);
		before_killed = hits(t->shield, KS_VERDICT_KILLED);
		/* A pre-existing path's child set up before the load: let it on. */
		c = held[i].pid > 0 ? case_finish(&held[i], why, sizeof(why))
				    : run_path(&t->paths[i], why, sizeof(why));
		p->ran_enforce = true;
		p->enforce = c;
		p->hit = hits(t->shield, KS_VERDICT_REFUSED) > before;
		p->killed = hits(t->shield, KS_VERDICT_KILLED) > before_killed;
		/* Refused with the fix's errno, and counted: the shield did it. */
		if (c == KS_CASE_FIXED && p->hit)
			p->enforce = c = KS_CASE_REFUSED;
		if (first < 0)
			first = c;
		if (c < 0) {
			ks_path_note(p, "could not run while enforcing", c, why);
			FAIL("%s: trigger could not run while enforcing%s%s", p->name,
			     why[0] ? ": " : "", why);
			continue;
		}
		if (state && p->cov != KS_COV_NONE && p->baseline == KS_CASE_NOEFFECT &&
		    c == KS_CASE_NOEFFECT && !p->hit) {
			p->ok = p->fixed_here = true;
			nfixed++;
			snprintf(p->why, sizeof(p->why), "no effect without the shield nor with it, "
				 "and the state it refuses (%s) never arose", state);
			continue;
		}
		switch (p->cov) {
		case KS_COV_PREVENTS:
			nprev++;
			p->ok = c == KS_CASE_REFUSED && p->hit;
			nprev_ok += c == KS_CASE_REFUSED;
			ncov_hit += p->hit;
			if (c != KS_CASE_REFUSED)
				snprintf(p->why, sizeof(p->why), "%s claims to prevent it, but it went "
					 "through (%s)%s%s", r->variant, ks_case_str(c),
					 why[0] ? ": " : "", why);
			else if (!p->hit)
				snprintf(p->why, sizeof(p->why), "refused but no hit recorded: "
					 "something else refused it");
			break;
		case KS_COV_DETECTS:
			ndet++;
			p->ok = p->hit;
			ncov_hit += p->hit;
			if (!p->hit)
				snprintf(p->why, sizeof(p->why), "%s claims to detect it, but no hit "
					 "was recorded (%s)", r->variant, ks_case_str(c));
			break;
		case KS_COV_NONE:
			list_add(missed, sizeof(missed), p->name);
			snprintf(p->why, sizeof(p->why), "not covered by %s (%s while enforcing)",
				 r->variant, ks_case_str(c));
			break;
		}
		if (p->cov != KS_COV_NONE && !p->ok)
			FAIL("trigger %s%s%s", t->npaths > 1 ? p->name : "",
			     t->npaths > 1 ? ": " : "", p->why);
	}
	r->ran_enforce = true;
	r->trigger_case = first;
	r->trigger_refused = nprev > 0 && nprev_ok == nprev;
	r->detect_only = !nprev && ndet > 0;
	r->fixed_here = nfixed > 0 && !nprev && !ndet;
	r->hit_recorded = ncov_hit > 0 && ncov_hit == nprev + ndet;
	if (missed[0]) {
		r->partial = true;
		snprintf(r->not_covered, sizeof(r->not_covered), "%s: %s not covered",
			 r->variant, missed);
	}
}

int ks_test_run(const struct ks_shield_test *t, const char *object, struct ks_test_result *r)
{
	struct case_proc held[KS_MAX_PATHS];
	struct ks_meta meta;
	char why[512];
	__u64 before;
	int c, err;

	memset(r, 0, sizeof(*r));
	snprintf(r->shield, sizeof(r->shield), "%s", t->shield);
	r->vulnerable = "unknown";
	r->npaths = t->npaths < KS_MAX_PATHS ? t->npaths : KS_MAX_PATHS;
	for (int i = 0; i < r->npaths; i++)
		snprintf(r->paths[i].name, sizeof(r->paths[i].name), "%s", t->paths[i].name);
	if (!ks_shield_get(t->shield, &(struct ks_shield_state){}))
		return ks_err(-EBUSY, "shield %s is already loaded under %s: unload it "
			      "or use another --bpffs root to test it", t->shield, ks_bpffs_root);
	err = ks_meta_read(object, &meta);
	if (err)
		return err;
	ks_hex(meta.sha256, sizeof(meta.sha256), r->sha256, sizeof(r->sha256));

	/* 1. Baseline: without the shield the paths must go through. Cases
	 * not written yet are left out of every step, but the shield is still
	 * loaded, so that a new shield's variants are tried at once. */
	if ((!baseline(t, object, r) && !r->ntodo) || r->error[0])
		goto out;

	/* 2. Enforce. Pre-existing paths set up their objects first, while
	 * nothing guards them, and go on once the shield is loaded. */
	for (int i = 0; i < t->npaths; i++) {
		held[i].pid = -1;
		if (path_has_before(&t->paths[i]) && !r->paths[i].not_applicable &&
		    !r->paths[i].todo &&
		    case_start(&t->paths[i], true, &held[i]))
			held[i].pid = -1;	/* could not fork: run it the plain way */
	}
	err = ks_shield_load(object, KS_MODE_ENFORCE, &r->load);
	if (err) {
		bool unneeded = r->load.ntried > 0;

		for (int i = 0; i < r->load.ntried; i++)
			unneeded &= r->load.tried[i].unneeded;
		for (int i = 0; i < t->npaths; i++)
			if (held[i].pid > 0) {
				kill(held[i].pid, SIGKILL);
				case_finish(&held[i], why, sizeof(why));
			}
		/* The shield's own rule says its bug cannot exist here: n/a,
		 * unless a path just showed the effect (the rule is wrong). */
		if (unneeded && strcmp(r->vulnerable, "yes")) {
			r->not_applicable = true;
			snprintf(r->na_reason, sizeof(r->na_reason), "not loaded: %s (vulnerable %s)",
				 r->load.tried[0].why, r->vulnerable);
			goto out;
		}
		if (unneeded)
			FAIL("the bug is live here (a path showed its effect without the shield) but "
			     "the shield's requires rule this kernel out: %s", r->load.tried[0].why);
		else
			FAIL("%s", ks_errmsg());
		r->unsupported = r->load.ntried > 0 && !r->load.variant[0];
		goto out;
	}
	snprintf(r->variant, sizeof(r->variant), "%s", r->load.variant);
	enforce(t, &meta, r, held);

	/* 3. Ordinary use of the subsystem. */
	c = run_case(t->benign, why, sizeof(why));
	r->ran_benign = true;
	r->benign_ok = c == KS_CASE_PASSED;
	if (c == KS_CASE_TODO) {
		r->benign_todo = true;
		list_add(r->todo, sizeof(r->todo), "benign");
		r->ntodo++;
	} else if (!r->benign_ok)
		FAIL("benign case broken by the shield (%s)%s%s", ks_case_str(c),
		     why[0] ? ": " : "", why);

	/* 4. Audit: covered paths allowed, but counted. */
	if (ks_shield_set_mode(t->shield, KS_MODE_AUDIT)) {
		FAIL("%s", ks_errmsg());
	} else {
		r->ran_audit = true;
		r->audit_ok = true;
		for (int i = 0; i < r->npaths; i++) {
			struct ks_path_result *p = &r->paths[i];

			if (p->not_applicable || !p->ran_enforce || p->cov == KS_COV_NONE ||
			    p->fixed_here)
				continue;
			before = hits(t->shield, KS_VERDICT_AUDITED);
			c = run_path(&t->paths[i], why, sizeof(why));
			p->ran_audit = true;
			p->audit = c;
			p->audited = hits(t->shield, KS_VERDICT_AUDITED) > before;
			if (!went_through(c) || !p->audited) {
				r->audit_ok = false;
				if (!went_through(c))
					ks_path_note(p, "audit mode", c, why);
				else
					ks_path_note(p, "audit mode: no audited hit counted", c, why);
				FAIL("audit mode: %s%strigger %s, audited hits %s",
				     t->npaths > 1 ? p->name : "", t->npaths > 1 ? ": " : "",
				     ks_case_str(c), p->audited ? "counted" : "not counted");
			}
		}
		ks_shield_set_mode(t->shield, KS_MODE_ENFORCE);
	}

	/* 5. Unload: back to the baseline. */
	if (ks_shield_unload(t->shield)) {
		FAIL("%s", ks_errmsg());
	} else {
		r->ran_unload = true;
		r->unload_ok = true;
		for (int i = 0; i < r->npaths; i++) {
			struct ks_path_result *p = &r->paths[i];

			if (p->not_applicable || p->todo)
				continue;
			c = run_path(&t->paths[i], why, sizeof(why));
			p->ran_unload = true;
			p->unload = c;
			if (!went_through(c)) {
				r->unload_ok = false;
				ks_path_note(p, "after unload", c, why);
				FAIL("%s%strigger still %s after unload", t->npaths > 1 ? p->name : "",
				     t->npaths > 1 ? ": " : "", ks_case_str(c));
			}
		}
	}
out:
	/* Not written yet heads the error: it is what there is to do first. */
	if (r->ntodo) {
		char rest[sizeof(r->error)];

		snprintf(rest, sizeof(rest), "%s", r->error);
		snprintf(r->error, sizeof(r->error), "not written yet: %s (test.c)%s%s", r->todo,
			 rest[0] ? "; " : "", rest);
	}
	ks_meta_free(&meta);
	return 0;
}
