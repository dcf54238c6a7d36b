// SPDX-License-Identifier: MIT
/* test_metrics_text.c - the metrics exposition (src/lib/metrics/) as
 * Prometheus's own linter reads it (promtool check metrics, from Debian's
 * prometheus package), and the store's part of it over a real store file.
 * No kernel: the pinned parts are absent here and must just be left out. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "metrics.h"
#include "store.h"

Test(metrics_text, promtool_accepts_it_and_the_values_are_the_agents)
{
	struct ks_metrics_agent a = { 0 };
	char dir[] = "/tmp/ks-metrics-XXXXXX", path[128], cmd[256], *text = NULL;
	struct ks_store *s;
	size_t len = 0;
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0);
	cr_assert_eq(sqlite3_exec(ks_store_db(s), "INSERT INTO events(ts, kind, pid, uid, comm) "
				  "VALUES (1700000000123000000, 'userns', 5, 0, 'x')", NULL, NULL, NULL),
		     SQLITE_OK);
	a.received[1] = 7;
	a.stored[1] = 5;
	a.unstored[1] = 2;
	a.store_errors = 1;
	cr_assert_eq(ks_metrics_render(&a, s, path, &text, &len), 0);
	ks_store_close(s);
	cr_assert_eq(strlen(text), len);
	cr_expect(strstr(text, "kshield_events_received_total{kind=\"exec\"} 7\n"), "%s", text);
	cr_expect(strstr(text, "kshield_events_stored_total{kind=\"exec\"} 5\n"), "%s", text);
	cr_expect(strstr(text, "kshield_events_unstored_total{kind=\"exec\"} 2\n"), "%s", text);
	cr_expect(strstr(text, "kshield_store_errors_total 1\n"), "%s", text);
	cr_expect(strstr(text, "kshield_store_oldest_event_timestamp_seconds 1700000000.123\n"), "%s", text);
	cr_expect(strstr(text, "kshield_store_size_bytes "), "%s", text);
	cr_expect(strstr(text, "process_resident_memory_bytes "), "%s", text);

	snprintf(cmd, sizeof(cmd), "%s/m.prom", dir);
	f = fopen(cmd, "w");
	cr_assert(f);
	fwrite(text, 1, len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s/m.prom", dir);
	cr_expect_eq(system(cmd), 0, "promtool check metrics refused:\n%s", text);
	free(text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	system(cmd);
}

Test(metrics_text, collect_text_passes_promtool)
{
	struct ks_metrics_collect c = { .received = 10, .inserted = 7, .bad = 1, .frames = 3,
					.batches = 2, .pg_lag_s = 0.25, .last_commit_s = 1700000000 };
	char *text = NULL;
	size_t len = 0;
	FILE *p;

	cr_assert_eq(ks_metrics_collect_render(&c, &text, &len), 0);
	cr_expect(strstr(text, "kshield_collect_duplicates_total 2\n"), "%s", text);
	cr_expect(strstr(text, "kshield_collect_frames_total 3\n"), "%s", text);
	cr_expect(strstr(text, "kshield_collect_pg_lag_seconds 0.250\n"), "%s", text);
	p = popen("promtool check metrics", "w");
	cr_assert(p);
	fwrite(text, 1, len, p);
	cr_expect_eq(pclose(p), 0, "promtool check metrics refused:\n%s", text);
	free(text);
}
