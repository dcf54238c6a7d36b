// SPDX-License-Identifier: MIT
/* nlsend.c - the 32-bit sender of the netlink shields' compat trigger paths
 * (src/lib/shieldtest/nltrigger.c), built static for i386 and AArch32 and run
 * on 64-bit guests. The 64-bit test makes the socket in the attacker's
 * position (a new user+network namespace, which this process inherits),
 * sets it up and writes the trigger request; this program only sends it,
 * through a 32-bit syscall, so that the netlink message itself is written
 * once (nlbuild), and the 64-bit test reads the replies and checks the
 * effect.
 *
 *	nlsend WAY SOCKFD REQFD
 *	  WAY     sendmsg     sendmsg, one iovec per message (nft, libmnl)
 *	          write       write of the whole request
 *	          socketcall  socketcall(SYS_SENDMSG) (i386; n/a elsewhere)
 *	  SOCKFD  the netlink socket (inherited)
 *	  REQFD   a file holding the request from offset 0 (inherited)
 *
 * Exit (ks_test_run_compat): 0 sent, 1 refused (EPERM), 4 not applicable
 * (stderr says why), 5 any other error (stderr says what).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/net.h>
#include <linux/netlink.h>
#include "../compat32.h"

#define MAX_IOV 16

static char req[65536];

int main(int argc, char **argv)
{
	struct iovec iov[MAX_IOV];
	struct msghdr m = { .msg_iov = iov };
	const char *way;
	int fd, rfd, n = 0;
	ssize_t len;
	long r;

	if (argc != 4) {
		fprintf(stderr, "usage: nlsend sendmsg|write|socketcall SOCKFD REQFD\n");
		return 5;
	}
	way = argv[1];
	fd = atoi(argv[2]);
	rfd = atoi(argv[3]);
	len = pread(rfd, req, sizeof(req), 0);
	if (len <= 0) {
		fprintf(stderr, "nlsend: reading the request: %s\n", len ? strerror(errno) : "empty");
		return 5;
	}
	/* One iovec per message, as the 64-bit sendmsg way sends. */
	for (ssize_t off = 0; off < len; n++) {
		struct nlmsghdr *h = (struct nlmsghdr *)(req + off);

		if (n == MAX_IOV || h->nlmsg_len < NLMSG_HDRLEN) {
			fprintf(stderr, "nlsend: request of more than %d messages or malformed\n",
				MAX_IOV);
			return 5;
		}
		iov[n].iov_base = h;
		iov[n].iov_len = NLMSG_ALIGN(h->nlmsg_len);
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	m.msg_iovlen = n;

	if (!strcmp(way, "sendmsg")) {
		r = syscall(__NR_sendmsg, fd, &m, 0);
	} else if (!strcmp(way, "write")) {
		r = syscall(__NR_write, fd, req, len);
	} else if (!strcmp(way, "socketcall")) {
#ifdef __NR_socketcall
		unsigned long a[3] = { fd, (unsigned long)&m, 0 };

		r = syscall(__NR_socketcall, SYS_SENDMSG, a);
#else
		fprintf(stderr, "not applicable: this 32-bit ABI has no socketcall\n");
		return 4;
#endif
	} else {
		fprintf(stderr, "nlsend: unknown way %s\n", way);
		return 5;
	}
	return r < 0 ? compat32_fail(way, 1) : 0;
}
