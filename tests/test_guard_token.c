// SPDX-License-Identifier: MIT
/* test_guard_token.c - issue 28 part 1 on this host: with the guard loaded
 * and on (here its recording tp variant: the kernel refuses nothing), every
 * weakening the kshield binary can do still needs a token, because the gate
 * (ks_weaken_allow) is user space: `guard off`, `guard unload`, `shield
 * unload`, `shield mode audit`, a replacing `shield load`, also through a
 * root whose shields/ is a symlink into the real one. Tokens are checked
 * against the keys the guard recorded when it loaded, not keys_dir as it
 * is now: a key added afterwards signs nothing. Each refusal is one line
 * saying what to do, and a tamper event (op config) in the guard's ring
 * buffer, counted by `guard status`. The kernel's refusals are the guest's
 * to prove (`kshield guard selftest`, matrix/init). */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include "array.h"
#include "harness.h"

#define SHIELD KS_SOCKOPT_SHIELD

static char root[128], dir[128], obj[512];

static void setup(void)
{
	snprintf(root, sizeof(root), "/sys/fs/bpf/ks-test-gt-%d", getpid());
	snprintf(dir, sizeof(dir), "/tmp/ks-test-gt-%d", getpid());
	snprintf(obj, sizeof(obj), "%s/" KS_SOCKOPT_OBJ, ks_fixtures_dir());
	ks_runf(NULL, NULL, "rm -rf %s %s; mkdir -p %s/keys %s/alt", root, dir, dir, dir);
	setenv("KSHIELD_BPFFS", root, 1);
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield keygen %s/k >/dev/null && cp %s/k.pub %s/keys/ &&"
			     " %s shield keygen %s/k2 >/dev/null", ks_bin(), dir, dir, dir, ks_bin(),
			     dir), 0, "keygen");
	cr_assert_eq(ks_runf(NULL, NULL, "%s shield load %s >/dev/null", ks_bin(), obj), 0,
		     "loading %s", obj);
}

static void teardown(void)
{
	/* the tp guard refuses nothing: rm takes the pins whatever happened */
	ks_runf(NULL, NULL, "%s shield unload %s --token %s/valid >/dev/null 2>&1; rm -rf %s %s",
		ks_bin(), SHIELD, dir, root, dir);
}

TestSuite(guard_token, .init = setup, .fini = teardown, .timeout = 120);

static void token(const char *name, const char *key, const char *more)
{
	cr_assert_eq(ks_runf(NULL, NULL, "%s guard token --key %s/%s.key --out %s/%s %s guard-off "
			     "audit:" SHIELD " unload:" SHIELD, ks_bin(), dir, key, dir, name, more),
		     0, "token %s", name);
}

static json_object *guard_status(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "%s -j guard status", ks_bin());
	return ks_run_json(cmd, NULL, NULL);
}

static bool guard_on(void)
{
	json_object *o = guard_status();
	bool on = o && json_object_get_boolean(ks_json_get(o, "enabled"));

	json_object_put(o);
	return on;
}

static long long refusals(void)
{
	json_object *o = guard_status();
	long long n = o ? json_object_get_int64(ks_json_get(o, "attempts.config")) : -1;

	json_object_put(o);
	return n;
}

static const char *mode_of(void)
{
	static char m[16];
	char *out = NULL;

	ks_runf(&out, NULL, "%s -j shield list | jq -r '.[] | select(.name == \"" SHIELD "\") "
		".mode'", ks_bin());
	snprintf(m, sizeof(m), "%.*s", out ? (int)strcspn(out, "\n") : 0, out ? out : "");
	free(out);
	return m;
}

static bool loaded(void)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/shields/" SHIELD, root);
	return !access(path, F_OK);
}

/* Every weakening, by each kind of bad token: refused, one line that says
 * what to do, recorded; nothing changed. */
