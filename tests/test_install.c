// SPDX-License-Identifier: MIT
/* test_install.c - kshield installs like a service: `make install` lays out
 * the expected tree (binary, shields, systemd unit, config, man page, bash
 * completion), and the Debian package builds, installs on this machine,
 * works (`kshield probe`, loading a bundled shield) and purges without a
 * trace.
 *
 * The package test installs into the real root (dpkg needs it for its
 * maintainer scripts) and so takes a lock, refuses to touch a kshield that
 * someone else installed, and pins under its own bpffs root.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "array.h"
#include "harness.h"

/* The source tree: tests run from it (make test-host's working directory). */
static const char *src_root(void)
{
	static char root[PATH_MAX];

	if (!root[0]) {
		cr_assert_not_null(getcwd(root, sizeof(root)));
		if (access("debian/control", F_OK) && getenv("KSHIELD")) {
			/* $KSHIELD is <root>/build/kshield */
			snprintf(root, sizeof(root), "%s/../..", getenv("KSHIELD"));
		}
	}
	return root;
}

static void rm_rf(const char *dir)
{
	if (dir && !strncmp(dir, "/tmp/ks-", 8))
		ks_runf(NULL, NULL, "rm -rf '%s'", dir);
}

/* Scratch directories of the running test, removed by its fini even when
 * an assertion ends the test early. */
static char *scratch[4];

static void scratch_fini(void)
{
	for (int i = 0; i < 4; i++) {
		rm_rf(scratch[i]);
		free(scratch[i]);
		scratch[i] = NULL;
	}
}

static char *mktemp_dir(const char *tag)
{
	char *d = malloc(64);
	int i;

	cr_assert_not_null(d);
	snprintf(d, 64, "/tmp/ks-%s-XXXXXX", tag);
	cr_assert_not_null(mkdtemp(d), "mkdtemp: %s", strerror(errno));
	for (i = 0; i < 4 && scratch[i]; i++)
		;
	cr_assert_lt(i, 4, "too many scratch directories");
	scratch[i] = d;
	return d;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

static void expect_mode(const char *path, mode_t mode)
{
	struct stat st;

	cr_assert_eq(lstat(path, &st), 0, "%s missing", path);
	cr_expect_eq(st.st_mode & 07777, mode, "%s has mode %o, expected %o", path,
		     st.st_mode & 07777, mode);
}

static void make_install(const char *dest, const char *extra)
{
	char *out, *err;
	int rc = ks_runf(&out, &err, "make -s -C '%s' install DESTDIR='%s' %s",
			 src_root(), dest, extra);

	cr_assert_eq(rc, 0, "make install failed (%d): %s%s", rc, out, err);
	free(out);
	free(err);
}

/* Each built shield object is installed, and linked from shields.d. */
/* Each 32-bit test program (<shield>/compat/<prog>.<abi>) is installed
 * beside the objects: kshield test runs them for the compat paths. */
static void expect_compat(const char *dest, const char *libdir)
{
	char pattern[PATH_MAX], path[PATH_MAX];
	glob_t g;
	size_t skip = strlen(ks_shields_dir());

	snprintf(pattern, sizeof(pattern), "%s/*/compat/*", ks_shields_dir());
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no compat test programs built in %s",
		     ks_shields_dir());
	for (size_t i = 0; i < g.gl_pathc; i++) {
		snprintf(path, sizeof(path), "%s%s/shields%s", dest, libdir, g.gl_pathv[i] + skip);
		expect_mode(path, 0755);
	}
	globfree(&g);
}

static void expect_shields(const char *dest, const char *libdir)
{
	DIR *d = opendir(ks_shields_dir());
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "cannot list %s", ks_shields_dir());
	while ((e = readdir(d))) {
		char path[PATH_MAX], link[PATH_MAX], want[PATH_MAX];
		ssize_t len;

		if (!strstr(e->d_name, ".bpf.o"))
			continue;
		n++;
		snprintf(path, sizeof(path), "%s%s/shields/%s", dest, libdir, e->d_name);
		expect_mode(path, 0644);
		snprintf(path, sizeof(path), "%s/etc/kshield/shields.d/%s", dest, e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		cr_assert_gt(len, 0, "%s is not a link", path);
		link[len] = '\0';
		snprintf(want, sizeof(want), "%s/shields/%s", libdir, e->d_name);
		cr_expect_str_eq(link, want);
	}
	closedir(d);
	cr_expect_gt(n, 0, "no shield objects were built in %s", ks_shields_dir());
	expect_compat(dest, libdir);
}

