/* SPDX-License-Identifier: MIT */
/* hunt_pg.h - run a hunt fleet-wide over the collector's PostgreSQL
 * (ks_events), results grouped by host. See hunt_pg.c. */
#ifndef KSHIELD_HUNT_PG_H
#define KSHIELD_HUNT_PG_H

/* A fleet-wide hunt's parameters (each set by the caller: none has a
 * default, until 0 is the epoch). */
struct ks_hunt_pg_opts {
	long long since, until;	/* :since and :until (realtime ns; INT64_MAX: no end) */
	const char *binary;	/* :binary (NULL: "") */
	long long bytes;	/* :bytes */
	const char *cidrs;	/* NULL, or a PostgreSQL array literal of
				 * addresses/CIDRs ("{10.0.0.0/8,2001:db8::1}")
				 * that laddr or raddr must be in */
	long long limit;	/* at most this many hosts */
};

/* @sql is the hunt's SQLite text (over `events`, with :since :until
 * :binary :bytes), run as @o says. Calls @row once per host with hits,
 * most hits first; returns 0 or a negative errno. */
typedef void (*ks_hunt_pg_row_fn)(const char *host, long long hits, long long first_ts,
				  long long last_ts, void *ctx);
int ks_hunt_pg(const char *conninfo, const char *name, const char *sql, ks_hunt_pg_row_fn row,
	       void *ctx, const struct ks_hunt_pg_opts *o);

/* The PostgreSQL statements that give a session the hunts' `events`
 * (the event table's columns, events.h, read from each row's JSON; rows
 * shipped by agents of store schema 2 read under their names then) and
 * `binaries`, and the functions hunts use. malloc'ed; NULL when out of
 * memory. */
char *ks_hunt_pg_view_sql(void);
/* A hunt's SQLite text rewritten for PostgreSQL: :since :until :binary
 * :bytes become $1..$4 (*nparams: the highest used), the column binary
 * (a keyword there) is quoted, json_extract() compared with a number
 * becomes ks_json_num(); string literals are copied untouched.
 * malloc'ed; NULL when out of memory. */
char *ks_hunt_pg_translate(const char *sql, int *nparams);

#endif
