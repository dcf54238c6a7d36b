/* fleet_kv.h - the fleet's desired state and reported status, as JSON
 * values in JetStream KV buckets (bucket names in fleet_nats.h).
 *
 * kshield_desired, key <shield>:
 *   {"name", "sha256", "size", "sig", "mode": "enforce"|"audit"|"absent",
 *    "hosts": GLOB, "group": NAME, "deployed_at": ms, "audit_first_ms",
 *    "promote_at": ms, "audit_hits": {host: n}, "prev": {older record},
 *    "by": who changed it last}
 * kshield_objects, key <sha256 hex>: the object's bytes (KV values up to the
 *   1 MiB max_payload; shield objects are well under it).
 * kshield_status, key <shield>.<host> (host made key-safe):
 *   {"host", "shield", "sha256", "status", "mode", "variant", "hits",
 *    "refused", "audited", "killed", "error", "kernel": bool, "at": ms}
 *   and key _host.<host>: {"host", "groups", "at"} (agent registration).
 */
#ifndef KSHIELD_FLEET_KV_H
#define KSHIELD_FLEET_KV_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "fleet_nats.h"

/* Get @key as JSON (*o owned by the caller) and its revision. -ENOENT when
 * absent or deleted. */
int ks_kv_get_json(kvStore *kv, const char *key, json_object **o, uint64_t *rev);
/* Put @o at @key. @last = 0: unconditional; otherwise only when the key is
 * still at revision @last (compare-and-set: -EAGAIN when it moved on). */
int ks_kv_put_json(kvStore *kv, const char *key, json_object *o, uint64_t last);
/* Every live entry of @kv whose key matches @filter ("x.*", ">" ...), as a
 * JSON object key -> value. */
int ks_kv_all_json(kvStore *kv, const char *filter, json_object **out);

const char *ks_json_str(json_object *o, const char *key, const char *dflt);
int64_t ks_json_i64(json_object *o, const char *key);

/* Is @host (with its comma-separated @groups) targeted by desired @d? */
bool ks_fleet_targets(json_object *d, const char *host, const char *groups);

#endif
