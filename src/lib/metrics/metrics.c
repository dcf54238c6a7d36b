// SPDX-License-Identifier: MIT
/* metrics.c - the Prometheus text exposition of kshield's state.
 *
 * Names follow Prometheus conventions: a kshield_ prefix, _total for
 * counters, base units (bytes, seconds), and the standard process_*
 * names for the agent's own CPU and memory. Everything is read fresh on
 * each call: a scrape costs a walk of the flow table (at most its 32768
 * keys) and one indexed query on the store.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include "array.h"
#include "config.h"
#include "events.h"
#include "guard.h"
#include "loader.h"
#include "metrics.h"
#include "monitor.h"
#include "store.h"

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void per_kind(FILE *f, const char *name, const char *help, const __u64 v[KS_EV_KIND_MAX])
{
	head(f, name, "counter", help);
	for (unsigned k = 1; k < KS_EV_KIND_MAX; k++)
		fprintf(f, "%s{kind=\"%s\"} %llu\n", name, ks_kind_name(k), (unsigned long long)v[k]);
}

static const char *gate_of(const struct ks_metrics_agent *a, const char *name)
{
	for (int i = 0; a && i < a->ngates; i++)
		if (!strcmp(a->gates[i].name, name))
			return a->gates[i].gate;
	return "";
}

static void shields(FILE *f, const struct ks_metrics_agent *agent)
{
	struct ks_shield_state *st = NULL;
	int n = 0;

	if (ks_shield_list(&st, &n))
		n = 0;
	head(f, "kshield_shields_loaded", "gauge", "Shields loaded (pinned).");
	fprintf(f, "kshield_shields_loaded %d\n", n);
	head(f, "kshield_shield_info", "gauge", "One per loaded shield; its mode, active variant and, "
	     "when gated, what the matrix proved for this kernel (proven, unproven, refused) as labels.");
	for (int i = 0; i < n; i++) {
		fputs("kshield_shield_info{shield=\"", f);
		label(f, st[i].name);
		fprintf(f, "\",mode=\"%s\",variant=\"", ks_mode_str(st[i].cfg.mode));
		label(f, st[i].cfg.variant);
		fputs("\",gate=\"", f);
		label(f, gate_of(agent, st[i].name));
		fputs("\"} 1\n", f);
	}
	head(f, "kshield_shield_hits_total", "counter", "Shield hits per verdict (refused, audited, killed).");
	for (int i = 0; i < n; i++)
		for (int v = 0; v < KS_VERDICT_MAX; v++) {
			fputs("kshield_shield_hits_total{shield=\"", f);
			label(f, st[i].name);
			fprintf(f, "\",verdict=\"%s\"} %llu\n", ks_verdict_name(v),
				(unsigned long long)st[i].hits[v]);
		}
	free(st);
}

static void store_part(FILE *f, struct ks_store *store, const char *path)
{
	char wal[4200];
	struct stat sb;
	long long size = -1;
	sqlite3_stmt *st;

	if (path && !stat(path, &sb)) {
		size = sb.st_size;
		snprintf(wal, sizeof(wal), "%s-wal", path);
		if (!stat(wal, &sb))
			size += sb.st_size;
	}
	if (size >= 0) {
		head(f, "kshield_store_size_bytes", "gauge", "Event store size on disk (database and WAL).");
		fprintf(f, "kshield_store_size_bytes %lld\n", size);
	}
	if (!store)
		return;
	/* not min(): an aggregate over the view reads every row */
	if (sqlite3_prepare_v2(ks_store_db(store), "SELECT ts FROM events ORDER BY ts LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		head(f, "kshield_store_oldest_event_timestamp_seconds", "gauge",
		     "Time of the oldest event kept in the store (Unix seconds).");
		fprintf(f, "kshield_store_oldest_event_timestamp_seconds %.3f\n",
			sqlite3_column_int64(st, 0) / 1e9);
	}
	sqlite3_finalize(st);
}

