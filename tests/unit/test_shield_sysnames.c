// SPDX-License-Identifier: MIT
/* test_shield_sysnames.c - every syscall a bundled shield registers with the
 * dispatcher (metadata sys.<prog>: "enter NR", "enter32 NR, NR") has a name
 * in ks_syscall_name(): `kshield hooks --shield` lists a shield's syscall
 * hooks by it and skipped one it could not name (cve-2022-0847's io_submit),
 * and events name the syscall by it. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "argfmt.h"
#include "meta.h"

Test(shield_sysnames, every_registered_syscall_is_named)
{
	glob_t g;
	int checked = 0;

	cr_assert_eq(glob(KS_TEST_BUILD "/shields/*.bpf.o", 0, NULL, &g), 0, "no shield objects built");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct ks_meta m;

		cr_assert_eq(ks_meta_read(g.gl_pathv[i], &m), 0, "%s", g.gl_pathv[i]);
		for (int k = 0; k < m.n; k++) {
			char buf[256], *v, *tok, *save = NULL;
			bool abi32;

			if (strncmp(m.key[k], "sys.", 4))
				continue;
			snprintf(buf, sizeof(buf), "%s", m.val[k]);
			v = strchr(buf, ' ');
			cr_assert(v, "%s: %s=%s", g.gl_pathv[i], m.key[k], m.val[k]);
			*v++ = 0;
			abi32 = !strcmp(buf, "enter32") || !strcmp(buf, "exit32");
			for (tok = strtok_r(v, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
				if (!strcmp(tok, "(-1)"))	/* no such call in that ABI */
					continue;
				cr_expect_not_null(ks_syscall_name(strtoull(tok, NULL, 0), abi32),
						   "%s: %s=%s: %s%s has no name", g.gl_pathv[i], m.key[k],
						   m.val[k], tok, abi32 ? " (32-bit)" : "");
				checked++;
			}
		}
		ks_meta_free(&m);
	}
	globfree(&g);
	cr_expect_gt(checked, 20, "only %d syscall registrations found", checked);
}
