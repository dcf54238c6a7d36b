// SPDX-License-Identifier: MIT
/* test_state_check.c - a shield whose bug can exist only in a window of
 * kernels ("requires") and whose check is a kernel state that only arises
 * where the bug is live ("state_check"), on this host's real kernel:
 * cve-2022-0847 (Dirty Pipe, 5.8 to 5.16). Outside its window nothing
 * loads and `kshield test` says n/a after every path ran with no effect;
 * forced into it (KSHIELD_FIT_RELEASE), its tp variant loads and every
 * path is "fixed-here"; its probes (matrix/fixtures/dirtypipe-probe-*,
 * the same source with the last test turned to a state this kernel has)
 * are refused with a hit. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "harness.h"

#define DP "cve-2022-0847"

static char root[128];

static void setup(void)
{
	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-test-sc-%d", getpid());
	setenv("KSHIELD_BPFFS", root, 1);
	unsetenv("KSHIELD_FIT_RELEASE");
}

static void teardown(void)
{
	ks_runf(NULL, NULL, "rm -rf %s", root);
	unsetenv("KSHIELD_FIT_RELEASE");
}

TestSuite(state_check, .init = setup, .fini = teardown);

static json_object *test_json(const char *name, const char *object, int *rc)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "%s -j test %s --object %s", ks_bin(), name, object);
	return ks_run_json(cmd, rc, NULL);
}

Test(state_check, s01_outside_the_window_na_after_the_paths_ran)
{
	char obj[512];
	json_object *o;
	int rc;

	snprintf(obj, sizeof(obj), "%s/" DP ".bpf.o", ks_shields_dir());
	setenv("KSHIELD_FIT_RELEASE", "6.12", 1);
	o = test_json(DP, obj, &rc);
	cr_assert(o, "kshield test printed no JSON");
	cr_expect_eq(rc, 0, "n/a is no failure: %s", json_object_to_json_string(o));
	cr_expect(json_object_get_boolean(ks_json_get(o, "not_applicable")));
	cr_expect(strstr(json_object_get_string(ks_json_get(o, "na_reason")), "past 5.17"),
		  "na_reason: %s", json_object_get_string(ks_json_get(o, "na_reason")));
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "vulnerable")), "no");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "paths.0.baseline")), "no-effect");
	json_object_put(o);
}

Test(state_check, s02_inside_the_window_every_path_fixed_here)
{
	char obj[512];
	json_object *o, *paths;
	int rc;

	snprintf(obj, sizeof(obj), "%s/" DP ".bpf.o", ks_shields_dir());
	setenv("KSHIELD_FIT_RELEASE", "5.10", 1);
	o = test_json(DP, obj, &rc);
	cr_assert(o, "kshield test printed no JSON");
	cr_expect_eq(rc, 0, "error: %s", json_object_get_string(ks_json_get(o, "error")));
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "variant")), "tp");
	cr_expect(json_object_get_boolean(ks_json_get(o, "fixed_here")));
	cr_expect(json_object_get_boolean(ks_json_get(o, "benign_ok")));
	paths = ks_json_get(o, "paths");
	cr_assert(paths && json_object_array_length(paths) >= 11);
	for (size_t i = 0; i < json_object_array_length(paths); i++) {
		json_object *p = json_object_array_get_idx(paths, i);
		const char *st = json_object_get_string(ks_json_get(p, "status"));

		/* compat-i386 is n/a where this host runs no 32-bit code */
		cr_expect(!strcmp(st, "fixed-here") || !strcmp(st, "n/a"), "%s: %s",
			  json_object_get_string(ks_json_get(p, "name")), st);
	}
	json_object_put(o);
}

Test(state_check, s03_probes_of_the_state_reads_hit)
{
	const char *probes[] = { "dirtypipe-probe-anon", "dirtypipe-probe-file" };
	const char *fx = getenv("KSHIELD_MATRIX_FIXTURES");
	char obj[512];
	json_object *o;
	int rc;

	setenv("KSHIELD_FIT_RELEASE", "5.10", 1);
	for (int i = 0; i < 2; i++) {
		snprintf(obj, sizeof(obj), "%s/%s.bpf.o", fx ? fx : "build/matrix/fixtures", probes[i]);
		o = test_json(probes[i], obj, &rc);
		cr_assert(o, "kshield test %s printed no JSON", probes[i]);
		cr_expect_eq(rc, 0, "%s: %s", probes[i], json_object_get_string(ks_json_get(o, "error")));
		/* tp on the write paths detects (cve-2022-0847's claim since the
		 * live kernel showed the write lands before the kill): a hit, the
		 * path "detected"; a prevents claim must refuse */
		if (json_object_get_boolean(ks_json_get(o, "detect_only")))
			cr_expect_str_eq(json_object_get_string(ks_json_get(o, "paths.0.status")),
					 "detected", "%s", probes[i]);
		else
			cr_expect(json_object_get_boolean(ks_json_get(o, "trigger_refused")), "%s",
				  probes[i]);
		cr_expect(json_object_get_boolean(ks_json_get(o, "hit_recorded")), "%s", probes[i]);
		cr_expect(json_object_get_boolean(ks_json_get(o, "benign_ok")), "%s", probes[i]);
		json_object_put(o);
	}
}
