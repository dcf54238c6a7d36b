// SPDX-License-Identifier: MIT
/* test_fleet_ui.c - the fleet page (`kshield fleet view`) in a real browser:
 * Debian's chromium, headless, driven through chromedriver (webdriver.h).
 *
 * scripts/run-fleet.sh starts the fleet (3-node NATS and PostgreSQL on
 * loopback, the collector, control-plane agents, one real agent on this
 * host with its monitor and store) and deploys cve-2026-43500 with
 * --audit-first; a perl copied to a file named `<img src=x onerror=alert(1)>`
 * then opens AF_RXRPC sockets, which the shield audits on this kernel. The
 * test opens every view and checks that the page's numbers are NATS's
 * (`fleet status`, `fleet hosts`) and PostgreSQL's (psql), that the hostile
 * name shows as those characters with no element made of it and no dialog,
 * and that every request of the page stays on loopback (chromium's network
 * log; the browser's own background requests go to a proxy that is not
 * there, so nothing leaves the machine). Screenshots go to $KSHIELD_UI_SHOTS
 * (make test-fleet-ui: docs/).
 *
 * It loads BPF on the host: run it under flock /tmp/ks/host.lock where
 * others share the machine.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include "fleet_harness.h"
#include "webdriver.h"

#define SHIELD "cve-2026-43500"
#define HOSTILE "<img src=x onerror=alert(1)>"
#define CP 20		/* control-plane agents */
#define TRIGGERS 5

static char dir[128], nats[1024], pg[256], hostname[256], url[128];
static int view_port;
static pid_t driver;

static void env_value(const char *env, const char *key, char *out, size_t n)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\n%s=", key);
	p = strstr(env, pat);
	cr_assert(p, "no %s in fleet.env", key);
	p += strlen(pat);
	if (*p == '"')
		p++;
	e = p + strcspn(p, "\"\n");
	snprintf(out, n, "%.*s", (int)(e - p), p);
}

static void fleet_down(void)
{
	if (driver > 0) {
		kill(driver, SIGTERM);
		waitpid(driver, NULL, 0);
		driver = 0;
	}
	if (dir[0]) {
		ks_runf(NULL, NULL, "scripts/run-fleet.sh stop %s", dir);
		if (!getenv("KSHIELD_UI_KEEP"))
			ks_runf(NULL, NULL, "rm -rf %s", dir);
	}
}

/* One integer from PostgreSQL. */
static long long pg_int(const char *sql)
{
	char *out = NULL;
	long long v;
	int rc = ks_runf(&out, NULL, "psql '%s' -Atq <<'SQL'\n%s\nSQL", pg, sql);

	cr_assert_eq(rc, 0, "psql failed: %s", sql);
	v = atoll(out);
	free(out);
	return v;
}

/* `kshield -j fleet status` (NATS): the shield's summary, or NULL. */
static json_object *nats_summary(json_object **all)
{
	char cmd[1400];

	snprintf(cmd, sizeof(cmd), "%s -j fleet status --nats %s", ks_bin(), nats);
	*all = ks_run_json(cmd, NULL, NULL);
	for (size_t i = 0; *all && i < json_object_array_length(*all); i++) {
		json_object *s = json_object_array_get_idx(*all, i);

		if (!strcmp(json_object_get_string(json_object_object_get(s, "shield")), SHIELD))
			return s;
	}
	return NULL;
}

static long long jint(json_object *o, const char *k)
{
	return json_object_get_int64(json_object_object_get(o, k));
}

/* The page's view at @hash, once drawn. */
static void open_view(struct wd *w, const char *hash)
{
	char u[600], js[700];

	snprintf(u, sizeof(u), "%s%s", url, hash);
	wd_go(w, u);
	snprintf(js, sizeof(js), "const m = document.getElementById('main');"
		 "return m !== null && m.getAttribute('data-ready') === decodeURIComponent('%s');", hash);
	cr_assert(wd_wait(w, js, 30), "view %s was not drawn in 30 s: %s", hash,
		  wd_js_str(w, "return document.getElementById('main').textContent"));
}

