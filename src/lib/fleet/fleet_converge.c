// SPDX-License-Identifier: MIT
/* fleet_converge.c - one host's side of the fleet: watch kshield_desired,
 * converge the loaded shields on it, report status into kshield_status.
 *
 * A desired record is acted on only when its signed body verifies against a
 * trusted key (--keys, or the key list a --root-keys key signed), its
 * version is not below the highest this host accepted for that shield
 * (<state>/seen.json, so a restart does not forget), and a new version has
 * not expired. Anything else (a forged, unsigned, replayed or expired
 * record, a deleted one) is reported "refused" and changes nothing here.
 * Desired state and objects are read-only to an agent: audit-first hits go
 * to kshield_audit, and each agent promotes its own shield when the quiet
 * period has passed with no host reporting hits there.
 *
 * Convergence is idempotent and driven by what the kernel pins say is loaded
 * (ks_shield_get), so a restarted or long-offline agent simply converges on
 * the current desired state when its watcher delivers it. An object is
 * loaded only after its bytes match the desired sha256 and its Ed25519
 * signature verifies against a key in --keys; otherwise the status says
 * why ("refused") and whatever was loaded before keeps enforcing. A desired
 * record may carry kernel sites manifests (one per kernel build ID, for
 * shields on kernel:FUNCTION): the one for this host's kernel is checked
 * the same way (sha256, signature by a --keys key) and written into the
 * sites directory before the load; the others are not this host's.
 *
 * The watcher is recreated after every reconnect (libnats 3.4 watchers can
 * go silent then) and every --resync seconds (its consumer may have lived
 * on a server that died while our own connection did not notice).
 */
#ifndef KSHIELD_STATIC
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <sodium.h>
#include "err.h"
#include "file.h"
#include "hex.h"
#include "log.h"
#include "btf_find.h"
#include "fleet_btf.h"
#include "fleet_converge.h"
#include "fleet_kv.h"
#include "fleet_ship.h"
#include "kernel_sites.h"
#include "loader.h"
#include "proven.h"
#include "sign.h"
#include "fleet_dl.h"

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

/* What is loaded now: from the kernel pins, or the control plane's table. */
static bool current(struct fa *a, struct fa_shield *s, char sha[65], enum ks_mode *mode,
		    struct ks_shield_state *st)
{
	memset(st, 0, sizeof(*st));
	if (a->cfg->control_plane) {
		snprintf(sha, 65, "%s", s->cp_sha);
		*mode = s->cp_mode;
		return s->cp_sha[0];
	}
	if (ks_shield_get(s->name, st))
		return false;
	ks_hex(st->cfg.sha256, 32, sha, 65);
	*mode = st->cfg.mode;
	snprintf(st->name, sizeof(st->name), "%s", s->name);
	return true;
}

/* Objects we fetched for @name: <state>/<name>-<sha12>.bpf.o. Their
 * existence is what makes a loaded shield "managed" by the fleet (a shield
 * from shields.d with the same name is not ours to unload). When @keep is
 * given, every such file whose name lacks @keep is removed. */
static bool managed(struct fa *a, const char *name, const char *keep)
{
	char pat[4096];
	glob_t g;
	bool any;

	if (a->cfg->control_plane)
		return true;
	snprintf(pat, sizeof(pat), "%s/%s-*.bpf.o", a->cfg->state_dir, name);
	if (glob(pat, 0, NULL, &g))
		return false;
	any = g.gl_pathc > 0;
	for (size_t i = 0; keep && i < g.gl_pathc; i++)
		if (!strstr(g.gl_pathv[i], keep))
			unlink(g.gl_pathv[i]);
	globfree(&g);
	return any;
}

static void report(struct fa *a, struct fa_shield *s, const char *status, const char *error,
		   const char *sha, const struct ks_shield_state *st, const char *variant,
		   enum ks_mode mode)
{
	json_object *o = json_object_new_object();
	char key[512];
	const char *txt;
	__u64 hits = 0;

