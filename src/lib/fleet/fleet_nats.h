/* SPDX-License-Identifier: MIT */
/* fleet_nats.h - kshield's NATS connection: servers, TLS and credentials
 * options passed through to natsOptions, reconnect forever, a reconnect
 * generation counter (libnats 3.4 KV watchers can go silent after a
 * reconnect, so watchers compare it and recreate themselves), and the
 * JetStream buckets and stream the fleet uses.
 */
#ifndef KSHIELD_FLEET_NATS_H
#define KSHIELD_FLEET_NATS_H

#include <stdbool.h>
#include <stdint.h>
#include <nats/nats.h>
#include "clock.h"

#define KS_BUCKET_DESIRED "kshield_desired"	/* shield name -> desired state (JSON) */
#define KS_BUCKET_OBJECTS "kshield_objects"	/* sha256 hex -> shield object bytes */
#define KS_BUCKET_STATUS  "kshield_status"	/* <shield>.<host> -> status (JSON) */
#define KS_BUCKET_AUDIT   "kshield_audit"	/* <shield>.<host> -> audit hits (JSON) */
#define KS_EVENTS_STREAM  "KSHIELD_EVENTS"
#define KS_EVENTS_SUBJECT "kshield.events"	/* kshield.events.<host> */
#define KS_EVENTS_ENCODING "Ks-Encoding"	/* header: "zstd" when the frame is compressed */

struct ks_nats_opts {
	const char *urls;	/* "nats://a:4222,nats://b:4222" */
	const char *tls_ca;	/* CA bundle: enables TLS */
	const char *tls_cert;	/* client certificate chain (with tls_key) */
	const char *tls_key;
	const char *creds;	/* NATS .creds file (JWT + NKey seed) */
	int replicas;		/* for buckets/stream created by us; 0 = 3, falling back to 1 */
	bool retry_connect;	/* agents: start even when no server is up yet */
};

struct ks_nats {
	natsConnection *nc;
	jsCtx *js;
	kvStore *desired, *objects, *status, *audit;
	volatile int reconnects;	/* bumped by the reconnected callback */
	volatile bool connected;
	volatile bool closed;		/* the closed callback ran: no callback will follow */
	volatile int pub_errors;	/* async publishes the server refused or timed out */
};

/* Connect and bind (or create, when @create) the buckets and, when
 * @events, the events stream. Returns 0 or a negative errno with a message. */
int ks_nats_open(struct ks_nats *n, const struct ks_nats_opts *o, bool create, bool events);
void ks_nats_close(struct ks_nats *n);
/* Create the events stream when missing (what agents publish into). */
int ks_nats_ensure_stream(struct ks_nats *n, int replicas);
/* Bind the buckets (retrying quietly when JetStream is not ready yet);
 * @create: create missing ones (the operator's commands do; agents only
 * bind: their credentials may not create streams). */
int ks_nats_bind(struct ks_nats *n, const struct ks_nats_opts *o, bool create);
/* After a failed call: when the server refused this user's permissions
 * (it answers a refused publish with nothing, so the call timed out),
 * record that instead and return -EACCES; otherwise return @err. */
int ks_nats_denied(struct ks_nats *n, int err);
/* Record a one-line error for a failed NATS call. */
int ks_nats_err(natsStatus s, const char *what);

/* Key-safe form of a host name: NATS KV keys allow [-/_=.a-zA-Z0-9] and the
 * dot is our separator, so everything else (dots included) becomes '_'. */
void ks_nats_key_safe(const char *in, char *out, size_t n);

#endif
