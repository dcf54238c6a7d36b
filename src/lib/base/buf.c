// SPDX-License-Identifier: MIT
/* buf.c - a growable byte buffer (see buf.h). */
#include <errno.h>
#include <stdlib.h>
#include "buf.h"

int ks_buf_reserve(char **buf, size_t *cap, size_t need, size_t first)
{
	size_t c = *cap ? *cap : first;
	char *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(p = realloc(*buf, c)))
		return -ENOMEM;
	*buf = p;
	*cap = c;
	return 0;
}