Test(guard_token, t01_weakening_without_a_valid_token_is_refused)
{
	static const char *cmds[] = {
		"guard off", "guard unload", "shield unload " SHIELD, "shield mode " SHIELD " audit",
		"shield load %s/" KS_SOCKOPT_OBJ " --audit",
	};
	static const struct { const char *file, *what; } bad[] = {
		{ "none", "no token" }, { "expired", "expired" }, { "other", "another host's" },
		{ "foreign", "signed by a key added to keys_dir after the guard loaded" },
	};
	char cmd[1024], *err = NULL;
	long long r0;
	int tries = 0;

	cr_assert_eq(ks_runf(NULL, NULL, "%s guard load --keys %s/keys >/dev/null", ks_bin(), dir), 0);
	cr_assert(guard_on(), "the guard is not on");
	/* keys_dir as it is now is no source of trust */
	cr_assert_eq(ks_runf(NULL, NULL, "cp %s/k2.pub %s/keys/", dir, dir), 0);
	token("expired", "k", "--expires 0s");
	token("other", "k", "--host some-other-host");
	token("foreign", "k2", "");
	r0 = refusals();
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		for (size_t c = 0; c < ARRAY_SIZE(cmds); c++) {
			char args[512];

			snprintf(args, sizeof(args), cmds[c], ks_fixtures_dir());
			snprintf(cmd, sizeof(cmd), "%s %s --token %s/%s", ks_bin(), args, dir,
				 bad[b].file);
			free(err);
			err = NULL;
			cr_expect_neq(ks_run(cmd, NULL, &err), 0, "%s with %s token succeeded", args,
				      bad[b].what);
			cr_expect(err && strchr(err, '\n') == err + strlen(err) - 1,
				  "%s: not one line:\n%s", args, err);
			cr_expect(err && strstr(err, "refused") && strstr(err, "kshield guard token") &&
				  strstr(err, "systemctl disable kshield") && strstr(err, "reboot"),
				  "%s: %s", args, err);
			tries++;
		}
	}
	cr_expect(strstr(err, "signed by unknown key"), "%s", err);
	free(err);
	cr_expect(guard_on(), "the guard went off");
	cr_expect(loaded(), "the shield was unloaded");
	cr_expect_str_eq(mode_of(), "enforce");
	cr_expect_eq(refusals() - r0, tries, "refusals recorded as tamper events");
}

/* A root whose shields/ and guard/ are symlinks into the real root: the
 * gate finds the real guard. */
Test(guard_token, t02_a_symlinked_root_is_the_real_one)
{
	char *err = NULL;

	cr_assert_eq(ks_runf(NULL, NULL, "%s guard load --keys %s/keys >/dev/null", ks_bin(), dir), 0);
	cr_assert_eq(ks_runf(NULL, NULL, "ln -s %s/shields %s/alt/shields", root, dir), 0);
	cr_expect_neq(ks_runf(NULL, &err, "%s --bpffs %s/alt shield unload " SHIELD
			      " --token /nonexistent", ks_bin(), dir), 0, "unloaded through a symlink");
	cr_expect(err && strstr(err, "refused"), "%s", err);
	cr_expect(loaded());
	free(err);
}

/* With a valid token each weakening works; a guard loaded with no keys
 * makes every token invalid, and says so. */
Test(guard_token, t03_a_valid_token_allows_exactly_that)
{
	char *err = NULL;

	cr_assert_eq(ks_runf(NULL, NULL, "%s guard load --keys %s/keys >/dev/null", ks_bin(), dir), 0);
	token("valid", "k", "");
	cr_expect_eq(ks_runf(NULL, &err, "%s shield mode " SHIELD " audit --token %s/valid",
			     ks_bin(), dir), 0, "%s", err);
	cr_expect_str_eq(mode_of(), "audit");
	free(err);
	cr_expect_eq(ks_runf(NULL, &err, "%s shield unload " SHIELD " --token %s/valid", ks_bin(),
			     dir), 0, "%s", err);
	cr_expect(!loaded(), "still loaded");
	free(err);
	cr_expect_eq(ks_runf(NULL, &err, "%s guard off --token %s/valid", ks_bin(), dir), 0, "%s",
		     err);
	cr_expect(!guard_on(), "still on");
	free(err);
	/* off: no token needed any more; on again, then unload with it */
	cr_expect_eq(ks_runf(NULL, NULL, "%s guard on >/dev/null", ks_bin()), 0);
	cr_expect_eq(ks_runf(NULL, &err, "%s guard unload --token %s/valid", ks_bin(), dir), 0,
		     "%s", err);
	free(err);

	/* a guard that recorded no keys: no token can be valid */
	cr_assert_eq(ks_runf(NULL, NULL, "%s guard load --keys '' >/dev/null", ks_bin()), 0);
	cr_expect_neq(ks_runf(NULL, &err, "%s guard off --token %s/valid", ks_bin(), dir), 0);
	cr_expect(err && strstr(err, "no shield keys were configured"), "%s", err);
	free(err);
}
