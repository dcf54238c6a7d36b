#define _GNU_SOURCE	/* asprintf */
/* weaken.c - signed tokens for weakening changes while the guard is on
 * (see weaken.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "guard.h"
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

int ks_weaken_check(const struct ks_config *cfg, const char *action)
{
	char keyid[KS_KEYID_LEN], *text = NULL, *nl, why[300];
	struct ks_guard_state st;
	size_t len;
	int err;

	if (ks_guard_get(&st) || !st.loaded || !st.enabled)
		return 0;
	if (!cfg->keys_dir[0])
		return ks_err(-EPERM, "the guard is on and keys_dir is not set: %s needs a token "
			      "signed by a shield key (docs/guard.md)", action);
	if (access(cfg->weaken_token, F_OK))
		return ks_err(-EPERM, "the guard is on: %s needs a signed token in %s "
			      "(`kshield guard token`, docs/guard.md)", action, cfg->weaken_token);
	err = ks_read_file(cfg->weaken_token, &text, &len);
	if (err)
		return err;
	nl = strchr(text, '\n');
	if (!nl) {
		free(text);
		return ks_err(-EINVAL, "%s: no signature line", cfg->weaken_token);
	}
	err = ks_sign_verify_kind(KS_SIGN_TOKEN, text, nl + 1 - text, nl + 1, cfg->keys_dir, keyid);
	if (err) {
		snprintf(why, sizeof(why), "%s", ks_errmsg());
		err = ks_err(err, "%s: %s", cfg->weaken_token, why);
	} else {
		*nl = '\0';
		err = check_statement(cfg->weaken_token, text, action);
	}
	free(text);
	return err;
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
