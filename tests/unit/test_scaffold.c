// SPDX-License-Identifier: MIT
/* test_scaffold.c - the scaffold's syscall table (src/lib/shield/scaffold.c)
 * against the SDK's numbers (bpf/sdk/fit.bpf.h): every syscall it offers
 * has KS_NR_<name> in both arch tables, and KS_NR32_<name> in both exactly
 * where it writes KS_SYSCALL_ENTER32; every native syscall of the SDK is
 * offered. Read from the header itself, so the two cannot drift. And what
 * it writes passes scripts/check-spdx.sh as shields/NAME/ would. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "scaffold.h"

/* Is "#define KS_NR<abi>_<name>" in the arm64 (@arch 0) or x86 (1) branch
 * of fit.bpf.h's tables? */
static bool defined_in(const char *name, bool abi32, int arch)
{
	FILE *f = fopen("bpf/sdk/fit.bpf.h", "r");
	char line[256], want[96];
	int branch = -1;
	bool found = false;

	cr_assert(f, "bpf/sdk/fit.bpf.h: run the unit tests from the source tree");
	snprintf(want, sizeof(want), "#define KS_NR%s_%s", abi32 ? "32" : "", name);
	while (fgets(line, sizeof(line), f) && !found) {
		if (!strncmp(line, "#if defined(__TARGET_ARCH_arm64)", 32))
			branch = 0;
		else if (!strncmp(line, "#else", 5) && branch == 0)
			branch = 1;
		else if (!strncmp(line, "#endif", 6))
			branch = -1;
		else if (branch == arch && !strncmp(line, want, strlen(want)) &&
			 (line[strlen(want)] == '\t' || line[strlen(want)] == ' '))
			found = true;
	}
	fclose(f);
	return found;
}

Test(scaffold, syscall_table_matches_the_sdk)
{
	int n = 0;

	for (const struct ks_scaffold_syscall *s = ks_scaffold_syscalls; s->name; s++, n++) {
		for (int arch = 0; arch < 2; arch++) {
			cr_expect(defined_in(s->name, false, arch), "%s: no KS_NR_%s in the %s table",
				  s->name, s->name, arch ? "x86" : "arm64");
			cr_expect(defined_in(s->name, true, arch) == s->abi32,
				  "%s: scaffold says abi32=%d, fit.bpf.h's %s 32-bit table disagrees",
				  s->name, s->abi32, arch ? "i386" : "AArch32");
		}
	}
	cr_assert_gt(n, 50, "%d syscalls", n);
}

Test(scaffold, every_sdk_syscall_is_offered)
{
	FILE *f = fopen("bpf/sdk/fit.bpf.h", "r");
	char line[256], name[64];

	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "#define KS_NR_%63[a-z0-9_]", name) == 1)
			cr_expect(ks_scaffold_syscall(name), "KS_NR_%s: not in the scaffold's table", name);
	fclose(f);
}

Test(scaffold, unknown_syscall_and_bad_input_say_what_to_do)
{
	char out[256];
	struct ks_scaffold s = { .name = "x", .cve = "CVE-2024-1", .hooks = { "file_open" },
				 .nhooks = 1, .syscall = "frobnicate", .dir = "/nonexistent" };

	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -ENOENT);
	cr_assert(strstr(ks_errmsg(), "scripts/sysnr.sh frobnicate"), "%s", ks_errmsg());
	s.syscall = "write";
	s.cve = "2024-1";
	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -EINVAL);
	cr_assert(strstr(ks_errmsg(), "CVE-YYYY-NNNN"), "%s", ks_errmsg());
	s.cve = "CVE-2024-1";
	s.name = "Bad/Name";
	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -EINVAL);
	s.name = "x";
	s.hooks[1] = "file_open";
	s.nhooks = 2;
	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -EINVAL);
	cr_assert(strstr(ks_errmsg(), "given twice"), "%s", ks_errmsg());
}

/* --filter: the kernel's names of mask bits and inode types, for
 * file_permission only; each mistake is one line saying what is wanted. */
Test(scaffold, a_bad_filter_says_what_it_wants)
{
	char out[256];
	struct ks_scaffold s = { .name = "x", .cve = "CVE-2024-1", .hooks = { "file_permission" },
				 .nhooks = 1, .syscall = "write", .dir = "/nonexistent",
				 .filter = "MAY_WRITE" };

	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "want MASK:TYPES, like MAY_WRITE:S_IFREG"), "%s", ks_errmsg());
	s.filter = "MAY_SCRIBBLE:S_IFREG";
	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "'MAY_SCRIBBLE' is not a mask bit"), "%s", ks_errmsg());
	s.filter = "MAY_WRITE:S_IFPIPE";
	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "'S_IFPIPE' is not an inode type"), "%s", ks_errmsg());
	s.filter = "MAY_WRITE:S_IFREG";
	s.hooks[0] = "file_open";
	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "--filter is for file_permission"), "%s", ks_errmsg());
}

/* scripts/check-spdx.sh --as shields/@name/@as @dir/@file: its exit
 * status, and whether it counted the file as a source file. */
static int check_spdx(const char *dir, const char *name, const char *as, const char *file,
		      bool *counted)
{
	char cmd[1024], out[512] = "";
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "scripts/check-spdx.sh --as shields/%s/%s %s/%s/%s 2>&1",
		 name, as, dir, name, file);
	p = popen(cmd, "r");
	cr_assert(p, "%s", cmd);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	*counted = strstr(out, "check-spdx: 1 source files") != NULL;
	cr_log_info("%s: %s", cmd, out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The two C files a scaffold writes carry the licence their folder calls
 * for (GPL-2.0-only for shield.bpf.c, MIT for test.c): the project's own
 * check passes them, and fails the one under the other's rule. */
Test(scaffold, a_scaffold_passes_the_spdx_check)
{
	char tmp[] = "/tmp/ks-unit-scaffold-XXXXXX", out[256], cmd[300];
	struct ks_scaffold s = { .name = "spdx-t", .cve = "CVE-2024-99999",
				 .hooks = { "socket_setsockopt" }, .nhooks = 1,
				 .syscall = "setsockopt", .dir = tmp };
	bool counted;

	cr_assert(mkdtemp(tmp));
	cr_assert_eq(ks_scaffold_write(&s, out, sizeof(out)), 0, "%s", ks_errmsg());
	cr_expect_eq(check_spdx(tmp, s.name, "shield.bpf.c", "shield.bpf.c", &counted), 0);
	cr_expect(counted, "shield.bpf.c was not checked");
	cr_expect_eq(check_spdx(tmp, s.name, "test.c", "test.c", &counted), 0);
	cr_expect(counted, "test.c was not checked");
	/* the rule bites: test.c's MIT line is wrong for a BPF object */
	cr_expect_eq(check_spdx(tmp, s.name, "shield.bpf.c", "test.c", &counted), 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	cr_expect_eq(system(cmd), 0);
}