static void process_part(FILE *f)
{
	struct rusage ru;
	long pages = 0, rss = 0;
	FILE *m = fopen("/proc/self/statm", "re");

	if (!getrusage(RUSAGE_SELF, &ru)) {
		head(f, "process_cpu_seconds_total", "counter", "User and system CPU time of the agent.");
		fprintf(f, "process_cpu_seconds_total %.3f\n",
			ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	}
	if (m && fscanf(m, "%ld %ld", &pages, &rss) == 2) {
		head(f, "process_resident_memory_bytes", "gauge", "Resident memory of the agent.");
		fprintf(f, "process_resident_memory_bytes %lld\n", (long long)rss * sysconf(_SC_PAGESIZE));
	}
	if (m)
		fclose(m);
}

int ks_metrics_render(const struct ks_metrics_agent *agent, struct ks_store *store,
		      const char *store_path, char **out, size_t *len)
{
	__u64 lost[KS_EV_KIND_MAX];
	struct ks_guard_state g;
	__u32 used, max;
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	shields(f, agent);
	if (agent) {
		per_kind(f, "kshield_events_received_total", "Records read from the ring buffer.",
			 agent->received);
		per_kind(f, "kshield_events_stored_total", "Records committed to the store.", agent->stored);
		per_kind(f, "kshield_events_unstored_total",
			 "Records that could not be stored (the store was failing).", agent->unstored);
		head(f, "kshield_store_errors_total", "counter", "Failed store commits.");
		fprintf(f, "kshield_store_errors_total %llu\n", (unsigned long long)agent->store_errors);
	}
	if (!ks_monitor_read_lost(lost))
		per_kind(f, "kshield_ringbuf_lost_total",
			 "Records lost because the ring buffer was full.", lost);
	store_part(f, store, store_path);
	if (!ks_monitor_flow_fill(&used, &max)) {
		head(f, "kshield_flow_table_entries", "gauge", "Connections tracked in the flow table.");
		fprintf(f, "kshield_flow_table_entries %u\n", used);
		head(f, "kshield_flow_table_capacity", "gauge",
		     "Flow table size (LRU: the oldest flows go when it is full).");
		fprintf(f, "kshield_flow_table_capacity %u\n", max);
	}
	if (!ks_guard_get(&g)) {
		head(f, "kshield_guard_tamper_attempts_total", "counter",
		     "Attempts to detach, unpin or stop kshield, per operation.");
		for (__u32 op = 0; op < KS_TAMPER_OP_MAX; op++)
			fprintf(f, "kshield_guard_tamper_attempts_total{op=\"%s\"} %llu\n",
				ks_tamper_op_str(op), (unsigned long long)g.attempts[op]);
	}
	process_part(f);
	if (fclose(f))
		return -ENOMEM;
	return 0;
}

int ks_metrics_collect_render(const struct ks_metrics_collect *c, char **out, size_t *len)
{
	static const struct { const char *name, *help; size_t off; } counters[] = {
#define C(n, h) { "kshield_collect_" #n "_total", h, offsetof(struct ks_metrics_collect, n) }
		C(received, "Events fetched from the stream (rate() of it: events per second)."),
		C(inserted, "Events new to PostgreSQL (the rest were duplicates or bad)."),
		C(bad, "Messages or events that were not kshield's, acked and dropped."),
		C(frames, "Stream messages (frames of events) written and acked."),
		C(batches, "Batches committed."),
		C(pg_retries, "PostgreSQL writes retried (connection lost, server down)."),
#undef C
	};
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
		head(f, counters[i].name, "counter", counters[i].help);
		fprintf(f, "%s %lld\n", counters[i].name,
			(long long)*(const __s64 *)((const char *)c + counters[i].off));
	}
	head(f, "kshield_collect_duplicates_total", "counter",
	     "Events PostgreSQL already had (redelivered), dropped by the (host, seq) key.");
	fprintf(f, "kshield_collect_duplicates_total %lld\n",
		(long long)(c->received - c->inserted - c->bad));
	head(f, "kshield_collect_pg_lag_seconds", "gauge",
	     "At the last commit: how long after the stream stored it the newest event reached PostgreSQL.");
	fprintf(f, "kshield_collect_pg_lag_seconds %.3f\n", c->pg_lag_s);
	head(f, "kshield_collect_last_commit_timestamp_seconds", "gauge",
	     "Time of the last PostgreSQL commit (Unix seconds; 0 before the first).");
	fprintf(f, "kshield_collect_last_commit_timestamp_seconds %.3f\n", c->last_commit_s);
	process_part(f);
	return fclose(f) ? -ENOMEM : 0;
}
