// SPDX-License-Identifier: MIT
/* err.c - per-thread error messages (see err.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "err.h"

static __thread char errbuf[1024];

int ks_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return err;
}

int ks_err_ctx(int err, const char *fmt, ...)
{
	char ctx[512], old[sizeof(errbuf)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	snprintf(old, sizeof(old), "%s", errbuf[0] ? errbuf : strerror(-err));
	snprintf(errbuf, sizeof(errbuf), "%s: %s", ctx, old);
	return err;
}

const char *ks_errmsg(void)
{
	return errbuf;
}

void ks_err_clear(void)
{
	errbuf[0] = '\0';
}
