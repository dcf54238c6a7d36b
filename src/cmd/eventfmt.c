// SPDX-License-Identifier: MIT
/* eventfmt.c - event rows for people (a line each) and scripts (JSON), and
 * process ancestry through the exec records' parent_exec_id links. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "config.h"
#include "eventfmt.h"
#include "events.h"
#include "store.h"
#include "units.h"

struct json_object *ks_row_json(sqlite3_stmt *st)
{
	struct json_object *o = json_object_new_object();
	int n = sqlite3_column_count(st);

	for (int i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(st, i);
		int type = sqlite3_column_type(st, i), c = ks_col_find(name);
		struct json_object *v = NULL;

		if (type == SQLITE_NULL)
			continue;
		/* an event column: as the event table says */
		if (c >= 0 && (type == SQLITE_TEXT) == (ks_cols[c].type == KS_COL_TEXT)) {
			ks_col_json_add(o, c, sqlite3_column_int64(st, i),
					(const char *)sqlite3_column_text(st, i));
			continue;
		}
		switch (type) {
		case SQLITE_INTEGER:
			v = json_object_new_int64(sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			v = json_object_new_double(sqlite3_column_double(st, i));
			break;
		default: {
			const char *t = (const char *)sqlite3_column_text(st, i);

			v = json_object_new_string(t ? t : "");
		}
		}
		json_object_object_add(o, name, v);
	}
	/* a shield event's arguments by name, beside the raw words */
	ks_event_json_name_args(o);
	return o;
}

static int col(sqlite3_stmt *st, const char *name)
{
	int n = sqlite3_column_count(st);

	for (int i = 0; i < n; i++)
		if (!strcmp(sqlite3_column_name(st, i), name))
			return i;
	return -1;
}

void ks_row_print(sqlite3_stmt *st, bool header)
{
	char ts[40], sum[1024];
	int n = sqlite3_column_count(st);
	struct ks_row r;

	if (col(st, "ts") < 0 || col(st, "kind") < 0) {
		for (int i = 0; header && i < n; i++)
			printf("%s%s", sqlite3_column_name(st, i), i + 1 < n ? "\t" : "\n");
		for (int i = 0; i < n; i++) {
			const char *t = (const char *)sqlite3_column_text(st, i);

			printf("%s%s", t ? t : "-", i + 1 < n ? "\t" : "\n");
		}
		return;
	}
	if (header)
		printf("%-27s %-9s %7s %6s %-16s %s\n", "TIME", "KIND", "PID", "UID", "COMM", "WHAT");
	ks_store_row_read(st, &r);
	ks_time_fmt(ks_row_num(&r, KS_COL_TS), ts, sizeof(ts));
	ks_row_summary(&r, sum, sizeof(sum));
	printf("%-27s %-9s %7lld %6lld %-16s %s\n", ts, ks_row_str(&r, KS_COL_KIND),
	       (long long)ks_row_num(&r, KS_COL_PID), (long long)ks_row_num(&r, KS_COL_UID),
	       *ks_row_str(&r, KS_COL_COMM) ? ks_row_str(&r, KS_COL_COMM) : "-", sum);
}

#define MAX_CLOCKS 64

/* Find exec @exec_id's row near the time its id says it happened, for
 * every clock offset the agent recorded (@clk, @nclk), so no index on
 * exec_id is needed. Only a store without clock rows is searched
 * exhaustively. An exec older than the store (retention) is not found. */
static int exec_row(sqlite3_stmt *near, sqlite3_stmt *all, const __s64 *clk, int nclk,
		    __u64 exec_id, sqlite3_stmt **hit)
{
	/* The id is stamped microseconds before the record: look within 2 ms
	 * first (a few dozen rows on a busy host), then 200 ms. */
	static const __s64 windows[] = { 2000000LL, 200000000LL };
	__s64 boot_ns = exec_id >> 8;

	for (int w = 0; w < 2; w++)
		for (int i = 0; i < nclk; i++) {
			__s64 at = boot_ns + clk[i];

			sqlite3_reset(near);
			sqlite3_bind_int64(near, 1, exec_id);
			sqlite3_bind_int64(near, 2, at - windows[w]);
			sqlite3_bind_int64(near, 3, at + windows[w]);
			if (sqlite3_step(near) == SQLITE_ROW) {
				*hit = near;
				return 1;
			}
		}
	if (nclk)
		return 0;
	sqlite3_reset(all);
	sqlite3_bind_int64(all, 1, exec_id);
	if (sqlite3_step(all) == SQLITE_ROW) {
		*hit = all;
		return 1;
	}
	return 0;
}

