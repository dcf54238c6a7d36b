/* SPDX-License-Identifier: MIT */
/* eventfmt.h - show rows of the event store: one line per event for people,
 * one JSON object per event for scripts, and the process ancestry of an
 * event (the chain of exec records through parent_exec_id). Used by the
 * `events` and `hunt` nouns. */
#ifndef KSHIELD_EVENTFMT_H
#define KSHIELD_EVENTFMT_H

#include <stdbool.h>
#include <linux/types.h>
#include <sqlite3.h>
#include <json-c/json.h>

#define KS_ANCESTRY_MAX 32

/* The current row of @st as a JSON object: every column by name; "ts" as
 * RFC 3339 (and "ts_ns"), "detail" parsed into an object; a shield event's
 * detail also gets "arg", its argument words by name (events.h). */
struct json_object *ks_row_json(sqlite3_stmt *st);
/* Print the current row of @st as one table line. Rows with ts and kind
 * columns get the event layout, anything else tab-separated columns. */
void ks_row_print(sqlite3_stmt *st, bool header);

/* Ancestry of exec @exec_id, itself first, oldest last, as a JSON array of
 * {exec_id, ts, pid, uid, comm, binary, args}. Returns NULL when the exec
 * is not in the store. */
struct json_object *ks_ancestry(sqlite3 *db, __u64 exec_id);
/* Print an ancestry (from ks_ancestry) indented under a hit. */
void ks_ancestry_print(struct json_object *chain, const char *indent);
/* Exec id of @pid's newest exec in the store, or 0. */
__u64 ks_exec_of_pid(sqlite3 *db, __u32 pid);

#endif
