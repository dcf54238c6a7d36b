/* fleet_ship.c - events out of the local SQLite store into JetStream.
 *
 * Each pass reads the rows above the shipped-up-to mark in rowid order,
 * publishes each one asynchronously as JSON ({"host", "seq", <columns>})
 * to kshield.events.<host> with message id "<host>:<seq>:<ts>", waits for every
 * acknowledgement, and only then moves the mark (a row of fleet_shipped in
 * the same store). When NATS is unreachable nothing moves: the agent keeps
 * enforcing and recording, and the backlog ships when NATS returns. A batch
 * that failed half-way is re-sent whole; the duplicate window and the
 * collector's (host, seq) key keep it from being stored twice.
 *
 * The shipper reads the store through its own connection (WAL lets it read
 * while the agent writes) and does not depend on the store's columns.
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <json-c/json.h>
#include "cli.h"
#include "fleet_ship.h"

#define SHIP_BATCH 16384

struct ks_ship {
	struct ks_nats *n;
	char host[256], key[256], subject[300];
	char *store;
	sqlite3 *db;
	volatile sig_atomic_t *stop;
	pthread_t th;
};

static int ship_open(struct ks_ship *s)
{
	char *msg = NULL;

	if (s->db)
		return 0;
	if (access(s->store, R_OK))
		return -ENOENT;	/* the agent has not created it yet */
	if (sqlite3_open_v2(s->store, &s->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(s->db);
		s->db = NULL;
		return ks_err(-EIO, "can't open store %s", s->store);
	}
	sqlite3_busy_timeout(s->db, 5000);
	if (sqlite3_exec(s->db, "CREATE TABLE IF NOT EXISTS fleet_shipped("
			 "host TEXT PRIMARY KEY, upto INTEGER NOT NULL)", NULL, NULL, &msg)) {
		int err = ks_err(-EIO, "store %s: %s", s->store, msg);

		sqlite3_free(msg);
		sqlite3_close(s->db);
		s->db = NULL;
		return err;
	}
	return 0;
}

static int64_t get_mark(struct ks_ship *s)
{
	sqlite3_stmt *st;
	int64_t m = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT upto FROM fleet_shipped WHERE host = ?", -1, &st, NULL))
		return -EIO;
	sqlite3_bind_text(st, 1, s->host, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		m = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return m;
}

static int set_mark(struct ks_ship *s, int64_t m)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO fleet_shipped(host, upto) VALUES(?, ?) "
			       "ON CONFLICT(host) DO UPDATE SET upto = excluded.upto", -1, &st, NULL))
		return -EIO;
	sqlite3_bind_text(st, 1, s->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, m);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : ks_err(-EIO, "store: can't move the shipped mark: %s",
					      sqlite3_errmsg(s->db));
}

