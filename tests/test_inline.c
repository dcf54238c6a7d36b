// SPDX-License-Identifier: MIT
/* test_inline.c - shields on inlined functions: every copy of a function
 * found in build-ID matched DWARF and probed at its raw offset
 * (`kshield sites`), and `kshield debuginfo`.
 *
 * The target is tests/fixtures/inline: ks_check() is inlined into path_a,
 * path_b (another CU), path_c (through a nested inline) and path_d (in a
 * loop, 3 calls), and kept out of line for a call through a pointer ("ptr").
 * It is compiled here, -O2 -g, in four ways: plain, -flto, DWZ with the
 * common DIEs in an alt file, and -gsplit-dwarf. Each build must show the
 * five copies, count every call at the right copy, read the first argument
 * through DWARF's per-site location, and with --kill stop every path before
 * the copy runs. A stripped build gets its debug file from a real debuginfod
 * server on loopback; a debug file of another build is refused.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "array.h"
#include "harness.h"

static char dir[64];
static char root[64];		/* own bpffs root of the loader test */
static pid_t server = -1;
static int busy = -1;			/* background caller of the target */

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-inline-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
	}
	if (busy > 0)
		kill(busy, SIGTERM);
	if (root[0])
		ks_runf(NULL, NULL, "%s shield unload inline-fixture >/dev/null 2>&1; rm -rf %s",
			ks_bin(), root);
	if (dir[0])
		ks_runf(NULL, NULL, "rm -rf %s", dir);
}

TestSuite(inline, .init = setup, .fini = teardown, .timeout = 240);

/* Where the fixture sources are (tests run from the repository root). */
static const char *src(void)
{
	static char path[PATH_MAX];

	cr_assert_not_null(realpath("tests/fixtures/inline", path),
			   "tests/fixtures/inline not found from %s", getcwd(NULL, 0));
	return path;
}

/* Compile the target into dir/@out with extra @flags, in @dir (split DWARF
 * puts the .dwo files beside the output). */
static void build(const char *out, const char *flags)
{
	char *err;
	int rc = ks_runf(NULL, &err, "cd %s && gcc -O2 -g %s -I%s %s/target.c %s/paths.c -o %s",
			 dir, flags, src(), src(), src(), out);

	cr_assert_eq(rc, 0, "building %s (%s) failed: %s", out, flags, err);
	free(err);
}

static void sh(const char *fmt, const char *arg)
{
	char cmd[4096], *err;
	int rc;

	snprintf(cmd, sizeof(cmd), fmt, arg);
	rc = ks_run(cmd, NULL, &err);
	cr_assert_eq(rc, 0, "'%s' failed: %s", cmd, err);
	free(err);
}

/* Build ID of dir/@file, read by binutils (independently of kshield). */
static void build_id_of(const char *file, char *id, size_t len)
{
	char *out;
	const char *p;

	ks_runf(&out, NULL, "readelf -n %s/%s", dir, file);
	p = strstr(out, "Build ID: ");
	cr_assert_not_null(p, "readelf -n %s: no build ID", file);
	snprintf(id, len, "%.*s", (int)strspn(p + 10, "0123456789abcdef"), p + 10);
	free(out);
}

/* `kshield [ENV] -j sites trace dir/BIN:ks_check [FLAGS] -- dir/BIN ARGS`. */
static json_object *trace(const char *env, const char *bin, const char *flags,
			  const char *args, int *rc, char **err)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "%s %s -j sites trace %s/%s:ks_check %s -- %s/%s %s",
		 env ? env : "", ks_bin(), dir, bin, flags, dir, bin, args);
	return ks_run_json(cmd, rc, err);
}

static json_object *site_of(json_object *o, const char *caller)
{
	json_object *sites = ks_json_get(o, "sites");
	size_t i;

	for (i = 0; sites && i < json_object_array_length(sites); i++) {
		json_object *s = json_object_array_get_idx(sites, i);

		if (!strcmp(json_object_get_string(ks_json_get(s, "caller")), caller))
			return s;
	}
	return NULL;
}

static const struct {
	const char *path;	/* argument of the target program */
	const char *caller;	/* where its copy of ks_check lives */
	const char *kind;
	int hits;
	int code;		/* ks_check's first argument there (last call) */
} paths[] = {
	{ "ptr", "ks_check", "outline", 1, 4 },
	{ "a", "path_a", "inlined", 1, 1 },
	{ "b", "path_b", "inlined", 1, 2 },
	{ "c", "path_c", "inlined", 1, 3 },
	{ "d", "path_d", "inlined", 3, 2 },
};

