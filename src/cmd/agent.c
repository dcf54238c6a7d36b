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
 * Records are committed in batches of at most KS_STORE_BATCH rows or
 * KS_STORE_BATCH_MS. SIGINT/SIGTERM drain the ring buffer and commit; after
 * SIGKILL what is lost is the open batch (at most KS_STORE_BATCH rows, half
 * a second of records); records not yet read stay in the ring buffer for
 * the next agent.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
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
#include "selfdefence.h"
#include "metrics.h"
#include "monitor.h"
#include "pins.h"
#include "ringread.h"
#include "shieldset.h"
#include "store.h"
#include "sysinfo.h"
#include "units.h"

#define TICK_MS		100	/* ring-buffer drain and batch-age period */
#define RETRY_MS	2000	/* store reopen period while it is failing */
#define RETAIN_MS	10000	/* retention and loss bookkeeping period */
#define TEXTFILE_MS	5000	/* --metrics-textfile rewrite period */
#define HOLD_POLL_US	1000	/* read period while records are held and */
#define HOLD_IDLE_US	10000	/* ... when the last read found none */
#define MAX_RINGS	4	/* ks_events and older ones set aside */

struct agent {
	struct ks_config cfg;
	struct ks_monitor_cfg mcfg;	/* socket families to report, wakeups */
	bool no_shields;
	const char *json_path;
	FILE *json;
	struct ks_monitor mon;
	struct ks_ring rings[MAX_RINGS];	/* [0] ks_events, then older ones */
	char ring_names[MAX_RINGS][64];	/* boot id:map id, in the store's ring_mark */
	int nrings, epfd;
	int ring_at;			/* the ring being read */
	bool rings_skipped;		/* ring_mark applied (at the first store open) */
	bool read_some;			/* the last read found records */
	long long tick_at;		/* next tick (ks_mono_ms) */
	struct ks_store *store;		/* NULL while the store is failing */
	bool store_corrupt;		/* move the file aside on reopen */
	char store_why[256];		/* last failure, printed once */
	__s64 boot_to_real;
	__s64 boot_ns;			/* CLOCK_BOOTTIME at the last clock_map() */
	/* The wall clock's steps: a record made before the last one (its boot
	 * time before step_boot) keeps the offset of its time, and retention
	 * does not count a forward step as age (retain_keep()). */
	__s64 step_boot, step_from;
	struct clock_epoch {
		__s64 offset;		/* boot_to_real while it held */
		__s64 until;		/* CLOCK_BOOTTIME when it was stepped */
	} epochs[8];
	int nepochs;
	struct ks_agent_stats st;
	__s64 clock_noted;		/* boot_to_real last written to the store */
	__u64 stored_before;		/* rows committed by stores since closed */
	__u64 dropped_before;		/* rows lost by stores since closed */
	__u64 unstored_direct;		/* records never handed to a store */
	__u64 lost_noted[KS_EV_KIND_MAX], unstored_noted, missed_noted;
	long long now_ms, retry_at, retain_at, textfile_at;
	struct ks_metrics_agent m;	/* per-kind counters for metrics */
	__u64 pending[KS_EV_KIND_MAX];	/* rows in the open batch, per kind */
	__u64 committed_seen;		/* ks_store_committed() when last settled */
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

/* CLOCK_BOOTTIME (BPF timestamps) -> CLOCK_REALTIME offset, refreshed every
 * tick so that a clock step shows up within TICK_MS. */
static void clock_map(struct agent *a)
{
	struct timespec r, b;
	__s64 off, boot;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_BOOTTIME, &b);
	off = (r.tv_sec - b.tv_sec) * 1000000000LL + (r.tv_nsec - b.tv_nsec);
	boot = b.tv_sec * 1000000000LL + b.tv_nsec;
	/* NTP slews by microseconds; a step (date -s, a VM resumed) moves it */
	if (a->boot_ns && llabs(off - a->boot_to_real) > 50000000LL) {
		if (a->nepochs == (int)ARRAY_SIZE(a->epochs)) {
			/* full: merge the two oldest, keeping the smaller offset
			 * (retention then waits longer, never less) */
			if (a->epochs[1].offset > a->epochs[0].offset)
				a->epochs[1].offset = a->epochs[0].offset;
			memmove(a->epochs, a->epochs + 1, sizeof(a->epochs[0]) * --a->nepochs);
		}
		a->epochs[a->nepochs++] = (struct clock_epoch){ a->boot_to_real, boot };
		/* records up to the last tick were made before the step */
		a->step_boot = a->boot_ns;
		a->step_from = a->boot_to_real;
	}
	a->boot_to_real = off;
	a->boot_ns = boot;
}

