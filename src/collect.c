/* collect.c - `kshield collect`: the fleet's events from the JetStream
 * stream into PostgreSQL.
 *
 * A durable pull consumer fetches batches; each batch is written in one
 * transaction (COPY + de-duplicating INSERT, fleet_pg.c) and acknowledged
 * only after COMMIT. If PostgreSQL goes away the batch is held, unacked,
 * and retried until it commits; messages redelivered meanwhile are
 * duplicates that the (host, seq) key drops. Nothing is acked unwritten.
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "fleet_kv.h"
#include "fleet_nats.h"
#include "fleet_pg.h"

#define COLLECT_DURABLE "kshield-collect"

static volatile sig_atomic_t collect_stop;

static void on_signal(int sig)
{
	(void)sig;
	collect_stop = 1;
}

/* An event's time, in ms: its "ts" field (s, ms, us or ns since the epoch,
 * told apart by size) or else when JetStream stored the message. */
static int64_t event_ms(json_object *o, natsMsg *m)
{
	int64_t ts = ks_json_i64(o, "ts");
	jsMsgMetaData *md = NULL;

	if (ts > 100000000000000000LL)
		return ts / 1000000;
	if (ts > 100000000000000LL)
		return ts / 1000;
	if (ts > 100000000000LL)
		return ts;
	if (ts > 0)
		return ts * 1000;
	if (natsMsg_GetMetaData(&md, m) == NATS_OK) {
		ts = md->Timestamp / 1000000;
		jsMsgMetaData_Destroy(md);
		return ts;
	}
	return ks_now_ms();
}

static bool ack_each;

struct collect_stats {
	int64_t received, inserted, batches, pg_retries, bad;
};

/* Write one fetched batch, retrying PostgreSQL until it commits (or we are
 * told to stop, in which case nothing is acked). Returns 0 when acked. */
static int write_batch(struct ks_pg *pg, natsMsgList *list, struct collect_stats *st)
{
	struct ks_pg_row *rows = calloc(list->Count, sizeof(*rows));
	json_object **objs = calloc(list->Count, sizeof(*objs));
	int n = 0, err = 0;
	int64_t r;

	for (int i = 0; i < list->Count; i++) {
		natsMsg *m = list->Msgs[i];
		json_object *o = json_tokener_parse(natsMsg_GetData(m));

		if (!o || !ks_json_str(o, "host", NULL)) {
			st->bad++;	/* not ours: acked below, never retried */
			if (o)
				json_object_put(o);
			continue;
		}
		objs[n] = o;
		rows[n].host = ks_json_str(o, "host", "");
		rows[n].seq = ks_json_i64(o, "seq");
		rows[n].ts_ms = event_ms(o, m);
		rows[n].kind = ks_json_str(o, "kind", "");
		rows[n].data = natsMsg_GetData(m);
		n++;
	}
	while (n && (r = ks_pg_write(pg, rows, n)) < 0) {
		if (collect_stop) {
			err = (int)r;
			break;
		}
		if (st->pg_retries++ % 20 == 0)
			fprintf(stderr, "collect: %s; holding %d events unacked, retrying\n", ks_errmsg(), n);
		usleep(250 * 1000);
	}
	if (!err && n)
		st->inserted += r;
	if (!err) {
		if (ack_each)	/* a durable made with explicit acks earlier */
			for (int i = 0; i < list->Count; i++)
				natsMsg_Ack(list->Msgs[i], NULL);
		else if (list->Count)
			natsMsg_AckSync(list->Msgs[list->Count - 1], NULL, NULL);
		st->received += list->Count;
		st->batches++;
	}
	for (int i = 0; i < n; i++)
		json_object_put(objs[i]);
	free(objs);
	free(rows);
	return err;
}

static int do_help(void)
{
	fprintf(stderr,
		"Usage: kshield collect --pg CONNINFO [--batch N] [--retain-days D] [--drain] NATS\n"
		KS_NATS_OPTS_HELP
		"\n"
		"Consumes the fleet's events stream (durable consumer " COLLECT_DURABLE ") in\n"
		"batches and COPYs them into ks_events in PostgreSQL, day-partitioned, acking\n"
		"only after COMMIT and de-duplicating on (host, seq). --drain exits once the\n"
		"stream has nothing more to deliver; --retain-days drops older partitions.\n");
	return 0;
}

