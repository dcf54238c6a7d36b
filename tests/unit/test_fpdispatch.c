// SPDX-License-Identifier: MIT
/* test_fpdispatch.c - which shield programs the file_permission
 * dispatcher runs (src/lib/dispatch/fpdispatch.c): KS_SECURITY_HOOK on
 * file_permission makes chain members with the filter the shield declares
 * (KS_SECURITY_FILTER), and only their objects carry a chain slot
 * (.data.ks_fp). Reads the built shield objects; nothing is loaded. */
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <linux/types.h>
#include <kshield/fpdispatch.h>
#include "fpdispatch.h"
#include "meta.h"

#ifndef KS_TEST_BUILD
#define KS_TEST_BUILD "build"
#endif

#define S_IFIFO_	0010000
#define S_IFSOCK_	0140000
#define MODE(t)		(1u << ((t) >> 12))

static const struct {
	const char *shield, *prog;
	int variant;		/* -ENOENT: not chained */
	__u32 all, mask, modes;
} cases[] = {
	{ "cve-2026-31431", "lsm__file_permission__sendpage", KS_FP_LSM, 0, 2, MODE(S_IFSOCK_) },
	{ "cve-2026-31431", "fmod_ret__file_permission__sendpage__noloop", KS_FP_FMOD_RET, 0, 2,
	  MODE(S_IFSOCK_) },
	{ "cve-2026-31431", "lsm__bind", -ENOENT, 0, 0, 0 },
	{ "cve-2026-31431", "fmod_ret__sendmsg", -ENOENT, 0, 0, 0 },
	{ "cve-2026-43284", "fmod_ret__file_permission__sendpage", KS_FP_FMOD_RET, 0, 2,
	  MODE(S_IFSOCK_) },
	{ "cve-2022-0847", "lsm__file_permission", KS_FP_LSM, 0, 2, MODE(S_IFIFO_) },
	{ "cve-2022-0847", "fmod_ret__file_permission__noloop", KS_FP_FMOD_RET, 0, 2, MODE(S_IFIFO_) },
	{ "cve-2021-22555", "lsm__setsockopt", -ENOENT, 0, 0, 0 },
};

static bool has_slot_map(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_map *m;
	bool found = false;

	cr_assert(obj, "open %s", path);
	bpf_object__for_each_map(m, obj)
		if (strstr(bpf_map__name(m), "ks_fp") && bpf_map__is_internal(m))
			found = true;
	bpf_object__close(obj);
	return found;
}

Test(fpdispatch, chain_members_and_filters)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256], why[256];
		struct ks_fp_slot s;
		struct ks_meta meta;
		struct bpf_object *obj;
		struct bpf_program *p;
		int v;

		snprintf(path, sizeof(path), KS_TEST_BUILD "/shields/%s.bpf.o", cases[i].shield);
		cr_assert_eq(ks_meta_read(path, &meta), 0, "%s", path);
		v = ks_fpd_filter(&meta, cases[i].prog, &s, why, sizeof(why));
		cr_expect_eq(v, cases[i].variant, "%s %s: %d (%s)", cases[i].shield, cases[i].prog,
			     v, why);
		obj = bpf_object__open_file(path, NULL);
		cr_assert(obj);
		p = bpf_object__find_program_by_name(obj, cases[i].prog);
		cr_expect(p, "%s has no %s", cases[i].shield, cases[i].prog);
		if (p)
			cr_expect_eq(ks_fpd_is_chained(p, &meta), v >= 0, "%s", cases[i].prog);
		bpf_object__close(obj);
		if (v >= 0) {
			cr_expect_eq(s.all, cases[i].all, "%s all", cases[i].prog);
			cr_expect_eq(s.mask, cases[i].mask, "%s mask", cases[i].prog);
			cr_expect_eq(s.modes, cases[i].modes, "%s modes %#x", cases[i].prog, s.modes);
		}
		/* the object's chain slot: only where a hook is chained */
		cr_expect_eq(has_slot_map(path), strcmp(cases[i].shield, "cve-2021-22555") != 0,
			     "%s .data.ks_fp", cases[i].shield);
		ks_meta_free(&meta);
	}
}
