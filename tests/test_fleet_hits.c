// SPDX-License-Identifier: MIT
/* test_fleet_hits.c - the hit rollups the fleet page counts (ks_hits_day,
 * ks_hits_hour: fleet_pg.c) equal PostgreSQL's own rows, whichever way
 * the rows got there: the collector's COPY, its staging path for a batch
 * with duplicates (which must not be counted twice), an older writer
 * before the rollups existed (filled when a collector of this version
 * starts), and retention (a dropped day takes its rolled-up hits along).
 * Also that a batch's hits are stored after its other rows (fewer pages to
 * read for a hunt).
 *
 * Events reach the collector through the runner's loopback NATS cluster
 * (fleet_harness.h) as frames an agent ships, published here with a plain
 * NATS PUB to kshield.events.<host>, so each test knows every row it sent.
 * Needs no BPF. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include "fleet_harness.h"

static char cdir[256], urls[512], host_urls[512], conninfo[256], host[64];
static long long now_ns;	/* an event sent again has the same time */

static void setup(void)
{
	char path[300], *env, *p;

	ks_fleet_cluster_up(cdir, sizeof(cdir), urls, sizeof(urls), host_urls, sizeof(host_urls));
	snprintf(path, sizeof(path), "%s/env", cdir);
	env = ks_read_file(path);
	cr_assert(env && (p = strstr(env, "PG_CONNINFO=\"")), "no PG_CONNINFO in %s", path);
	sscanf(p, "PG_CONNINFO=\"%255[^\"]", conninfo);
	free(env);
	snprintf(host, sizeof(host), "hits%d", getpid());
	now_ns = (long long)time(NULL) * 1000000000LL;
}

TestSuite(fleet_hits, .init = setup, .timeout = 180);

/* One integer from psql. */
static long long pg_int(const char *sql)
{
	char *out = NULL;
	long long v;
	int rc = ks_runf(&out, NULL, "psql '%s' -Atq <<'SQL'\n%s\nSQL", conninfo, sql);

	cr_assert_eq(rc, 0, "psql failed: %s", sql);
	v = atoll(out ? out : "");
	free(out);
	return v;
}

/* Rows on which the rollups and a GROUP BY over ks_events disagree, both
 * ways, over the whole table (every test's hits go through the same
 * trigger, so the whole table must agree). */
static long long rollup_diff(void)
{
	return pg_int("WITH r AS (SELECT coalesce(data->>'shield', '') s, host h,"
		      " coalesce(data->>'verdict', '') v, (ts AT TIME ZONE 'UTC')::date d, count(*) n,"
		      " min(ts) f, max(ts) l FROM ks_events WHERE kind = 'shield' GROUP BY 1, 2, 3, 4),"
		      " k AS (SELECT shield, host, verdict, day, hits, first_ts, last_ts FROM ks_hits_day),"
		      " rh AS (SELECT coalesce(data->>'shield', '') s, coalesce(data->>'verdict', '') v,"
		      " date_trunc('hour', ts AT TIME ZONE 'UTC') t, count(*) n FROM ks_events"
		      " WHERE kind = 'shield' GROUP BY 1, 2, 3),"
		      " kh AS (SELECT shield, verdict, hour, hits FROM ks_hits_hour)"
		      " SELECT (SELECT count(*) FROM ((SELECT * FROM r EXCEPT SELECT * FROM k) UNION ALL"
		      " (SELECT * FROM k EXCEPT SELECT * FROM r)) x) +"
		      " (SELECT count(*) FROM ((SELECT * FROM rh EXCEPT SELECT * FROM kh) UNION ALL"
		      " (SELECT * FROM kh EXCEPT SELECT * FROM rh)) y)");
}

/* This test's hits as the rollup counts them, and as the rows do. */
static void expect_hits(long long want, const char *when)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT coalesce(sum(hits), 0) FROM ks_hits_day WHERE host = '%s'", host);
	cr_expect_eq(pg_int(sql), want, "%s: hits rolled up", when);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ks_events WHERE host = '%s' AND kind = 'shield'",
		 host);
	cr_expect_eq(pg_int(sql), want, "%s: hit rows", when);
	cr_expect_eq(rollup_diff(), 0, "%s: the rollups differ from ks_events", when);
}

/* Events @from..@to of this test's host as one frame, published with a
 * plain NATS PUB on the admin connection: every 5th a hit (two shields,
 * three verdicts and a hit with none), the rest execs; @old of them dated
 * 2015-06-01, the others over the last 2 days. Returns the hits in it. */