/* A number the page shows in an element with data-k=@k under @scope. */
static long long page_num(struct wd *w, const char *scope, const char *k)
{
	char js[600], *s;
	long long v;

	snprintf(js, sizeof(js), "const e = document.querySelector(\"%s [data-k='%s']\");"
		 "return e ? e.textContent : 'missing';", scope, k);
	s = wd_js_str(w, js);
	cr_assert(strcmp(s, "missing"), "the page has no %s %s", scope, k);
	v = atoll(s);
	free(s);
	return v;
}

static void shot(struct wd *w, const char *name)
{
	const char *d = getenv("KSHIELD_UI_SHOTS");
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", d && *d ? d : dir, name);
	wd_screenshot(w, path);
	cr_log_info("screenshot %s", path);
}

/* Who may read the page: loopback with the right Host, a token elsewhere
 * (here: a second view on loopback started with one), GET only, CSP. */
static void check_http(void)
{
	char tok[300], *out = NULL;
	int port = ks_free_port();

	snprintf(tok, sizeof(tok), "%s/token", dir);
	ks_sh_ok("echo 0123456789abcdef-the-token > %s && chmod 600 %s", tok, tok);
	ks_sh_ok("cd %s && (setsid %s fleet view --pg '%s' --listen 127.0.0.1:%d --token-file %s "
		 "--nats %s > view2.log 2>&1 & echo $! > view2.pid) && for i in $(seq 50); do "
		 "grep -q 'fleet view:' view2.log && break; sleep 0.1; done",
		 dir, realpath(ks_bin(), NULL), pg, port, tok, nats);
#define CODE(fmt, ...) ks_runf(&out, NULL, "curl -s -o /dev/null -w '%%{http_code}' " fmt, __VA_ARGS__)
	CODE("http://127.0.0.1:%d/api/coverage", port);
	cr_expect_str_eq(out, "401", "no token: %s", out);
	free(out);
	CODE("-H 'Authorization: Bearer 0123456789abcdef-the-token' http://127.0.0.1:%d/api/coverage", port);
	cr_expect_str_eq(out, "200", "bearer token: %s", out);
	free(out);
	CODE("-H 'Authorization: Bearer 0123456789abcdef-wrong' http://127.0.0.1:%d/api/coverage", port);
	cr_expect_str_eq(out, "401", "wrong token: %s", out);
	free(out);
	CODE("'http://127.0.0.1:%d/?token=0123456789abcdef-the-token'", port);
	cr_expect_str_eq(out, "303", "?token=: %s", out);
	free(out);
	/* the page's own server: a foreign Host (DNS rebinding) and writes */
	CODE("-H 'Host: attacker.example:%d' http://127.0.0.1:%d/api/coverage", view_port, view_port);
	cr_expect_str_eq(out, "403", "foreign Host: %s", out);
	free(out);
	CODE("-X POST http://127.0.0.1:%d/api/coverage", view_port);
	cr_expect_str_eq(out, "405", "POST: %s", out);
	free(out);
	ks_runf(&out, NULL, "curl -sI http://127.0.0.1:%d/", view_port);
	cr_expect(strstr(out, "Content-Security-Policy: default-src 'none'; script-src 'self'"),
		  "no strict CSP: %s", out);
	cr_expect(strstr(out, "X-Content-Type-Options: nosniff"), "no nosniff: %s", out);
	free(out);
	ks_runf(NULL, NULL, "kill $(cat %s/view2.pid)", dir);
	/* what the binary serves is the page, not a stub */
	ks_runf(&out, NULL, "curl -s http://127.0.0.1:%d/", view_port);
	cr_expect(strstr(out, "<script src=\"view.js\" defer></script>") && !strstr(out, "<script>"),
		  "index.html: %s", out);
	free(out);
}

