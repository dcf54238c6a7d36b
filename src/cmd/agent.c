// SPDX-License-Identifier: MIT
/* agent.c - `kshield agent`: the long-running service. It starts (or
 * adopts) the pinned monitor, keeps the shields directory loaded, and
 * moves every record from the pinned ring buffer into the event store.
 *
 *	kshield agent [--config FILE] [--check] [--store PATH] [--keep 30d]
 *		      [--max-size 1G] [--json FILE|-] [--shields-dir DIR]
 *		      [--no-shields]
 *
 * The agent is not what enforces: shields and the monitor are pinned and
 * keep working while it is down, and their records wait in the ring buffer.
 * So nothing on the store side may stop it: a locked, corrupt, unwritable
 * or full store is reported in one line, the records that could not be
 * stored are counted (mon_agent.unstored, `kshield stats`), and the store is
 * retried every few seconds until it works again.
 *
 * Everything between the ring buffers and the store (batches, the
 * store's failures, the exact accounting, the wall clock's steps) is the
 * library's ingest (src/lib/monitor/ingest.h); the agent drives it, keeps
 * the shields in sync, serves metrics and says what happens. SIGINT and
 * SIGTERM drain the ring buffer and commit; records not yet stored when
 * the agent is killed stay in the ring buffer for the next agent.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "array.h"
#include "btf_find.h"
#include "cli.h"
#include "clock.h"
#include "sockaddr.h"
#include "config.h"
#ifndef KSHIELD_STATIC
#include "fleet_cli.h"	/* --fleet: desired shields from NATS, events out */
#include "fleet_btf.h"	/* --fleet: this kernel's BTF from a signed bundle */
#include <kshield/event.h>
#include "metrics_http.h"	/* --metrics: /metrics over HTTP */
#endif
#include "guard.h"
#include "kernel_sites.h"
#include "meta.h"
#include "selfdefence.h"
#include "metrics.h"
#include "monitor.h"
#include "pins.h"
#include "ingest.h"
#include "shieldset.h"
#include "store.h"
#include "sysinfo.h"
#include "units.h"

#define TICK_MS		100	/* ring-buffer drain and batch-age period */
#define TEXTFILE_MS	5000	/* --metrics-textfile rewrite period */

struct agent {
	struct ks_config cfg;
	struct ks_monitor_cfg mcfg;	/* socket families to report, wakeups */
	bool no_shields;
	const char *json_path;
	FILE *json;
	struct ks_monitor mon;
	struct ks_ingest in;		/* rings -> store (ingest.h) */
	long long tick_at;		/* next tick (ks_mono_ms) */
	long long textfile_at;
	struct ks_metrics_agent m;	/* gates; per-kind counters copied from in */
	bool textfile_failed;
#ifndef KSHIELD_STATIC
	struct ks_metrics_http *http;	/* --metrics */
#endif
};

static volatile sig_atomic_t stop_requested, reload_requested;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_requested = 1;
	else
		stop_requested = 1;
}

/* ---- metrics: Prometheus text over HTTP (--metrics) or a textfile ---- */

static int metrics_text(struct agent *a, char **text, size_t *len)
{
	memcpy(a->m.received, a->in.received, sizeof(a->m.received));
	memcpy(a->m.stored, a->in.stored, sizeof(a->m.stored));
	memcpy(a->m.unstored, a->in.unstored, sizeof(a->m.unstored));
	a->m.store_errors = a->in.st.store_errors;
	return ks_metrics_render(&a->m, a->in.store, a->cfg.store, text, len);
}

/* node_exporter's textfile collector reads *.prom files whole: write a
 * temporary file and rename it over the old one. */
static void metrics_textfile(struct agent *a)
{
	char tmp[sizeof(a->cfg.metrics_textfile) + 8], *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!a->cfg.metrics_textfile[0] || a->in.now_ms < a->textfile_at)
		return;
	a->textfile_at = a->in.now_ms + TEXTFILE_MS;
	if (metrics_text(a, &text, &len))
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", a->cfg.metrics_textfile);
	f = fopen(tmp, "we");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) || rename(tmp, a->cfg.metrics_textfile)) {
		if (!a->textfile_failed)	/* once per failing streak */
			ks_log("metrics: can't write %s: %s", a->cfg.metrics_textfile, strerror(errno));
		a->textfile_failed = true;
		unlink(tmp);
	} else {
		a->textfile_failed = false;
	}
	free(text);
}

