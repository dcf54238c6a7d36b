/* SPDX-License-Identifier: MIT */
/* sockaddr.h - ADDR:PORT as users type it, for the sockets kshield listens on. */
#ifndef KSHIELD_SOCKADDR_H
#define KSHIELD_SOCKADDR_H

#include <sys/socket.h>

/* "127.0.0.1:9477", "[::1]:9477", ":9477" (every IPv4 address) into @ss.
 * 0, or -EINVAL with a message naming @what (the option). */
int ks_addr_port_parse(const char *spec, const char *what, struct sockaddr_storage *ss);

#endif /* KSHIELD_SOCKADDR_H */
