// SPDX-License-Identifier: MIT
/* sockaddr.c - ADDR:PORT parsing (see sockaddr.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "err.h"
#include "sockaddr.h"

int ks_addr_port_parse(const char *spec, const char *what, struct sockaddr_storage *ss)
{
	char host[128];
	const char *colon = strrchr(spec, ':');
	char *end;
	long port;

	memset(ss, 0, sizeof(*ss));
	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		goto bad;
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 1 || port > 65535)
		goto bad;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		host[strlen(host) - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			goto bad;
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	if (!host[0])
		return 0;	/* INADDR_ANY */
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		goto bad;
	return 0;
bad:
	return ks_err(-EINVAL, "%s: '%s' is not ADDR:PORT (like 127.0.0.1:9477, "
		      "[::1]:9477, or :9477 for every address)", what, spec);
}
