// SPDX-License-Identifier: MIT
/* test_units.c - times, durations and sizes as users type them
 * (src/lib/base/units.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <time.h>
#include "array.h"
#include "err.h"
#include "units.h"

#define S 1000000000ULL

Test(units, durations)
{
	static const struct { const char *in; __u64 ns; } ok[] = {
		{ "45s", 45 * S }, { "90m", 90 * 60 * S }, { "12h", 12 * 3600 * S },
		{ "30d", 30 * 86400 * S }, { "2w", 14 * 86400 * S }, { "0s", 0 },
	};
	static const char *const bad[] = { "", "10", "10x", "-5m", "m", "10mm", "5 m",
					   "99999999999999999999d", "300000000000d" };
	__u64 ns;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		cr_expect_eq(ks_duration_parse(ok[i].in, "--keep", &ns), 0, "%s", ok[i].in);
		cr_expect_eq(ns, ok[i].ns, "%s", ok[i].in);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_expect_eq(ks_duration_parse(bad[i], "--keep", &ns), -EINVAL, "'%s' accepted", bad[i]);
		cr_expect(strstr(ks_errmsg(), "--keep") && strstr(ks_errmsg(), "not a duration"),
			  "message: %s", ks_errmsg());
	}
}

Test(units, sizes)
{
	static const struct { const char *in; __u64 b; } ok[] = {
		{ "1024", 1024 }, { "64K", 64 << 10 }, { "64k", 64 << 10 }, { "500M", 500ULL << 20 },
		{ "1G", 1ULL << 30 }, { "1GB", 1ULL << 30 }, { "2T", 2ULL << 40 }, { "0", 0 },
	};
	static const char *const bad[] = { "", "G", "1X", "-1G", "1GiB", "1 G", "99999999999T" };
	__u64 b;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		cr_expect_eq(ks_size_parse(ok[i].in, "--max-size", &b), 0, "%s", ok[i].in);
		cr_expect_eq(b, ok[i].b, "%s", ok[i].in);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_expect_eq(ks_size_parse(bad[i], "--max-size", &b), -EINVAL, "'%s' accepted", bad[i]);
		cr_expect(strstr(ks_errmsg(), "--max-size"), "message: %s", ks_errmsg());
	}
}

Test(units, times_rfc3339_and_ago)
{
	static const struct { const char *in; __s64 ns; } ok[] = {
		{ "2026-12-03T10:00:00Z", 1796292000LL * 1000000000LL },
		{ "2026-12-03t10:00:00z", 1796292000LL * 1000000000LL },
		{ "2026-12-03 10:00:00Z", 1796292000LL * 1000000000LL },
		{ "2026-12-03T12:30:00+02:30", 1796292000LL * 1000000000LL },
		{ "2026-12-03T09:00:00-01:00", 1796292000LL * 1000000000LL },
		{ "2026-12-03T10:00:00.5Z", 1796292000LL * 1000000000LL + 500000000 },
		{ "2026-12-03T10:00:00.123456789123Z", 1796292000LL * 1000000000LL + 123456789 },
	};
	static const char *const bad[] = { "", "yesterday", "2026-12-03", "2026-12-03T10:00:00",
					   "2026-12-03T10:00Z", "2026-12-03T10:00:00+2", "10", "-5m",
					   "2026-12-03T10:00:00Zjunk" };
	struct timespec now;
	__s64 ns, t;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		cr_expect_eq(ks_time_parse(ok[i].in, "--since", &ns), 0, "%s: %s", ok[i].in, ks_errmsg());
		cr_expect_eq(ns, ok[i].ns, "%s", ok[i].in);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_expect_eq(ks_time_parse(bad[i], "--since", &ns), -EINVAL, "'%s' accepted", bad[i]);
		cr_expect(strstr(ks_errmsg(), "--since") && strstr(ks_errmsg(), "RFC 3339"),
			  "message: %s", ks_errmsg());
	}
	/* a duration is that long ago */
	cr_assert_eq(ks_time_parse("2h", "--since", &ns), 0);
	clock_gettime(CLOCK_REALTIME, &now);
	t = (__s64)now.tv_sec * 1000000000LL + now.tv_nsec - 7200LL * 1000000000LL;
	cr_expect(ns <= t && ns > t - 5000000000LL, "2h ago is %lld, expected about %lld",
		  (long long)ns, (long long)t);
}

Test(units, time_format)
{
	char buf[40];

	ks_time_fmt(1796292000LL * 1000000000LL + 123456789, buf, sizeof(buf));
	cr_expect_str_eq(buf, "2026-12-03T10:00:00.123456Z");
	ks_time_fmt(0, buf, sizeof(buf));
	cr_expect_str_eq(buf, "1970-01-01T00:00:00.000000Z");
}
