/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* guard.h - the contract between the tamper guard (bpf/guard.bpf.c) and the
 * agent (src/lib/guard/guard.c): its configuration entry and the set of protected BPF
 * object ids. Pinned as <bpffs>/guard/cfg and <bpffs>/guard/ids.
 */
#ifndef KSHIELD_GUARD_H
#define KSHIELD_GUARD_H

/* Single entry of the guard's "guard_cfg" array map. */
struct ks_guard_cfg {
	__u32 enabled;		/* 1: refuse tampering (LSM); 0: record only */
	__u32 agent_tgid;	/* the running agent; 0 when none (cleared at its exit) */
	__u64 root_ino;		/* bpffs root directory: inode ... */
	__u32 root_dev;		/* ... and kernel dev_t (MKDEV) of its file system */
	__u32 exe_dev;		/* agent binary (kernel dev_t) ... */
	__u64 exe_ino;		/* ... and inode: trusted only while no agent runs */
	__u32 lsm;		/* refusing variant: 1 lsm, 2 fmod_ret; 0 tp (records only) */
	__u32 refused_prog;	/* id of the unattached refusal recorder (0: none) */
};

/* <bpffs>/guard/keys: the shield public keys (32 bytes each, raw Ed25519;
 * all-zero = empty slot) that weakening tokens are checked against while
 * this guard is loaded, recorded from keys_dir when it loaded, then frozen
 * (no process can change them; the guard's programs cannot either). */
#define KS_GUARD_KEYS_MAX 16

/* Key of "guard_ids": a BPF object kshield owns. */
enum ks_guard_obj {
	KS_GUARD_LINK = 1,
	KS_GUARD_MAP = 2,
	KS_GUARD_PIN = 3,	/* id: inode number of a pin under the root */
};

struct ks_guard_id {
	__u32 type;		/* enum ks_guard_obj */
	__u32 id;		/* kernel link or map id, pin inode number */
};

#endif /* KSHIELD_GUARD_H */
