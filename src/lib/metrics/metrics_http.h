/* SPDX-License-Identifier: MIT */
/* metrics_http.h - GET /metrics over HTTP (libmicrohttpd): the one server
 * behind `kshield agent --metrics` and `kshield collect --metrics`. Not in
 * the static build (no static libmicrohttpd). */
#ifndef KSHIELD_METRICS_HTTP_H
#define KSHIELD_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* The exposition text for one scrape, malloc'ed into *@text (*@len bytes);
 * 0 or -errno. */
typedef int (*ks_metrics_text_fn)(void *ctx, char **text, size_t *len);

struct ks_metrics_http;

/* Listen on @spec (ADDR:PORT, named @what in errors) and answer GET and
 * HEAD /metrics with @text(@ctx) (404 elsewhere, 405 for other methods,
 * 500 when @text fails). @own_thread: the server polls in a thread of its
 * own, so @text runs there; else it runs only inside ks_metrics_http_run()
 * from the caller's loop. *@out: the server. 0 or -errno, message recorded. */
int ks_metrics_http_start(const char *spec, const char *what, bool own_thread,
			  ks_metrics_text_fn text, void *ctx, struct ks_metrics_http **out);
/* Answer what is pending, without blocking (servers without a thread). */
void ks_metrics_http_run(struct ks_metrics_http *h);
/* Stop and free (NULL is fine). */
void ks_metrics_http_stop(struct ks_metrics_http *h);

#endif /* KSHIELD_METRICS_HTTP_H */
