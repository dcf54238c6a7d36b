// SPDX-License-Identifier: MIT
/* shieldtest_memerr.c - a kernel memory-safety bug's effect as a case
 * result (see shieldtest_memerr.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "shieldtest.h"
#include "shieldtest_effect.h"
#include "shieldtest_memerr.h"

static int mark = -1;

int ks_memerr_begin(char *why, size_t len)
{
	if (mark >= 0)
		return 0;
	mark = ks_fx_kasan_mark(why, len);
	return mark < 0 ? mark : 0;
}

/* Whether the kernel has KASAN: its report function is in the kernel's
 * BTF (or, without BTF, in kallsyms). */
bool ks_memerr_kasan(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char line[256];
	bool found = false;
	FILE *f;

	if (btf) {
		found = btf__find_by_name_kind(btf, "kasan_report", BTF_KIND_FUNC) > 0;
		btf__free(btf);
		return found;
	}
	f = fopen("/proc/kallsyms", "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, " kasan_report\n") != NULL;
	if (f)
		fclose(f);
	return found;
}

int ks_memerr_end(const char *func, int ms, const char *what, char *why, size_t len)
{
	char rep[400];
	int rc;

	if (mark < 0) {
		snprintf(why, len, "%s: no kernel log mark taken before the trigger", what);
		return -EBADF;
	}
	rc = ks_fx_kasan_wait(mark, func, ms, rep, sizeof(rep));
	if (rc == KS_CASE_EFFECT) {
		snprintf(why, len, "%s: %s", what, rep);
		return rc;
	}
	if (rc < 0) {
		snprintf(why, len, "%s: %s", what, rep);
		return rc;
	}
	if (!ks_memerr_kasan()) {
		snprintf(why, len, "%s: went through; no KASAN in this kernel, so the memory "
			 "error leaves nothing to see", what);
		return KS_CASE_PASSED;
	}
	snprintf(why, len, "%s: no KASAN report%s%s%s", what, func ? " naming " : "",
		 func ? func : "", rep[0] ? " (" : "");
	if (rep[0]) {
		size_t n = strlen(why);

		snprintf(why + n, len - n, "%s)", rep);
	}
	return KS_CASE_NOEFFECT;
}
