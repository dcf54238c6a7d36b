// SPDX-License-Identifier: MIT
/* stats.c - `kshield stats`: what the monitor saw, lost and stored.
 *
 *	kshield stats [--store PATH] [-j]
 *
 * Losses come from the pinned ks_lost map (records that found the ring
 * buffer full, per kind, since the maps were created), the agent's counters
 * from the monitor's pinned mon_agent map (records read, stored, not
 * stored), and the per-kind row counts from the store. Each part is shown
 * when available, so stats work with the agent stopped or the store gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "eventfmt.h"
#include "monitor.h"
#include "store.h"
#include "units.h"

/* Events per kind into a JSON object (a kind may come from two tables). */
static void add_count(void *arg, const char *kind, long long n)
{
	struct json_object *kinds = arg, *v;

	if (json_object_object_get_ex(kinds, kind, &v))
		n += json_object_get_int64(v);
	json_object_object_add(kinds, kind, json_object_new_int64(n));
}

static int stats_help(void)
{
	fprintf(stderr, "Usage: kshield stats [--store PATH] [-j]\n");
	return 0;
}

int do_stats(int argc, char **argv)
{
	struct json_object *o = json_object_new_object(), *lost_o, *agent_o, *store_o, *kinds;
	const char *store = NULL, *path;
	__u64 lost[KS_EV_KIND_MAX], total_lost = 0;
	struct ks_agent_stats ag;
	struct ks_store *s;
	struct stat sb;
	int err, links;
	const struct ks_opt opts[] = { OPT_VAL("--store", &store), OPT_END };

	if (!ks_opts_parse("stats", opts, argc, argv, 0, NULL, stats_help, &err)) {
		json_object_put(o);
		return err;
	}
	path = ks_store_path(store);

	links = ks_monitor_links();
	json_object_object_add(o, "monitor_links", json_object_new_int(links > 0 ? links : 0));

	lost_o = json_object_new_object();
	if (!ks_monitor_read_lost(lost)) {
		for (int k = 1; k < KS_EV_KIND_MAX; k++) {
			json_object_object_add(lost_o, ks_kind_name(k), json_object_new_uint64(lost[k]));
			total_lost += lost[k];
		}
		json_object_object_add(lost_o, "total", json_object_new_uint64(total_lost));
	}
	json_object_object_add(o, "lost", lost_o);

	agent_o = json_object_new_object();
	if (!ks_monitor_read_agent(&ag)) {
		bool running = ag.tgid && kill(ag.tgid, 0) == 0;

		json_object_object_add(agent_o, "running", json_object_new_boolean(running));
		if (running)
			json_object_object_add(agent_o, "pid", json_object_new_int(ag.tgid));
		json_object_object_add(agent_o, "received", json_object_new_uint64(ag.received));
		json_object_object_add(agent_o, "stored", json_object_new_uint64(ag.stored));
		json_object_object_add(agent_o, "unstored", json_object_new_uint64(ag.unstored));
		json_object_object_add(agent_o, "store_errors", json_object_new_uint64(ag.store_errors));
	}
	json_object_object_add(o, "agent", agent_o);

	store_o = json_object_new_object();
	json_object_object_add(store_o, "path", json_object_new_string(path));
	err = ks_store_open(&s, path, KS_STORE_RDONLY);
	if (err) {
		json_object_object_add(store_o, "error", json_object_new_string(ks_errmsg()));
	} else {
		sqlite3_stmt *st;
		long long total = 0;

		kinds = json_object_new_object();
		ks_store_count_kinds(s, add_count, kinds);
		json_object_object_foreach(kinds, k, v) {
			(void)k;
			total += json_object_get_int64(v);
		}
		json_object_object_add(store_o, "events", kinds);
		json_object_object_add(store_o, "total", json_object_new_int64(total));
		/* not min()/max(): an aggregate over the view reads every row */
		if (sqlite3_prepare_v2(ks_store_db(s), "SELECT (SELECT ts FROM events ORDER BY ts LIMIT 1), "
				       "(SELECT ts FROM events ORDER BY ts DESC LIMIT 1)",
				       -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
				char t[40];

				ks_time_fmt(sqlite3_column_int64(st, 0), t, sizeof(t));
				json_object_object_add(store_o, "oldest", json_object_new_string(t));
				ks_time_fmt(sqlite3_column_int64(st, 1), t, sizeof(t));
				json_object_object_add(store_o, "newest", json_object_new_string(t));
			}
			sqlite3_finalize(st);
		}
		ks_store_close(s);
		if (!stat(path, &sb))
			json_object_object_add(store_o, "size_bytes", json_object_new_int64(sb.st_size));
	}
	json_object_object_add(o, "store", store_o);

	if (json_output) {
		ks_json_print(o);
		return 0;
	}
	printf("monitor: %s\n", links > 0 ? "pinned" : "not loaded");
	json_object_object_foreach(o, key, val) {
		if (!json_object_is_type(val, json_type_object))
			continue;
		printf("%s:\n", key);
		json_object_object_foreach(val, k2, v2) {
			if (json_object_is_type(v2, json_type_object)) {
				printf("  %s:\n", k2);
				json_object_object_foreach(v2, k3, v3)
					printf("    %-12s %s\n", k3, json_object_get_string(v3));
			} else {
				printf("  %-14s %s\n", k2, json_object_get_string(v2));
			}
		}
	}
	json_object_put(o);
	return 0;
}
