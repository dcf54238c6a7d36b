// SPDX-License-Identifier: MIT
/* test_modules.c - ks_module_state (src/lib/kernel/modules.c): what the
 * shield tests read to call a path "n/a here" (a module of the shield
 * neither loaded nor built in) rather than failed. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include "modules.h"

static const char *release(void)
{
	static struct utsname u;

	cr_assert_eq(uname(&u), 0);
	return u.release;
}

Test(modules, unknown_module)
{
	cr_assert_eq(ks_module_state("kshield_no_such_module", release()), -1);
}

/* A module in /sys/module is loaded or built in, also when named with '-'
 * where the kernel writes '_' (as "modules" metadata may). */
Test(modules, sys_module_entry_dashes)
{
	DIR *d = opendir("/sys/module");
	struct dirent *e;
	char name[256] = "";

	cr_assert(d);
	while ((e = readdir(d)))
		if (strchr(e->d_name, '_') && strlen(e->d_name) < sizeof(name)) {
			snprintf(name, sizeof(name), "%s", e->d_name);
			break;
		}
	closedir(d);
	if (!name[0])
		cr_skip_test("no module with '_' in its name in /sys/module");
	cr_assert_eq(ks_module_state(name, release()), 1, "%s", name);
	for (char *p = name; *p; p++)
		if (*p == '_')
			*p = '-';
	cr_assert_eq(ks_module_state(name, release()), 1, "%s", name);
}
