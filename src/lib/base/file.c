// SPDX-License-Identifier: MIT
/* file.c - small file helpers (see file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "file.h"

int ks_read_file(const char *path, char **buf, size_t *len)
{
	struct stat st;
	char *b;
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return ks_err(-errno, "can't open %s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		int e = -errno;

		close(fd);
		return ks_err(e, "can't stat %s: %s", path, strerror(-e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ks_err(-EINVAL, "%s is not a regular file", path);
	}
	b = malloc(st.st_size + 1);
	if (!b) {
		close(fd);
		return ks_err(-ENOMEM, "can't read %s: out of memory", path);
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, b + off, st.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? -errno : -EIO;

			free(b);
			close(fd);
			return ks_err(e, "can't read %s: %s", path, strerror(-e));
		}
		off += n;
	}
	close(fd);
	b[off] = '\0';
	*buf = b;
	*len = off;
	return 0;
}

int ks_write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode)
{
	char tmp[4200];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || fsync(fd) || rename(tmp, path))
		err = ks_err(-errno ?: -EIO, "can't write %s: %s", path, strerror(errno ?: EIO));
	ks_zclose(&fd);
	if (err)
		unlink(tmp);
	return err;
}