/* Every line of the default config is blank, a comment, or `key = value`. */
static void expect_config(const char *conf)
{
	char *text = ks_read_file(conf), *line, *save;

	cr_assert_not_null(text, "%s missing", conf);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		cr_expect_not_null(strstr(line, " = "), "not `key = value`: '%s'", line);
	}
	free(text);
	text = ks_read_file(conf);
	cr_expect(has_line(text, "shields_dir = /etc/kshield/shields.d"));
	cr_expect(has_line(text, "store = /var/lib/kshield/events.db"));
	cr_expect(has_line(text, "shield.cve-2021-22555.mode = enforce"));
	free(text);
}

/* Tab-completion: the script completes nouns and verbs. bash-completion's
 * own helpers are stubbed (the package may not be installed here). */
static char *complete(const char *script, const char *words, int cword)
{
	char *out, *err;
	int rc = ks_runf(&out, &err,
		"bash -c '_init_completion() { words=(\"${COMP_WORDS[@]}\"); cword=$COMP_CWORD;"
		" cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; };"
		" _filedir() { :; }; source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _kshield;"
		" echo ${COMPREPLY[*]}'", script, words, cword);

	cr_assert_eq(rc, 0, "completion script failed: %s", err);
	free(err);
	return out;
}

Test(install, t01_make_install_lays_out_the_tree, .timeout = 120, .fini = scratch_fini)
{
	char *dest = mktemp_dir("inst"), path[PATH_MAX], *out, *err, *text;
	int rc;

	make_install(dest, "PREFIX=/usr");

	snprintf(path, sizeof(path), "%s/usr/sbin/kshield", dest);
	expect_mode(path, 0755);
	rc = ks_runf(&out, &err, "%s --version", path);
	cr_expect_eq(rc, 0);
	cr_expect(strstr(out, "kshield "), "version: %s", out);
	free(out);
	free(err);
	/* The installed binary works on its own: probe from the DESTDIR copy. */
	json_object *o = ks_run_json(path, NULL, NULL);	/* no args: help, not JSON */
	cr_expect_null(o);
	snprintf(path, sizeof(path), "%s/usr/sbin/kshield probe ringbuf uprobe -j", dest);
	o = ks_run_json(path, &rc, NULL);
	cr_assert_not_null(o, "installed kshield probe printed no JSON");
	cr_expect(json_object_get_boolean(ks_json_get(o, "hooks.uprobe")));
	json_object_put(o);

	expect_shields(dest, "/usr/lib/kshield");

	snprintf(path, sizeof(path), "%s/etc/kshield/kshield.conf", dest);
	expect_mode(path, 0644);
	expect_config(path);
	/* The agent accepts the shipped config and the installed shields
	 * (shields_dir pointed into DESTDIR: the links there are absolute). */
	rc = ks_runf(&out, &err, "sed 's|^shields_dir = .*|shields_dir = %s/usr/lib/kshield/shields|' "
		     "%s > %s/check.conf && %s/usr/sbin/kshield agent --check --config %s/check.conf",
		     dest, path, dest, dest, dest);
	cr_expect_eq(rc, 0, "agent --check rejects the shipped config: %s%s", out, err);
	free(out);
	free(err);

	snprintf(path, sizeof(path), "%s/usr/lib/systemd/system/kshield.service", dest);
	expect_mode(path, 0644);
	text = ks_read_file(path);
	cr_expect(has_line(text, "ExecStart=/usr/sbin/kshield agent --config /etc/kshield/kshield.conf"));
	cr_expect(has_line(text, "Restart=on-failure"));
	cr_expect(has_line(text, "ProtectSystem=strict"));
	cr_expect(has_line(text, "NoNewPrivileges=yes"));
	cr_expect(has_line(text, "ProtectHome=yes"));
	cr_expect(has_line(text, "ReadWritePaths=-/sys/fs/bpf"));
	cr_expect(has_line(text, "StateDirectory=kshield"));
	cr_expect(strstr(text, "\nCapabilityBoundingSet=CAP_BPF CAP_PERFMON CAP_SYS_ADMIN CAP_NET_ADMIN"));
	free(text);

	/* systemd itself accepts every directive (warnings go to stderr).
	 * It checks that ExecStart is executable, so point it at DESTDIR. */
	rc = ks_runf(&out, &err,
		     "sed 's|/usr/sbin/kshield|%s/usr/sbin/kshield|' %s > %s/kshield.service && "
		     "systemd-analyze verify --man=no %s/kshield.service", dest, path, dest, dest);
	cr_expect_eq(rc, 0, "systemd-analyze verify: %s", err);
	cr_expect_str_empty(err, "systemd-analyze verify warns: %s", err);
	free(out);
	free(err);

	snprintf(path, sizeof(path), "%s/usr/share/man/man8/kshield.8", dest);
	expect_mode(path, 0644);
	rc = ks_runf(&out, &err, "MANWIDTH=80 man --warnings -l %s", path);
	cr_expect_eq(rc, 0);
	cr_expect_str_empty(err, "man page warnings: %s", err);
	static const char *const groups[] = { "PROBE", "SHIELD", "TEST", "AGENT", "EVENTS",
					      "HUNT", "STATS", "STATUS", "FLEET", "DEBUGINFO" };
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		cr_expect(has_line(out, groups[i]), "man page has no %s section", groups[i]);
	free(out);
	free(err);

	snprintf(path, sizeof(path), "%s/usr/share/bash-completion/completions/kshield", dest);
	expect_mode(path, 0644);
	out = complete(path, "kshield sh", 1);
	cr_expect_str_eq(out, "shield\n");
	free(out);
	out = complete(path, "kshield shield lo", 2);
	cr_expect_str_eq(out, "load\n");
	free(out);
	out = complete(path, "kshield -j probe ker", 3);
	cr_expect_str_eq(out, "\n");
	free(out);
	out = complete(path, "kshield probe tp", 2);
	cr_expect_str_eq(out, "tp_btf\n");
	free(out);
}

