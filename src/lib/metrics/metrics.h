/* SPDX-License-Identifier: MIT */
/* metrics.h - kshield's state in the Prometheus text exposition format
 * (0.0.4, what node_exporter, Tetragon and Falco serve). Built here from
 * the pins (shields, losses, flow table, guard), the store and the agent's
 * own counters; `kshield agent` serves it over HTTP (--metrics ADDR) or
 * writes it for node_exporter's textfile collector (--metrics-textfile). */
#ifndef KSHIELD_METRICS_H
#define KSHIELD_METRICS_H

#include <stddef.h>
#include <linux/types.h>
#include <kshield/event.h>

struct ks_store;

/* The agent's counters, per event kind (enum ks_ev_kind). */
struct ks_metrics_agent {
	__u64 received[KS_EV_KIND_MAX];	/* read from the ring buffer */
	__u64 stored[KS_EV_KIND_MAX];	/* committed to the store */
	__u64 unstored[KS_EV_KIND_MAX];	/* dropped: the store was failing */
	__u64 store_errors;		/* failed commits */
	/* Gated shields (proven.h), from the last shields sync: the gate
	 * label of kshield_shield_info ("unproven": audit only here). */
	int ngates;
	struct { char name[64]; char gate[16]; } gates[64];
};

/* The exposition text into a malloc'ed, NUL-terminated *@out (*@len bytes,
 * free() it). @agent: NULL leaves the agent's counters out; @store: the
 * open store (oldest event), or NULL; @store_path: its file (size). Parts
 * that cannot be read (no monitor pinned, no guard) are left out.
 * Returns 0 or -ENOMEM. */
int ks_metrics_render(const struct ks_metrics_agent *agent, struct ks_store *store,
		      const char *store_path, char **out, size_t *len);

/* `kshield collect`'s counters (events per second: rate() of received). */
struct ks_metrics_collect {
	__s64 received, inserted, bad, frames, batches, pg_retries;
	double pg_lag_s;	/* at the last commit: stream store -> PostgreSQL */
	double last_commit_s;	/* Unix time of the last commit, 0 before any */
};

/* The collector's exposition text, as ks_metrics_render(). */
int ks_metrics_collect_render(const struct ks_metrics_collect *c, char **out, size_t *len);

#endif