/* The CLOCK_REALTIME of a record made at CLOCK_BOOTTIME @ts_ns. */
static __s64 record_offset(const struct agent *a, __u64 ts_ns)
{
	return a->step_boot && (__s64)ts_ns < a->step_boot ? a->step_from : a->boot_to_real;
}

/* Retention by age counts the time since a record was made. Rows made
 * before a forward step of the clock look older than they are by the
 * step: wait that much longer for them (a back step only makes rows look
 * younger: deleted later, never early). Steps older than @keep no longer
 * matter. */
static __u64 retain_keep(const struct agent *a, __u64 keep)
{
	__s64 slack = 0;

	if (!keep)
		return 0;
	for (int i = 0; i < a->nepochs; i++)
		if (a->epochs[i].until + (__s64)keep > a->boot_ns && a->boot_to_real - a->epochs[i].offset > slack)
			slack = a->boot_to_real - a->epochs[i].offset;
	return keep + slack;
}

/* ---- the store, and what happens when it fails ---- */

/* received = stored + not stored, exactly: every record is either never
 * handed to a store (no store open, a kind this agent can't decode) or
 * handed in, and then committed, dropped, or still pending (committed or
 * dropped at the next commit). */
static void count(struct agent *a)
{
	a->st.stored = a->stored_before + ks_store_committed(a->store);
	a->st.unstored = a->unstored_direct + a->dropped_before + ks_store_dropped(a->store);
}

/* The open batch settled, committed (by us or by the store rolling a
 * table) or dropped: its rows move to the metrics' per-kind counts. */
static void batch_settled(struct agent *a, bool stored)
{
	for (int k = 0; k < KS_EV_KIND_MAX; k++) {
		if (stored)
			a->m.stored[k] += a->pending[k];
		else
			a->m.unstored[k] += a->pending[k];
		a->pending[k] = 0;
	}
	a->committed_seen = ks_store_committed(a->store);
}

static void publish_stats(struct agent *a, bool running);

/* Give the ring buffers' space back once nothing read is only in memory:
 * every record read is committed, or counted as not stored in the
 * published counters. Until then the records stay in the pinned ring, and
 * an agent killed meanwhile (SIGKILL, the OOM killer) leaves them to the
 * next one. */
static void release(struct agent *a)
{
	long age;
	bool held = false;

	for (int i = 0; i < a->nrings; i++)
		held |= ks_ring_held(&a->rings[i]) > 0;
	if (!held || (a->store && ks_store_pending(a->store, &age)))
		return;
	publish_stats(a, true);
	for (int i = 0; i < a->nrings; i++)
		ks_ring_release(&a->rings[i]);
}

static void store_failed(struct agent *a, int err)
{
	if (a->store)
		ks_store_abort(a->store);	/* the open batch: counted as dropped */
	batch_settled(a, false);
	a->st.store_errors++;
	if (!a->store_why[0]) {
		snprintf(a->store_why, sizeof(a->store_why), "%s", ks_errmsg());
		ks_log("store: %s; events are counted, not stored, until it recovers", a->store_why);
	}
	if (err == -EBADMSG)
		a->store_corrupt = true;	/* moved aside at once, not in RETRY_MS */
	a->stored_before += ks_store_committed(a->store);
	a->dropped_before += ks_store_dropped(a->store);
	ks_store_close(a->store);	/* commits nothing: the batch was aborted */
	a->store = NULL;
	a->retry_at = a->now_ms + (a->store_corrupt ? 0 : RETRY_MS);
}