#define EXEC_COLS "SELECT ts, pid, uid, euid, comm, binary, args, parent_exec_id FROM events "

struct json_object *ks_ancestry(sqlite3 *db, __u64 exec_id)
{
	/* Prepared once per connection and kept: a hunt asks for the
	 * ancestry of every hit, and preparing a query over the events view
	 * (a UNION ALL of the store's tables) costs more than running it. */
	static struct {
		sqlite3 *db;
		sqlite3_stmt *near, *all;
		__s64 clk[MAX_CLOCKS];
		int nclk;
	} c;
	struct json_object *chain = NULL;
	sqlite3_stmt *near, *all, *st;
	__s64 *clk = c.clk;
	char ts[40];

	if (c.db != db) {
		sqlite3_finalize(c.near);
		sqlite3_finalize(c.all);
		c.near = c.all = NULL;
		c.nclk = 0;
		c.db = NULL;
		if (sqlite3_prepare_v2(db, "SELECT DISTINCT boot_to_real FROM clock", -1, &st, NULL) == SQLITE_OK) {
			while (c.nclk < MAX_CLOCKS && sqlite3_step(st) == SQLITE_ROW)
				c.clk[c.nclk++] = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
		if (sqlite3_prepare_v2(db, EXEC_COLS "WHERE ts BETWEEN ?2 AND ?3 AND kind = 'exec' AND "
				       "exec_id = ?1 LIMIT 1", -1, &c.near, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(db, EXEC_COLS "WHERE kind = 'exec' AND exec_id = ?1 LIMIT 1",
				       -1, &c.all, NULL) != SQLITE_OK)
			return NULL;
		c.db = db;
	}
	near = c.near;
	all = c.all;
	int nclk = c.nclk;
	for (int depth = 0; exec_id && depth < KS_ANCESTRY_MAX; depth++) {
		struct json_object *o;

		if (!exec_row(near, all, clk, nclk, exec_id, &st))
			break;
		if (!chain)
			chain = json_object_new_array();
		o = json_object_new_object();
		ks_time_fmt(sqlite3_column_int64(st, 0), ts, sizeof(ts));
		json_object_object_add(o, "exec_id", json_object_new_uint64(exec_id));
		json_object_object_add(o, "ts", json_object_new_string(ts));
		json_object_object_add(o, "pid", json_object_new_int64(sqlite3_column_int64(st, 1)));
		json_object_object_add(o, "uid", json_object_new_int64(sqlite3_column_int64(st, 2)));
		json_object_object_add(o, "euid", json_object_new_int64(sqlite3_column_int64(st, 3)));
		json_object_object_add(o, "comm", json_object_new_string(
			(const char *)sqlite3_column_text(st, 4) ?: ""));
		json_object_object_add(o, "binary", json_object_new_string(
			(const char *)sqlite3_column_text(st, 5) ?: ""));
		json_object_object_add(o, "args", json_object_new_string(
			(const char *)sqlite3_column_text(st, 6) ?: ""));
		json_object_array_add(chain, o);
		exec_id = (__u64)sqlite3_column_int64(st, 7);
		sqlite3_reset(st);
	}
	sqlite3_reset(near);
	sqlite3_reset(all);
	return chain;
}

void ks_ancestry_print(struct json_object *chain, const char *indent)
{
	size_t n = chain ? json_object_array_length(chain) : 0;

	if (!n) {
		printf("%s(no exec of this process in the store)\n", indent);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(chain, i), *v;
		const char *f[4] = { "", "", "", "" };
		static const char *const keys[] = { "ts", "binary", "args", "comm" };
		long long pid = 0, uid = 0;

		for (int k = 0; k < 4; k++)
			if (json_object_object_get_ex(o, keys[k], &v))
				f[k] = json_object_get_string(v);
		if (json_object_object_get_ex(o, "pid", &v))
			pid = json_object_get_int64(v);
		if (json_object_object_get_ex(o, "uid", &v))
			uid = json_object_get_int64(v);
		printf("%s%*s%s pid %lld uid %lld %s [%s] at %s\n", indent, (int)i * 2, "",
		       i ? "<- " : "", pid, uid, f[1], f[2], f[0]);
	}
}

__u64 ks_exec_of_pid(sqlite3 *db, __u32 pid)
{
	sqlite3_stmt *st;
	__u64 id = 0;

	/* ts is selected so that ORDER BY ts merges the view's tables */
	if (sqlite3_prepare_v2(db, "SELECT exec_id, ts FROM events WHERE kind = 'exec' AND pid = ?1 "
			       "ORDER BY ts DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, pid);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}
