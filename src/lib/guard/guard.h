/* SPDX-License-Identifier: MIT */
/* guard.h - load, configure and inspect the tamper guard (bpf/guard.bpf.c;
 * threat model and the deliberate way to turn it off in docs/guard.md). */
#ifndef KSHIELD_GUARD_USER_H
#define KSHIELD_GUARD_USER_H

#include <stdbool.h>
#include <linux/types.h>
#include <kshield/event.h>
#include <kshield/guard.h>

struct ks_guard_state {
	bool loaded;		/* pins present under <bpffs>/guard */
	bool lsm;		/* refusing variant (else: record only) */
	bool enabled;
	__u32 agent_tgid;	/* 0: no agent registered */
	__u64 attempts[KS_TAMPER_OP_MAX];
	__u32 refused_prog;	/* id of the program that records token refusals */
	int nkeys;		/* token keys recorded at load; <0: none pinned (older guard) */
	char variant[16];
	char why_no_lsm[256];	/* when the lsm variant was refused */
};

/* Load the guard (or adopt the pinned one), register the calling process
 * as the agent and set enabled. Fills @st. A new guard records the public
 * keys of @keys_dir (NULL or "": none) as the only keys weakening tokens
 * are checked against while it is loaded (weaken.h); adopting keeps them. The LSM variant is tried first;
 * on kernels without BPF LSM the recording (tracepoint) variant is loaded
 * and st->why_no_lsm says why. */
int ks_guard_load(bool enable, const char *keys_dir, struct ks_guard_state *st);
/* Record every link and map pinned under the bpffs root as kshield's own,
 * so that the guard protects them. Call after loading shields. */
int ks_guard_protect(void);
/* Turn refusing on or off. Only a trusted process may (the agent, or the
 * kshield binary while no agent runs): others get EPERM from the guard. */
int ks_guard_set(bool enabled);
/* Remove the guard's pins (it must be off, or the caller trusted). */
int ks_guard_unload(void);
/* -ENOENT (no message) when the guard is not loaded. */
int ks_guard_get(struct ks_guard_state *st);
/* The same for the guard pinned in directory @gdir (<root>/guard). */
int ks_guard_get_at(const char *gdir, struct ks_guard_state *st);
/* The guard directory (<root>/guard) of the guard that protects @target:
 * the nearest one at or above @target with symlinks resolved, else the
 * one at KS_PIN_ROOT_DEFAULT when it is on and @target is on the same
 * bpffs (a bind mount). -ENOENT (no message) when none does. */
int ks_guard_find(const char *target, char *gdir, size_t len);
/* The token keys the guard in @gdir recorded when it loaded (up to @max
 * into @pks, which may be NULL): their count, or -errno when it has no
 * keys pin (loaded by an older kshield). */
int ks_guard_keys_at(const char *gdir, unsigned char (*pks)[32], int max);
/* Record a weakening refused for want of a valid token as a tamper event
 * (op KS_TAMPER_CONFIG, target @action) through the guard's ring buffer,
 * by running its unattached recorder program. 0 or -errno. */
int ks_guard_record_refusal(const char *gdir, const char *action);
const char *ks_tamper_op_str(__u32 op);

/* The guard's BPF object as built in (for `kshield btf min`). */
const void *ks_guard_elf(size_t *len);

#endif
