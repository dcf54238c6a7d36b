// SPDX-License-Identifier: MIT
/* fleet_ship.c - events out of the local SQLite store into JetStream.
 *
 * Each pass reads the rows above the shipped-up-to mark in rowid order,
 * writes them as event lines into frames (fleet_ship.h) and publishes each
 * frame asynchronously to kshield.events.<host>, with at most SHIP_WINDOW
 * frames awaiting their acknowledgement. Acks come back on the library's
 * thread; the mark (a row of fleet_shipped in the same store) moves over
 * the frames acknowledged from the mark on, never past one that is not.
 * When NATS is unreachable or refuses a frame, the pass stops, what is in
 * flight is dropped, and the next pass starts again from the mark: the
 * agent keeps enforcing and recording, and the backlog ships when NATS
 * returns. A frame re-sent whole is dropped by JetStream's duplicate
 * window; any other re-sent event by the collector's (host, seq) key.
 * Then a late pass ships the rows stored below the mark after the wall
 * clock stepped back, which the store lists in its table late.
 *
 * The shipper reads the store through its own connection (WAL lets it read
 * while the agent writes) and does not depend on the store's columns.
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include <zstd.h>
#include "buf.h"
#include "clock.h"
#include "err.h"
#include "hex.h"
#include "fleet_ship.h"
#include "fleet_dl.h"

#define SHIP_CHUNK 16384	/* rows per read of the store */
#define SHIP_ACK_WAIT_MS 10000	/* per frame, then the pass gives up */
#define SHIP_MARK_EVERY_MS 250	/* how often a long pass saves its mark */

struct frame {
	char id[320];
	int64_t last;		/* where the frame's last event is in its pass's
				 * order: its rowid (store pass), its id in
				 * table late (late pass) */
	bool acked;
};

struct ks_ship {
	struct ks_nats *n;
	jsCtx *js;		/* our own, for the ack callback */
	char host[256], key[256], subject[300];
	char host_json[1600];	/* "{\"host\":\"H\",\"seq\":", H escaped */
	size_t host_json_len;
	char *store;
	sqlite3 *db;
	volatile sig_atomic_t *stop;
	pthread_t th;
	/* the frame being built, and compressed */
	char *buf;
	size_t len, cap;
	ZSTD_CCtx *zc;
	char *zbuf;
	size_t zcap;
	int rows;
	int64_t first, first_ts, last;	/* seq of the first and last event, ts */
	int64_t at;			/* the pass's position of the last */
	bool late;			/* the late pass (table late) */
	/* frames in flight, oldest first, and what is acked from the mark on */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct frame win[SHIP_WINDOW];
	int head, count;
	bool failed;
	int64_t acked_upto;
};

static int ship_open(struct ks_ship *s)
{
	char *msg = NULL;

	if (s->db)
		return 0;
	if (access(s->store, R_OK))
		return -ENOENT;	/* the agent has not created it yet */
	/* One thread uses this connection: no per-call mutex. */
	if (sqlite3_open_v2(s->store, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		sqlite3_close(s->db);
		s->db = NULL;
		return ks_err(-EIO, "can't open store %s", s->store);
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* The mark's commits hold the agent's write lock: no fsync in them.
	 * A mark lost with power re-ships, and the collector drops what it
	 * has by (host, seq). */
	sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
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

/* ---- event lines ---- */

static int reserve(struct ks_ship *s, size_t more)
{
	return ks_buf_reserve(&s->buf, &s->cap, s->len + more, SHIP_FRAME_BYTES * 2);
}

/* Length of the valid UTF-8 sequence at @p (1..4), or 0. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	int n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;

	if (!n || end - p < n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && *p == 0xe0 && p[1] < 0xa0) || (n == 3 && *p == 0xed && p[1] >= 0xa0) ||
	    (n == 4 && *p == 0xf0 && p[1] < 0x90) || (n == 4 && *p == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* A JSON string. Bytes that are not UTF-8 (a command line may hold any)
 * and NUL become U+FFFD: PostgreSQL's jsonb refuses both, and one refused
 * event must not hold back the rest. Needs 6 * n + 2 bytes reserved. */
static void put_str(struct ks_ship *s, const char *str, size_t n)
{
	const unsigned char *p = (const unsigned char *)str, *end = p + n;
	char *o = s->buf + s->len;

	*o++ = '"';
	while (p < end) {
		unsigned char c = *p;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*o++ = c;
			p++;
		} else if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = c;
			p++;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			*o++ = '\\';
			*o++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			p++;
		} else if (c && c < 0x20) {
			o += sprintf(o, "\\u%04x", c);
			p++;
		} else {
			int k = c ? utf8_len(p, end) : 0;

			if (k) {
				memcpy(o, p, k);
				o += k;
				p += k;
			} else {
				memcpy(o, "\xef\xbf\xbd", 3);
				o += 3;
				p++;
			}
		}
	}
	*o++ = '"';
	s->len = o - s->buf;
}

/* Column names as `,"name":`, and where ts and kind are, per statement. */
struct cols {
	int n, ts, kind;
	char **key;
	size_t *klen;
};

static void cols_free(struct cols *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->key[i]);
	free(c->key);
	free(c->klen);
	memset(c, 0, sizeof(*c));
}

