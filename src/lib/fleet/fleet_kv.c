// SPDX-License-Identifier: MIT
/* fleet_kv.c - JSON values in JetStream KV buckets: get, put (or
 * compare-and-set on the revision), read a whole bucket through a watcher,
 * and the host targeting rule of a desired record. */
#ifndef KSHIELD_STATIC	/* no static libnats/libpq: the guest binary has no fleet */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>
#include "err.h"
#include "hex.h"
#include "fleet_kv.h"
#include "fleet_dl.h"

int ks_kv_get_json(kvStore *kv, const char *key, json_object **o, uint64_t *rev)
{
	kvEntry *e = NULL;
	natsStatus s = nats_fn.kvStore_Get(&e, kv, key);

	*o = NULL;
	if (s == NATS_NOT_FOUND)
		return ks_err(-ENOENT, "%s: not found", key);
	if (s != NATS_OK)
		return ks_nats_err(s, key);
	if (nats_fn.kvEntry_Operation(e) != kvOp_Put) {
		nats_fn.kvEntry_Destroy(e);
		return ks_err(-ENOENT, "%s: deleted", key);
	}
	*o = json_tokener_parse(nats_fn.kvEntry_ValueString(e));
	if (rev)
		*rev = nats_fn.kvEntry_Revision(e);
	nats_fn.kvEntry_Destroy(e);
	if (!*o)
		return ks_err(-EINVAL, "%s: value is not JSON", key);
	return 0;
}

int ks_fleet_object_get(kvStore *objects, const char *sha, char **buf, size_t *len,
			char got_hex[65], bool *transient)
{
	unsigned char h[32];
	kvEntry *e = NULL;
	natsStatus ns;

	*buf = NULL;
	*len = 0;
	*transient = false;
	got_hex[0] = 0;
	for (int i = 0; (ns = nats_fn.kvStore_Get(&e, objects, *sha ? sha : "-")) == NATS_NOT_FOUND &&
			i < 20; i++)
		usleep(100 * 1000);
	if (ns != NATS_OK) {
		*transient = ns != NATS_NOT_FOUND;
		return ks_nats_err(ns, "fetching object");
	}
	*len = nats_fn.kvEntry_ValueLen(e);
	if (!(*buf = malloc(*len + 1))) {
		nats_fn.kvEntry_Destroy(e);
		return ks_err(-ENOMEM, "out of memory");
	}
	memcpy(*buf, nats_fn.kvEntry_Value(e), *len);
	(*buf)[*len] = 0;
	nats_fn.kvEntry_Destroy(e);
	crypto_hash_sha256(h, (unsigned char *)*buf, *len);
	ks_hex(h, sizeof(h), got_hex, 65);
	if (strcmp(got_hex, sha)) {
		free(*buf);
		*buf = NULL;
		return -EBADMSG;
	}
	return 0;
}

int ks_kv_put_json(kvStore *kv, const char *key, json_object *o, uint64_t last)
{
	const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							JSON_C_TO_STRING_NOSLASHESCAPE);
	natsStatus s;

	/* A bucket just created (or a cluster just electing) has no stream
	 * leader for a moment: "no responders". Retry that for a few seconds. */
	for (int tries = 0; tries < 40; tries++) {
		if (last)
			s = nats_fn.kvStore_UpdateString(NULL, kv, key, txt, last);
		else
			s = nats_fn.kvStore_PutString(NULL, kv, key, txt);
		if (s != NATS_NO_RESPONDERS)
			break;
		nats_fn.nats_Sleep(250);
	}
	if (s == NATS_OK)
		return 0;
	/* A failed compare-and-set comes back as a JetStream "wrong last
	 * sequence" error. */
	if (last && s == NATS_ERR)
		return ks_err(-EAGAIN, "%s changed meanwhile", key);
	return ks_nats_err(s, key);
}