/* All paths under the counting probe: five copies, each hit as often as it
 * was called, the first argument right wherever DWARF can say where it is. */
static void check_counts(const char *env, const char *bin)
{
	char *err;
	int rc;
	size_t i;
	json_object *o = trace(env, bin, "", "ptr a b c d", &rc, &err);

	cr_assert_eq(rc, 0, "trace %s failed: %s", bin, err);
	cr_assert_not_null(o, "trace %s -j printed no JSON", bin);
	cr_assert_eq(json_object_get_int(ks_json_get(o, "command.exit")), 0, "target failed: %s", err);
	cr_assert_eq(json_object_array_length(ks_json_get(o, "sites")), ARRAY_SIZE(paths),
		     "%s: expected %zu copies of ks_check: %s", bin, ARRAY_SIZE(paths),
		     json_object_to_json_string(ks_json_get(o, "sites")));
	cr_assert_eq(json_object_get_int(ks_json_get(o, "attached")), (int)ARRAY_SIZE(paths));
	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		json_object *s = site_of(o, paths[i].caller), *arg0, *args;

		cr_assert_not_null(s, "%s: no copy of ks_check in %s", bin, paths[i].caller);
		cr_expect_str_eq(json_object_get_string(ks_json_get(s, "kind")), paths[i].kind,
				 "%s: copy in %s", bin, paths[i].caller);
		cr_expect(json_object_get_boolean(ks_json_get(s, "probeable")));
		cr_expect_eq(json_object_get_int(ks_json_get(s, "hits")), paths[i].hits,
			     "%s: copy in %s hit %d times, called %d times", bin, paths[i].caller,
			     json_object_get_int(ks_json_get(s, "hits")), paths[i].hits);
		/* The first parameter is "code", wherever the compiler put it. */
		args = ks_json_get(s, "args");
		cr_assert(args && json_object_array_length(args) == 2, "%s: %s: args %s", bin,
			  paths[i].caller, json_object_to_json_string(args));
		cr_expect_str_eq(json_object_get_string(ks_json_get(
					 json_object_array_get_idx(args, 0), "name")), "code");
		arg0 = ks_json_get(s, "arg0");
		if (json_object_get_boolean(ks_json_get(json_object_array_get_idx(args, 0),
							"available"))) {
			cr_expect_not_null(arg0, "%s: %s: location %s gave no value", bin,
					   paths[i].caller,
					   json_object_to_json_string(json_object_array_get_idx(args, 0)));
			cr_expect_eq(json_object_get_int(arg0), paths[i].code,
				     "%s: %s: code read as %d, passed %d (location %s)", bin,
				     paths[i].caller, json_object_get_int(arg0), paths[i].code,
				     json_object_to_json_string(json_object_array_get_idx(args, 0)));
		} else {
			cr_expect_null(arg0, "%s: %s: a value where DWARF has none", bin,
				       paths[i].caller);
		}
	}
	json_object_put(o);
	free(err);
}

/* Each path alone under the killing probe: the target dies by SIGKILL at
 * that path's copy, before printing "reached". */
static void check_kills(const char *env, const char *bin)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		char *err;
		int rc;
		json_object *o = trace(env, bin, "--kill", paths[i].path, &rc, &err), *s;

		cr_assert_eq(rc, 0, "trace --kill %s %s failed: %s", bin, paths[i].path, err);
		cr_assert_eq(json_object_get_int(ks_json_get(o, "command.signal")), SIGKILL,
			     "%s %s was not killed: %s", bin, paths[i].path,
			     json_object_to_json_string(ks_json_get(o, "command")));
		cr_expect_null(strstr(err, "reached"), "%s %s ran past the copy: %s", bin,
			       paths[i].path, err);
		s = site_of(o, paths[i].caller);
		cr_expect_eq(json_object_get_int(ks_json_get(s, "hits")), 1,
			     "%s %s: killed at the wrong copy", bin, paths[i].path);
		json_object_put(o);
		free(err);
	}
}

Test(inline, o2_every_copy_counted_and_killed)
{
	build("t", "");
	check_counts(NULL, "t");
	check_kills(NULL, "t");
}

/* Without the sites, a probe on the symbol sees only the pointer call:
 * the reason this feature exists. */
