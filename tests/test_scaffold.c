// SPDX-License-Identifier: MIT
/* test_scaffold.c - `kshield shield new` end to end on this host: a scaffold
 * written into a temporary folder builds with the shields' flags (make
 * shield-extra: -Werror, BPF and C), loads, and its `kshield test` reports
 * every path "not written yet" and fails; the paths follow the syscall;
 * a hook this kernel's BTF lacks is one line saying so. And the kernel's
 * own fix refusing a trigger with the shield's errno (KS_CASE_FIXED): the
 * fixture tests/fixtures/fixture-fixed, whose trigger this kernel refuses
 * with EPERM, is a pass, vulnerable "no", with the baseline's reason kept.
 * Loads BPF: run under flock /tmp/kshield-host.lock (make test-host is). */
#include <criterion/criterion.h>
#include <libgen.h>
#include <sys/stat.h>
#include "array.h"
#include "harness.h"

static char tmp[64], root[64], build[512];

static void setup(void)
{
	char bin[512];

	snprintf(tmp, sizeof(tmp), "/tmp/ks-scaffold-XXXXXX");
	cr_assert(mkdtemp(tmp));
	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-test-scaffold-%d", getpid());
	/* make's BUILD: where the binary under test is */
	snprintf(bin, sizeof(bin), "%s", ks_bin());
	snprintf(build, sizeof(build), "%s", dirname(bin));
}

static void teardown(void)
{
	ks_runf(NULL, NULL, "rm -rf %s %s/extra/ks-scaffold-t01 %s/extra/fixture-fixed %s",
		tmp, build, build, root);
}

/* Scaffold NAME for @hook and @syscall into tmp. Exit status. */
static int scaffold(const char *name, const char *hook, const char *syscall, char **err)
{
	return ks_runf(NULL, err, "%s shield new %s --cve CVE-2024-99999 --hook %s --syscall %s "
		       "--fix-function demo_fix --dir %s", ks_bin(), name, hook, syscall, tmp);
}

/* Build DIR/NAME as an extra shield; exit status of make. */
static int build_extra(const char *dir, char **err)
{
	return ks_runf(NULL, err, "make -s --no-print-directory BUILD=%s shield-extra EXTRA=%s",
		       build, dir);
}

Test(scaffold, t01_fresh_scaffold_builds_loads_and_is_not_written_yet,
     .init = setup, .fini = teardown, .timeout = 300)
{
	static const char *paths[] = { "native", "io-uring", "compat-i386",
				       "compat-i386-socketcall", "clone-files", "pre-existing" };
	char *err = NULL, *out = NULL, dir[256];
	json_object *o, *p, *todo;
	int rc;

	rc = scaffold("ks-scaffold-t01", "socket_setsockopt", "setsockopt", &err);
	cr_assert_eq(rc, 0, "shield new: %s", err);
	snprintf(dir, sizeof(dir), "%s/ks-scaffold-t01", tmp);
	free(err);
	rc = build_extra(dir, &err);
	cr_assert_eq(rc, 0, "the scaffold does not build: %s", err);
	free(err);
	rc = ks_runf(&out, &err, "KSHIELD_BPFFS=%s %s/extra/ks-scaffold-t01/kshield -j test "
		     "ks-scaffold-t01 --dir %s/extra/ks-scaffold-t01", root, build, build);
	cr_assert_neq(rc, 0, "a scaffold's test passed: %s", out);
	o = ks_json_parse(out);
	cr_assert(o, "no JSON: %s / %s", out, err);
	/* it loaded (the host runs tp), and refused, killed, passed nothing */
	cr_assert_str_eq(json_object_get_string(json_object_object_get(o, "variant")), "tp");
	cr_assert(strstr(json_object_get_string(json_object_object_get(o, "error")),
			 "not written yet"), "%s", out);
	cr_assert(!json_object_get_boolean(json_object_object_get(o, "trigger_refused")));
	todo = json_object_object_get(o, "todo");
	cr_assert_eq(json_object_array_length(todo), ARRAY_SIZE(paths) + 1, "%s", out);
	p = json_object_object_get(o, "paths");
	cr_assert_eq(json_object_array_length(p), ARRAY_SIZE(paths), "%s", out);
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		json_object *e = json_object_array_get_idx(p, i);

		cr_expect_str_eq(json_object_get_string(json_object_object_get(e, "name")), paths[i]);
		cr_expect_str_eq(json_object_get_string(json_object_object_get(e, "status")),
				 "not-written");
		cr_expect(!strncmp(json_object_get_string(json_object_object_get(e, "why")),
				   "not written yet", 15), "%s", out);
	}
	cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(todo, 6)), "benign");
	json_object_put(o);
	free(out);
	free(err);
	/* the text row says it per path */
	rc = ks_runf(&out, NULL, "KSHIELD_BPFFS=%s %s/extra/ks-scaffold-t01/kshield test "
		     "ks-scaffold-t01 --dir %s/extra/ks-scaffold-t01", root, build, build);
	cr_assert_neq(rc, 0);
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		char want[96];

		snprintf(want, sizeof(want), "path %-14s not written yet", paths[i]);
		cr_expect(strstr(out, want), "no '%s' in:\n%s", want, out);
	}
	free(out);
}

