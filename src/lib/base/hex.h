/* SPDX-License-Identifier: MIT */
/* hex.h - bytes as lowercase hex (build ids, hashes, key ids). */
#ifndef KSHIELD_HEX_H
#define KSHIELD_HEX_H

#include <stddef.h>

/* Write @n bytes of @b as 2*@n hex digits and a NUL into @out, which holds
 * @len bytes; as many whole bytes as fit. Returns @out. */
char *ks_hex(const void *b, size_t n, char *out, size_t len);

#endif /* KSHIELD_HEX_H */
