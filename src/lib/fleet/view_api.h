// SPDX-License-Identifier: MIT
/* view_api.h - the JSON the fleet page reads (`kshield fleet view`), from
 * the fleet's NATS KV (desired state, per-host status, audit hits, host
 * registrations) and the collector's PostgreSQL (ks_events and its hit rollups):
 *
 *   /api/coverage          one row per shield: hosts enforcing, auditing,
 *                          refused (grouped by reason), failed, not
 *                          reporting; the variant mix; hits and last hit
 *   /api/shield?name=S     its hosts (kernel, arch, variant, mode, proof),
 *                          grouped with counts and listed; hits per hour
 *                          and per host and verdict
 *   /api/hunt?name=S       the shield's own hunt query fleet-wide (hunt_pg)
 *   /api/host?name=H       kernel, arch, agent, last seen, guard, losses;
 *                          its shields; recent execs, connections, hits
 *                          grouped with counts and decoded arguments
 *   /api/rollouts          audit-first, gated, expiring records, each with
 *                          the signed command that would move it on
 *   /api/hosts             hosts registered, by kind and by last seen
 *
 * Read-only: PostgreSQL runs each request in a READ ONLY transaction and
 * NATS is only read. Hits are grouped, never cut: every group's count is
 * there, and a list cut for size says how many it left out.
 */
#ifndef KSHIELD_VIEW_API_H
#define KSHIELD_VIEW_API_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "fleet_nats.h"

/* One bucket kept in memory: a KV watcher's thread applies every change
 * to the map (10,000 hosts' entries take seconds to read again; a page
 * view must not). */
struct ks_view_mirror {
	struct ks_view *v;
	kvStore *kv;
	json_object *map;	/* key -> value; under v->mu */
	bool ready;		/* the watcher's initial values are in */
	pthread_t th;
	bool started;
};

struct ks_view {
	struct ks_nats n;
	void *pg;		/* PGconn */
	char *pginfo;
	pthread_mutex_t mu;	/* held by each API request and by each change applied */
	volatile int stop;
	struct ks_view_mirror desired, status, audit;
};

int ks_view_open(struct ks_view *v, const struct ks_nats_opts *no, const char *pginfo);
void ks_view_close(struct ks_view *v);
/* Wait up to @timeout_ms for the buckets' first full read; whether it is in. */
bool ks_view_ready(struct ks_view *v, int timeout_ms);
/* One API request (@what after /api/), as view_http.h's callback. */
int ks_view_api(void *v, const char *what, const char *name, char **body, size_t *len);

/* view_pg.c: the PostgreSQL half; each returns 0 or -errno with a message
 * and adds its keys to @o. */
int ks_view_pg_hits(struct ks_view *v, json_object *o);
int ks_view_pg_shield(struct ks_view *v, const char *name, json_object *o);
int ks_view_pg_host(struct ks_view *v, const char *host, json_object *o);
int ks_view_pg_hunt(struct ks_view *v, const char *name, const char *sql, json_object *o);

#endif /* KSHIELD_VIEW_API_H */
