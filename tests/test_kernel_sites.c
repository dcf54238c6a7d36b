// SPDX-License-Identifier: MIT
/* test_kernel_sites.c - kernel shields on inlined functions, the parts a
 * host without kprobes and without a -dbg package can prove: sites
 * resolved from a non-PIE ELF treated as vmlinux (symbol+offset, never
 * addresses), exported as a manifest and read back; a manifest of another
 * build refused in one line; malformed manifests refused; the loader and
 * `sites trace` refusing kprobes where the kernel has none; `debuginfo
 * kernel` saying whether kprobes and a manifest are there. The running
 * kernel's build ID is replaced by a notes file of our own
 * (KSHIELD_KERNEL_NOTES), so a manifest can "match" it. The guests of
 * `make matrix-dbg` prove the rest on real kernels.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include "array.h"
#include "harness.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ks-ksites-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
	if (dir[0])
		ks_runf(NULL, NULL, "rm -rf %s", dir);
}

TestSuite(kernel_sites, .init = setup, .fini = teardown, .timeout = 120);

static bool host_has_kprobes(void)
{
	return !access("/sys/bus/event_source/devices/kprobe", F_OK) ||
	       !access("/sys/kernel/tracing/kprobe_events", F_OK) ||
	       !access("/sys/kernel/debug/tracing/kprobe_events", F_OK);
}

/* dir/notes: one GNU build-ID note carrying @hex, as /sys/kernel/notes. */
static void fake_notes(const char *hex)
{
	unsigned char buf[256];
	unsigned int hdr[3] = { 4, (unsigned int)strlen(hex) / 2, 3 };
	char path[128];
	size_t i, n = 0;
	FILE *f;

	memcpy(buf, hdr, 12);
	memcpy(buf + 12, "GNU", 4);
	n = 16;
	for (i = 0; i < hdr[1]; i++)
		sscanf(hex + 2 * i, "%2hhx", &buf[n++]);
	while (n % 4)
		buf[n++] = 0;
	snprintf(path, sizeof(path), "%s/notes", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
}

static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

#define ID_A "00112233445566778899aabbccddeeff00112233"
#define ID_B "ffeeddccbbaa99887766554433221100ffeeddcc"

/* A hand-written manifest of build @id: f inlined in g (probeable, filename
 * in rsi) and f out of line in an __init section (refused, with a reason). */
static void manifest(const char *name, const char *id)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\"kshield_sites\": 1, \"build_id\": \"%s\", \"release\": \"6.1.0-test\","
		 " \"arch\": \"x86_64\", \"vmlinux\": \"/nowhere\", \"functions\": ["
		 " {\"function\": \"other\", \"sites\": []},"
		 " {\"function\": \"f\", \"sites\": ["
		 "  {\"id\": 0, \"addr\": \"0xffffffff81001010\", \"kind\": \"inlined\","
		 "   \"caller\": \"g\", \"symbol\": \"g\", \"symbol_offset\": 16,"
		 "   \"call_file\": \"g.c\", \"call_line\": 7, \"probeable\": true, \"covered\": false,"
		 "   \"args\": [{\"name\": \"name\", \"loc\": \"rsi\", \"kind\": 1, \"reg\": 13,"
		 "               \"value\": 0, \"size\": 8}]},"
		 "  {\"id\": 1, \"addr\": \"0xffffffff83000000\", \"kind\": \"outline\","
		 "   \"caller\": \"f\", \"symbol\": \"f\", \"symbol_offset\": 0, \"probeable\": false,"
		 "   \"why\": \"in .init.text: __init/__exit code\", \"args\": []}]}]}\n", id);
	write_file(name, text);
}

static json_object *run(const char *args, int *rc, char **err)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "KSHIELD_KERNEL_NOTES=%s/notes KSHIELD_SITES_DIR=%s/sites %s -j %s",
		 dir, dir, ks_bin(), args);
	return ks_run_json(cmd, rc, err);
}

