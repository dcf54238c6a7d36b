/* SPDX-License-Identifier: MIT */
/* config.h - the agent's configuration file (/etc/kshield/kshield.conf).
 *
 * Format: one `key = value` per line; blank lines and lines whose first
 * non-blank character is '#' are ignored; whitespace around key and value is
 * dropped; no quoting. An unknown key is an error, so that a typo never
 * silently leaves a shield in the wrong mode. Keys:
 *
 *   store = PATH                 event store (SQLite)
 *   retention = N[s|m|h|d]       how long events are kept (keep = alias)
 *   max_size = N[K|M|G]          store size cap (bytes)
 *   shields_dir = DIR            every *.bpf.o in it is loaded
 *   bpffs = DIR                  bpffs root
 *   default_mode = enforce|audit
 *   shield.<name>.mode = enforce|audit
 *   gated = on|off               enforce a shield only on kernels where the
 *                                 matrix proved the variant that loaded (its
 *                                 NAME.proven.json beside the object, signed
 *                                 when keys_dir is set); elsewhere audit,
 *                                 "unproven kernel" (default off)
 *   shield.<name>.promote = on   gated: enforce it on this unproven kernel
 *                                 anyway (never where the matrix refused it)
 *   guard = on|off               tamper guard (see docs/guard.md)
 *   check_interval = N[s|m|h]    how often the agent checks its pins
 *   flow = on|off                `flow` records (per-packet cgroup programs;
 *                                 off: exec/connect only, default on)
 *   flow_interval = N[s|m|h]     interim `flow` records of connections that
 *                                 keep moving data (default 60s)
 *   sites_dir = DIR              kernel sites manifests (<build-id>.json) for
 *                                 shields on kernel:FUNCTION (kernel_sites.h)
 *   btf_dir = DIR                the BTF of kernels built without it
 *                                 (<build-id>.btf; btf_find.h)
 *   weaken_token = PATH          while the guard is on, a change that weakens
 *                                 the shields (audit, unload, guard = off)
 *                                 needs a token signed by a key of keys_dir
 *                                 as the guard recorded it when it loaded
 *                                 (default /etc/kshield/weaken.token; weaken.h)
 *   keys_dir = DIR               trusted public keys (*.pub): --fleet's --keys
 *                                 when not given; sites manifests and every
 *                                 shields_dir object (FILE.sig beside it) must
 *                                 be signed by one of them
 *   metrics = ADDR:PORT|off      serve Prometheus metrics on /metrics there
 *                                 (default off; 127.0.0.1:9477 keeps it local)
 *   metrics_textfile = PATH      write them for node_exporter's textfile
 *                                 collector instead (or as well)
 */
#ifndef KSHIELD_CONFIG_H
#define KSHIELD_CONFIG_H

#include <stdbool.h>
#include <linux/types.h>
#include <kshield/shield.h>

#define KS_CONFIG_DEFAULT	"/etc/kshield/kshield.conf"
#define KS_SHIELDS_DIR_DEFAULT	"/etc/kshield/shields.d"
#define KS_STORE_DEFAULT	"/var/lib/kshield/events.db"
#define KS_WEAKEN_TOKEN_DEFAULT	"/etc/kshield/weaken.token"
#define KS_CONFIG_MAX_SHIELDS	64

struct ks_shield_mode {
	char name[KS_NAME_LEN];
	enum ks_mode mode;
	bool has_mode;		/* a .mode line set it (else default_mode) */
	bool promote;		/* .promote = on: may enforce on an unproven kernel */
	int line;		/* where it was set, for messages */
};

struct ks_config {
	char path[4096];		/* file it was read from ("" = defaults) */
	char store[4096];
	char shields_dir[4096];
	char bpffs[4096];		/* "" = keep the --bpffs / default root */
	char sites_dir[4096];		/* "" = $KSHIELD_SITES_DIR or the default */
	char btf_dir[4096];		/* "" = --btf-dir, $KSHIELD_BTF_DIR or the default */
	char keys_dir[4096];		/* "" = none: manifests need no signature */
	char weaken_token[4096];	/* signed token for weakening changes (weaken.h) */
	char metrics[128];		/* "" = no HTTP metrics; else ADDR:PORT */
	char metrics_textfile[4096];	/* "" = none */
	__u64 retention_s;		/* 0 = keep forever */
	__u64 max_size;			/* bytes, 0 = no cap */
	__u64 check_interval_s;		/* pin check period */
	__u64 flow_interval_s;		/* interim flow records of long connections */
	enum ks_mode default_mode;
	bool guard;
	bool gated;			/* enforce only where proven (proven.h) */
	bool flow;			/* flow accounting attached (restart to change) */
	int nshields;
	struct ks_shield_mode shields[KS_CONFIG_MAX_SHIELDS];
};

/* Fill @cfg with the built-in defaults. */
void ks_config_defaults(struct ks_config *cfg);
/* Read @path over the defaults. A missing file is an error only when
 * @must_exist (an explicit --config); otherwise the defaults stand.
 * Returns 0 or a negative errno with "FILE:LINE: what is wrong" recorded. */
int ks_config_load(struct ks_config *cfg, const char *path, bool must_exist);
/* SIGHUP: re-read cfg->path and take its shield modes, default_mode, guard
 * and check_interval; paths (store, shields_dir, bpffs, sites_dir,
 * keys_dir) and command-line overrides stay as they are until a restart.
 * On error nothing changes. */
int ks_config_reload(struct ks_config *cfg);
/* Mode for shield @name: its own line, else default_mode. */
enum ks_mode ks_config_mode(const struct ks_config *cfg, const char *name);
/* shield.<name>.promote = on (gated: may enforce on an unproven kernel). */
bool ks_config_promoted(const struct ks_config *cfg, const char *name);
/* "enforce" / "audit" */
int ks_mode_parse(const char *s, enum ks_mode *mode);
const char *ks_mode_str(enum ks_mode mode);

#endif
