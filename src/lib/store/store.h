/* SPDX-License-Identifier: MIT */
/* store.h - kshield's event store: one SQLite database (WAL) holding every
 * record the monitor and the shields sent, one row per record.
 *
 * View `events` (one row per record; unused columns are NULL), what hunts
 * and every reader query: the columns of the event table (events.h: ts,
 * the row key, unique: ties are stored 1 ns apart; kind; pid the process,
 * tid the thread; ...; detail, a JSON object with the rest of the record),
 * then rowid (= ts, for readers of the version 1 table).
 * It is a UNION ALL over one table per frequent kind (ev_exit, ev_connect,
 * ev_accept, ev_listen, ev_flow; execs in day chunks ev_exec, ev_exec_1,
 * ..., each indexed on its binary once its day is over) and ev_other for
 * the rest (store_schema.c); INSERT and DELETE on it reach the right table. Queries
 * with ORDER BY ts (ts selected) merge the tables; aggregates over the
 * view read every row: ask for `ORDER BY ts DESC LIMIT 1`, not max(ts).
 * Table `binaries` (id, path, first): each binary and its first exec.
 * Table `clock` (since, boot_to_real): see ks_store_note_clock().
 * Table `losses` (ts, kind, lost, unstored): running totals the agent
 * records whenever they change.
 * Table `late` (id, ts): rows stored below a row stored before them (the
 * wall clock stepped back; ts is taken from the clock, not after the
 * newest row), in the order they were stored (id only grows). A reader
 * that follows the store by ts (the fleet shipper) has passed their place:
 * it takes them from here and deletes the ids it has dealt with.
 * Retention deletes them with their rows.
 * Table `ring_mark` (ring, pos): how far the agent had read each ring
 * buffer (ring: boot id and map id) when it queued the last row of the
 * last commit, written in that commit (ks_store_ring_next()).
 *
 * A store is recognised by PRAGMA application_id = KS_STORE_APP_ID and its
 * schema version by PRAGMA user_version; a newer one is refused, an older
 * one is migrated by the agent when it opens it: a version 1 store's one
 * table `events` becomes one more arm of the view until retention empties
 * it; version 2 and older columns pid (the thread) and tgid (the process)
 * are renamed tid and pid; version 3 and older gave ev_accept rows
 * without a detail an established connection's (version 4: an accept's
 * own, flags 0, which every accept then stored in full), so such rows get
 * that detail written in. A reader (RDONLY) of a store not migrated yet
 * sees today's columns through a temporary view.
 */
#ifndef KSHIELD_STORE_H
#define KSHIELD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <sqlite3.h>
#include <kshield/event.h>
#include "events.h"

#define KS_STORE_APP_ID		0x6b736864	/* "kshd" */
#define KS_STORE_VERSION	4
#define KS_STORE_BATCH		8192		/* rows per transaction at most */
#define KS_STORE_BATCH_MS	500		/* ... and at most this old */
/* A record older than the newest row by more than this means the wall
 * clock was stepped back (ring-buffer order across CPUs is far less). */
#define KS_STORE_STEP_NS	1000000000LL
/* The writer's page cache, on the agent's heap. Measured with
 * bench/store_ingest (1M events, per CPU second, 3 rounds): 4096 KB
 * 750-790k, 2048 750-830k, 1024 826-845k, 512 816-839k; appends touch few
 * pages, so more cache only costs resident memory. -D to re-measure. */
#ifndef KS_STORE_CACHE_KB
#define KS_STORE_CACHE_KB	1024
#endif

struct ks_store;

enum {
	KS_STORE_RDONLY = 1,	/* events, hunt, stats */
	KS_STORE_CREATE = 2,	/* agent: create the file and schema if absent */
};

/* Open @path. Returns 0 or a negative errno with one line recorded:
 * -ENOENT no such file (RDONLY), -EMEDIUMTYPE not a kshield store,
 * -EPROTO newer schema, -EBADMSG corrupt, -EBUSY locked, -EACCES. */
int ks_store_open(struct ks_store **out, const char *path, int flags);
void ks_store_close(struct ks_store *s);
sqlite3 *ks_store_db(struct ks_store *s);

/* Queue one ring-buffer record (struct ks_hdr first) for the current
 * transaction; @boot_to_real is added to its CLOCK_BOOTTIME timestamp.
 * Commits by itself when the batch is full. Returns 0, or a negative
 * errno when the row (and, on a failed commit, its batch) was not stored. */