/* Every request the page made went to its own loopback address; the
 * browser's own (no page behind them) are counted. */
static void check_netlog(const char *path)
{
	char origin[64], nik[64], *text = NULL;
	json_object *log = NULL, *events;
	int page = 0, browser = 0;

	snprintf(origin, sizeof(origin), "http://127.0.0.1:%d", view_port);
	snprintf(nik, sizeof(nik), "http://127.0.0.1 ");
	for (int i = 0; i < 50 && !log; i++, usleep(100000)) {
		free(text);
		text = ks_read_file(path);
		log = ks_json_parse(text);
	}
	free(text);
	cr_assert(log, "chromium's network log %s is not JSON", path);
	cr_assert(json_object_object_get_ex(log, "events", &events));
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *p = json_object_object_get(json_object_array_get_idx(events, i), "params");
		const char *u, *ini, *key;

		if (!p || !json_object_object_get(p, "url") || !json_object_object_get(p, "method"))
			continue;
		u = json_object_get_string(json_object_object_get(p, "url"));
		ini = json_object_get_string(json_object_object_get(p, "initiator")) ?: "";
		key = json_object_get_string(json_object_object_get(p, "network_isolation_key")) ?: "";
		if (!strcmp(ini, origin) || !strncmp(key, nik, strlen(nik))) {
			page++;
			cr_expect(!strncmp(u, origin, strlen(origin)) && u[strlen(origin)] == '/',
				  "the page asked for %s", u);
		} else {
			browser++;
			cr_log_info("chromium's own request (to the dead proxy): %.100s", u);
		}
	}
	cr_expect(page >= 8, "only %d requests of the page in the network log", page);
	cr_log_info("network log: %d requests of the page, all to %s; %d of chromium's own", page,
		    origin, browser);
	json_object_put(log);
}