/* Which paths a syscall gets: the rows of the generated table. */
Test(scaffold, t02_paths_follow_the_syscall, .init = setup, .fini = teardown)
{
	static const struct {
		const char *syscall, *hook;
		const char *has, *lacks;	/* comma lists of path names */
	} cases[] = {
		{ "write", "file_permission", "native,io-uring,splice,compat-,clone-files,pre-existing",
		  "socketcall" },
		{ "mount", "sb_mount", "native,compat-,pre-existing", "io-uring,splice,clone-files" },
		{ "socket", "socket_create", "native,io-uring,socketcall,clone-files", "splice" },
		{ "mmap", "mmap_addr", "native,clone-files", "compat-,splice,io-uring" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char name[32], file[256], *text = NULL, *err = NULL, *table, list[128], *save;
		size_t n = 0;
		FILE *f;

		snprintf(name, sizeof(name), "t02-%s", cases[i].syscall);
		cr_assert_eq(scaffold(name, cases[i].hook, cases[i].syscall, &err), 0, "%s", err);
		free(err);
		snprintf(file, sizeof(file), "%s/%s/test.c", tmp, name);
		f = fopen(file, "r");
		cr_assert(f);
		cr_assert_eq(getdelim(&text, &n, '\0', f) > 0, 1);
		fclose(f);
		table = strstr(text, "KSHIELD_TEST_PATHS(");
		cr_assert(table, "%s", text);
		snprintf(list, sizeof(list), "%s", cases[i].has);
		for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save))
			cr_expect(strstr(table, w), "%s: no %s row:\n%s", cases[i].syscall, w, table);
		snprintf(list, sizeof(list), "%s", cases[i].lacks);
		for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save))
			cr_expect(!strstr(table, w), "%s: a %s row:\n%s", cases[i].syscall, w, table);
		free(text);
	}
}

/* The text of @dir/@name/shield.bpf.c (free it). */
static char *shield_text(const char *name)
{
	char file[256];

	snprintf(file, sizeof(file), "%s/%s/shield.bpf.c", tmp, name);
	return ks_read_file(file);
}

/* What the scaffold writes so that a shield needs nothing from elsewhere:
 * the includes, its event arguments by name, and on file_permission (every
 * read and write) the KS_SECURITY_FILTER line; with --filter, the bits and
 * types given, which build and reach the object's metadata as the loader
 * reads them. */
