// SPDX-License-Identifier: MIT
/* test_btf.c - kshield on a kernel without BTF of its own (btf_find.h):
 * the BTF found by the kernel's build ID in btf_dir, from a debuginfod
 * server started here on loopback, or made from DWARF by pahole; every
 * loader relocating against it; the one-line error when there is none.
 *
 * "No BTF" is made two ways (the `how` of each row): $KSHIELD_SYSFS_BTF
 * pointing nowhere (kshield's own decision only: libbpf still finds the
 * kernel's BTF for what attaches by BTF ID), and /sys/kernel/btf hidden
 * under a tmpfs in a private mount namespace, where libbpf finds nothing
 * either, as on such a kernel. The host's BTF copied into btf_dir stands
 * in for the build farm's. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <limits.h>
#include <sys/stat.h>
#include "agent_harness.h"
#include "array.h"

static char dir[128], id[64];

/* The host kernel's build ID (/sys/kernel/notes, nothing loaded). */
static void host_build_id(void)
{
	json_object *o;
	char *out = NULL;
	int rc;

	rc = ks_runf(&out, NULL, "%s -j debuginfo kernel", ks_bin());
	cr_assert_eq(rc, 0);
	o = ks_json_parse(out);
	snprintf(id, sizeof(id), "%s", ka_str(o, "objects.0.build_id"));
	cr_assert(strlen(id) == 40, "no build id: %s", out);
	json_object_put(o);
	free(out);
}

static void sh(const char *fmt, ...)
{
	char cmd[4096], *err = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = ks_run(cmd, NULL, &err);
	cr_assert_eq(rc, 0, "%s: %s", cmd, err);
	free(err);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-test-btf-%d", getpid());
	ks_runf(NULL, NULL, "rm -rf %s", dir);
	host_build_id();
	/* full: the host's BTF; min: cut to what kshield relocates against
	 * (kshield btf min); empty: nothing; bad: not BTF at all. */
	sh("mkdir -p %s/full %s/min %s/empty %s/bad && cp /sys/kernel/btf/vmlinux %s/full/%s.btf && "
	   "echo garbage > %s/bad/%s.btf", dir, dir, dir, dir, dir, id, dir, id);
	sh("%s btf min --dir %s -o %s/min/%s.btf", ks_bin(), ks_shields_dir(), dir, id);
}

static void teardown(void)
{
	ks_runf(NULL, NULL, "rm -rf %s /sys/fs/bpf/ks-test-btf-%d", dir, getpid());
}

TestSuite(btf, .init = setup, .fini = teardown, .timeout = 300);

enum how { FORCED, HIDDEN };

/* `kshield ARGS` with no BTF of the kernel's own (@how) and btf_dir
 * @sub of the scratch dir; stdout and stderr into *@out, *@err. */
static int run_nobtf(enum how how, const char *sub, const char *args, char **out, char **err)
{
	char env[512];

	snprintf(env, sizeof(env), "env -u DEBUGINFOD_URLS KSHIELD_BTF_DIR=%s/%s "
		 "KSHIELD_BPFFS=/sys/fs/bpf/ks-test-btf-%d %s", dir, sub, getpid(),
		 how == FORCED ? "KSHIELD_SYSFS_BTF=/nonexistent" : "");
	if (how == FORCED)
		return ks_runf(out, err, "%s %s %s", env, ks_bin(), args);
	return ks_runf(out, err, "unshare -m --propagation private sh -c "
		       "'mount -t tmpfs none /sys/kernel/btf && exec %s %s %s'", env, ks_bin(), args);
}

/* The line every command gives where no BTF is found. */
static void expect_missing_line(const char *err, const char *sub)
{
	char want[512];

	snprintf(want, sizeof(want), "error: no BTF found for build ID %s: put %s.btf in %s/%s\n",
		 id, id, dir, sub);
	cr_expect_str_eq(err, want, "want exactly one line");
}

