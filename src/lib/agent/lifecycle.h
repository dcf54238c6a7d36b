/* lifecycle.h - what the agent does around its event loop to survive and
 * resist tampering (issue 6): hold the tamper guard, and periodically check
 * that what it loaded is still pinned and attached, repairing and recording
 * (as `tamper` events in the store) whatever was undone.
 *
 * The agent calls ks_lifecycle_synced() after each shields sync (start and
 * SIGHUP) and ks_lifecycle_tick() from its loop; both are cheap when there
 * is nothing to do.
 */
#ifndef KSHIELD_LIFECYCLE_H
#define KSHIELD_LIFECYCLE_H

#include "config.h"

struct ks_monitor;
struct ks_store;

/* Load or adopt the guard when the config says guard = on or one is
 * already pinned (registering this process as the agent), and protect every
 * link and map pinned now. Messages go to stderr. */
void ks_lifecycle_synced(const struct ks_config *cfg);
/* Every cfg->check_interval_s: re-pin the shared maps and the monitor if
 * their pins are gone, reload shields whose pins or links are gone, and
 * add one `tamper` row per repair to @store (when not NULL). */
void ks_lifecycle_tick(const struct ks_config *cfg, struct ks_monitor *mon,
		       struct ks_store *store);

#endif
