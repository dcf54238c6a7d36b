// SPDX-License-Identifier: MIT
/* fleet_view.c - `kshield fleet view`: the read-only fleet page over the
 * fleet's NATS KV and the collector's PostgreSQL (view_api.h, view_http.h).
 *
 * A command of its own rather than part of `collect`: the page needs only
 * read access (a read-only PostgreSQL role, NATS credentials that read the
 * buckets), while the collector holds write credentials and sits on the
 * ingest path; a page being looked at must not slow the rows going in,
 * and either can restart without the other.
 */
#ifndef KSHIELD_STATIC
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "file.h"
#include "fleet_cli.h"
#include "view_api.h"
#include "view_http.h"

#define VIEW_USAGE "usage: kshield fleet view --pg CONNINFO [--listen ADDR:PORT] [--token-file FILE] NATS"
#define VIEW_LISTEN "127.0.0.1:9480"

static volatile sig_atomic_t view_stop;

static void on_signal(int sig)
{
	(void)sig;
	view_stop = 1;
}

/* The token: the file's first line, at least 16 characters. */
static int read_token(const char *path, char **token)
{
	size_t len, n = 0;
	char *buf;
	int err;

	if ((err = ks_read_file(path, &buf, &len)))
		return ks_report(err);
	while (n < len && !isspace((unsigned char)buf[n]))
		n++;
	buf[n] = '\0';
	if (n < 16) {
		free(buf);
		return ks_usage("%s: the token must be at least 16 characters on its first line "
				"(e.g. head -c 24 /dev/urandom | base64 > %s)", path, path);
	}
	*token = buf;
	return 0;
}

static int view_help(void)
{
	fprintf(stderr, VIEW_USAGE "\n" KS_NATS_OPTS_HELP "\n"
		"Serves the read-only fleet page (CVE coverage, each shield, each host,\n"
		"rollouts) and its JSON under /api/, from the fleet's NATS KV and the\n"
		"collector's PostgreSQL (--pg, or $KSHIELD_PG). Loopback (" VIEW_LISTEN ") unless\n"
		"--listen says otherwise; any other address needs --token-file FILE, whose\n"
		"first line the browser gives once as /?token=TOKEN. The page changes nothing:\n"
		"where an action is due it shows the signed command to run.\n");
	return 0;
}

int do_fleet_view(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *pg = getenv("KSHIELD_PG"), *listen = VIEW_LISTEN, *token_file = NULL;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no), OPT_VAL("--pg", &pg), OPT_VAL("--listen", &listen),
		OPT_VAL("--token-file", &token_file), OPT_END
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct ks_view_http *h = NULL;
	struct ks_view v;
	char *token = NULL;
	bool loopback;
	int err;

	if (!ks_opts_parse("fleet view", opts, argc, argv, 0, NULL, view_help, &err))
		return err;
	ks_nats_opts_env(&no);
	if (!pg || !no.urls)
		return ks_usage(VIEW_USAGE " (--pg: the collector's database; NATS: the fleet's servers)");
	if ((err = ks_view_http_loopback(listen, &loopback)))
		return ks_report(err);
	if (!loopback && !token_file)
		return ks_usage("fleet view: --listen %s is not loopback: give --token-file FILE too "
				"(anyone who can reach the port would read the fleet)", listen);
	if (token_file && (err = read_token(token_file, &token)))
		return err;
	if ((err = ks_view_open(&v, &no, pg))) {
		free(token);
		return ks_report(err);
	}
	/* Serve once the buckets are read (a few seconds at 10,000 hosts);
	 * until then the API would only say "try again". */
	ks_view_ready(&v, 60000);
	err = ks_view_http_start(listen, token, ks_view_api, &v, &h);
	free(token);
	if (err) {
		ks_view_close(&v);
		return ks_report(err);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (json_output) {
		printf("{\"listen\":\"%s\",\"token\":%s}\n", listen, token_file ? "true" : "false");
	} else {
		printf("fleet view: http://%s/%s\n", listen, token_file ? "?token=<the token>" : "");
	}
	fflush(stdout);
	while (!view_stop)
		pause();
	ks_view_http_stop(h);
	ks_view_close(&v);
	return 0;
}
#endif /* KSHIELD_STATIC */
