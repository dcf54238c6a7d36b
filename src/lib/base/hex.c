// SPDX-License-Identifier: MIT
/* hex.c - see hex.h. */
#include "hex.h"

char *ks_hex(const void *b, size_t n, char *out, size_t len)
{
	static const char digit[] = "0123456789abcdef";
	const unsigned char *p = b;
	size_t i;

	if (!len)
		return out;
	for (i = 0; i < n && 2 * i + 2 < len; i++) {	/* room for both digits and the NUL */
		out[2 * i] = digit[p[i] >> 4];
		out[2 * i + 1] = digit[p[i] & 15];
	}
	out[2 * i] = '\0';
	return out;
}
