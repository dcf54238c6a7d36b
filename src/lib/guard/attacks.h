/* SPDX-License-Identifier: MIT */
/* attacks.h - the tamper guard attacked on purpose (`kshield guard
 * selftest`, what the kernel matrix runs in each guest): one process plays
 * both the agent (a child that loads the guard and pins a decoy) and an
 * attacker, tries every tampering move the guard knows, and checks that the
 * guard refuses (BPF LSM) or at least records (tracepoint variant) each one,
 * that the agent's death frees its slot, and that the deliberate off switch
 * works. The run leaves nothing pinned. Printing the checks is the
 * command's job.
 */
#ifndef KSHIELD_GUARD_ATTACKS_H
#define KSHIELD_GUARD_ATTACKS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include <kshield/event.h>

#define KS_ATTACK_CHECKS_MAX	64

/* One check: what was tried or verified, whether it went as the guard's
 * variant requires, and what happened ("Operation not permitted",
 * "3 event(s), 3 refused"). */
struct ks_attack_check {
	const char *name;	/* a string constant */
	bool ok;
	char got[160];
};

/* One line for the operator while the attacks run (no newline): an
 * attempt not made on this system and why ("no cgroup2 mount: cgroup
 * checks not run"), or the agent's own error ("agent: ..."). */
typedef void (*ks_attacks_note_fn)(const char *line);

struct ks_guard_attacks {
	bool lsm;		/* a refusing variant (lsm, fmod_ret) was loaded */
	char variant[16];	/* which: lsm, fmod_ret, tp */
	int n;			/* checks, in the order they were made */
	struct ks_attack_check c[KS_ATTACK_CHECKS_MAX];
	/* Bookkeeping of the run. */
	ks_attacks_note_fn note;
	int seen[KS_TAMPER_OP_MAX];	/* tamper events from the attacker, by op */
	int seen_denied[KS_TAMPER_OP_MAX];
	int refusals;		/* token refusals recorded (op config), by anyone */
	pid_t me;
	bool umount_tried;
};

/* Run every attack under the current bpffs root (ks_bpffs_root), which
 * must not hold a guard already; fills @t, says what was not tried through
 * @note (may be NULL). Returns 0 when the run went through (the checks say
 * whether the guard held; count the !ok ones), or a negative errno with a
 * message when it could not start (a guard is already loaded there, the
 * pin tree can't be made, the agent could not load the guard: its own
 * error went to @note first). */
int ks_guard_attacks_run(struct ks_guard_attacks *t, ks_attacks_note_fn note);

/* Checks that failed in @t. */
int ks_guard_attacks_failed(const struct ks_guard_attacks *t);

#endif /* KSHIELD_GUARD_ATTACKS_H */