/* The error of a failed command: one line of JSON on stderr. */
static const char *error_of(const char *err)
{
	static char msg[1024];
	json_object *o = ks_json_parse(err);

	cr_assert_not_null(o, "stderr is not one JSON error: %s", err);
	snprintf(msg, sizeof(msg), "%s", json_object_get_string(ks_json_get(o, "error")));
	json_object_put(o);
	return msg;
}

Test(kernel_sites, manifest_of_this_build_read)
{
	char args[256];
	json_object *o, *s0, *s1;
	int rc;

	fake_notes(ID_A);
	manifest("m.json", ID_A);
	snprintf(args, sizeof(args), "sites list kernel:f --manifest %s/m.json", dir);
	o = run(args, &rc, NULL);
	cr_assert_eq(rc, 0);
	cr_assert_not_null(o);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "build_id")), ID_A);
	cr_expect_str_eq(json_object_get_string(ks_json_get(o, "release")), "6.1.0-test");
	cr_assert_eq(json_object_array_length(ks_json_get(o, "sites")), 2);
	s0 = json_object_array_get_idx(ks_json_get(o, "sites"), 0);
	s1 = json_object_array_get_idx(ks_json_get(o, "sites"), 1);
	cr_expect_str_eq(json_object_get_string(ks_json_get(s0, "symbol")), "g");
	cr_expect_str_eq(json_object_get_string(ks_json_get(s0, "symbol_offset")), "0x10");
	cr_expect_str_eq(json_object_get_string(ks_json_get(s0, "call")), "g.c:7");
	cr_expect(json_object_get_boolean(ks_json_get(s0, "probeable")));
	cr_expect_str_eq(json_object_get_string(
		ks_json_get(json_object_array_get_idx(ks_json_get(s0, "args"), 0), "loc")), "rsi");
	cr_expect_not(json_object_get_boolean(ks_json_get(s1, "probeable")));
	cr_expect_not_null(strstr(json_object_get_string(ks_json_get(s1, "why")), ".init.text"));
	json_object_put(o);

	/* Found by build ID in the sites directory, without --manifest. */
	ks_runf(NULL, NULL, "mkdir -p %s/sites && cp %s/m.json %s/sites/%s.json", dir, dir, dir, ID_A);
	o = run("sites list kernel:f", &rc, NULL);
	cr_assert_eq(rc, 0);
	cr_expect_eq(json_object_array_length(ks_json_get(o, "sites")), 2);
	json_object_put(o);
}

Test(kernel_sites, manifest_of_another_build_refused)
{
	char args[256], *err;
	const char *msg;
	json_object *o;
	int rc;

	fake_notes(ID_A);
	manifest("m.json", ID_B);
	snprintf(args, sizeof(args), "sites list kernel:f --manifest %s/m.json", dir);
	o = run(args, &rc, &err);
	cr_expect_null(o);
	cr_expect_neq(rc, 0);
	msg = error_of(err);
	cr_expect_not_null(strstr(msg, ID_B), "%s", msg);
	cr_expect_not_null(strstr(msg, ID_A), "%s", msg);
	cr_expect_not_null(strstr(msg, "refusing"), "%s", msg);
	cr_expect_eq(strchr(err, '\n'), err + strlen(err) - 1, "not one line: %s", err);
	free(err);

	/* The same file shipped under this build's name is refused too. */
	ks_runf(NULL, NULL, "mkdir -p %s/sites && cp %s/m.json %s/sites/%s.json", dir, dir, dir, ID_A);
	o = run("sites list kernel:f", &rc, &err);
	cr_expect_neq(rc, 0);
	cr_expect_not_null(strstr(error_of(err), "refusing"), "%s", err);
	free(err);
	json_object_put(o);
}

Test(kernel_sites, no_manifest_says_how_to_make_one)
{
	char *err;
	const char *msg;
	int rc;

	fake_notes(ID_A);
	ks_runf(NULL, NULL, "mkdir -p %s/sites", dir);
	manifest("sites/" ID_B ".json", ID_B);
	cr_expect_null(run("sites list kernel:f", &rc, &err));
	cr_expect_neq(rc, 0);
	msg = error_of(err);
	cr_expect_not_null(strstr(msg, "kshield sites export kernel:f --vmlinux"), "%s", msg);
	cr_expect_not_null(strstr(msg, ID_B), "other builds' manifests are named: %s", msg);
	free(err);
}

