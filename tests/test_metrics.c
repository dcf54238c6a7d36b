// SPDX-License-Identifier: MIT
/* test_metrics.c - `kshield agent --metrics` scraped by Debian's real
 * Prometheus server: the test starts prometheus on loopback with a scrape
 * config pointing at the agent, does things on this host (triggers a
 * shield, runs an exec storm), and reads the values back through
 * Prometheus's HTTP API (/api/v1/query), comparing them with what it did
 * and with the store. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include "agent_harness.h"

static struct ka_env env;
static pid_t prom;
static int agent_port, prom_port;

/* A loopback port nobody listens on now. */
static int free_port(void)
{
	int port = ks_free_port();

	cr_assert(port > 0, "no free loopback port");
	return port;
}

static void setup(void)
{
	ka_setup(&env, "metrics");
	agent_port = free_port();
	prom_port = free_port();
	prom = 0;
}

static void teardown(void)
{
	if (prom > 0) {
		kill(prom, SIGTERM);
		waitpid(prom, NULL, 0);
	}
	ks_runf(NULL, NULL, "%s shield unload %s", ks_bin(), KS_SOCKOPT_SHIELD);
	ka_teardown(&env);
}

TestSuite(metrics, .init = setup, .fini = teardown, .timeout = 180);

static void start_prometheus(void)
{
	char cfg[300], cmd[1200];
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", env.dir);
	f = fopen(cfg, "w");
	cr_assert(f);
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		"scrape_configs:\n  - job_name: kshield\n    static_configs:\n"
		"      - targets: ['127.0.0.1:%d']\n", agent_port);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "exec prometheus --config.file=%s --storage.tsdb.path=%s/tsdb "
		 "--web.listen-address=127.0.0.1:%d >%s/prometheus.log 2>&1",
		 cfg, env.dir, prom_port, env.dir);
	fflush(NULL);
	prom = fork();
	if (prom == 0) {
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
}

/* The value of instant query @q through Prometheus's HTTP API, or -1 when
 * it has no sample (yet). */
static double prom_query(const char *q)
{
	char cmd[1024], *out = NULL;
	double v = -1;

	snprintf(cmd, sizeof(cmd), "curl -sf --max-time 5 http://127.0.0.1:%d/api/v1/query "
		 "--data-urlencode 'query=%s'", prom_port, q);
	if (ks_run(cmd, &out, NULL) == 0 && out) {
		json_object *o = ks_json_parse(out), *r = ks_json_get(o, "data.result");

		if (r && json_object_array_length(r) > 0) {
			json_object *val = ks_json_get(json_object_array_get_idx(r, 0), "value");

			if (val && json_object_array_length(val) == 2)
				v = atof(json_object_get_string(json_object_array_get_idx(val, 1)));
		}
		json_object_put(o);
	}
	free(out);
	return v;
}

/* Poll @q until @ok(value) or @timeout_s; returns the last value. */
static double prom_wait(const char *q, bool (*ok)(double, double), double want, double timeout_s)
{
	double v = -1;

	for (double t0 = ka_now(); ka_now() - t0 < timeout_s; usleep(500000)) {
		v = prom_query(q);
		if (ok(v, want))
			break;
	}
	return v;
}

/* The agent's stderr once it contains @what (or after 5 s); free() it. */
static char *agent_said(const char *what)
{
	char *text = NULL;

	for (double t0 = ka_now(); ka_now() - t0 < 5; usleep(100000)) {
		free(text);
		text = ka_agent_err(&env);
		if (text && strstr(text, what))
			break;
	}
	return text;
}

static bool eq(double v, double want) { return v == want; }
static bool ge(double v, double want) { return v >= want; }

