// SPDX-License-Identifier: MIT
/* webdriver.h - just enough of the W3C WebDriver protocol to drive Debian's
 * chromium through chromedriver from a Criterion test: a session, go to a
 * URL, run a script, read an alert, take a screenshot. HTTP/1.1 over a
 * loopback socket, JSON with json-c. Header-only, as harness.h. */
#ifndef KS_TESTS_WEBDRIVER_H
#define KS_TESTS_WEBDRIVER_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct wd {
	int port;		/* chromedriver's */
	char session[128];
};

/* One request; the answer's JSON (put it) or NULL when chromedriver did
 * not answer with JSON. */
static inline json_object *wd_http(struct wd *w, const char *method, const char *path,
				   const char *body)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(w->port) };
	size_t cap = 1 << 16, len = 0, blen = body ? strlen(body) : 0;
	char *buf = malloc(cap), head[512], *p;
	json_object *o = NULL;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Content-Type: application/json; charset=utf-8\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n", method, path, w->port, blen);
	if (write(fd, head, strlen(head)) < 0 || (blen && write(fd, body, blen) < 0))
		goto out;
	/* chromedriver keeps the connection open: read what Content-Length says */
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		const char *cl;

		len += n;
		buf[len] = '\0';
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
		if ((p = strstr(buf, "\r\n\r\n")) && (cl = strcasestr(buf, "\r\nContent-Length:")) &&
		    cl < p && (size_t)(p + 4 - buf) + strtoul(cl + 17, NULL, 10) <= len)
			break;
	}
	buf[len] = '\0';
	if ((p = strstr(buf, "\r\n\r\n")))
		o = json_tokener_parse(p + 4);
out:
	close(fd);
	free(buf);
	return o;
}

/* The "value" of an answer, or NULL; *@err gets its "error" when it has one. */
static inline json_object *wd_value(json_object *o, const char **err)
{
	json_object *v = NULL, *e;

	if (err)
		*err = NULL;
	if (o && json_object_object_get_ex(o, "value", &v) && err && json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, "error", &e))
		*err = json_object_get_string(e);
	return v;
}

/* A new chromium session: Debian's binary, headless, an empty profile in
 * @profile, its network log in @netlog, every non-loopback request sent to
 * a proxy that is not there (@dead_port): nothing the browser does leaves
 * the machine, and the log shows what it tried. */
static inline void wd_start(struct wd *w, const char *profile, const char *netlog, int dead_port)
{
	char body[2048], path[64];
	json_object *o, *v, *s;
	const char *err;

	snprintf(body, sizeof(body),
		 "{\"capabilities\":{\"alwaysMatch\":{\"browserName\":\"chrome\","
		 "\"unhandledPromptBehavior\":\"ignore\",\"goog:chromeOptions\":{"
		 "\"binary\":\"/usr/lib/chromium/chromium\",\"args\":[\"--headless\",\"--no-sandbox\","
		 "\"--disable-gpu\",\"--disable-quic\",\"--no-first-run\",\"--disable-background-networking\","
		 "\"--disable-component-update\",\"--disable-sync\",\"--disable-default-apps\","
		 "\"--disable-domain-reliability\",\"--no-pings\",\"--window-size=1400,1000\","
		 "\"--user-data-dir=%s\",\"--log-net-log=%s\",\"--proxy-server=http://127.0.0.1:%d\","
		 "\"about:blank\"]}}}}", profile, netlog, dead_port);
	(void)path;
	o = wd_http(w, "POST", "/session", body);
	v = wd_value(o, &err);
	cr_assert(v && !err, "chromedriver: no session: %s", o ? json_object_to_json_string(o) : "no answer");
	cr_assert(json_object_object_get_ex(v, "sessionId", &s));
	snprintf(w->session, sizeof(w->session), "%s", json_object_get_string(s));
	json_object_put(o);
}