static int cols_init(struct cols *c, sqlite3_stmt *st)
{
	c->n = sqlite3_column_count(st);
	c->ts = c->kind = -1;
	c->key = calloc(c->n, sizeof(*c->key));
	c->klen = calloc(c->n, sizeof(*c->klen));
	if (!c->key || !c->klen)
		return -ENOMEM;
	for (int i = 1; i < c->n; i++) {	/* 0 is the rowid */
		const char *name = sqlite3_column_name(st, i);

		if (!strcmp(name, "ts"))
			c->ts = i;
		else if (!strcmp(name, "kind"))
			c->kind = i;
		/* host and seq are ours; a view's own rowid column is seq */
		if (!strcmp(name, "host") || !strcmp(name, "seq") || !strcmp(name, "rowid"))
			continue;
		c->key[i] = malloc(strlen(name) + 5);
		if (!c->key[i])
			return -ENOMEM;
		c->klen[i] = sprintf(c->key[i], ",\"%s\":", name);
	}
	return 0;
}

static void put_i64(struct ks_ship *s, int64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		*--p = '0' + u % 10;
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	memcpy(s->buf + s->len, p, tmp + sizeof(tmp) - p);
	s->len += tmp + sizeof(tmp) - p;
}

static void put_raw(struct ks_ship *s, const char *p, size_t n)
{
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/* Append the current row as one event line. Room is reserved column by
 * column: sqlite3_column_bytes() on an integer would format it as text. */
static int put_row(struct ks_ship *s, const struct cols *c, sqlite3_stmt *st, int64_t seq,
		   int64_t at)
{
	const char *kind = c->kind > 0 ? (const char *)sqlite3_column_text(st, c->kind) : NULL;
	int klen = kind ? sqlite3_column_bytes(st, c->kind) : 0;
	int64_t ts = c->ts > 0 ? sqlite3_column_int64(st, c->ts) : 0;

	if (reserve(s, sizeof(s->host_json) + 6 * klen + 64))
		return -ENOMEM;
	put_raw(s, s->host_json, s->host_json_len);
	put_i64(s, seq);
	put_raw(s, ",\"kind\":", 8);
	put_str(s, kind ? kind : "", klen);
	put_raw(s, ",\"ts\":", 6);
	put_i64(s, ts);
	for (int i = 1; i < c->n; i++) {
		int type, n;

		if (i == c->ts || i == c->kind || !c->key[i])
			continue;
		type = sqlite3_column_type(st, i);
		if (type == SQLITE_NULL || (type == SQLITE_FLOAT && !isfinite(sqlite3_column_double(st, i))))
			continue;	/* left out: reads back as null (JSON has no inf) */
		n = type == SQLITE_INTEGER || type == SQLITE_FLOAT ? 32 : sqlite3_column_bytes(st, i);
		if (reserve(s, c->klen[i] + 6 * (size_t)n + 8))
			return -ENOMEM;
		put_raw(s, c->key[i], c->klen[i]);
		switch (type) {
		case SQLITE_INTEGER:
			put_i64(s, sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			s->len += sprintf(s->buf + s->len, "%.17g", sqlite3_column_double(st, i));
			break;
		case SQLITE_TEXT:
			put_str(s, (const char *)sqlite3_column_text(st, i), n);
			break;
		default: {	/* BLOB, as hex */
			const unsigned char *b = sqlite3_column_blob(st, i);

			s->buf[s->len++] = '"';
			ks_hex(b, n, s->buf + s->len, 2 * (size_t)n + 1);	/* reserved above */
			s->len += 2 * (size_t)n;
			s->buf[s->len++] = '"';
			break;
		}
		}
	}
	s->buf[s->len++] = '}';
	s->buf[s->len++] = '\n';
	if (!s->rows++) {
		s->first = seq;
		s->first_ts = ts;
	}
	s->last = seq;
	s->at = at;
	return 0;
}

/* ---- the window ---- */

static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct ks_ship *s = closure;
	const char *id = NULL;

	(void)js;
	nats_fn.natsMsgHeader_Get(msg, "Nats-Msg-Id", &id);
	pthread_mutex_lock(&s->mu);
	for (int k = 0; id && k < s->count; k++) {
		struct frame *f = &s->win[(s->head + k) % SHIP_WINDOW];

		if (strcmp(f->id, id))
			continue;
		if (pa && !pae)
			f->acked = true;
		else
			s->failed = true;
		break;
	}
	/* Everything acked from the mark on: the mark may move over it. */
	while (s->count && s->win[s->head].acked) {
		s->acked_upto = s->win[s->head].last;
		s->head = (s->head + 1) % SHIP_WINDOW;
		s->count--;
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	nats_fn.natsMsg_Destroy(msg);
}

/* Wait until fewer than @below frames are in flight (0: none), a frame
 * failed (-EPIPE), or SHIP_ACK_WAIT_MS without progress (-ETIMEDOUT). */
static int window_wait(struct ks_ship *s, int below)
{
	int64_t deadline = ks_mono_ms() + SHIP_ACK_WAIT_MS;
	int err = 0;

	pthread_mutex_lock(&s->mu);
	while (!s->failed && s->count >= (below ? below : 1)) {
		struct timespec ts;
		int64_t left = deadline - ks_mono_ms();

		if (left <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += left / 1000;
		ts.tv_nsec += (left % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	if (s->failed)
		err = -EPIPE;
	pthread_mutex_unlock(&s->mu);
	return err;
}

/* The frame as a message, zstd-compressed: JSON lines shrink several
 * times, and every byte is written three times by an R3 stream. */
static natsStatus frame_msg(struct ks_ship *s, natsMsg **msg)
{
	size_t bound = ZSTD_compressBound(s->len), z;
	natsStatus ns;

	if (bound > s->zcap) {
		char *p = realloc(s->zbuf, bound);

		if (!p)
			return NATS_NO_MEMORY;
		s->zbuf = p;
		s->zcap = bound;
	}
	z = ZSTD_compressCCtx(s->zc, s->zbuf, s->zcap, s->buf, s->len, 1);
	if (ZSTD_isError(z))
		return nats_fn.natsMsg_Create(msg, s->subject, NULL, s->buf, (int)s->len);
	ns = nats_fn.natsMsg_Create(msg, s->subject, NULL, s->zbuf, (int)z);
	if (ns == NATS_OK)
		ns = nats_fn.natsMsgHeader_Set(*msg, KS_EVENTS_ENCODING, "zstd");
	return ns;
}

/* Publish the frame being built (waiting for room in the window). */
static int frame_send(struct ks_ship *s)
{
	struct frame *f;
	natsMsg *msg = NULL;
	jsPubOptions po;
	natsStatus ns;
	int err;

	if (!s->rows)
		return 0;
	if ((err = window_wait(s, SHIP_WINDOW)))
		return err;
	pthread_mutex_lock(&s->mu);
	f = &s->win[(s->head + s->count) % SHIP_WINDOW];
	snprintf(f->id, sizeof(f->id), "%s:%lld-%lld:%lld%s", s->host, (long long)s->first,
		 (long long)s->last, (long long)s->first_ts, s->late ? ":late" : "");
	f->last = s->at;
	f->acked = false;
	s->count++;
	pthread_mutex_unlock(&s->mu);
	nats_fn.jsPubOptions_Init(&po);
	po.MsgId = f->id;
	po.MaxWait = SHIP_ACK_WAIT_MS;
	ns = frame_msg(s, &msg);
	if (ns == NATS_OK)
		ns = nats_fn.js_PublishMsgAsync(s->js, &msg, &po);
	nats_fn.natsMsg_Destroy(msg);	/* NULL once the library took it */
	s->len = 0;
	s->rows = 0;
	if (ns != NATS_OK) {
		pthread_mutex_lock(&s->mu);
		s->failed = true;
		pthread_mutex_unlock(&s->mu);
		return ks_nats_err(ns, "shipping events");
	}
	return 0;
}

/* After a failure: forget what is in flight (its acks no longer matter,
 * the next pass re-sends from the mark). */
static void window_drop(struct ks_ship *s)
{
	natsMsgList pending;

	window_wait(s, 0);
	if (nats_fn.js_PublishAsyncGetPendingList(&pending, s->js) == NATS_OK)
		nats_fn.natsMsgList_Destroy(&pending);
	pthread_mutex_lock(&s->mu);
	s->head = s->count = 0;
	pthread_mutex_unlock(&s->mu);
}

/* ---- a pass ---- */

/* A pass's result: the rows sent, or its error named in one line. */
static int64_t pass_result(int err, int64_t sent)
{
	if (err == -ENOMEM)
		return ks_err(err, "out of memory");
	if (err == -ETIMEDOUT)
		return ks_err(err, "shipping events: no acknowledgement from JetStream");
	if (err == -EPIPE)
		return ks_err(-EIO, "shipping events: JetStream refused a message");
	if (err)
		return err;
	return sent;
}

/* Ship up to @max rows above the mark. Returns rows shipped or -errno. */
static int64_t ship_batch(struct ks_ship *s, int64_t max, int64_t *mark_out)
{
	int64_t mark = get_mark(s), pos, sent = 0, saved, saved_at = ks_mono_ms();
	sqlite3_stmt *st;
	struct cols c = { 0 };
	bool more = true;
	int err = 0;

	if (mark < 0)
		return mark;
	/* The store numbers rows with its rowid; if it was emptied (retention)
	 * or recreated, numbering restarted below our mark: start over. The
	 * message id and the collector's key include ts, so a reused number
	 * is never mistaken for a duplicate. */
	if (mark > 0 && sqlite3_prepare_v2(s->db, "SELECT rowid FROM events ORDER BY rowid DESC LIMIT 1",
					   -1, &st, NULL) == SQLITE_OK) {	/* max() reads every row of a view */
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
		    sqlite3_column_int64(st, 0) < mark)
			mark = 0;
		sqlite3_finalize(st);
	}
	if (mark_out)
		*mark_out = mark;
	pthread_mutex_lock(&s->mu);
	s->head = s->count = 0;
	s->failed = false;
	s->acked_upto = saved = pos = mark;
	pthread_mutex_unlock(&s->mu);
	s->len = s->rows = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT rowid, * FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?",
			       -1, &st, NULL))
		return ks_err(-EIO, "store: %s", sqlite3_errmsg(s->db));
	err = cols_init(&c, st);
	while (!err && more) {
		int64_t want = SHIP_CHUNK, got = 0, acked;

		if (max > 0 && max - sent < want)
			want = max - sent;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, pos);
		sqlite3_bind_int64(st, 2, want);
		while (!err && sqlite3_step(st) == SQLITE_ROW) {
			pos = sqlite3_column_int64(st, 0);
			got++;
			err = put_row(s, &c, st, pos, pos);
			if (!err && (s->rows >= SHIP_FRAME_ROWS || s->len >= SHIP_FRAME_BYTES))
				err = frame_send(s);
		}
		sent += got;
		/* A stopping agent ends the pass at a chunk: what is in
		 * flight is still waited for and marked. */
		more = got == want && (max <= 0 || sent < max) && !(s->stop && *s->stop);
		sqlite3_reset(st);	/* no read transaction held between chunks */
		if (!err && !more)
			err = frame_send(s);	/* the last, partial frame */
		pthread_mutex_lock(&s->mu);
		acked = s->acked_upto;
		pthread_mutex_unlock(&s->mu);
		/* A long pass saves its progress now and then. */
		if (acked != saved && ks_mono_ms() - saved_at >= SHIP_MARK_EVERY_MS && !set_mark(s, acked)) {
			saved = acked;
			saved_at = ks_mono_ms();
		}
	}
	sqlite3_finalize(st);
	cols_free(&c);
	if (!err)
		err = window_wait(s, 0);
	if (err)
		window_drop(s);
	/* Whatever was acknowledged from the mark on is shipped, even when
	 * the pass failed later. */
	pthread_mutex_lock(&s->mu);
	pos = s->acked_upto;
	pthread_mutex_unlock(&s->mu);
	if (pos != saved && set_mark(s, pos))
		return -EIO;
	if (mark_out)
		*mark_out = pos;
	return pass_result(err, sent);
}

/* The late pass: rows the store lists in table late (stored below an
 * older row: the wall clock stepped back), in the order they were stored.
 * Those at or below @mark were passed by the store pass: they are shipped
 * here, and their ids deleted from late once JetStream acknowledged them.
 * One above @mark is left to the store pass, which reaches it (it was
 * committed before we read it), and its id deleted too. Returns rows
 * shipped or -errno. */
static int64_t ship_late(struct ks_ship *s, int64_t max, int64_t mark)
{
	sqlite3_stmt *ls = NULL, *es = NULL;
	int64_t pos = 0, sent = 0, done;
	struct cols c = { 0 };
	bool more = true;
	int err = 0;

	/* a store an older agent made has no table late */
	if (sqlite3_prepare_v2(s->db, "SELECT id, ts FROM late WHERE id > ? ORDER BY id LIMIT ?",
			       -1, &ls, NULL))
		return strstr(sqlite3_errmsg(s->db), "no such table") ? 0 :
		       ks_err(-EIO, "store: %s", sqlite3_errmsg(s->db));
	if (sqlite3_prepare_v2(s->db, "SELECT rowid, * FROM events WHERE rowid = ?", -1, &es, NULL)) {
		sqlite3_finalize(ls);
		return ks_err(-EIO, "store: %s", sqlite3_errmsg(s->db));
	}
	pthread_mutex_lock(&s->mu);
	s->head = s->count = 0;
	s->failed = false;
	s->acked_upto = 0;
	pthread_mutex_unlock(&s->mu);
	s->len = s->rows = 0;
	s->late = true;
	err = cols_init(&c, es);
	while (!err && more) {
		int64_t want = SHIP_CHUNK, got = 0;

		if (max > 0 && max - sent < want)
			want = max - sent;
		sqlite3_bind_int64(ls, 1, pos);
		sqlite3_bind_int64(ls, 2, want);
		while (!err && sqlite3_step(ls) == SQLITE_ROW) {
			int64_t ts = sqlite3_column_int64(ls, 1);

			pos = sqlite3_column_int64(ls, 0);
			got++;
			if (ts > mark)
				continue;
			sqlite3_bind_int64(es, 1, ts);
			/* none: retention deleted it */
			if (sqlite3_step(es) == SQLITE_ROW) {
				err = put_row(s, &c, es, ts, pos);
				sent++;
			}
			sqlite3_reset(es);
			if (!err && (s->rows >= SHIP_FRAME_ROWS || s->len >= SHIP_FRAME_BYTES))
				err = frame_send(s);
		}
		sqlite3_reset(ls);
		more = got == want && (max <= 0 || sent < max) && !(s->stop && *s->stop);
		if (!err && !more)
			err = frame_send(s);
	}
	sqlite3_finalize(ls);
	sqlite3_finalize(es);
	cols_free(&c);
	s->late = false;
	if (!err)
		err = window_wait(s, 0);
	if (err)
		window_drop(s);
	/* Every id read is dealt with, or (after a failure) those up to the
	 * last frame acknowledged from the start on. */
	pthread_mutex_lock(&s->mu);
	done = err ? s->acked_upto : pos;
	pthread_mutex_unlock(&s->mu);
	if (done > 0) {
		char sql[80];

		snprintf(sql, sizeof(sql), "DELETE FROM late WHERE id <= %lld", (long long)done);
		if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK && !err)
			return ks_err(-EIO, "store: can't delete shipped rows from table late: %s",
				      sqlite3_errmsg(s->db));
	}
	return pass_result(err, sent);
}

