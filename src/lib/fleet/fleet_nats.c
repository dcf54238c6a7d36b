// SPDX-License-Identifier: MIT
/* fleet_nats.c - one NATS connection for the fleet commands and the agent:
 * options (servers, TLS, credentials) handed to natsOptions unchanged,
 * reconnecting forever, and the four KV buckets plus the events stream,
 * created on first use with 3 replicas (1 on a single server).
 */
#ifndef KSHIELD_STATIC	/* no static libnats/libpq: the guest binary has no fleet */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "fleet_nats.h"
#include "fleet_dl.h"

int ks_nats_err(natsStatus s, const char *what)
{
	const char *last = nats_fn.nats_GetLastError(NULL);

	return ks_err(s == NATS_TIMEOUT ? -ETIMEDOUT : s == NATS_NOT_FOUND ? -ENOENT : -EIO,
		      "%s: %s%s%s", what, nats_fn.natsStatus_GetText(s),
		      last && *last ? ": " : "", last && *last ? last : "");
}

int ks_nats_denied(struct ks_nats *n, int err)
{
	const char *txt = NULL;

	if (err && n->nc && nats_fn.natsConnection_GetLastError(n->nc, &txt) == NATS_NOT_PERMITTED)
		return ks_err(-EACCES, "the NATS server refused this user: %s (changing desired "
			      "state or objects takes the operator's credentials)", txt ? txt : "");
	return err;
}

void ks_nats_key_safe(const char *in, char *out, size_t n)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < n; i++) {
		char c = in[i];

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '_' ? c : '_';
	}
	out[i] = '\0';
}

static void on_reconnected(natsConnection *nc, void *closure)
{
	struct ks_nats *n = closure;

	(void)nc;
	n->connected = true;
	__atomic_add_fetch(&n->reconnects, 1, __ATOMIC_SEQ_CST);
}

static void on_disconnected(natsConnection *nc, void *closure)
{
	struct ks_nats *n = closure;

	(void)nc;
	n->connected = false;
}

static void on_closed(natsConnection *nc, void *closure)
{
	struct ks_nats *n = closure;

	(void)nc;
	n->closed = true;
}

static void on_connected(natsConnection *nc, void *closure)
{
	on_reconnected(nc, closure);
}

static void on_async_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure)
{
	/* Slow consumers and missed heartbeats are recovered by recreating
	 * watchers; nothing to print from inside the library's thread. */
	(void)nc; (void)sub; (void)err; (void)closure;
}

static void on_pub_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
	struct ks_nats *n = closure;

	(void)js;
	(void)pae;	/* the library destroys the message: the shipper re-sends from its mark */
	__atomic_add_fetch(&n->pub_errors, 1, __ATOMIC_SEQ_CST);
}

/* Did the last JetStream call fail because this is not a cluster (as
 * opposed to a cluster still electing leaders)? */
static bool single_server_refusal(void)
{
	const char *e = nats_fn.nats_GetLastError(NULL);

	return e && (strstr(e, "non-clustered") || strstr(e, "insufficient resources") ||
		     strstr(e, "replicas"));
}

static int ensure_kv(struct ks_nats *n, kvStore **kv, const char *bucket, int history,
		     int replicas, bool create)
{
	int64_t deadline = ks_now_ms() + 20000;
	natsStatus s;
	kvConfig cfg;

	/* Right after a cluster starts or loses a node the JetStream leaders
	 * may not be elected, and several agents may be creating the same
	 * bucket at once: bind, else create, and retry either for a while. */
	for (;;) {
		s = nats_fn.js_KeyValue(kv, n->js, bucket);
		if (s == NATS_OK)
			return 0;
		if (s == NATS_NOT_FOUND && create) {
			nats_fn.kvConfig_Init(&cfg);
			cfg.Bucket = bucket;
			cfg.History = history;
			cfg.StorageType = js_FileStorage;
			cfg.Replicas = replicas ? replicas : 3;
			cfg.MaxValueSize = -1;
			s = nats_fn.js_CreateKeyValue(kv, n->js, &cfg);
			if (s != NATS_OK && !replicas && single_server_refusal()) {
				/* A single server cannot hold 3 replicas. */
				cfg.Replicas = 1;
				if (nats_fn.js_CreateKeyValue(kv, n->js, &cfg) == NATS_OK)
					return 0;
			}
			if (s == NATS_OK)
				return 0;
		} else if (s == NATS_NOT_FOUND) {
			return ks_nats_err(s, bucket);
		}
		if (ks_now_ms() > deadline)
			return ks_nats_err(s, bucket);
		nats_fn.nats_Sleep(250);
	}
}