int ks_kv_all_json(kvStore *kv, const char *filter, json_object **out)
{
	kvWatchOptions wo;
	kvWatcher *w = NULL;
	kvEntry *e;
	natsStatus s;

	nats_fn.kvWatchOptions_Init(&wo);
	wo.IgnoreDeletes = true;
	s = nats_fn.kvStore_Watch(&w, kv, filter, &wo);
	/* A stream leader being elected (a server just died) answers nothing
	 * for a few seconds. */
	for (int tries = 0; tries < 20 && (s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS); tries++) {
		nats_fn.nats_Sleep(250);
		s = nats_fn.kvStore_Watch(&w, kv, filter, &wo);
	}
	if (s != NATS_OK)
		return ks_nats_err(s, "reading bucket");
	*out = json_object_new_object();
	/* The initial values end with a NULL entry. */
	while ((s = nats_fn.kvWatcher_Next(&e, w, 5000)) == NATS_OK && e) {
		json_object *v = json_tokener_parse(nats_fn.kvEntry_ValueString(e));

		if (v)
			json_object_object_add(*out, nats_fn.kvEntry_Key(e), v);
		nats_fn.kvEntry_Destroy(e);
	}
	nats_fn.kvWatcher_Destroy(w);
	if (s != NATS_OK) {
		json_object_put(*out);
		*out = NULL;
		return ks_nats_err(s, "reading bucket");
	}
	return 0;
}

const char *ks_json_str(json_object *o, const char *key, const char *dflt)
{
	json_object *v;

	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return dflt;
}

int64_t ks_json_i64(json_object *o, const char *key)
{
	json_object *v;

	if (o && json_object_object_get_ex(o, key, &v))
		return json_object_get_int64(v);
	return 0;
}

int ks_fleet_sign_record(enum ks_sign_kind kind, json_object *body, const char *keyfile,
			 json_object **rec, char keyid[KS_KEYID_LEN])
{
	const char *txt = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	char sig[KS_SIG_TEXT_MAX];
	int err = ks_sign_buf_kind(kind, txt, strlen(txt), keyfile, sig, keyid);

	if (err)
		return err;
	*rec = json_object_new_object();
	json_object_object_foreach(body, k, v)
		json_object_object_add(*rec, k, json_object_get(v));
	json_object_object_add(*rec, "signed", json_object_new_string(txt));
	json_object_object_add(*rec, "record_sig", json_object_new_string(sig));
	return 0;
}

int ks_fleet_open_record(enum ks_sign_kind kind, json_object *rec, const char *keys_dir,
			 json_object **body, char keyid[KS_KEYID_LEN])
{
	const char *txt = ks_json_str(rec, "signed", NULL);
	json_object *b, *v;
	int err;

	*body = NULL;
	keyid[0] = '\0';
	if (!txt)
		return ks_err(-ENODATA, "unsigned: the record has no signed body");
	err = ks_sign_verify_kind(kind, txt, strlen(txt), ks_json_str(rec, "record_sig", ""),
				  keys_dir, keyid);
	if (err)
		return err;
	b = json_tokener_parse(txt);
	if (!b || !json_object_is_type(b, json_type_object) ||
	    !json_object_object_get_ex(b, "version", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) <= 0 ||
	    !json_object_object_get_ex(b, "expires_at", &v) || !json_object_is_type(v, json_type_int)) {
		json_object_put(b);
		return ks_err(-EINVAL, "malformed record: the signed body lacks version or expires_at");
	}
	*body = b;
	return 0;
}

bool ks_fleet_targets(json_object *d, const char *host, const char *groups)
{
	const char *glob = ks_json_str(d, "hosts", "*");
	const char *group = ks_json_str(d, "group", "");

	if (fnmatch(glob, host, 0))
		return false;
	if (*group) {
		char *copy = strdup(groups ? groups : ""), *save, *g;
		bool in = false;

		for (g = strtok_r(copy, ",", &save); g && !in; g = strtok_r(NULL, ",", &save))
			in = !strcmp(g, group);
		free(copy);
		return in;
	}
	return true;
}

bool ks_fleet_promoted(json_object *d, const char *host)
{
	json_object *arr;

	if (!json_object_object_get_ex(d, "promoted", &arr) || !json_object_is_type(arr, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		const char *g = json_object_get_string(json_object_array_get_idx(arr, i));

		if (g && !fnmatch(g, host, 0))
			return true;
	}
	return false;
}
#endif /* KSHIELD_STATIC */