#ifndef KSHIELD_STATIC
static int scrape(void *a, char **text, size_t *len)
{
	return metrics_text(a, text, len);
}

/* Driven from the agent's loop (no thread of its own): a scrape reads the
 * agent's counters and store without locks, at most one tick late. A port
 * that is taken is reported and the agent goes on: metrics never stop it. */
static int metrics_serve(struct agent *a)
{
	if (!a->cfg.metrics[0])
		return 0;
	if (ks_metrics_http_start(a->cfg.metrics, "--metrics", false, scrape, a, &a->http)) {
		ks_log("metrics: %s; no metrics served", ks_errmsg());
		return 0;
	}
	ks_log("metrics: serving http://%s/metrics", a->cfg.metrics);
	return 0;
}
#endif

/* ---- periodic work ---- */

static void tick(struct agent *a)
{
	ks_ingest_tick(&a->in, NULL);	/* store, retention, losses, clock */
	ks_selfdefence_tick(&a->cfg, &a->mon, a->in.store);	/* repair + record tampering */
	metrics_textfile(a);
#ifndef KSHIELD_STATIC
	ks_metrics_http_run(a->http);
#endif
}

/* Shield management: bring the pins in line with the shields directory
 * (at start and on SIGHUP). Failures are reported; what was enforcing
 * keeps enforcing. */
static void shields_sync(struct agent *a)
{
	struct ks_sync_result res = {};
	struct stat sb;
	int err;

	if (a->no_shields)
		return;
	if (stat(a->cfg.shields_dir, &sb)) {
		ks_log("shields: no directory %s; no shields loaded", a->cfg.shields_dir);
		return;
	}
	err = ks_shieldset_sync(&a->cfg, &res);
	a->m.ngates = 0;
	for (int i = 0; i < res.n; i++) {
		const struct ks_sync_item *it = &res.items[i];

		if (it->gate[0] && a->m.ngates < (int)ARRAY_SIZE(a->m.gates)) {
			snprintf(a->m.gates[a->m.ngates].name, sizeof(a->m.gates[0].name), "%s", it->name);
			snprintf(a->m.gates[a->m.ngates++].gate, sizeof(a->m.gates[0].gate), "%s", it->gate);
		}

		if (it->action == KS_SYNC_FAILED) {
			ks_log("shield %s: %s", it->name[0] ? it->name : it->object, it->why);
		} else if (it->action == KS_SYNC_REFUSED) {
			ks_log("shield %s: weakening refused, left %s: %s", it->name,
			    ks_mode_str(it->mode), it->why);
			ks_selfdefence_refused(a->in.store, it->name, it->why);
		} else if (it->gate[0] && strcmp(it->gate, "proven"))
			ks_log("shield %s: %s (%s, %s%s): %s", it->name, ks_sync_action_str(it->action),
			    it->variant, ks_mode_str(it->mode), it->promoted ? ", promoted" : "",
			    it->why);
		else
			ks_log("shield %s: %s (%s, %s%s)", it->name, ks_sync_action_str(it->action),
			    it->variant, ks_mode_str(it->mode), it->gate[0] ? ", proven here" : "");
	}
	if (err && err != -EAGAIN)
		ks_log("shields: %s", ks_errmsg());
	ks_sync_result_free(&res);
	ks_selfdefence_synced(&a->cfg, a->in.store);	/* guard, protected ids */
	/* Loading objects parsed the kernel's BTF (megabytes each time), all
	 * freed by now: give it back, or it stays resident for the agent's life. */
	malloc_trim(0);
}

/* ---- start, loop, stop ---- */

static void add_old_ring(int fd, void *ctx)
{
	struct agent *a = ctx;

	if (ks_ingest_ring_add(&a->in, fd))
		ks_log("can't read the older ring buffer set aside: %s", ks_errmsg());
}

