// SPDX-License-Identifier: MIT
/* metrics_http.c - GET /metrics over HTTP for the agent and the collector
 * (see metrics_http.h). */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "err.h"
#include "metrics_http.h"
#include "mhd.h"
#include "sockaddr.h"

static struct ks_dl mhd_dl = KS_MHD_DL("the metrics server");

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
		r = ks_mhd.MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	} else {
		r = ks_mhd.MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
		ks_mhd.MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	}
	ret = ks_mhd.MHD_queue_response(c, code, r);
	ks_mhd.MHD_destroy_response(r);
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
	if ((err = ks_dl_load(&mhd_dl, ks_mhd_bind)))
		return err;
	if (!(h = calloc(1, sizeof(*h))))
		return ks_err(-ENOMEM, "out of memory");
	h->text = text;
	h->ctx = ctx;
	errno = 0;
	h->d = ks_mhd.MHD_start_daemon((own_thread ? MHD_USE_INTERNAL_POLLING_THREAD : 0) |
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
		ks_mhd.MHD_run(h->d);
}

void ks_metrics_http_stop(struct ks_metrics_http *h)
{
	if (!h)
		return;
	ks_mhd.MHD_stop_daemon(h->d);
	free(h);
}
#endif /* KSHIELD_STATIC */