Test(inline, symbol_alone_misses_inlined_calls)
{
	char *out;
	unsigned long addr = 0;

	build("t", "");
	ks_runf(&out, NULL, "nm %s/t | awk '$3 == \"ks_check\" { print $1 }'", dir);
	addr = strtoul(out, NULL, 16);
	free(out);
	cr_assert(addr, "ks_check has no out-of-line symbol");
	json_object *o = trace(NULL, "t", "", "a b c d ptr", NULL, NULL);
	json_object *s = site_of(o, "ks_check");
	char want[32];

	snprintf(want, sizeof(want), "0x%lx", addr);
	cr_assert_str_eq(json_object_get_string(ks_json_get(s, "addr")), want);
	cr_expect_str_eq(json_object_get_string(ks_json_get(s, "symbol")), "ks_check");
	cr_expect_str_eq(json_object_get_string(ks_json_get(s, "symbol_offset")), "0x0");
	cr_expect_eq(json_object_get_int(ks_json_get(s, "hits")), 1,
		     "the symbol's copy saw more than the pointer call");
	json_object_put(o);
}

Test(inline, lto_every_copy_counted_and_killed)
{
	char *out;

	build("t", "-flto");
	/* LTO output refers to abstract origins in other units. */
	ks_runf(&out, NULL, "eu-readelf --debug-dump=info %s/t | grep -c 'abstract_origin *(ref_addr)'",
		dir);
	cr_assert_gt(atoi(out), 0, "the LTO build has no cross-unit abstract origins");
	free(out);
	check_counts(NULL, "t");
	check_kills(NULL, "t");
}

Test(inline, dwz_alt_file_counted_and_killed)
{
	char env[PATH_MAX], alt[64];
	char *err;
	int rc;
	json_object *o;

	build("t", "");
	build("t2", "-DVARIANT");
	/* One alt file for both; its recorded name is not where it ends up,
	 * so only the build-ID lookup finds it. */
	sh("cd %s && dwz -m common.debug -M common-moved.debug t t2", dir);
	build_id_of("common.debug", alt, sizeof(alt));
	snprintf(env, sizeof(env), "cd %s && mkdir -p dbg/.build-id/%.2s && mv common.debug "
		 "dbg/.build-id/%.2s/%s.debug", dir, alt, alt, alt + 2);
	sh("%s", env);

	o = trace(NULL, "t", "", "a", &rc, &err);
	cr_assert_neq(rc, 0, "attached without the alt file");
	cr_expect_not_null(strstr(err, "DWZ alt file"), "stderr: %s", err);
	json_object_put(o);
	free(err);

	snprintf(env, sizeof(env), "KSHIELD_DEBUG_DIRS=%s/dbg", dir);
	o = trace(env, "t", "", "a", &rc, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_not_null(strstr(json_object_get_string(ks_json_get(o, "alt_file")), alt + 2));
	json_object_put(o);
	free(err);
	check_counts(env, "t");
	check_kills(env, "t");
}

Test(inline, split_dwarf_counted_and_killed)
{
	char *err;
	int rc;
	json_object *o;

	build("t", "-gsplit-dwarf");
	o = trace(NULL, "t", "", "a", &rc, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_eq(json_object_get_int(ks_json_get(o, "split_units")), 2);
	json_object_put(o);
	free(err);
	check_counts(NULL, "t");
	check_kills(NULL, "t");

	/* A missing .dwo hides copies: refuse rather than probe some. */
	sh("rm %s/t-paths.dwo", dir);
	o = trace(NULL, "t", "", "a", &rc, &err);
	cr_expect_neq(rc, 0, "attached with a unit's DWARF missing");
	cr_expect_not_null(strstr(err, ".dwo"), "stderr: %s", err);
	json_object_put(o);
	free(err);
}

/* Start debuginfod serving dir/srv on a free loopback port; returns the
 * URL once it answers for @id. */
static void start_debuginfod(const char *id, char *url, size_t len)
{
	int attempt, i;

	for (attempt = 0; attempt < 5; attempt++) {
		int port = 20000 + (getpid() * 7 + attempt * 1013) % 40000;
		char p[16], db[PATH_MAX], logf[PATH_MAX], srv[PATH_MAX];

		snprintf(p, sizeof(p), "%d", port);
		snprintf(db, sizeof(db), "%s/db.sqlite", dir);
		snprintf(logf, sizeof(logf), "%s/debuginfod.log", dir);
		snprintf(srv, sizeof(srv), "%s/srv", dir);
		server = fork();
		cr_assert_geq(server, 0);
		if (!server) {
			int fd = open(logf, O_WRONLY | O_CREAT | O_APPEND, 0600);

			dup2(fd, 1);
			dup2(fd, 2);
			execlp("debuginfod", "debuginfod", "-F", "-p", p, "-d", db, "-t", "0",
			       "-g", "0", srv, (char *)NULL);
			_exit(127);
		}
		snprintf(url, len, "http://127.0.0.1:%d", port);
		/* Ask with debuginfod-find, each time with a fresh cache: the
		 * client remembers misses. */
		for (i = 0; i < 50; i++) {
			int rc = ks_runf(NULL, NULL,
					 "DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=%s/probe%d "
					 "debuginfod-find debuginfo %s", url, dir, i, id);

			if (!rc)
				return;
			if (waitpid(server, NULL, WNOHANG) == server)
				break;	/* port taken: next one */
			usleep(200 * 1000);
		}
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
		server = -1;
	}
	cr_assert_fail("debuginfod did not start (see %s/debuginfod.log)", dir);
}

Test(inline, stripped_binary_from_debuginfod)
{
	char id[64], url[128], env[1024], *err;
	int rc;
	json_object *o;

	build("full", "");
	sh("cd %s && mkdir -p srv empty && objcopy --only-keep-debug full srv/t.debug && "
	   "strip --strip-all -o t full && rm full", dir);
	build_id_of("t", id, sizeof(id));
	rc = ks_runf(NULL, NULL, "readelf -S %s/t | grep -q debug_info", dir);
	cr_assert_neq(rc, 0, "the stripped binary still has DWARF");

	/* Nowhere to find it: refused, with the reason. */
	snprintf(env, sizeof(env), "env -u DEBUGINFOD_URLS KSHIELD_DEBUG_DIRS=%s/empty", dir);
	o = trace(env, "t", "", "a", &rc, &err);
	cr_assert_neq(rc, 0);
	cr_expect_not_null(strstr(err, "no debug info for build ID"), "stderr: %s", err);
	json_object_put(o);
	free(err);

	start_debuginfod(id, url, sizeof(url));
	snprintf(env, sizeof(env), "DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=%s/cache "
		 "KSHIELD_DEBUG_DIRS=%s/empty", url, dir, dir);
	o = trace(env, "t", "", "a", &rc, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "debug_source")), "debuginfod");
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "build_id")), id);
	json_object_put(o);
	free(err);
	check_counts(env, "t");
	check_kills(env, "t");
}

