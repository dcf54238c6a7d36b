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
	char variant[16];
	char why_no_lsm[256];	/* when the lsm variant was refused */
};

/* Load the guard (or adopt the pinned one), register the calling process
 * as the agent and set enabled. Fills @st. The LSM variant is tried first;
 * on kernels without BPF LSM the recording (tracepoint) variant is loaded
 * and st->why_no_lsm says why. */
int ks_guard_load(bool enable, struct ks_guard_state *st);
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
const char *ks_tamper_op_str(__u32 op);

#endif