	json_object_object_add(o, "host", json_object_new_string(a->host));
	json_object_object_add(o, "shield", json_object_new_string(s->name));
	json_object_object_add(o, "sha256", json_object_new_string(sha ? sha : ""));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "mode", json_object_new_string(
		mode == KS_MODE_AUDIT ? "audit" : "enforce"));
	json_object_object_add(o, "variant", json_object_new_string(variant ? variant : ""));
	if (st)
		hits = st->hits[KS_VERDICT_REFUSED] + st->hits[KS_VERDICT_AUDITED] +
		       st->hits[KS_VERDICT_KILLED];
	json_object_object_add(o, "hits", json_object_new_int64(hits));
	json_object_object_add(o, "refused", json_object_new_int64(st ? st->hits[KS_VERDICT_REFUSED] : 0));
	json_object_object_add(o, "audited", json_object_new_int64(st ? st->hits[KS_VERDICT_AUDITED] : 0));
	json_object_object_add(o, "killed", json_object_new_int64(st ? st->hits[KS_VERDICT_KILLED] : 0));
	json_object_object_add(o, "error", json_object_new_string(error ? error : ""));
	json_object_object_add(o, "kernel", json_object_new_boolean(!a->cfg->control_plane));
	json_object_object_add(o, "groups", json_object_new_string(a->cfg->groups ? a->cfg->groups : ""));
	/* Which deployment this answers: a redeploy of the same object is
	 * reported again, and fleet status counts only answers to the last. */
	json_object_object_add(o, "deployed_at", json_object_new_int64(
		s->refused ? s->answer_at : ks_json_i64(s->desired, "deployed_at")));
	json_object_object_add(o, "gate", json_object_new_string(s->gate));
	json_object_object_add(o, "gate_why", json_object_new_string(s->gate_why));
	json_object_object_add(o, "promoted", json_object_new_boolean(s->promoted_here));
	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (s->reported && !strcmp(txt, s->last)) {
		json_object_put(o);
		return;
	}
	snprintf(s->last, sizeof(s->last), "%s", txt);
	json_object_object_add(o, "at", json_object_new_int64(ks_now_ms()));
	snprintf(key, sizeof(key), "%s.%s", s->name, a->key);
	if (ks_kv_put_json(a->n->status, key, o, 0)) {
		s->last[0] = '\0';	/* not reported: try again next tick */
		s->retry = true;
	} else {
		s->reported = true;
	}
	json_object_put(o);
}

/* Fetch object @sha, check its bytes and verify signature @sig of @kind;
 * on success *obj is malloc'ed. */
static int fetch_verified(struct fa *a, enum ks_sign_kind kind, const char *sha, const char *sig,
			  char **obj, size_t *len, bool *transient)
{
	char hh[65], id[KS_KEYID_LEN];
	int err = ks_fleet_object_get(a->n->objects, sha, obj, len, hh, transient);

	if (err == -EBADMSG)
		return ks_err(-EBADMSG, "object bytes do not match the desired sha256 %.12s", sha);
	if (err)
		return err;
	if ((err = ks_sign_verify_kind(kind, *obj, *len, sig, a->keys_dir, id))) {
		free(*obj);
		*obj = NULL;
	}
	return err;
}

/* The sites manifest the desired record @d carries for this host's kernel,
 * if any: fetched, checked (sha256, signature under the sites tag by a
 * --keys key) and written as <sites dir>/<build-id>.json with its .sig
 * (the loader verifies it again when it reads it). */
static int install_sites(struct fa *a, json_object *d, bool *transient)
{
	json_object *arr, *m = NULL;
	char id[KS_BUILD_ID_HEX], path[4096], *obj = NULL;
	const char *dir = ks_kernel_sites_dir(), *sig;
	size_t len, i;
	int err;

	*transient = false;
	if (!json_object_object_get_ex(d, "sites", &arr) || !json_object_is_type(arr, json_type_array))
		return 0;
	if (ks_kernel_build_id(id, sizeof(id)))
		return 0;	/* the loader will say what is missing */
	for (i = 0; i < json_object_array_length(arr) && !m; i++)
		if (!strcmp(ks_json_str(json_object_array_get_idx(arr, i), "build_id", ""), id))
			m = json_object_array_get_idx(arr, i);
	if (!m)
		return 0;
	sig = ks_json_str(m, "sig", "");
	err = fetch_verified(a, KS_SIGN_SITES, ks_json_str(m, "sha256", ""), sig, &obj, &len,
			     transient);
	if (err)
		return ks_err_ctx(err, "sites manifest for kernel %s", id);
	if (!a->cfg->control_plane) {
		if (mkdir(dir, 0755) && errno != EEXIST)
			err = ks_err(-errno, "can't create %s: %s", dir, strerror(errno));
		snprintf(path, sizeof(path), "%s/%s.json.sig", dir, id);
		if (!err)
			err = ks_write_file_atomic(path, sig, strlen(sig), 0644);
		path[strlen(path) - 4] = '\0';
		if (!err)
			err = ks_write_file_atomic(path, obj, len, 0644);
	}
	free(obj);
	return err;
}

/* A kernel without BTF of its own: the BTF the desired record @d carries
 * for its build ID (fleet_btf.h), checked against the record and written
 * to btf_dir before the load (the control plane checks it only). */
static int install_btf(struct fa *a, struct fa_shield *s, json_object *d, bool *transient)
{
	char id[KS_BUILD_ID_HEX];
	enum ks_fleet_btf_got got;
	int err;

	*transient = false;
	if (ks_btf_kernel_has() || ks_kernel_build_id(id, sizeof(id)))
		return 0;	/* the loader will say what is missing */
	err = ks_fleet_btf_take(a->n->objects, d, s->name, id, !a->cfg->control_plane, &got,
				transient);
	if (!err && got == KS_FLEET_BTF_KEPT)
		ks_log("fleet: BTF for build ID %s from the signed bundle of %s, kept in %s", id,
		       s->name, ks_btf_dir());
	return err;
}