/* PREFIX defaults to /usr/local, and the unit points at that binary. */
Test(install, t02_default_prefix_is_usr_local, .timeout = 120, .fini = scratch_fini)
{
	char *dest = mktemp_dir("inst"), path[PATH_MAX], *text;

	make_install(dest, "");
	snprintf(path, sizeof(path), "%s/usr/local/sbin/kshield", dest);
	expect_mode(path, 0755);
	expect_shields(dest, "/usr/local/lib/kshield");
	snprintf(path, sizeof(path), "%s/usr/local/lib/systemd/system/kshield.service", dest);
	text = ks_read_file(path);
	cr_assert_not_null(text);
	cr_expect(has_line(text, "ExecStart=/usr/local/sbin/kshield agent --config /etc/kshield/kshield.conf"));
	free(text);
	snprintf(path, sizeof(path), "%s/etc/kshield/kshield.conf", dest);
	expect_config(path);

	/* uninstall removes what install put there but the admin's config. */
	cr_assert_eq(ks_runf(NULL, NULL, "make -s -C '%s' uninstall DESTDIR='%s' >/dev/null",
			     src_root(), dest), 0);
	static const char *const gone[] = {
		"/usr/local/sbin/kshield", "/usr/local/lib/kshield",
		"/usr/local/lib/systemd/system/kshield.service",
		"/usr/local/share/man/man8/kshield.8",
		"/usr/local/share/bash-completion/completions/kshield",
	};
	for (size_t i = 0; i < ARRAY_SIZE(gone); i++) {
		snprintf(path, sizeof(path), "%s%s", dest, gone[i]);
		cr_expect_neq(access(path, F_OK), 0, "%s left by uninstall", gone[i]);
	}
	snprintf(path, sizeof(path), "%s/etc/kshield/kshield.conf", dest);
	cr_expect_eq(access(path, F_OK), 0, "uninstall removed the config");
}

