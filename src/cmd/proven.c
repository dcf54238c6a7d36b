// SPDX-License-Identifier: MIT
/* proven.c - `kshield shield proven`: per-shield proven summaries from the
 * matrix's results.json, signed to travel with the shields
 * (src/lib/trust/proven.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "clock.h"
#include "file.h"
#include "proven.h"

static int proven_help(void)
{
	fprintf(stderr,
		"Usage: kshield shield proven RESULTS.json --out DIR [--key KEYFILE] [--shield NAME]\n"
		"\n"
		"Writes DIR/NAME.proven.json for each shield in a matrix results.json: the\n"
		"kernels (release and GNU build ID) where each variant of that very object\n"
		"(sha256) passed, and where one failed. \"pass\" and \"partial\" rows prove\n"
		"(a partial entry names the paths it does not cover); unprotected and n/a\n"
		"rows do not; a \"fail\" row refuses that variant there.\n"
		"--key signs each summary (NAME.proven.json.sig). Put the summaries beside\n"
		"the objects (NAME.bpf.o): fleet deploy ships one with its object, and gated\n"
		"agents enforce only on proven kernels (audit elsewhere, until promoted).\n");
	return 0;
}

static int count_of(json_object *s, const char *list)
{
	return (int)json_object_array_length(json_object_object_get(s, list));
}

int do_shield_proven(int argc, char **argv)
{
	const char *out = NULL, *key = NULL, *only = NULL;
	const struct ks_opt opts[] = {
		OPT_VAL("--out", &out), OPT_VAL("--key", &key), OPT_VAL("--shield", &only), OPT_END
	};
	json_object *results, *all, *arr = json_object_new_array();
	char *buf, path[4096], id[KS_KEYID_LEN];
	size_t len;
	int npos, rc, err, n = 0;

	if (!ks_opts_parse("shield proven", opts, argc, argv, 1, &npos, proven_help, &rc)) {
		json_object_put(arr);
		return rc;
	}
	if (npos != 1 || !out) {
		json_object_put(arr);
		return ks_usage("usage: kshield shield proven RESULTS.json --out DIR [--key KEYFILE]");
	}
	err = ks_read_file(argv[0], &buf, &len);
	if (err) {
		json_object_put(arr);
		return ks_report(err);
	}
	results = json_tokener_parse(buf);
	free(buf);
	err = ks_proven_from_results(results, ks_now_ms(), &all);
	json_object_put(results);
	if (err) {
		json_object_put(arr);
		return ks_report(ks_err_ctx(err, "%s", argv[0]));
	}
	json_object_object_foreach(all, name, s) {
		json_object *o;

		if (only && strcmp(only, name))
			continue;
		err = ks_proven_write(s, out, key, path, sizeof(path), id);
		if (err)
			break;
		n++;
		o = json_object_new_object();
		json_object_object_add(o, "shield", json_object_new_string(name));
		json_object_object_add(o, "summary", json_object_new_string(path));
		json_object_object_add(o, "proven", json_object_new_int(count_of(s, "proven")));
		json_object_object_add(o, "refused", json_object_new_int(count_of(s, "refused")));
		json_object_object_add(o, "keyid", id[0] ? json_object_new_string(id) : NULL);
		json_object_array_add(arr, o);
		if (!json_output)
			printf("%-20s proven on %d kernel build%s, refused on %d: %s%s%s\n", name,
			       count_of(s, "proven"), count_of(s, "proven") == 1 ? "" : "s",
			       count_of(s, "refused"), path, id[0] ? ", signed by key " : " (unsigned)",
			       id);
	}
	json_object_put(all);
	if (!err && only && !n)
		err = ks_err(-ENOENT, "no rows of shield %s in %s", only, argv[0]);
	if (err) {
		json_object_put(arr);
		return ks_report(err);
	}
	if (json_output)
		ks_json_print(arr);
	else
		json_object_put(arr);
	return 0;
}