Test(inline, mismatched_debug_file_refused)
{
	char id[64], other[64], cmd[1024], *err, *out;
	int rc;
	json_object *o, *e;

	build("full", "");
	build("other", "-DVARIANT");
	build_id_of("full", id, sizeof(id));
	build_id_of("other", other, sizeof(other));
	cr_assert_str_neq(id, other, "the variant build has the same build ID");
	snprintf(cmd, sizeof(cmd), "cd %s && strip --strip-all -o t full && "
		 "mkdir -p bad/.build-id/%.2s && objcopy --only-keep-debug other "
		 "bad/.build-id/%.2s/%s.debug", dir, id, id, id + 2);
	sh("%s", cmd);

	snprintf(cmd, sizeof(cmd), "env -u DEBUGINFOD_URLS KSHIELD_DEBUG_DIRS=%s/bad", dir);
	o = trace(cmd, "t", "--kill", "a", &rc, &err);
	cr_assert_neq(rc, 0, "attached with another build's debug file");
	cr_expect_null(o);
	cr_expect_not_null(strstr(err, "refusing"), "stderr: %s", err);
	cr_expect_not_null(strstr(err, other), "the refusal names the wrong ID: %s", err);
	cr_expect_null(strstr(err, "reached"), "the target ran under a refused trace");
	free(err);

	/* debuginfo says the same, and nothing stayed attached. */
	snprintf(cmd, sizeof(cmd), "env -u DEBUGINFOD_URLS KSHIELD_DEBUG_DIRS=%s/bad %s -j "
		 "debuginfo file %s/t", dir, ks_bin(), dir);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert_eq(rc, 0);
	cr_assert(json_object_is_type(ks_json_get(o, "objects"), json_type_array));
	e = json_object_array_get_idx(ks_json_get(o, "objects"), 0);
	cr_expect_null(ks_json_get(e, "dwarf"));
	cr_expect_not_null(ks_json_get(e, "dwarf_refused"));
	json_object_put(o);
	rc = ks_runf(&out, NULL, "%s/t a", dir);
	cr_expect(rc == 0 && strstr(out, "reached a"));
	free(out);
}

