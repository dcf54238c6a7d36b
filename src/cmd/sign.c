// SPDX-License-Identifier: MIT
/* sign.c - the `kshield shield keygen|sign|verify` commands over the
 * signing library (src/lib/trust/sign.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "sign.h"

#define KEYGEN_USAGE "usage: kshield shield keygen PREFIX   (writes PREFIX.key, PREFIX.pub)"
#define SIGN_USAGE "usage: kshield shield sign FILE --key KEYFILE [--out SIGFILE]"
#define VERIFY_USAGE "usage: kshield shield verify FILE --keys DIR [--sig SIGFILE]"

static int keygen_help(void)
{
	fprintf(stderr, "%s\n", KEYGEN_USAGE);
	return 0;
}

static int sign_help(void)
{
	fprintf(stderr, "%s\n", SIGN_USAGE);
	return 0;
}

static int verify_help(void)
{
	fprintf(stderr, "%s\n", VERIFY_USAGE);
	return 0;
}

int do_shield_keygen(int argc, char **argv)
{
	const struct ks_opt opts[] = { OPT_END };
	char id[KS_KEYID_LEN];
	int err, npos;

	if (!ks_opts_parse("shield keygen", opts, argc, argv, 1, &npos, keygen_help, &err))
		return err;
	if (npos != 1)
		return ks_usage(KEYGEN_USAGE);
	err = ks_sign_keygen(argv[0], id);
	if (err)
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();
		char p[4096];

		json_object_object_add(o, "keyid", json_object_new_string(id));
		snprintf(p, sizeof(p), "%s.key", argv[0]);
		json_object_object_add(o, "secret", json_object_new_string(p));
		snprintf(p, sizeof(p), "%s.pub", argv[0]);
		json_object_object_add(o, "public", json_object_new_string(p));
		ks_json_print(o);
	} else {
		printf("key %s: %s.key (secret, keep it off agents), %s.pub (give to agents)\n",
		       id, argv[0], argv[0]);
	}
	return 0;
}

/* "PATH signed by key ID: SIGFILE", or JSON with @what naming PATH. */
void ks_sign_print_signed(const char *what, const char *path, const char *out, const char *id)
{
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, what, json_object_new_string(path));
		json_object_object_add(o, "signature", json_object_new_string(out));
		json_object_object_add(o, "keyid", json_object_new_string(id));
		ks_json_print(o);
	} else {
		printf("%s signed by key %s: %s\n", path, id, out);
	}
}
int do_shield_sign(int argc, char **argv)
{
	const char *path = NULL, *key = NULL, *out = NULL;
	const struct ks_opt opts[] = { OPT_VAL("--key", &key), OPT_VAL("--out", &out), OPT_END };
	char sigpath[4096], id[KS_KEYID_LEN];
	int err, npos;

	if (!ks_opts_parse("shield sign", opts, argc, argv, 1, &npos, sign_help, &err))
		return err;
	path = npos ? argv[0] : NULL;
	if (!path || !key)
		return ks_usage(SIGN_USAGE);
	snprintf(sigpath, sizeof(sigpath), "%s.sig", path);
	if (!out)
		out = sigpath;
	err = ks_sign_file(KS_SIGN_SHIELD, path, key, out, id);
	if (err)
		return ks_report(err);
	ks_sign_print_signed("object", path, out, id);
	return 0;
}

int do_shield_verify(int argc, char **argv)
{
	const char *path = NULL, *keys = NULL, *sigarg = NULL;
	const struct ks_opt opts[] = { OPT_VAL("--keys", &keys), OPT_VAL("--sig", &sigarg), OPT_END };
	char id[KS_KEYID_LEN];
	int err, npos;

	if (!ks_opts_parse("shield verify", opts, argc, argv, 1, &npos, verify_help, &err))
		return err;
	path = npos ? argv[0] : NULL;
	if (!path || !keys)
		return ks_usage(VERIFY_USAGE);
	err = ks_sign_verify_file(KS_SIGN_SHIELD, path, sigarg, keys, id);
	if (json_output && (!err || id[0] || err == -ENODATA || err == -EINVAL ||
			    err == -EBADMSG || err == -ENOKEY)) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "object", json_object_new_string(path));
		json_object_object_add(o, "status", json_object_new_string(ks_sign_status(err)));
		if (id[0])
			json_object_object_add(o, "keyid", json_object_new_string(id));
		if (err)
			json_object_object_add(o, "error", json_object_new_string(ks_errmsg()));
		ks_json_print(o);
		return err ? 1 : 0;
	}
	if (err)
		return ks_report(err);
	printf("%s: verified, signed by key %s\n", path, id);
	return 0;
}
