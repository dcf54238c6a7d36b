/* selftest.h - the shield test contract. Each shields/<name>/test.c registers
 * a trigger case (the exploit's triggering call sequence) and a benign case
 * (ordinary use of the same subsystem); `kshield test NAME` runs them around
 * a real load of the shield, on the host or inside a matrix guest.
 *
 * Each case runs in a forked child (so namespace changes stay there and a
 * SIGKILL shield can kill it) and returns:
 *   KS_CASE_PASSED   the call sequence went through
 *   KS_CASE_REFUSED  the guarded call failed with EPERM
 *   < 0              the case could not run; @why says what is missing
 * A child killed by SIGKILL counts as KS_CASE_REFUSED.
 *
 * A trigger that cannot run without the shield makes the test "not
 * applicable" only when this kernel lacks what it needs: a module of the
 * shield's "modules" metadata is neither loaded nor built in, or @why
 * starts with KS_CASE_NA ("not applicable: no cls_route classifier").
 * Any other error is the trigger itself failing, and fails the test.
 */
#ifndef KSHIELD_SELFTEST_H
#define KSHIELD_SELFTEST_H

#include <stddef.h>

#define KS_CASE_PASSED	0
#define KS_CASE_REFUSED	1
#define KS_CASE_NA	"not applicable: "

typedef int (*ks_case_fn)(char *why, size_t len);

struct ks_shield_test {
	const char *shield;	/* shield name, as in KSHIELD_NAME */
	ks_case_fn trigger;
	ks_case_fn benign;
	struct ks_shield_test *next;
};

void ks_test_register(struct ks_shield_test *t);

#define KSHIELD_TEST(name_, trigger_, benign_)				\
	static struct ks_shield_test __ks_test = {			\
		.shield = name_, .trigger = trigger_, .benign = benign_, \
	};								\
	__attribute__((constructor)) static void __ks_test_reg(void)	\
	{ ks_test_register(&__ks_test); }

/* Helpers for cases. */
/* Become root of a new user namespace (and a new network namespace when
 * @netns): the unprivileged attacker's position. 0 or -errno. */
int ks_test_enter_userns(int netns);
/* A descriptor made by @make in a child that first became root of a new
 * user namespace (and network namespace when @netns), passed back here
 * over SCM_RIGHTS: an object of the namespace used from outside it, where
 * the namespace's owner keeps every capability over it. The fd, or -errno
 * (@make's own negative return included). */
int ks_test_fd_from_userns(int netns, int (*make)(void));
/* Drop to an unprivileged uid/gid in the initial namespace. */
int ks_test_drop_to(unsigned uid, unsigned gid);
/* Case result of a syscall return value: -1/EPERM is REFUSED, success is
 * PASSED, anything else is an error described in @why. */
int ks_case_from(int rc, int err, const char *what, char *why, size_t len);

/* Runner side (src/lib/selftest/selftest.c, used by `kshield test`). */
#include "loader.h"
#include <stdbool.h>

struct ks_test_result {
	char shield[KS_NAME_LEN];
	char variant[KS_VARIANT_LEN];
	bool trigger_refused;	/* refused while enforcing */
	bool hit_recorded;	/* ... and counted by the shield */
	bool benign_ok;		/* benign passed while enforcing */
	bool audit_ok;		/* audit: trigger passed and was counted */
	bool unload_ok;		/* after unload the trigger passes again */
	bool unsupported;	/* no variant loads on this kernel */
	bool not_applicable;	/* the trigger cannot run on this kernel */
	char na_reason[512];	/* ... why: the case's own words */
	/* Which steps after the baseline ran; what a step did not run says
	 * nothing (plain text shows "-" there, never ok). */
	bool ran_enforce, ran_benign, ran_audit, ran_unload;
	int trigger_case;	/* KS_CASE_* or <0: the trigger while enforcing */
	struct ks_load_result load;
	/* The baseline trigger was refused by programs of this shield loaded
	 * elsewhere: "name (id N), ..."; the test did not run (a failure). */
	char refused_by[256];
	char error[1024];	/* first failure, "" when all is well */
};

struct ks_shield_test *ks_test_find(const char *name);
struct ks_shield_test *ks_test_first(void);
/* Run the whole sequence for @t with the object @object. Returns <0 only
 * when the test could not start; failures are in @r->error. */
int ks_test_run(const struct ks_shield_test *t, const char *object,
		struct ks_test_result *r);

#endif
