// SPDX-License-Identifier: MIT
/* ingest.c - records from the ring buffers into the store: batches, the
 * store's failures, exact loss accounting and the wall clock's epochs (see
 * ingest.h). Moved here from the agent (src/cmd/agent.c), which now only
 * drives it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "array.h"
#include "clock.h"
#include "err.h"
#include "file.h"
#include "events.h"
#include "ingest.h"
#include "log.h"
#include "monitor.h"
#include "store.h"

#define HOLD_POLL_US	1000	/* read period while records are held and */
#define HOLD_IDLE_US	10000	/* ... when the last read found none */

static int monitor_losses(void *ctx, __u64 lost[KS_EV_KIND_MAX], __u64 *missed)
{
	(void)ctx;
	if (ks_monitor_read_lost(lost))
		return -1;
	*missed = 0;
	ks_monitor_read_missed(missed, NULL, 0);
	return 0;
}

void ks_ingest_init(struct ks_ingest *in, const struct ks_ingest_opts *o)
{
	memset(in, 0, sizeof(*in));
	in->o = *o;
	if (!in->o.read_losses)
		in->o.read_losses = monitor_losses;
	in->epfd = -1;
}

/* ---- the wall clock ---- */

void ks_ingest_clock(struct ks_ingest *in, __s64 real_ns, __s64 boot_ns)
{
	__s64 off = real_ns - boot_ns;

	/* NTP slews by microseconds; a step (date -s, a VM resumed) moves it */
	if (in->boot_ns && llabs(off - in->boot_to_real) > KS_INGEST_STEP_NS) {
		if (in->nepochs == (int)ARRAY_SIZE(in->epochs)) {
			/* full: merge the two oldest, keeping the smaller offset
			 * (retention then waits longer, never less) */
			if (in->epochs[1].offset > in->epochs[0].offset)
				in->epochs[1].offset = in->epochs[0].offset;
			memmove(in->epochs, in->epochs + 1, sizeof(in->epochs[0]) * --in->nepochs);
		}
		in->epochs[in->nepochs++] = (struct ks_clock_epoch){ in->boot_to_real, boot_ns };
		/* records up to the last sample were made before the step */
		in->step_boot = in->boot_ns;
		in->step_from = in->boot_to_real;
	}
	in->boot_to_real = off;
	in->boot_ns = boot_ns;
}

static void now_read(struct ks_ingest_now *now)
{
	struct timespec r, b;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_BOOTTIME, &b);
	now->mono_ms = ks_mono_ms();
	now->real_ns = r.tv_sec * 1000000000LL + r.tv_nsec;
	now->boot_ns = b.tv_sec * 1000000000LL + b.tv_nsec;
}

__s64 ks_ingest_offset(const struct ks_ingest *in, __u64 ts_ns)
{
	return in->step_boot && (__s64)ts_ns < in->step_boot ? in->step_from : in->boot_to_real;
}

/* Retention by age counts the time since a record was made. Rows made
 * before a forward step of the clock look older than they are by the
 * step: wait that much longer for them (a back step only makes rows look
 * younger: deleted later, never early). Steps older than @keep no longer
 * matter. */
__u64 ks_ingest_retain_keep(const struct ks_ingest *in, __u64 keep)
{
	__s64 slack = 0;

	if (!keep)
		return 0;
	for (int i = 0; i < in->nepochs; i++)
		if (in->epochs[i].until + (__s64)keep > in->boot_ns &&
		    in->boot_to_real - in->epochs[i].offset > slack)
			slack = in->boot_to_real - in->epochs[i].offset;
	return keep + slack;
}

/* ---- the store, and what happens when it fails ---- */

/* received = stored + not stored, exactly: every record is either never
 * handed to a store (no store open, a kind this build can't decode) or
 * handed in, and then committed, dropped, or still pending (committed or
 * dropped at the next commit). */
static void count(struct ks_ingest *in)
{
	in->st.stored = in->stored_before + ks_store_committed(in->store);
	in->st.unstored = in->unstored_direct + in->dropped_before + ks_store_dropped(in->store);
}

/* The open batch settled, committed (by us or by the store rolling a
 * table) or dropped: its rows move to the per-kind counts. */
