// SPDX-License-Identifier: MIT
/* mhd.h - libmicrohttpd's functions, loaded when an HTTP server first
 * starts (dl.h): the agent's and the collector's /metrics
 * (metrics_http.c) and the fleet page (fleet/view_http.c). An agent with
 * metrics off never maps it, nor GnuTLS under it. Each server keeps its
 * own struct ks_dl, so that a missing library is named for what needed it:
 *	static struct ks_dl dl = KS_MHD_DL("the metrics server");
 *	err = ks_dl_load(&dl, ks_mhd_bind);	then ks_mhd.MHD_start_daemon(...)
 */
#ifndef KSHIELD_MHD_H
#define KSHIELD_MHD_H

#ifndef KSHIELD_STATIC
#include <microhttpd.h>
#include "dl.h"

#define KS_MHD_FNS(X) X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_run) \
	X(MHD_create_response_from_buffer) X(MHD_add_response_header) \
	X(MHD_queue_response) X(MHD_destroy_response) X(MHD_lookup_connection_value)
extern struct ks_mhd { KS_MHD_FNS(KS_DL_PTR) } ks_mhd;

#define KS_MHD_DL(feature) KS_DL_INIT("libmicrohttpd.so.12", "libmicrohttpd12", feature)

/* ks_dl_load()'s bind function: fills ks_mhd. */
int ks_mhd_bind(struct ks_dl *d);
#endif

#endif