/* This boot's id ("" when unknown). */
static void boot_id(char *boot, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	boot[0] = '\0';
	if (f) {
		if (!fgets(boot, (int)len, f))
			boot[0] = '\0';
		fclose(f);
	}
	boot[strcspn(boot, "\n")] = '\0';
}

/* An agent killed between a commit and giving the ring's space back left
 * records in the ring that its store holds: skip them, once, before the
 * first read (the position is per ring map, named by ring_add()). The
 * positions of earlier boots' rings are dropped then: no map outlives a
 * boot, so the table holds this boot's rings only. */
static void rings_skip(struct agent *a)
{
	char boot[40];

	a->rings_skipped = true;
	boot_id(boot, sizeof(boot));
	if (boot[0] && ks_store_ring_forget(a->store, boot) < 0)
		ks_log("store: %s", ks_errmsg());
	for (int i = 0; i < a->nrings; i++) {
		__u64 pos, n;

		if (!a->ring_names[i][0] || ks_store_ring_pos(a->store, a->ring_names[i], &pos))
			continue;
		if ((n = ks_ring_skip(&a->rings[i], pos)))
			ks_log("ring buffer: skipped %llu bytes of records the store already holds "
			    "(the last agent stopped between storing and releasing them)",
			    (unsigned long long)n);
	}
}

static void store_open(struct agent *a)
{
	char aside[PATH_MAX + 32];
	int err;

	if (a->store_corrupt) {
		char wal[PATH_MAX + 8], aside_wal[sizeof(aside) + 8];

		snprintf(aside, sizeof(aside), "%s.corrupt-%ld", a->cfg.store, (long)time(NULL));
		/* its WAL goes with it: left behind, SQLite would replay it into the new store */
		snprintf(wal, sizeof(wal), "%s-wal", a->cfg.store);
		snprintf(aside_wal, sizeof(aside_wal), "%s-wal", aside);
		if (!rename(a->cfg.store, aside)) {
			rename(wal, aside_wal);
			snprintf(wal, sizeof(wal), "%s-shm", a->cfg.store);
			unlink(wal);
			ks_log("store: moved the corrupt %s aside to %s (kept for you to inspect or "
			    "delete); starting a new one", a->cfg.store, aside);
		}
		a->store_corrupt = false;
	}
	err = ks_store_open(&a->store, a->cfg.store, KS_STORE_CREATE);
	a->committed_seen = 0;
	if (err) {
		a->store = NULL;
		store_failed(a, err);
		a->st.store_errors--;	/* a failed open is not a failed commit */
		return;
	}
	if (!a->rings_skipped)
		rings_skip(a);
	if (ks_store_note_clock(a->store, a->boot_to_real) == 0)
		a->clock_noted = a->boot_to_real;
	count(a);
	if (a->store_why[0]) {
		ks_log("store: recovered (%llu events could not be stored meanwhile)",
		    (unsigned long long)a->st.unstored);
		a->store_why[0] = '\0';
	}
}

static void store_commit(struct agent *a)
{
	int n;

	if (!a->store)
		return;
	n = ks_store_commit(a->store);
	if (n < 0)
		store_failed(a, n);
	else
		batch_settled(a, true);
}

/* ---- records ---- */