static int write_object(struct fa *a, const char *name, const char *sha, const char *obj,
			size_t len, char *path, size_t plen)
{
	int fd;

	snprintf(path, plen, "%s/%s-%.12s.bpf.o", a->cfg->state_dir, name, sha);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, obj, len) != (ssize_t)len) {
		int e = -errno;

		if (fd >= 0)
			close(fd);
		return ks_err(e ? e : -EIO, "can't write %s: %s", path, strerror(-e));
	}
	close(fd);
	return 0;
}

/* Audit-first: has this rollout's quiet period passed with no host
 * reporting audit hits for this version? Decided once per version. */
static bool promoted(struct fa *a, struct fa_shield *s, json_object *d)
{
	int64_t v = ks_json_i64(d, "version"), at = ks_json_i64(d, "promote_at");
	json_object *all;
	char filter[KS_NAME_LEN + 4];
	bool hits = false;

	if (at <= 0 || ks_now_ms() < at || s->held_v == v)
		return false;
	if (s->promoted_v == v)
		return true;
	snprintf(filter, sizeof(filter), "%s.*", s->name);
	if (s->audit_v == v) {
		hits = true;
	} else {
		if (ks_kv_all_json(a->n->audit, filter, &all))
			return false;	/* can't tell yet: stay in audit, ask next tick */
		json_object_object_foreach(all, k, e) {
			(void)k;
			hits |= ks_json_i64(e, "version") == v && ks_json_i64(e, "audited") > 0;
		}
		json_object_put(all);
	}
	if (hits)
		s->held_v = v;
	else
		s->promoted_v = v;
	return !hits;
}

/* A gated record's proven summary, fetched and verified (sha256, signature
 * under the proven tag by a trusted key) once per summary; none = NULL. */
static int gate_summary(struct fa *a, struct fa_shield *s, json_object *d, bool *transient)
{
	json_object *p;
	const char *sha;
	char *buf = NULL;
	size_t len;
	int err;

	*transient = false;
	if (!json_object_object_get_ex(d, "proven", &p) || !(sha = ks_json_str(p, "sha256", NULL))) {
		json_object_put(s->proven);
		s->proven = NULL;
		s->proven_sha[0] = '\0';
		return 0;
	}
	if (s->proven && !strcmp(s->proven_sha, sha))
		return 0;
	err = fetch_verified(a, KS_SIGN_PROVEN, sha, ks_json_str(p, "sig", ""), &buf, &len, transient);
	if (err)
		return ks_err_ctx(err, "proven summary");
	json_object_put(s->proven);
	s->proven = NULL;
	err = ks_proven_parse(buf, len, "the proven summary", &s->proven);
	free(buf);
	if (!err)
		snprintf(s->proven_sha, sizeof(s->proven_sha), "%s", sha);
	return err;
}

/* Gated: may @variant of object @sha enforce on this kernel? Sets s->gate,
 * s->gate_why, s->promoted_here. Refused kernels never enforce, promoted
 * or not; unproven ones only where an operator promoted this host. */
static bool gate_allows(struct fa *a, struct fa_shield *s, json_object *d, const char *sha,
			const char *variant)
{
	/* A control-plane agent loads nothing, so no variant is known: as a
	 * host before its load, any variant proven on this kernel will do
	 * (NULL matched none, and a gated deploy never enforced there). */
	enum ks_gate g = ks_proven_judge_here(s->proven, sha,
					      a->cfg->control_plane ? KS_PROVEN_ANY_VARIANT : variant,
					      s->gate_why, sizeof(s->gate_why));

	snprintf(s->gate, sizeof(s->gate), "%s", ks_gate_name(g));
	s->promoted_here = g == KS_GATE_UNPROVEN && ks_fleet_promoted(d, a->host);
	return g == KS_GATE_PROVEN || s->promoted_here;
}

