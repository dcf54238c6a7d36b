// SPDX-License-Identifier: MIT
/* fleet_apply.c - one shield of a fleet host made to match its desired
 * record (fleet_converge.h): what is loaded now, the object fetched and
 * verified (sha256, signature) with the sites manifest and BTF it carries
 * for this kernel, the audit-first promotion and the proven gate, the
 * load, mode change or unload, and the status and audit hits reported.
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "file.h"
#include "hex.h"
#include "log.h"
#include "btf_find.h"
#include "fleet_btf.h"
#include "fleet_kv.h"
#include "kernel_sites.h"
#include "loader.h"
#include "proven.h"
#include "sign.h"
#include "fleet_converge_int.h"

/* What is loaded now: from the kernel pins, or the control plane's table. */
bool ks_fa_current(struct fa *a, struct fa_shield *s, char sha[65], enum ks_mode *mode,
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

void ks_fa_report(struct fa *a, struct fa_shield *s, const char *status, const char *error,
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

void ks_fa_converge(struct fa *a, struct fa_shield *s)
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
	bool loaded = ks_fa_current(a, s, sha, &mode, &st), transient;
	char *obj = NULL;
	size_t len = 0;
	int err;

	s->retry = false;
	s->gate[0] = s->gate_why[0] = '\0';
	s->promoted_here = false;
	if (target && gated && (err = gate_summary(a, s, d, &transient))) {
		/* Nothing changes here on a summary that does not verify. */
		ks_fa_report(a, s, transient ? "failed" : "refused", ks_errmsg(), want_sha, NULL, NULL, want);
		s->retry = transient;
		return;
	}
	if (!target) {
		if (loaded && managed(a, s->name, NULL)) {
			if (a->cfg->control_plane)
				s->cp_sha[0] = '\0';
			else if ((err = ks_shield_unload(s->name))) {
				ks_fa_report(a, s, "failed", ks_errmsg(), sha, &st, st.cfg.variant, mode);
				s->retry = true;
				return;
			}
			managed(a, s->name, "\1");	/* drop every fetched object */
		}
		if (s->reported || (d && ks_fleet_targets(d, a->host, a->cfg->groups)))
			ks_fa_report(a, s, "unloaded", NULL, "", NULL, NULL, want);
		return;
	}
	if (loaded && !strcmp(sha, want_sha)) {
		if (gated && !gate_allows(a, s, d, want_sha, st.cfg.variant))
			want = KS_MODE_AUDIT;
		if (mode != want) {
			err = a->cfg->control_plane ? 0 : ks_shield_set_mode(s->name, want);
			if (err) {
				ks_fa_report(a, s, "failed", ks_errmsg(), sha, &st, st.cfg.variant, mode);
				s->retry = true;
				return;
			}
			s->cp_mode = want;
			ks_fa_current(a, s, sha, &mode, &st);
		}
		ks_fa_report(a, s, want == KS_MODE_AUDIT ? "auditing" : "enforcing", NULL, sha, &st,
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
		ks_fa_report(a, s, transient ? "failed" : "refused", ks_errmsg(), want_sha, NULL, NULL, want);
		s->retry = transient;
		return;
	}
	if (a->cfg->control_plane) {
		if (gated && !gate_allows(a, s, d, want_sha, NULL))
			want = KS_MODE_AUDIT;
		snprintf(s->cp_sha, sizeof(s->cp_sha), "%s", want_sha);
		s->cp_mode = want;
		free(obj);
		ks_fa_report(a, s, want == KS_MODE_AUDIT ? "auditing" : "enforcing", NULL, want_sha,
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
		ks_fa_report(a, s, "failed", ks_errmsg(), want_sha, NULL, NULL, want);
		return;
	}
	{
		char keep[64];

		snprintf(keep, sizeof(keep), "-%.12s.", want_sha);
		managed(a, s->name, keep);	/* drop older fetched objects */
	}
	ks_fa_current(a, s, sha, &mode, &st);
	ks_fa_report(a, s, want == KS_MODE_AUDIT ? "auditing" : "enforcing", NULL, sha, &st,
		     st.cfg.variant, want);
}

/* Audit mode: would-be refusals seen here go to kshield_audit (the only
 * bucket besides status an agent writes); any host's entry for this
 * version holds every host's automatic promotion back. */
void ks_fa_audit_report(struct fa *a, struct fa_shield *s, const struct ks_shield_state *st)
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
#endif /* KSHIELD_STATIC */
