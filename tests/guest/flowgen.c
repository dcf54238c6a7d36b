// SPDX-License-Identifier: MIT
/* flowgen.c - TCP connections of known size for the guests' flow check
 * (tests/guest/monitor-flow.sh): enough of them, both ends in this
 * guest, that a monitor which loses 1 close record in 1000 is caught.
 *
 *	flowgen PORT N BYTES [NLONG PAUSE_MS]
 *
 * Six cases, each to its own echo server on 127.0.0.1 or ::1, port
 * PORT + case:
 *	0 v4, N connections in turn, the client closes first (shutdown,
 *	  then the server closes);
 *	1 v6, the same;
 *	2 v4, N in turn, the server closes first (it has echoed BYTES);
 *	3 v6, the same;
 *	4 v4, NLONG at once, each BYTES, a pause of PAUSE_MS, BYTES more
 *	  (a monitor with a shorter flow interval sends an interim record
 *	  at the second burst), the client closes first;
 *	5 v6, the same.
 * Every connection moves exactly BYTES (long: 2 x BYTES) each way, so each
 * of its two ends must have one final record of that out and in. Who closes first
 * decides which end goes through TIME_WAIT and which through LAST_ACK:
 * both ways reach TCP_CLOSE differently. Prints one JSON line per case
 * with the connections whose echo came back whole; exit 0 when all did.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "array.h"

struct fcase {
	const char *name;
	int family;
	int server_first;
	int longer;	/* NLONG at once, two bursts */
};

static const struct fcase cases[] = {
	{ "v4-client-first", AF_INET, 0, 0 },
	{ "v6-client-first", AF_INET6, 0, 0 },
	{ "v4-server-first", AF_INET, 1, 0 },
	{ "v6-server-first", AF_INET6, 1, 0 },
	{ "v4-long", AF_INET, 0, 1 },
	{ "v6-long", AF_INET6, 0, 1 },
};

static socklen_t addr_of(int family, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*a);
	}
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	a6->sin6_family = AF_INET6;
	a6->sin6_port = htons(port);
	a6->sin6_addr = in6addr_loopback;
	return sizeof(*a6);
}

/* Write all of @len bytes of @buf; 0 or -1. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Read until EOF or @want bytes (@want 0: until EOF); the bytes read. */
static long read_upto(int fd, char *buf, size_t cap, long want, int echo)
{
	long got = 0;

	for (;;) {
		size_t ask = want ? (size_t)(want - got) : cap;
		ssize_t n;

		if (want && got == want)
			return got;
		n = read(fd, buf, ask < cap ? ask : cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : got;
		if (echo && write_all(fd, buf, n))
			return -1;
		got += n;
	}
}

/* The echo server of case @c: N connections, one after the other (long
 * ones: each in a child of its own, all at once). */
static void serve(int lfd, const struct fcase *c, int n, long bytes)
{
	static char buf[65536];

	for (int i = 0; i < n; i++) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			_exit(1);
		if (c->longer && fork() != 0) {
			close(fd);
			continue;
		}
		/* server first: echo BYTES, then close while the client still
		 * has its side open; else echo until the client's FIN */
		read_upto(fd, buf, sizeof(buf), c->server_first ? bytes : 0, 1);
		close(fd);
		if (c->longer)
			_exit(0);
	}
	while (wait(NULL) > 0)
		;
	_exit(0);
}

/* One connection of case @c: 1 when BYTES came back (long: twice, after
 * @pause_ms) and then EOF. */
static int one(const struct fcase *c, int port, const char *out, char *in, long bytes,
	       int pause_ms)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(c->family, port, &ss);
	int fd = socket(c->family, SOCK_STREAM, 0), ok = 0;
	long want = c->longer ? 2 * bytes : bytes;

	if (fd < 0)
		return 0;
	if (!connect(fd, (struct sockaddr *)&ss, len) && !write_all(fd, out, bytes) &&
	    (!c->longer || (read_upto(fd, in, bytes + 1, bytes, 0) == bytes &&
			    !usleep(pause_ms * 1000) && !write_all(fd, out, bytes)))) {
		if (!c->server_first)
			shutdown(fd, SHUT_WR);
		/* the rest back, then EOF: the server's FIN */
		ok = (c->longer ? bytes : 0) + read_upto(fd, in, bytes + 1, 0, 0) == want;
	}
	close(fd);
	return ok;
}

/* NLONG connections of a long case at once, each in a child; how many
 * came back whole. */
static int many(const struct fcase *c, int port, const char *out, char *in, long bytes,
		int n, int pause_ms)
{
	pid_t *pid = calloc(n, sizeof(*pid));
	int good = 0, st;

	for (int i = 0; pid && i < n; i++)
		if ((pid[i] = fork()) == 0)
			_exit(one(c, port, out, in, bytes, pause_ms) ? 0 : 1);
	/* only these: the server is a child too */
	for (int i = 0; pid && i < n; i++)
		good += pid[i] > 0 && waitpid(pid[i], &st, 0) > 0 && WIFEXITED(st) &&
			WEXITSTATUS(st) == 0;
	free(pid);
	return good;
}

int main(int argc, char **argv)
{
	int port, n, nlong = 0, pause_ms = 0, all = 1;
	char *out, *in;
	long bytes;

	if ((argc != 4 && argc != 6) || (port = atoi(argv[1])) <= 0 || (n = atoi(argv[2])) <= 0 ||
	    (bytes = atol(argv[3])) <= 0 || bytes > 65536 ||
	    (argc == 6 && ((nlong = atoi(argv[4])) <= 0 || (pause_ms = atoi(argv[5])) < 0))) {
		fprintf(stderr, "usage: flowgen PORT N BYTES [NLONG PAUSE_MS] (BYTES 1..65536)\n");
		return 2;
	}
	out = malloc(bytes);
	in = malloc(bytes + 1);
	if (!out || !in)
		return 2;
	memset(out, 'k', bytes);
	signal(SIGPIPE, SIG_IGN);
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		const struct fcase *c = &cases[k];
		struct sockaddr_storage ss;
		socklen_t len = addr_of(c->family, port + k, &ss);
		int lfd, one_ = 1, st, good = 0, cn = c->longer ? nlong : n;
		pid_t pid;

		if (!cn)
			continue;
		lfd = socket(c->family, SOCK_STREAM, 0);

		if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one_, sizeof(one_)) ||
		    bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, 64)) {
			printf("{\"case\": \"%s\", \"port\": %d, \"error\": \"%s\"}\n", c->name,
			       port + (int)k, strerror(errno));
			all = 0;
			continue;
		}
		pid = fork();
		if (pid == 0)
			serve(lfd, c, cn, bytes);
		close(lfd);
		if (c->longer)
			good = many(c, port + k, out, in, bytes, cn, pause_ms);
		else
			for (int i = 0; i < cn; i++)
				good += one(c, port + k, out, in, bytes, 0);
		waitpid(pid, &st, 0);
		printf("{\"case\": \"%s\", \"port\": %d, \"n\": %d, \"bytes\": %ld, \"echoed\": %d}\n",
		       c->name, port + (int)k, cn, c->longer ? 2 * bytes : bytes, good);
		fflush(stdout);
		all &= good == cn;
	}
	return all ? 0 : 1;
}
