/* SPDX-License-Identifier: MIT */
/* fleet_ship.h - ship the local event store to the fleet's JetStream
 * stream. The store is the buffer: a shipped-up-to mark (the store's rowid,
 * the row's time, unique) is kept in the store itself and advanced only
 * over messages JetStream acknowledged, all of them, from the mark on.
 *
 * A message is a frame of up to SHIP_FRAME_ROWS events, one JSON object a
 * line, each line self-contained:
 *   {"host":"H","seq":ROWID,"kind":"K","ts":T,<every other non-null column>}
 * host, seq, kind and ts come first, in that order, so that the collector
 * can cut a line without parsing it; every other column of the store's
 * events table follows under its own name, so a column added to the store
 * ships with no change here. Frames go out with a window of messages in
 * flight; acks move the mark. The message id "<host>:<first>-<last>:<ts>"
 * lets JetStream drop a frame re-sent whole inside its duplicate window,
 * and the collector de-duplicates on (host, seq) beyond it.
 *
 * The rowid is the row's time, so a row stored after the wall clock
 * stepped back may have its place below the mark: the store lists such
 * rows in its table late (store.h), and each pass, after the rows above
 * the mark, ships those at or below it (frames with ":late" after the id)
 * and deletes their entries once acknowledged.
 */
#ifndef KSHIELD_FLEET_SHIP_H
#define KSHIELD_FLEET_SHIP_H

#include <signal.h>
#include <stdint.h>
#include "fleet_nats.h"

#define SHIP_FRAME_ROWS 1024		/* events per message */
#define SHIP_FRAME_BYTES (256 << 10)	/* or this many bytes, whichever first */
#define SHIP_WINDOW 32			/* messages in flight, unacknowledged */

struct ks_ship;

/* Start the shipping thread for @store (an SQLite file with an "events"
 * table); it waits for the file and for NATS, and stops when *@stop. */
int ks_ship_start(struct ks_ship **out, struct ks_nats *n, const char *host, const char *store,
		  volatile sig_atomic_t *stop);
void ks_ship_stop(struct ks_ship *s);

/* One pass: ship everything above the mark, then the store's late rows
 * below it (at most @max rows, 0 = all).
 * Returns rows shipped (>= 0) or a negative errno; *mark gets the mark. */
int64_t ks_ship_pass(struct ks_nats *n, const char *host, const char *store, int64_t max,
		     int64_t *mark);

#endif
