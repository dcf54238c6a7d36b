// SPDX-License-Identifier: MIT
/* attacks_token.c - the guard selftest once the agent is gone (attacks.h):
 * its slot is free, and every weakening the kshield binary can do (guard
 * off and unload, shield mode audit and unload) needs a token signed by a
 * key the guard recorded at load: run as this binary, with no token, an
 * expired one, another host's and one of a key added later, each is
 * refused in one line and recorded; with a valid one each goes through.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "array.h"
#include "attacks.h"
#include "attacks_int.h"
#include "err.h"
#include "guard.h"
#include "pins.h"
#include "sign.h"
#include "weaken.h"
#include <kshield/shield.h>

/* Run this kshield binary with @args (a shell word list) under the same
 * root; its exit code, the first line it wrote to stderr in @line and the
 * number of lines in *@nlines. */
static int run_self(const char *args, char *line, size_t len, int *nlines)
{
	char exe[PATH_MAX], cmd[2 * PATH_MAX + 512], buf[2048];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t got;
	FILE *f;
	int status;

	line[0] = '\0';
	*nlines = 0;
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "'%s' --bpffs '%s' %s 2>&1 >/dev/null", exe, ks_bpffs_root, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	got = fread(buf, 1, sizeof(buf) - 1, f);
	buf[got] = '\0';
	status = pclose(f);
	for (char *p = buf; *p; p++)
		*nlines += *p == '\n';
	snprintf(line, len, "%.*s", (int)strcspn(buf, "\n"), buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static __u32 fake_mode(void)
{
	struct ks_shield_cfg cfg = { .mode = 99 };
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd;

	ks_pin_path(path, sizeof(path), KS_PIN_SHIELDS "/" FAKE_SHIELD "/" KS_PIN_CFG);
	fd = ks_pin_open_ro(path);
	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &zero, &cfg);
		close(fd);
	}
	return cfg.mode;
}

static bool guard_on(void)
{
	struct ks_guard_state st;

	return !ks_guard_get(&st) && st.enabled;
}

/* A token in @dir/@name signed with @key for @host, @expires from now. */
static int make_token(const char *dir, const char *name, const char *key, const char *host,
		      long long expires, const char *allow)
{
	char path[PATH_MAX], *text = NULL;
	int err = ks_weaken_token(key, host, (long long)time(NULL) + expires, allow, &text);
	FILE *f;

	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(text);
	return f ? 0 : -errno;
}

#define ALL_ACTIONS "guard-off,audit:" FAKE_SHIELD ",unload:" FAKE_SHIELD

/* No agent running (stopped as pid 1 would stop it): every weakening the
 * kshield binary can do needs a token signed by a key the guard recorded
 * at load; none, an expired one, another host's, or one signed by a key
 * added to keys_dir afterwards is refused, in one line, and recorded. */
