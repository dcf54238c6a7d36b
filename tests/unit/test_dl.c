// SPDX-License-Identifier: MIT
/* test_dl.c - optional libraries loaded on first use (src/lib/base/dl.c):
 * a present one binds every function, typed from its header; an absent
 * library or function is one line naming the package, every time. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <zlib.h>
#include "dl.h"
#include "err.h"

#define Z_FNS(X) X(zlibVersion) X(crc32)
static struct { Z_FNS(KS_DL_PTR) } z;

static int z_bind(struct ks_dl *d)
{
#define BIND(f) KS_DL_BIND(d, z, f)
	Z_FNS(BIND)
#undef BIND
	return 0;
}

static int absent_fn_bind(struct ks_dl *d)
{
	void *fn;

	return ks_dl_sym(d, "ks_no_such_function", &fn);
}

Test(dl, present_library_binds_and_calls)
{
	static struct ks_dl d = KS_DL_INIT("libz.so.1", "zlib1g", "compression");

	cr_assert_eq(ks_dl_load(&d, z_bind), 0, "%s", ks_errmsg());
	cr_expect(ks_dl_loaded(&d));
	cr_expect_str_eq(z.zlibVersion(), zlibVersion());
	cr_expect_eq(z.crc32(0, (const Bytef *)"kshield", 7), crc32(0, (const Bytef *)"kshield", 7));
	cr_expect_eq(ks_dl_load(&d, z_bind), 0);	/* once: cheap again */
}

Test(dl, absent_library_names_the_package_every_time)
{
	static struct ks_dl d = KS_DL_INIT("libks-absent.so.9", "libks-absent9", "the widget");

	for (int i = 0; i < 2; i++) {
		ks_err_clear();
		cr_assert_eq(ks_dl_load(&d, z_bind), -ENOPKG);
		cr_expect_str_eq(ks_errmsg(), "the widget needs libks-absent.so.9, which is not "
				 "installed: apt-get install libks-absent9");
	}
	cr_expect_not(ks_dl_loaded(&d));
}

Test(dl, absent_function_is_refused_not_called)
{
	static struct ks_dl d = KS_DL_INIT("libz.so.1", "zlib1g", "compression");

	cr_assert_eq(ks_dl_load(&d, absent_fn_bind), -ENOPKG);
	cr_expect(strstr(ks_errmsg(), "libz.so.1 has no ks_no_such_function"), "%s", ks_errmsg());
	cr_expect_not(ks_dl_loaded(&d));
}