Test(kernel_sites, malformed_manifests_refused)
{
	static const char *bad[] = {
		"not json",
		"{\"kshield_sites\": 2, \"build_id\": \"" ID_A "\", \"functions\": []}",
		/* a probeable site without a symbol to hang the kprobe on */
		"{\"kshield_sites\": 1, \"build_id\": \"" ID_A "\", \"functions\": [{\"function\":"
		" \"f\", \"sites\": [{\"addr\": \"0x1\", \"kind\": \"inlined\", \"symbol\": \"\","
		" \"probeable\": true}]}]}",
		/* an absolute address argument: KASLR moves it */
		"{\"kshield_sites\": 1, \"build_id\": \"" ID_A "\", \"functions\": [{\"function\":"
		" \"f\", \"sites\": [{\"addr\": \"0x1\", \"kind\": \"inlined\", \"symbol\": \"g\","
		" \"probeable\": true, \"args\": [{\"kind\": 4, \"value\": 1}]}]}]}",
	};
	char args[256], *err;
	size_t i;
	int rc;

	fake_notes(ID_A);
	snprintf(args, sizeof(args), "sites list kernel:f --manifest %s/bad.json", dir);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		write_file("bad.json", bad[i]);
		cr_expect_null(run(args, &rc, &err), "manifest %zu accepted", i);
		cr_expect_neq(rc, 0, "manifest %zu accepted", i);
		error_of(err);
		free(err);
	}
}

/* The kernel resolver on an ordinary non-PIE binary (what a vmlinux is to
 * it): every copy as symbol+offset, exported and read back unchanged. */
Test(kernel_sites, resolve_export_and_read_back)
{
	char args[512], id[128], *out, *err;
	json_object *a, *b, *sa, *sb;
	size_t i, n;
	int rc;

	rc = ks_runf(NULL, &err, "cd tests/fixtures/inline && gcc -O2 -g -fno-pie -no-pie "
		     "-Wl,--build-id target.c paths.c -o %s/vmlinux", dir);
	cr_assert_eq(rc, 0, "building the fixture: %s", err);
	free(err);
	snprintf(args, sizeof(args), "sites export kernel:ks_check --vmlinux %s/vmlinux -o %s/m.json",
		 dir, dir);
	cr_assert_null(run(args, &rc, &err));
	cr_assert_eq(rc, 0, "export: %s", err);
	free(err);
	ks_runf(&out, NULL, "jq -r .build_id %s/m.json", dir);
	snprintf(id, sizeof(id), "%.*s", (int)strcspn(out, "\n"), out);
	free(out);
	cr_assert(strlen(id) >= 32, "manifest build ID '%s'", id);
	fake_notes(id);

	snprintf(args, sizeof(args), "sites list kernel:ks_check --vmlinux %s/vmlinux", dir);
	a = run(args, &rc, NULL);
	cr_assert_eq(rc, 0);
	snprintf(args, sizeof(args), "sites list kernel:ks_check --manifest %s/m.json", dir);
	b = run(args, &rc, &err);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	n = json_object_array_length(ks_json_get(a, "sites"));
	cr_assert_geq(n, 5, "ks_check has 5 copies (4 inlined, 1 out of line), got %zu", n);
	cr_assert_eq(json_object_array_length(ks_json_get(b, "sites")), n);
	for (i = 0; i < n; i++) {
		static const char *keys[] = { "addr", "kind", "caller", "symbol", "symbol_offset",
					      "probeable" };
		size_t k;

		sa = json_object_array_get_idx(ks_json_get(a, "sites"), i);
		sb = json_object_array_get_idx(ks_json_get(b, "sites"), i);
		for (k = 0; k < ARRAY_SIZE(keys); k++)
			cr_expect_str_eq(json_object_get_string(ks_json_get(sb, keys[k])),
					 json_object_get_string(ks_json_get(sa, keys[k])),
					 "site %zu %s", i, keys[k]);
		/* symbol+offset, never a bare address */
		cr_expect(strlen(json_object_get_string(ks_json_get(sa, "symbol"))) > 0);
	}
	json_object_put(a);
	json_object_put(b);
}

