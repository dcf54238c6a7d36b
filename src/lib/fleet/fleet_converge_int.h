/* SPDX-License-Identifier: MIT */
/* fleet_converge_int.h - one host's fleet agent, shared by
 * fleet_converge.c (the watch loop, the agents' threads), fleet_apply.c
 * (one shield made to match its desired record) and fleet_accept.c (what
 * this host accepts: records, versions, the key list); not an interface:
 * everything else goes through fleet_converge.h. */
#ifndef KSHIELD_FLEET_CONVERGE_INT_H
#define KSHIELD_FLEET_CONVERGE_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "fleet_converge.h"
#include "fleet_nats.h"
#include "loader.h"

#define FA_MAX_SHIELDS 64

struct fa_shield {
	char name[KS_NAME_LEN];
	json_object *desired;	/* latest desired record, NULL = none/deleted */
	char cp_sha[65];	/* control plane: what counts as "loaded" */
	enum ks_mode cp_mode;
	char last[1024];	/* last status reported, without its timestamp */
	bool reported;		/* we have a status key for it */
	bool retry;		/* transient failure: converge again next tick */
	json_object *raw;	/* the last record seen, as stored (judged again on a new key list) */
	bool refused;		/* the last record seen was refused: s->desired is older */
	int64_t answer_at;	/* the refused record's deployed_at, for its status */
	int64_t promoted_v, held_v;	/* audit-first: version promoted here / held back */
	int64_t audit_v;	/* version whose audit hits we reported ... */
	__u64 audit_n;		/* ... and how many */
	/* Gated rollouts: the proven summary (verified, by its sha256) and
	 * what it says for this host's kernel and loaded variant. */
	json_object *proven;
	char proven_sha[65];
	char gate[16];		/* "" = not gated */
	char gate_why[512];
	bool promoted_here;	/* unproven, enforcing on an operator's promote */
};

struct fa {
	const struct ks_converge_cfg *cfg;
	struct ks_nats *n;
	char host[256], key[256];
	kvWatcher *w;
	int gen;
	int64_t w_made, last_tick;
	int nsh;
	struct fa_shield sh[FA_MAX_SHIELDS];
	volatile sig_atomic_t *stop;
	pthread_t th;
	char keys_dir[4096];	/* what signatures are verified with */
	json_object *seen;	/* shield (or _keys) -> highest version accepted */
	int64_t key_expiry;	/* the next listed key to expire (root mode), 0 = none */
};

/* fleet_apply.c */
bool ks_fa_current(struct fa *a, struct fa_shield *s, char sha[65], enum ks_mode *mode,
		   struct ks_shield_state *st);
/* Report @status of shield @s into kshield_status (only changes are
 * written). */
void ks_fa_report(struct fa *a, struct fa_shield *s, const char *status, const char *error,
		  const char *sha, const struct ks_shield_state *st, const char *variant,
		  enum ks_mode mode);
/* Make what is loaded of @s match s->desired. */
void ks_fa_converge(struct fa *a, struct fa_shield *s);
void ks_fa_audit_report(struct fa *a, struct fa_shield *s, const struct ks_shield_state *st);

/* fleet_accept.c */
extern json_object *ks_fa_keylist;
/* Judge s->raw: converge on it when accepted, report "refused" if not. */
void ks_fa_take_record(struct fa *a, struct fa_shield *s);
/* Make the trusted keys directory hold exactly the valid keys of @body. */
void ks_fa_keys_install(struct fa *a, json_object *body);
/* A key list arrived (or was read back at start, @startup). */
void ks_fa_take_keys(struct fa *a, json_object *rec, bool startup);
/* What this host accepted before, read from cfg->state_dir. */
int ks_fa_agent_state(struct fa *a, const struct ks_converge_cfg *cfg);

#endif /* KSHIELD_FLEET_CONVERGE_INT_H */