Test(btf, t01_lookup_and_probe)
{
	static const struct {
		const char *sub;	/* btf_dir */
		enum how how;
		const char *source;	/* NULL: none found */
	} rows[] = {
		{ "full", FORCED, "btf_dir" },
		{ "full", HIDDEN, "btf_dir" },
		{ "empty", FORCED, NULL },
		{ "empty", HIDDEN, NULL },
		{ "bad", FORCED, NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *out = NULL, *err = NULL, want[512];
		int rc = run_nobtf(rows[i].how, rows[i].sub, "-j btf find", &out, &err);

		if (rows[i].source) {
			json_object *o = ks_json_parse(out);

			cr_assert_eq(rc, 0, "row %zu: %s", i, err);
			cr_expect_str_eq(ka_str(o, "source"), rows[i].source, "row %zu", i);
			cr_expect_str_eq(ka_str(o, "build_id"), id, "row %zu", i);
			json_object_put(o);
		} else {
			cr_expect_neq(rc, 0, "row %zu found BTF: %s", i, out);
		}
		free(out);
		free(err);

		/* kshield probe: which BTF, or the same one line. */
		rc = run_nobtf(rows[i].how, rows[i].sub, "probe tracepoint", &out, &err);
		cr_expect_eq(rc, 0, "row %zu: probe: %s", i, err);
		if (rows[i].source)
			snprintf(want, sizeof(want), "no BTF: using BTF from %s for build ID %s\n",
				 rows[i].source, id);
		else if (!strcmp(rows[i].sub, "bad"))
			snprintf(want, sizeof(want), "%s/bad/%s.btf is not BTF", dir, id);
		else
			snprintf(want, sizeof(want), "no BTF found for build ID %s: put %s.btf in "
				 "%s/%s\n", id, id, dir, rows[i].sub);
		cr_expect(out && strstr(out, want), "row %zu: probe does not say '%s': %s", i, want,
			  out);
		free(out);
		free(err);
	}
}

/* The shield relocates against the BTF of btf_dir, whole or cut by
 * `kshield btf min`, and passes its own test: refused (or killed, where
 * its tp variant only detects) while enforcing, counted, benign untouched;
 * on every path it claims (rc 0). With /sys/kernel/btf hidden the loader
 * takes the no-BTF ways (ks_fit_nobtf, "__nobtf" programs); the host's
 * verifier has BTF all the same, so whether a kernel without it accepts
 * them is the matrix's custom-appliance row to show. */
Test(btf, t02_shield_passes_with_btf_from_btf_dir)
{
	static const struct {
		const char *shield, *sub;
		enum how how;
	} rows[] = {
		/* cve-2021-3156: native paths; cve-2021-22555's are all 32-bit,
		 * n/a on a machine that runs no 32-bit code */
		{ "cve-2021-3156", "full", FORCED },
		{ "cve-2021-3156", "full", HIDDEN },
		{ "cve-2021-3156", "min", HIDDEN },
		{ "userns-policy", "min", HIDDEN },
		/* the exec checks' raw_tp copies (tp__exec__nobtf) */
		{ "cve-2021-4034", "full", HIDDEN },
		{ "cve-2023-4911", "min", HIDDEN },
		/* task storage as an LRU hash (nlwalk), io_uring submissions
		 * at the raw tracepoint (SQPOLL paths) */
		{ "cve-2022-1015", "full", HIDDEN },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char args[256], *out = NULL, *err = NULL;
		json_object *o;
		int rc;

		snprintf(args, sizeof(args), "-j test %s --dir %s", rows[i].shield, ks_shields_dir());
		rc = run_nobtf(rows[i].how, rows[i].sub, args, &out, &err);
		o = ks_json_parse(out);
		cr_expect_eq(rc, 0, "row %zu (%s, %s): %s %s", i, rows[i].shield, rows[i].sub, out, err);
		cr_expect_str_eq(ka_str(o, "variant"), "tp", "row %zu", i);
		/* refused, or killed where the variant only detects (SIGKILL) */
		cr_expect(json_object_get_boolean(ks_json_get(o, "trigger_refused")) ||
			  json_object_get_boolean(ks_json_get(o, "detect_only")), "row %zu: %s", i,
			  out);
		cr_expect(json_object_get_boolean(ks_json_get(o, "hit_recorded")), "row %zu", i);
		cr_expect(json_object_get_boolean(ks_json_get(o, "benign_ok")), "row %zu", i);
		json_object_put(o);
		free(out);
		free(err);
	}
}

/* No BTF anywhere: a shield load says the one line and leaves nothing. */
Test(btf, t03_no_btf_loads_nothing)
{
	static const enum how hows[] = { FORCED, HIDDEN };

	for (size_t i = 0; i < ARRAY_SIZE(hows); i++) {
		char args[512], *out = NULL, *err = NULL;
		int rc;

		snprintf(args, sizeof(args), "shield load %s/cve-2021-22555.bpf.o", ks_shields_dir());
		rc = run_nobtf(hows[i], "empty", args, &out, &err);
		cr_expect_neq(rc, 0, "loaded: %s", out);
		expect_missing_line(err, "empty");
		free(out);
		free(err);
		rc = ks_runf(&out, NULL, "ls /sys/fs/bpf/ks-test-btf-%d/shields 2>/dev/null; "
			     "bpftool prog show | grep -c tp__ || true", getpid());
		cr_expect(!out || !strstr(out, "cve-2021-22555"), "pinned: %s", out);
		free(out);
	}
}

/* The monitor relocates against btf_dir's BTF and records an exec: with
 * the decision forced (tp_btf programs, libbpf still finding the kernel's
 * BTF to attach them), and with /sys/kernel/btf hidden (their raw
 * tracepoint twins; the agent runs through a wrapper that hides it). */
Test(btf, t04_monitor_records_exec_with_btf_from_btf_dir)
{
	static const enum how hows[] = { FORCED, HIDDEN };
	char path[PATH_MAX], wrapper[PATH_MAX], real[PATH_MAX];

	snprintf(real, sizeof(real), "%s", ks_bin());
	snprintf(wrapper, sizeof(wrapper), "%s/kshield-hidden-btf", dir);
	{
		FILE *f = fopen(wrapper, "w");

		cr_assert(f);
		fprintf(f, "#!/bin/sh\nexec unshare -m --propagation private sh -c "
			"'mount -t tmpfs none /sys/kernel/btf && exec \"$0\" \"$@\"' %s \"$@\"\n",
			real);
		fclose(f);
		chmod(wrapper, 0755);
	}
	snprintf(path, sizeof(path), "%s/full", dir);
	setenv("KSHIELD_BTF_DIR", path, 1);
	for (size_t i = 0; i < ARRAY_SIZE(hows); i++) {
		struct ka_env env;
		char args[128], *err;
		json_object *arr;
		pid_t pid;

		if (hows[i] == FORCED)
			setenv("KSHIELD_SYSFS_BTF", "/nonexistent", 1);
		else
			setenv("KSHIELD", wrapper, 1);
		ka_setup(&env, hows[i] == FORCED ? "btf" : "btfh");
		ka_start(&env, NULL);
		setenv("KSHIELD", real, 1);
		unsetenv("KSHIELD_SYSFS_BTF");
		err = ka_agent_err(&env);
		cr_expect(err && strstr(err, "storing events"), "row %zu: agent did not start: %s", i,
			  err);
		cr_expect(err && strstr(err, "no BTF: using BTF from btf_dir"), "row %zu: log: %s", i,
			  err);
		if (hows[i] == HIDDEN)
			cr_expect(err && strstr(err, "exec, fork and TCP state changes at raw tracepoints"),
				  "log: %s", err);
		free(err);
		pid = fork();
		if (!pid) {
			execl("/bin/true", "true", "ks-btf-marker", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, NULL, 0);
		snprintf(args, sizeof(args), "--pid %d --kind exec", pid);
		arr = ka_events(&env, args, 1, 10);
		cr_expect(arr && json_object_array_length(arr) == 1, "row %zu: no exec of pid %d", i,
			  pid);
		if (arr && json_object_array_length(arr) == 1)
			cr_expect(strstr(ka_str(json_object_array_get_idx(arr, 0), "args"),
					 "ks-btf-marker"), "row %zu", i);
		json_object_put(arr);
		ka_teardown(&env);
	}
	unsetenv("KSHIELD_BTF_DIR");
}

/* ---- debuginfod ----------------------------------------------------------
 * A real debuginfod (elfutils) on loopback, serving an ELF file that
 * carries the host kernel's build ID: with a .BTF section (the host's
 * BTF), as a build farm's vmlinux with BTF, or with DWARF only, which
 * kshield converts with pahole. */
static pid_t server = -1;

static void start_debuginfod(const char *srv, char *url, size_t len)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		int port = 20000 + (getpid() * 11 + attempt * 1013) % 40000;
		char p[16], db[PATH_MAX], logf[PATH_MAX];

		snprintf(p, sizeof(p), "%d", port);
		snprintf(db, sizeof(db), "%s/db-%d.sqlite", dir, attempt);
		snprintf(logf, sizeof(logf), "%s/debuginfod.log", dir);
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
		/* Until it has indexed the file (fresh client cache each time:
		 * the client remembers misses). */
		for (int i = 0; i < 50; i++) {
			if (!ks_runf(NULL, NULL, "DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=%s/probe%d "
				     "debuginfod-find executable %s", url, dir, i, id))
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

static void stop_debuginfod(void)
{
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
	}
	server = -1;
}

Test(btf, t05_btf_from_debuginfod_by_build_id)
{
	static const struct {
		const char *name, *make, *source, *check;
	} rows[] = {
		/* the host's BTF as the .BTF section of an ELF with its build ID */
		{ "section", "echo 'void _start(void){}' > k.c && "
		  "gcc -nostdlib -static -Wl,--build-id=0x$ID -o k k.c && "
		  "objcopy --add-section .BTF=/sys/kernel/btf/vmlinux k srv/vmlinux",
		  "debuginfod", "cmp /sys/kernel/btf/vmlinux $OUT" },
		/* DWARF only: pahole makes the BTF, which has the file's struct */
		{ "dwarf", "echo 'struct ks_btf_probe { int a; long b; } g; void _start(void){}' > k.c && "
		  "gcc -g -nostdlib -static -Wl,--build-id=0x$ID -o srv/vmlinux k.c",
		  "debuginfod DWARF", "bpftool btf dump file $OUT | grep -q \"STRUCT 'ks_btf_probe'\"" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char url[128], env[1024], *out = NULL, *err = NULL, path[PATH_MAX];
		json_object *o;
		int rc;

		sh("cd %s && rm -rf srv btf cache && mkdir srv btf && ID=%s && %s", dir, id, rows[i].make);
		snprintf(path, sizeof(path), "%s/srv", dir);
		start_debuginfod(path, url, sizeof(url));
		snprintf(env, sizeof(env), "DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=%s/cache "
			 "KSHIELD_SYSFS_BTF=/nonexistent KSHIELD_BTF_DIR=%s/btf", url, dir, dir);
		rc = ks_runf(&out, &err, "%s %s -j btf find", env, ks_bin());
		o = ks_json_parse(out);
		cr_expect_eq(rc, 0, "%s: %s", rows[i].name, err);
		cr_expect_str_eq(ka_str(o, "source"), rows[i].source, "%s", rows[i].name);
		snprintf(path, sizeof(path), "%s/btf/%s.btf", dir, id);
		cr_expect_str_eq(ka_str(o, "path"), path, "%s: not kept in btf_dir", rows[i].name);
		json_object_put(o);
		free(out);
		free(err);
		rc = ks_runf(NULL, &err, "OUT=%s; %s", path, rows[i].check);
		cr_expect_eq(rc, 0, "%s: %s: %s", rows[i].name, rows[i].check, err);
		free(err);

		if (!strcmp(rows[i].name, "section")) {
			/* The agent starts on it, with nothing in btf_dir. */
			struct ka_env a;
			char *log;

			unlink(path);
			setenv("DEBUGINFOD_URLS", url, 1);
			snprintf(path, sizeof(path), "%s/cache2", dir);
			setenv("DEBUGINFOD_CACHE_PATH", path, 1);
			setenv("KSHIELD_SYSFS_BTF", "/nonexistent", 1);
			snprintf(path, sizeof(path), "%s/btf", dir);
			setenv("KSHIELD_BTF_DIR", path, 1);
			ka_setup(&a, "btfd");
			ka_start(&a, NULL);
			log = ka_agent_err(&a);
			cr_expect(log && strstr(log, "storing events"), "agent did not start: %s", log);
			cr_expect(log && strstr(log, "no BTF: using BTF from debuginfod for build ID"),
				  "agent log: %s", log);
			free(log);
			ka_teardown(&a);
			unsetenv("DEBUGINFOD_URLS");
			unsetenv("DEBUGINFOD_CACHE_PATH");
			unsetenv("KSHIELD_SYSFS_BTF");
			unsetenv("KSHIELD_BTF_DIR");
		}
		stop_debuginfod();
	}
}

/* ---- a real kernel's DWARF ------------------------------------------------
 * Debian 6.1.0-47-cloud's vmlinux with DWARF (the matrix cache's -dbg
 * tree): `kshield btf export` makes its BTF, the lookup makes the same from
 * a .build-id tree for a kernel whose notes carry that build ID, and `btf
 * min` cuts it to what kshield relocates against. */
#define DBG61 "/var/cache/kshield-matrix/dbgtree/linux-image-6.1.0-47-cloud-amd64/" \
	      "usr/lib/debug/boot/vmlinux-6.1.0-47-cloud-amd64"

static long fsize(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

Test(btf, t06_export_and_min_of_a_61_vmlinux)
{
	char kid[64] = "", *out = NULL, *err = NULL, path[PATH_MAX], min[PATH_MAX];
	json_object *o;
	long full, cut;
	int rc;

	cr_assert(!access(DBG61, R_OK), "%s missing: tests/hooks/bar.sh fetches the -dbg tree",
		  DBG61);
	rc = ks_runf(&out, &err, "%s -j btf export --vmlinux %s --btf-dir %s/export", ks_bin(),
		     DBG61, dir);
	o = ks_json_parse(out);
	cr_assert_eq(rc, 0, "export: %s", err);
	snprintf(kid, sizeof(kid), "%s", ka_str(o, "build_id"));
	snprintf(path, sizeof(path), "%s/export/%s.btf", dir, kid);
	cr_expect_str_eq(ka_str(o, "btf"), path, "not named by its build ID");
	json_object_put(o);
	free(out);
	free(err);
	full = fsize(path);
	cr_expect(full > 1000000, "%s: %ld bytes", path, full);
	rc = ks_runf(NULL, NULL, "bpftool btf dump file %s | grep -q \"STRUCT 'task_struct'\"", path);
	cr_expect_eq(rc, 0, "no task_struct in %s", path);

	/* Found by build ID in a .build-id tree and converted the same way. */
	sh("cd %s && mkdir -p dbg/.build-id/%.2s nb && ln -sf %s dbg/.build-id/%.2s/%s.debug && "
	   "python3 -c 'import sys; d=bytes.fromhex(sys.argv[1]); "
	   "sys.stdout.buffer.write((4).to_bytes(4,\"little\")+len(d).to_bytes(4,\"little\")+"
	   "(3).to_bytes(4,\"little\")+b\"GNU\\0\"+d)' %s > notes",
	   dir, kid, DBG61, kid, kid + 2, kid);
	rc = ks_runf(&out, &err, "env -u DEBUGINFOD_URLS KSHIELD_SYSFS_BTF=/nonexistent "
		     "KSHIELD_KERNEL_NOTES=%s/notes KSHIELD_DEBUG_DIRS=%s/dbg KSHIELD_BTF_DIR=%s/nb "
		     "%s -j btf find", dir, dir, dir, ks_bin());
	o = ks_json_parse(out);
	cr_expect_eq(rc, 0, "find: %s", err);
	cr_expect_str_eq(ka_str(o, "source"), "build-id dir DWARF");
	cr_expect_str_eq(ka_str(o, "build_id"), kid);
	json_object_put(o);
	free(out);
	free(err);
	rc = ks_runf(NULL, NULL, "cmp %s %s/nb/%s.btf", path, dir, kid);
	cr_expect_eq(rc, 0, "the lookup's conversion differs from btf export's");

	/* Cut to the bundled shields and kshield's own objects. */
	snprintf(min, sizeof(min), "%s/min61.btf", dir);
	rc = ks_runf(NULL, &err, "%s btf min --dir %s --btf %s -o %s", ks_bin(), ks_shields_dir(),
		     path, min);
	cr_expect_eq(rc, 0, "min: %s", err);
	free(err);
	cut = fsize(min);
	cr_expect(cut > 0 && cut < 64 * 1024 && cut * 100 < full, "min %ld of full %ld bytes", cut,
		  full);
	cr_log_info("6.1.0-47-cloud BTF: full %ld bytes, min_core_btf (shields, monitor, guard, "
		    "dispatcher) %ld bytes", full, cut);
}
