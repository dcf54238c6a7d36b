/* SPDX-License-Identifier: MIT */
/* weaken.h - while the tamper guard is on, a change that weakens the
 * shields takes effect only with a token signed by one of keys_dir's keys:
 * an attacker with root can edit the config file and send SIGHUP (the
 * guard lets that through: it is the reload signal), but can't sign.
 *
 * Weakening actions: "audit:NAME" (an enforcing shield to audit mode),
 * "unload:NAME" (a shield unloaded or replaced by hand), "guard-off" (the
 * guard turned off or unloaded).
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

/* What to do without a token, the same words in the refusal, the help,
 * docs/guard.md and kshield(8); %s is the action. */
#define KS_WEAKEN_ADVICE "Get a token from the key holder (kshield guard token --key KEY " \
	"--host HOST %s, then --token FILE), or, without the key, run `systemctl disable " \
	"kshield` and reboot (pins do not survive a reboot)"

/* The one gate every weakening goes through (the agent's config changes,
 * `kshield guard off|unload`, `shield unload|mode audit`, a replacing
 * `shield load`): 0 when @action may happen now, i.e. no guard that is on
 * protects what it acts on (found by ks_guard_find, symlinks resolved), or
 * @token_path holds a token for this host that allows it, signed by one of
 * the keys that guard recorded when it loaded (never keys_dir as it is
 * now: root can replace those files). Otherwise -EPERM with one line:
 * why, and KS_WEAKEN_ADVICE; a refusal by anyone but the registered agent
 * is recorded as a tamper event (op KS_TAMPER_CONFIG) by the guard. */
int ks_weaken_allow(const char *token_path, const char *action);
/* ks_weaken_allow(cfg->weaken_token, @action). */
int ks_weaken_check(const struct ks_config *cfg, const char *action);
/* A token allowing @allow (comma list) on @host until @expires, signed
 * with @keyfile; *text is malloc'ed. */
int ks_weaken_token(const char *keyfile, const char *host, long long expires,
		    const char *allow, char **text);

#endif
