// SPDX-License-Identifier: MIT
/* test_sysdispatch.c - the syscall dispatcher on this host's real kernel:
 * a chain longer than the kernel's tail-call limit (33 in a row) runs
 * whole. 40 copies of a fixture that counts getpgid(MARK) load, each one
 * program on the same syscall; every copy, the 33rd and the 40th too, sees
 * each call; the dispatcher's second program (the chain's second segment)
 * is attached exactly while the chain is longer than 32. */
#define _GNU_SOURCE	/* memmem */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "harness.h"

#define COPIES	40
#define CALLS	7
#define MARK	0x7ffffff0
#define NAME	"fixture-sys-00"

static char root[128], dir[256];

static void setup(void)
{
	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-test-%d", getpid());
	snprintf(dir, sizeof(dir), "/tmp/ks-test-sysd-%d", getpid());
	setenv("KSHIELD_BPFFS", root, 1);
}

static void teardown(void)
{
	for (int i = 0; i < COPIES; i++)
		ks_runf(NULL, NULL, "%s shield unload fixture-sys-%02d", ks_bin(), i);
	ks_runf(NULL, NULL, "rm -rf %s %s", root, dir);
}

TestSuite(sysdispatch, .init = setup, .fini = teardown);

/* The fixture with its name, in the metadata and the object's data, made
 * "fixture-sys-<i>" (same length, so nothing else moves). */
static void make_copy(const char *src, int i, char *path, size_t len)
{
	char name[16];
	FILE *f = fopen(src, "rb");
	long n;
	char *buf;

	cr_assert(f, "%s: %s", src, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n);
	cr_assert(buf && fread(buf, 1, n, f) == (size_t)n);
	fclose(f);
	snprintf(name, sizeof(name), "fixture-sys-%02d", i);
	for (char *p = buf; (p = memmem(p, buf + n - p, NAME, strlen(NAME))); p += strlen(NAME))
		memcpy(p, name, strlen(NAME));
	snprintf(path, len, "%s/%s.bpf.o", dir, name);
	f = fopen(path, "wb");
	cr_assert(f && fwrite(buf, 1, n, f) == (size_t)n, "%s", path);
	fclose(f);
	free(buf);
}

/* Audited hits per copy, from `shield list -j`. */
static void counts(long long *n)
{
	char cmd[256];
	json_object *arr;

	for (int i = 0; i < COPIES; i++)
		n[i] = -1;
	snprintf(cmd, sizeof(cmd), "%s -j shield list", ks_bin());
	arr = ks_run_json(cmd, NULL, NULL);
	cr_assert(arr && json_object_is_type(arr, json_type_array), "shield list -j");
	for (size_t k = 0; k < json_object_array_length(arr); k++) {
		json_object *e = json_object_array_get_idx(arr, k);
		const char *name = json_object_get_string(ks_json_get(e, "name"));
		int i;

		if (name && sscanf(name, "fixture-sys-%d", &i) == 1 && i >= 0 && i < COPIES)
			n[i] = json_object_get_int64(ks_json_get(e, "verdicts.audited"));
	}
	json_object_put(arr);
}

static bool pinned(const char *link)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/dispatch/%s", root, link);
	return !access(path, F_OK);
}

Test(sysdispatch, forty_members_on_one_syscall_all_run, .timeout = 600)
{
	char src[512], path[512], *err;
	long long n[COPIES];
	int rc;

	snprintf(src, sizeof(src), "%s/sys-member.bpf.o", ks_fixtures_dir());
	cr_assert_eq(mkdir(dir, 0700), 0, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < COPIES; i++) {
		make_copy(src, i, path, sizeof(path));
		rc = ks_runf(NULL, &err, "%s shield load %s --audit", ks_bin(), path);
		cr_assert_eq(rc, 0, "copy %d of %d did not load: %s", i + 1, COPIES, err);
		free(err);
		/* the second segment's program exactly while the chain is
		 * longer than one segment of 32 */
		cr_assert_eq(pinned("link_ks_sys_enter_1"), i + 1 > 32,
			     "with %d members: ks_sys_enter_1 %s", i + 1,
			     pinned("link_ks_sys_enter_1") ? "attached" : "not attached");
	}
	cr_assert(pinned("link_ks_sys_enter"), "ks_sys_enter not attached");
	cr_assert(!pinned("link_ks_sys_enter_2"), "a third segment for 40 members");
	counts(n);
	for (int i = 0; i < COPIES; i++)
		cr_assert_eq(n[i], 0, "copy %d counted %lld before any call", i + 1, n[i]);
	for (int k = 0; k < CALLS; k++)
		syscall(SYS_getpgid, MARK);
	counts(n);
	for (int i = 0; i < COPIES; i++)
		cr_expect_eq(n[i], CALLS, "copy %d of %d saw %lld of %d calls", i + 1, COPIES, n[i],
			     CALLS);
	/* Back to one segment: the second program leaves, and the 32 left
	 * still run. */
	for (int i = COPIES - 1; i >= 32; i--)
		cr_assert_eq(ks_runf(NULL, NULL, "%s shield unload fixture-sys-%02d", ks_bin(), i), 0);
	cr_expect(!pinned("link_ks_sys_enter_1"), "ks_sys_enter_1 still attached with 32 members");
	syscall(SYS_getpgid, MARK);
	counts(n);
	for (int i = 0; i < 32; i++)
		cr_expect_eq(n[i], CALLS + 1, "copy %d saw %lld of %d calls", i + 1, n[i], CALLS + 1);
}
