// SPDX-License-Identifier: MIT
/* attacks_int.h - what attacks.c (the attacks while an agent runs) and
 * attacks_token.c (the checks once it is gone) share; not an interface. */
#ifndef KSHIELD_GUARD_ATTACKS_INT_H
#define KSHIELD_GUARD_ATTACKS_INT_H

#include <stdbool.h>
#include "attacks.h"

/* The decoy shield the selftest's agent pins. */
#define FAKE_SHIELD "selftest-fake"

/* Record one check: @ok, and what happened (printf). */
void ks_attacks_check(struct ks_guard_attacks *t, const char *name, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Read the tamper events recorded so far into t->seen and t->refusals. */
void ks_attacks_drain(struct ks_guard_attacks *t);
/* rm @path as a binary other than kshield; its exit code. */
int ks_attacks_rm_as_other(const char *path);
/* The checks with no agent running, the tokens' among them; the guard is
 * unloaded at the end. @tmp holds the selftest's keys. */
void ks_attacks_no_agent(struct ks_guard_attacks *t, const char *tmp);

#endif
