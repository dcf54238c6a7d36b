// SPDX-License-Identifier: MIT
/* modules.c - whether this kernel has a module: loaded, built in, or only
 * installed (modules.h). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "modules.h"

/* Does a module index of @release (modules.builtin, modules.dep: lines
 * "kernel/dir/name.ko[.xz][: deps]") list module @m ('-' read as '_')? */
static bool module_listed(const char *index, const char *release, const char *m)
{
	char path[128], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/lib/modules/%s/%s", release, index);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *b, *dot;

		line[strcspn(line, ":\n")] = '\0';
		b = strrchr(line, '/');
		b = b ? b + 1 : line;
		dot = strstr(b, ".ko");
		if (!dot)
			continue;
		*dot = '\0';
		for (char *p = b; *p; p++)
			if (*p == '-')
				*p = '_';
		found = !strcmp(b, m);
	}
	if (f)
		fclose(f);
	return found;
}

int ks_module_state(const char *name, const char *release)
{
	char m[64], path[128];

	snprintf(m, sizeof(m), "%s", name);
	for (char *p = m; *p; p++)
		if (*p == '-')
			*p = '_';
	snprintf(path, sizeof(path), "/sys/module/%s", m);
	if (!access(path, F_OK))
		return 1;
	/* Built-in modules without parameters have no /sys/module entry. */
	if (module_listed("modules.builtin", release, m))
		return 1;
	return module_listed("modules.dep", release, m) ? 0 : -1;
}
