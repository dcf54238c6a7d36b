// SPDX-License-Identifier: MIT
/* collect.c - `kshield collect`: the fleet's events from the JetStream
 * stream into PostgreSQL.
 *
 * A durable pull consumer fetches batches; a message is a frame of event
 * lines (fleet_ship.h; an older agent's message is a single event). A
 * fetch thread turns each batch into COPY text while the main thread
 * writes the previous one, in one transaction (fleet_pg.c), and acks it
 * only after COMMIT. If PostgreSQL goes away the batch is held, unacked,
 * and retried until it commits; messages redelivered meanwhile are
 * duplicates that the (host, seq) key drops. Nothing is acked unwritten,
 * and batches are written and acked in the order they were fetched (the
 * durable acks all messages up to the one acked).
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "cli.h"
#include "sockaddr.h"
#include "fleet_kv.h"
#include "fleet_cli.h"
#include "fleet_pg.h"
#include "fleet_pull.h"
#include "metrics.h"
#include "fleet_dl.h"
#include "metrics_http.h"	/* --metrics */

#define COLLECT_DURABLE "kshield-collect"
#define FETCH_MAX_BYTES (8 << 20)	/* per fetch: a few frames of events */

static volatile sig_atomic_t collect_stop;

static void on_signal(int sig)
{
	(void)sig;
	collect_stop = 1;
}

/* An event's time in ms from its "ts" (s, ms, us or ns since the epoch,
 * told apart by size); 0 when it has none. */
static int64_t ts_to_ms(int64_t ts)
{
	if (ts > 100000000000000000LL)
		return ts / 1000000;
	if (ts > 100000000000000LL)
		return ts / 1000;
	if (ts > 100000000000LL)
		return ts;
	return ts > 0 ? ts * 1000 : 0;
}

/* An event with no time of its own gets the time JetStream stored it. */
static int64_t msg_ms(natsMsg *m)
{
	jsMsgMetaData *md = NULL;
	int64_t ms;

	if (nats_fn.natsMsg_GetMetaData(&md, m) != NATS_OK)
		return ks_now_ms();
	ms = md->Timestamp / 1000000;
	nats_fn.jsMsgMetaData_Destroy(md);
	return ms;
}

struct collect_stats {
	int64_t received, inserted, frames, batches, pg_retries, bad;
};

/* One fetched batch, as the fetch thread hands it to the writer. */
struct job {
	natsMsgList list;	/* ours (fleet_pull.h), not the library's */
	struct ks_pg_batch rows;
	int64_t events, bad;
	char *z;		/* a decompressed frame */
	size_t zcap;
};

#define FRAME_MAX (64 << 20)	/* a decompressed frame, at most */

/* A message's event lines: its data, or its data decompressed into j->z.
 * Returns the length, or -1 for a frame that does not decompress. */
static ssize_t msg_lines(struct job *j, natsMsg *m, const char **p)
{
	const char *enc = NULL, *d = nats_fn.natsMsg_GetData(m);
	int n = nats_fn.natsMsg_GetDataLength(m);
	unsigned long long sz;
	size_t r;

	*p = d;
	if (nats_fn.natsMsgHeader_Get(m, KS_EVENTS_ENCODING, &enc) != NATS_OK || !enc)
		return n;
	if (strcmp(enc, "zstd"))
		return -1;
	sz = ZSTD_getFrameContentSize(d, n);
	if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN || sz > FRAME_MAX)
		return -1;
	if (sz > j->zcap) {
		char *z = realloc(j->z, sz);

		if (!z)
			return -1;
		j->z = z;
		j->zcap = sz;
	}
	r = ZSTD_decompress(j->z, j->zcap, d, n);
	if (ZSTD_isError(r))
		return -1;
	*p = j->z;
	return r;
}

/* Copy a quoted JSON string body at @p (after the opening quote) into
 * @out when it holds no escapes; returns the closing quote or NULL. */
static const char *plain_str(const char *p, const char *end, char *out, size_t n)
{
	size_t i = 0;

	for (; p < end && *p != '"'; p++) {
		if (*p == '\\' || (unsigned char)*p < 0x20 || i + 1 >= n)
			return NULL;
		out[i++] = *p;
	}
	out[i] = '\0';
	return p < end ? p : NULL;
}