static void converge(struct fa *a, struct fa_shield *s)
{
	json_object *d = s->desired;
	const char *dmode = ks_json_str(d, "mode", "absent");
	const char *want_sha = ks_json_str(d, "sha256", "");
	enum ks_mode want = !strcmp(dmode, "audit") && !promoted(a, s, d) ? KS_MODE_AUDIT
									    : KS_MODE_ENFORCE;
	bool target = d && strcmp(dmode, "absent") && ks_fleet_targets(d, a->host, a->cfg->groups);
	bool gated = d && (a->cfg->gated || json_object_get_boolean(json_object_object_get(d, "gated")));
	struct ks_shield_state st;
	char sha[65] = "", path[4096];
	enum ks_mode mode = KS_MODE_ENFORCE;
	bool loaded = current(a, s, sha, &mode, &st), transient;
	char *obj = NULL;
	size_t len = 0;
	int err;

	s->retry = false;
	s->gate[0] = s->gate_why[0] = '\0';
	s->promoted_here = false;
	if (target && gated && (err = gate_summary(a, s, d, &transient))) {
		/* Nothing changes here on a summary that does not verify. */
		report(a, s, transient ? "failed" : "refused", ks_errmsg(), want_sha, NULL, NULL, want);
		s->retry = transient;
		return;
	}
	if (!target) {
		if (loaded && managed(a, s->name, NULL)) {
			if (a->cfg->control_plane)
				s->cp_sha[0] = '\0';
			else if ((err = ks_shield_unload(s->name))) {
				report(a, s, "failed", ks_errmsg(), sha, &st, st.cfg.variant, mode);
				s->retry = true;
				return;
			}
			managed(a, s->name, "\1");	/* drop every fetched object */
		}
		if (s->reported || (d && ks_fleet_targets(d, a->host, a->cfg->groups)))
			report(a, s, "unloaded", NULL, "", NULL, NULL, want);
		return;
	}
	if (loaded && !strcmp(sha, want_sha)) {
		if (gated && !gate_allows(a, s, d, want_sha, st.cfg.variant))
			want = KS_MODE_AUDIT;
		if (mode != want) {
			err = a->cfg->control_plane ? 0 : ks_shield_set_mode(s->name, want);
			if (err) {
				report(a, s, "failed", ks_errmsg(), sha, &st, st.cfg.variant, mode);
				s->retry = true;
				return;
			}
			s->cp_mode = want;
			current(a, s, sha, &mode, &st);
		}
		report(a, s, want == KS_MODE_AUDIT ? "auditing" : "enforcing", NULL, sha, &st,
		       a->cfg->control_plane ? "verified-only" : st.cfg.variant, want);
		return;
	}

	/* A new object: nothing changes on this host unless it verifies,
	 * and its sites manifest and BTF for this kernel too. */
	err = fetch_verified(a, KS_SIGN_SHIELD, want_sha, ks_json_str(d, "sig", ""), &obj, &len,
			     &transient);
	if (!err && ((err = install_sites(a, d, &transient)) ||
		     (err = install_btf(a, s, d, &transient)))) {
		free(obj);
		obj = NULL;
	}
	if (err) {
		report(a, s, transient ? "failed" : "refused", ks_errmsg(), want_sha, NULL, NULL, want);
		s->retry = transient;
		return;
	}
	if (a->cfg->control_plane) {
		if (gated && !gate_allows(a, s, d, want_sha, NULL))
			want = KS_MODE_AUDIT;
		snprintf(s->cp_sha, sizeof(s->cp_sha), "%s", want_sha);
		s->cp_mode = want;
		free(obj);
		report(a, s, want == KS_MODE_AUDIT ? "auditing" : "enforcing", NULL, want_sha,
		       NULL, "verified-only", want);
		return;
	}
	err = write_object(a, s->name, want_sha, obj, len, path, sizeof(path));
	if (!err) {
		struct ks_load_result res;

		/* The verified bytes are the loaded bytes: the file written is
		 * only the record of them (a rewrite of it changes nothing).
		 * New before old: the loader attaches this one before it
		 * detaches what is loaded now. */
		/* Gated: an unproven kernel never enforces, not even for a
		 * moment. A kernel where this object was proven loads it
		 * enforcing at once (the matrix loaded it on this very build,
		 * so the loader picks the same variant), so an upgrade leaves
		 * no gap between the old object and the new; the variant that
		 * did load is then judged, and audits if it is not proven. */
		enum ks_mode first = want;

		if (gated && want == KS_MODE_ENFORCE && !gate_allows(a, s, d, want_sha, KS_PROVEN_ANY_VARIANT))
			first = KS_MODE_AUDIT;
		err = ks_shield_load_buf(path, obj, len, gated ? first : want, &res);
		if (err)
			unlink(path);
		if (!err && gated) {
			if (!gate_allows(a, s, d, want_sha, res.variant))
				want = KS_MODE_AUDIT;
			if (want != first)
				err = ks_shield_set_mode(s->name, want);
		}
	}
	free(obj);
	if (err) {
		report(a, s, "failed", ks_errmsg(), want_sha, NULL, NULL, want);
		return;
	}
	{
		char keep[64];

		snprintf(keep, sizeof(keep), "-%.12s.", want_sha);
		managed(a, s->name, keep);	/* drop older fetched objects */
	}
	current(a, s, sha, &mode, &st);
	report(a, s, want == KS_MODE_AUDIT ? "auditing" : "enforcing", NULL, sha, &st,
	       st.cfg.variant, want);
}

/* Audit mode: would-be refusals seen here go to kshield_audit (the only
 * bucket besides status an agent writes); any host's entry for this
 * version holds every host's automatic promotion back. */