static inline void wd_stop(struct wd *w)
{
	char path[200];

	if (!w->session[0])
		return;
	snprintf(path, sizeof(path), "/session/%s", w->session);
	json_object_put(wd_http(w, "DELETE", path, NULL));
	w->session[0] = '\0';
}

/* POST /session/<id>/@what with @body; the answer (put it). */
static inline json_object *wd_post(struct wd *w, const char *what, const char *body)
{
	char path[300];

	snprintf(path, sizeof(path), "/session/%s/%s", w->session, what);
	return wd_http(w, "POST", path, body);
}

static inline void wd_go(struct wd *w, const char *url)
{
	json_object *b = json_object_new_object(), *o;
	const char *err;

	json_object_object_add(b, "url", json_object_new_string(url));
	o = wd_post(w, "url", json_object_to_json_string(b));
	wd_value(o, &err);
	cr_assert(o && !err, "navigate to %s: %s", url, err ? err : "no answer");
	json_object_put(o);
	json_object_put(b);
}

/* Run @script (a function body; `return` gives the value) in the page;
 * its value as JSON (put the returned answer @ans). */
static inline json_object *wd_js(struct wd *w, const char *script, json_object **ans)
{
	json_object *b = json_object_new_object(), *v;
	const char *err;

	json_object_object_add(b, "script", json_object_new_string(script));
	json_object_object_add(b, "args", json_object_new_array());
	*ans = wd_post(w, "execute/sync", json_object_to_json_string(b));
	json_object_put(b);
	v = wd_value(*ans, &err);
	cr_assert(*ans && !err, "script failed (%s): %s", err ? err : "no answer", script);
	return v;
}

/* The script's value as a string (malloc'ed). */
static inline char *wd_js_str(struct wd *w, const char *script)
{
	json_object *ans, *v = wd_js(w, script, &ans);
	char *s = strdup(v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) :
			 json_object_to_json_string(v));

	json_object_put(ans);
	return s;
}

/* Wait until @script returns true (up to @secs). */
static inline bool wd_wait(struct wd *w, const char *script, int secs)
{
	for (int i = 0; i < secs * 10; i++) {
		json_object *ans, *v = wd_js(w, script, &ans);
		bool ok = v && json_object_get_boolean(v);

		json_object_put(ans);
		if (ok)
			return true;
		usleep(100000);
	}
	return false;
}

/* Is a JavaScript dialog (alert, confirm, prompt) open? */
static inline bool wd_alert_open(struct wd *w, char *text, size_t n)
{
	char path[300];
	json_object *o, *v;
	const char *err;
	bool open;

	snprintf(path, sizeof(path), "/session/%s/alert/text", w->session);
	o = wd_http(w, "GET", path, NULL);
	v = wd_value(o, &err);
	open = o && !err;
	snprintf(text, n, "%s", open && v ? json_object_get_string(v) : "");
	json_object_put(o);
	return open;
}

static inline int b64_val(int c)
{
	const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(t, c) : NULL;

	return p ? (int)(p - t) : -1;
}

/* The page as PNG into @path. */
static inline void wd_screenshot(struct wd *w, const char *path)
{
	char url[300];
	json_object *o, *v;
	const char *s, *err;
	FILE *f;
	unsigned acc = 0;
	int bits = 0;

	snprintf(url, sizeof(url), "/session/%s/screenshot", w->session);
	o = wd_http(w, "GET", url, NULL);
	v = wd_value(o, &err);
	cr_assert(v && !err, "screenshot: %s", err ? err : "no answer");
	s = json_object_get_string(v);
	f = fopen(path, "wb");
	cr_assert(f, "can't write %s", path);
	for (; *s; s++) {
		int d = b64_val(*s);

		if (d < 0)
			continue;
		acc = acc << 6 | d;
		if ((bits += 6) >= 8) {
			bits -= 8;
			fputc((acc >> bits) & 0xff, f);
		}
	}
	fclose(f);
	json_object_put(o);
}

#endif /* KS_TESTS_WEBDRIVER_H */
