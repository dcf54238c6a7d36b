// SPDX-License-Identifier: MIT
/* connect_storm.c - N loopback TCP connections: connect, accept, close, in
 * one process (the accepting end in a thread); prints wall and CPU seconds
 * and its pid (the owner of every record, for counting what was stored).
 * Each connection is one connect and one accept record for the monitor.
 *	connect_storm N [BYTES [RATE]]
 * With RATE, connections are paced at RATE a second (pace.h).
 * With BYTES, the client sends that many bytes and the server answers one
 * before the close: each connection is then a flow (two flow records, one
 * per end). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "pace.h"
#include <sys/resource.h>
#include <unistd.h>

static int lfd;
static long n, bytes;
static char buf[65536];

/* Read @len bytes into @p (64 KiB, reused), or fail (-1). */
static int read_all(int fd, char *p, long len)
{
	while (len > 0) {
		ssize_t r = read(fd, p, len > 65536 ? 65536 : len);

		if (r <= 0)
			return -1;
		len -= r;
	}
	return 0;
}

static void *acceptor(void *arg)
{
	static char rbuf[65536];

	(void)arg;
	for (long i = 0; i < n; i++) {
		int a = accept(lfd, NULL, NULL);

		if (a < 0)
			exit(1);
		if (bytes && (read_all(a, rbuf, bytes) || write(a, "k", 1) != 1))
			exit(1);
		close(a);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	struct linger lg = { 1, 0 };	/* RST on close: no TIME_WAIT pile-up */
	struct timespec a, b;
	pthread_t t;

	n = argc > 1 ? atol(argv[1]) : 20000;
	bytes = argc > 2 ? atol(argv[2]) : 0;
	double rate = argc > 3 ? atof(argv[3]) : 0;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(lfd, (void *)&sa, len) || listen(lfd, 4096) || getsockname(lfd, (void *)&sa, &len))
		return 1;
	pthread_create(&t, NULL, acceptor, NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		pace(&a, i, rate);
		int c = socket(AF_INET, SOCK_STREAM, 0);

		if (connect(c, (void *)&sa, len))
			return 1;
		if (bytes) {
			for (long left = bytes; left > 0;) {
				ssize_t w = write(c, buf, left > (long)sizeof(buf) ? (long)sizeof(buf) : left);

				if (w <= 0)
					return 1;
				left -= w;
			}
			if (read_all(c, buf, 1))	/* the answer: all was read */
				return 1;
		}
		setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(c);
	}
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* wall seconds, then CPU seconds spent by the storm itself (user +
	 * system, where the kernel runs the monitor's programs): the CPU
	 * figure is what neighbours on a shared machine disturb least. */
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%.4f %.4f %d\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
	       ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
	       (int)getpid());
	return 0;
}
