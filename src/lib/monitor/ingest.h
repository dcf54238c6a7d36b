// SPDX-License-Identifier: MIT
/* ingest.h - the way of a record from the pinned ring buffers into the
 * event store, for the agent and any other front end (a test, a replay).
 *
 * Records are committed in batches of at most KS_STORE_BATCH rows or
 * KS_STORE_BATCH_MS. The store may fail at any time (locked, corrupt,
 * unwritable, full): the failure is logged once, the records that could
 * not be stored are counted, and the store is reopened every
 * KS_INGEST_RETRY_MS (a corrupt one is moved aside first). Accounting is
 * exact: received = stored + unstored, in st and per kind.
 *
 * A ring's space is given back only once every record read is committed
 * or counted as not stored, so that an ingest killed meanwhile leaves its
 * records to the next one (ringread.h).
 *
 * Record timestamps are CLOCK_BOOTTIME; rows carry CLOCK_REALTIME. The
 * offset between the two is sampled every tick; a step of the wall clock
 * (date -s, a VM resumed) starts a new epoch: records made before it keep
 * the offset of their time, and retention by age does not count a forward
 * step as age.
 */
#ifndef KSHIELD_INGEST_H
#define KSHIELD_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include <kshield/event.h>
#include "config.h"
#include "ringread.h"

#define KS_INGEST_RINGS		4	/* ks_events and older ones set aside */
#define KS_INGEST_RETRY_MS	2000	/* store reopen period while it is failing */
#define KS_INGEST_RETAIN_MS	10000	/* retention and loss bookkeeping period */
/* The wall clock moved against CLOCK_BOOTTIME by more than this: a step
 * (NTP slews by microseconds). */
#define KS_INGEST_STEP_NS	50000000LL

struct ks_store;

struct ks_ingest_opts {
	/* The store file (cfg->store), its retention (retention_s,
	 * max_size): read when used, so a reloaded config takes effect. */
	const struct ks_config *cfg;
	/* The monitor's pinned mon_agent array: st is published there
	 * (ks_ingest_publish()); -1 for none. */
	int stats_fd;
	/* Ring-buffer losses per kind and the monitor runs the kernel
	 * skipped, recorded in the store's losses table when they change;
	 * NULL: the pinned monitor's (ks_monitor_read_lost/_missed). */
	int (*read_losses)(void *ctx, __u64 lost[KS_EV_KIND_MAX], __u64 *missed);
	void *losses_ctx;
};

/* The clocks a tick runs on (ks_ingest_tick()). */
struct ks_ingest_now {
	long long mono_ms;	/* CLOCK_MONOTONIC (ks_mono_ms()) */
	__s64 real_ns;		/* CLOCK_REALTIME */
	__s64 boot_ns;		/* CLOCK_BOOTTIME */
};

struct ks_ingest {
	struct ks_ingest_opts o;
	FILE *json;			/* also write each row as one JSON line (set it any time) */
	struct ks_agent_stats st;	/* what is published; received = stored + unstored */
	/* Per kind (enum ks_ev_kind; 0 for kinds this build does not know),
	 * for metrics: stored counts a row once its batch committed. */
	__u64 received[KS_EV_KIND_MAX], stored[KS_EV_KIND_MAX], unstored[KS_EV_KIND_MAX];
	struct ks_store *store;		/* NULL while the store is failing */

