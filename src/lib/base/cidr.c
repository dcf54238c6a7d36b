// SPDX-License-Identifier: MIT
/* cidr.c - addresses and CIDR blocks (see cidr.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "err.h"
#include "cidr.h"

int ks_cidr_parse(const char *text, struct ks_cidr *c)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;

	if (strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	memset(c, 0, sizeof(*c));
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	c->family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	c->bits = c->family == AF_INET ? 32 : 128;
	if (inet_pton(c->family, buf, c->addr) != 1)
		return -EINVAL;
	if (slash) {
		long bits = strtol(slash, &end, 10);

		if (!*slash || *end || bits < 0 || bits > c->bits)
			return -EINVAL;
		c->bits = bits;
	}
	return 0;
}

int ks_cidrs_load(const char *path, struct ks_cidr **out, int *n)
{
	FILE *f = fopen(path, "re");
	char line[256];
	int cap = 0, lineno = 0;

	*out = NULL;
	*n = 0;
	if (!f)
		return ks_err(-errno, "can't read %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		struct ks_cidr c;

		lineno++;
		p[strcspn(p, "#\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		for (end = p + strlen(p); end > p && (end[-1] == ' ' || end[-1] == '\t');)
			*--end = '\0';
		if (!*p)
			continue;
		if (ks_cidr_parse(p, &c)) {
			fclose(f);
			free(*out);
			*out = NULL;
			*n = 0;
			return ks_err(-EINVAL, "%s:%d: not an IP address or CIDR: '%s'", path, lineno, p);
		}
		if (*n == cap) {
			struct ks_cidr *more = realloc(*out, (cap ? cap * 2 : 64) * sizeof(**out));

			if (!more) {
				fclose(f);
				free(*out);
				*out = NULL;
				*n = 0;
				return ks_err(-ENOMEM, "out of memory");
			}
			*out = more;
			cap = cap ? cap * 2 : 64;
		}
		(*out)[(*n)++] = c;
	}
	fclose(f);
	return 0;
}

bool ks_cidr_match(const char *text, const struct ks_cidr *c, int n)
{
	unsigned char a[16];
	int family = text && strchr(text, ':') ? AF_INET6 : AF_INET;

	if (!text || inet_pton(family, text, a) != 1)
		return false;
	for (int i = 0; i < n; i++) {
		int full = c[i].bits / 8, rest = c[i].bits % 8;

		if (c[i].family != family || memcmp(a, c[i].addr, full))
			continue;
		if (rest && ((a[full] ^ c[i].addr[full]) & (0xff << (8 - rest))))
			continue;
		return true;
	}
	return false;
}

char *ks_cidrs_pg_array(const struct ks_cidr *c, int n)
{
	char *out = malloc(3 + n * (INET6_ADDRSTRLEN + 5)), *p = out;

	if (!out)
		return NULL;
	*p++ = '{';
	for (int i = 0; i < n; i++) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(c[i].family, c[i].addr, a, sizeof(a));
		p += sprintf(p, "%s%s/%d", i ? "," : "", a, c[i].bits);
	}
	strcpy(p, "}");
	return out;
}