static const char *int_at(const char *p, const char *end, int64_t *v)
{
	char *e;

	if (p >= end || !(*p == '-' || (*p >= '0' && *p <= '9')))
		return NULL;
	*v = strtoll(p, &e, 10);
	return e <= end ? e : NULL;
}

#define LIT(p, end, s) ((size_t)((end) - (p)) >= sizeof(s) - 1 && !memcmp(p, s, sizeof(s) - 1) \
			? (p) + sizeof(s) - 1 : NULL)

/* The fast path for a line the shipper wrote,
 *   {"host":"H","seq":N,"kind":"K","ts":T,...}
 * host, seq and kind become columns and data is "{" "ts":T,...}, cut
 * without parsing the rest (PostgreSQL validates it as jsonb; a batch it
 * refuses is redone through add_parsed). 1 when added, 0 when the line
 * has another shape. */
static int add_cut(struct ks_pg_batch *b, const char *p, const char *end, natsMsg *m)
{
	char host[256], kind[64];
	const char *data;
	int64_t seq, ts;

	if (!(p = LIT(p, end, "{\"host\":\"")) || !(p = plain_str(p, end, host, sizeof(host))) ||
	    !(p = LIT(p, end, "\",\"seq\":")) || !(p = int_at(p, end, &seq)) ||
	    !(p = LIT(p, end, ",\"kind\":\"")) || !(p = plain_str(p, end, kind, sizeof(kind))) ||
	    !(p = LIT(p, end, "\",")))
		return 0;
	data = p;
	if (!(p = LIT(p, end, "\"ts\":")) || !int_at(p, end, &ts) || end[-1] != '}')
		return 0;
	ts = ts_to_ms(ts);
	return ks_pg_batch_add(b, host, seq, ts ? ts : msg_ms(m), kind, data, end - data, 1) ? -1 : 1;
}

/* Any other event object: parsed, host/seq/kind taken out as columns. */
static int add_parsed(struct ks_pg_batch *b, const char *p, const char *end, natsMsg *m)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = json_tokener_parse_ex(tok, p, end - p);
	const char *host, *kind, *data;
	int64_t seq, ts;
	int r = 0;

	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(o, json_type_object) || !(host = ks_json_str(o, "host", NULL)))
		goto out;
	host = strdup(host);
	kind = strdup(ks_json_str(o, "kind", ""));
	seq = ks_json_i64(o, "seq");
	ts = ts_to_ms(ks_json_i64(o, "ts"));
	json_object_object_del(o, "host");
	json_object_object_del(o, "seq");
	json_object_object_del(o, "kind");
	data = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = ks_pg_batch_add(b, host, seq, ts ? ts : msg_ms(m), kind, data, strlen(data), 0) ? -1 : 1;
	free((char *)host);
	free((char *)kind);
out:
	if (o)
		json_object_put(o);
	json_tokener_free(tok);
	return r;
}

static void job_free(struct job *j)
{
	ks_pg_batch_free(&j->rows);
	for (int i = 0; i < j->list.Count; i++)
		nats_fn.natsMsg_Destroy(j->list.Msgs[i]);
	free(j->list.Msgs);
	free(j->z);
	free(j);
}

/* Turn a fetched batch into COPY rows; @strict parses every line (after
 * PostgreSQL refused the cut ones). Lines that are not events are counted
 * as bad: acked with the batch, never retried. */
static int job_build_range(struct job *j, int lo, int hi, bool strict)
{
	ks_pg_batch_reset(&j->rows);
	j->events = j->bad = 0;
	for (int i = lo; i < hi; i++) {
		natsMsg *m = j->list.Msgs[i];
		const char *p, *end, *nl;
		ssize_t n = msg_lines(j, m, &p);

		if (n < 0) {
			j->bad++;	/* not a frame of ours: acked, never retried */
			continue;
		}
		for (end = p + n; p < end; p = nl + 1) {
			int r = 0;

			nl = memchr(p, '\n', end - p) ?: end;
			if (nl == p)
				continue;
			j->events++;
			if (!strict)
				r = add_cut(&j->rows, p, nl, m);
			if (!r)
				r = add_parsed(&j->rows, p, nl, m);
			if (r < 0)
				return ks_err(-ENOMEM, "out of memory");
			if (!r)
				j->bad++;
		}
	}
	return 0;
}

