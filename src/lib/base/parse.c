// SPDX-License-Identifier: MIT
/* parse.c - numbers as users type them (see parse.h). */
#include <errno.h>
#include <stdlib.h>
#include "err.h"
#include "parse.h"

int ks_parse_u64(const char *s, const char *what, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		return ks_err(-EINVAL, "invalid %s '%s': expected a non-negative integer", what, s);
	return 0;
}