/* A build ID names the binary through a running process that maps it. */
Test(inline, target_by_build_id_and_debuginfo_pid)
{
	char id[64], path[PATH_MAX], cmd[PATH_MAX + 128], spec[128], *out = NULL;
	FILE *p;
	int rc, i;
	json_object *o, *objs;
	bool found = false;

	build("t", "");
	build_id_of("t", id, sizeof(id));
	snprintf(cmd, sizeof(cmd), "exec %s/t wait > %s/wait.out", dir, dir);
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	snprintf(path, sizeof(path), "%s/wait.out", dir);
	for (i = 0; i < 100; i++) {
		FILE *f = fopen(path, "r");
		char line[32] = "";

		if (f) {
			fgets(line, sizeof(line), f);
			fclose(f);
		}
		if (!strncmp(line, "ready", 5))
			break;
		usleep(50 * 1000);
	}
	snprintf(spec, sizeof(spec), "%s:ks_check", id);
	snprintf(cmd, sizeof(cmd), "%s -j sites list %s", ks_bin(), spec);
	o = ks_run_json(cmd, &rc, NULL);
	cr_expect_eq(rc, 0);
	snprintf(path, sizeof(path), "%s/t", dir);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "binary")), path);
	cr_expect_eq(json_object_array_length(ks_json_get(o, "sites")), ARRAY_SIZE(paths));
	json_object_put(o);

	/* debuginfo pid: the program and its libc, with their build IDs. */
	ks_runf(&out, NULL, "pgrep -f '^%s/t wait'", dir);
	snprintf(cmd, sizeof(cmd), "%s -j debuginfo pid %d", ks_bin(), atoi(out));
	free(out);
	o = ks_run_json(cmd, &rc, NULL);
	cr_expect_eq(rc, 0);
	objs = ks_json_get(o, "objects");
	for (i = 0; objs && i < (int)json_object_array_length(objs); i++) {
		json_object *e = json_object_array_get_idx(objs, i);

		if (!strcmp(json_object_get_string(ks_json_get(e, "path")), path)) {
			found = true;
			cr_expect_str_eq(json_object_get_string(ks_json_get(e, "build_id")), id);
			cr_expect_str_eq(json_object_get_string(ks_json_get(e, "dwarf_source")),
					 "binary");
		}
	}
	cr_expect(found, "debuginfo pid does not list %s: %s", path, json_object_to_json_string(o));
	cr_expect_geq(json_object_array_length(objs), 2, "no shared libraries listed");
	json_object_put(o);
	pclose(p);
}

/* Real system binaries: build IDs as binutils reads them, DWARF found
 * exactly when the build-id tree holds a file for them. */
Test(inline, debuginfo_system_binaries)
{
	char libc[PATH_MAX] = "", line[PATH_MAX + 128], *out;
	FILE *m = fopen("/proc/self/maps", "r");
	const char *files[2];
	json_object *o, *objs;
	int rc, i;

	while (m && fgets(line, sizeof(line), m)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so")) {
			p[strcspn(p, "\n")] = 0;
			snprintf(libc, sizeof(libc), "%s", p);
			break;
		}
	}
	if (m)
		fclose(m);
	cr_assert(libc[0], "no libc in /proc/self/maps");
	files[0] = "/usr/bin/ls";
	files[1] = libc;
	snprintf(line, sizeof(line), "env -u DEBUGINFOD_URLS %s -j debuginfo file %s %s",
		 ks_bin(), files[0], files[1]);
	o = ks_run_json(line, &rc, NULL);
	cr_assert_eq(rc, 0);
	objs = ks_json_get(o, "objects");
	cr_assert_eq(json_object_array_length(objs), 2);
	for (i = 0; i < 2; i++) {
		json_object *e = json_object_array_get_idx(objs, i);
		const char *id = json_object_get_string(ks_json_get(e, "build_id"));
		char want[64], dbg[PATH_MAX];
		const char *p;
		bool has;

		ks_runf(&out, NULL, "readelf -n %s", files[i]);
		p = strstr(out, "Build ID: ");
		cr_assert_not_null(p);
		snprintf(want, sizeof(want), "%.*s", (int)strspn(p + 10, "0123456789abcdef"), p + 10);
		free(out);
		cr_expect_str_eq(id, want, "%s", files[i]);
		snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", want, want + 2);
		has = !access(dbg, R_OK);
		cr_expect_eq(ks_json_get(e, "dwarf") != NULL, has, "%s: dwarf %s, %s %s", files[i],
			     json_object_to_json_string(ks_json_get(e, "dwarf")), dbg,
			     has ? "exists" : "does not exist");
		cr_expect(json_object_get_boolean(ks_json_get(e, "btf")) == false);
	}
	json_object_put(o);
}

