/* SPDX-License-Identifier: MIT */
/* fleet_pg.h - the fleet's event store in PostgreSQL: one table
 * ks_events(host, seq, ts, kind, data jsonb) partitioned by day on ts,
 * unique on (host, seq, ts) (an event's ts never changes, so this is the
 * (host, seq) de-duplication key; PostgreSQL wants the partition key in
 * every unique index).
 *
 * A batch is built as COPY text (ks_pg_batch_add) and written in one
 * transaction: COPY straight into ks_events, and only when that hits the
 * unique key (a re-sent or redelivered event) again through a staging
 * table and INSERT ... ON CONFLICT DO NOTHING. Either way each (host, seq)
 * is stored once.
 *
 * A batch's shield hits are written after its other rows: the heap is
 * filled in COPY order, so a batch's hits share a few pages instead of
 * one page each among 100 times as many execs and flows, and what reads
 * the hits (a shield's hunt, a host's hits) reads that many fewer pages.
 * Hits are also rolled up per shield, host, verdict and day (ks_hits_day)
 * and per shield, verdict and hour (ks_hits_hour) by a trigger, in the
 * same transaction (fleet_pg.c): what the fleet page counts.
 */
#ifndef KSHIELD_FLEET_PG_H
#define KSHIELD_FLEET_PG_H

#include <stddef.h>
#include <stdint.h>
#include <postgresql/libpq-fe.h>

struct ks_pg {
	PGconn *c;
	char *conninfo;
	int ndays;
	int64_t days[64];	/* partitions known to exist (day numbers) */
	int64_t copies, fallbacks;	/* batches by direct COPY / through staging */
};

/* Rows of one batch, as COPY text: host, seq, ts, kind, data. */
struct ks_pg_batch {
	char *buf;
	size_t len, cap;
	char *hits;		/* the shield hits' rows, sent after buf */
	size_t hlen, hcap;
	int rows;
	int ndays;
	int64_t days[8];	/* day numbers the rows fall in */
	int64_t sec;		/* cached "YYYY-MM-DD HH:MM:SS" for this second */
	char sec_txt[24];
};

/* Append one row; @data (JSON, @dlen bytes) is written as "{" @data when
 * @brace (the collector's cut of an event line), else as is. Returns 0 or
 * -ENOMEM. */
int ks_pg_batch_add(struct ks_pg_batch *b, const char *host, int64_t seq, int64_t ts_ms,
		    const char *kind, const char *data, size_t dlen, int brace);
void ks_pg_batch_reset(struct ks_pg_batch *b);
void ks_pg_batch_free(struct ks_pg_batch *b);

int ks_pg_open(struct ks_pg *pg, const char *conninfo);
void ks_pg_close(struct ks_pg *pg);
/* Write a batch in one transaction. Returns rows newly inserted (>= 0;
 * the rest were duplicates), -EINVAL when PostgreSQL refused the data
 * itself (a malformed row: retrying cannot help), or another negative
 * errno (PostgreSQL away: retry). Nothing is written on error. */
int64_t ks_pg_write(struct ks_pg *pg, struct ks_pg_batch *b);
/* Drop day partitions entirely older than @days days, each with its day's
 * rolled-up hits. Returns how many. */
int ks_pg_retain(struct ks_pg *pg, int days);

#endif
