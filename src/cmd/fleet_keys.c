// SPDX-License-Identifier: MIT
/* fleet_keys.c - `kshield fleet keys set|show`: the fleet's signing keys,
 * as a list signed by a root key (agents started with --root-keys trust
 * exactly the listed keys that are neither expired nor revoked). The list
 * replaces the one before; it lives in kshield_desired under _keys
 * (fleet_kv.h).
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "fleet_cli.h"
#include "fleet_kv.h"
#include "file.h"
#include "rollout.h"
#include "sign.h"

#define DEFAULT_KEY_EXPIRES_MS ((int64_t)365 * 86400000)	/* a listed signing key */
#define KEYS_USAGE "usage: kshield fleet keys set --root ROOTKEY [--add PUBFILE[:DURATION]]... " \
	"[--revoke KEYID]... [--expires DURATION] NATS\n       kshield fleet keys show NATS"

#define KEYS_MAX 64	/* --add, --revoke */

static int keys_usage(void)
{
	return ks_usage(KEYS_USAGE);
}

static int keys_set(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *root = NULL, *expires_s = NULL, *add[KEYS_MAX], *revoke[KEYS_MAX];
	int64_t expires = KS_DESIRED_EXPIRES_MS, now = ks_now_ms(), version = 0;
	int nadd = 0, nrevoke = 0, npos;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no), OPT_VAL("--root", &root), OPT_VAL("--expires", &expires_s),
		OPT_LIST("--add", add, &nadd, KEYS_MAX), OPT_LIST("--revoke", revoke, &nrevoke, KEYS_MAX),
		OPT_END
	};
	json_object *body, *keys, *revoked, *rec = NULL, *cur;
	char id[KS_KEYID_LEN];
	struct ks_nats n;
	int err = 0;

	if (!ks_opts_parse("fleet keys set", opts, argc, argv, 0, &npos, keys_usage, &err))
		return err;
	if (expires_s && (expires = ks_fleet_duration_ms(expires_s)) <= 0)
		return ks_usage("bad --expires duration '%s' (e.g. 30d)", expires_s);
	body = json_object_new_object();
	keys = json_object_new_array();
	revoked = json_object_new_array();
	json_object_object_add(body, "kind", json_object_new_string("kshield-keys"));
	json_object_object_add(body, "keys", keys);
	json_object_object_add(body, "revoked", revoked);
	for (int i = 0; i < nrevoke; i++)
		json_object_array_add(revoked, json_object_new_string(revoke[i]));
	for (int i = 0; i < nadd && !err; i++) {
		{
			char *file = strdup(add[i]), *colon = strrchr(file, ':'), *pub = NULL;
			int64_t kexp = DEFAULT_KEY_EXPIRES_MS;
			size_t len;

			if (colon) {
				*colon = '\0';
				kexp = ks_fleet_duration_ms(colon + 1);
			}
			if (kexp <= 0) {
				err = ks_usage("bad key lifetime in --add %s (e.g. signer.pub:90d)", add[i]);
			} else if ((err = ks_read_file(file, &pub, &len)) || (err = ks_sign_pub_id(pub, id))) {
				err = ks_report(ks_err_ctx(err, "--add %s", file));
			} else {
				json_object *k = json_object_new_object();

				pub[strcspn(pub, "\n")] = '\0';
				json_object_object_add(k, "id", json_object_new_string(id));
				json_object_object_add(k, "pub", json_object_new_string(pub));
				json_object_object_add(k, "expires_at", json_object_new_int64(now + kexp));
				json_object_array_add(keys, k);
			}
			free(pub);
			free(file);
		}
	}
	if (!err && !root)
		err = ks_usage("fleet keys set needs --root ROOTKEY (the root key that agents' --root-keys trust)");
	if (err) {
		json_object_put(body);
		return err;
	}
	err = ks_fleet_open(&n, &no);
	if (err) {
		json_object_put(body);
		return ks_report(err);
	}
	if (!ks_kv_get_json(n.desired, KS_KEYS_KEY, &cur, NULL)) {
		version = ks_json_i64(cur, "version");
		json_object_put(cur);
	}
	json_object_object_add(body, "version", json_object_new_int64(version + 1 > now ? version + 1 : now));
	json_object_object_add(body, "expires_at", json_object_new_int64(now + expires));
	err = ks_fleet_sign_record(KS_SIGN_KEYLIST, body, root, &rec, id);
	if (!err)
		err = ks_nats_denied(&n, ks_kv_put_json(n.desired, KS_KEYS_KEY, rec, 0));
	ks_nats_close(&n);
	if (!err) {
		if (json_output)
			ks_json_print(json_object_get(body));
		else
			printf("key list version %lld signed by root key %s: %zu keys, %zu revoked\n",
			       (long long)ks_json_i64(body, "version"), id, json_object_array_length(keys),
			       json_object_array_length(revoked));
	}
	json_object_put(rec);
	json_object_put(body);
	return err ? ks_report(err) : 0;
}

static int keys_show(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const struct ks_opt opts[] = { OPTS_NATS(&no), OPT_END };
	struct ks_nats n;
	json_object *rec, *b, *keys;
	int err;

	if (!ks_opts_parse("fleet keys show", opts, argc, argv, 0, NULL, keys_usage, &err))
		return err;
	err = ks_fleet_open(&n, &no);
	if (err)
		return ks_report(err);
	err = ks_kv_get_json(n.desired, KS_KEYS_KEY, &rec, NULL);
	ks_nats_close(&n);
	if (err)
		return ks_report(err == -ENOENT ? ks_err(err, "no key list: agents use their --keys "
							 "directories (kshield fleet keys set ...)") : err);
	b = ks_desired_body(rec);
	json_object_put(rec);
	if (json_output) {
		ks_json_print(b);
		return 0;
	}
	printf("key list version %lld, expires at %lld\n", (long long)ks_json_i64(b, "version"),
	       (long long)ks_json_i64(b, "expires_at"));
	if (json_object_object_get_ex(b, "keys", &keys))
		for (size_t i = 0; i < json_object_array_length(keys); i++) {
			json_object *k = json_object_array_get_idx(keys, i);

			printf("  key %s expires at %lld\n", ks_json_str(k, "id", ""),
			       (long long)ks_json_i64(k, "expires_at"));
		}
	if (json_object_object_get_ex(b, "revoked", &keys))
		for (size_t i = 0; i < json_object_array_length(keys); i++)
			printf("  revoked %s\n", json_object_get_string(json_object_array_get_idx(keys, i)));
	json_object_put(b);
	return 0;
}

static int keys_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return keys_usage();
}

int do_fleet_keys(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "set", keys_set },
		{ "show", keys_show },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, keys_help);
}

#endif /* KSHIELD_STATIC */