static int ensure_stream(struct ks_nats *n, int replicas)
{
	const char *subj[] = { KS_EVENTS_SUBJECT ".>" };
	int r[2] = { replicas ? replicas : 3, 1 };
	jsStreamInfo *si = NULL;
	jsStreamConfig sc;
	jsErrCode jerr = 0;
	natsStatus s;

	s = nats_fn.js_GetStreamInfo(&si, n->js, KS_EVENTS_STREAM, NULL, &jerr);
	if (s == NATS_OK) {
		nats_fn.jsStreamInfo_Destroy(si);
		return 0;
	}
	for (int i = 0; i < (replicas ? 1 : 2); i++) {
		nats_fn.jsStreamConfig_Init(&sc);
		sc.Name = KS_EVENTS_STREAM;
		sc.Subjects = subj;
		sc.SubjectsLen = 1;
		sc.Storage = js_FileStorage;
		sc.Replicas = r[i];
		/* De-duplication window for Nats-Msg-Id (host:seq): long enough to
		 * cover an agent re-sending a batch after a reconnect. */
		sc.Duplicates = (int64_t)20 * 60 * 1000000000LL;
		sc.MaxAge = (int64_t)7 * 24 * 3600 * 1000000000LL;
		s = nats_fn.js_AddStream(&si, n->js, &sc, NULL, &jerr);
		if (s == NATS_OK) {
			nats_fn.jsStreamInfo_Destroy(si);
			return 0;
		}
		if (!single_server_refusal())
			break;
	}
	/* Created by someone else meanwhile? */
	if (nats_fn.js_GetStreamInfo(&si, n->js, KS_EVENTS_STREAM, NULL, &jerr) == NATS_OK) {
		nats_fn.jsStreamInfo_Destroy(si);
		return 0;
	}
	return ks_nats_err(s, "creating stream " KS_EVENTS_STREAM);
}

int ks_nats_bind(struct ks_nats *n, const struct ks_nats_opts *o, bool create)
{
	int err = 0;

	if (!n->desired)
		err = ensure_kv(n, &n->desired, KS_BUCKET_DESIRED, 8, o->replicas, create);
	if (!err && !n->objects)
		err = ensure_kv(n, &n->objects, KS_BUCKET_OBJECTS, 1, o->replicas, create);
	if (!err && !n->status)
		err = ensure_kv(n, &n->status, KS_BUCKET_STATUS, 1, o->replicas, create);
	if (!err && !n->audit)
		err = ensure_kv(n, &n->audit, KS_BUCKET_AUDIT, 1, o->replicas, create);
	return err;
}

