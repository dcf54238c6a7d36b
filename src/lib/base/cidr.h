/* SPDX-License-Identifier: MIT */
/* cidr.h - IP addresses and CIDR blocks, as users list them (`hunt
 * c2-connections --file`), and matching addresses as the store shows them
 * ("10.0.0.1", "2001:db8::1") against them. */
#ifndef KSHIELD_CIDR_H
#define KSHIELD_CIDR_H

#include <stdbool.h>

struct ks_cidr {
	int family;		/* AF_INET / AF_INET6 */
	unsigned char addr[16];
	int bits;		/* prefix length; a lone address is /32 or /128 */
};

/* Parse "10.0.0.0/8", "192.0.2.1", "2001:db8::/32". Returns 0 or -EINVAL
 * (nothing recorded: the caller says where the text came from). */
int ks_cidr_parse(const char *text, struct ks_cidr *c);
/* Read a list, one address or CIDR a line ('#' comments, blank lines).
 * Returns 0 with *out malloc'ed (free it), or a negative errno with a
 * message naming the file and line. */
int ks_cidrs_load(const char *path, struct ks_cidr **out, int *n);
/* Whether address @text is in any of @c[0..n) (false for NULL or text
 * that is no address). */
bool ks_cidr_match(const char *text, const struct ks_cidr *c, int n);
/* The list as a PostgreSQL array literal, "{10.0.0.0/8,2001:db8::1/128}"
 * (malloc'ed). */
char *ks_cidrs_pg_array(const struct ks_cidr *c, int n);

#endif /* KSHIELD_CIDR_H */