static int job_build(struct job *j, bool strict)
{
	return job_build_range(j, 0, j->list.Count, strict);
}

/* Write @rows, retrying while PostgreSQL is away (not when it refuses the
 * data: -EINVAL) until it commits or we are told to stop. */
static int64_t write_retry(struct ks_pg *pg, struct ks_pg_batch *rows, int64_t *retries)
{
	int64_t r = 0;

	while (rows->rows && (r = ks_pg_write(pg, rows)) < 0 && r != -EINVAL) {
		if (collect_stop)
			return r;
		if ((*retries)++ % 20 == 0)
			fprintf(stderr, "collect: %s; holding %d events unacked, retrying\n", ks_errmsg(),
				rows->rows);
		usleep(250 * 1000);
	}
	return r;
}

/* Write one batch, retrying PostgreSQL until it commits (or we are told to
 * stop). Returns rows inserted, or a negative errno when stopped. When
 * PostgreSQL refuses the data, the lines are parsed rather than cut, then
 * written message by message: a message it still refuses is dropped (and
 * counted bad) instead of holding back every batch behind it. */
static int64_t job_write(struct ks_pg *pg, struct job *j, int64_t *retries)
{
	int64_t r = write_retry(pg, &j->rows, retries), sum = 0, events = 0, bad = 0;

	if (r != -EINVAL)
		return r;
	if (job_build(j, true))
		return -ENOMEM;
	r = write_retry(pg, &j->rows, retries);
	if (r != -EINVAL)
		return r;
	for (int i = 0; i < j->list.Count; i++) {
		if (job_build_range(j, i, i + 1, true))
			return -ENOMEM;
		r = write_retry(pg, &j->rows, retries);
		if (r == -EINVAL) {
			fprintf(stderr, "collect: dropping a message of %d events from %s: %s\n",
				j->rows.rows, nats_fn.natsMsg_GetSubject(j->list.Msgs[i]), ks_errmsg());
			j->bad = j->events;
		} else if (r < 0) {
			return r;
		} else {
			sum += r;
		}
		events += j->events;
		bad += j->bad;
	}
	j->events = events;
	j->bad = bad;
	return sum;
}

/* The fetch thread builds batches while the writers write them, each
 * through its own PostgreSQL connection, and ack each message of a batch
 * once it committed. Batches may commit out of order: acks are explicit,
 * per message, so no ack ever covers a message that was not written (an
 * ack-all durable would: a restarted collector's first ack covered what
 * its predecessor had fetched and never written). */
#define MAX_WORKERS 8
#define RING (MAX_WORKERS + 1)

struct pipe {
	struct ks_pull *pull;
	const char *conninfo;
	int batch, workers;
	bool drain;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *ring[RING];	/* fetched, in fetch order, until acked */
	bool written[RING];
	int64_t head, next, tail;	/* oldest unacked, next to write, next to fetch */
	bool fetched_all;	/* the fetch thread has stopped */
	int err;
	struct collect_stats st;
	int64_t copies, fallbacks;
	double pg_lag_s, last_commit_s;	/* for --metrics */
};

/* The durable, with explicit acks. Created by us so that the library
 * only binds to it (and never deletes it on unsubscribe): its position is
 * the collector's progress. One made by an earlier version with ack-all
 * is replaced by one that starts above its ack floor: what it had
 * delivered but not acked is delivered again. */
