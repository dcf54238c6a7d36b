// SPDX-License-Identifier: MIT
/* target_spec.c - "PATH:FUNCTION" and "BUILDID:FUNCTION" target specs
 * into a binary and a function (ks_target_parse, dwsites.h): a build ID
 * names a file on disk only through a running process that maps it. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "dwsites.h"

static bool is_hex_id(const char *s, size_t n)
{
	size_t i;

	if (n < 16 || n > 128)
		return false;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A build ID names a file on disk only through something that mapped it:
 * look through the running processes' file mappings. */
static int binary_by_build_id(const char *id, char *out, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	char seen[64][PATH_MAX / 8];
	int nseen = 0, found = 0;

	if (!proc)
		return ks_err(-errno, "can't read /proc: %s", strerror(errno));
	while (!found && (de = readdir(proc))) {
		char mp[300], line[PATH_MAX + 128];
		FILE *m;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(mp, sizeof(mp), "/proc/%s/maps", de->d_name);
		m = fopen(mp, "re");
		if (!m)
			continue;
		while (!found && fgets(line, sizeof(line), m)) {
			char *p = strchr(line, '/'), hex[KS_BUILD_ID_HEX];
			int i;

			if (!p || !strstr(line, " r-xp ") || strstr(line, "(deleted)"))
				continue;
			p[strcspn(p, "\n")] = 0;
			for (i = 0; i < nseen; i++)
				if (!strcmp(seen[i], p))
					break;
			if (i < nseen)
				continue;
			if (nseen < 64 && strlen(p) < sizeof(seen[0]))
				snprintf(seen[nseen++], sizeof(seen[0]), "%s", p);
			if (ks_build_id_file(p, hex, sizeof(hex)) > 0 && !strcasecmp(hex, id)) {
				snprintf(out, len, "%s", p);
				found = 1;
			}
		}
		fclose(m);
	}
	closedir(proc);
	if (!found)
		return ks_err(-ENOENT, "no running process maps a file with build ID %s; "
			      "name the binary by path", id);
	return 0;
}

int ks_target_parse(const char *spec, char *binary, size_t blen,
		    char *function, size_t flen)
{
	const char *colon = strrchr(spec, ':');
	size_t n;

	if (!colon || colon == spec || !colon[1])
		return ks_err(-EINVAL, "target '%s': expected PATH:FUNCTION or BUILDID:FUNCTION",
			      spec);
	n = colon - spec;
	snprintf(function, flen, "%s", colon + 1);
	if (!memchr(spec, '/', n) && is_hex_id(spec, n)) {
		char id[KS_BUILD_ID_HEX];

		snprintf(id, sizeof(id), "%.*s", (int)n, spec);
		return binary_by_build_id(id, binary, blen);
	}
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%.*s", (int)n, spec);
		if (!realpath(path, binary))
			return ks_err(-errno, "target '%s': %s: %s", spec, path, strerror(errno));
	}
	(void)blen;
	return 0;
}