Test(metrics, t01_prometheus_scrapes_hits_events_and_the_agent_itself)
{
	char *err = NULL, extra[128], q[512];
	const int TRIGGERS = 3, STORM = 300;
	int rc;

	/* a shield that refuses here (cgroup/setsockopt), triggered 3 times */
	rc = ks_runf(NULL, &err, "%s shield load %s/%s", ks_bin(), ks_fixtures_dir(), KS_SOCKOPT_OBJ);
	cr_assert_eq(rc, 0, "shield load: %s", err);
	free(err);
	snprintf(extra, sizeof(extra), "--metrics 127.0.0.1:%d", agent_port);
	ka_start(&env, extra);
	char *aerr = agent_said("metrics:");
	cr_assert(aerr && strstr(aerr, "metrics: serving"), "agent did not serve metrics: %s", aerr);
	free(aerr);
	for (int i = 0; i < TRIGGERS; i++)
		cr_assert_neq(ks_run(KS_SOCKOPT_TRIGGER " 2>/dev/null", NULL, NULL), 0,
			      "the trigger went through");

	/* the exec storm: a marker binary path, counted in the store below */
	start_prometheus();
	cr_assert_eq(ks_runf(NULL, NULL, "for i in $(seq %d); do /bin/true; done", STORM), 0);

	snprintf(q, sizeof(q), "kshield_shield_hits_total{shield=\"%s\",verdict=\"refused\"}",
		 KS_SOCKOPT_SHIELD);
	double hits = prom_wait(q, eq, TRIGGERS, 60);
	char *plog = NULL;
	if (hits < 0) {
		char p[300];

		snprintf(p, sizeof(p), "%s/prometheus.log", env.dir);
		plog = ks_read_file(p);
	}
	cr_assert_eq(hits, TRIGGERS, "refused hits in Prometheus: %g, triggered %d (prometheus: %s)",
		     hits, TRIGGERS, plog ? plog : "");
	free(plog);
	snprintf(q, sizeof(q), "kshield_shield_info{shield=\"%s\",mode=\"enforce\",variant=\"cgroup\"}",
		 KS_SOCKOPT_SHIELD);
	cr_expect_eq(prom_query(q), 1, "shield info with mode and variant labels");
	snprintf(q, sizeof(q), "kshield_shield_hits_total{shield=\"%s\",verdict=\"audited\"}",
		 KS_SOCKOPT_SHIELD);
	cr_expect_eq(prom_query(q), 0, "audited hits of an enforcing shield");

	/* exec events stored: at least the storm, and never more than the
	 * store holds when asked afterwards (the counter is of commits) */
	double stored = prom_wait("kshield_events_stored_total{kind=\"exec\"}", ge, STORM, 30);
	cr_expect_geq(stored, STORM, "exec events stored per Prometheus: %g after %d execs", stored, STORM);
	long long in_store = ka_sql_int(env.store, "SELECT count(*) FROM events WHERE kind = 'exec'");
	cr_expect_leq(stored, (double)in_store, "Prometheus says %g exec events stored, the store has %lld",
		      stored, in_store);
	long long storm_rows = ka_sql_int(env.store, "SELECT count(*) FROM events WHERE kind = 'exec' "
					  "AND binary IN ('/bin/true', '/usr/bin/true')");
	cr_expect_geq(storm_rows, STORM, "the store has %lld runs of /usr/bin/true", storm_rows);
	cr_expect_geq(prom_query("kshield_events_received_total{kind=\"exec\"}"), stored);
	cr_expect_eq(prom_query("kshield_events_unstored_total{kind=\"exec\"}"), 0);
	/* a shield hit is an event too */
	cr_expect_geq(prom_wait("kshield_events_stored_total{kind=\"shield\"}", ge, TRIGGERS, 10), TRIGGERS);

	cr_expect_gt(prom_query("kshield_store_size_bytes"), 4096);
	double oldest = prom_query("kshield_store_oldest_event_timestamp_seconds");
	cr_expect(oldest > time(NULL) - 600 && oldest <= time(NULL) + 1, "oldest event at %g", oldest);
	cr_expect_eq(prom_query("kshield_flow_table_capacity"), 32768);
	cr_expect_geq(prom_query("kshield_flow_table_entries"), 0);
	cr_expect_geq(prom_query("kshield_ringbuf_lost_total{kind=\"exec\"}"), 0);
	cr_expect_gt(prom_query("process_resident_memory_bytes"), 1 << 20);
	cr_expect_geq(prom_query("process_cpu_seconds_total"), 0);
	cr_expect_eq(prom_query("up{job=\"kshield\"}"), 1, "Prometheus's own view of the target");
}

Test(metrics, t02_textfile_and_bad_addresses)
{
	char extra[512], path[300], *text = NULL, *err = NULL;

	snprintf(path, sizeof(path), "%s/kshield.prom", env.dir);
	snprintf(extra, sizeof(extra), "--metrics-textfile %s", path);
	ka_start(&env, extra);
	for (double t0 = ka_now(); ka_now() - t0 < 10 && !text; usleep(200000))
		text = ks_read_file(path);
	cr_assert(text, "no textfile written");
	cr_expect(strstr(text, "# TYPE kshield_events_received_total counter\n"), "%s", text);
	cr_expect(strstr(text, "kshield_shields_loaded 0\n"), "%s", text);
	free(text);
	ka_stop(&env, SIGTERM);

	/* one line saying what a good address looks like; the port is taken */
	int rc = ks_runf(NULL, &err, "%s agent --no-shields --store %s --metrics localhost", ks_bin(),
			 env.store);
	cr_expect_neq(rc, 0);
	cr_expect(err && strstr(err, "ADDR:PORT"), "stderr: %s", err);
	free(err);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(agent_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	cr_assert(!bind(l, (struct sockaddr *)&a, sizeof(a)) && !listen(l, 1));
	/* a taken port is reported, and the agent keeps storing events */
	snprintf(extra, sizeof(extra), "--metrics 127.0.0.1:%d", agent_port);
	ka_start(&env, extra);
	char *aerr = agent_said("metrics:");
	close(l);
	cr_expect(aerr && strstr(aerr, "metrics: can't listen on 127.0.0.1:") &&
		  strstr(aerr, "storing events"), "agent stderr: %s", aerr);
	free(aerr);
	cr_expect_eq(kill(env.agent, 0), 0, "the agent stopped over a taken metrics port");
}
