// SPDX-License-Identifier: MIT
/* test_variant_choice.c - which variant of a shield the loader keeps on
 * kernels that offer different things (ks_fit_variant_needs, fit.h): the
 * loader tries the shield's variants in order and passes over those whose
 * programs need what the kernel lacks. Without the kernel's own BTF lsm
 * and fmod_ret are out; with bpf_override_return the kprobe variant
 * (bpf/sdk/override.bpf.h) comes before tp; without it tp. Reads the
 * built shield objects; nothing is loaded into the kernel. */
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fit.h"
#include "meta.h"

#ifndef KS_TEST_BUILD
#define KS_TEST_BUILD "build"
#endif

/* The loader's walk (loader.c, ks_shield_load_buf and open_variant) up to
 * the load: the first variant of @shield's list whose programs, chosen as
 * the loader chooses them (prefix, ks_fit_select), need nothing that @k
 * lacks. @v gets it ("" when none). */
static void choice(const char *shield, const struct ks_kernel_offers *k, char *v, size_t len)
{
	char path[256], why[256], *list, *tok, *save;
	struct ks_meta meta;

	snprintf(path, sizeof(path), KS_TEST_BUILD "/shields/%s.bpf.o", shield);
	cr_assert_eq(ks_meta_read(path, &meta), 0, "metadata of %s", path);
	list = strdup(ks_meta_get(&meta, "variants"));
	v[0] = '\0';
	for (tok = strtok_r(list, ", ", &save); tok && !v[0]; tok = strtok_r(NULL, ", ", &save)) {
		struct bpf_object *obj = bpf_object__open_file(path, NULL);
		struct bpf_program *p;
		size_t n = strlen(tok);

		cr_assert(obj, "open %s", path);
		bpf_object__for_each_program(p, obj) {
			const char *pn = bpf_program__name(p);

			bpf_program__set_autoload(p, !strncmp(pn, tok, n) && pn[n] == '_' &&
						  pn[n + 1] == '_');
		}
		ks_fit_select(obj);
		if (!ks_fit_variant_needs(obj, k, why, sizeof(why)))
			snprintf(v, len, "%s", tok);
		bpf_object__close(obj);
	}
	free(list);
	ks_meta_free(&meta);
}

static const struct ks_kernel_offers nobtf_override = { .loop = true, .kprobe_override = true };
static const struct ks_kernel_offers nobtf = { .loop = true };
static const struct ks_kernel_offers nobtf_optimized = { .loop = true, .kprobe_optimized = true };
static const struct ks_kernel_offers btf_override = {
	.kernel_btf = true, .loop = true, .kprobe_override = true,
};

Test(variant_choice, kprobe_before_tp_where_override_exists)
{
	char v[32];

	choice("cve-2022-0185", &nobtf_override, v, sizeof(v));
	cr_expect_str_eq(v, "kprobe");
	choice("cve-2026-43500", &nobtf_override, v, sizeof(v));
	cr_expect_str_eq(v, "kprobe");
}

Test(variant_choice, tp_without_override)
{
	char v[32];

	choice("cve-2022-0185", &nobtf_optimized, v, sizeof(v));
	cr_expect_str_eq(v, "tp");
	choice("cve-2022-0185", &nobtf, v, sizeof(v));
	cr_expect_str_eq(v, "tp");
	choice("cve-2026-43500", &nobtf, v, sizeof(v));
	cr_expect_str_eq(v, "tp");
}

/* A shield without a kprobe variant keeps tp, override or not. */
Test(variant_choice, tp_for_a_shield_without_kprobe)
{
	char v[32];

	choice("cve-2024-0582", &nobtf_override, v, sizeof(v));
	cr_expect_str_eq(v, "tp");
}

/* With the kernel's BTF the lsm variant comes first (whether bpf is in
 * lsm= is the load's question: fmod_ret then). */
Test(variant_choice, lsm_first_with_kernel_btf)
{
	char v[32];

	choice("cve-2022-0185", &btf_override, v, sizeof(v));
	cr_expect_str_eq(v, "lsm");
}

/* The rule itself: a program that calls bpf_override_return is ruled out,
 * by name, where the helper is missing; the tp programs are not. */
Test(variant_choice, override_named)
{
	struct bpf_object *obj = bpf_object__open_file(KS_TEST_BUILD "/shields/cve-2026-43500.bpf.o",
						       NULL);
	struct bpf_program *p;
	char why[256] = "";

	cr_assert(obj);
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), "kprobe__socket"));
	cr_expect_eq(ks_fit_variant_needs(obj, &nobtf, why, sizeof(why)), -EOPNOTSUPP);
	cr_expect(strstr(why, "kprobe__socket: needs bpf_override_return"), "%s", why);
	/* the helper there, but entry kprobes jump-optimized: no override */
	cr_expect_eq(ks_fit_variant_needs(obj, &nobtf_optimized, why, sizeof(why)), -EOPNOTSUPP);
	cr_expect(strstr(why, "jump-optimized"), "%s", why);
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), "tp__socket"));
	cr_expect_eq(ks_fit_variant_needs(obj, &nobtf, why, sizeof(why)), 0);
	bpf_object__close(obj);
}
