/* hunt_pg.h - run a hunt fleet-wide over the collector's PostgreSQL
 * (ks_events), results grouped by host. See hunt_pg.c. */
#ifndef KSHIELD_HUNT_PG_H
#define KSHIELD_HUNT_PG_H

/* @sql is the hunt's SQLite text (over `events`, with :since :until
 * :binary :bytes); @cidrs, when not NULL, a PostgreSQL array literal of
 * addresses/CIDRs ("{10.0.0.0/8,2001:db8::1}") that laddr or raddr must be
 * in. Calls @row once per host with hits, most hits first; returns 0 or a
 * negative errno. */
typedef void (*ks_hunt_pg_row_fn)(const char *host, long long hits, long long first_ts,
				  long long last_ts, void *ctx);
int ks_hunt_pg(const char *conninfo, const char *name, const char *sql, long long since,
	       long long until, const char *binary, long long bytes, const char *cidrs,
	       long long limit, ks_hunt_pg_row_fn row, void *ctx);

#endif
