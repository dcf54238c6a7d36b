/* weaken.h - while the tamper guard is on, a change that weakens the
 * shields takes effect only with a token signed by one of keys_dir's keys:
 * an attacker with root can edit the config file and send SIGHUP (the
 * guard lets that through: it is the reload signal), but can't sign.
 *
 * Weakening actions: "audit:NAME" (an enforcing shield to audit mode),
 * "unload:NAME" (a shields_dir object removed), "guard-off" (guard = off).
 * A token is two lines, the second the signature of the first (domain
 * KS_SIGN_TOKEN):
 *
 *	kshield-weaken-v1 host=HOST|* expires=UNIX_SECONDS allow=ACTION[,ACTION...]
 *	ed25519 KEYID BASE64
 *
 * It names the host and expires, so it is no standing permission; within
 * its lifetime it can be replayed for the actions it names (say so in
 * docs/guard.md).
 */
#ifndef KSHIELD_WEAKEN_H
#define KSHIELD_WEAKEN_H

#include "config.h"

/* 0 when @action may happen now: the guard is not on, or cfg->weaken_token
 * holds a valid token for this host that allows it. Otherwise -EPERM (or
 * the verification error) with a one-line message saying why. */
int ks_weaken_check(const struct ks_config *cfg, const char *action);
/* A token allowing @allow (comma list) on @host until @expires, signed
 * with @keyfile; *text is malloc'ed. */
int ks_weaken_token(const char *keyfile, const char *host, long long expires,
		    const char *allow, char **text);

#endif
