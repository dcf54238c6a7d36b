// SPDX-License-Identifier: MIT
/* fleet_btf.c - a kernel's BTF from a shield's signed bundle (fleet_btf.h):
 * look up this kernel's build ID in a verified desired record, fetch the
 * bytes it names, check them against it, keep them in btf_dir.
 */
#ifndef KSHIELD_STATIC	/* no static libnats: the guest binary has no fleet */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>
#include "btf_find.h"
#include "debugfile.h"
#include "err.h"
#include "fleet_btf.h"
#include "fleet_dl.h"
#include "fleet_kv.h"
#include "hex.h"
#include "kernel_sites.h"
#include "sign.h"

int ks_fleet_btf_take(kvStore *objects, json_object *body, const char *shield,
		      const char *build_id, bool keep, enum ks_fleet_btf_got *got, bool *transient)
{
	json_object *all, *e;
	const char *sha;
	char path[PATH_MAX + 200], hh[65], *buf = NULL;
	int64_t size;
	size_t len;
	int err;

	*got = KS_FLEET_BTF_NONE;
	*transient = false;
	if (!json_object_object_get_ex(body, "btf", &all) || !json_object_is_type(all, json_type_object) ||
	    !json_object_object_get_ex(all, build_id, &e))
		return 0;
	/* btf_dir first: a file there (put by hand, from debuginfod, from an
	 * earlier bundle) is what the loaders use; the bundle's is not fetched. */
	snprintf(path, sizeof(path), "%s/%s.btf", ks_btf_dir(), build_id);
	if (keep && !access(path, F_OK)) {
		*got = KS_FLEET_BTF_PRESENT;
		return 0;
	}
	sha = ks_json_str(e, "sha256", "");
	size = ks_json_i64(e, "size");
	err = ks_fleet_object_get(objects, sha, &buf, &len, hh, transient);
	if (err && err != -EBADMSG)
		return ks_err_ctx(err, "BTF for build ID %s in the signed bundle of %s", build_id,
				  shield);
	if (err || (int64_t)len != size) {
		free(buf);
		return ks_err(-EBADMSG, "BTF for build ID %s in the signed bundle of %s does not match "
			      "its signed sha256 %.12s (%zu bytes, sha256 %.12s): refused, nothing "
			      "loaded with it", build_id, shield, sha, len, hh);
	}
	if (keep) {
		err = ks_btf_keep_bundled(build_id, buf, len, shield, sha);
		*got = KS_FLEET_BTF_KEPT;
	} else {
		err = ks_btf_check_buf(buf, len);
		*got = KS_FLEET_BTF_VERIFIED;
	}
	free(buf);
	if (err) {
		*got = KS_FLEET_BTF_NONE;
		return ks_err_ctx(err, "BTF for build ID %s in the signed bundle of %s, refused, "
				  "nothing loaded with it", build_id, shield);
	}
	return 0;
}

/* Shield @name's record @rec, if it verifies against @keys_dir and names
 * @name: *@body, its signed body. Else -errno with the reason. */
static int verified_body(json_object *rec, const char *name, const char *keys_dir,
			 json_object **body)
{
	char id[KS_KEYID_LEN];
	int err = ks_fleet_open_record(KS_SIGN_DESIRED, rec, keys_dir, body, id);

	if (err)
		return ks_err_ctx(err, "the desired record of %s", name);
	if (strcmp(ks_json_str(*body, "name", ""), name)) {
		err = ks_err(-EINVAL, "a record signed for shield '%s' stored under '%s'",
			     ks_json_str(*body, "name", ""), name);
		json_object_put(*body);
		*body = NULL;
	}
	return err;
}

static bool lists(json_object *body, const char *build_id)
{
	json_object *all;

	return json_object_object_get_ex(body, "btf", &all) &&
	       json_object_is_type(all, json_type_object) &&
	       json_object_object_get_ex(all, build_id, NULL);
}

int ks_fleet_btf_fetch(struct ks_nats *n, const char *keys_dir, const char *only,
		       char *from, size_t from_len, enum ks_fleet_btf_got *got)
{
	char id[KS_BUILD_ID_HEX];
	json_object *recs, *body = NULL;
	bool transient;
	int err;

	*got = KS_FLEET_BTF_NONE;
	from[0] = '\0';
	if ((err = ks_kernel_build_id(id, sizeof(id))))
		return ks_err_ctx(err, "this kernel's build ID");
	if (only) {
		json_object *rec;

		if ((err = ks_kv_get_json(n->desired, only, &rec, NULL)))
			return ks_err_ctx(err, "the desired record of %s", only);
		err = verified_body(rec, only, keys_dir, &body);
		json_object_put(rec);
		if (err)
			return err;
		snprintf(from, from_len, "%s", only);
	} else {
		if ((err = ks_kv_all_json(n->desired, ">", &recs)))
			return err;
		/* Records that do not verify are passed over: another may. */
		json_object_object_foreach(recs, k, rec) {
			json_object *b;

			if (k[0] == '_' || body || verified_body(rec, k, keys_dir, &b))
				continue;
			if (lists(b, id)) {
				body = b;
				snprintf(from, from_len, "%s", k);
			} else {
				json_object_put(b);
			}
		}
		json_object_put(recs);
	}
	if (!body || !lists(body, id)) {
		json_object_put(body);
		return ks_err(-ENOENT, "no signed record %s%s carries BTF for build ID %s: deploy one "
			      "with fleet deploy --btf %s.btf", only ? "of " : "in the fleet",
			      only ? only : "", id, id);
	}
	err = ks_fleet_btf_take(n->objects, body, from, id, true, got, &transient);
	json_object_put(body);
	return err;
}
#endif /* KSHIELD_STATIC */