static int durable_ensure(jsCtx *js)
{
	jsConsumerInfo *ci = NULL;
	jsConsumerConfig cc;
	jsErrCode jerr = 0;
	uint64_t start = 0;
	natsStatus ns;

	if (nats_fn.js_GetConsumerInfo(&ci, js, KS_EVENTS_STREAM, COLLECT_DURABLE, NULL, &jerr) == NATS_OK) {
		bool ack_all = ci->Config->AckPolicy == js_AckAll;

		start = ci->AckFloor.Stream + 1;
		nats_fn.jsConsumerInfo_Destroy(ci);
		if (!ack_all)
			return 0;
		ns = nats_fn.js_DeleteConsumer(js, KS_EVENTS_STREAM, COLLECT_DURABLE, NULL, &jerr);
		if (ns != NATS_OK)
			return ks_nats_err(ns, "replacing the ack-all durable " COLLECT_DURABLE);
	}
	nats_fn.jsConsumerConfig_Init(&cc);
	cc.Durable = COLLECT_DURABLE;
	cc.AckPolicy = js_AckExplicit;	/* one ack per frame of events */
	cc.AckWait = (int64_t)30 * 1000000000LL;
	cc.MaxAckPending = 65536;
	if (start) {
		cc.DeliverPolicy = js_DeliverByStartSequence;
		cc.OptStartSeq = start;
	}
	ns = nats_fn.js_AddConsumer(&ci, js, KS_EVENTS_STREAM, &cc, NULL, &jerr);
	if (ns == NATS_OK) {
		nats_fn.jsConsumerInfo_Destroy(ci);
		return 0;
	}
	/* Another collector may have created it meanwhile. */
	ns = nats_fn.js_GetConsumerInfo(&ci, js, KS_EVENTS_STREAM, COLLECT_DURABLE, NULL, &jerr);
	if (ns != NATS_OK)
		return ks_nats_err(ns, "creating the durable " COLLECT_DURABLE);
	nats_fn.jsConsumerInfo_Destroy(ci);
	return 0;
}

static void *fetch_loop(void *arg)
{
	struct pipe *pp = arg;
	int idle = 0, err = 0;

	double per_msg = 1024;	/* events a message carries, as last seen */

	while (!collect_stop) {
		struct job *j = calloc(1, sizeof(*j));
		int max, r;

		/* About pp->batch events, whether messages are frames or
		 * single events (an older agent's). Take what is there now,
		 * and when there is nothing, wait for the first message only. */
		max = pp->batch / per_msg;
		max = max < 1 ? 1 : max > 5000 ? 5000 : max;
		if (!j || !(j->list.Msgs = calloc(max, sizeof(*j->list.Msgs)))) {
			free(j);
			err = ks_err(-ENOMEM, "out of memory");
			break;
		}
		r = ks_pull_fetch(pp->pull, j->list.Msgs, max, FETCH_MAX_BYTES, true, 50, &j->list.Count);
		if (!j->list.Count)
			r = ks_pull_fetch(pp->pull, j->list.Msgs, 1, FETCH_MAX_BYTES, false, 1000,
					  &j->list.Count);
		if (!j->list.Count) {
			job_free(j);
			if (r != -ETIMEDOUT && r != -ENOENT) {
				usleep(250 * 1000);	/* NATS away: the library reconnects */
				continue;
			}
			/* Two quiet seconds in a row with nothing pending: drained. */
			if (pp->drain && ++idle >= 2)
				break;
			continue;
		}
		idle = 0;
		if ((err = job_build(j, false))) {
			job_free(j);
			break;
		}
		per_msg = j->events > j->list.Count ? (double)j->events / j->list.Count : 1;
		pthread_mutex_lock(&pp->mu);
		while (pp->tail - pp->head > pp->workers && !pp->err && !collect_stop)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->err || collect_stop) {
			pthread_mutex_unlock(&pp->mu);
			job_free(j);
			break;
		}
		pp->ring[pp->tail % RING] = j;
		pp->written[pp->tail % RING] = false;
		pp->tail++;
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
	}
	pthread_mutex_lock(&pp->mu);
	pp->fetched_all = true;
	if (err && !pp->err)
		pp->err = err;
	pthread_cond_broadcast(&pp->cv);
	pthread_mutex_unlock(&pp->mu);
	return NULL;
}

/* Free the batches from the oldest on that are written (and acked);
 * called locked. */
static void free_written(struct pipe *pp)
{
	while (pp->head < pp->next && pp->written[pp->head % RING]) {
		job_free(pp->ring[pp->head % RING]);
		pp->head++;
	}
}