int do_collect(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *conninfo = NULL;
	int batch = 5000, retain = 0, idle = 0;
	bool drain = false;
	struct collect_stats st = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct ks_pg pg = { 0 };
	struct ks_nats n;
	natsSubscription *sub = NULL;
	jsSubOptions so;
	jsErrCode jerr = 0;
	natsStatus ns;
	int64_t t0;
	int err;

	for (int i = 0; i < argc; i++) {
		if (ks_nats_parse_opt(&no, argc, argv, &i))
			continue;
		if (!strcmp(argv[i], "help"))
			return do_help();
		if (!strcmp(argv[i], "--pg") && i + 1 < argc)
			conninfo = argv[++i];
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			batch = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--retain-days") && i + 1 < argc)
			retain = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--drain"))
			drain = true;
		else
			return ks_usage("unknown argument '%s' for collect (see 'kshield collect help')", argv[i]);
	}
	if (!conninfo || batch <= 0)
		return ks_usage("usage: kshield collect --pg CONNINFO [--batch N] [--retain-days D] [--drain] NATS");
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
	/* Create the durable ourselves so that the library only binds to it
	 * (and never deletes it on unsubscribe): its position is the
	 * collector's progress. */
	{
		jsConsumerConfig cc;
		jsConsumerInfo *ci = NULL;

		jsConsumerConfig_Init(&cc);
		cc.Durable = COLLECT_DURABLE;
		/* Ack-all: acking a batch's last message acks the batch (one ack
		 * instead of thousands, each of which the cluster replicates).
		 * Batches are written in order by one collector per durable. */
		cc.AckPolicy = js_AckAll;
		cc.AckWait = (int64_t)30 * 1000000000LL;
		cc.MaxAckPending = 65536;
		cc.MaxRequestBatch = 0;
		if (js_AddConsumer(&ci, n.js, KS_EVENTS_STREAM, &cc, NULL, &jerr) == NATS_OK)
			jsConsumerInfo_Destroy(ci);
	}
	jsSubOptions_Init(&so);
	so.Stream = KS_EVENTS_STREAM;
	so.Consumer = COLLECT_DURABLE;
	ns = js_PullSubscribe(&sub, n.js, KS_EVENTS_SUBJECT ".>", COLLECT_DURABLE, NULL, &so, &jerr);
	if (ns != NATS_OK) {
		err = ks_nats_err(ns, "subscribing to " KS_EVENTS_STREAM);
		goto out;
	}
	{
		jsConsumerInfo *ci = NULL;

		if (natsSubscription_GetConsumerInfo(&ci, sub, NULL, &jerr) == NATS_OK) {
			ack_each = ci->Config->AckPolicy != js_AckAll;
			jsConsumerInfo_Destroy(ci);
		}
	}
	t0 = ks_now_ms();
	while (!collect_stop) {
		natsMsgList list = { 0 };

		ns = natsSubscription_Fetch(&list, sub, batch, 1000, &jerr);
		if (ns == NATS_TIMEOUT || (ns == NATS_OK && !list.Count)) {
			natsMsgList_Destroy(&list);
			/* Two quiet seconds in a row with nothing pending: drained. */
			if (drain && ++idle >= 2)
				break;
			continue;
		}
		if (ns != NATS_OK) {
			natsMsgList_Destroy(&list);
			usleep(250 * 1000);	/* NATS away: the library reconnects */
			continue;
		}
		idle = 0;
		err = write_batch(&pg, &list, &st);
		natsMsgList_Destroy(&list);
		if (err)
			break;
	}
	if (json_output) {
		json_object *o = json_object_new_object();
		double secs = (ks_now_ms() - t0) / 1000.0;

		json_object_object_add(o, "received", json_object_new_int64(st.received));
		json_object_object_add(o, "inserted", json_object_new_int64(st.inserted));
		json_object_object_add(o, "duplicates", json_object_new_int64(st.received - st.inserted - st.bad));
		json_object_object_add(o, "bad", json_object_new_int64(st.bad));
		json_object_object_add(o, "batches", json_object_new_int64(st.batches));
		json_object_object_add(o, "pg_retries", json_object_new_int64(st.pg_retries));
		json_object_object_add(o, "seconds", json_object_new_double(secs));
		ks_json_print(o);
	} else {
		printf("collected %lld events (%lld new, %lld duplicates) in %lld batches\n",
		       (long long)st.received, (long long)st.inserted,
		       (long long)(st.received - st.inserted - st.bad), (long long)st.batches);
	}
out:
	if (sub) {
		natsSubscription_Destroy(sub);	/* bound, not created: the durable stays */
	}
	ks_nats_close(&n);
	ks_pg_close(&pg);
	return err ? ks_report(err) : 0;
}
#endif /* KSHIELD_STATIC */
