// SPDX-License-Identifier: MIT
/* metrics_http.c - GET /metrics over HTTP for the agent and the collector
 * (see metrics_http.h). */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include "dl.h"
#include "err.h"
#include "metrics_http.h"
#include "sockaddr.h"

/* libmicrohttpd (and GnuTLS under it) is mapped only once a server starts
 * (dl.h): an agent with metrics = off never pays for it. */
#define MHD_FNS(X) X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_run) \
	X(MHD_create_response_from_buffer) X(MHD_add_response_header) \
	X(MHD_queue_response) X(MHD_destroy_response)
static struct { MHD_FNS(KS_DL_PTR) } mhd;
static struct ks_dl mhd_dl = KS_DL_INIT("libmicrohttpd.so.12", "libmicrohttpd12",
					"the metrics server");

static int mhd_bind(struct ks_dl *d)
{
#define BIND(f) KS_DL_BIND(d, mhd, f)
	MHD_FNS(BIND)
#undef BIND
	return 0;
}

struct ks_metrics_http {
	struct MHD_Daemon *d;
	ks_metrics_text_fn text;
	void *ctx;
};

static enum MHD_Result on_http(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct ks_metrics_http *h = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned code = MHD_HTTP_OK;
	char *text = NULL;
	size_t len = 0;

	(void)version; (void)upload; (void)upload_size; (void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	else if (strcmp(url, "/metrics"))
		code = MHD_HTTP_NOT_FOUND;
	else if (h->text(h->ctx, &text, &len))
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
	if (code != MHD_HTTP_OK) {
		static const char msg[] = "kshield: GET /metrics\n";

		free(text);
		r = mhd.MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	} else {
		r = mhd.MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
		mhd.MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	}
	ret = mhd.MHD_queue_response(c, code, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

int ks_metrics_http_start(const char *spec, const char *what, bool own_thread,
			  ks_metrics_text_fn text, void *ctx, struct ks_metrics_http **out)
{
	struct sockaddr_storage ss;
	struct ks_metrics_http *h;
	int err;

	*out = NULL;
	if ((err = ks_addr_port_parse(spec, what, &ss)))
		return err;
	if ((err = ks_dl_load(&mhd_dl, mhd_bind)))
		return err;
	if (!(h = calloc(1, sizeof(*h))))
		return ks_err(-ENOMEM, "out of memory");
	h->text = text;
	h->ctx = ctx;
	errno = 0;
	h->d = mhd.MHD_start_daemon((own_thread ? MHD_USE_INTERNAL_POLLING_THREAD : 0) |
				(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				ntohs(((struct sockaddr_in *)&ss)->sin_port), NULL, NULL, on_http, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!h->d) {
		err = errno ? errno : EADDRINUSE;
		free(h);
		return ks_err(-err, "%s: can't listen on %s: %s", what, spec, strerror(err));
	}
	*out = h;
	return 0;
}

void ks_metrics_http_run(struct ks_metrics_http *h)
{
	if (h)
		mhd.MHD_run(h->d);
}

void ks_metrics_http_stop(struct ks_metrics_http *h)
{
	if (!h)
		return;
	mhd.MHD_stop_daemon(h->d);
	free(h);
}
#endif /* KSHIELD_STATIC */