Test(fleet_ui, page_equals_nats_and_postgres, .fini = fleet_down, .timeout = 300)
{
	char *env, js[1400], path[300], *s, sql[600];
	json_object *all = NULL, *sum;
	long long pg_hits, pg_host_hits;
	struct wd w = { 0 };
	int dport, dead = ks_free_port();

	cr_assert_eq(ks_runf(NULL, NULL, "test -x /usr/lib/chromium/chromium && command -v chromedriver"),
		     0, "chromium and chromium-driver are not installed (scripts/setup.sh installs them)");
	snprintf(dir, sizeof(dir), "/tmp/ks-fleet-ui-%d", (int)getpid());
	view_port = ks_free_port();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", view_port);
	ks_sh_ok("rm -rf %s && KSHIELD=%s KSHIELD_SHIELDS=%s FLEET_CP=%d FLEET_AUDIT_FIRST=10m "
		 "VIEW_LISTEN=127.0.0.1:%d scripts/run-fleet.sh start %s", dir,
		 realpath(ks_bin(), NULL), realpath(ks_shields_dir(), NULL), CP, view_port, dir);
	snprintf(path, sizeof(path), "%s/fleet.env", dir);
	s = ks_read_file(path);
	cr_assert(s);
	cr_assert(asprintf(&env, "\n%s", s) > 0);	/* every key after a newline */
	free(s);
	env_value(env, "NATS_URLS", nats, sizeof(nats));
	env_value(env, "PG_CONNINFO", pg, sizeof(pg));
	env_value(env, "HOSTNAME", hostname, sizeof(hostname));
	free(env);

	/* Every agent audits the shield; then the hostile process hits it. */
	for (int i = 0; i < 600; i++, usleep(100000)) {
		json_object_put(all);
	all = NULL;
		sum = nats_summary(&all);
		if (sum && jint(sum, "auditing") == CP + 1)
			break;
	}
	cr_assert(sum && jint(sum, "auditing") == CP + 1, "not every agent audits %s: %s", SHIELD,
		  sum ? json_object_to_json_string(sum) : "no summary");
	json_object_put(all);
	all = NULL;
	ks_sh_ok("mkdir -p %s/bin && cp \"$(command -v perl)\" '%s/bin/" HOSTILE "'", dir, dir);
	for (int i = 0; i < TRIGGERS; i++)
		ks_sh_ok("'%s/bin/" HOSTILE "' -e 'socket(S, 33, 2, 0); exit 0'", dir);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ks_events WHERE kind = 'shield' AND "
		 "host = '%s' AND data->>'shield' = '" SHIELD "' AND data->>'comm' = '<img src=x oner'",
		 hostname);
	for (int i = 0; i < 600 && pg_int(sql) < TRIGGERS; i++)
		usleep(100000);
	cr_assert_eq(pg_int(sql), TRIGGERS, "the %d hits did not reach PostgreSQL in 60 s", TRIGGERS);
	/* the hits' execs, which name their binary on the host view, may come
	 * in a later batch than the hits themselves */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ks_events WHERE kind = 'exec' AND "
		 "host = '%s' AND data->>'binary' LIKE '%%/bin/" HOSTILE "'", hostname);
	for (int i = 0; i < 600 && pg_int(sql) < TRIGGERS; i++)
		usleep(100000);
	/* the agent's audit hits reach NATS too (they hold the promotion) */
	for (int i = 0; i < 100; i++, usleep(100000)) {
		json_object_put(all);
	all = NULL;
		sum = nats_summary(&all);
		if (sum && jint(sum, "audit_hit_hosts") == 1)
			break;
	}
	cr_expect(sum && jint(sum, "audit_hit_hosts") == 1, "no audit hit reported to NATS");
	json_object_put(all);
	all = NULL;
	check_http();

	/* chromium */
	dport = ks_free_port();
	fflush(NULL);
	driver = fork();
	if (!driver) {
		char port[32], log[300];

		snprintf(port, sizeof(port), "--port=%d", dport);
		snprintf(log, sizeof(log), "--log-path=%s/chromedriver.log", dir);
		setsid();
		freopen("/dev/null", "w", stdout);
		execlp("chromedriver", "chromedriver", port, log, (char *)NULL);
		_exit(127);
	}
	w.port = dport;
	for (int i = 0; i < 100; i++, usleep(100000)) {
		json_object *o = wd_http(&w, "GET", "/status", NULL);

		json_object_put(o);
		if (o)
			break;
	}
	snprintf(path, sizeof(path), "%s/netlog.json", dir);
	{
		char profile[300];

		snprintf(profile, sizeof(profile), "%s/profile", dir);
		wd_start(&w, profile, path, dead);
	}

	/* CVE coverage: hosts per status from NATS, hits from PostgreSQL */
	open_view(&w, "#/");
	sum = nats_summary(&all);
	cr_assert(sum);
	pg_hits = pg_int("SELECT count(*) FROM ks_events WHERE kind = 'shield' AND data->>'shield' = '" SHIELD "'");
	cr_expect_geq(pg_hits, TRIGGERS);
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "targeted"), jint(sum, "targeted"));
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "enforcing"), jint(sum, "enforcing"));
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "auditing"), jint(sum, "auditing"));
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "refused"), jint(sum, "refused"));
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "failed"), jint(sum, "failed"));
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "auditing"), CP + 1);
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "not_reporting"), 0);
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "hits_pg"), pg_hits);
	cr_expect_eq(page_num(&w, "tr[data-shield='" SHIELD "']", "hit_hosts"),
		     pg_int("SELECT count(DISTINCT host) FROM ks_events WHERE kind = 'shield' AND "
			    "data->>'shield' = '" SHIELD "'"));
	{
		char cmd[1400];
		json_object *hosts;

		snprintf(cmd, sizeof(cmd), "%s -j fleet hosts --nats %s", ks_bin(), nats);
		hosts = ks_run_json(cmd, NULL, NULL);
		cr_assert(hosts);
		cr_expect_eq(page_num(&w, "main", "registered"), (long long)json_object_array_length(hosts));
		cr_expect_eq(page_num(&w, "main", "registered"), CP + 1);
		json_object_put(hosts);
	}
	json_object_put(all);
	all = NULL;
	shot(&w, "fleet-coverage.png");

	/* the shield: its hosts from NATS, its hits from PostgreSQL, its hunt */
	open_view(&w, "#/shield/" SHIELD);
	cr_assert(wd_wait(&w, "const h = document.querySelector('[data-done]'); return h !== null;", 60),
		  "the shield's hunt did not finish in 60 s");
	sum = nats_summary(&all);
	cr_expect_eq(page_num(&w, "main", "hits_total"), pg_hits);
	cr_expect_eq(page_num(&w, "main", "auditing"), jint(sum, "auditing"));
	cr_expect_eq(page_num(&w, "main", "targeted"), jint(sum, "targeted"));
	json_object_put(all);
	all = NULL;
	s = wd_js_str(&w, "return String(document.querySelectorAll(\"td[data-k='hosts']\").length)");
	cr_expect_geq(atoi(s), 2, "host groups: %s (the control plane and this kernel)", s);
	free(s);
	shot(&w, "fleet-shield.png");

	/* the host: the hostile name is text, hits grouped and decoded */
	snprintf(js, sizeof(js), "#/host/%s", hostname);
	open_view(&w, js);
	s = wd_js_str(&w, "return [...document.querySelectorAll(\"td[data-k='binary']\")]"
		      ".map(t => t.textContent).join('|')");
	cr_expect(strstr(s, "/bin/" HOSTILE), "the hostile binary name is not shown as text: %s", s);
	free(s);
	s = wd_js_str(&w, "return String(document.querySelectorAll('img').length + "
		      "document.querySelectorAll('[onerror]').length)");
	cr_expect_str_eq(s, "0", "the page made elements out of a process name");
	free(s);
	s = wd_js_str(&w, "return [...document.querySelectorAll(\"td[data-k='args']\")].map(t => t.textContent).join('|')");
	cr_expect(strstr(s, "family=AF_RXRPC"), "hit arguments not decoded: %s", s);
	free(s);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ks_events WHERE kind = 'shield' AND host = '%s'",
		 hostname);
	pg_host_hits = pg_int(sql);
	s = wd_js_str(&w, "return String([...document.querySelectorAll(\"tr[data-hit] td[data-k='hits']\")]"
		      ".reduce((a, t) => a + Number(t.textContent), 0))");
	cr_expect_eq(atoll(s), pg_host_hits, "hits on the host page %s, in PostgreSQL %lld", s, pg_host_hits);
	free(s);
	shot(&w, "fleet-host.png");

	/* rollouts: audit-first shown, and the command to promote it */
	open_view(&w, "#/rollouts");
	s = wd_js_str(&w, "return document.querySelector(\"[data-rollout='" SHIELD "'] [data-k='audit_first']\").textContent");
	cr_expect(!strncmp(s, "yes", 3), "audit-first not shown: %s", s);
	free(s);
	s = wd_js_str(&w, "return [...document.querySelectorAll('pre.cmd')].map(p => p.textContent).join('|')");
	cr_expect(strstr(s, "kshield fleet promote " SHIELD " --key KEYFILE"), "no promote command: %s", s);
	free(s);
	shot(&w, "fleet-rollouts.png");

	{
		char text[256];

		cr_expect(!wd_alert_open(&w, text, sizeof(text)), "a dialog opened: %s", text);
	}
	wd_stop(&w);
	kill(driver, SIGTERM);
	waitpid(driver, NULL, 0);
	driver = 0;
	check_netlog(path);
}