	/* private */
	struct ks_ring rings[KS_INGEST_RINGS];	/* [0] ks_events, then older ones */
	char ring_names[KS_INGEST_RINGS][64];	/* boot id:map id, in the store's ring_mark */
	int nrings, epfd;
	int ring_at;			/* the ring being read */
	bool rings_skipped;		/* ring_mark applied (at the first store open) */
	bool read_some;			/* the last read found records */
	bool store_corrupt;		/* move the file aside on reopen */
	char store_why[256];		/* last failure, logged once */
	__s64 boot_to_real;
	__s64 boot_ns;			/* CLOCK_BOOTTIME at the last clock sample */
	/* The wall clock's steps: a record made before the last one (its boot
	 * time before step_boot) keeps the offset of its time, and retention
	 * does not count a forward step as age (ks_ingest_retain_keep()). */
	__s64 step_boot, step_from;
	struct ks_clock_epoch {
		__s64 offset;		/* boot_to_real while it held */
		__s64 until;		/* CLOCK_BOOTTIME when it was stepped */
	} epochs[8];
	int nepochs;
	__s64 clock_noted;		/* boot_to_real last written to the store */
	__u64 stored_before;		/* rows committed by stores since closed */
	__u64 dropped_before;		/* rows lost by stores since closed */
	__u64 unstored_direct;		/* records never handed to a store */
	__u64 lost_noted[KS_EV_KIND_MAX], unstored_noted, missed_noted;
	long long now_ms, retry_at, retain_at;
	__u64 pending[KS_EV_KIND_MAX];	/* rows in the open batch, per kind */
	__u64 committed_seen;		/* ks_store_committed() when last settled */
};

/* Set up @in (no store opened, no ring read yet). */
void ks_ingest_init(struct ks_ingest *in, const struct ks_ingest_opts *o);
/* Read ring buffer map @fd too (dup()ed: the caller closes its own).
 * Returns 0 or a negative errno (one line). */
int ks_ingest_ring_add(struct ks_ingest *in, int fd);
/* Sample the clocks and open the store: the first store open skips the
 * records of each ring the store already holds (ks_ring_skip()). */
void ks_ingest_start(struct ks_ingest *in, const struct ks_ingest_now *now);
/* Read every ring into the store; returns 0 or a negative errno. */
int ks_ingest_read(struct ks_ingest *in);
/* Wait for records, at most @timeout_ms: on epoll while nothing is held;
 * while records are held (the ring then always reads as ready) a short
 * sleep instead. */
void ks_ingest_wait(struct ks_ingest *in, int timeout_ms);
/* One record of ring @slot (its read position rings[slot].pos is just past
 * it; -1: no ring, nothing recorded in ring_mark), as ks_ring_read() hands
 * it. Always 0: a record that can't be stored is counted. */
int ks_ingest_record(struct ks_ingest *in, int slot, const void *data, size_t size);
/* Periodic work (every 100 ms or so): sample the clocks, check a store
 * someone else wrote, commit a batch older than KS_STORE_BATCH_MS, reopen a
 * failed store, note a clock step, retention and losses every
 * KS_INGEST_RETAIN_MS, publish, give the rings' space back. @now: NULL
 * reads the clocks. */
void ks_ingest_tick(struct ks_ingest *in, const struct ks_ingest_now *now);
/* Commit the open batch (nothing without a store). */
void ks_ingest_commit(struct ks_ingest *in);
/* Record the losses in the store if they changed since last noted. */
void ks_ingest_note_losses(struct ks_ingest *in);
/* Write st to the stats map (tgid: ours while @running, else 0). */
void ks_ingest_publish(struct ks_ingest *in, bool running);
/* At stop: read what is left, commit, note the losses, publish as not
 * running; st is final then. */
void ks_ingest_drain(struct ks_ingest *in);
/* Close the store and the rings, giving their space back (everything read
 * was committed or counted by ks_ingest_drain()). */
void ks_ingest_close(struct ks_ingest *in);

/* A clock sample: CLOCK_BOOTTIME -> CLOCK_REALTIME offset, and a new epoch
 * when the wall clock stepped since the last sample. */
void ks_ingest_clock(struct ks_ingest *in, __s64 real_ns, __s64 boot_ns);
/* The CLOCK_BOOTTIME -> CLOCK_REALTIME offset of a record made at @ts_ns. */
__s64 ks_ingest_offset(const struct ks_ingest *in, __u64 ts_ns);
/* Retention by age @keep_ns, lengthened by the forward steps of the clock
 * within it (0: keep forever). */
__u64 ks_ingest_retain_keep(const struct ks_ingest *in, __u64 keep_ns);

#endif