static void audit_report(struct fa *a, struct fa_shield *s, const struct ks_shield_state *st)
{
	json_object *d = s->desired, *o;
	int64_t v = ks_json_i64(d, "version");
	__u64 audited = st ? st->hits[KS_VERDICT_AUDITED] : 0;
	char key[512];

	if (!d || strcmp(ks_json_str(d, "mode", ""), "audit") || !audited ||
	    (s->audit_v == v && s->audit_n == audited))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "host", json_object_new_string(a->host));
	json_object_object_add(o, "shield", json_object_new_string(s->name));
	json_object_object_add(o, "sha256", json_object_new_string(ks_json_str(d, "sha256", "")));
	json_object_object_add(o, "version", json_object_new_int64(v));
	json_object_object_add(o, "audited", json_object_new_int64(audited));
	json_object_object_add(o, "at", json_object_new_int64(ks_now_ms()));
	snprintf(key, sizeof(key), "%s.%s", s->name, a->key);
	if (!ks_kv_put_json(a->n->audit, key, o, 0)) {
		s->audit_v = v;
		s->audit_n = audited;
	}
	json_object_put(o);
}

static struct fa_shield *shield_slot(struct fa *a, const char *name)
{
	for (int i = 0; i < a->nsh; i++)
		if (!strcmp(a->sh[i].name, name))
			return &a->sh[i];
	if (a->nsh == FA_MAX_SHIELDS || strlen(name) >= KS_NAME_LEN)
		return NULL;
	memset(&a->sh[a->nsh], 0, sizeof(a->sh[0]));
	snprintf(a->sh[a->nsh].name, KS_NAME_LEN, "%s", name);
	return &a->sh[a->nsh++];
}

static json_object *keylist;	/* the accepted key list's body (root mode has one agent) */
static void keys_install(struct fa *a, json_object *body);

static void tick(struct fa *a)
{
	if (a->key_expiry && ks_now_ms() >= a->key_expiry)
		keys_install(a, keylist);	/* a listed key just expired */
	for (int i = 0; i < a->nsh; i++) {
		struct fa_shield *s = &a->sh[i];
		struct ks_shield_state st;
		enum ks_mode mode;
		char sha[65];
		bool loaded;

		if (s->retry) {
			converge(a, s);
			continue;
		}
		if (!s->desired || !s->reported || s->refused)
			continue;
		loaded = current(a, s, sha, &mode, &st);
		if (!strcmp(ks_json_str(s->desired, "mode", "absent"), "absent") ||
		    !ks_fleet_targets(s->desired, a->host, a->cfg->groups))
			continue;
		/* Unloaded behind our back, or a new hit count: converge
		 * re-loads or just re-reports (only changes are written). */
		if (!loaded || strcmp(sha, ks_json_str(s->desired, "sha256", "")))
			continue;	/* refused/failed objects wait for a new deploy */
		audit_report(a, s, &st);
		converge(a, s);
	}
}

static void register_host(struct fa *a)
{
	json_object *o = json_object_new_object();
	struct utsname u;
	char key[300];

	json_object_object_add(o, "host", json_object_new_string(a->host));
	json_object_object_add(o, "groups", json_object_new_string(a->cfg->groups ? a->cfg->groups : ""));
	json_object_object_add(o, "kernel", json_object_new_boolean(!a->cfg->control_plane));
	/* What the fleet page shows of a host: its kernel and agent. */
	if (!uname(&u)) {
		json_object_object_add(o, "release", json_object_new_string(u.release));
		json_object_object_add(o, "arch", json_object_new_string(u.machine));
	}
	json_object_object_add(o, "agent", json_object_new_string(KSHIELD_VERSION));
	if (a->cfg->host_facts)
		a->cfg->host_facts(o);
	json_object_object_add(o, "at", json_object_new_int64(ks_now_ms()));
	snprintf(key, sizeof(key), "_host.%s", a->key);
	ks_kv_put_json(a->n->status, key, o, 0);
	json_object_put(o);
}

/* ---- what this host accepted: versions, the key list ---- */

#define VERSION_AHEAD_MS ((int64_t)86400000)	/* how far ahead of our clock a version may be */

static int state_write(struct fa *a, const char *file, const char *txt)
{
	char path[4096];

	if (a->cfg->control_plane)
		return 0;	/* benchmarks' agents remember in memory only */
	snprintf(path, sizeof(path), "%s/%s", a->cfg->state_dir, file);
	return ks_write_file_atomic(path, txt, strlen(txt), 0600);
}

/* May this host act on @rec, stored under @name? 0 and *body (its signed
 * body) when it may; otherwise a negative errno and the reason. A version
 * above every one accepted before is remembered before it is acted on. */