/* The running kernel: the build ID is in /sys/kernel/notes' bytes, BTF is
 * reported as the kernel offers it. */
Test(inline, debuginfo_kernel)
{
	unsigned char notes[4096];
	char hex[2 * sizeof(notes) + 1];
	struct utsname u;
	FILE *f = fopen("/sys/kernel/notes", "r");
	size_t n, i;
	json_object *o, *k;
	int rc;
	const char *id;

	cr_assert_not_null(f);
	n = fread(notes, 1, sizeof(notes), f);
	fclose(f);
	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", notes[i]);
	hex[2 * n] = 0;
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "env -u DEBUGINFOD_URLS %s -j debuginfo kernel", ks_bin());
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert_eq(rc, 0);
	uname(&u);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "kernel")), u.release);
	k = json_object_array_get_idx(ks_json_get(o, "objects"), 0);
	id = json_object_get_string(ks_json_get(k, "build_id"));
	cr_assert(id && strlen(id) >= 32, "kernel build ID '%s'", id ? id : "");
	cr_expect_not_null(strstr(hex, id), "build ID %s is not in /sys/kernel/notes", id);
	cr_expect_eq(json_object_get_boolean(ks_json_get(k, "btf")),
		     !access("/sys/kernel/btf/vmlinux", R_OK));
	json_object_put(o);
}

/* The loader: a shield whose target names ks_check gets a link at every
 * copy (pinned, so it enforces after kshield exits) and decides on the
 * first argument read per site: ks_check(2, ...) is killed on path b
 * (constant at that copy) and path d (a register, third call); a, c and
 * ptr run. Audit mode lets b through; unload removes every copy's probe. */
Test(inline, loader_shield_on_every_copy)
{
	char obj[PATH_MAX], *out, *err;
	int rc;
	size_t i;
	static const struct { const char *path; bool killed; } want[] = {
		{ "a", false }, { "b", true }, { "c", false }, { "d", true }, { "ptr", false },
	};
	const char *fx = getenv("KSHIELD_FIXTURES");

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	snprintf(obj, sizeof(obj), "%s/inline-shield.bpf.o", fx);
	/* The object names this path as its target. */
	rmdir(dir);
	snprintf(dir, sizeof(dir), "/tmp/kshield-inline-fixture");
	ks_runf(NULL, NULL, "rm -rf %s", dir);
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir %s: %s", dir, strerror(errno));
	build("t", "");
	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-inline-%d", getpid());
	setenv("KSHIELD_BPFFS", root, 1);

	rc = ks_runf(&out, &err, "%s shield load %s", ks_bin(), obj);
	cr_assert_eq(rc, 0, "load failed: %s", err);
	free(out);
	free(err);
	rc = ks_runf(&out, NULL, "ls %s/shields/inline-fixture | grep -c '^link_uprobe__ks_check__site'",
		     root);
	cr_expect_eq(atoi(out), (int)ARRAY_SIZE(paths), "expected one pinned link per copy, got %s", out);
	free(out);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		rc = ks_runf(&out, NULL, "%s/t %s", dir, want[i].path);
		cr_expect_eq(rc, want[i].killed ? 128 + SIGKILL : 0, "path %s: exit %d", want[i].path, rc);
		cr_expect_eq(strstr(out, "reached") != NULL, !want[i].killed, "path %s: %s",
			     want[i].path, out);
		free(out);
	}
	cr_expect_eq(ks_runf(NULL, NULL, "%s shield mode inline-fixture audit", ks_bin()), 0);
	rc = ks_runf(&out, NULL, "%s/t b", dir);
	cr_expect_eq(rc, 0, "audit mode killed path b");
	free(out);
	cr_expect_eq(ks_runf(NULL, NULL, "%s shield unload inline-fixture", ks_bin()), 0);
	cr_expect_eq(ks_runf(NULL, NULL, "%s shield mode inline-fixture enforce", ks_bin()) != 0, 1);
	rc = ks_runf(&out, NULL, "%s/t b d", dir);
	cr_expect_eq(rc, 0, "a probe stayed after unload");
	free(out);
}

/* A copy whose instruction cannot carry a uprobe (here: an int3 already
 * planted at the out-of-line copy) is reported; the attach fails rather
 * than leave that path open, unless --partial asks for the rest. */
