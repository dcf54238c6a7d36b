/* SPDX-License-Identifier: MIT */
/* selfdefence.h - the agent's self-defence: what it does around its event
 * loop to survive and resist tampering: hold the tamper guard,
 * and periodically check that what it loaded is still pinned and attached,
 * repairing and recording (as `tamper` events in the store) whatever was
 * undone.
 *
 * The agent calls ks_selfdefence_synced() after each shields sync (start and
 * SIGHUP) and ks_selfdefence_tick() from its loop; both are cheap when there
 * is nothing to do.
 */
#ifndef KSHIELD_SELFDEFENCE_H
#define KSHIELD_SELFDEFENCE_H

#include "config.h"

struct ks_monitor;
struct ks_store;

/* Load or adopt the guard when the config says guard = on or one is
 * already pinned (registering this process as the agent), and protect every
 * link and map pinned now. Messages go to stderr. */
void ks_selfdefence_synced(const struct ks_config *cfg, struct ks_store *store);
/* A weakening config change refused (no signed token while the guard is
 * on): one `tamper` row (op KS_TAMPER_CONFIG) in @store. */
void ks_selfdefence_refused(struct ks_store *store, const char *shield, const char *what);
/* Every cfg->check_interval_s: re-pin the shared maps and the monitor if
 * their pins are gone, reload shields whose pins or links are gone, and
 * add one `tamper` row per repair to @store (when not NULL). */
void ks_selfdefence_tick(const struct ks_config *cfg, struct ks_monitor *mon,
		       struct ks_store *store);

#endif