static int judge(struct fa *a, enum ks_sign_kind kind, const char *name, json_object *rec,
		 json_object **body)
{
	char id[KS_KEYID_LEN];
	int64_t v, seen = 0, now = ks_now_ms(), exp;
	json_object *sv;
	int err;

	*body = NULL;
	if (!rec)
		return ks_err(-ENODATA, "the record was deleted or is not JSON (a shield is removed "
			      "by a signed 'absent' record: kshield fleet rollback)");
	err = ks_fleet_open_record(kind, rec, kind == KS_SIGN_KEYLIST ? a->cfg->root_dir : a->keys_dir,
				   body, id);
	if (err)
		return err;
	v = ks_json_i64(*body, "version");
	exp = ks_json_i64(*body, "expires_at");
	if (json_object_object_get_ex(a->seen, name, &sv))
		seen = json_object_get_int64(sv);
	if (kind == KS_SIGN_DESIRED && strcmp(ks_json_str(*body, "name", ""), name))
		err = ks_err(-EINVAL, "a record signed for shield '%s' stored under '%s'",
			     ks_json_str(*body, "name", ""), name);
	else if (kind == KS_SIGN_KEYLIST && strcmp(ks_json_str(*body, "kind", ""), "kshield-keys"))
		err = ks_err(-EINVAL, "the signed body is not a key list");
	else if (v < seen)
		err = ks_err(-ESTALE, "version %lld is older than version %lld accepted here (a "
			     "rollback is a new signed version: kshield fleet rollback)",
			     (long long)v, (long long)seen);
	else if (v > seen && exp <= now)
		err = ks_err(-ETIME, "version %lld expired %llds ago (sign it again: kshield fleet renew)",
			     (long long)v, (long long)(now - exp) / 1000);
	else if (v > now + VERSION_AHEAD_MS)
		err = ks_err(-ERANGE, "version %lld is more than a day ahead of this host's clock",
			     (long long)v);
	else if (v > seen) {
		json_object_object_add(a->seen, name, json_object_new_int64(v));
		err = state_write(a, "seen.json", json_object_to_json_string_ext(a->seen,
											  JSON_C_TO_STRING_PLAIN));
		if (err)	/* not remembered: not acted on */
			json_object_object_add(a->seen, name, json_object_new_int64(seen));
	}
	if (err) {
		json_object_put(*body);
		*body = NULL;
	}
	return err;
}

static void take_record(struct fa *a, struct fa_shield *s)
{
	json_object *body;
	int err = judge(a, KS_SIGN_DESIRED, s->name, s->raw, &body);

	if (err) {
		ks_err_ctx(err, "desired record refused");
		s->refused = true;
		s->answer_at = ks_json_i64(s->raw, "deployed_at");
		report(a, s, "refused", ks_errmsg(), ks_json_str(s->raw, "sha256", ""), NULL, NULL,
		       !strcmp(ks_json_str(s->raw, "mode", ""), "audit") ? KS_MODE_AUDIT : KS_MODE_ENFORCE);
		return;
	}
	s->refused = false;
	if (s->desired)
		json_object_put(s->desired);
	s->desired = body;
	converge(a, s);
}

/* Is key @id of list @body trusted at @now (listed, unexpired, unrevoked,
 * its public key hashing to its id)? Its "pub" line in *pub. */
static bool key_valid(json_object *body, json_object *k, int64_t now, const char **pub)
{
	json_object *rev;
	const char *id = ks_json_str(k, "id", "");
	char cid[KS_KEYID_LEN];

	*pub = ks_json_str(k, "pub", "");
	if (ks_json_i64(k, "expires_at") <= now || ks_sign_pub_id(*pub, cid) || strcmp(cid, id))
		return false;
	if (json_object_object_get_ex(body, "revoked", &rev))
		for (size_t i = 0; i < json_object_array_length(rev); i++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(rev, i)), id))
				return false;
	return true;
}

/* Make the trusted keys directory hold exactly the valid keys of @body. */
static void keys_install(struct fa *a, json_object *body)
{
	json_object *keys = NULL;
	int64_t now = ks_now_ms(), next = 0;
	struct dirent *de;
	char path[4200];
	DIR *d;

	mkdir(a->keys_dir, 0700);
	if (!json_object_object_get_ex(body, "keys", &keys) || !json_object_is_type(keys, json_type_array))
		keys = NULL;
	/* Drop what is no longer valid first, then write the valid ones. */
	if ((d = opendir(a->keys_dir))) {
		while ((de = readdir(d))) {
			bool keep = false;
			const char *pub;

			for (size_t i = 0; keys && i < json_object_array_length(keys) && !keep; i++) {
				json_object *k = json_object_array_get_idx(keys, i);
				char want[KS_KEYID_LEN + 8];

				snprintf(want, sizeof(want), "%s.pub", ks_json_str(k, "id", ""));
				keep = !strcmp(de->d_name, want) && key_valid(body, k, now, &pub);
			}
			if (!keep && de->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", a->keys_dir, de->d_name);
				unlink(path);
			}
		}
		closedir(d);
	}
	for (size_t i = 0; keys && i < json_object_array_length(keys); i++) {
		json_object *k = json_object_array_get_idx(keys, i);
		char line[256];
		const char *pub;

		if (!key_valid(body, k, now, &pub))
			continue;
		snprintf(path, sizeof(path), "%s/%s.pub", a->keys_dir, ks_json_str(k, "id", ""));
		snprintf(line, sizeof(line), "%s\n", pub);
		ks_write_file_atomic(path, line, strlen(line), 0644);
		if (!next || ks_json_i64(k, "expires_at") < next)
			next = ks_json_i64(k, "expires_at");
	}
	a->key_expiry = next;
}

