/* SPDX-License-Identifier: MIT */
/* loader.h - load a shield object, pick the strongest variant this kernel
 * accepts, attach it and pin it so that it keeps enforcing after we exit.
 *
 * Everything lives under <bpffs root>/shields/<name>/ (see pins.h); a later
 * kshield process manages what an earlier one loaded through those pins.
 */
#ifndef KSHIELD_LOADER_H
#define KSHIELD_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include <stddef.h>
#include <kshield/shield.h>
#include "sign.h"

#define KS_MAX_VARIANTS 8

struct ks_variant_try {
	char name[KS_VARIANT_LEN];
	int err;		/* 0 = chosen, <0 = why it was refused */
	char why[512];		/* one line, e.g. "lsm__x: load: Operation not permitted" */
	bool unneeded;		/* skipped: the kernel lacks what its "requires" name */
};

struct ks_load_result {
	char name[KS_NAME_LEN];
	char variant[KS_VARIANT_LEN];	/* chosen one */
	int ntried;
	struct ks_variant_try tried[KS_MAX_VARIANTS];
	double load_ms;			/* open to enforcing */
	int nsys;			/* programs run by the syscall dispatcher */
	__u32 sys_ids[64];		/* their ids */
	int nfp;			/* programs run by the file_permission dispatcher */
	__u32 fp_ids[8];		/* their ids */
	bool replaced;			/* an older instance was swapped out */
};

struct ks_shield_state {
	char name[KS_NAME_LEN];
	struct ks_shield_cfg cfg;
	__u64 hits[KS_VERDICT_MAX];
	int nlinks;
	int nsys;			/* programs run by the syscall dispatcher (prog_ pins) */
};

/* Load @path in @mode. All or nothing: on failure nothing of this load stays
 * attached or pinned, and an already loaded version keeps enforcing. When
 * the shield is already loaded, the new one is attached before the old one
 * is detached. Returns 0 or a negative errno with a message recorded. */
int ks_shield_load(const char *path, enum ks_mode mode, struct ks_load_result *res);
/* The same for an object in memory: the bytes hashed, checked and loaded
 * are @buf (every variant is opened from it, never from @path again);
 * @path only names it (messages, the shield's recorded object path). */
int ks_shield_load_buf(const char *path, const void *buf, size_t len, enum ks_mode mode,
		       struct ks_load_result *res);
/* Read @path once; with @keys_dir set ("" or NULL: no check) verify those
 * bytes against PATH.sig (or the .sig beside a symlink's target) and the
 * keys in it. *buf is malloc'ed (free it). */
int ks_shield_read(const char *path, const char *keys_dir, char **buf, size_t *len,
		   char keyid[KS_KEYID_LEN]);
/* ks_shield_read() then ks_shield_load_buf() of the bytes read. */
int ks_shield_load_signed(const char *path, const char *keys_dir, enum ks_mode mode,
			  struct ks_load_result *res);
/* Shields already loaded (pinned.c). */
int ks_shield_unload(const char *name);
int ks_shield_set_mode(const char *name, enum ks_mode mode);
/* State of one loaded shield (-ENOENT with a message when not loaded). */
int ks_shield_get(const char *name, struct ks_shield_state *st);
/* All loaded shields; *out is malloc'ed, free() it. */
int ks_shield_list(struct ks_shield_state **out, int *n);
/* Serialise loads and unloads between kshield processes: an fd to close
 * (the lock goes with it), or -errno with a message. */
int ks_shields_lock(void);

#endif
