// SPDX-License-Identifier: MIT
/* bulk.c - loopback traffic for the flow accounting's cost (bench/flow.sh):
 *   bulk tcp BYTES   one TCP connection moving BYTES in 64 KiB writes
 *   bulk udp COUNT   COUNT 64-byte UDP datagrams (the per-packet worst case)
 * The receiving end runs in a thread of the same process, so all the
 * kernel work (both ends, loopback softirq) is this process's CPU time.
 * Prints wall seconds, CPU seconds (user + system) and MB/s received or
 * datagrams/s sent (loopback UDP drops what the receiver cannot keep up
 * with; every datagram sent still passes the egress and ingress hooks). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int lfd;
static long long total;
static int udp;

static volatile int done;

static void *receiver(void *arg)
{
	static char buf[1 << 16];
	long long n = 0;
	int fd = udp ? lfd : accept(lfd, NULL, NULL);
	ssize_t r;

	if (fd < 0)
		exit(1);
	/* UDP ends with an empty datagram (dropped ones are not waited for) */
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		n += udp ? 1 : r;
	if (!udp)
		close(fd);
	*(long long *)arg = n;
	done = 1;
	return NULL;
}

static double secs(struct timespec a, struct timespec b)
{
	return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	static char buf[1 << 16];
	long long got = 0, left;
	struct timespec a, b;
	struct rusage ru;
	pthread_t t;
	int c, rcv = 4 << 20;

	if (argc < 3 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "udp"))) {
		fprintf(stderr, "usage: bulk tcp BYTES | bulk udp COUNT\n");
		return 2;
	}
	udp = !strcmp(argv[1], "udp");
	total = atoll(argv[2]);
	lfd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (bind(lfd, (void *)&sa, len) || (!udp && listen(lfd, 1)) ||
	    getsockname(lfd, (void *)&sa, &len))
		return 1;
	pthread_create(&t, NULL, receiver, &got);
	c = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (connect(c, (void *)&sa, len))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (left = total; left > 0;) {
		ssize_t w = write(c, buf, udp ? 64 : (left < (long long)sizeof(buf) ? left : (long long)sizeof(buf)));

		if (w < 0)
			return 1;
		left -= udp ? 1 : w;
	}
	while (udp && !done) {	/* the end marker may be dropped too */
		if (write(c, buf, 0) < 0)
			return 1;
		usleep(1000);
	}
	close(c);
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	printf("%.4f %.4f %.1f\n", secs(a, b),
	       ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
	       (udp ? total : got) / secs(a, b) / (udp ? 1 : 1e6));
	return 0;
}
