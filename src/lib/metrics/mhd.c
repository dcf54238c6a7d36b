// SPDX-License-Identifier: MIT
/* mhd.c - libmicrohttpd's function table (see mhd.h). */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include "mhd.h"

struct ks_mhd ks_mhd;

int ks_mhd_bind(struct ks_dl *d)
{
#define BIND(f) KS_DL_BIND(d, ks_mhd, f)
	KS_MHD_FNS(BIND)
#undef BIND
	return 0;
}
#endif