static void report_keys(struct fa *a, json_object *rec, const char *status, const char *error)
{
	json_object *o = json_object_new_object();
	char key[300];

	json_object_object_add(o, "host", json_object_new_string(a->host));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "version", json_object_new_int64(ks_json_i64(rec, "version")));
	json_object_object_add(o, "error", json_object_new_string(error ? error : ""));
	json_object_object_add(o, "at", json_object_new_int64(ks_now_ms()));
	snprintf(key, sizeof(key), "_keys.%s", a->key);
	ks_kv_put_json(a->n->status, key, o, 0);
	json_object_put(o);
}

/* A key list arrived: trust its keys when a root key signed it, then
 * judge again every record refused under the keys before. */
static void take_keys(struct fa *a, json_object *rec, bool startup)
{
	json_object *body;
	int err = judge(a, KS_SIGN_KEYLIST, KS_KEYS_KEY, rec, &body);

	if (err) {
		ks_err_ctx(err, "key list refused");
		if (!startup)
			report_keys(a, rec, "refused", ks_errmsg());
		ks_log("fleet: %s", ks_errmsg());
		return;
	}
	if (!startup)
		state_write(a, "keys.json", json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
	json_object_put(keylist);
	keylist = body;
	keys_install(a, body);
	if (startup)
		return;
	report_keys(a, rec, "accepted", NULL);
	for (int i = 0; i < a->nsh; i++)
		if (a->sh[i].raw && a->sh[i].refused)
			take_record(a, &a->sh[i]);
}

static void handle_entry(struct fa *a, kvEntry *e)
{
	const char *key = nats_fn.kvEntry_Key(e);
	json_object *rec = nats_fn.kvEntry_Operation(e) == kvOp_Put ?
			   json_tokener_parse(nats_fn.kvEntry_ValueString(e)) : NULL;
	struct fa_shield *s;

	if (!strcmp(key, KS_KEYS_KEY)) {
		if (a->cfg->root_dir)
			take_keys(a, rec, false);
		json_object_put(rec);
		return;
	}
	if (key[0] == '_' || !(s = shield_slot(a, key))) {
		json_object_put(rec);
		return;
	}
	json_object_put(s->raw);
	s->raw = rec;
	take_record(a, s);
}

static void *fa_loop(void *arg)
{
	struct fa *a = arg;
	int resync_ms = (a->cfg->resync_s > 0 ? a->cfg->resync_s : 30) * 1000;
	int report_ms = a->cfg->report_ms > 0 ? a->cfg->report_ms : 1000;

	while (!*a->stop) {
		int64_t now = ks_now_ms();
		kvEntry *e = NULL;
		natsStatus ns;

		if (a->w && (a->gen != a->n->reconnects || now - a->w_made > resync_ms)) {
			nats_fn.kvWatcher_Destroy(a->w);
			a->w = NULL;
		}
		if (!a->w) {
			kvWatchOptions wo;

			nats_fn.kvWatchOptions_Init(&wo);
			a->gen = a->n->reconnects;
			if (nats_fn.kvStore_WatchAll(&a->w, a->n->desired, &wo) != NATS_OK) {
				a->w = NULL;
				usleep(300 * 1000);
				continue;
			}
			a->w_made = now;
			register_host(a);
		}
		ns = nats_fn.kvWatcher_Next(&e, a->w, 250);
		if (ns == NATS_OK && e) {
			handle_entry(a, e);
			nats_fn.kvEntry_Destroy(e);
		} else if (ns != NATS_OK && ns != NATS_TIMEOUT) {
			nats_fn.kvWatcher_Destroy(a->w);
			a->w = NULL;
			usleep(200 * 1000);
		}
		if (now - a->last_tick >= report_ms) {
			a->last_tick = now;
			tick(a);
		}
	}
	if (a->w)
		nats_fn.kvWatcher_Destroy(a->w);
	for (int i = 0; i < a->nsh; i++) {
		json_object_put(a->sh[i].desired);
		json_object_put(a->sh[i].raw);
		json_object_put(a->sh[i].proven);
	}
	json_object_put(a->seen);
	return NULL;
}

void ks_converge_keys_dir(const struct ks_converge_cfg *c, char *out, size_t n)
{
	if (c->keys_dir)
		snprintf(out, n, "%s", c->keys_dir);
	else
		snprintf(out, n, "%s/trusted", c->state_dir ? c->state_dir : KS_FLEET_STATE_DEFAULT);
}

/* What this host accepted before (state dir): the highest version per
 * shield, and with --root-keys the key list (its keys trusted again). */
static int agent_state(struct fa *a, const struct ks_converge_cfg *cfg)
{
	char path[4096], *buf;
	size_t len;

	a->cfg = cfg;
	ks_converge_keys_dir(cfg, a->keys_dir, sizeof(a->keys_dir));
	snprintf(path, sizeof(path), "%s/seen.json", cfg->state_dir);
	if (cfg->control_plane || access(path, F_OK)) {
		a->seen = json_object_new_object();
	} else {
		if (ks_read_file(path, &buf, &len))
			return ks_err_ctx(-EIO, "the versions this host accepted");
		a->seen = json_tokener_parse(buf);
		free(buf);
		if (!a->seen || !json_object_is_type(a->seen, json_type_object)) {
			json_object_put(a->seen);
			a->seen = NULL;
			return ks_err(-EINVAL, "%s is damaged: it records the desired-state versions this "
				      "host accepted (remove it to trust any unexpired version again)", path);
		}
	}
	if (!cfg->root_dir)
		return 0;
	mkdir(a->keys_dir, 0700);
	snprintf(path, sizeof(path), "%s/keys.json", cfg->state_dir);
	if (!access(path, F_OK) && !ks_read_file(path, &buf, &len)) {
		json_object *rec = json_tokener_parse(buf);

		free(buf);
		take_keys(a, rec, true);
		json_object_put(rec);
	} else {
		keys_install(a, NULL);	/* no list yet: trust no key */
	}
	return 0;
}

int ks_converge_run(const struct ks_converge_cfg *cfg_in, volatile sig_atomic_t *stop)
{
	struct ks_converge_cfg cfg = *cfg_in;
	struct ks_nats n;
	struct ks_ship *ship = NULL;
	char hostname[256];
	struct fa *fa;
	pthread_attr_t attr;
	int ninst = cfg.control_plane && cfg.instances > 0 ? cfg.instances : 1, err;

	if (!cfg.keys_dir == !cfg.root_dir)
		return ks_err(-EINVAL, "the fleet agent needs --keys DIR (trusted public keys) or "
			      "--root-keys DIR (root keys: trust the key list they sign), not both");
	if (cfg.root_dir && cfg.control_plane)
		return ks_err(-EINVAL, "--root-keys is for real agents, not --control-plane");
	if (!cfg.host) {
		gethostname(hostname, sizeof(hostname));
		cfg.host = hostname;
	}
	if (!cfg.state_dir)
		cfg.state_dir = KS_FLEET_STATE_DEFAULT;
	if (!cfg.control_plane && mkdir(cfg.state_dir, 0700) && errno != EEXIST)
		return ks_err(-errno, "can't create %s: %s", cfg.state_dir, strerror(errno));
	fa = calloc(ninst, sizeof(*fa));
	for (int i = 0; i < ninst; i++) {
		err = agent_state(&fa[i], &cfg);
		if (err) {
			for (int k = 0; k <= i; k++)
				json_object_put(fa[k].seen);
			free(fa);
			return err;
		}
	}
	cfg.nats.retry_connect = true;
	err = ks_nats_open(&n, &cfg.nats, true, false);
	if (err) {
		free(fa);
		return err;
	}
	/* Started before NATS was reachable, or while JetStream elects its
	 * leaders: bind once it answers, however long that takes. */
	while (!*stop) {
		if (n.connected && !ks_nats_bind(&n, &cfg.nats, false))
			break;
		usleep(250 * 1000);
	}
	if (*stop) {
		ks_nats_close(&n);
		free(fa);
		return 0;
	}
	if (cfg.store) {
		err = ks_ship_start(&ship, &n, cfg.host, cfg.store, stop);
		if (err) {
			ks_nats_close(&n);
			free(fa);
			return err;
		}
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int i = 0; i < ninst; i++) {
		fa[i].n = &n;
		fa[i].stop = stop;
		if (ninst > 1)
			snprintf(fa[i].host, sizeof(fa[i].host), "%s-%d", cfg.host, i);
		else
			snprintf(fa[i].host, sizeof(fa[i].host), "%s", cfg.host);
		ks_nats_key_safe(fa[i].host, fa[i].key, sizeof(fa[i].key));
		if (pthread_create(&fa[i].th, &attr, fa_loop, &fa[i])) {
			ninst = i;
			break;
		}
	}
	pthread_attr_destroy(&attr);
	for (int i = 0; i < ninst; i++)
		pthread_join(fa[i].th, NULL);
	ks_ship_stop(ship);
	free(fa);
	ks_nats_close(&n);
	return 0;
}

/* Background form for `kshield agent --fleet`. */
static struct {
	struct ks_converge_cfg cfg;
	volatile sig_atomic_t stop;
	pthread_t th;
	bool running;
} bg;

static void *bg_main(void *arg)
{
	(void)arg;
	if (ks_converge_run(&bg.cfg, &bg.stop))
		ks_log("fleet: %s", ks_errmsg());
	return NULL;
}

int ks_converge_start(const struct ks_converge_cfg *cfg)
{
	if (bg.running)
		return ks_err(-EBUSY, "the fleet agent is already running");
	bg.cfg = *cfg;
	bg.stop = 0;
	if (pthread_create(&bg.th, NULL, bg_main, NULL))
		return ks_err(-EAGAIN, "can't start the fleet agent thread");
	bg.running = true;
	return 0;
}

void ks_converge_stop(void)
{
	if (!bg.running)
		return;
	bg.stop = 1;
	pthread_join(bg.th, NULL);
	bg.running = false;
}
#endif /* KSHIELD_STATIC */
