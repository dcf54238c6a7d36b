/* SPDX-License-Identifier: MIT */
/* fleet_cli.h - the option table entries shared by the commands that talk
 * to the fleet (fleet, agent --fleet, collect): NATS connection options and
 * the fleet agent's options, for ks_opts_parse tables (cli.h). */
#ifndef KSHIELD_FLEET_CLI_H
#define KSHIELD_FLEET_CLI_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "fleet_converge.h"
#include "fleet_nats.h"

/* --nats (alias --fleet), TLS, credentials, --replicas into *@o. */
#define OPTS_NATS(o)							\
	OPT_VAL("--nats", &(o)->urls), OPT_VAL("--fleet", &(o)->urls),	\
	OPT_VAL("--tls-ca", &(o)->tls_ca), OPT_VAL("--tls-cert", &(o)->tls_cert), \
	OPT_VAL("--tls-key", &(o)->tls_key), OPT_VAL("--creds", &(o)->creds), \
	OPT_INT("--replicas", &(o)->replicas)
#define KS_NATS_OPTS_HELP \
	"NATS := --nats URLS [--tls-ca FILE [--tls-cert FILE --tls-key FILE]] [--creds FILE]\n"

/* The fleet agent's options (NATS ones included) into *@c. */
#define OPTS_FLEET_AGENT(c)						\
	OPTS_NATS(&(c)->nats),						\
	OPT_FLAG("--control-plane", &(c)->control_plane),		\
	OPT_FLAG("--gated", &(c)->gated),				\
	OPT_VAL("--keys", &(c)->keys_dir), OPT_VAL("--root-keys", &(c)->root_dir), \
	OPT_VAL("--host", &(c)->host), OPT_VAL("--group", &(c)->groups),	\
	OPT_VAL("--groups", &(c)->groups), OPT_VAL("--state", &(c)->state_dir), \
	OPT_VAL("--store", &(c)->store), OPT_INT("--resync", &(c)->resync_s), \
	OPT_INT("--instances", &(c)->instances)
#define KS_FLEET_AGENT_OPTS_HELP \
	"AGENT := --keys DIR|--root-keys DIR [--host NAME] [--group G1,G2] [--state DIR] [--store DB]\n" \
	"         [--resync SECONDS] [--gated] [--control-plane [--instances N]] NATS\n"

/* No --nats on the line: the URL list of $KSHIELD_NATS. */
static inline void ks_nats_opts_env(struct ks_nats_opts *o)
{
	if (!o->urls)
		o->urls = getenv("KSHIELD_NATS");
}

/* The fleet's buckets, for the operator's commands (fleet, fleet keys). */
static inline int ks_fleet_open(struct ks_nats *n, struct ks_nats_opts *o)
{
	ks_nats_opts_env(o);
	return ks_nats_open(n, o, true, false);
}

/* "90", "90s", "500ms", "5m", "2h", "30d" -> milliseconds; -1 when malformed. */
static inline int64_t ks_fleet_duration_ms(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		return v * 1000;
	if (!strcmp(end, "ms"))
		return v;
	if (!strcmp(end, "m"))
		return v * 60000;
	if (!strcmp(end, "h"))
		return v * 3600000;
	if (!strcmp(end, "d"))
		return v * 86400000;
	return -1;
}

/* `fleet keys set|show` (fleet_keys.c). */
int do_fleet_keys(int argc, char **argv);
/* `fleet view` (fleet_view.c). */
int do_fleet_view(int argc, char **argv);

#endif /* KSHIELD_FLEET_CLI_H */
