/* SPDX-License-Identifier: MIT */
/* impact.h - what a shield would have hit on this machine in the past:
 * its declared pattern (metadata key `impact`, else its `hunt`) run over
 * the event store, grouped by binary and user. `kshield shield impact`. */
#ifndef KSHIELD_IMPACT_H
#define KSHIELD_IMPACT_H

#include <linux/types.h>

struct ks_store;

struct ks_impact_row {
	const char *binary;	/* the exec's binary, else the process name */
	long long uid;
	long long hits;
	long long first_ts, last_ts;	/* realtime ns */
};

typedef void (*ks_impact_fn)(const struct ks_impact_row *r, void *ctx);

/* The pattern query of the shield object @path (malloc'ed, free() it) and
 * its name into @name; -ENOENT with a message when it declares none. */
int ks_impact_pattern(const char *path, char *name, size_t len, char **sql);
/* Run pattern @sql over @s read-only between @since and @until, one
 * callback per (binary, user), most hits first. Returns the total hits or
 * a negative errno with a message. */
long long ks_impact_store(struct ks_store *s, const char *sql, __s64 since, __s64 until,
			  ks_impact_fn fn, void *ctx);

#endif
