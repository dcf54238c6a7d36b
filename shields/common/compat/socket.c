// SPDX-License-Identifier: MIT
/* socket.c - a socket made by 32-bit code, for shields whose guarded call
 * is the socket's creation (cve-2026-43500): built static for i386 and
 * AArch32, run by ks_test_socket_compat() on 64-bit guests, which goes on
 * with the socket it receives (SCM_RIGHTS over an inherited unix socket).
 *
 *	socket FAMILY TYPE PROTOCOL CALL UNIXFD
 *	  CALL  socket      the 32-bit socket syscall
 *	        socketcall  socketcall(SYS_SOCKET) (i386; n/a elsewhere)
 *
 * Exit (ks_test_run_compat): 0 made and passed, 1 refused (EPERM), 4 not
 * applicable (stderr says why), 5 any other error (stderr says what).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/net.h>

int main(int argc, char **argv)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	long fd;

	if (argc != 6) {
		fprintf(stderr, "usage: socket FAMILY TYPE PROTOCOL socket|socketcall UNIXFD\n");
		return 5;
	}
	if (!strcmp(argv[4], "socketcall")) {
#ifdef __NR_socketcall
		unsigned long a[3] = { atoi(argv[1]), atoi(argv[2]), atoi(argv[3]) };

		fd = syscall(__NR_socketcall, SYS_SOCKET, a);
#else
		fprintf(stderr, "not applicable: this 32-bit ABI has no socketcall\n");
		return 4;
#endif
	} else {
		fd = syscall(__NR_socket, atoi(argv[1]), atoi(argv[2]), atoi(argv[3]));
	}
	if (fd < 0) {
		if (errno == EPERM)
			return 1;
		fprintf(stderr, "32-bit %s(%s, %s, %s): %s\n", argv[4], argv[1], argv[2], argv[3],
			strerror(errno));
		return 5;
	}
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &(int){ fd }, sizeof(int));
	if (sendmsg(atoi(argv[5]), &m, 0) < 0) {
		fprintf(stderr, "socket: passing the descriptor: %s\n", strerror(errno));
		return 5;
	}
	return 0;
}
