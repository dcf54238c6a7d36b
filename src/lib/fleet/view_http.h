// SPDX-License-Identifier: MIT
/* view_http.h - the HTTP side of `kshield fleet view` (libmicrohttpd): the
 * page's files compiled into the binary (view_assets.h), the JSON API under
 * /api/ answered by a callback, and who may ask.
 *
 * Loopback by default, where the Host header must name the loopback
 * address (a page elsewhere cannot reach it through DNS rebinding). Any
 * other address needs a token: "Authorization: Bearer T", or the cookie
 * that GET /?token=T sets (HttpOnly, SameSite=Strict) before sending the
 * browser on to / without it. Every answer carries a strict
 * Content-Security-Policy (scripts, styles and fetches from this origin
 * only; no inline script, no frames, no forms) and nosniff. GET and HEAD
 * only: the page never changes anything. Not in the static build.
 */
#ifndef KSHIELD_VIEW_HTTP_H
#define KSHIELD_VIEW_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* Answer GET /api/@what?name=@name: an HTTP status and a malloc'ed JSON
 * body in *@body (*@len bytes). Runs on the server's one thread. */
typedef int (*ks_view_api_fn)(void *ctx, const char *what, const char *name, char **body,
			      size_t *len);

struct ks_view_http;

/* Is @spec (ADDR:PORT) a loopback address? -EINVAL (message recorded) when
 * it does not parse. */
int ks_view_http_loopback(const char *spec, bool *loopback);
/* Listen on @spec; @token (NULL: none) is required unless @spec is
 * loopback, where it is optional. 0 or -errno, message recorded. */
int ks_view_http_start(const char *spec, const char *token, ks_view_api_fn api, void *ctx,
		       struct ks_view_http **out);
void ks_view_http_stop(struct ks_view_http *h);

#endif /* KSHIELD_VIEW_HTTP_H */