Test(scaffold, t02b_includes_arguments_and_the_filter_line, .init = setup, .fini = teardown,
     .timeout = 300)
{
	char *text, *err = NULL, *out = NULL, dir[256];
	json_object *o;
	int rc;

	cr_assert_eq(scaffold("t02b-default", "file_permission", "write", &err), 0, "%s", err);
	free(err);
	text = shield_text("t02b-default");
	cr_assert(text);
	cr_expect(strstr(text, "#include \"shield.bpf.h\"") && strstr(text, "#include \"kconst.bpf.h\""),
		  "%s", text);
	cr_expect(strstr(text, "KSHIELD_ARGS(\"file_permission\", \"mask:flags:may_mask\");"), "%s",
		  text);
	cr_expect(strstr(text, "KSHIELD_ARGS(\"sys_enter_write\", \"arg0:hex arg1:hex arg2:hex\");"),
		  "%s", text);
	cr_expect(strstr(text, "KS_VALS_MAY_MASK;"), "%s", text);
	cr_expect(strstr(text, "KS_SECURITY_FILTER(file_permission, MAY_WRITE, S_IFREG);"), "%s", text);
	free(text);
	/* a hook that is not hot gets no filter line */
	cr_assert_eq(scaffold("t02b-open", "file_open", "write", NULL), 0);
	text = shield_text("t02b-open");
	cr_expect(text && !strstr(text, "KS_SECURITY_FILTER("), "%s", text);
	free(text);
	/* the README's example shape: given bits and types, built */
	rc = ks_runf(NULL, &err, "%s shield new t02b-filter --cve CVE-2022-0492 --hook file_permission "
		     "--filter 'MAY_READ|MAY_WRITE:S_IFREG,S_IFIFO' --syscall write --dir %s",
		     ks_bin(), tmp);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	text = shield_text("t02b-filter");
	cr_expect(strstr(text, "KS_SECURITY_FILTER(file_permission, 0x6 /* MAY_READ|MAY_WRITE */, "
			 "S_IFREG, S_IFIFO);"), "%s", text);
	free(text);
	snprintf(dir, sizeof(dir), "%s/t02b-filter", tmp);
	cr_assert_eq(build_extra(dir, &err), 0, "does not build: %s", err);
	free(err);
	rc = ks_runf(&out, &err, "%s -j shield info %s/extra/t02b-filter/t02b-filter.bpf.o", ks_bin(),
		     build);
	cr_assert_eq(rc, 0, "%s", err);
	o = ks_json_parse(out);
	cr_assert(o, "%s", out);
	cr_expect_str_eq(json_object_get_string(json_object_object_get(o, "fpf.file_permission")),
			 "0x6 0100000, 0010000");
	cr_expect(json_object_object_get(o, "args/1") && !json_object_object_get(o, "args_error"),
		  "%s", out);
	json_object_put(o);
	free(out);
	free(err);
	ks_runf(NULL, NULL, "rm -rf %s/extra/t02b-filter", build);
}

Test(scaffold, t03_unknown_hook_is_one_line, .init = setup, .fini = teardown)
{
	char *err = NULL, dir[256];
	int rc = scaffold("t03", "no_such_hook_here", "write", &err);
	struct stat st;

	cr_assert_neq(rc, 0);
	cr_assert(strstr(err, "'no_such_hook_here' does not exist in this kernel's BTF"), "%s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "not one line: %s", err);
	snprintf(dir, sizeof(dir), "%s/t03", tmp);
	cr_assert(stat(dir, &st), "a folder was left for a refused scaffold");
	free(err);
	/* a hook whose security_ function takes other arguments than the hook */
	cr_assert_neq(scaffold("t03", "mmap_file", "mmap", &err), 0);
	cr_assert(strstr(err, "take different arguments"), "%s", err);
	free(err);
	/* and a folder that exists is not overwritten */
	cr_assert_eq(scaffold("t03", "file_open", "write", NULL), 0);
	cr_assert_neq(scaffold("t03", "file_open", "write", &err), 0);
	cr_assert(strstr(err, "exists"), "%s", err);
	free(err);
}

/* The kernel's own fix refuses the trigger with EPERM, the shield's errno. */
Test(scaffold, t04_fixed_by_the_kernel_is_not_a_failure, .init = setup, .fini = teardown,
     .timeout = 300)
{
	char *out = NULL, *err = NULL;
	json_object *o, *p;
	int rc = build_extra("tests/fixtures/fixture-fixed", &err);

	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = ks_runf(&out, &err, "KSHIELD_BPFFS=%s %s/extra/fixture-fixed/kshield -j test "
		     "fixture-fixed --dir %s/extra/fixture-fixed", root, build, build);
	cr_assert_eq(rc, 0, "%s / %s", out, err);
	o = ks_json_parse(out);
	cr_assert(o);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(o, "vulnerable")), "no");
	cr_assert(json_object_get_boolean(json_object_object_get(o, "trigger_refused")), "%s", out);
	p = json_object_array_get_idx(json_object_object_get(o, "paths"), 0);
	cr_assert_str_eq(json_object_get_string(json_object_object_get(p, "baseline")), "fixed");
	cr_assert_str_eq(json_object_get_string(json_object_object_get(p, "enforce")), "refused");
	cr_assert(json_object_get_boolean(json_object_object_get(p, "hit")));
	cr_assert_str_eq(json_object_get_string(json_object_object_get(p, "unload")), "fixed");
	/* the baseline's own reason, kept */
	cr_assert(strstr(json_object_get_string(json_object_object_get(p, "baseline_why")),
			 "refused (EPERM)"), "%s", out);
	json_object_put(o);
	free(out);
	free(err);
}
