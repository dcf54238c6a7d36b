/* SPDX-License-Identifier: MIT */
/* shieldtest.h - the shield test contract. Each shields/<name>/test.c registers
 * the known paths to the shield's bug, one trigger case each (the exploit's
 * triggering call sequence by that way in: "native", "compat-i386",
 * "io-uring", "splice", ...), and a benign case (ordinary use of the same
 * subsystem); `kshield test NAME` runs them around a real load of the
 * shield, on the host or inside a matrix guest.
 *
 *	KSHIELD_TEST_PATHS("cve-x", benign_fn,
 *		{ "native", trigger_native },
 *		{ "splice", .call = feed, .way = FEED_SPLICE },
 *		{ "sendfile", .call = feed, .way = FEED_SENDFILE },
 *		{ "compat-" KS_ABI32_NAME, trigger_compat });
 *	KSHIELD_TEST("cve-x", trigger, benign);	// one path, "native"
 *
 * A path is a row of the table: a case that needs nothing more is
 * (why, len); one case function serving many paths is given the path
 * (@call), and tells them apart by its @arg and @way.
 *
 * Each case runs in a forked child (so namespace changes stay there and a
 * SIGKILL shield can kill it) and returns:
 *   KS_CASE_PASSED    the call sequence went through, no effect observable
 *   KS_CASE_REFUSED   the guarded call failed with EPERM
 *   KS_CASE_EFFECT    it went through and the exploit's effect was seen
 *                     (page cache changed, oops, ...): the bug is live here
 *   KS_CASE_NOEFFECT  it went through, the effect was checked and is
 *                     absent: the bug is fixed on this kernel
 *   KS_CASE_FIXED     refused with the errno the kernel's own fix gives,
 *                     which is the shield's too (EPERM): see below
 *   KS_CASE_TODO      the case is not written yet (`kshield shield new`
 *                     writes every case so): reported as "not written
 *                     yet", never a pass, the test fails until it is
 *   < 0               the case could not run; @why says what is missing
 * A child killed by SIGKILL counts as KS_CASE_REFUSED. @why is kept for
 * every result: for EFFECT, NOEFFECT and FIXED in the baseline it is what
 * the case saw (JSON "baseline_why"), the evidence of `vulnerable`.
 *
 * The kernel's own fix refused it (KS_CASE_FIXED): where a fixed kernel
 * refuses the trigger with the same errno as the shield (cgroup v1's
 * release_agent fix and the shield both give EPERM), the case cannot tell
 * who refused, so it returns KS_CASE_FIXED for that errno instead of
 * KS_CASE_REFUSED (ks_case_fixed_from() does it) and the runner tells the
 * two apart by the shield's own hit counter: without the shield (baseline,
 * after unload) FIXED is the kernel's refusal: the path went as far as the
 * shield's hook, its effect is absent (as NOEFFECT: `vulnerable: no` when
 * every checked path says so), and it is no failure; while enforcing,
 * FIXED with a hit the shield counted is the shield's refusal (REFUSED),
 * without one the shield did not see it; in audit mode it must be counted
 * as audited. Put the shield's hook before the fix's check (an LSM hook at
 * the syscall's entry is), or enforcing cannot be told from the fix.
 *
 * A path that cannot run without the shield is "not applicable" only when
 * this kernel lacks what it needs: a module of the shield's "modules"
 * metadata is neither loaded nor built in, or @why starts with KS_CASE_NA
 * ("not applicable: no 32-bit emulation"). Any other error is the trigger
 * itself failing, and fails the test.
 *
 * What each variant covers is metadata of the shield object (shield.bpf.h):
 *   KSHIELD_META(prevents_<v>, "native,splice")  refused before the effect
 *   KSHIELD_META(detects_<v>,  "io-uring")       only seen (killed after,
 *                                                 reported)
 * The runner holds the variant that loaded to it: a prevented path must be
 * refused and counted, a detected one counted; a path in neither list is
 * "not covered" and makes the result partial, never a pass. A variant
 * with neither key is taken to prevent every path (the contract before
 * paths existed: the trigger must be refused).
 *
 * Baseline (no shield): a path with EFFECT makes the kernel vulnerable
 * ("yes"); every effect-checking path NOEFFECT makes it "no"; otherwise
 * "unknown".
 */
/* This is what a test.c includes; the runner's side (results, ks_test_run)
 * is shieldtest_run.h, included by `kshield test`. */
#ifndef KSHIELD_SHIELDTEST_H
#define KSHIELD_SHIELDTEST_H

#include <stddef.h>
#include "array.h"

#define KS_CASE_PASSED		0
#define KS_CASE_REFUSED		1
#define KS_CASE_EFFECT		2
#define KS_CASE_NOEFFECT	3
#define KS_CASE_FIXED		4	/* refused as the kernel's fix refuses */
#define KS_CASE_TODO		5	/* "not written yet": never a pass */
#define KS_CASE_NA	"not applicable: "

#define KS_MAX_PATHS	32
#define KS_PATH_NAME_LEN 32

typedef int (*ks_case_fn)(char *why, size_t len);
struct ks_path;
/* A case given the path it runs for: one function for many paths. */
typedef int (*ks_path_fn)(const struct ks_path *p, char *why, size_t len);

/* One known path to the bug: a trigger case, either @run (a case that
 * needs no argument) or @call (given this path: its @name, @arg and
 * @way). A path whose object is set up before the shield loads
 * ("pre-existing": a socket bound, a netlink socket opened, a user
 * namespace entered while nothing guarded it) gives @before (or
 * @call_before): it runs in the case's child first, and while the shield
 * is being loaded for the enforce step that child waits (its objects
 * open) until the load is done; then @run goes on in the same child. In
 * the other steps the two run back to back. @before returns
 * KS_CASE_PASSED (0) or <0 with @why filled, like a case. */
