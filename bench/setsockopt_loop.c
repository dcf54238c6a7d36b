// SPDX-License-Identifier: MIT
/* setsockopt_loop - N setsockopt calls on one socket: the cost an attached
 * sockopt shield adds to every setsockopt on the machine (the ordinary,
 * non-trigger path, which is what production pays).
 * Usage: setsockopt_loop [N]   (default 1000000) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), v = 1;

	if (fd < 0) {
		perror("socket");
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &v, sizeof(v))) {
			perror("setsockopt");
			return 1;
		}
	close(fd);
	return 0;
}
