/* SPDX-License-Identifier: MIT */
/* store_schema.h - the event store's layout, private to store.c: which
 * table holds which kinds, the columns of each (derived from the event
 * table, events.h), the `events` view over them and the statements that
 * write them. */
#ifndef KSHIELD_STORE_SCHEMA_H
#define KSHIELD_STORE_SCHEMA_H

#include <sqlite3.h>
#include "events.h"

/* One table per frequent kind and one for the rare kinds, so that no row
 * pays for a kind index: a kind filter selects tables, and time ranges are
 * rowid (ts) ranges. */
enum ks_tab {
	KS_TAB_EXEC,		/* binary interned in table binaries */
	KS_TAB_EXIT,
	KS_TAB_CONNECT,
	KS_TAB_ACCEPT,
	KS_TAB_LISTEN,
	KS_TAB_FLOW,
	KS_TAB_OTHER,		/* the rare kinds, every column, indexed by kind */
	KS_TAB_MAX,
};

#define KS_EXEC_CHUNK_ROWS	(1 << 19)	/* exec rows a chunk takes unindexed */
#define KS_EXEC_CHUNKS_MAX	400		/* the view's UNION ALL allows 500 arms */
#define KS_SCHEMA_TABLES_MAX	(KS_TAB_MAX + KS_EXEC_CHUNKS_MAX + 1)

/* The table of a kind's rows. */
enum ks_tab ks_schema_tab(const char *kind);
/* Create or bring up to date the tables, view and triggers, migrating a
 * version 1 store (its table becomes one more arm of the view). Runs in
 * the caller's transaction. Returns an SQLite result code. */
int ks_schema_apply(sqlite3 *db);
/* For a read-only connection to a store of schema version 2 or 1, whose
 * `events` names the process tgid and the thread pid: a temporary view
 * `events` with today's columns over it (SQLITE_OK when not needed). */
int ks_schema_compat_view(sqlite3 *db);
/* Tables that hold rows, for retention and max(ts): the KS_TAB_* tables
 * and a migrated version 1 table while it has rows (or, in a version 1
 * store not migrated yet, its table events). */
int ks_schema_tables(sqlite3 *db, const char *names[], int max);
/* Rows per kind, counted table by table: @fn once per kind and table. */
int ks_schema_count(sqlite3 *db, void (*fn)(void *arg, const char *kind, long long n), void *arg);
/* "INSERT INTO <table>(...) VALUES(...),(...)" of @rows rows for @tab
 * (execs: the current chunk); SQLITE_TOOBIG when @buf is too short. */
int ks_schema_insert_sql(sqlite3 *db, enum ks_tab tab, int rows, char *buf, size_t len);
/* Seal the current exec chunk (build its index) and start the next one;
 * SQLITE_FULL when there are as many chunks as the view can hold (the
 * current one then keeps taking rows). Runs in the caller's transaction. */
int ks_schema_exec_roll(sqlite3 *db);
/* Rows in the current exec chunk and its newest ts (0 when empty). */
int ks_schema_exec_current(sqlite3 *db, long long *rows, long long *newest);
/* Drop the exec chunks (but the current one) and the version 1 table that
 * retention emptied, and rewrite the view without them. */
int ks_schema_prune(sqlite3 *db);
/* Bind every column of row @row (from 0) of @tab's insert for @r, stored
 * at @ts with binary id @bin (0: none). */
void ks_schema_bind(sqlite3_stmt *st, enum ks_tab tab, int row, const struct ks_row *r,
		    sqlite3_int64 ts, sqlite3_int64 bin);

#endif
