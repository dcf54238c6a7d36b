/* SPDX-License-Identifier: MIT */
/* shieldset.h - keep what is pinned in line with a shields directory.
 *
 * The agent calls ks_shieldset_sync() at start and on SIGHUP: objects new in
 * the directory are loaded, changed ones (sha256 differs from the pinned
 * cfg's) replaced new-before-old, unchanged ones adopted without touching
 * their links, modes brought in line with the config, and shields that the
 * agent loaded from this directory whose object is gone are unloaded. A
 * shield that fails to load is reported and its previous version, if any,
 * keeps enforcing.
 *
 * Which shields came from the directory is recorded in a pinned hash map,
 * <bpffs>/agent/owned (name -> struct ks_owned), so that shields loaded by
 * hand with `kshield shield load` are never unloaded by a sync, and so that
 * the record lives exactly as long as the pins it describes.
 */
#ifndef KSHIELD_SHIELDSET_H
#define KSHIELD_SHIELDSET_H

#include <stdbool.h>
#include <linux/types.h>
#include <kshield/shield.h>
#include "config.h"

enum ks_sync_action {
	KS_SYNC_ADOPTED,	/* pinned and unchanged: left alone */
	KS_SYNC_MODE,		/* unchanged object, mode switched */
	KS_SYNC_LOADED,		/* new */
	KS_SYNC_REPLACED,	/* object changed: replaced new-before-old */
	KS_SYNC_UNLOADED,	/* object gone from the directory */
	KS_SYNC_REPAIRED,	/* pins found missing and reloaded (tamper) */
	KS_SYNC_FAILED,		/* could not load: previous version (if any) stays */
	KS_SYNC_OK,		/* --check: object is valid */
	KS_SYNC_REFUSED,	/* weakening without a signed token (guard on): unchanged */
};

struct ks_sync_item {
	char name[KS_NAME_LEN];		/* "" when the object has no readable name */
	char object[KS_PATH_LEN];
	enum ks_sync_action action;
	enum ks_mode mode;
	char variant[KS_VARIANT_LEN];
	char gate[16];			/* gated: proven|unproven|refused, else "" */
	bool promoted;			/* gated, unproven, enforcing on promote */
	int err;
	char why[768];
};

struct ks_sync_result {
	int n, nfailed, nrefused;
	struct ks_sync_item *items;	/* malloc'ed */
	int nwarn;
	char warn[8][512];
};

/* The value of <bpffs>/agent/owned. */
struct ks_owned {
	char entry[KS_PATH_LEN];	/* path in the shields dir it came from */
	__u32 nlinks;			/* links it had when loaded */
	__u32 _pad;
};

/* Reconcile @cfg->shields_dir with the pins. Returns 0 when every object
 * is in place, -EAGAIN when some failed (see res->items), another negative
 * errno when the directory or bpffs could not be used at all. */
int ks_shieldset_sync(const struct ks_config *cfg, struct ks_sync_result *res);
/* Validate every object of @cfg->shields_dir without loading anything. */
int ks_shieldset_check(const struct ks_config *cfg, struct ks_sync_result *res);
/* Check that every shield the agent owns still has its pins and links;
 * reload those that do not (KS_SYNC_REPAIRED items). Returns the number of
 * repaired shields or a negative errno. */
int ks_shieldset_verify(const struct ks_config *cfg, struct ks_sync_result *res);
void ks_sync_result_free(struct ks_sync_result *res);
const char *ks_sync_action_str(enum ks_sync_action a);
struct json_object *ks_sync_json(const struct ks_sync_result *res);

#endif