/* A kprobe shield on this host: refused in one line when the kernel has no
 * kprobes (the development machines); where it has them, refused because
 * nothing describes this kernel's sites. Never loaded without its probes. */
Test(kernel_sites, kprobe_shield_refused_here)
{
	char args[512], *err;
	const char *fx = getenv("KSHIELD_FIXTURES"), *msg;
	int rc;

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	fake_notes(ID_A);
	snprintf(args, sizeof(args), "--bpffs /sys/fs/bpf/ks-ksites-test-%d shield load "
		 "%s/kernel-sites.bpf.o", getpid(), fx);
	cr_expect_null(run(args, &rc, &err));
	cr_expect_neq(rc, 0, "the kprobe shield loaded on a host where it cannot work");
	msg = error_of(err);
	if (!host_has_kprobes())
		cr_expect_not_null(strstr(msg, "no kprobes on this kernel (CONFIG_KPROBES off)"),
				   "%s", msg);
	else
		cr_expect_not_null(strstr(msg, "no sites for kernel"), "%s", msg);
	free(err);
	ks_runf(NULL, NULL, "rm -rf /sys/fs/bpf/ks-ksites-test-%d", getpid());

	if (!host_has_kprobes()) {
		manifest("m.json", ID_A);
		snprintf(args, sizeof(args), "sites trace kernel:f --manifest %s/m.json -- true", dir);
		cr_expect_null(run(args, &rc, &err));
		cr_expect_neq(rc, 0);
		cr_expect_not_null(strstr(error_of(err), "CONFIG_KPROBES off"), "%s", err);
		free(err);
	}
}

Test(kernel_sites, debuginfo_kernel_says_kprobes_and_manifest)
{
	json_object *o, *k;
	int rc;

	fake_notes(ID_A);
	o = run("debuginfo kernel", &rc, NULL);
	cr_assert_eq(rc, 0);
	k = json_object_array_get_idx(ks_json_get(o, "objects"), 0);
	cr_expect_str_eq(json_object_get_string(ks_json_get(k, "build_id")), ID_A);
	cr_expect_eq(json_object_get_boolean(ks_json_get(k, "kprobes")), host_has_kprobes());
	cr_expect_null(ks_json_get(k, "sites_manifest"));
	json_object_put(o);

	ks_runf(NULL, NULL, "mkdir -p %s/sites", dir);
	manifest("sites/" ID_A ".json", ID_A);
	o = run("debuginfo kernel", &rc, NULL);
	k = json_object_array_get_idx(ks_json_get(o, "objects"), 0);
	cr_expect_not_null(strstr(json_object_get_string(ks_json_get(k, "sites_manifest")) ?: "",
				  ID_A ".json"));
	json_object_put(o);
}

/* `kshield ARGS` in dir, with the fake notes; its exit code, stderr. */
static int sh_in_dir(const char *args, char **err)
{
	return ks_runf(NULL, err, "cd %s && KSHIELD_KERNEL_NOTES=%s/notes %s %s", dir, dir,
		       ks_bin(), args);
}

/* Manifests signed with the shield keys (own domain tag): under a signing
 * policy ($KSHIELD_SITES_KEYS here) a signed manifest is read; an altered,
 * unsigned, unknown-key or shield-tag-signed one is refused in one line
 * that says what to do. Without the policy an unsigned one is still read. */