int ks_nats_open(struct ks_nats *n, const struct ks_nats_opts *o, bool create, bool events)
{
	natsOptions *opts = NULL;
	jsOptions jo;
	natsStatus s;
	int err = 0;

	memset(n, 0, sizeof(*n));
	if (!o->urls || !*o->urls)
		return ks_err(-EINVAL, "no NATS servers: use --nats URLS or set KSHIELD_NATS");
	if ((err = ks_fleet_nats_load()))
		return err;
	s = nats_fn.natsOptions_Create(&opts);
	if (s == NATS_OK) {
		/* SetServers wants an array; split the comma list in place. */
		char *copy = strdup(o->urls), *save, *tok;
		const char *list[32];
		int cnt = 0;

		for (tok = strtok_r(copy, ",", &save); tok && cnt < 32; tok = strtok_r(NULL, ",", &save))
			list[cnt++] = tok;
		s = nats_fn.natsOptions_SetServers(opts, list, cnt);
		free(copy);
	}
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetMaxReconnect(opts, -1);
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetReconnectWait(opts, 250);
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetReconnectBufSize(opts, 64 * 1024 * 1024);
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetTimeout(opts, 2000);
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetReconnectedCB(opts, on_reconnected, n);
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetDisconnectedCB(opts, on_disconnected, n);
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetErrorHandler(opts, on_async_error, n);
	if (s == NATS_OK)
		s = nats_fn.natsOptions_SetClosedCB(opts, on_closed, n);
	if (s == NATS_OK && o->retry_connect)
		s = nats_fn.natsOptions_SetRetryOnFailedConnect(opts, true, on_connected, n);
	if (s == NATS_OK && (o->tls_ca || o->tls_cert))
		s = nats_fn.natsOptions_SetSecure(opts, true);
	if (s == NATS_OK && o->tls_ca)
		s = nats_fn.natsOptions_LoadCATrustedCertificates(opts, o->tls_ca);
	if (s == NATS_OK && o->tls_cert)
		s = nats_fn.natsOptions_LoadCertificatesChain(opts, o->tls_cert, o->tls_key);
	if (s == NATS_OK && o->creds)
		s = nats_fn.natsOptions_SetUserCredentialsFromFiles(opts, o->creds, NULL);
	if (s != NATS_OK) {
		nats_fn.natsOptions_Destroy(opts);
		return ks_nats_err(s, "nats options");
	}
	s = nats_fn.natsConnection_Connect(&n->nc, opts);
	nats_fn.natsOptions_Destroy(opts);
	if (s == NATS_NOT_YET_CONNECTED) {
		s = NATS_OK;	/* retry_connect: on_connected will fire later */
	} else if (s == NATS_OK) {
		n->connected = true;
	} else {
		return ks_nats_err(s, "can't connect to NATS");
	}
	nats_fn.jsOptions_Init(&jo);
	jo.Wait = 5000;
	jo.PublishAsync.MaxPending = 65536;
	jo.PublishAsync.ErrHandler = on_pub_error;
	jo.PublishAsync.ErrHandlerClosure = n;
	s = nats_fn.natsConnection_JetStream(&n->js, n->nc, &jo);
	if (s != NATS_OK) {
		err = ks_nats_err(s, "jetstream");
		ks_nats_close(n);
		return err;
	}
	if (o->retry_connect)
		return 0;	/* agents bind (and retry binding) themselves */
	err = ks_nats_bind(n, o, create);
	if (!err && events && create)
		err = ensure_stream(n, o->replicas);
	if (err)
		ks_nats_close(n);
	return err;
}

int ks_nats_ensure_stream(struct ks_nats *n, int replicas)
{
	return ensure_stream(n, replicas);
}

void ks_nats_close(struct ks_nats *n)
{
	if (n->desired)
		nats_fn.kvStore_Destroy(n->desired);
	if (n->objects)
		nats_fn.kvStore_Destroy(n->objects);
	if (n->status)
		nats_fn.kvStore_Destroy(n->status);
	if (n->audit)
		nats_fn.kvStore_Destroy(n->audit);
	if (n->js)
		nats_fn.jsCtx_Destroy(n->js);
	if (n->nc) {
		/* Callbacks run on the library's own thread and get @n: wait
		 * for the last one (closed) before @n may go away. */
		nats_fn.natsConnection_Close(n->nc);
		for (int i = 0; i < 300 && !n->closed; i++)
			nats_fn.nats_Sleep(10);
		nats_fn.natsConnection_Destroy(n->nc);
	}
	memset(n, 0, sizeof(*n));
}
#endif /* KSHIELD_STATIC */
