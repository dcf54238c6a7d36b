/* SPDX-License-Identifier: MIT */
/* units.h - times, durations and sizes as users type them and as kshield
 * shows them. Each parser returns 0 or -EINVAL with a one-line message
 * naming @what (the option or setting) recorded through err.h. */
#ifndef KSHIELD_UNITS_H
#define KSHIELD_UNITS_H

#include <stddef.h>
#include <linux/types.h>

/* Parse a time: "10m", "2h", "3d", "90s" (ago) or RFC 3339
 * ("2026-12-03T10:00:00Z", offsets and fractions allowed), into realtime
 * ns. */
int ks_time_parse(const char *s, const char *what, __s64 *ns);
/* Parse a duration "30d", "12h", "90m", "45s", "2w" into ns. */
int ks_duration_parse(const char *s, const char *what, __u64 *ns);
/* Parse a size "1G", "500M", "64K", "1024" (a trailing B allowed) into
 * bytes. */
int ks_size_parse(const char *s, const char *what, __u64 *bytes);
/* Format realtime ns as RFC 3339 UTC with microseconds. */
void ks_time_fmt(__s64 ns, char *buf, size_t len);

#endif /* KSHIELD_UNITS_H */