Test(kernel_sites, signed_manifests_under_policy)
{
	char args[512], *err;
	const char *msg;
	json_object *o;
	int rc;

	fake_notes(ID_A);
	manifest("m.json", ID_A);
	cr_assert_eq(sh_in_dir("shield keygen k >/dev/null && mkdir keys && cp k.pub keys/",
			       NULL), 0);
	cr_assert_eq(sh_in_dir("shield keygen other >/dev/null", NULL), 0);
	cr_assert_eq(sh_in_dir("sites sign m.json --key k.key >/dev/null", &err), 0, "%s", err);
	free(err);
	cr_assert_eq(sh_in_dir("sites verify m.json --keys keys >/dev/null", &err), 0, "%s", err);
	free(err);

	snprintf(args, sizeof(args), "sites list kernel:f --manifest %s/m.json", dir);
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "KSHIELD_SITES_KEYS=%s/keys KSHIELD_KERNEL_NOTES=%s/notes "
			 "%s -j %s", dir, dir, ks_bin(), args);
		o = ks_run_json(cmd, &rc, &err);
		cr_assert_eq(rc, 0, "signed manifest refused: %s", err);
		cr_expect_eq(json_object_array_length(ks_json_get(o, "sites")), 2);
		json_object_put(o);
		free(err);

		/* One byte changed after signing: a forged offset. */
		ks_runf(NULL, NULL, "sed -i 's/\"symbol_offset\": 16/\"symbol_offset\": 17/' %s/m.json",
			dir);
		cr_expect_null(ks_run_json(cmd, &rc, &err));
		cr_expect_neq(rc, 0, "altered manifest read");
		msg = error_of(err);
		cr_expect_not_null(strstr(msg, "bad signature"), "%s", msg);
		cr_expect_not_null(strstr(msg, "re-export and sign it with a trusted key"), "%s", msg);
		cr_expect_eq(strchr(err, '\n'), err + strlen(err) - 1, "not one line: %s", err);
		free(err);

		/* Unsigned. */
		manifest("m.json", ID_A);
		ks_runf(NULL, NULL, "rm -f %s/m.json.sig", dir);
		cr_expect_null(ks_run_json(cmd, &rc, &err));
		cr_expect_neq(rc, 0, "unsigned manifest read under the policy");
		msg = error_of(err);
		cr_expect_not_null(strstr(msg, "unsigned"), "%s", msg);
		cr_expect_not_null(strstr(msg, "kshield sites sign"), "%s", msg);
		free(err);

		/* Signed by a key that is not trusted. */
		cr_assert_eq(sh_in_dir("sites sign m.json --key other.key >/dev/null", NULL), 0);
		cr_expect_null(ks_run_json(cmd, &rc, &err));
		cr_expect_neq(rc, 0, "manifest of an untrusted key read");
		cr_expect_not_null(strstr(error_of(err), "unknown key"), "%s", err);
		free(err);

		/* A shield signature over the same bytes does not pass for a
		 * manifest signature (domain separation). */
		cr_assert_eq(sh_in_dir("shield sign m.json --key k.key >/dev/null", NULL), 0);
		cr_expect_null(ks_run_json(cmd, &rc, &err));
		cr_expect_neq(rc, 0, "a shield-object signature verified a manifest");
		cr_expect_not_null(strstr(error_of(err), "bad signature"), "%s", err);
		free(err);
	}
	/* No policy: the build-ID check alone, as before. */
	o = run(args, &rc, NULL);
	cr_expect_eq(rc, 0);
	json_object_put(o);
}

/* export --key writes FILE and FILE.sig in one step. */
Test(kernel_sites, export_signed)
{
	char args[512], *err;
	int rc;

	rc = ks_runf(NULL, &err, "cd tests/fixtures/inline && gcc -O2 -g -fno-pie -no-pie "
		     "-Wl,--build-id target.c paths.c -o %s/vmlinux", dir);
	cr_assert_eq(rc, 0, "building the fixture: %s", err);
	free(err);
	cr_assert_eq(sh_in_dir("shield keygen k >/dev/null && mkdir keys && cp k.pub keys/", NULL), 0);
	cr_expect_neq(sh_in_dir("sites export kernel:ks_check --vmlinux vmlinux --key k.key "
				">/dev/null 2>&1", NULL), 0, "--key without -o accepted");
	snprintf(args, sizeof(args), "sites export kernel:ks_check --vmlinux vmlinux -o m.json "
		 "--key k.key");
	cr_assert_eq(sh_in_dir(args, &err), 0, "%s", err);
	free(err);
	cr_expect_eq(sh_in_dir("sites verify m.json --keys keys >/dev/null", &err), 0, "%s", err);
	free(err);
	cr_expect_neq(sh_in_dir("sites sign vmlinux --key k.key >/dev/null 2>&1", NULL), 0,
		      "signed a file that is not a manifest");
}