Test(inline, unprobeable_site_reported)
{
	char cmd[PATH_MAX + 128], *err;
	unsigned long off;
	int rc;
	json_object *o, *s;

	build("t", "");
	snprintf(cmd, sizeof(cmd), "%s -j sites list %s/t:ks_check", ks_bin(), dir);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert_eq(rc, 0);
	s = site_of(o, "ks_check");
	cr_assert_not_null(s);
	off = strtoul(json_object_get_string(ks_json_get(s, "offset")), NULL, 16);
	json_object_put(o);
	snprintf(cmd, sizeof(cmd), "printf '\\314' | dd of=%s/t bs=1 seek=%lu conv=notrunc 2>/dev/null",
		 dir, off);
	sh("%s", cmd);

	snprintf(cmd, sizeof(cmd), "%s -j sites list %s/t:ks_check", ks_bin(), dir);
	o = ks_run_json(cmd, &rc, NULL);
	s = site_of(o, "ks_check");
	cr_expect_not(json_object_get_boolean(ks_json_get(s, "probeable")));
	cr_expect_not_null(strstr(json_object_get_string(ks_json_get(s, "why")), "int3"));
	json_object_put(o);

	o = trace(NULL, "t", "", "a", &rc, &err);
	cr_expect_neq(rc, 0, "attached with a copy left open");
	cr_expect_not_null(strstr(err, "cannot carry a uprobe"), "stderr: %s", err);
	cr_expect_null(strstr(err, "reached"), "the command ran after a refused attach");
	json_object_put(o);
	free(err);

	o = trace(NULL, "t", "--partial", "a", &rc, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_eq(json_object_get_int(ks_json_get(o, "attached")), (int)ARRAY_SIZE(paths) - 1);
	cr_expect_eq(json_object_get_int(ks_json_get(site_of(o, "path_a"), "hits")), 1);
	json_object_put(o);
	free(err);
}

/* With a command, counts are that process's only; --system counts all. */
Test(inline, trace_counts_only_the_command)
{
	char cmd[PATH_MAX + 256], *out;
	FILE *bg;
	int rc;
	json_object *o;

	build("t", "");
	/* Another process calling path a all the while (at most 2 minutes;
	 * the teardown stops it). */
	snprintf(cmd, sizeof(cmd), "timeout 120 sh -c 'while :; do %s/t a >/dev/null; done' "
		 ">/dev/null 2>&1 & echo $!", dir);
	bg = popen(cmd, "r");
	cr_assert_not_null(bg);
	out = calloc(1, 32);
	fgets(out, 32, bg);
	pclose(bg);
	busy = atoi(out);
	cr_assert_gt(busy, 0);
	o = trace(NULL, "t", "", "b", &rc, NULL);
	cr_expect_eq(rc, 0);
	cr_expect_eq(json_object_get_int(ks_json_get(site_of(o, "path_a"), "hits")), 0,
		     "another process's calls were counted");
	cr_expect_eq(json_object_get_int(ks_json_get(site_of(o, "path_b"), "hits")), 1);
	json_object_put(o);
	/* The traced command lasts a second: the other process's loop gets
	 * that long to call path a (a command of a few ms can end before
	 * the loop's next exec on a loaded machine). */
	snprintf(cmd, sizeof(cmd), "%s -j sites trace %s/t:ks_check --system -- sh -c 'sleep 1; exec %s/t b'",
		 ks_bin(), dir, dir);
	o = ks_run_json(cmd, &rc, NULL);
	cr_expect_eq(rc, 0);
	cr_expect_gt(json_object_get_int(ks_json_get(site_of(o, "path_a"), "hits")), 0,
		     "--system missed the other process");
	json_object_put(o);
	free(out);
}

/* dir/many.c: ks_many() inlined into caller_0..caller_@n-1 (distinct
 * bodies, so -O2's identical-code folding keeps them apart), no
 * out-of-line copy; `t I CODE` calls caller_I(CODE). */
static void write_many(int n)
{
	char path[PATH_MAX];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/many.c", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n\n"
		"static inline __attribute__((always_inline)) int ks_many(int code, int n)\n"
		"{\n\tif (code == 2)\n\t\tprintf(\"code 2 at copy %%d\\n\", n);\n"
		"\treturn code * 7 + n;\n}\n\n");
	for (i = 0; i < n; i++)
		fprintf(f, "__attribute__((noinline)) int caller_%d(int code) "
			"{ return ks_many(code, %d) ^ %d; }\n", i, i, i * 13);
	fprintf(f, "\nstatic int (*const callers[])(int) = {\n");
	for (i = 0; i < n; i++)
		fprintf(f, "\tcaller_%d,\n", i);
	fprintf(f, "};\n\nint main(int argc, char **argv)\n{\n"
		"\tint i = argc > 1 ? atoi(argv[1]) : 0, code = argc > 2 ? atoi(argv[2]) : 0;\n\n"
		"\tif (i < 0 || i >= %d)\n\t\treturn 2;\n"
		"\tprintf(\"reached %%d\\n\", callers[i](code));\n\treturn 0;\n}\n", n);
	fclose(f);
	sh("cd %s && gcc -O2 -g many.c -o t", dir);
}

