// SPDX-License-Identifier: MIT
#define _GNU_SOURCE	/* asprintf */
/* weaken.c - signed tokens for weakening changes while the guard is on
 * (see weaken.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "guard.h"
#include "pins.h"
#include "sign.h"
#include "weaken.h"

#define TOKEN_MAGIC "kshield-weaken-v1 "

static bool allowed(const char *list, const char *action)
{
	size_t n = strlen(action);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, action, n) && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
	return false;
}

/* Check the statement line @stmt (without its newline). */
static int check_statement(const char *path, char *stmt, const char *action)
{
	char host[256] = "", *h = NULL, *allow = NULL, *save;
	long long expires = 0;

	if (strncmp(stmt, TOKEN_MAGIC, strlen(TOKEN_MAGIC)))
		return ks_err(-EINVAL, "%s: not a kshield weakening token", path);
	for (char *f = strtok_r(stmt + strlen(TOKEN_MAGIC), " ", &save); f;
	     f = strtok_r(NULL, " ", &save)) {
		if (!strncmp(f, "host=", 5))
			h = f + 5;
		else if (!strncmp(f, "expires=", 8))
			expires = atoll(f + 8);
		else if (!strncmp(f, "allow=", 6))
			allow = f + 6;
	}
	gethostname(host, sizeof(host) - 1);
	if (!h || (strcmp(h, "*") && strcmp(h, host)))
		return ks_err(-EPERM, "%s is for host %s, this is %s", path, h ? h : "(none)", host);
	if (expires <= time(NULL))
		return ks_err(-EPERM, "%s expired", path);
	if (!allow || !allowed(allow, action))
		return ks_err(-EPERM, "%s does not allow %s (it allows %s)", path, action,
			      allow ? allow : "nothing");
	return 0;
}

/* Where @action acts: what decides which guard protects it. */
static void action_target(const char *action, char *buf, size_t len)
{
	const char *colon = strchr(action, ':');

	if (colon)
		ks_pin_path(buf, len, "%s/%s", KS_PIN_SHIELDS, colon + 1);
	else
		ks_pin_path(buf, len, "%s", KS_PIN_GUARD);
}

/* Is @token_path a valid token for @action under the keys the guard in
 * @gdir pinned? 0, or an error with the reason (no advice) recorded. */
static int verify(const char *gdir, const char *token_path, const char *action)
{
	unsigned char pks[KS_GUARD_KEYS_MAX][KS_PUBKEY_LEN];
	char keyid[KS_KEYID_LEN], *text = NULL, *nl, why[300];
	size_t len;
	int n, err;

	n = ks_guard_keys_at(gdir, pks, KS_GUARD_KEYS_MAX);
	if (n < 0)
		return ks_err(-EPERM, "this guard was loaded by an older kshield that recorded no "
			      "token keys, so no token can be valid");
	if (n == 0)
		return ks_err(-EPERM, "no shield keys were configured (keys_dir) when the guard "
			      "loaded, so no token can be valid");
	if (!token_path || !*token_path || access(token_path, F_OK))
		return ks_err(-EPERM, "there is no token at %s", token_path && *token_path ?
			      token_path : "(none given)");
	err = ks_read_file(token_path, &text, &len);
	if (err)
		return err;
	nl = strchr(text, '\n');
	if (!nl) {
		free(text);
		return ks_err(-EINVAL, "%s: no signature line", token_path);
	}
	err = ks_sign_verify_pks(KS_SIGN_TOKEN, text, nl + 1 - text, nl + 1,
				 (const unsigned char (*)[KS_PUBKEY_LEN])pks, n, keyid);
	if (err) {
		snprintf(why, sizeof(why), "%s", ks_errmsg());
		err = ks_err(err, "%s: %s", token_path, why);
	} else {
		*nl = '\0';
		err = check_statement(token_path, text, action);
	}
	free(text);
	return err;
}

int ks_weaken_allow(const char *token_path, const char *action)
{
	char target[PATH_MAX], gdir[PATH_MAX], why[512];
	struct ks_guard_state st;
	int err;

	action_target(action, target, sizeof(target));
	if (ks_guard_find(target, gdir, sizeof(gdir)))
		return 0;
	/* A guard is there: what can't be read is refused, not allowed. */
	if ((err = ks_guard_get_at(gdir, &st)))
		return ks_err(-EPERM, "%s refused: can't read the guard at %s: %s", action, gdir,
			      strerror(-err));
	if (!st.enabled)
		return 0;
	err = verify(gdir, token_path, action);
	if (!err)
		return 0;
	snprintf(why, sizeof(why), "%s", ks_errmsg());
	/* The agent stores its own refusals (selfdefence.c); anyone else's
	 * go through the guard's ring buffer, agent running or not. */
	if (st.agent_tgid != (__u32)getpid())
		ks_guard_record_refusal(gdir, action);
	return ks_err(-EPERM, "%s refused: the guard is on and %s. " KS_WEAKEN_ADVICE,
		      action, why, action);
}

int ks_weaken_check(const struct ks_config *cfg, const char *action)
{
	return ks_weaken_allow(cfg->weaken_token, action);
}

int ks_weaken_token(const char *keyfile, const char *host, long long expires,
		    const char *allow, char **text)
{
	char sig[KS_SIG_TEXT_MAX], keyid[KS_KEYID_LEN], stmt[1024];
	int n, err;

	if (!allow || !*allow || strchr(allow, ' '))
		return ks_err(-EINVAL, "allow: a comma list like audit:NAME,unload:NAME,guard-off");
	n = snprintf(stmt, sizeof(stmt), TOKEN_MAGIC "host=%s expires=%lld allow=%s\n", host,
		     expires, allow);
	if (n >= (int)sizeof(stmt))
		return ks_err(-E2BIG, "token too long");
	err = ks_sign_buf_kind(KS_SIGN_TOKEN, stmt, n, keyfile, sig, keyid);
	if (err)
		return err;
	if (asprintf(text, "%s%s", stmt, sig) < 0)
		return ks_err(-ENOMEM, "out of memory");
	return 0;
}