static void mirror_json(struct agent *a, const struct ks_row *r)
{
	struct json_object *o = ks_row_json_obj(r);

	fprintf(a->json, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;
	unsigned kind = ks_metrics_kind(data, size);
	struct ks_row r;
	int err;

	a->st.received++;
	a->m.received[kind]++;
	if (ks_row_decode(data, size, size >= sizeof(struct ks_hdr) ?
			  record_offset(a, ((const struct ks_hdr *)data)->ts_ns) : a->boot_to_real, &r)) {
		a->unstored_direct++;	/* a kind this agent does not know */
		a->m.unstored[kind]++;
		return 0;
	}
	if (a->json)
		mirror_json(a, &r);
	if (!a->store) {
		a->unstored_direct++;
		a->m.unstored[kind]++;
		return 0;
	}
	if (a->ring_names[a->ring_at][0])
		ks_store_ring_next(a->store, a->ring_at, a->ring_names[a->ring_at],
				   a->rings[a->ring_at].pos);
	err = ks_store_add_row(a->store, &r);
	if (ks_store_committed(a->store) != a->committed_seen) {
		batch_settled(a, true);	/* the store committed (with or before this row) */
		if (!err)
			release(a);
	}
	if (err) {
		a->m.unstored[kind]++;	/* this row; store_failed() its batch */
		store_failed(a, err);
	} else {
		a->pending[kind]++;
	}
	return 0;
}

/* ---- metrics: Prometheus text over HTTP (--metrics) or a textfile ---- */

static int metrics_text(struct agent *a, char **text, size_t *len)
{
	a->m.store_errors = a->st.store_errors;
	return ks_metrics_render(&a->m, a->store, a->cfg.store, text, len);
}

/* node_exporter's textfile collector reads *.prom files whole: write a
 * temporary file and rename it over the old one. */
static void metrics_textfile(struct agent *a)
{
	char tmp[sizeof(a->cfg.metrics_textfile) + 8], *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!a->cfg.metrics_textfile[0] || a->now_ms < a->textfile_at)
		return;
	a->textfile_at = a->now_ms + TEXTFILE_MS;
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

static void publish_stats(struct agent *a, bool running)
{
	struct timespec now;
	__u32 zero = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	a->st.tgid = running ? (__u32)getpid() : 0;
	count(a);
	a->st.updated_realtime_ns = now.tv_sec * 1000000000ULL + now.tv_nsec;
	bpf_map_update_elem(a->mon.agent_fd, &zero, &a->st, BPF_ANY);
}

/* Record ring-buffer losses and unstored counts in the store when they
 * changed, so that a hunt can tell "nothing happened" from "not seen". */
static void note_losses(struct agent *a)
{
	__u64 lost[KS_EV_KIND_MAX], missed = 0;

	if (!a->store || ks_monitor_read_lost(lost))
		return;
	ks_monitor_read_missed(&missed, NULL, 0);
	count(a);
	if (!memcmp(lost, a->lost_noted, sizeof(lost)) && a->st.unstored == a->unstored_noted &&
	    missed == a->missed_noted)
		return;
	store_commit(a);
	count(a);
	if (a->store && !ks_store_note_losses(a->store, lost, a->st.unstored, missed)) {
		memcpy(a->lost_noted, lost, sizeof(lost));
		a->unstored_noted = a->st.unstored;
		a->missed_noted = missed;
	}
}

static void tick(struct agent *a)
{
	long age;
	long n;
	int err;

	a->now_ms = ks_mono_ms();
	clock_map(a);
	/* Someone else wrote the file (while we were stopped, say): check it
	 * before writing on; a corrupt one is moved aside. */
	if (a->store && ks_store_touched(a->store) && (err = ks_store_check(a->store)))
		store_failed(a, err);
	if (a->store && ks_store_pending(a->store, &age) && age >= KS_STORE_BATCH_MS)
		store_commit(a);
	if (!a->store && a->now_ms >= a->retry_at)
		store_open(a);
	/* NTP slews the offset by microseconds; a step moves it for real */
	if (a->store && llabs(a->boot_to_real - a->clock_noted) > 50000000LL &&
	    ks_store_note_clock(a->store, a->boot_to_real) == 0)
		a->clock_noted = a->boot_to_real;
	if (a->store && a->now_ms >= a->retain_at) {
		a->retain_at = a->now_ms + RETAIN_MS;
		n = ks_store_retain(a->store, retain_keep(a, a->cfg.retention_s * 1000000000ULL),
				    a->cfg.max_size);
		if (n < 0)
			store_failed(a, n);
		note_losses(a);
	}
	publish_stats(a, true);
	release(a);
	ks_selfdefence_tick(&a->cfg, &a->mon, a->store);	/* repair + record tampering */
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
			ks_selfdefence_refused(a->store, it->name, it->why);
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
	ks_selfdefence_synced(&a->cfg, a->store);	/* guard, protected ids */
	/* Loading objects parsed the kernel's BTF (megabytes each time), all
	 * freed by now: give it back, or it stays resident for the agent's life. */
	malloc_trim(0);
}

/* ---- start, loop, stop ---- */

/* The name under which the store keeps how far @fd's ring was stored
 * ("boot id:map id": map ids are not reused within a boot, and pins do not
 * outlive it); "" when either is unknown (no position kept). */
static void ring_name(int fd, char *name, size_t len)
{
	struct bpf_map_info info = { 0 };
	__u32 ilen = sizeof(info);
	char boot[40];

	boot_id(boot, sizeof(boot));
	name[0] = '\0';
	if (boot[0] && !bpf_obj_get_info_by_fd(fd, &info, &ilen) && info.id)
		snprintf(name, len, "%s:%u", boot, info.id);
}

/* Read ring buffer map @fd too (its fd is dup()ed: the caller closes its own). */
static int ring_add(struct agent *a, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ks_ring *r = &a->rings[a->nrings];
	int own, err;

	if (a->nrings == MAX_RINGS)
		return ks_err(-E2BIG, "more than %d ring buffers", MAX_RINGS);
	if ((own = dup(fd)) < 0)
		return ks_err(-errno, "can't read the ring buffer: %s", strerror(errno));
	if ((err = ks_ring_open(r, own))) {
		close(own);
		return err;
	}
	ring_name(own, a->ring_names[a->nrings], sizeof(a->ring_names[0]));
	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, own, &ev)) {
		err = ks_err(-errno, "can't wait on the ring buffer: %s", strerror(errno));
		ks_ring_close(r);
		close(own);
		return err;
	}
	a->nrings++;
	return 0;
}