/* The agent's config: sites_dir is where its shields' manifests come from
 * (over $KSHIELD_SITES_DIR), keys_dir makes signatures required; `agent
 * --check` says when a kernel:FUNCTION shield's manifest will be refused. */
Test(kernel_sites, agent_config_sites_dir_and_keys)
{
	char conf[2048], cmd[1024], *out, *err;
	const char *fx = getenv("KSHIELD_FIXTURES");
	json_object *o, *w;
	int rc;

	cr_assert(fx, "KSHIELD_FIXTURES not set (run through make test-host)");
	fake_notes(ID_A);
	ks_runf(NULL, NULL, "mkdir -p %s/shields %s/conf-sites && cp %s/kernel-sites.bpf.o %s/shields/",
		dir, dir, fx, dir);
	cr_assert_eq(sh_in_dir("shield keygen k >/dev/null && mkdir keys && cp k.pub keys/", NULL), 0);
	/* keys_dir makes shields.d objects need signatures too (issue 15) */
	cr_assert_eq(sh_in_dir("shield sign shields/kernel-sites.bpf.o --key k.key >/dev/null",
			       NULL), 0);
	manifest("conf-sites/" ID_A ".json", ID_A);
	ks_runf(NULL, NULL, "sed -i 's/\"function\": \"f\"/\"function\": \"do_sys_open\"/' "
		"%s/conf-sites/%s.json", dir, ID_A);
	snprintf(conf, sizeof(conf), "shields_dir = %s/shields\nstore = %s/ev.db\n"
		 "sites_dir = %s/conf-sites\nkeys_dir = %s/keys\n", dir, dir, dir, dir);
	write_file("k.conf", conf);
	/* $KSHIELD_SITES_DIR (run()'s, empty) must lose to the config. */
	snprintf(cmd, sizeof(cmd), "KSHIELD_SITES_DIR=%s/sites KSHIELD_KERNEL_NOTES=%s/notes "
		 "%s -j agent --config %s/k.conf --check", dir, dir, ks_bin(), dir);

	o = ks_run_json(cmd, &rc, &err);
	cr_assert_not_null(o, "%s", err);
	free(err);
	w = ks_json_get(o, "warnings");
	cr_assert_eq(json_object_array_length(w), 1, "%s", json_object_get_string(o));
	cr_expect_not_null(strstr(json_object_get_string(json_object_array_get_idx(w, 0)),
				  "unsigned"), "%s", json_object_get_string(o));
	json_object_put(o);

	snprintf(conf, sizeof(conf), "sites sign conf-sites/%s.json --key k.key >/dev/null", ID_A);
	cr_assert_eq(sh_in_dir(conf, NULL), 0);
	o = ks_run_json(cmd, &rc, &err);
	cr_assert_not_null(o, "%s", err);
	cr_expect_eq(rc, 0);
	cr_expect_eq(json_object_array_length(ks_json_get(o, "warnings")), 0,
		     "signed manifest in sites_dir not accepted: %s", json_object_get_string(o));
	json_object_put(o);
	free(err);

	/* An unknown config key is still an error; ours are known. */
	ks_runf(&out, NULL, "grep -c '^sites_dir\\|^# keys_dir' packaging/kshield.conf");
	cr_expect_eq(atoi(out), 2, "packaging/kshield.conf documents sites_dir and keys_dir");
	free(out);
}