static void token_checks(struct ks_guard_attacks *t, const char *tmp)
{
	static const struct { const char *args, *what; } cmds[] = {
		{ "guard off", "guard off" },
		{ "shield mode " FAKE_SHIELD " audit", "shield mode audit" },
		{ "shield unload " FAKE_SHIELD, "shield unload" },
		{ "guard unload", "guard unload" },
	};
	static const struct { const char *file, *what; } bad[] = {
		{ "none", "no token" }, { "expired", "expired token" },
		{ "other", "other host's token" }, { "foreign", "token of a key added later" },
	};
	char host[256] = "", other[300], key[PATH_MAX], key2[PATH_MAX];
	char args[PATH_MAX + 128], line[512], kid[KS_KEYID_LEN], pub[PATH_MAX], to[PATH_MAX + 16];
	int rc, n, refused = 0, tries = 0;
	bool one_line = true, advice = true;

	gethostname(host, sizeof(host) - 1);
	snprintf(other, sizeof(other), "not-%s", host);
	snprintf(key, sizeof(key), "%s/k.key", tmp);
	/* a second key, put into keys_dir after the guard loaded */
	snprintf(key2, sizeof(key2), "%s/k2", tmp);
	if (ks_sign_keygen(key2, kid)) {
		ks_attacks_check(t, "token setup", false, "%s", ks_errmsg());
		return;
	}
	snprintf(pub, sizeof(pub), "%s/k2.pub", tmp);
	snprintf(to, sizeof(to), "%s/keys/k2.pub", tmp);
	rename(pub, to);
	snprintf(key2, sizeof(key2), "%s/k2.key", tmp);
	if (make_token(tmp, "expired", key, host, -1, ALL_ACTIONS) ||
	    make_token(tmp, "other", key, other, 3600, ALL_ACTIONS) ||
	    make_token(tmp, "foreign", key2, host, 3600, ALL_ACTIONS) ||
	    make_token(tmp, "valid", key, host, 3600, ALL_ACTIONS)) {
		ks_attacks_check(t, "token setup", false, "%s", ks_errmsg());
		return;
	}
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		for (size_t c = 0; c < ARRAY_SIZE(cmds); c++) {
			snprintf(args, sizeof(args), "%s --token %s/%s", cmds[c].args, tmp, bad[b].file);
			rc = run_self(args, line, sizeof(line), &n);
			tries++;
			refused += rc != 0;
			one_line &= n == 1;
			advice &= strstr(line, "refused") && strstr(line, "systemctl disable kshield");
			if (rc == 0)
				ks_attacks_check(t, "weakening without a valid token refused", false, "%s with %s "
						 "succeeded", cmds[c].what, bad[b].what);
		}
	}
	ks_attacks_check(t, "weakening without a valid token refused", refused == tries && guard_on() &&
			 fake_mode() == KS_MODE_ENFORCE, "%d of %d refused; guard %s, shield %s", refused,
			 tries, guard_on() ? "on" : "OFF", fake_mode() == KS_MODE_ENFORCE ? "enforcing" :
			 "WEAKENED");
	ks_attacks_check(t, "refusal: one line, what to do", one_line && advice, "%.150s", line);

	/* the same commands with a valid token */
	snprintf(args, sizeof(args), "shield mode " FAKE_SHIELD " audit --token %s/valid", tmp);
	rc = run_self(args, line, sizeof(line), &n);
	ks_attacks_check(t, "shield mode audit with a token", !rc && fake_mode() == KS_MODE_AUDIT,
			 "%.150s", rc ? line : "audit");
	snprintf(args, sizeof(args), "shield unload " FAKE_SHIELD " --token %s/valid", tmp);
	rc = run_self(args, line, sizeof(line), &n);
	ks_pin_path(to, sizeof(to), KS_PIN_SHIELDS "/" FAKE_SHIELD);
	ks_attacks_check(t, "shield unload with a token", !rc && access(to, F_OK), "%.150s",
			 rc ? line : "unloaded");
	snprintf(args, sizeof(args), "guard off --token %s/valid", tmp);
	rc = run_self(args, line, sizeof(line), &n);
	ks_attacks_check(t, "guard off with a token", !rc && !guard_on(), "%.150s", rc ? line : "off");
}

/* No agent running: its slot is free, other binaries are still refused,
 * the kshield binary needs a token to weaken anything (token_checks),
 * then pins go and the guard unloads. */
void ks_attacks_no_agent(struct ks_guard_attacks *t, const char *tmp)
{
	struct ks_guard_state st;
	char path[PATH_MAX];
	int rc;

	rc = ks_guard_get(&st);
	ks_attacks_check(t, "agent exit frees its slot", !rc && st.agent_tgid == 0, "agent pid %u",
			 st.agent_tgid);
	ks_attacks_check(t, "token keys recorded at load", !rc && st.nkeys == 1, "%d key(s)", st.nkeys);
	if (t->lsm) {
		ks_pin_path(path, sizeof(path), "%s", "selftest/decoy");
		rc = ks_attacks_rm_as_other(path);
		ks_attacks_check(t, "other binaries refused while no agent runs", rc != 0 && !access(path, F_OK),
				 "rm exited %d, decoy %s", rc, access(path, F_OK) ? "removed" : "still pinned");
	}
	token_checks(t, tmp);
	t->refusals = 0;
	ks_attacks_drain(t);
	ks_attacks_check(t, "token refusals recorded", t->refusals >= 16, "%d event(s)", t->refusals);
	if (t->lsm) {
		ks_pin_path(path, sizeof(path), "%s", "selftest/decoy");
		rc = ks_attacks_rm_as_other(path);
		ks_attacks_check(t, "guard off: pins removable", access(path, F_OK) != 0,
				 "rm exited %d", rc);
	}
	rc = ks_guard_unload();
	ks_attacks_check(t, "guard unload", !rc, "%s", rc ? ks_errmsg() : "unloaded");
}
