/* SPDX-License-Identifier: MIT */
/* fleet_converge.h - the per-host convergence loop: watch the desired-state
 * bucket, make this host's loaded shields match it (load new-before-old,
 * change mode, unload), refuse desired records and objects whose signature
 * does not verify (and records older than one accepted, or expired), and
 * report per-shield status; plus, when a store is given, ship its events.
 *
 * `kshield fleet agent` runs it in the foreground; `kshield agent --fleet
 * URLS` starts it in background threads beside the monitor. For benchmarks,
 * control_plane agents run the same loop with the kernel load replaced by
 * object verification (sha256 + signature) and report "kernel": false.
 */
#ifndef KSHIELD_FLEET_CONVERGE_H
#define KSHIELD_FLEET_CONVERGE_H

#include <signal.h>
#include <stdbool.h>
#include "fleet_nats.h"

struct json_object;

#define KS_FLEET_STATE_DEFAULT "/var/lib/kshield/fleet"

struct ks_converge_cfg {
	struct ks_nats_opts nats;
	const char *host;	/* default: gethostname() */
	const char *groups;	/* comma-separated group names */
	const char *keys_dir;	/* trusted public keys (*.pub); or: */
	const char *root_dir;	/* root public keys: trust the key list they sign */
	const char *state_dir;	/* fetched objects; default /var/lib/kshield/fleet */
	const char *store;	/* SQLite event store to ship from, or NULL */
	bool control_plane;	/* verify, don't load (benchmarks) */
	bool gated;		/* gate every shield (proven.h), not only --gated deploys */
	int instances;		/* control plane: this many agents, hosts HOST-0..N-1 */
	int resync_s;		/* recreate the watcher this often anyway (default 30) */
	int report_ms;		/* refresh hits/status this often (default 1000) */
	/* The agent's own facts for its registration (the fleet page shows
	 * them): "guard", "lost", ...; NULL: none. */
	void (*host_facts)(struct json_object *o);
};

/* The directory of public keys the agent verifies with: --keys, or with
 * --root-keys <state>/trusted (the valid keys of the accepted key list). */
void ks_converge_keys_dir(const struct ks_converge_cfg *c, char *out, size_t n);

/* Run until *@stop becomes non-zero. Returns 0 or a negative errno. */
int ks_converge_run(const struct ks_converge_cfg *cfg, volatile sig_atomic_t *stop);
/* Background form for `kshield agent`: start threads / stop and join them. */
int ks_converge_start(const struct ks_converge_cfg *cfg);
void ks_converge_stop(void);

#endif
