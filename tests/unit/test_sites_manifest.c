// SPDX-License-Identifier: MIT
/* test_sites_manifest.c - sites manifests (src/lib/sites/kernel_sites.c):
 * what `kshield sites export` writes reads back the same, and what is not
 * a manifest of this kernel is refused. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "kernel_sites.h"

#define ID "0123456789abcdef0123456789abcdef01234567"

static char path[] = "/tmp/ks-sites-XXXXXX";

static void setup(void)
{
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	ks_kernel_sites_policy(NULL, "");	/* no signing policy */
}

static void teardown(void)
{
	unlink(path);
}

TestSuite(sites_manifest, .init = setup, .fini = teardown);

static void write_two(void)
{
	static struct ks_site a[1], b[2];
	struct ks_sites fns[2] = {};
	FILE *f;

	for (int i = 0; i < 2; i++) {
		snprintf(fns[i].build_id, sizeof(fns[i].build_id), ID);
		snprintf(fns[i].release, sizeof(fns[i].release), "6.1.0-99-amd64");
		snprintf(fns[i].arch, sizeof(fns[i].arch), "x86_64");
		snprintf(fns[i].debug_file, sizeof(fns[i].debug_file), "/usr/lib/debug/vmlinux");
	}
	snprintf(fns[0].function, sizeof(fns[0].function), "alpha");
	fns[0].site = a;
	fns[0].nsites = 1;
	a[0] = (struct ks_site){ .addr = 0xffffffff81000010ULL, .kind = KS_SITE_OUTLINE,
				 .symbol_offset = 0, .probeable = true };
	snprintf(a[0].symbol, sizeof(a[0].symbol), "alpha");
	snprintf(a[0].caller, sizeof(a[0].caller), "alpha");
	snprintf(fns[1].function, sizeof(fns[1].function), "beta");
	fns[1].site = b;
	fns[1].nsites = 2;
	b[0] = (struct ks_site){ .addr = 0xffffffff81200000ULL, .kind = KS_SITE_CLONE,
				 .probeable = true };
	snprintf(b[0].symbol, sizeof(b[0].symbol), "beta.constprop.0");
	b[1] = (struct ks_site){ .addr = 0xffffffff81300044ULL, .kind = KS_SITE_INLINED,
				 .symbol_offset = 0x44, .call_line = 321, .probeable = true,
				 .nargs = 1 };
	snprintf(b[1].symbol, sizeof(b[1].symbol), "gamma");
	snprintf(b[1].caller, sizeof(b[1].caller), "gamma");
	snprintf(b[1].call_file, sizeof(b[1].call_file), "net/core/sock.c");
	snprintf(b[1].args[0].name, sizeof(b[1].args[0].name), "sk");
	snprintf(b[1].args[0].loc, sizeof(b[1].args[0].loc), "rdi");
	b[1].args[0].where.kind = KS_ARGLOC_REG;
	b[1].args[0].where.reg = 5;
	b[1].args[0].where.size = 8;
	f = fopen(path, "w");
	cr_assert(f);
	cr_assert_eq(ks_sites_manifest_write(f, fns, 2), 0, "%s", ks_errmsg());
	fclose(f);
}

static void write_text(const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

Test(sites_manifest, what_is_written_reads_back)
{
	struct ks_sites s;

	write_two();
	cr_expect_eq(ks_sites_manifest_check(path), 0, "%s", ks_errmsg());
	cr_assert_eq(ks_sites_manifest_read(path, "beta", ID, &s), 0, "%s", ks_errmsg());
	cr_expect_str_eq(s.function, "beta");
	cr_expect_str_eq(s.build_id, ID);
	cr_expect_str_eq(s.release, "6.1.0-99-amd64");
	cr_expect_str_eq(s.arch, "x86_64");
	cr_expect(s.kernel);
	cr_assert_eq(s.nsites, 2);
	cr_expect_eq(s.site[0].kind, KS_SITE_CLONE);
	cr_expect_str_eq(s.site[0].symbol, "beta.constprop.0");
	cr_expect_eq(s.site[1].addr, 0xffffffff81300044ULL);
	cr_expect_eq(s.site[1].kind, KS_SITE_INLINED);
	cr_expect_eq(s.site[1].symbol_offset, 0x44);
	cr_expect_eq(s.site[1].offset, 0x44);
	cr_expect_str_eq(s.site[1].call_file, "net/core/sock.c");
	cr_expect_eq(s.site[1].call_line, 321);
	cr_assert_eq(s.site[1].nargs, 1);
	cr_expect_str_eq(s.site[1].args[0].name, "sk");
	cr_expect_eq(s.site[1].args[0].where.kind, KS_ARGLOC_REG);
	cr_expect_eq(s.site[1].args[0].where.reg, 5);
	ks_sites_free(&s);
	/* any build ID when none is asked for */
	cr_assert_eq(ks_sites_manifest_read(path, "alpha", NULL, &s), 0, "%s", ks_errmsg());
	cr_expect_eq(s.nsites, 1);
	cr_expect_str_eq(s.site[0].symbol, "alpha");
	ks_sites_free(&s);
}

Test(sites_manifest, another_build_or_function_is_refused)
{
	struct ks_sites s;

	write_two();
	cr_expect_eq(ks_sites_manifest_read(path, "beta", "ffff" ID, &s), -EILSEQ);
	cr_expect(strstr(ks_errmsg(), "is for kernel build ID " ID), "%s", ks_errmsg());
	cr_expect_eq(ks_sites_manifest_read(path, "delta", ID, &s), -ENOENT);
	cr_expect(strstr(ks_errmsg(), "does not list delta"), "%s", ks_errmsg());
}

Test(sites_manifest, malformed_manifests_are_refused)
{
	struct ks_sites s;

	write_text("not json");
	cr_expect_eq(ks_sites_manifest_read(path, "beta", NULL, &s), -EINVAL);
	cr_expect_eq(ks_sites_manifest_check(path), -EINVAL);
	write_text("{\"kshield_sites\": 2, \"build_id\": \"" ID "\", \"functions\": []}");
	cr_expect_eq(ks_sites_manifest_read(path, "beta", NULL, &s), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "not a kshield sites manifest"), "%s", ks_errmsg());
	cr_expect_eq(ks_sites_manifest_check(path), -EINVAL);
	/* a probeable site without a symbol to hang a kprobe on */
	write_text("{\"kshield_sites\": 1, \"build_id\": \"" ID "\", \"functions\": [{\"function\": "
		   "\"beta\", \"sites\": [{\"addr\": \"0x10\", \"kind\": \"inlined\", \"symbol\": \"\","
		   " \"probeable\": true}]}]}");
	cr_expect_eq(ks_sites_manifest_check(path), 0);
	cr_expect_eq(ks_sites_manifest_read(path, "beta", ID, &s), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "site 0 of beta is malformed"), "%s", ks_errmsg());
	unlink(path);
	cr_expect_eq(ks_sites_manifest_read(path, "beta", NULL, &s), -ENOENT);
}