static void *write_loop(void *arg)
{
	struct pipe *pp = arg;
	struct ks_pg pg = { 0 };
	int64_t retries = 0;
	int err = ks_pg_open(&pg, pp->conninfo);

	if (err == -ENOMEM)
		goto out;
	err = 0;	/* PostgreSQL away: ks_pg_write retries */
	for (;;) {
		struct job *j;
		int64_t k, r;

		pthread_mutex_lock(&pp->mu);
		while (pp->next == pp->tail && !pp->fetched_all && !pp->err)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->next == pp->tail || pp->err) {
			pthread_mutex_unlock(&pp->mu);
			break;
		}
		k = pp->next++;
		j = pp->ring[k % RING];
		pthread_mutex_unlock(&pp->mu);

		r = job_write(&pg, j, &retries);

		if (r >= 0)	/* committed: ack each message (frame) */
			for (int i = 0; i < j->list.Count; i++)
				ks_pull_ack(pp->pull, j->list.Msgs[i]);
		pthread_mutex_lock(&pp->mu);
		if (r < 0) {
			/* Stopped: this batch stays unacked (redelivered). */
			err = (int)r;
			pthread_mutex_unlock(&pp->mu);
			break;
		}
		pp->written[k % RING] = true;
		pp->st.inserted += r;
		pp->st.received += j->events;
		pp->st.bad += j->bad;
		pp->st.frames += j->list.Count;
		pp->st.batches++;
		if (j->list.Count > 0) {
			int64_t now = ks_now_ms();

			pp->pg_lag_s = (now - msg_ms(j->list.Msgs[j->list.Count - 1])) / 1000.0;
			pp->last_commit_s = now / 1000.0;
		}
		free_written(pp);
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
	}
out:
	pthread_mutex_lock(&pp->mu);
	if (err && !pp->err)
		pp->err = err;
	pp->st.pg_retries += retries;
	pp->copies += pg.copies;
	pp->fallbacks += pg.fallbacks;
	pthread_cond_broadcast(&pp->cv);
	pthread_mutex_unlock(&pp->mu);
	ks_pg_close(&pg);
	return NULL;
}

/* --metrics: the server's own thread; the counters are read under the
 * pipe's lock. */
static int scrape(void *cls, char **text, size_t *len)
{
	struct pipe *pp = cls;
	struct ks_metrics_collect m;

	pthread_mutex_lock(&pp->mu);
	m = (struct ks_metrics_collect){
		.received = pp->st.received, .inserted = pp->st.inserted, .bad = pp->st.bad,
		.frames = pp->st.frames, .batches = pp->st.batches, .pg_retries = pp->st.pg_retries,
		.pg_lag_s = pp->pg_lag_s, .last_commit_s = pp->last_commit_s,
	};
	pthread_mutex_unlock(&pp->mu);
	return ks_metrics_collect_render(&m, text, len);
}

static int do_help(void)
{
	fprintf(stderr,
		"Usage: kshield collect --pg CONNINFO [--batch N] [--workers N] [--retain-days D] [--drain]\n"
		"                       [--metrics ADDR:PORT] NATS\n"
		KS_NATS_OPTS_HELP
		"\n"
		"Consumes the fleet's events stream (durable consumer " COLLECT_DURABLE ") in\n"
		"batches of about N events (default 16384; 8 MiB at most) and COPYs them into\n"
		"ks_events in PostgreSQL, day-partitioned, through --workers connections\n"
		"(default 2), acking in order and only after COMMIT, de-duplicating on\n"
		"(host, seq). --drain exits once the stream has nothing more to deliver;\n"
		"--retain-days drops older partitions. --metrics serves Prometheus metrics\n"
		"(events, duplicates, bad frames, PostgreSQL lag) on http://ADDR:PORT/metrics.\n");
	return 0;
}

