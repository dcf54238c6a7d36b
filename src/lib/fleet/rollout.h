/* SPDX-License-Identifier: MIT */
/* rollout.h - a shield's rollout through the fleet's desired state, the
 * operator's side of it (`kshield fleet deploy|status|wait|promote|
 * rollback|renew`; the records are described in fleet_kv.h): store the
 * object and what travels with it, sign and put the desired record, change
 * it again (promote, roll back, renew), and summarize what the hosts made
 * of it. Nothing here prints: warnings go to the caller's @say, one line
 * each, in the order they arise.
 */
#ifndef KSHIELD_FLEET_ROLLOUT_H
#define KSHIELD_FLEET_ROLLOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "fleet_nats.h"
#include "meta.h"

/* A record in kshield_desired (a shield's, the key list) lives 30 days
 * unless --expires says otherwise. */
#define KS_DESIRED_EXPIRES_MS ((int64_t)30 * 86400000)

/* One line to show the operator (no newline): "warning: ...", "impact: ...". */
typedef void (*ks_rollout_say_fn)(const char *line);

/* What a desired record says, as agents read it: its signed body (a new
 * reference), or for a record from before signed records, the record
 * without its bookkeeping. Never NULL. */
json_object *ks_desired_body(json_object *rec);

/* Before a rollout: what the shield at @path would have hit on the hosts
 * matching @hosts (shield impact --pg) since @since_s, a line per host and
 * a total through @say. Going straight to enforce (@enforce) where it would
 * have hit is refused (-EPERM) unless @force. A shield with no impact
 * pattern is said and not refused. */
int ks_rollout_preview(const char *path, const char *pg, const char *since_s, const char *hosts,
		       bool enforce, bool force, ks_rollout_say_fn say);

/* `fleet deploy`: what to put in the fleet. */
struct ks_rollout_deploy {
	const char *path;		/* the shield object */
	const struct ks_meta *meta;	/* its metadata (name, sha256) */
	const char *sigpath;		/* NULL: PATH.sig when there is one */
	const char *hosts, *group;	/* targets: a host glob, a group ("" none) */
	const char *key, *keys;		/* signing key; DIR of keys trusted for the old record */
	int64_t expires_ms;		/* the record's lifetime */
	int64_t audit_first_ms;		/* > 0: audit, enforce after that long */
	bool audit;			/* audit only */
	bool gated;
	const char *proven;		/* NULL: NAME.proven.json beside PATH if any */
	const char *const *sites;	/* kernel sites manifests */
	int nsites;
	const char *const *btf;		/* <build-id>[.min].btf files, or dirs of them */
	int nbtf;
	ks_rollout_say_fn say;		/* warnings */
};

/* Store the object (and its signature, proven summary, sites manifests
 * and kernels' BTF) in kshield_objects and put the signed desired record, keeping
 * the version before for rollback when it verifies. Connects with @no.
 * *rec: the stored record; *is_signed: the object had a signature. */
int ks_rollout_deploy(const struct ks_rollout_deploy *d, const struct ks_nats_opts *no,
		      json_object **rec, bool *is_signed);

/* One summary per shield in the desired state (or only @only: -ENOENT when
 * it is not there): its record and what the hosts' status entries say
 * about it, with each host's entry when @per_host. */
int ks_rollout_summaries(struct ks_nats *n, const char *only, bool per_host, json_object **out);
/* The same from the buckets' contents read already (ks_kv_all_json of
 * kshield_desired, kshield_status and kshield_audit). */
int ks_rollout_summaries_of(json_object *desired, json_object *status, json_object *audit,
			    const char *only, bool per_host, json_object **out);

/* promote, rollback and renew: a new version of the desired record, signed
 * with @key, written by compare-and-set. */
enum ks_rollout_change { KS_ROLLOUT_PROMOTE, KS_ROLLOUT_ROLLBACK, KS_ROLLOUT_RENEW };

/* Change shield @name's record (@host: promote a gated rollout on the
 * hosts matching it only). Only a stored record that verifies against
 * @key's public half or a key in @keys is signed again. *rec: the stored
 * record. */
int ks_rollout_change(struct ks_nats *n, const char *name, enum ks_rollout_change op,
		      const char *host, const char *key, const char *keys, int64_t expires_ms,
		      json_object **rec);

#endif /* KSHIELD_FLEET_ROLLOUT_H */
