// SPDX-License-Identifier: MIT
/* fleet_dl.c - the fleet's client libraries, loaded on first use (see
 * fleet_dl.h). */
#ifndef KSHIELD_STATIC	/* no static libnats/libpq: the guest binary has no fleet */
#include <errno.h>
#include "fleet_dl.h"

struct ks_nats_fns nats_fn;
struct ks_pq_fns pq_fn;

static struct ks_dl nats_dl = KS_DL_INIT("libnats.so.3.4", "libnats3.4", "the fleet (NATS)");
static struct ks_dl pq_dl = KS_DL_INIT("libpq.so.5", "libpq5", "the fleet's PostgreSQL");

static int nats_bind(struct ks_dl *d)
{
#define BIND(f) KS_DL_BIND(d, nats_fn, f)
	KS_NATS_FNS(BIND)
	return 0;
}

static int pq_bind(struct ks_dl *d)
{
#undef BIND
#define BIND(f) KS_DL_BIND(d, pq_fn, f)
	KS_PQ_FNS(BIND)
#undef BIND
	return 0;
}

int ks_fleet_nats_load(void)
{
	return ks_dl_load(&nats_dl, nats_bind);
}

int ks_fleet_pq_load(void)
{
	return ks_dl_load(&pq_dl, pq_bind);
}
#endif /* KSHIELD_STATIC */