int do_collect(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *conninfo = NULL, *metrics = NULL;
	struct ks_metrics_http *http = NULL;
	struct sockaddr_storage ss;
	int batch = 16384, retain = 0;
	bool drain = false;
	struct collect_stats st = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t fetcher, writers[MAX_WORKERS];
	int workers = 2, nw = 0;
	struct ks_pg pg = { 0 };
	struct pipe pp = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct ks_nats n;
	struct ks_pull pull = { 0 };
	int64_t t0;
	int err;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no), OPT_VAL("--pg", &conninfo), OPT_INT("--batch", &batch),
		OPT_INT("--workers", &workers), OPT_INT("--retain-days", &retain),
		OPT_FLAG("--drain", &drain), OPT_VAL("--metrics", &metrics), OPT_END
	};

	if (!ks_opts_parse("collect", opts, argc, argv, 0, NULL, do_help, &err))
		return err;
	ks_nats_opts_env(&no);
	if (!conninfo || batch <= 0 || workers < 1 || workers > MAX_WORKERS)
		return ks_usage("usage: kshield collect --pg CONNINFO [--batch N] [--workers 1-%d] "
				"[--retain-days D] [--drain] NATS", MAX_WORKERS);
	if (metrics && (err = ks_addr_port_parse(metrics, "--metrics", &ss)))
		return ks_report(err);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = ks_pg_open(&pg, conninfo);
	if (!err && retain > 0 && ks_pg_retain(&pg, retain) < 0)
		err = -EIO;
	if (err) {
		ks_pg_close(&pg);
		return ks_report(err);
	}
	err = ks_nats_open(&n, &no, true, true);
	if (err) {
		ks_pg_close(&pg);
		return ks_report(err);
	}
	err = durable_ensure(n.js);
	if (err)
		goto out;
	err = ks_pull_open(&pull, n.nc, KS_EVENTS_STREAM, COLLECT_DURABLE);
	if (err)
		goto out;
	pp.pull = &pull;
	pp.conninfo = conninfo;
	pp.batch = batch;
	pp.workers = workers;
	pp.drain = drain;
	t0 = ks_now_ms();
	if (metrics && (err = ks_metrics_http_start(metrics, "--metrics", true, scrape, &pp, &http)))
		goto out;
	if (pthread_create(&fetcher, NULL, fetch_loop, &pp)) {
		err = ks_err(-EAGAIN, "can't start the fetch thread");
		goto out;
	}
	for (nw = 0; nw < workers; nw++)
		if (pthread_create(&writers[nw], NULL, write_loop, &pp))
			break;
	if (!nw) {
		collect_stop = 1;
		pthread_cond_broadcast(&pp.cv);
		err = ks_err(-EAGAIN, "can't start the writers");
	}
	for (int i = 0; i < nw; i++)
		pthread_join(writers[i], NULL);
	/* Writers gone (stopped, or everything fetched is written): stop
	 * the fetch thread too, should it still be waiting for room. */
	pthread_mutex_lock(&pp.mu);
	if (!pp.err)
		pp.err = -ECANCELED;
	pthread_cond_broadcast(&pp.cv);
	pthread_mutex_unlock(&pp.mu);
	pthread_join(fetcher, NULL);
	if (!err && pp.err != -ECANCELED)
		err = pp.err;
	/* Fetched, unacked: redelivered to the next collector. */
	for (; pp.head < pp.tail; pp.head++)
		job_free(pp.ring[pp.head % RING]);
	st = pp.st;
	if (json_output) {
		json_object *o = json_object_new_object();
		double secs = (ks_now_ms() - t0) / 1000.0;

		json_object_object_add(o, "received", json_object_new_int64(st.received));
		json_object_object_add(o, "inserted", json_object_new_int64(st.inserted));
		json_object_object_add(o, "duplicates", json_object_new_int64(st.received - st.inserted - st.bad));
		json_object_object_add(o, "bad", json_object_new_int64(st.bad));
		json_object_object_add(o, "messages", json_object_new_int64(st.frames));
		json_object_object_add(o, "batches", json_object_new_int64(st.batches));
		json_object_object_add(o, "copy_batches", json_object_new_int64(pp.copies));
		json_object_object_add(o, "staged_batches", json_object_new_int64(pp.fallbacks));
		json_object_object_add(o, "pg_retries", json_object_new_int64(st.pg_retries));
		json_object_object_add(o, "seconds", json_object_new_double(secs));
		ks_json_print(o);
	} else {
		printf("collected %lld events (%lld new, %lld duplicates) in %lld messages, %lld batches\n",
		       (long long)st.received, (long long)st.inserted,
		       (long long)(st.received - st.inserted - st.bad), (long long)st.frames,
		       (long long)st.batches);
	}
out:
	ks_metrics_http_stop(http);
	ks_pull_close(&pull);	/* the durable stays */
	ks_nats_close(&n);
	ks_pg_close(&pg);
	return err ? ks_report(err) : 0;
}
#endif /* KSHIELD_STATIC */
