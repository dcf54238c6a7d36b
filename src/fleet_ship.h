/* fleet_ship.h - ship the local event store to the fleet's JetStream
 * stream. The store is the buffer: a shipped-up-to mark (the store's rowid,
 * which only grows) is kept in the store itself and advanced only after
 * JetStream acknowledged every message up to it. Each message carries the
 * id "<host>:<seq>:<ts>" so JetStream drops re-sends inside its duplicate
 * window, and the collector de-duplicates on (host, seq) beyond it.
 */
#ifndef KSHIELD_FLEET_SHIP_H
#define KSHIELD_FLEET_SHIP_H

#include <signal.h>
#include <stdint.h>
#include "fleet_nats.h"

struct ks_ship;

/* Start the shipping thread for @store (an SQLite file with an "events"
 * table); it waits for the file and for NATS, and stops when *@stop. */
int ks_ship_start(struct ks_ship **out, struct ks_nats *n, const char *host, const char *store,
		  volatile sig_atomic_t *stop);
void ks_ship_stop(struct ks_ship *s);

/* One pass: ship everything above the mark (at most @max rows, 0 = all).
 * Returns rows shipped (>= 0) or a negative errno; *mark gets the mark. */
int64_t ks_ship_pass(struct ks_nats *n, const char *host, const char *store, int64_t max,
		     int64_t *mark);

#endif
