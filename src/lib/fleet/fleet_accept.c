// SPDX-License-Identifier: MIT
/* fleet_accept.c - what a fleet host accepts (fleet_converge.h): a desired
 * record or key list only with a valid signature, a version not below the
 * highest accepted here and, when new, not expired; the versions
 * remembered in <state>/seen.json, the key list's valid keys installed as
 * the trusted keys directory, and both read back at start.
 */
#ifndef KSHIELD_STATIC
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "file.h"
#include "log.h"
#include "fleet_converge.h"
#include "fleet_kv.h"
#include "sign.h"
#include "fleet_converge_int.h"

json_object *ks_fa_keylist;	/* the accepted key list's body (root mode has one agent) */

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

void ks_fa_take_record(struct fa *a, struct fa_shield *s)
{
	json_object *body;
	int err = judge(a, KS_SIGN_DESIRED, s->name, s->raw, &body);

	if (err) {
		ks_err_ctx(err, "desired record refused");
		s->refused = true;
		s->answer_at = ks_json_i64(s->raw, "deployed_at");
		ks_fa_report(a, s, "refused", ks_errmsg(), ks_json_str(s->raw, "sha256", ""), NULL, NULL,
			     !strcmp(ks_json_str(s->raw, "mode", ""), "audit") ? KS_MODE_AUDIT : KS_MODE_ENFORCE);
		return;
	}
	s->refused = false;
	if (s->desired)
		json_object_put(s->desired);
	s->desired = body;
	ks_fa_converge(a, s);
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
void ks_fa_keys_install(struct fa *a, json_object *body)
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
void ks_fa_take_keys(struct fa *a, json_object *rec, bool startup)
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
	json_object_put(ks_fa_keylist);
	ks_fa_keylist = body;
	ks_fa_keys_install(a, body);
	if (startup)
		return;
	report_keys(a, rec, "accepted", NULL);
	for (int i = 0; i < a->nsh; i++)
		if (a->sh[i].raw && a->sh[i].refused)
			ks_fa_take_record(a, &a->sh[i]);
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
int ks_fa_agent_state(struct fa *a, const struct ks_converge_cfg *cfg)
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
		ks_fa_take_keys(a, rec, true);
		json_object_put(rec);
	} else {
		ks_fa_keys_install(a, NULL);	/* no list yet: trust no key */
	}
	return 0;
}
#endif /* KSHIELD_STATIC */
