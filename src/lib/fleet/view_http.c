// SPDX-License-Identifier: MIT
/* view_http.c - the page's HTTP server (see view_http.h). */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sodium.h>
#include "err.h"
#include "mhd.h"
#include "sockaddr.h"
#include "view_assets.h"
#include "view_http.h"

static struct ks_dl mhd_dl = KS_MHD_DL("the fleet page");

/* Same origin for everything, nothing inline, nothing framed. */
#define VIEW_CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " \
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
#define TOKEN_COOKIE "ks_view_token"

struct ks_view_http {
	struct MHD_Daemon *d;
	ks_view_api_fn api;
	void *ctx;
	char *token;		/* NULL: loopback, no token */
	bool loopback;
	char hosts[3][64];	/* Host header values accepted on loopback */
};

int ks_view_http_loopback(const char *spec, bool *loopback)
{
	struct sockaddr_storage ss;
	int err = ks_addr_port_parse(spec, "--listen", &ss);

	if (err)
		return err;
	if (ss.ss_family == AF_INET)
		*loopback = (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	else
		*loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	return 0;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *type,
			      void *body, size_t len, enum MHD_ResponseMemoryMode mem,
			      const char *cookie, const char *location)
{
	struct MHD_Response *r = ks_mhd.MHD_create_response_from_buffer(len, body, mem);
	enum MHD_Result ret;

	ks_mhd.MHD_add_response_header(r, "Content-Type", type);
	ks_mhd.MHD_add_response_header(r, "Content-Security-Policy", VIEW_CSP);
	ks_mhd.MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ks_mhd.MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	ks_mhd.MHD_add_response_header(r, "Cache-Control", "no-store");
	if (cookie)
		ks_mhd.MHD_add_response_header(r, "Set-Cookie", cookie);
	if (location)
		ks_mhd.MHD_add_response_header(r, "Location", location);
	ret = ks_mhd.MHD_queue_response(c, code, r);
	ks_mhd.MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result plain(struct MHD_Connection *c, unsigned code, const char *msg)
{
	return answer(c, code, "text/plain; charset=utf-8", (void *)msg, strlen(msg),
		      MHD_RESPMEM_PERSISTENT, NULL, NULL);
}

static bool token_is(const struct ks_view_http *h, const char *t)
{
	size_t n = strlen(h->token);

	return t && strlen(t) == n && !sodium_memcmp(t, h->token, n);
}

/* The token from the Authorization header or the cookie. */
static bool authorized(const struct ks_view_http *h, struct MHD_Connection *c)
{
	const char *a = ks_mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *k = ks_mhd.MHD_lookup_connection_value(c, MHD_COOKIE_KIND, TOKEN_COOKIE);

	if (!h->token)
		return true;
	if (a && !strncmp(a, "Bearer ", 7) && token_is(h, a + 7))
		return true;
	return token_is(h, k);
}

/* On loopback without a token: the Host header must be ours. */
static bool host_ok(const struct ks_view_http *h, struct MHD_Connection *c)
{
	const char *host = ks_mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");

	if (h->token || !host)
		return h->token != NULL;
	for (int i = 0; i < 3; i++)
		if (!strcmp(host, h->hosts[i]))
			return true;
	return false;
}

static enum MHD_Result on_http(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct ks_view_http *h = cls;
	const char *q;

	(void)version; (void)upload; (void)upload_size; (void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return plain(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET only\n");
	if (!host_ok(h, c))
		return plain(c, MHD_HTTP_FORBIDDEN, "Host header is not this server's loopback address\n");
	q = ks_mhd.MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	if (h->token && !strcmp(url, "/") && q) {
		static char cookie[512];

		if (!token_is(h, q))
			return plain(c, MHD_HTTP_FORBIDDEN, "wrong token\n");
		snprintf(cookie, sizeof(cookie), TOKEN_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict",
			 h->token);
		return answer(c, MHD_HTTP_SEE_OTHER, "text/plain", (void *)"", 0, MHD_RESPMEM_PERSISTENT,
			      cookie, "/");
	}
	if (!authorized(h, c))
		return plain(c, MHD_HTTP_UNAUTHORIZED, "token needed: open /?token=TOKEN once\n");
	if (!strncmp(url, "/api/", 5)) {
		const char *name = ks_mhd.MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
		char *body = NULL;
		size_t len = 0;
		int code = h->api(h->ctx, url + 5, name ? name : "", &body, &len);

		if (!body)
			return plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		return answer(c, code, "application/json; charset=utf-8", body, len,
			      MHD_RESPMEM_MUST_FREE, NULL, NULL);
	}
	for (size_t i = 0; i < ks_view_nassets; i++) {
		const struct ks_view_asset *a = &ks_view_assets[i];

		if (!strcmp(url + 1, a->name) || (!strcmp(url, "/") && !strcmp(a->name, "index.html")))
			return answer(c, MHD_HTTP_OK, a->type, (void *)a->data, a->len,
				      MHD_RESPMEM_PERSISTENT, NULL, NULL);
	}
	return plain(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

int ks_view_http_start(const char *spec, const char *token, ks_view_api_fn api, void *ctx,
		       struct ks_view_http **out)
{
	struct sockaddr_storage ss;
	struct ks_view_http *h;
	unsigned port;
	int err;

	*out = NULL;
	if ((err = ks_addr_port_parse(spec, "--listen", &ss)))
		return err;
	if (!(h = calloc(1, sizeof(*h))))
		return ks_err(-ENOMEM, "out of memory");
	if ((err = ks_view_http_loopback(spec, &h->loopback)) || (err = ks_dl_load(&mhd_dl, ks_mhd_bind)))
		goto fail;
	if (!h->loopback && (!token || !*token)) {
		err = ks_err(-EPERM, "fleet view: %s is not a loopback address: give --token-file FILE "
			     "(the page then asks for that token)", spec);
		goto fail;
	}
	if (token && *token && !(h->token = strdup(token))) {
		err = ks_err(-ENOMEM, "out of memory");
		goto fail;
	}
	port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	snprintf(h->hosts[0], sizeof(h->hosts[0]), "127.0.0.1:%u", port);
	snprintf(h->hosts[1], sizeof(h->hosts[1]), "localhost:%u", port);
	snprintf(h->hosts[2], sizeof(h->hosts[2]), "[::1]:%u", port);
	h->api = api;
	h->ctx = ctx;
	errno = 0;
	/* One thread answers everything: the API's connections are not shared. */
	h->d = ks_mhd.MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				    (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				    port, NULL, NULL, on_http, h,
				    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				    MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
	if (!h->d) {
		err = errno ? errno : EADDRINUSE;
		err = ks_err(-err, "fleet view: can't listen on %s: %s", spec, strerror(err));
		goto fail;
	}
	*out = h;
	return 0;
fail:
	free(h->token);
	free(h);
	return err;
}

void ks_view_http_stop(struct ks_view_http *h)
{
	if (!h)
		return;
	ks_mhd.MHD_stop_daemon(h->d);
	free(h->token);
	free(h);
}
#endif /* KSHIELD_STATIC */