static int agent_start(struct agent *a)
{
	struct ks_monitor_cfg mcfg;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	mcfg = a->mcfg;
	if (!ks_btf_kernel_has()) {
		/* Every load relocates against it: say which, or stop here. */
		struct ks_btf_src btf;

		if ((err = ks_btf_find(&btf)))
			return err;
		ks_log("no BTF: using BTF from %s for build ID %s (%s)", btf.source, btf.build_id,
		       btf.path);
	}
	if ((err = ks_monitor_start(&a->mon, &mcfg)))
		return err;
	ks_log("monitor %s (%d links pinned under %s/monitor; syscalls by %s; flow %s%s)",
	    a->mon.adopted ? "adopted" : a->mon.replaced ? "replaced" : "loaded",
	    a->mon.nlinks, ks_bpffs_root,
	    a->mon.sys_fentry ? "fentry/fexit" : "tracepoints",
	    !a->cfg.flow ? "off" : ks_monitor_flow_per_call() ? "on, per call" : "on, per packet",
	    a->mon.flow_detached ? ", its links detached" : "");
	if (!ks_btf_kernel_has())
		ks_log("monitor: no BTF of the kernel's own: exec, fork and TCP state changes at "
		       "raw tracepoints (__nobtf), %s%s",
		       ks_cgroup2_path() ? "connecting sockets' cookies from cgroup connect4/6" :
		       "connects without their owner (no cgroup2 mount for connect4/6)",
		       a->cfg.flow ? ", flows per packet" : "");
	if (a->mon.sys_fentry_why[0])
		ks_log("monitor: syscalls by tracepoints, fentry/fexit refused here: %s",
		    a->mon.sys_fentry_why);
	if (a->mon.unpinned)
		ks_log("monitor: %d tracepoint links held by the agent only: this kernel cannot "
		    "pin them (BPF perf links, 5.15+), so they stop when the agent stops",
		    a->mon.unpinned);
	/* Name ourselves before loading shields: our own BPF loads are not
	 * `bpf` events. */
	a->in.o.stats_fd = a->mon.agent_fd;
	ks_ingest_publish(&a->in, true);
	if ((err = ks_ingest_ring_add(&a->in, a->mon.events_fd)))
		return err;
	/* Shields loaded before an upgrade that changed the ring buffer still
	 * write into the one set aside: read it too. */
	ks_pins_old_maps("ks_events", false, add_old_ring, a);
	if (a->mon.migrated[0])
		ks_log("migrated from an older kshield: %s; programs loaded before keep the old "
		    "map (shields keep enforcing, their events and losses still counted)",
		    a->mon.migrated);
	if (a->json_path) {
		a->json = strcmp(a->json_path, "-") ? fopen(a->json_path, "ae") : stdout;
		if (!a->json)
			return ks_err(-errno, "can't open %s: %s", a->json_path, strerror(errno));
		setvbuf(a->json, NULL, _IOLBF, 0);
		a->in.json = a->json;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ks_ingest_start(&a->in, NULL);
	if (a->in.store)
		ks_log("storing events in %s", a->cfg.store);
#ifndef KSHIELD_STATIC
	if ((err = metrics_serve(a)))
		return err;
#else
	if (a->cfg.metrics[0])
		ks_log("metrics: this static build serves no HTTP; use --metrics-textfile");
#endif
	return 0;
}

static void agent_stop(struct agent *a)
{
	ks_ingest_drain(&a->in);
	ks_log("stopped: %llu events received, %llu stored, %llu not stored",
	    (unsigned long long)a->in.st.received, (unsigned long long)a->in.st.stored,
	    (unsigned long long)a->in.st.unstored);
	{
		char which[512];
		__u64 missed;

		if (!ks_monitor_read_missed(&missed, which, sizeof(which)) && missed)
			ks_log("the kernel skipped %llu runs of the monitor's programs (%s): their "
			       "records were never made (losses table, kind 'missed')",
			       (unsigned long long)missed, which);
	}
#ifndef KSHIELD_STATIC
	ks_metrics_http_stop(a->http);
#endif
	ks_ingest_close(&a->in);	/* gives back the space of what was stored or counted */
	if (a->json && a->json != stdout)
		fclose(a->json);
	ks_monitor_close(&a->mon);
}

static int agent_run(struct agent *a)
{
	const struct ks_ingest_opts io = { .cfg = &a->cfg, .stats_fd = -1 };
	int err;

	ks_ingest_init(&a->in, &io);
	if ((err = agent_start(a))) {
		agent_stop(a);
		return ks_report(err);
	}
	shields_sync(a);
	while (!stop_requested) {
		/* Woken every mon_config.wakeup_every records or TICK_MS;
		 * every pass reads all there is, the low-rate tail too. */
		ks_ingest_wait(&a->in, TICK_MS);
		if ((err = ks_ingest_read(&a->in)) < 0) {
			ks_err(err, "reading the ring buffer: %s", strerror(-err));
			break;
		}
		if (ks_mono_ms() < a->tick_at && !reload_requested)
			continue;
		a->tick_at = ks_mono_ms() + TICK_MS;
		tick(a);
		if (reload_requested) {
			reload_requested = 0;
			if (ks_config_reload(&a->cfg))
				ks_log("config: %s; keeping the previous one", ks_errmsg());
			shields_sync(a);
		}
	}
	agent_stop(a);
	return err < 0 && err != -EINTR ? ks_report(err) : 0;
}

/* ---- command line ---- */

/* --socket-families: names or numbers, "netlink:N" for one netlink
 * protocol, "netlink" for all of them, "default" for the built-in list.
 * The result replaces the monitor's pinned mon_config at start. */
static int parse_families(const char *list, struct ks_monitor_cfg *c)
{
	static const struct { const char *name; int af; } names[] = {
		{ "unix", 1 }, { "inet", 2 }, { "ax25", 3 }, { "appletalk", 5 }, { "x25", 9 },
		{ "inet6", 10 }, { "key", 15 }, { "netlink", 16 }, { "packet", 17 }, { "rds", 21 },
		{ "pppox", 24 }, { "llc", 26 }, { "can", 29 }, { "tipc", 30 }, { "bluetooth", 31 },
		{ "rxrpc", 33 }, { "isdn", 34 }, { "phonet", 35 }, { "ieee802154", 36 },
		{ "caif", 37 }, { "alg", 38 }, { "nfc", 39 }, { "vsock", 40 }, { "kcm", 41 },
		{ "qipcrtr", 42 }, { "smc", 43 }, { "xdp", 44 }, { "mctp", 45 },
	};
	struct ks_monitor_cfg def;
	char buf[512], *end, *save = NULL;

	ks_monitor_default_cfg(&def);
	c->families = 0;
	c->netlink_protos = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		long v = -1;

		if (!strcmp(t, "default")) {
			c->families |= def.families;
			c->netlink_protos |= def.netlink_protos;
			continue;
		}
		if (!strncmp(t, "netlink:", 8)) {
			v = strtol(t + 8, &end, 10);
			if (*end || end == t + 8 || v < 0 || v > 31)
				return ks_err(-EINVAL, "--socket-families: '%s': netlink protocols are 0..31", t);
			c->families |= 1ULL << 16;
			c->netlink_protos |= 1u << v;
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			if (!strcmp(t, names[i].name))
				v = names[i].af;
		if (v < 0) {
			v = strtol(t, &end, 10);
			if (*end || end == t || v < 0 || v > 63)
				return ks_err(-EINVAL, "--socket-families: '%s' is not an address family "
					      "(a name like alg, packet, vsock, a number below 64, or netlink:N)", t);
		}
		c->families |= 1ULL << v;
		if (v == 16)
			c->netlink_protos = ~0u;
	}
	return 0;
}


static int agent_help(void)
{
	fprintf(stderr,
		"Usage: kshield agent [--config FILE] [--store PATH] [--keep DURATION]\n"
		"                     [--max-size SIZE] [--json FILE|-] [--shields-dir DIR]\n"
		"                     [--no-shields] [--fleet URLS --keys DIR|--root-keys DIR [fleet agent options]]\n"
		"       kshield agent --check [--config FILE]\n"
		"\n"
		"Runs the monitor (adopting the pinned one), loads the shields directory,\n"
		"and stores every event in an SQLite database (default %s).\n"
		"  --keep 30d       delete events older than this (s, m, h, d, w)\n"
		"  --max-size 1G    delete the oldest events beyond this size (K, M, G)\n"
		"  --json FILE|-    also write each event as one JSON line\n"
		"  --socket-families LIST   families reported at socket(): names, numbers,\n"
		"                   netlink:N, 'default' (alg, packet, vsock, rxrpc, ...)\n"
		"  --flow-interval 60s   interim flow records of connections still moving data\n"
		"  --no-flow        no flow records (exec/connect only: no flow programs)\n"
		"  --flow-per-packet   count flows per packet even on 6.5+, where they are\n"
		"                   counted per send/receive call (tests the older kernels' way)\n"
		"  --metrics ADDR:PORT   serve Prometheus metrics on http://ADDR:PORT/metrics\n"
		"                   (config key metrics; 127.0.0.1:9477 keeps them local; off)\n"
		"  --metrics-textfile PATH   write them to PATH every 5s (node_exporter textfile)\n"
		"SIGINT/SIGTERM flush and exit; SIGHUP reloads the shields directory.\n",
		KS_STORE_DEFAULT);
	return 0;
}

static int agent_check(struct agent *a)
{
	struct ks_sync_result res = {};
	int err = ks_shieldset_check(&a->cfg, &res);

	if (json_output) {
		ks_json_print(ks_sync_json(&res));
	} else {
		for (int i = 0; i < res.n; i++)
			printf("%-24s %s%s%s\n", res.items[i].name[0] ? res.items[i].name :
			       res.items[i].object, ks_sync_action_str(res.items[i].action),
			       res.items[i].why[0] ? ": " : "", res.items[i].why);
		for (int i = 0; i < res.nwarn; i++)
			printf("warning: %s\n", res.warn[i]);
		if (!err)
			printf("config %s: ok\n", a->cfg.path[0] ? a->cfg.path : "(defaults)");
	}
	ks_sync_result_free(&res);
	return err ? ks_report(err) : 0;
}

#ifndef KSHIELD_STATIC
/* This agent's facts in its fleet registration (the fleet page shows
 * them): the tamper guard's state and the events the ring buffer lost,
 * both read from their pinned maps, so safe from the fleet's thread. */
static void fleet_facts(struct json_object *o)
{
	struct ks_guard_state g;
	__u64 lost[KS_EV_KIND_MAX], sum = 0;

	json_object_object_add(o, "guard", json_object_new_string(ks_guard_get(&g) ? "not loaded" :
		!g.enabled ? "off" : g.lsm ? "on, refusing" : "on, recording"));
	if (!ks_monitor_read_lost(lost)) {
		for (int i = 0; i < KS_EV_KIND_MAX; i++)
			sum += lost[i];
		json_object_object_add(o, "lost", json_object_new_int64(sum));
	}
}

/* A kernel without BTF and none found yet: the monitor and the first
 * shields need it before the fleet loop delivers anything, so take this
 * kernel's from a signed bundle in the fleet now (fleet_btf.h). Failing
 * that, the start says the usual one line. */
static void fleet_btf_first(const struct ks_converge_cfg *fleet)
{
	struct ks_nats_opts no = fleet->nats;
	enum ks_fleet_btf_got got;
	struct ks_btf_src btf;
	char keys[4096], from[KS_NAME_LEN];
	struct ks_nats n;

	if (ks_btf_kernel_has() || ks_btf_find(&btf) != -ENOENT)
		return;
	ks_converge_keys_dir(fleet, keys, sizeof(keys));
	no.retry_connect = false;
	if (!ks_nats_open(&n, &no, false, false)) {
		if (!ks_fleet_btf_fetch(&n, keys, NULL, from, sizeof(from), &got))
			ks_log("fleet: BTF for this kernel from the signed bundle of %s, kept in %s",
			       from, ks_btf_dir());
		else
			ks_log("fleet: %s", ks_errmsg());
		ks_nats_close(&n);
	} else {
		ks_log("fleet: BTF for this kernel not fetched: %s", ks_errmsg());
	}
}
#endif

int do_agent(int argc, char **argv)
{
	static struct agent a;	/* big (config); lives as long as the process */
	const char *config = NULL, *store = NULL, *keep = NULL, *maxsz = NULL, *dir = NULL,
		   *families = NULL, *flow_iv = NULL, *metrics = NULL, *textfile = NULL;
	bool check = false, no_flow = false, per_packet = false;
	int err;
#ifndef KSHIELD_STATIC
	struct ks_converge_cfg fleet = { 0 };
	bool fleet_on;
#endif
	/* The agent's own options first: its --store is also the fleet's. */
	const struct ks_opt opts[] = {
		OPT_VAL("--config", &config), OPT_VAL("--store", &store), OPT_VAL("--keep", &keep),
		OPT_VAL("--max-size", &maxsz), OPT_VAL("--json", &a.json_path),
		OPT_VAL("--shields-dir", &dir), OPT_VAL("--socket-families", &families),
		OPT_VAL("--flow-interval", &flow_iv), OPT_VAL("--metrics", &metrics),
		OPT_VAL("--metrics-textfile", &textfile), OPT_FLAG("--check", &check),
		OPT_FLAG("--no-shields", &a.no_shields), OPT_FLAG("--no-flow", &no_flow),
		OPT_FLAG("--flow-per-packet", &per_packet),
#ifndef KSHIELD_STATIC
		OPTS_FLEET_AGENT(&fleet),
#endif
		OPT_END
	};

	ks_log_set_prefix("kshield agent");
	if (!ks_opts_parse("agent", opts, argc, argv, 0, NULL, agent_help, &err))
		return err;
#ifndef KSHIELD_STATIC
	fleet_on = fleet.nats.urls != NULL;	/* --fleet or --nats */
#endif
	ks_config_defaults(&a.cfg);
	if ((err = ks_config_load(&a.cfg, config ? config : KS_CONFIG_DEFAULT, config != NULL)))
		return ks_report(err);
	if (a.cfg.bpffs[0] && !strcmp(ks_bpffs_root, KS_PIN_ROOT_DEFAULT))
		ks_bpffs_root = a.cfg.bpffs;
	if (store)
		snprintf(a.cfg.store, sizeof(a.cfg.store), "%s", store);
	if (dir)
		snprintf(a.cfg.shields_dir, sizeof(a.cfg.shields_dir), "%s", dir);
	if (metrics && strlen(metrics) >= sizeof(a.cfg.metrics))
		return ks_usage("--metrics: ADDR:PORT like 127.0.0.1:9477");
	if (metrics)
		snprintf(a.cfg.metrics, sizeof(a.cfg.metrics), "%s", strcmp(metrics, "off") ? metrics : "");
	if (textfile)
		snprintf(a.cfg.metrics_textfile, sizeof(a.cfg.metrics_textfile), "%s", textfile);
#ifndef KSHIELD_STATIC
	{
		struct sockaddr_storage ss;

		if (a.cfg.metrics[0] && (err = ks_addr_port_parse(a.cfg.metrics, "--metrics", &ss)))
			return ks_report(err);
	}
#endif
	if (keep) {
		__u64 ns;

		if ((err = ks_duration_parse(keep, "--keep", &ns)))
			return ks_report(err);
		a.cfg.retention_s = ns / 1000000000ULL;
	}
	if (maxsz && (err = ks_size_parse(maxsz, "--max-size", &a.cfg.max_size)))
		return ks_report(err);
	if (a.cfg.max_size && a.cfg.max_size < (1u << 20))
		return ks_usage("--max-size: at least 1M");
	ks_monitor_default_cfg(&a.mcfg);
	if (families && (err = parse_families(families, &a.mcfg)))
		return ks_report(err);
	a.mcfg.flow_interval_ns = a.cfg.flow_interval_s * 1000000000ULL;
	if (flow_iv && (err = ks_duration_parse(flow_iv, "--flow-interval", &a.mcfg.flow_interval_ns)))
		return ks_report(err);
	if (!a.mcfg.flow_interval_ns)
		return ks_usage("--flow-interval: more than 0, like 60s");
	if (no_flow)
		a.cfg.flow = false;
	ks_monitor_set_flow(a.cfg.flow);
	ks_monitor_set_flow_per_packet(per_packet);
#ifndef KSHIELD_STATIC
	if (fleet_on && !fleet.keys_dir && !fleet.root_dir && a.cfg.keys_dir[0])
		fleet.keys_dir = a.cfg.keys_dir;
	/* Shields on kernel:FUNCTION read their sites manifest from the
	 * config's directory; with trusted keys (the ones that sign fleet
	 * shields), only a manifest one of them signed. */
	{
		char fleet_keys[4096];

		ks_converge_keys_dir(&fleet, fleet_keys, sizeof(fleet_keys));
		ks_kernel_sites_policy(a.cfg.sites_dir, fleet_on ? fleet_keys : a.cfg.keys_dir);
	}
#else
	ks_kernel_sites_policy(a.cfg.sites_dir, a.cfg.keys_dir);
#endif
	if (!btf_dir_opt)	/* --btf-dir, then the config's btf_dir */
		ks_btf_set_dir(a.cfg.btf_dir);
	ks_shield_args_add_dir(a.cfg.shields_dir);	/* hits of shields it did not load */
#ifndef KSHIELD_STATIC
	if (fleet_on)
		ks_shield_args_add_dir(fleet.state_dir ? fleet.state_dir : KS_FLEET_STATE_DEFAULT);
#endif
	if (check)
		return agent_check(&a);
#ifndef KSHIELD_STATIC
	if (fleet_on) {
		/* The fleet loop runs in its own threads (fleet_converge.c) and
		 * ships this agent's store. */
		fleet.store = a.cfg.store;
		fleet.gated |= a.cfg.gated;	/* the config's gated = on gates fleet shields too */
		fleet.host_facts = fleet_facts;
		fleet_btf_first(&fleet);
		if ((err = ks_converge_start(&fleet)))
			return ks_report(err);
		err = agent_run(&a);
		ks_converge_stop();
		return err;
	}
#endif
	return agent_run(&a);
}
