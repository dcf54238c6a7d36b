/* SPDX-License-Identifier: MIT */
/* fleet_kv.h - the fleet's desired state and reported status, as JSON
 * values in JetStream KV buckets (bucket names in fleet_nats.h).
 *
 * kshield_desired, key <shield>: a signed record. What agents act on is
 *   the "signed" text alone, a JSON body
 *   {"name", "sha256", "size", "sig" (the object's own signature),
 *    "mode": "enforce"|"audit"|"absent", "hosts": GLOB, "group": NAME,
 *    "deployed_at": ms, "audit_first_ms", "promote_at": ms, "sites": [...],
 *    "version": N (monotonic per shield), "expires_at": ms, "by",
 *    gated rollouts (proven.h): "gated": bool, "proven": {"sha256", "size",
 *    "sig"} (the shield's proven summary, in kshield_objects beside the
 *    object, signed under its own tag), "promoted": [HOST GLOB...]},
 *   signed under its own domain tag by a fleet key: "record_sig". The rest
 *   of the record (a copy of the body's fields, "prev": the body before,
 *   for rollback) is for people and `fleet status`; agents ignore it.
 *   Agents refuse a record that is unsigned or whose signature does not
 *   verify, a version below the highest they have accepted for that
 *   shield (kept in their state dir), and a new version already expired.
 * kshield_desired, key _keys (with --root-keys): the fleet's signing keys,
 *   {"signed": {"kind": "kshield-keys", "version", "expires_at",
 *    "keys": [{"id", "pub": "ed25519 BASE64", "expires_at"}],
 *    "revoked": [id...]}, "record_sig": by a root key}.
 * kshield_audit, key <shield>.<host>: {"host", "shield", "sha256",
 *   "version", "audited", "at"}: would-be refusals seen during an audit
 *   rollout (they hold its automatic promotion back). Agents write here
 *   and to kshield_status; desired and objects are read-only to them.
 * kshield_objects, key <sha256 hex>: the object's bytes (KV values up to the
 *   1 MiB max_payload; shield objects are well under it).
 * kshield_status, key <shield>.<host> (host made key-safe):
 *   {"host", "shield", "sha256", "status", "mode", "variant", "hits",
 *    "refused", "audited", "killed", "error", "kernel": bool, "at": ms,
 *    gated: "gate": "proven"|"unproven"|"refused" ("" = not gated),
 *    "gate_why", "promoted": bool}
 *   and key _host.<host>: {"host", "groups", "at"} (agent registration).
 */
#ifndef KSHIELD_FLEET_KV_H
#define KSHIELD_FLEET_KV_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "fleet_nats.h"
#include "sign.h"

/* Get @key as JSON (*o owned by the caller) and its revision. -ENOENT when
 * absent or deleted. */
int ks_kv_get_json(kvStore *kv, const char *key, json_object **o, uint64_t *rev);
/* Put @o at @key. @last = 0: unconditional; otherwise only when the key is
 * still at revision @last (compare-and-set: -EAGAIN when it moved on). */
int ks_kv_put_json(kvStore *kv, const char *key, json_object *o, uint64_t last);
/* Every live entry of @kv whose key matches @filter ("x.*", ">" ...), as a
 * JSON object key -> value. */
int ks_kv_all_json(kvStore *kv, const char *filter, json_object **out);
/* The object stored at @sha (its sha256, hex) in kshield_objects, as
 * *@buf (malloc'd, NUL-terminated) of *@len bytes. A desired record can be
 * seen before the object it names (a replica serving the read may not have
 * applied the put yet): only an object still missing after 2 s is refused.
 * The bytes' own sha256 goes in @got_hex. Returns 0 when it is @sha;
 * -EBADMSG when not (nothing in *@buf, *@len and @got_hex say what came);
 * a NATS error otherwise, *@transient when it may pass. Callers name the
 * object in their error line. */
int ks_fleet_object_get(kvStore *objects, const char *sha, char **buf, size_t *len,
			char got_hex[65], bool *transient);

const char *ks_json_str(json_object *o, const char *key, const char *dflt);
int64_t ks_json_i64(json_object *o, const char *key);

#define KS_KEYS_KEY "_keys"	/* the key list's key in kshield_desired */

/* Sign @body with the secret key in @keyfile under @kind's domain tag:
 * *rec = a copy of @body's fields plus "signed" (the exact text signed)
 * and "record_sig". */
int ks_fleet_sign_record(enum ks_sign_kind kind, json_object *body, const char *keyfile,
			 json_object **rec, char keyid[KS_KEYID_LEN]);
/* Verify a signed record against the public keys in @keys_dir: *body is
 * the parsed "signed" text, checked to carry an integer "version" and
 * "expires_at". Returns 0 or a negative errno (ks_sign_verify's, or
 * -EINVAL for a malformed body) with a message. */
int ks_fleet_open_record(enum ks_sign_kind kind, json_object *rec, const char *keys_dir,
			 json_object **body, char keyid[KS_KEYID_LEN]);

/* Is @host (with its comma-separated @groups) targeted by desired @d? */
bool ks_fleet_targets(json_object *d, const char *host, const char *groups);
/* Gated rollouts: has an operator promoted @host (a glob of desired @d's
 * "promoted" list: `fleet promote SHIELD --host GLOB`) to enforce on an
 * unproven kernel? */
bool ks_fleet_promoted(json_object *d, const char *host);

#endif
