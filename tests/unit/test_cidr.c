// SPDX-License-Identifier: MIT
/* test_cidr.c - address lists for `hunt c2-connections --file`
 * (src/lib/base/cidr.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array.h"
#include "cidr.h"
#include "err.h"

Test(cidr, parse)
{
	static const char *const ok[] = { "10.0.0.0/8", "192.0.2.1", "0.0.0.0/0", "2001:db8::/32",
					  "::1", "2001:db8::99/128", "10.1.2.3/32" };
	static const char *const bad[] = { "", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1",
					   "10.0.0.0/8x", "2001:db8::/129", "300.1.1.1", "host.example",
					   "10.0.0/8", "1.2.3.4/8/9" };
	struct ks_cidr c;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		cr_expect_eq(ks_cidr_parse(ok[i], &c), 0, "'%s' refused", ok[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		cr_expect_eq(ks_cidr_parse(bad[i], &c), -EINVAL, "'%s' accepted", bad[i]);
	cr_assert_eq(ks_cidr_parse("2001:db8::1", &c), 0);
	cr_expect_eq(c.bits, 128);
	cr_assert_eq(ks_cidr_parse("192.0.2.1", &c), 0);
	cr_expect_eq(c.bits, 32);
}

Test(cidr, match)
{
	struct ks_cidr c[3];

	cr_assert_eq(ks_cidr_parse("203.0.113.0/24", &c[0]), 0);
	cr_assert_eq(ks_cidr_parse("2001:db8::99", &c[1]), 0);
	cr_assert_eq(ks_cidr_parse("10.128.0.0/9", &c[2]), 0);
	cr_expect(ks_cidr_match("203.0.113.7", c, 3));
	cr_expect(ks_cidr_match("203.0.113.255", c, 3));
	cr_expect(!ks_cidr_match("203.0.114.1", c, 3));
	cr_expect(ks_cidr_match("2001:db8::99", c, 3));
	cr_expect(!ks_cidr_match("2001:db8::98", c, 3));
	/* a prefix that ends mid-byte */
	cr_expect(ks_cidr_match("10.200.1.1", c, 3));
	cr_expect(!ks_cidr_match("10.127.255.255", c, 3));
	/* families do not mix; non-addresses never match */
	cr_expect(!ks_cidr_match("::ffff:203.0.113.7", c, 1));
	cr_expect(!ks_cidr_match(NULL, c, 3));
	cr_expect(!ks_cidr_match("", c, 3));
	cr_expect(!ks_cidr_match("not-an-ip", c, 3));
	cr_expect(!ks_cidr_match("203.0.113.7", c, 0));
	cr_assert_eq(ks_cidr_parse("0.0.0.0/0", &c[0]), 0);
	cr_expect(ks_cidr_match("8.8.8.8", c, 1));
}

Test(cidr, load_a_file_and_say_which_line_is_wrong)
{
	char path[] = "/tmp/ks-cidr-XXXXXX";
	int fd = mkstemp(path), n;
	struct ks_cidr *c;
	char *arr;
	FILE *f;

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "# c2 list\n\n  203.0.113.0/24  # lab\n2001:db8::99\r\n\t10.0.0.1\n");
	fclose(f);
	cr_assert_eq(ks_cidrs_load(path, &c, &n), 0, "%s", ks_errmsg());
	cr_expect_eq(n, 3);
	arr = ks_cidrs_pg_array(c, n);
	cr_expect_str_eq(arr, "{203.0.113.0/24,2001:db8::99/128,10.0.0.1/32}");
	free(arr);
	free(c);

	f = fopen(path, "w");
	fprintf(f, "10.0.0.0/8\n\n10.0.0.0/40\n");
	fclose(f);
	cr_expect_eq(ks_cidrs_load(path, &c, &n), -EINVAL);
	cr_expect(strstr(ks_errmsg(), ":3: not an IP address or CIDR: '10.0.0.0/40'"), "%s",
		  ks_errmsg());
	cr_expect_null(c);
	unlink(path);
	cr_expect_eq(ks_cidrs_load(path, &c, &n), -ENOENT);
	cr_expect(strstr(ks_errmsg(), "can't read"), "%s", ks_errmsg());
}
