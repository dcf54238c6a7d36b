/* fleet_pg.h - the fleet's event store in PostgreSQL: one table
 * ks_events(host, seq, ts, kind, data jsonb) partitioned by day on ts,
 * unique on (host, seq, ts) (an event's ts never changes, so this is the
 * (host, seq) de-duplication key; PostgreSQL wants the partition key in
 * every unique index). Batches go in with COPY into a staging table and one
 * INSERT ... ON CONFLICT DO NOTHING, in one transaction.
 */
#ifndef KSHIELD_FLEET_PG_H
#define KSHIELD_FLEET_PG_H

#include <stdint.h>
#include <postgresql/libpq-fe.h>

struct ks_pg_row {
	const char *host;
	int64_t seq;
	int64_t ts_ms;
	const char *kind;
	const char *data;	/* JSON text */
};

struct ks_pg {
	PGconn *c;
	char *conninfo;
	int ndays;
	int64_t days[64];	/* partitions known to exist (day numbers) */
};

int ks_pg_open(struct ks_pg *pg, const char *conninfo);
void ks_pg_close(struct ks_pg *pg);
/* Write @n rows in one transaction. Returns rows newly inserted (>= 0;
 * the rest were duplicates) or a negative errno (nothing written). */
int64_t ks_pg_write(struct ks_pg *pg, const struct ks_pg_row *rows, int n);
/* Drop day partitions entirely older than @days days. Returns how many. */
int ks_pg_retain(struct ks_pg *pg, int days);

#endif