int ks_store_add(struct ks_store *s, const void *rec, size_t len, __s64 boot_to_real);
/* Queue one decoded row (events.h) for the current transaction. */
int ks_store_add_row(struct ks_store *s, const struct ks_row *r);
/* A row the agent writes about itself (a repaired pin): stored like an
 * event, counted in neither ks_store_committed() nor ks_store_dropped(). */
int ks_store_add_note(struct ks_store *s, const struct ks_row *r);
/* Event rows handed to ks_store_add_row() since open and lost: refused,
 * rolled back (by ks_store_abort(), a failed commit or SQLite itself).
 * Every row handed in is committed, dropped or still pending. */
__u64 ks_store_dropped(const struct ks_store *s);
/* Roll back the open transaction; returns the rows dropped with it. */
int ks_store_abort(struct ks_store *s);
/* Commit the open transaction; returns rows committed or a negative errno
 * (the batch is then lost and counted by the caller). */
int ks_store_commit(struct ks_store *s);
/* The agent's read position in ring buffer @slot (< KS_STORE_RINGS, named
 * @ring, a string that outlives the store) once the row it hands in next
 * is read. Each commit records in table ring_mark, in its own
 * transaction, the position of the last row it holds, so that records
 * committed but not yet given back to the ring when the agent was killed
 * are skipped by the next agent (ks_store_ring_pos()), not stored twice. */
#define KS_STORE_RINGS 4
void ks_store_ring_next(struct ks_store *s, int slot, const char *ring, __u64 pos);
/* The position the last commit recorded for @ring: 0, or -ENOENT. */
int ks_store_ring_pos(struct ks_store *s, const char *ring, __u64 *pos);
/* Forget the positions of rings named for a boot other than @boot (their
 * maps died with it): returns how many, or a negative errno. */
int ks_store_ring_forget(struct ks_store *s, const char *boot);
/* Rows committed since the store was opened. */
__u64 ks_store_committed(const struct ks_store *s);
/* Rows queued in the open transaction, and age of the oldest in ms. */
int ks_store_pending(struct ks_store *s, long *age_ms);
/* Delete rows older than @keep_ns (0 = no age limit) and the oldest rows
 * while the database uses more than @max_bytes (0 = no cap). Returns rows
 * deleted or a negative errno. */
long ks_store_retain(struct ks_store *s, __u64 keep_ns, __u64 max_bytes);
/* Record the CLOCK_BOOTTIME -> CLOCK_REALTIME offset in table `clock`
 * (since, boot_to_real): exec ids are boot-time stamps, so an exec's row is
 * found by time (its ts is about (exec_id >> 8) + boot_to_real) without an
 * index on exec_id. The agent records it at start and when it moves. */
int ks_store_note_clock(struct ks_store *s, __s64 boot_to_real);
/* Was the main file changed (size, time, replaced) since this connection
 * last wrote it? Only checkpoints write it, so a change is another
 * process's: an editor, a restore, a disk error fixed by hand, damage.
 * True once per change. */
bool ks_store_touched(struct ks_store *s);
/* PRAGMA quick_check (reads every page: run it when touched): 0, or
 * -EBADMSG with one line when the file is corrupt. */
int ks_store_check(struct ks_store *s);
/* Rows per kind (@fn may be called more than once for a kind: add them
 * up), counted table by table: a GROUP BY over the view would build every
 * row. Returns 0 or a negative errno. */
int ks_store_count_kinds(struct ks_store *s, void (*fn)(void *arg, const char *kind, long long n),
			 void *arg);
/* Record loss totals (per kind lost in the ring buffer; unstored rows;
 * monitor runs the kernel skipped, as kind "missed"). */
int ks_store_note_losses(struct ks_store *s, const __u64 lost[KS_EV_KIND_MAX], __u64 unstored,
			 __u64 missed);

/* Read the current row of @st (a SELECT over `events`) into @r: the
 * columns of the event table it has, by name; NULLs are left unset. */
void ks_store_row_read(sqlite3_stmt *st, struct ks_row *r);

/* Store path: --store, else $KSHIELD_STORE, else the config's, else the
 * default. */
const char *ks_store_path(const char *opt);

#endif