static int publish(int from, int to, int old)
{
	static const char *const shields[] = { "cve-2026-43500", "userns-policy" };
	static const char *const verdicts[] = { "refused", "audited", "killed", NULL };
	const char *url = urls + strlen("nats://"), *at = strchr(url, '@'), *colon;
	char user[128], pass[128], line[512], hdr[256];
	size_t cap = (size_t)(to - from + 1) * sizeof(line), len = 0;
	char *frame = malloc(cap), reply[4096];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int s, hits = 0, n;
	FILE *f;

	cr_assert(frame && at);
	colon = memchr(url, ':', at - url);
	cr_assert(colon);
	snprintf(user, sizeof(user), "%.*s", (int)(colon - url), url);
	snprintf(pass, sizeof(pass), "%.*s", (int)(at - colon - 1), colon + 1);
	sa.sin_port = htons(atoi(strchr(at, ':') + 1));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	for (int i = from; i <= to; i++) {
		long long ts = i - from < old ? 1433116800000000000LL + i * 60000000000LL :
			now_ns - (long long)(i % 48) * 3600000000000LL;

		if (i % 5 == 0) {
			const char *v = verdicts[(i / 5) % 4];

			n = snprintf(line, sizeof(line), "{\"host\":\"%s\",\"seq\":%d,\"kind\":\"shield\",\"ts\":%lld,"
				     "\"shield\":\"%s\",%s%s%s\"comm\":\"x%d\"}\n", host, i, ts,
				     shields[(i / 10) % 2], v ? "\"verdict\":\"" : "", v ? v : "",
				     v ? "\"," : "", i % 3);
			hits++;
		} else {
			n = snprintf(line, sizeof(line), "{\"host\":\"%s\",\"seq\":%d,\"kind\":\"exec\",\"ts\":%lld,"
				     "\"comm\":\"sh\",\"binary\":\"/bin/sh\"}\n", host, i, ts);
		}
		memcpy(frame + len, line, n);
		len += n;
	}
	s = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0, "can't reach NATS");
	f = fdopen(s, "r+");
	cr_assert(f && fgets(reply, sizeof(reply), f) && !strncmp(reply, "INFO", 4));
	n = snprintf(hdr, sizeof(hdr), "CONNECT {\"user\":\"%s\",\"pass\":\"%s\",\"verbose\":false}\r\n"
		     "PUB kshield.events.%s %zu\r\n", user, pass, host, len);
	fwrite(hdr, 1, n, f);
	fwrite(frame, 1, len, f);
	fputs("\r\nPING\r\n", f);
	fflush(f);
	while (fgets(reply, sizeof(reply), f) && strncmp(reply, "PONG", 4) && strncmp(reply, "-ERR", 4))
		;
	cr_assert(!strncmp(reply, "PONG", 4), "NATS said %s", reply);
	fclose(f);
	free(frame);
	return hits;
}

static json_object *collect(const char *extra)
{
	char cmd[1400];
	json_object *o;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -j collect --pg '%s' --drain %s --nats %s", ks_bin(), conninfo,
		 extra, urls);
	o = ks_run_json(cmd, &rc, NULL);
	cr_assert(o && rc == 0, "collect failed");
	return o;
}

Test(fleet_hits, rollups_equal_the_rows_through_every_write_path)
{
	char sql[1024];
	json_object *o;
	long long hits;
	int old;

	json_object_put(collect(""));	/* the tables */

	/* COPY: 600 events, 120 hits (12 of them in 2015) */
	hits = publish(1, 600, 60);
	old = 12;
	json_object_put(collect(""));
	expect_hits(hits, "copied");
	/* the batch's hits after its other rows, partition by partition */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM (SELECT max(ctid) FILTER (WHERE kind <> 'shield') a,"
		 " min(ctid) FILTER (WHERE kind = 'shield') b FROM ks_events WHERE host = '%s'"
		 " GROUP BY tableoid) p WHERE a > b", host);
	cr_expect_eq(pg_int(sql), 0, "hits stored among the batch's other rows");

	/* the staging path: 301..900 again, 301..600 already stored */
	hits += publish(301, 900, 0) - 60;
	o = collect("");
	cr_expect_eq(json_object_get_int64(ks_json_get(o, "duplicates")), 300);
	cr_expect_geq(json_object_get_int64(ks_json_get(o, "staged_batches")), 1);
	json_object_put(o);
	expect_hits(hits, "re-sent");

	/* a store from before the rollups, written to by an older collector */
	ks_sh_ok("psql '%s' -q -v ON_ERROR_STOP=1 -c 'DROP TRIGGER ks_hits_add ON ks_events' "
		 "-c 'DROP FUNCTION ks_hits_add()' -c 'DROP TABLE ks_hits_day, ks_hits_hour'", conninfo);
	snprintf(sql, sizeof(sql), "INSERT INTO ks_events (host, seq, ts, kind, data) SELECT '%s', i, now(),"
		 " 'shield', jsonb_build_object('shield', 'cve-2026-43500', 'verdict', 'refused')"
		 " FROM generate_series(1001, 1010) i", host);
	ks_sh_ok("psql '%s' -q -v ON_ERROR_STOP=1 <<'SQL'\n%s\nSQL", conninfo, sql);
	hits += 10;
	json_object_put(collect(""));
	expect_hits(hits, "filled at the upgrade");

	/* retention: 2015-06-01 goes, with its hits rolled up */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ks_hits_day WHERE host = '%s' AND day = '2015-06-01'",
		 host);
	cr_expect_gt(pg_int(sql), 0, "no 2015 hits rolled up");
	json_object_put(collect("--retain-days 3650"));
	cr_expect_eq(pg_int("SELECT count(*) FROM pg_class WHERE relname = 'ks_events_20150601'"), 0);
	cr_expect_eq(pg_int(sql), 0, "2015's rolled-up hits outlived its partition");
	expect_hits(hits - old, "after retention");
}
