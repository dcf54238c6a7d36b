// SPDX-License-Identifier: MIT
/* log.c - the library's line log (see log.h): the only place under
 * src/lib that writes to a standard stream. */
#include <stdarg.h>
#include <stdio.h>
#include "log.h"

static const char *prefix = "kshield";
static ks_log_fn sink;

void ks_log_set_prefix(const char *p)
{
	prefix = p;
}

void ks_log_set_sink(ks_log_fn fn)
{
	sink = fn;
}

void ks_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (sink)
		sink(line);
	else
		fprintf(stderr, "%s: %s\n", prefix, line);
}
