// SPDX-License-Identifier: MIT
/* fleet_pull.c - fetching from a JetStream pull consumer, bounded by the
 * caller's array (see fleet_pull.h).
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "err.h"
#include "fleet_dl.h"
#include "fleet_nats.h"
#include "fleet_pull.h"

int ks_pull_open(struct ks_pull *p, natsConnection *nc, const char *stream, const char *consumer)
{
	natsInbox *inbox = NULL;
	natsStatus s;

	memset(p, 0, sizeof(*p));
	p->nc = nc;
	if ((size_t)snprintf(p->next, sizeof(p->next), "$JS.API.CONSUMER.MSG.NEXT.%s.%s", stream,
			     consumer) >= sizeof(p->next))
		return ks_err(-EINVAL, "consumer name too long: %s", consumer);
	s = nats_fn.natsInbox_Create(&inbox);
	if (s == NATS_OK && !(p->inbox = strdup(inbox)))
		s = NATS_NO_MEMORY;
	if (inbox)
		nats_fn.natsInbox_Destroy(inbox);
	if (s == NATS_OK)
		s = nats_fn.natsConnection_SubscribeSync(&p->sub, nc, p->inbox);
	if (s != NATS_OK) {
		ks_pull_close(p);
		return ks_nats_err(s, "subscribing for the consumer's messages");
	}
	return 0;
}

void ks_pull_close(struct ks_pull *p)
{
	if (p->sub)
		nats_fn.natsSubscription_Destroy(p->sub);	/* unsubscribes */
	free(p->inbox);
	memset(p, 0, sizeof(*p));
}

/* A status the server sent instead of a message ("404" no messages, "408"
 * request expired, "409" consumer gone or too many requests, "100" idle
 * heartbeat), or NULL for a message. One queued before a fetch sends its
 * request answers an earlier one and is dropped; after, any status ends
 * the fetch: when it was an earlier request's, what this fetch's request
 * brings stays queued for the next one. */
static const char *msg_status(natsMsg *m)
{
	const char *v = NULL;

	if (nats_fn.natsMsg_GetDataLength(m) > 0 ||
	    nats_fn.natsMsgHeader_Get(m, "Status", &v) != NATS_OK)
		return NULL;
	return v ? v : "";
}

static natsStatus send_request(struct ks_pull *p, int batch, int64_t max_bytes, bool no_wait,
			       int wait_ms)
{
	char req[160];
	/* The server's request ends a little before ours, as libnats does:
	 * its answers then come while we still wait. */
	int64_t expires_ms = wait_ms >= 20 ? wait_ms - 10 : wait_ms;
	int n = snprintf(req, sizeof(req), "{\"batch\":%d", batch);

	if (max_bytes > 0)
		n += snprintf(req + n, sizeof(req) - n, ",\"max_bytes\":%lld", (long long)max_bytes);
	if (expires_ms > 0)
		n += snprintf(req + n, sizeof(req) - n, ",\"expires\":%lld",
			      (long long)expires_ms * 1000000);
	n += snprintf(req + n, sizeof(req) - n, "%s}", no_wait ? ",\"no_wait\":true" : "");
	return nats_fn.natsConnection_PublishRequest(p->nc, p->next, p->inbox, req, n);
}

int ks_pull_fetch(struct ks_pull *p, natsMsg **msgs, int max, int64_t max_bytes, bool no_wait,
		  int wait_ms, int *n)
{
	int64_t deadline = ks_mono_ms() + wait_ms, bytes = 0, left = 0;
	bool sent = false;
	int count = 0, err = 0;

	*n = 0;
	while (count < max && (max_bytes <= 0 || bytes < max_bytes)) {
		natsMsg *m = NULL;
		const char *st;
		natsStatus s;

		/* Queued answers first, without waiting; then one request
		 * for the rest, and wait for it. */
		if (sent && (left = deadline - ks_mono_ms()) <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		s = nats_fn.natsSubscription_NextMsg(&m, p->sub, sent ? left : 0);
		if (s == NATS_TIMEOUT && !sent) {
			s = send_request(p, max - count, max_bytes > 0 ? max_bytes - bytes : 0,
					 no_wait, wait_ms);
			if (s != NATS_OK) {
				err = ks_nats_err(s, "requesting messages");
				break;
			}
			sent = true;
			continue;
		}
		if (s == NATS_TIMEOUT) {
			err = -ETIMEDOUT;
			break;
		}
		if (s != NATS_OK) {
			err = ks_nats_err(s, "fetching messages");
			break;
		}
		if ((st = msg_status(m)) && !sent) {
			nats_fn.natsMsg_Destroy(m);	/* an earlier request's */
			continue;
		}
		if (st) {
			err = !strncmp(st, "404", 3) ? -ENOENT : !strncmp(st, "408", 3) ? -ETIMEDOUT :
			      !strncmp(st, "100", 3) ? 0 : ks_err(-EIO, "fetching messages: status %s", st);
			nats_fn.natsMsg_Destroy(m);
			if (err)
				break;
			continue;
		}
		msgs[count++] = m;
		bytes += nats_fn.natsMsg_GetDataLength(m);
	}
	*n = count;
	return count ? 0 : err;
}

int ks_pull_ack(struct ks_pull *p, natsMsg *m)
{
	const char *reply = nats_fn.natsMsg_GetReply(m);
	natsStatus s;

	if (!reply || !*reply)
		return 0;	/* nothing to ack (not a consumer's message) */
	s = nats_fn.natsConnection_Publish(p->nc, reply, "+ACK", 4);
	return s == NATS_OK ? 0 : ks_nats_err(s, "acking a message");
}
#endif /* KSHIELD_STATIC */