/* Installing again keeps the administrator's config and shield choices. */
Test(install, t03_reinstall_keeps_admin_changes, .timeout = 120, .fini = scratch_fini)
{
	char *dest = mktemp_dir("inst"), conf[PATH_MAX], link[PATH_MAX], *text;
	FILE *f;

	make_install(dest, "PREFIX=/usr");
	snprintf(conf, sizeof(conf), "%s/etc/kshield/kshield.conf", dest);
	f = fopen(conf, "a");
	cr_assert_not_null(f);
	fputs("shield.cve-2021-22555.mode = audit\n", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/etc/kshield/shields.d/cve-2021-22555.bpf.o", dest);
	cr_assert_eq(unlink(link), 0, "no %s: %s", link, strerror(errno));

	make_install(dest, "PREFIX=/usr");
	text = ks_read_file(conf);
	cr_expect(has_line(text, "shield.cve-2021-22555.mode = audit"), "config overwritten");
	free(text);
	cr_expect_neq(access(link, F_OK), 0, "unlinked shield was linked again");
}

/* --- The Debian package --- */

#define DEB_LOCK "/run/lock/kshield-deb-test.lock"

static char *deb_tmp;
static char deb_bpffs[64];

/* Paths the package owns or creates; none may exist before or after. */
static const char *const deb_paths[] = {
	"/usr/sbin/kshield", "/usr/lib/kshield", "/etc/kshield",
	"/lib/systemd/system/kshield.service", "/usr/lib/systemd/system/kshield.service",
	"/usr/share/man/man8/kshield.8.gz", "/usr/share/bash-completion/completions/kshield",
	"/usr/share/doc/kshield", "/var/lib/kshield",
	"/etc/systemd/system/multi-user.target.wants/kshield.service",
	"/var/lib/systemd/deb-systemd-helper-enabled/kshield.service.dsh-also",
};

static bool deb_installed(void)
{
	char *out;
	bool yes;

	ks_run("dpkg-query -W -f='${Status}' kshield 2>/dev/null", &out, NULL);
	yes = strstr(out, "installed") && !strstr(out, "not-installed") &&
	      !strstr(out, "config-files");
	free(out);
	return yes;
}

/* dpkg with the private bpffs root in its environment (the maintainer
 * scripts honour it), retried while someone else's apt holds dpkg's lock. */
static int dpkg(const char *args, char **err)
{
	int rc = -1;

	for (int i = 0; i < 60; i++) {
		free(*err);
		*err = NULL;
		rc = ks_runf(NULL, err, "KSHIELD_BPFFS=%s DEBIAN_FRONTEND=noninteractive dpkg %s",
			     deb_bpffs, args);
		if (rc == 0 || !strstr(*err, "lock"))
			break;
		sleep(1);
	}
	return rc;
}

static void deb_fini(void)
{
	char *err = NULL;

	/* Whatever failed above, leave this machine as we found it. */
	if (deb_bpffs[0] && deb_installed())
		dpkg("--purge kshield", &err);
	free(err);
	if (deb_bpffs[0])
		ks_runf(NULL, NULL, "rm -rf '%s'", deb_bpffs);
	scratch_fini();
}

Test(install, t04_deb_builds_installs_probes_and_purges, .timeout = 300, .fini = deb_fini)
{
	char *out = NULL, *err = NULL, path[PATH_MAX];
	int rc, lock;

	cr_assert_eq(ks_run("command -v dpkg-buildpackage && dpkg-query -W debhelper",
			    NULL, NULL), 0,
		     "dpkg-buildpackage or debhelper missing: run scripts/setup.sh");

	/* Build from a copy: the checkout's build/ belongs to everyone working
	 * in it. The copy keeps build/ (with its times) and -nc skips the
	 * pre-build clean, so debian/rules' `make all` finds the tree already
	 * built by `make test-host` and packaging takes seconds, not the
	 * minutes a from-scratch build takes on a busy machine. What is
	 * tested is the package: rules, install layout, maintainer scripts. */
	deb_tmp = mktemp_dir("deb");
	rc = ks_runf(&out, &err,
		     "mkdir %s/src && tar -C '%s' --exclude=./.git --exclude=./build/matrix "
		     "--exclude=./build/arm64 -cf - . | "
		     "tar -C %s/src -xf - && cd %s/src && "
		     "{ dpkg-buildpackage -us -uc -b -nc > ../build.log 2>&1 || "
		     "{ tail -30 ../build.log; exit 1; }; }",
		     deb_tmp, src_root(), deb_tmp, deb_tmp);
	cr_assert_eq(rc, 0, "dpkg-buildpackage failed: %s%s", out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* One package test at a time on this machine. */
	lock = open(DEB_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(lock, 0);
	cr_assert_eq(flock(lock, LOCK_EX), 0);
	cr_assert(!deb_installed(), "a kshield package is already installed here; "
		  "not touching it (dpkg --purge kshield first)");
	for (size_t i = 0; i < ARRAY_SIZE(deb_paths); i++)
		cr_assert_neq(access(deb_paths[i], F_OK), 0,
			      "%s exists before the package is installed", deb_paths[i]);
	snprintf(deb_bpffs, sizeof(deb_bpffs), "/sys/fs/bpf/ks-debtest-%d", getpid());

	rc = ks_runf(&out, NULL, "ls %s/kshield_*.deb | grep -v dbgsym", deb_tmp);
	cr_assert_eq(rc, 0, "no .deb built");
	out[strcspn(out, "\n")] = '\0';
	snprintf(path, sizeof(path), "-i %s", out);
	free(out);
	out = NULL;
	rc = dpkg(path, &err);
	cr_assert_eq(rc, 0, "dpkg -i failed: %s", err);
	cr_assert(deb_installed());
	expect_mode("/usr/sbin/kshield", 0755);
	cr_expect_eq(access("/etc/kshield/kshield.conf", F_OK), 0);
	cr_expect_eq(access("/lib/systemd/system/kshield.service", F_OK), 0);
	cr_expect_eq(access("/etc/kshield/shields.d/cve-2021-22555.bpf.o", R_OK), 0,
		     "bundled shield not linked from shields.d");

	/* The agent accepts the installed config and shields.d as they are. */
	rc = ks_run("/usr/sbin/kshield agent --check", &out, &err);
	cr_expect_eq(rc, 0, "agent --check on the installed package: %s%s", out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* The installed command works. */
	json_object *o = ks_run_json("/usr/sbin/kshield probe -j", &rc, &err);
	cr_assert_eq(rc, 0, "installed kshield probe failed: %s", err);
	cr_assert_not_null(o);
	cr_expect_eq(json_object_object_length(ks_json_get(o, "hooks")), 13);
	cr_expect(json_object_get_boolean(ks_json_get(o, "hooks.cgroup_sockopt")));
	/* The packaged binary is stripped: the uprobe probe must not need
	 * symbols. */
	cr_expect(json_object_get_boolean(ks_json_get(o, "hooks.uprobe")), "%s",
		  json_object_to_json_string(ks_json_get(o, "hook_errors")));
	json_object_put(o);
	free(err);
	err = NULL;

	/* A bundled shield loads from the package, so removal has
	 * something to clean up (cve-2021-3156: its tp variant loads here;
	 * cve-2021-22555 has nothing to guard on a kernel without 32-bit
	 * syscalls). */
	rc = ks_runf(&out, &err, "/usr/sbin/kshield --bpffs %s shield load "
		     "/usr/lib/kshield/shields/cve-2021-3156.bpf.o", deb_bpffs);
	cr_assert_eq(rc, 0, "loading the packaged shield failed: %s", err);
	free(out);
	free(err);
	out = err = NULL;
	snprintf(path, sizeof(path), "%s/shields/cve-2021-3156", deb_bpffs);
	cr_assert_eq(access(path, F_OK), 0, "shield not pinned at %s", path);

	rc = dpkg("--purge kshield", &err);
	cr_assert_eq(rc, 0, "dpkg --purge failed: %s", err);
	cr_expect(!deb_installed(), "kshield still installed after purge");
	for (size_t i = 0; i < ARRAY_SIZE(deb_paths); i++)
		cr_expect_neq(access(deb_paths[i], F_OK), 0, "%s left after purge", deb_paths[i]);
	/* Removal unloaded the shield (prerm), purge removed the pins root. */
	cr_expect_neq(access(deb_bpffs, F_OK), 0, "%s left after purge", deb_bpffs);
	free(err);
	close(lock);
}

/* The unit's CapabilityBoundingSet (with NoNewPrivileges) is enough to do
 * kshield's work: probing gives the same answers as full root, and a shield
 * loads, enforces (is listed with its links) and unloads. The same run with
 * the BPF capabilities removed fails, so the restriction is real. */
static void unit_caps(char *setpriv_caps, size_t len, const char *drop)
{
	char path[PATH_MAX], *text, *line, *save, *tok, *tsave;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/packaging/kshield.service", src_root());
	text = ks_read_file(path);
	cr_assert_not_null(text);
	n = snprintf(setpriv_caps, len, "-all");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "CapabilityBoundingSet=", 22))
			continue;
		for (tok = strtok_r(line + 22, " ", &tsave); tok; tok = strtok_r(NULL, " ", &tsave)) {
			if (drop && strstr(drop, tok))
				continue;
			n += snprintf(setpriv_caps + n, len - n, ",+");
			for (const char *c = tok + 4; *c && n + 1 < len; c++)	/* skip CAP_ */
				setpriv_caps[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
			setpriv_caps[n] = '\0';
		}
	}
	free(text);
	cr_assert(strstr(setpriv_caps, "+net_admin"), "no CapabilityBoundingSet in the unit");
}

Test(install, t05_unit_capabilities_are_enough_for_bpf, .timeout = 60)
{
	char caps[512], cmd[1024], *out, *err, root[64];
	json_object *full, *limited;
	int rc;

	unit_caps(caps, sizeof(caps), NULL);
	snprintf(cmd, sizeof(cmd), "%s probe -j", ks_bin());
	full = ks_run_json(cmd, &rc, NULL);
	cr_assert_not_null(full);
	snprintf(cmd, sizeof(cmd), "setpriv --bounding-set=%s --inh-caps=-all "
		 "--no-new-privs -- %s probe -j", caps, ks_bin());
	limited = ks_run_json(cmd, &rc, &err);
	cr_assert_not_null(limited, "probe under the unit's capabilities failed: %s", err);
	free(err);
	cr_expect_str_eq(json_object_to_json_string(ks_json_get(limited, "hooks")),
			 json_object_to_json_string(ks_json_get(full, "hooks")),
			 "the unit's capabilities change what probe finds");
	cr_expect_str_eq(json_object_to_json_string(ks_json_get(limited, "lsms")),
			 json_object_to_json_string(ks_json_get(full, "lsms")));
	json_object_put(full);
	json_object_put(limited);

	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-captest-%d", getpid());
	rc = ks_runf(&out, &err, "setpriv --bounding-set=%s --inh-caps=-all --no-new-privs -- "
		     "%s --bpffs %s shield load %s/cve-2021-3156.bpf.o && "
		     "setpriv --bounding-set=%s --inh-caps=-all --no-new-privs -- "
		     "%s --bpffs %s -j shield list", caps, ks_bin(), root, ks_shields_dir(),
		     caps, ks_bin(), root);
	cr_expect_eq(rc, 0, "load under the unit's capabilities failed: %s", err);
	cr_expect(strstr(out, "\"cve-2021-3156\""), "not listed: %s", out);
	free(out);
	free(err);
	rc = ks_runf(NULL, &err, "setpriv --bounding-set=%s --inh-caps=-all --no-new-privs -- "
		     "%s --bpffs %s shield unload cve-2021-3156", caps, ks_bin(), root);
	cr_expect_eq(rc, 0, "unload under the unit's capabilities failed: %s", err);
	free(err);
	ks_runf(NULL, NULL, "rm -rf %s", root);

	/* Control: without the BPF capabilities the same probe is refused. */
	unit_caps(caps, sizeof(caps), "CAP_BPF CAP_PERFMON CAP_SYS_ADMIN");
	rc = ks_runf(NULL, NULL, "setpriv --bounding-set=%s --inh-caps=-all --no-new-privs -- "
		     "%s probe -j", caps, ks_bin());
	cr_expect_eq(rc, 1, "probe without BPF capabilities should fail, exit %d", rc);
}

/* The agent itself runs under the unit's capabilities and no_new_privs:
 * it loads the monitor and a shield from its config, and stops cleanly on
 * SIGTERM (what systemctl stop sends). */
static int agent_pid;
static char agent_root[64];

/* Whatever happened, no agent and no shield of this test stays behind. */
static void agent_fini(void)
{
	if (agent_pid > 0)
		ks_runf(NULL, NULL, "kill -9 %d 2>/dev/null", agent_pid);
	if (agent_root[0])
		ks_runf(NULL, NULL, "%s --bpffs %s shield unload cve-2021-3156 >/dev/null 2>&1; "
			"rm -rf %s", ks_bin(), agent_root, agent_root);
	scratch_fini();
}

Test(install, t06_agent_runs_under_unit_capabilities, .timeout = 60, .fini = agent_fini)
{
	char caps[512], *dir = mktemp_dir("agent"), *root = agent_root, *out = NULL, *err = NULL;
	int rc, pid = 0, listed = 0;

	unit_caps(caps, sizeof(caps), NULL);
	snprintf(agent_root, sizeof(agent_root), "/sys/fs/bpf/ks-agenttest-%d", getpid());
	rc = ks_runf(NULL, &err,
		     "mkdir %s/sd && ln -s %s/cve-2021-3156.bpf.o %s/sd/ && "
		     "sed -e 's|^shields_dir = .*|shields_dir = %s/sd|' "
		     "-e 's|^store = .*|store = %s/events.db|' -e 's|^bpffs = .*|bpffs = %s|' "
		     "%s/packaging/kshield.conf > %s/kshield.conf",
		     dir, ks_shields_dir(), dir, dir, dir, root, src_root(), dir);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = ks_runf(&out, NULL, "setpriv --bounding-set=%s --inh-caps=-all --no-new-privs -- "
		     "%s agent --config %s/kshield.conf > %s/agent.log 2>&1 & echo $!",
		     caps, ks_bin(), dir, dir);
	cr_assert_eq(rc, 0);
	pid = agent_pid = atoi(out);
	free(out);
	cr_assert_gt(pid, 0);
	for (int i = 0; i < 100 && !listed; i++) {
		usleep(100000);
		ks_runf(&out, NULL, "%s --bpffs %s -j shield list", ks_bin(), root);
		listed = strstr(out, "\"cve-2021-3156\"") != NULL;
		free(out);
	}
	rc = ks_runf(NULL, NULL, "kill -TERM %d; for i in $(seq 50); do kill -0 %d 2>/dev/null "
		     "|| exit 0; sleep 0.1; done; exit 1", pid, pid);
	char log[PATH_MAX];

	snprintf(log, sizeof(log), "%s/agent.log", dir);
	out = ks_read_file(log);
	cr_expect(listed, "agent did not load the shield: %s", out);
	cr_expect_eq(rc, 0, "agent did not stop on SIGTERM: %s", out);
	free(out);
}

/* Every library kshield links (-lX in the Makefile's LDLIBS) has its -dev
 * package in debian/control's Build-Depends, so the source package builds
 * on a machine that has only what it declares. */
Test(install, t07_build_depends_follow_ldlibs)
{
	char *out, *err, *control, path[PATH_MAX];
	int rc = ks_runf(&out, &err,
		"cd '%s' && for l in $(make -pnq 2>/dev/null | sed -n 's/^LDLIBS := //p' | head -1); do "
		"  n=${l#-l}; case $n in m|pthread|dl|c|rt) continue;; esac; "
		"  so=$(ls /usr/lib/*-linux-gnu/lib$n.so /usr/lib/lib$n.so 2>/dev/null | head -1); "
		"  [ -n \"$so\" ] || { echo \"?$n\"; continue; }; "
		"  dpkg -S \"$so\" | head -1 | cut -d: -f1; "
		"done", src_root());

	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_not_null(strstr(out, "libbpf-dev"), "no libraries found in LDLIBS: %s", out);
	snprintf(path, sizeof(path), "%s/debian/control", src_root());
	control = ks_read_file(path);
	cr_assert_not_null(control);
	for (char *save, *pkg = strtok_r(out, "\n", &save); pkg; pkg = strtok_r(NULL, "\n", &save)) {
		char want[128];

		cr_expect_neq(pkg[0], '?', "no lib%s.so for -l%s in LDLIBS", pkg + 1, pkg + 1);
		snprintf(want, sizeof(want), " %s,", pkg);
		cr_expect(strstr(control, want) || (snprintf(want, sizeof(want), " %s\n", pkg),
						    strstr(control, want)),
			  "debian/control Build-Depends lacks %s (linked by LDLIBS)", pkg);
	}
	free(control);
	free(out);
	free(err);
}