static void batch_settled(struct ks_ingest *in, bool stored)
{
	for (int k = 0; k < KS_EV_KIND_MAX; k++) {
		if (stored)
			in->stored[k] += in->pending[k];
		else
			in->unstored[k] += in->pending[k];
		in->pending[k] = 0;
	}
	in->committed_seen = ks_store_committed(in->store);
}

void ks_ingest_publish(struct ks_ingest *in, bool running)
{
	struct timespec now;
	__u32 zero = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	in->st.tgid = running ? (__u32)getpid() : 0;
	count(in);
	in->st.updated_realtime_ns = now.tv_sec * 1000000000ULL + now.tv_nsec;
	if (in->o.stats_fd >= 0)
		bpf_map_update_elem(in->o.stats_fd, &zero, &in->st, BPF_ANY);
}

/* Give the ring buffers' space back once nothing read is only in memory:
 * every record read is committed, or counted as not stored in the
 * published counters. Until then the records stay in the pinned ring, and
 * an ingest killed meanwhile (SIGKILL, the OOM killer) leaves them to the
 * next one. */
static void release(struct ks_ingest *in)
{
	long age;
	bool held = false;

	for (int i = 0; i < in->nrings; i++)
		held |= ks_ring_held(&in->rings[i]) > 0;
	if (!held || (in->store && ks_store_pending(in->store, &age)))
		return;
	ks_ingest_publish(in, true);
	for (int i = 0; i < in->nrings; i++)
		ks_ring_release(&in->rings[i]);
}

