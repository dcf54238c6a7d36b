// SPDX-License-Identifier: MIT
/* test_stale_pins.c - before any host test runs, remove the bpffs roots that
 * an earlier, crashed run of these tests or of a benchmark left behind.
 *
 * Every host test pins under /sys/fs/bpf/ks-test-[<kind>-]<pid>[-<tag>], and
 * every benchmark under /sys/fs/bpf/ks-bench-<name>-<pid>, and removes it
 * when it ends. A test killed half-way (timeout, crash, Ctrl-C)
 * leaves its pins, and with them an attached monitor or shield: it taxes
 * every later benchmark and can refuse a later test's trigger. A root whose
 * pid no longer runs belongs to nobody; a live pid may be a concurrent run
 * and is left alone.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define KS_TEST_BPFFS "/sys/fs/bpf"

/* The pid in a root's name "ks-{test,bench}-[<kind>-]<pid>[-<tag>]", or 0. */
static pid_t test_root_pid(const char *name)
{
	const char *p;

	if (!strncmp(name, "ks-test-", strlen("ks-test-")))
		p = name + strlen("ks-test-");
	else if (!strncmp(name, "ks-bench-", strlen("ks-bench-")))
		p = name + strlen("ks-bench-");
	else
		return 0;
	while (*p && !isdigit((unsigned char)*p))
		p = strchr(p, '-') ? strchr(p, '-') + 1 : p + strlen(p);
	return *p ? (pid_t)strtol(p, NULL, 10) : 0;
}

static bool pid_alive(pid_t pid)
{
	return !kill(pid, 0) || errno == EPERM;
}

/* Remove the test roots of pids that no longer run. */
static void sweep_stale_roots(void)
{
	DIR *d = opendir(KS_TEST_BPFFS);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		pid_t pid = test_root_pid(de->d_name);

		if (pid <= 0 || pid_alive(pid))
			continue;
		if (!ks_runf(NULL, NULL, "rm -rf '%s/%s'", KS_TEST_BPFFS, de->d_name))
			fprintf(stderr, "removed %s/%s, left by a run that ended early (pid %d)\n",
				KS_TEST_BPFFS, de->d_name, pid);
	}
	closedir(d);
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	sweep_stale_roots();
}

/* The sweep recognises every root name the tests use, and only those. */
Test(stale_pins, root_names)
{
	cr_expect_eq(test_root_pid("ks-test-4242"), 4242);
	cr_expect_eq(test_root_pid("ks-test-lc-4242"), 4242);
	cr_expect_eq(test_root_pid("ks-test-mon-4242-flow"), 4242);
	cr_expect_eq(test_root_pid("ks-bench-harm-4242"), 4242);
	cr_expect_eq(test_root_pid("ks-bench-harm"), 0);
	cr_expect_eq(test_root_pid("kshield"), 0);
	cr_expect_eq(test_root_pid("ks-test-mon-"), 0);
}

/* A root left by a dead pid goes; a live run's root stays. */
Test(stale_pins, dead_roots_go_live_roots_stay)
{
	char dead[128], live[128];
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (!pid)
		_exit(0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	snprintf(dead, sizeof(dead), KS_TEST_BPFFS "/ks-test-mon-%d-stale", pid);
	snprintf(live, sizeof(live), KS_TEST_BPFFS "/ks-test-mon-%d-live", getpid());
	cr_assert_eq(mkdir(dead, 0700), 0, "mkdir %s: %s", dead, strerror(errno));
	cr_assert_eq(mkdir(live, 0700), 0, "mkdir %s: %s", live, strerror(errno));
	sweep_stale_roots();
	cr_expect_neq(access(dead, F_OK), 0, "%s was kept", dead);
	cr_expect_eq(access(live, F_OK), 0, "%s (a live run) was removed", live);
	rmdir(live);
	rmdir(dead);
}