/* The store pass, then the late pass below the mark it left. */
static int64_t ship_all(struct ks_ship *s, int64_t max, int64_t *mark_out)
{
	int64_t mark = 0, n = ship_batch(s, max, &mark), late;

	if (mark_out)
		*mark_out = mark;
	if (n < 0 || (max > 0 && n >= max))
		return n;
	late = ship_late(s, max > 0 ? max - n : 0, mark);
	return late < 0 ? late : n + late;
}

static void ship_free(struct ks_ship *s)
{
	if (!s)
		return;
	if (s->js)
		nats_fn.jsCtx_Destroy(s->js);
	ZSTD_freeCCtx(s->zc);
	free(s->zbuf);
	if (s->db)
		sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->buf);
	free(s->store);
	free(s);
}

static int ship_new(struct ks_ship **out, struct ks_nats *n, const char *host, const char *store)
{
	struct ks_ship *s = calloc(1, sizeof(*s));
	jsOptions jo;
	natsStatus ns;
	char *p;

	if (!s)
		return ks_err(-ENOMEM, "out of memory");
	s->n = n;
	s->store = strdup(store);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	snprintf(s->host, sizeof(s->host), "%s", host);
	ks_nats_key_safe(host, s->key, sizeof(s->key));
	snprintf(s->subject, sizeof(s->subject), KS_EVENTS_SUBJECT ".%s", s->key);
	/* The line prefix, with the host escaped once. */
	s->buf = s->host_json;
	s->cap = sizeof(s->host_json);
	s->len = sprintf(s->host_json, "{\"host\":");
	put_str(s, s->host, strlen(s->host));
	p = s->host_json + s->len;
	strcpy(p, ",\"seq\":");
	s->host_json_len = strlen(s->host_json);
	s->buf = NULL;
	s->cap = s->len = 0;
	s->zc = ZSTD_createCCtx();
	if (!s->zc) {
		ship_free(s);
		return ks_err(-ENOMEM, "out of memory");
	}
	nats_fn.jsOptions_Init(&jo);
	jo.Wait = 5000;
	jo.PublishAsync.MaxPending = SHIP_WINDOW * 2;
	jo.PublishAsync.AckHandler = on_ack;
	jo.PublishAsync.AckHandlerClosure = s;
	ns = nats_fn.natsConnection_JetStream(&s->js, n->nc, &jo);
	if (ns != NATS_OK) {
		ship_free(s);
		return ks_nats_err(ns, "jetstream");
	}
	*out = s;
	return 0;
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
		n = ship_all(s, 0, NULL);
		if (n < 0)
			usleep(500 * 1000);	/* NATS away: the store keeps the backlog */
		else if (n == 0)
			usleep(100 * 1000);
	}
	return NULL;
}

int ks_ship_start(struct ks_ship **out, struct ks_nats *n, const char *host, const char *store,
		  volatile sig_atomic_t *stop)
{
	struct ks_ship *s;
	int err = ship_new(&s, n, host, store);

	if (err)
		return err;
	s->stop = stop;
	if (pthread_create(&s->th, NULL, ship_loop, s)) {
		ship_free(s);
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
	ship_free(s);
}

int64_t ks_ship_pass(struct ks_nats *n, const char *host, const char *store, int64_t max,
		     int64_t *mark)
{
	struct ks_ship *s;
	int64_t r = ship_new(&s, n, host, store);

	if (r)
		return r;
	r = ship_open(s);
	if (r)
		r = r == -ENOENT ? ks_err(-ENOENT, "no store at %s", store) : r;
	if (!r)
		r = ks_nats_ensure_stream(n, 0);
	if (!r)
		r = ship_all(s, max, mark);
	ship_free(s);
	return r;
}
#endif /* KSHIELD_STATIC */
