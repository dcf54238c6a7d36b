/* SPDX-License-Identifier: MIT */
/* file.h - small file helpers shared by the subsystems. */
#ifndef KSHIELD_FILE_H
#define KSHIELD_FILE_H

#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/* Read a whole regular file into a malloc'ed buffer (NUL-terminated, *len without
 * the NUL). Returns 0 or a negative errno with a message recorded. */
int ks_read_file(const char *path, char **buf, size_t *len);

/* Replace @path with @len bytes of @buf so that a reader sees the old file
 * or the new one, never a part: written and fsynced as @path.tmp<pid>
 * (created with @mode, less the umask), then renamed over @path. Returns 0,
 * or a negative errno with a message recorded and the temporary removed. */
int ks_write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode);

/* Close *@fd if it is open and mark it closed (-1), as libbpf's zclose():
 * the "if (fd >= 0) close(fd)" written once. */
static inline void ks_zclose(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

#endif /* KSHIELD_FILE_H */
