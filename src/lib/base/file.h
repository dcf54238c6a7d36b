/* file.h - small file helpers shared by the subsystems. */
#ifndef KSHIELD_FILE_H
#define KSHIELD_FILE_H

#include <stddef.h>

/* Read a whole regular file into a malloc'ed buffer (NUL-terminated, *len without
 * the NUL). Returns 0 or a negative errno with a message recorded. */
int ks_read_file(const char *path, char **buf, size_t *len);

#endif /* KSHIELD_FILE_H */