static void add_old_ring(int fd, void *ctx)
{
	if (ring_add(ctx, fd))
		ks_log("can't read the older ring buffer set aside: %s", ks_errmsg());
}

/* Read every ring; returns a negative errno on failure. */
static int rings_read(struct agent *a)
{
	a->read_some = false;
	for (int i = 0; i < a->nrings; i++) {
		int n;

		a->ring_at = i;
		n = ks_ring_read(&a->rings[i], on_record, a);

		if (n < 0)
			return n;
		a->read_some |= n > 0;
	}
	return 0;
}

/* Wait for records: on epoll while nothing is held; while records are
 * held (the ring then always reads as ready) a short sleep instead. */
static void rings_wait(struct agent *a)
{
	struct epoll_event ev[MAX_RINGS];
	bool held = false;

	for (int i = 0; i < a->nrings; i++)
		held |= ks_ring_held(&a->rings[i]) > 0;
	if (held)	/* a stream: read on soon; a trickle: the batch waits for its age */
		usleep(a->read_some ? HOLD_POLL_US : HOLD_IDLE_US);
	else
		epoll_wait(a->epfd, ev, MAX_RINGS, TICK_MS);
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
	publish_stats(a, true);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epfd < 0)
		return ks_err(-errno, "can't wait on the ring buffer: %s", strerror(errno));
	if ((err = ring_add(a, a->mon.events_fd)))
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
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	a->now_ms = ks_mono_ms();
	clock_map(a);
	store_open(a);
	if (a->store)
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
	if (a->nrings) {
		clock_map(a);
		rings_read(a);
	}
	store_commit(a);
	note_losses(a);
	if (a->mon.agent_fd >= 0)
		publish_stats(a, false);
	count(a);
	ks_log("stopped: %llu events received, %llu stored, %llu not stored",
	    (unsigned long long)a->st.received, (unsigned long long)a->st.stored,
	    (unsigned long long)a->st.unstored);
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
	ks_store_close(a->store);
	for (int i = 0; i < a->nrings; i++) {
		ks_ring_release(&a->rings[i]);	/* committed above, or counted */
		close(a->rings[i].fd);
		ks_ring_close(&a->rings[i]);
	}
	if (a->epfd > 0)
		close(a->epfd);
	if (a->json && a->json != stdout)
		fclose(a->json);
	ks_monitor_close(&a->mon);
}

static int agent_run(struct agent *a)
{
	int err = agent_start(a);

	if (err) {
		agent_stop(a);
		return ks_report(err);
	}
	shields_sync(a);
	while (!stop_requested) {
		/* Woken every mon_config.wakeup_every records or TICK_MS;
		 * every pass reads all there is, the low-rate tail too. */
		rings_wait(a);
		if ((err = rings_read(a)) < 0) {
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
