// SPDX-License-Identifier: MIT
/* store_int.h - the store's insides, shared by store.c (open, rows,
 * batches) and store_upkeep.c (retention, checks, notes); not an
 * interface: everything else goes through store.h. */
#ifndef KSHIELD_STORE_INT_H
#define KSHIELD_STORE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include "events.h"
#include "store.h"
#include "store_schema.h"

/* Page size of a new store: 8 KiB pages ingest 14-18% more events per
 * CPU second than SQLite's 4 KiB (bench/store_ingest, same run: fewer
 * pages to fill, split and log per row); a store made before keeps its
 * own. A checkpoint runs every KS_STORE_WAL_BYTES of WAL, whatever the
 * page size. */
#define KS_STORE_PAGE_SIZE	8192
#define KS_STORE_WAL_BYTES	(16 << 20)
/* Rows of one table queued and inserted by one statement: a statement's
 * step, reset and halt, and the b-tree seek to the table's end, are paid
 * once per KS_STORE_MULTI rows instead of per row. */
#define KS_STORE_MULTI		32

struct ks_store {
	sqlite3 *db;
	sqlite3_stmt *ins[KS_TAB_MAX];	/* one INSERT per table */
	sqlite3_stmt *multi[KS_TAB_MAX];	/* and one of KS_STORE_MULTI rows */
	struct queue {			/* rows waiting for their table's multi */
		struct ks_row *rows;	/* KS_STORE_MULTI, allocated on first use */
		sqlite3_int64 ts[KS_STORE_MULTI], bin[KS_STORE_MULTI];
		bool note[KS_STORE_MULTI];
		int n;
	} q[KS_TAB_MAX];
	sqlite3_stmt *bin_get, *bin_add;
	struct bin_slot {		/* binary path -> id, a direct-mapped cache */
		__u64 hash;
		sqlite3_int64 id;
		char *path;
	} bins[1024];
	int pending;			/* event rows in the open transaction */
	int pending_notes;		/* the agent's own rows in it (not events) */
	int64_t first_ns;		/* when the first of them was queued (ks_mono_ns) */
	bool in_tx;
	__s64 last_ts;			/* newest ts stored (ts is the row key) */
	long long exec_rows;		/* rows in the current exec chunk */
	__s64 exec_day;			/* UTC day of its rows */
	bool exec_full;			/* no more chunks: keep filling it */
	__u64 committed;		/* event rows committed since open */
	__u64 dropped;			/* event rows given to the store and lost:
					 * refused, rolled back, failed commits */
	__u64 wal_cap_for;		/* the max_bytes the WAL limits were set for */
	__s64 high_ts;			/* newest ts before the clock stepped back */
	sqlite3_stmt *probe;		/* is a ts taken? (rows below high_ts) */
	sqlite3_stmt *late_add;		/* a row stored below high_ts, into table late */
	int wal_frames;			/* checkpoint at this many WAL frames */
	struct ring_at {		/* the agent's ring positions (ring_mark) */
		const char *ring;
		__u64 next, queued;	/* after the row handed in next; the last queued */
		bool dirty;		/* queued moved since the last commit */
	} rings[KS_STORE_RINGS];
	int ring_next;			/* the slot of the row handed in next, or -1 */
	struct stat seen;		/* the main file after our last write */
};

/* Map an SQLite failure to a negative errno and a one-line message. */
int ks_store_sql_err(sqlite3 *db, int rc, const char *what);
/* The integer a PRAGMA returns into *@v; an SQLite code. */
int ks_store_pragma_int(sqlite3 *db, const char *sql, long long *v);
/* @fn(db) in a transaction of its own; an SQLite code. */
int ks_store_schema_tx(sqlite3 *db, int (*fn)(sqlite3 *db));
/* Forget the cached binary ids (their rows went, or a batch did). */
void ks_store_bins_forget(struct ks_store *s);
/* Prepare the INSERTs of the current exec chunk; an SQLite code. */
int ks_store_exec_prepare(struct ks_store *s);

#endif