static void store_failed(struct ks_ingest *in, int err)
{
	if (in->store)
		ks_store_abort(in->store);	/* the open batch: counted as dropped */
	batch_settled(in, false);
	in->st.store_errors++;
	if (!in->store_why[0]) {
		snprintf(in->store_why, sizeof(in->store_why), "%s", ks_errmsg());
		ks_log("store: %s; events are counted, not stored, until it recovers", in->store_why);
	}
	if (err == -EBADMSG)
		in->store_corrupt = true;	/* moved aside at once, not in RETRY_MS */
	in->stored_before += ks_store_committed(in->store);
	in->dropped_before += ks_store_dropped(in->store);
	ks_store_close(in->store);	/* commits nothing: the batch was aborted */
	in->store = NULL;
	in->retry_at = in->now_ms + (in->store_corrupt ? 0 : KS_INGEST_RETRY_MS);
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

/* An ingest killed between a commit and giving the ring's space back left
 * records in the ring that its store holds: skip them, once, before the
 * first read (the position is per ring map, named by ring_name()). The
 * positions of earlier boots' rings are dropped then: no map outlives a
 * boot, so the table holds this boot's rings only. */
static void rings_skip(struct ks_ingest *in)
{
	char boot[40];

	in->rings_skipped = true;
	boot_id(boot, sizeof(boot));
	if (boot[0] && ks_store_ring_forget(in->store, boot) < 0)
		ks_log("store: %s", ks_errmsg());
	for (int i = 0; i < in->nrings; i++) {
		__u64 pos, n;

		if (!in->ring_names[i][0] || ks_store_ring_pos(in->store, in->ring_names[i], &pos))
			continue;
		if ((n = ks_ring_skip(&in->rings[i], pos)))
			ks_log("ring buffer: skipped %llu bytes of records the store already holds "
			       "(the last agent stopped between storing and releasing them)",
			       (unsigned long long)n);
	}
}

static void store_open(struct ks_ingest *in)
{
	const char *path = in->o.cfg->store;
	char aside[PATH_MAX + 32];
	int err;

	if (in->store_corrupt) {
		char wal[PATH_MAX + 8], aside_wal[sizeof(aside) + 8];

		snprintf(aside, sizeof(aside), "%s.corrupt-%ld", path, (long)time(NULL));
		/* its WAL goes with it: left behind, SQLite would replay it into the new store */
		snprintf(wal, sizeof(wal), "%s-wal", path);
		snprintf(aside_wal, sizeof(aside_wal), "%s-wal", aside);
		if (!rename(path, aside)) {
			rename(wal, aside_wal);
			snprintf(wal, sizeof(wal), "%s-shm", path);
			unlink(wal);
			ks_log("store: moved the corrupt %s aside to %s (kept for you to inspect or "
			       "delete); starting a new one", path, aside);
		}
		in->store_corrupt = false;
	}
	err = ks_store_open(&in->store, path, KS_STORE_CREATE);
	in->committed_seen = 0;
	if (err) {
		in->store = NULL;
		store_failed(in, err);
		in->st.store_errors--;	/* a failed open is not a failed commit */
		return;
	}
	if (!in->rings_skipped)
		rings_skip(in);
	if (ks_store_note_clock(in->store, in->boot_to_real) == 0)
		in->clock_noted = in->boot_to_real;
	count(in);
	if (in->store_why[0]) {
		ks_log("store: recovered (%llu events could not be stored meanwhile)",
		       (unsigned long long)in->st.unstored);
		in->store_why[0] = '\0';
	}
}

void ks_ingest_commit(struct ks_ingest *in)
{
	int n;

	if (!in->store)
		return;
	n = ks_store_commit(in->store);
	if (n < 0)
		store_failed(in, n);
	else
		batch_settled(in, true);
}

/* ---- records ---- */

static void mirror_json(struct ks_ingest *in, const struct ks_row *r)
{
	struct json_object *o = ks_row_json_obj(r);

	fprintf(in->json, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* The kind of a record (enum ks_ev_kind), or 0 when this build does not
 * know it. */
static unsigned record_kind(const void *rec, size_t size)
{
	const struct ks_hdr *h = rec;

	return size >= sizeof(*h) && h->kind < KS_EV_KIND_MAX ? h->kind : 0;
}

int ks_ingest_record(struct ks_ingest *in, int slot, const void *data, size_t size)
{
	unsigned kind = record_kind(data, size);
	struct ks_row r;
	bool with;
	long age;
	int err;

	in->st.received++;
	in->received[kind]++;
	if (ks_row_decode(data, size, size >= sizeof(struct ks_hdr) ?
			  ks_ingest_offset(in, ((const struct ks_hdr *)data)->ts_ns) : in->boot_to_real, &r)) {
		in->unstored_direct++;	/* a kind this build does not know */
		in->unstored[kind]++;
		return 0;
	}
	if (in->json)
		mirror_json(in, &r);
	if (!in->store) {
		in->unstored_direct++;
		in->unstored[kind]++;
		return 0;
	}
	if (slot >= 0 && in->ring_names[slot][0])
		ks_store_ring_next(in->store, slot, in->ring_names[slot], in->rings[slot].pos);
	err = ks_store_add_row(in->store, &r);
	/* A full batch commits with its last row (no transaction open
	 * after it); an exec chunk's roll commits before the row, which
	 * then opens the next batch. */
	with = !err && !ks_store_pending(in->store, &age);
	if (with)
		in->pending[kind]++;
	if (ks_store_committed(in->store) != in->committed_seen) {
		batch_settled(in, true);
		if (!err)
			release(in);
	}
	if (err) {
		in->unstored[kind]++;	/* this row; store_failed() its batch */
		store_failed(in, err);
	} else if (!with) {
		in->pending[kind]++;
	}
	return 0;
}

/* ---- rings ---- */

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

int ks_ingest_ring_add(struct ks_ingest *in, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ks_ring *r = &in->rings[in->nrings];
	int own, err;

	if (in->epfd < 0 && (in->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return ks_err(-errno, "can't wait on the ring buffer: %s", strerror(errno));
	if (in->nrings == KS_INGEST_RINGS)
		return ks_err(-E2BIG, "more than %d ring buffers", KS_INGEST_RINGS);
	if ((own = dup(fd)) < 0)
		return ks_err(-errno, "can't read the ring buffer: %s", strerror(errno));
	if ((err = ks_ring_open(r, own))) {
		close(own);
		return err;
	}
	ring_name(own, in->ring_names[in->nrings], sizeof(in->ring_names[0]));
	if (epoll_ctl(in->epfd, EPOLL_CTL_ADD, own, &ev)) {
		err = ks_err(-errno, "can't wait on the ring buffer: %s", strerror(errno));
		ks_ring_close(r);
		close(own);
		return err;
	}
	in->nrings++;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct ks_ingest *in = ctx;

	return ks_ingest_record(in, in->ring_at, data, size);
}

int ks_ingest_read(struct ks_ingest *in)
{
	in->read_some = false;
	for (int i = 0; i < in->nrings; i++) {
		int n;

		in->ring_at = i;
		n = ks_ring_read(&in->rings[i], on_record, in);
		if (n < 0)
			return n;
		in->read_some |= n > 0;
	}
	return 0;
}

void ks_ingest_wait(struct ks_ingest *in, int timeout_ms)
{
	struct epoll_event ev[KS_INGEST_RINGS];
	bool held = false;

	for (int i = 0; i < in->nrings; i++)
		held |= ks_ring_held(&in->rings[i]) > 0;
	if (held)	/* a stream: read on soon; a trickle: the batch waits for its age */
		usleep(in->read_some ? HOLD_POLL_US : HOLD_IDLE_US);
	else if (in->epfd >= 0)
		epoll_wait(in->epfd, ev, KS_INGEST_RINGS, timeout_ms);
	else
		usleep(timeout_ms * 1000);
}

/* ---- periodic work ---- */

void ks_ingest_start(struct ks_ingest *in, const struct ks_ingest_now *now)
{
	struct ks_ingest_now n;

	if (!now)
		now_read(&n), now = &n;
	in->now_ms = now->mono_ms;
	ks_ingest_clock(in, now->real_ns, now->boot_ns);
	store_open(in);
}

/* Record ring-buffer losses and unstored counts in the store when they
 * changed, so that a hunt can tell "nothing happened" from "not seen". */
void ks_ingest_note_losses(struct ks_ingest *in)
{
	__u64 lost[KS_EV_KIND_MAX], missed = 0;

	if (!in->store || in->o.read_losses(in->o.losses_ctx, lost, &missed))
		return;
	count(in);
	if (!memcmp(lost, in->lost_noted, sizeof(lost)) && in->st.unstored == in->unstored_noted &&
	    missed == in->missed_noted)
		return;
	ks_ingest_commit(in);
	count(in);
	if (in->store && !ks_store_note_losses(in->store, lost, in->st.unstored, missed)) {
		memcpy(in->lost_noted, lost, sizeof(lost));
		in->unstored_noted = in->st.unstored;
		in->missed_noted = missed;
	}
}

void ks_ingest_tick(struct ks_ingest *in, const struct ks_ingest_now *now)
{
	const struct ks_config *cfg = in->o.cfg;
	struct ks_ingest_now n;
	long age;
	long rows;
	int err;

	if (!now)
		now_read(&n), now = &n;
	in->now_ms = now->mono_ms;
	ks_ingest_clock(in, now->real_ns, now->boot_ns);
	/* Someone else wrote the file (while we were stopped, say): check it
	 * before writing on; a corrupt one is moved aside. */
	if (in->store && ks_store_touched(in->store) && (err = ks_store_check(in->store)))
		store_failed(in, err);
	if (in->store && ks_store_pending(in->store, &age) && age >= KS_STORE_BATCH_MS)
		ks_ingest_commit(in);
	if (!in->store && in->now_ms >= in->retry_at)
		store_open(in);
	/* NTP slews the offset by microseconds; a step moves it for real */
	if (in->store && llabs(in->boot_to_real - in->clock_noted) > KS_INGEST_STEP_NS &&
	    ks_store_note_clock(in->store, in->boot_to_real) == 0)
		in->clock_noted = in->boot_to_real;
	if (in->store && in->now_ms >= in->retain_at) {
		in->retain_at = in->now_ms + KS_INGEST_RETAIN_MS;
		rows = ks_store_retain(in->store, ks_ingest_retain_keep(in, cfg->retention_s * 1000000000ULL),
				       cfg->max_size);
		if (rows < 0)
			store_failed(in, rows);
		ks_ingest_note_losses(in);
	}
	ks_ingest_publish(in, true);
	release(in);
}

void ks_ingest_drain(struct ks_ingest *in)
{
	if (in->nrings) {
		struct ks_ingest_now n;

		now_read(&n);
		ks_ingest_clock(in, n.real_ns, n.boot_ns);
		ks_ingest_read(in);
	}
	ks_ingest_commit(in);
	ks_ingest_note_losses(in);
	if (in->o.stats_fd >= 0)
		ks_ingest_publish(in, false);
	count(in);
}

void ks_ingest_close(struct ks_ingest *in)
{
	ks_store_close(in->store);
	in->store = NULL;
	for (int i = 0; i < in->nrings; i++) {
		ks_ring_release(&in->rings[i]);	/* committed, or counted */
		close(in->rings[i].fd);
		ks_ring_close(&in->rings[i]);
	}
	in->nrings = 0;
	ks_zclose(&in->epfd);
}
