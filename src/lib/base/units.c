// SPDX-License-Identifier: MIT
/* units.c - times, durations and sizes (see units.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "array.h"
#include "err.h"
#include "units.h"

int ks_duration_parse(const char *s, const char *what, __u64 *ns)
{
	static const struct { char c; __u64 mul; } units[] = {
		{ 's', 1000000000ULL }, { 'm', 60000000000ULL },
		{ 'h', 3600000000000ULL }, { 'd', 86400000000000ULL },
		{ 'w', 604800000000000ULL },
	};
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-' || strlen(end) != 1)
		goto bad;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (*end == units[i].c) {
			if (v > UINT64_MAX / units[i].mul)
				goto bad;
			*ns = v * units[i].mul;
			return 0;
		}
bad:
	return ks_err(-EINVAL, "%s: '%s' is not a duration (like 90s, 10m, 2h, 3d)", what, s);
}

int ks_size_parse(const char *s, const char *what, __u64 *bytes)
{
	char *end;
	unsigned long long v, mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		goto bad;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	default: goto bad;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > UINT64_MAX / mul)
		goto bad;
	*bytes = v * mul;
	return 0;
bad:
	return ks_err(-EINVAL, "%s: '%s' is not a size (like 1G, 500M, 64K)", what, s);
}

int ks_time_parse(const char *s, const char *what, __s64 *ns)
{
	struct timespec now;
	struct tm tm = {};
	__u64 d;
	long frac = 0, off = 0;
	const char *p;
	int digits = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	if (*s && isdigit((unsigned char)*s) && strlen(s) < 12 && !strchr(s, '-') &&
	    !strchr(s, ':')) {
		if (ks_duration_parse(s, what, &d))
			goto bad;
		*ns = (__s64)now.tv_sec * 1000000000LL + now.tv_nsec - (__s64)d;
		return 0;
	}
	/* RFC 3339: 2026-12-03T10:00:00[.frac](Z|+hh:mm|-hh:mm); a space
	 * instead of T is accepted too. */
	p = strptime(s, "%Y-%m-%d", &tm);
	if (!p || (*p != 'T' && *p != 't' && *p != ' '))
		goto bad;
	p = strptime(p + 1, "%H:%M:%S", &tm);
	if (!p)
		goto bad;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, digits++)
			if (digits < 9)
				frac = frac * 10 + (*p - '0');
		for (; digits < 9; digits++)
			frac *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int hh, mm;

		if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2 || strlen(p) != 6)
			goto bad;
		off = (hh * 3600L + mm * 60L) * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		goto bad;
	}
	if (*p)
		goto bad;
	*ns = ((__s64)timegm(&tm) - off) * 1000000000LL + frac;
	return 0;
bad:
	return ks_err(-EINVAL, "%s: '%s' is neither a duration ago (10m, 2h, 3d) nor an "
		      "RFC 3339 time (2026-12-03T10:00:00Z)", what, s);
}

void ks_time_fmt(__s64 ns, char *buf, size_t len)
{
	time_t sec = ns / 1000000000LL;
	struct tm tm;
	char tmp[32];

	gmtime_r(&sec, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06lldZ", tmp, (long long)(ns % 1000000000LL) / 1000);
}