static int64_t ks_json_i64_field(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static json_object *row_json(struct ks_ship *s, sqlite3_stmt *st, int64_t seq)
{
	json_object *o = json_object_new_object();
	int n = sqlite3_column_count(st);

	json_object_object_add(o, "host", json_object_new_string(s->host));
	json_object_object_add(o, "seq", json_object_new_int64(seq));
	for (int i = 1; i < n; i++) {
		const char *name = sqlite3_column_name(st, i);
		json_object *v = NULL;

		switch (sqlite3_column_type(st, i)) {
		case SQLITE_INTEGER:
			v = json_object_new_int64(sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			v = json_object_new_double(sqlite3_column_double(st, i));
			break;
		case SQLITE_TEXT:
			v = json_object_new_string((const char *)sqlite3_column_text(st, i));
			break;
		case SQLITE_BLOB: {
			const unsigned char *b = sqlite3_column_blob(st, i);
			int len = sqlite3_column_bytes(st, i);
			char *hex = malloc(2 * len + 1);

			for (int k = 0; k < len; k++)
				sprintf(hex + 2 * k, "%02x", b[k]);
			hex[2 * len] = '\0';
			v = json_object_new_string(hex);
			free(hex);
			break;
		}
		default:
			break;
		}
		if (strcmp(name, "host") && strcmp(name, "seq"))
			json_object_object_add(o, name, v);
		else
			json_object_put(v);
	}
	return o;
}

/* Ship up to @max rows above the mark. Returns rows shipped or -errno. */
static int64_t ship_batch(struct ks_ship *s, int64_t max, int64_t *mark_out)
{
	sqlite3_stmt *st;
	int64_t mark = get_mark(s), last = mark, sent = 0;
	int errs0 = s->n->pub_errors;
	jsPubOptions po;
	natsStatus ns = NATS_OK;
	char id[320];

	if (mark < 0)
		return mark;
	/* The store numbers rows with its rowid; if it was emptied (retention)
	 * or recreated, numbering restarted below our mark: start over. The
	 * message id and the collector's key include ts, so a reused number
	 * is never mistaken for a duplicate. */
	if (mark > 0 && sqlite3_prepare_v2(s->db, "SELECT max(rowid) FROM events", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
		    sqlite3_column_int64(st, 0) < mark)
			mark = 0;
		sqlite3_finalize(st);
	}
	if (mark_out)
		*mark_out = mark;
	if (sqlite3_prepare_v2(s->db, "SELECT rowid, * FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?",
			       -1, &st, NULL))
		return ks_err(-EIO, "store: %s", sqlite3_errmsg(s->db));
	sqlite3_bind_int64(st, 1, mark);
	sqlite3_bind_int64(st, 2, max > 0 ? max : SHIP_BATCH);
	jsPubOptions_Init(&po);
	po.MsgId = id;
	while (ns == NATS_OK && sqlite3_step(st) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(st, 0);
		json_object *o = row_json(s, st, seq);
		const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								JSON_C_TO_STRING_NOSLASHESCAPE);

		snprintf(id, sizeof(id), "%s:%lld:%lld", s->host, (long long)seq,
			 (long long)ks_json_i64_field(o, "ts"));
		ns = js_PublishAsync(s->n->js, s->subject, txt, strlen(txt), &po);
		json_object_put(o);
		last = seq;
		sent++;
	}
	sqlite3_finalize(st);
	if (!sent)
		return 0;
	if (ns == NATS_OK) {
		jsPubOptions wait;

		jsPubOptions_Init(&wait);
		wait.MaxWait = 10000;
		ns = js_PublishAsyncComplete(s->n->js, &wait);
	}
	if (ns != NATS_OK || s->n->pub_errors != errs0) {
		natsMsgList pending;

		/* Drop what is still in flight: the next pass re-sends the
		 * whole batch from the unchanged mark. */
		if (js_PublishAsyncGetPendingList(&pending, s->n->js) == NATS_OK)
			natsMsgList_Destroy(&pending);
		return ns != NATS_OK ? ks_nats_err(ns, "shipping events")
				     : ks_err(-EIO, "shipping events: JetStream refused some");
	}
	if (set_mark(s, last))
		return -EIO;
	if (mark_out)
		*mark_out = last;
	return sent;
}

static void *ship_loop(void *arg)
{
	struct ks_ship *s = arg;
	bool stream = false;

	while (!*s->stop) {
		int64_t n;

		if (!s->n->connected || ship_open(s)) {
			usleep(250 * 1000);
			continue;
		}
		if (!stream && ks_nats_ensure_stream(s->n, 0)) {
			usleep(500 * 1000);
			continue;
		}
		stream = true;
		n = ship_batch(s, 0, NULL);
		if (n < 0)
			usleep(500 * 1000);	/* NATS away: the store keeps the backlog */
		else if (n < SHIP_BATCH)
			usleep(100 * 1000);
	}
	return NULL;
}

int ks_ship_start(struct ks_ship **out, struct ks_nats *n, const char *host, const char *store,
		  volatile sig_atomic_t *stop)
{
	struct ks_ship *s = calloc(1, sizeof(*s));

	s->n = n;
	s->stop = stop;
	s->store = strdup(store);
	snprintf(s->host, sizeof(s->host), "%s", host);
	ks_nats_key_safe(host, s->key, sizeof(s->key));
	snprintf(s->subject, sizeof(s->subject), KS_EVENTS_SUBJECT ".%s", s->key);
	if (pthread_create(&s->th, NULL, ship_loop, s)) {
		free(s->store);
		free(s);
		return ks_err(-EAGAIN, "can't start the event shipper");
	}
	*out = s;
	return 0;
}

void ks_ship_stop(struct ks_ship *s)
{
	if (!s)
		return;
	pthread_join(s->th, NULL);
	if (s->db)
		sqlite3_close(s->db);
	free(s->store);
	free(s);
}

int64_t ks_ship_pass(struct ks_nats *n, const char *host, const char *store, int64_t max,
		     int64_t *mark)
{
	struct ks_ship s = { .n = n };
	int64_t r;

	s.store = (char *)store;
	snprintf(s.host, sizeof(s.host), "%s", host);
	ks_nats_key_safe(host, s.key, sizeof(s.key));
	snprintf(s.subject, sizeof(s.subject), KS_EVENTS_SUBJECT ".%s", s.key);
	r = ship_open(&s);
	if (r)
		return r == -ENOENT ? ks_err(-ENOENT, "no store at %s", store) : r;
	r = ks_nats_ensure_stream(n, 0);
	if (!r)
		r = ship_batch(&s, max, mark);
	sqlite3_close(s.db);
	return r;
}
#endif /* KSHIELD_STATIC */
