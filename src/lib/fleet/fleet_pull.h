/* SPDX-License-Identifier: MIT */
/* fleet_pull.h - fetching from a JetStream pull consumer into an array of
 * the caller's size, never more.
 *
 * libnats 3.4's fetch (natsSubscription_FetchRequest, _fetch in js.c) is
 * not used: it first takes the k messages already queued on its
 * subscription, lowers the request to Batch - k, then reads until its
 * count equals Batch - k. With k >= Batch / 2 the count is already past
 * that, so it reads on until the fetch expires and stores every message
 * that comes past the end of its Batch-sized array (heap corruption).
 * Queued messages are answers to requests nobody waits for any more: a
 * fetch that expired while its answers were on the way, requests sent
 * before NATS restarted or stalled. They can arrive at any moment, so no
 * check before the call closes that window (fixed in libnats 3.8.3; the
 * fleet loads libnats.so.3.4).
 *
 * Here the requests are published and the answers read from a plain
 * subscription on one inbox: a fetch takes queued messages first, asks
 * the server for the rest, and stops when its array is full; anything
 * that comes after stays queued for the next fetch. Messages are acked
 * by publishing to their reply subject, as libnats does.
 */
#ifndef KSHIELD_FLEET_PULL_H
#define KSHIELD_FLEET_PULL_H

#include <stdbool.h>
#include <stdint.h>
#include <nats/nats.h>

struct ks_pull {
	natsConnection *nc;
	natsSubscription *sub;	/* on inbox: every request's answers */
	char *inbox;
	char next[256];		/* $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer> */
};

/* Subscribe to an inbox for the answers of @consumer (a pull consumer
 * that exists) of @stream. 0 or a negative errno with a message. */
int ks_pull_open(struct ks_pull *p, natsConnection *nc, const char *stream, const char *consumer);
void ks_pull_close(struct ks_pull *p);

/* Up to @max messages into @msgs, and no more once they hold @max_bytes
 * (0: no limit): those already queued first, then one request for the
 * rest, waiting up to @wait_ms for them; @no_wait: the server answers at
 * once when it has none. *@n gets the count (the caller destroys them).
 * Returns 0 when *@n > 0; -ENOENT (the server has none), -ETIMEDOUT, or
 * -EIO (recorded: NATS away, the consumer gone) when none came. */
int ks_pull_fetch(struct ks_pull *p, natsMsg **msgs, int max, int64_t max_bytes, bool no_wait,
		  int wait_ms, int *n);

/* Acknowledge a fetched message (the consumer's ack policy is explicit). */
int ks_pull_ack(struct ks_pull *p, natsMsg *m);

#endif
