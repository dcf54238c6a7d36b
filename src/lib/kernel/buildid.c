// SPDX-License-Identifier: MIT
/* buildid.c - the running kernel's build ID (its notes) and the vmlinux
 * debug file of a build (see buildid.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "array.h"
#include "buildid.h"
#include "debugfile.h"
#include "err.h"
#include "hex.h"

int ks_kernel_build_id(char *hex, size_t len)
{
	const char *path = getenv("KSHIELD_KERNEL_NOTES") ?: "/sys/kernel/notes";
	unsigned char buf[4096];
	size_t off = 0;
	ssize_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return ks_err(-errno, "can't read %s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* A sequence of ELF notes: namesz, descsz, type, name, desc, 4-aligned. */
	while (off + 12 <= (size_t)n) {
		__u32 namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > (size_t)n)
			break;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    !memcmp(buf + name_off, "GNU", 4)) {
			ks_hex(buf + desc_off, descsz, hex, len);
			return 0;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return ks_err(-ENODATA, "no GNU build ID note in %s", path);
}

int ks_kernel_vmlinux_find(const char *build_id, const char *release, unsigned flags,
			   char *path, size_t len, const char **source)
{
	/* Where Debian's -dbg packages and kernel builds put vmlinux. */
	static const char *const cands[] = {
		"/usr/lib/debug/boot/vmlinux-%s", "/usr/lib/debug/lib/modules/%s/vmlinux",
		"/boot/vmlinux-%s", "/lib/modules/%s/build/vmlinux",
	};
	char refused[512] = "";
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(cands); i++) {
		snprintf(path, len, cands[i], release);
		err = ks_debug_check(path, build_id);
		if (!err) {
			*source = "debug package";
			return 0;
		}
		if (err == -EILSEQ && !refused[0])
			snprintf(refused, sizeof(refused), "%s", ks_errmsg());
	}
	err = ks_debug_find(build_id, NULL, flags, path, len, source);
	if (err == -ENOENT && refused[0])
		return ks_err(-EILSEQ, "%s", refused);
	return err;
}