/* A function with hundreds of inlined copies (copy_from_user-like): 300,
 * more than the loader once held links for (64) and than the compiled size
 * of the ks_sites map (256). Every copy is traced; the shield gets one
 * pinned link per copy, named after the copy, and kills at the first, a
 * middle and the last copy; unload takes every link away. */
Test(inline, loader_hundreds_of_copies)
{
	enum { N = 300 };
	char obj[PATH_MAX], cmd[PATH_MAX + 256], *out, *err;
	const char *fx = getenv("KSHIELD_FIXTURES");
	static const int probe[] = { 0, 63, 64, 150, 255, 256, N - 1 };
	json_object *o;
	size_t i;
	int rc;

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	snprintf(obj, sizeof(obj), "%s/many-sites.bpf.o", fx);
	/* The object names this path as its target. */
	rmdir(dir);
	snprintf(dir, sizeof(dir), "/tmp/kshield-many-sites");
	ks_runf(NULL, NULL, "rm -rf %s", dir);
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir %s: %s", dir, strerror(errno));
	write_many(N);

	/* `sites trace` sizes its maps too: each copy counted at itself. */
	snprintf(cmd, sizeof(cmd), "%s -j sites trace %s/t:ks_many -- %s/t 299 2", ks_bin(), dir, dir);
	o = ks_run_json(cmd, &rc, &err);
	cr_assert_eq(rc, 0, "trace: %s", err);
	free(err);
	cr_assert_eq(json_object_array_length(ks_json_get(o, "sites")), N);
	cr_expect_eq(json_object_get_int(ks_json_get(o, "attached")), N);
	for (i = 0; i < N; i++) {
		json_object *s = json_object_array_get_idx(ks_json_get(o, "sites"), i);
		const char *caller = json_object_get_string(ks_json_get(s, "caller"));
		int hits = json_object_get_int(ks_json_get(s, "hits"));

		cr_expect_eq(hits, !strcmp(caller, "caller_299"), "copy %zu in %s: %d hits",
			     i, caller, hits);
	}
	json_object_put(o);

	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-inline-%d", getpid());
	setenv("KSHIELD_BPFFS", root, 1);
	rc = ks_runf(&out, &err, "%s shield load %s", ks_bin(), obj);
	cr_assert_eq(rc, 0, "load failed: %s", err);
	free(out);
	free(err);
	rc = ks_runf(&out, NULL, "ls %s/shields/many-sites-fixture | grep -c '^link_uprobe__ks_many__site'",
		     root);
	cr_expect_eq(atoi(out), N, "expected one pinned link per copy, got %s", out);
	free(out);
	rc = ks_runf(&out, NULL, "ls %s/shields/many-sites-fixture/link_uprobe__ks_many__site0 "
		     "%s/shields/many-sites-fixture/link_uprobe__ks_many__site%d", root, root, N - 1);
	cr_expect_eq(rc, 0, "pins are named after their copies 0..%d: %s", N - 1, out);
	free(out);
	for (i = 0; i < ARRAY_SIZE(probe); i++) {
		rc = ks_runf(&out, NULL, "%s/t %d 2", dir, probe[i]);
		cr_expect_eq(rc, 128 + SIGKILL, "copy in caller_%d not enforced: exit %d, %s",
			     probe[i], rc, out);
		free(out);
		rc = ks_runf(&out, NULL, "%s/t %d 1", dir, probe[i]);
		cr_expect_eq(rc, 0, "caller_%d killed for code 1", probe[i]);
		free(out);
	}
	cr_expect_eq(ks_runf(NULL, NULL, "%s shield unload many-sites-fixture", ks_bin()), 0);
	rc = ks_runf(&out, NULL, "%s/t %d 2", dir, N - 1);
	cr_expect_eq(rc, 0, "a probe stayed after unload");
	free(out);
	ks_runf(NULL, NULL, "rm -rf %s", root);
	root[0] = '\0';
}