struct ks_path {
	const char *name;	/* short, stable, lower-case */
	ks_case_fn run;
	ks_case_fn before;	/* NULL: none */
	ks_path_fn call;	/* instead of @run */
	ks_path_fn call_before;	/* instead of @before */
	const void *arg;	/* for @call: what this path is about (a trigger, a table) */
	int way;		/* ... and which way in (an enum of the test's own) */
};

/* The 32-bit ABI this build's compat paths use, in path names
 * ("compat-" KS_ABI32_NAME), as the BPF side's NLW_PATHS_COMPAT:
 * i386 on x86-64, AArch32 ("arm") on arm64. KS_IF_SOCKETCALL32(...) is
 * its arguments where that ABI has socketcall (i386), nothing where it
 * has none (AArch32 EABI): a table row that exists only on i386. */
#if defined(__aarch64__)
#define KS_ABI32_NAME		"arm"
#define KS_IF_SOCKETCALL32(...)
#else
#define KS_ABI32_NAME		"i386"
#define KS_IF_SOCKETCALL32(...)	__VA_ARGS__
#endif

struct ks_shield_test {
	const char *shield;	/* shield name, as in KSHIELD_NAME */
	const struct ks_path *paths;
	int npaths;
	ks_case_fn benign;
	struct ks_shield_test *next;
};

/* Called by KSHIELD_TEST_PATHS's constructor (shieldtest_run.c). */
void ks_test_register(struct ks_shield_test *t);

#define KSHIELD_TEST_PATHS(name_, benign_, ...)				\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"") \
	static const struct ks_path __ks_paths[] = { __VA_ARGS__ };	\
	_Pragma("GCC diagnostic pop")					\
	_Static_assert(ARRAY_SIZE(__ks_paths) <= KS_MAX_PATHS,		\
		       "too many paths");				\
	static struct ks_shield_test __ks_test = {			\
		.shield = name_, .paths = __ks_paths, .benign = benign_, \
		.npaths = ARRAY_SIZE(__ks_paths),				\
	};								\
	__attribute__((constructor)) static void __ks_test_reg(void)	\
	{ ks_test_register(&__ks_test); }

#define KSHIELD_TEST(name_, trigger_, benign_)				\
	KSHIELD_TEST_PATHS(name_, benign_, { "native", trigger_, NULL })

/* Helpers for cases (shieldtest.c). */
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
/* Run this shield's 32-bit build of a test program: <shields dir>/<shield>/
 * compat/<prog>.i386 on x86-64 (static i386, i686-linux-gnu-gcc) or
 * <prog>.arm on arm64 (AArch32, arm-linux-gnueabihf-gcc), from
 * shields/<shield>/compat/<prog>.c. Its exit status is the case result
 * (0 PASSED, 1 REFUSED, 2 EFFECT, 3 NOEFFECT, 4 not applicable, 6 FIXED,
 * any other an error), killed by SIGKILL is REFUSED; what it printed on stderr becomes @why. A kernel
 * that cannot run it (ENOEXEC: no 32-bit emulation) makes the case n/a;
 * a missing binary is an error. */
/* The path of that 32-bit build in @path: 0, or <0 with @why (n/a on an
 * arch without a 32-bit ABI, an error when the program is missing). */
int ks_test_compat_path(const char *shield, const char *prog, char *path, size_t plen,
			char *why, size_t len);
/* The case result of a failed exec of @path with errno @e: n/a for ENOEXEC
 * (no 32-bit emulation), else an error; @why says which. */
int ks_test_compat_exec_failed(const char *path, int e, char *why, size_t len);
int ks_test_run_compat(const char *shield, const char *prog, char *const argv[],
		       char *why, size_t len);
/* ks_test_run_compat(@shield, @prog, { "<fd>", @arg }) with @fd inherited
 * (a copy without FD_CLOEXEC, closed again here): the 32-bit program works
 * on an object the test made (a context, a scratch file). */
int ks_test_run_compat_fd(const char *shield, const char *prog, int fd, const char *arg,
			  char *why, size_t len);
/* A socket made by 32-bit code (the shared compat program "socket",
 * shields/common/compat/socket.c, through the 32-bit socket syscall, or
 * i386 socketcall(SYS_SOCKET) when @socketcall), passed back here: the fd,
 * -EPERM when refused (or the program killed), or <0 with @why (n/a
 * where no 32-bit code runs). */
int ks_test_socket_compat(int family, int type, int protocol, int socketcall,
			  char *why, size_t len);
/* Where the shield objects (and their compat/ programs) are; set by
 * `kshield test`. */
extern const char *ks_test_shields_dir;

/* Case result of a syscall return value: -1/EPERM is REFUSED, success is
 * PASSED, anything else is an error described in @why. */
int ks_case_from(int rc, int err, const char *what, char *why, size_t len);
/* The same for a call the kernel's fix refuses with EPERM too: -1/EPERM is
 * KS_CASE_FIXED (the runner tells the shield's refusal from the fix's by
 * its hit counter), @why says "@what: refused (EPERM)". */
int ks_case_fixed_from(int rc, int err, const char *what, char *why, size_t len);
/* A case not written yet: @why says "not written yet" (and @what, when
 * given: what the case has to do); returns KS_CASE_TODO. */
int ks_case_todo(const char *what, char *why, size_t len);
/* A step that failed with -errno @err: @why says "@what: <strerror>";
 * returns @err. */
int ks_case_fail(const char *what, int err, char *why, size_t len);
/* A case result in words: "passed", "refused", "effect", "no-effect",
 * "fixed", "not-written", "error" (<0). */
const char *ks_case_str(int r);

#endif
