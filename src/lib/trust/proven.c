// SPDX-License-Identifier: MIT
/* proven.c - proven summaries from the matrix's results.json, and the
 * gate an agent applies with one (proven.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "err.h"
#include "file.h"
#include "buildid.h"
#include "proven.h"

static const char *str(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool is_hex(const char *s, size_t minlen)
{
	size_t n = s ? strspn(s, "0123456789abcdef") : 0;

	return s && n >= minlen && !s[n];
}

static void add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

/* The summary of @shield in @out, made on first use. */
static json_object *summary_of(json_object *out, const char *shield, int64_t now_ms)
{
	json_object *s;

	if (json_object_object_get_ex(out, shield, &s))
		return s;
	s = json_object_new_object();
	add_str(s, "kind", KS_PROVEN_KIND);
	json_object_object_add(s, "version", json_object_new_int(1));
	add_str(s, "shield", shield);
	json_object_object_add(s, "generated_at", json_object_new_int64(now_ms));
	json_object_object_add(s, "objects", json_object_new_array());
	json_object_object_add(s, "proven", json_object_new_array());
	json_object_object_add(s, "refused", json_object_new_array());
	json_object_object_add(s, "rows", json_object_new_object());
	json_object_object_add(out, shield, s);
	return s;
}

static void count(json_object *s, const char *key)
{
	json_object *rows = json_object_object_get(s, "rows"), *n;

	if (json_object_object_get_ex(rows, key, &n))
		json_object_set_int(n, json_object_get_int(n) + 1);
	else
		json_object_object_add(rows, key, json_object_new_int(1));
}

/* Add @sha to the summary's "objects" once. */
static void add_object(json_object *s, const char *sha)
{
	json_object *objs = json_object_object_get(s, "objects");

	for (size_t i = 0; i < json_object_array_length(objs); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(objs, i)), sha))
			return;
	json_object_array_add(objs, json_object_new_string(sha));
}

/* Is an entry for (release, build_id, variant, sha) already in @arr? */
static bool listed(json_object *arr, json_object *e)
{
	static const char *const keys[] = { "release", "build_id", "variant", "sha256" };

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *x = json_object_array_get_idx(arr, i);
		size_t k = 0;

		for (; k < 4; k++) {
			const char *a = str(x, keys[k]), *b = str(e, keys[k]);

			if (a != b && (!a || !b || strcmp(a, b)))
				break;
		}
		if (k == 4)
			return true;
	}
	return false;
}

int ks_proven_from_results(json_object *results, int64_t now_ms, json_object **out)
{
	if (!json_object_is_type(results, json_type_array))
		return ks_err(-EINVAL, "not a matrix results.json (a JSON array of rows): "
			      "use the results.json that matrix/run.sh wrote");
	*out = json_object_new_object();
	for (size_t i = 0; i < json_object_array_length(results); i++) {
		json_object *r = json_object_array_get_idx(results, i), *s, *e, *nc;
		const char *shield = str(r, "shield"), *status = str(r, "status");
		const char *variant = str(r, "variant"), *bid = str(r, "build_id");
		const char *sha = str(r, "sha256"), *release = str(r, "release");
		bool pass;

		if (!json_object_is_type(r, json_type_object)) {
			json_object_put(*out);
			return ks_err(-EINVAL, "results row %zu is not an object: not a matrix "
				      "results.json", i);
		}
		if (!shield || str(r, "check") || !status)
			continue;	/* a check of the matrix itself, or a boot error */
		s = summary_of(*out, shield, now_ms);
		count(s, status);
		/* A partial row proves too: benign use was unaffected and every
		 * path the variant claims was refused; enforcing it refuses
		 * more than auditing would. Its uncovered paths go with it. */
		pass = !strcmp(status, "pass") || !strcmp(status, "partial");
		if (!pass && strcmp(status, "fail"))
			continue;	/* unprotected, n/a: prove nothing */
		if (!release || !is_hex(bid, 16) || (pass && (!variant || !is_hex(sha, 64)))) {
			count(s, pass ? "pass_unbound" : "fail_unbound");
			continue;	/* not bound to a kernel build and object */
		}
		e = json_object_new_object();
		add_str(e, "release", release);
		add_str(e, "build_id", bid);
		add_str(e, "arch", str(r, "arch"));
		add_str(e, "variant", variant);
		add_str(e, "sha256", is_hex(sha, 64) ? sha : NULL);
		add_str(e, "kernel", str(r, "kernel"));
		if (!pass)
			add_str(e, "error", str(r, "error"));
		nc = json_object_object_get(r, "not_covered");
		if (pass && json_object_is_type(nc, json_type_array) && json_object_array_length(nc))
			json_object_object_add(e, "not_covered", json_object_get(nc));
		if (is_hex(sha, 64))
			add_object(s, sha);
		if (listed(json_object_object_get(s, pass ? "proven" : "refused"), e))
			json_object_put(e);
		else
			json_object_array_add(json_object_object_get(s, pass ? "proven" : "refused"), e);
	}
	return 0;
}

int ks_proven_parse(const char *buf, size_t len, const char *what, json_object **out)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = json_tokener_parse_ex(tok, buf, (int)len), *a;
	const char *lists[] = { "proven", "refused", "objects" };

	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !str(o, "kind") || strcmp(str(o, "kind"), KS_PROVEN_KIND) || !str(o, "shield")) {
		json_object_put(o);
		return ks_err(-EINVAL, "%s is not a proven summary: make one with "
			      "kshield shield proven RESULTS.json --out DIR", what);
	}
	for (size_t i = 0; i < 3; i++)
		if (!json_object_object_get_ex(o, lists[i], &a) ||
		    !json_object_is_type(a, json_type_array)) {
			json_object_put(o);
			return ks_err(-EINVAL, "%s: proven summary without a \"%s\" list: make it "
				      "again with kshield shield proven", what, lists[i]);
		}
	*out = o;
	return 0;
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

enum ks_gate ks_proven_judge(json_object *summary, const char *sha256, const char *release,
			     const char *build_id, const char *variant, char *why, size_t whylen)
{
	json_object *ref = json_object_object_get(summary, "refused");
	json_object *ok = json_object_object_get(summary, "proven");
	bool any = variant && !strcmp(variant, KS_PROVEN_ANY_VARIANT);

	if (!summary) {
		snprintf(why, whylen, "unproven kernel: no proven summary for this shield");
		return KS_GATE_UNPROVEN;
	}
	if (!build_id || !build_id[0]) {
		snprintf(why, whylen, "unproven kernel: this kernel has no build ID to match");
		return KS_GATE_UNPROVEN;
	}
	/* A failure on this build refuses the variant that failed (every
	 * variant when none had loaded), for this object or an unnamed one. */
	for (size_t i = 0; i < json_object_array_length(ref); i++) {
		json_object *e = json_object_array_get_idx(ref, i);
		const char *v = str(e, "variant"), *sha = str(e, "sha256");

		if (same(str(e, "release"), release) && same(str(e, "build_id"), build_id) &&
		    (!v || any || same(v, variant)) && (!sha || same(sha, sha256))) {
			snprintf(why, whylen, "refused kernel: %s%s failed here on the matrix: %s",
				 v ? "variant " : "the shield", v ? v : "",
				 str(e, "error") ? str(e, "error") : "(no error recorded)");
			return KS_GATE_REFUSED;
		}
	}
	for (size_t i = 0; i < json_object_array_length(ok); i++) {
		json_object *e = json_object_array_get_idx(ok, i);

		if (same(str(e, "release"), release) && same(str(e, "build_id"), build_id) &&
		    (any || same(str(e, "variant"), variant)) && same(str(e, "sha256"), sha256)) {
			json_object *nc = json_object_object_get(e, "not_covered");
			char paths[256] = "";

			for (size_t k = 0; json_object_is_type(nc, json_type_array) &&
					   k < json_object_array_length(nc) && k < 8; k++)
				snprintf(paths + strlen(paths), sizeof(paths) - strlen(paths), "%s%s",
					 k ? "," : "", json_object_get_string(json_object_array_get_idx(nc, k)));
			snprintf(why, whylen, "proven on %s (%s%s%s)", release, str(e, "variant"),
				 paths[0] ? "; not covered: " : "", paths);
			return KS_GATE_PROVEN;
		}
	}
	snprintf(why, whylen, "unproven kernel: %s %.12s with variant %s not in the proven list",
		 release ? release : "?", build_id, variant && variant[0] ? variant : "?");
	return KS_GATE_UNPROVEN;
}

enum ks_gate ks_proven_judge_here(json_object *summary, const char *sha256, const char *variant,
				  char *why, size_t whylen)
{
	static char release[65], build_id[129];
	struct utsname u;

	if (!release[0] && !uname(&u))
		snprintf(release, sizeof(release), "%s", u.release);
	if (!build_id[0] && ks_kernel_build_id(build_id, sizeof(build_id)))
		build_id[0] = '\0';
	return ks_proven_judge(summary, sha256, release, build_id, variant, why, whylen);
}

bool ks_proven_covers(json_object *summary, const char *sha256)
{
	json_object *objs = json_object_object_get(summary, "objects");

	for (size_t i = 0; objs && i < json_object_array_length(objs); i++)
		if (same(json_object_get_string(json_object_array_get_idx(objs, i)), sha256))
			return true;
	return false;
}

const char *ks_gate_name(enum ks_gate g)
{
	return g == KS_GATE_PROVEN ? "proven" : g == KS_GATE_REFUSED ? "refused" : "unproven";
}

int ks_proven_write(json_object *s, const char *dir, const char *keyfile, char *path,
		    size_t pathlen, char keyid[KS_KEYID_LEN])
{
	const char *name = str(s, "shield"), *txt;
	char *file;
	size_t n;
	int err;

	keyid[0] = '\0';
	if (!name || !name[0] || strchr(name, '/') || name[0] == '.')
		return ks_err(-EINVAL, "a summary without a usable shield name");
	if (mkdir(dir, 0755) && errno != EEXIST)
		return ks_err(-errno, "can't create %s: %s", dir, strerror(errno));
	snprintf(path, pathlen, "%s/%s%s", dir, name, KS_PROVEN_SUFFIX);
	txt = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_NOSLASHESCAPE);
	n = strlen(txt);
	if (!(file = malloc(n + 1)))
		return ks_err(-ENOMEM, "can't write %s: out of memory", path);
	memcpy(file, txt, n);
	file[n] = '\n';
	/* 0666 less the umask, as fopen() creates files: readable by all. */
	err = ks_write_file_atomic(path, file, n + 1, 0666);
	free(file);
	if (err)
		return err;
	return keyfile ? ks_sign_file(KS_SIGN_PROVEN, path, keyfile, NULL, keyid) : 0;
}

int ks_proven_read(const char *path, const char *keys_dir, json_object **out, char **buf,
		   size_t *len)
{
	char id[KS_KEYID_LEN], *b;
	size_t l;
	int err;

	*out = NULL;
	if (buf)
		*buf = NULL;
	err = ks_read_file(path, &b, &l);
	if (err)
		return err;
	if (keys_dir && keys_dir[0] &&
	    (err = ks_sign_verify_file(KS_SIGN_PROVEN, path, NULL, keys_dir, id))) {
		free(b);
		return ks_err_ctx(err, "proven summary %s", path);
	}
	err = ks_proven_parse(b, l, path, out);
	if (err || !buf)
		free(b);
	else
		*buf = b;
	if (len)
		*len = l;
	return err;
}

void ks_proven_path(const char *object, char *out, size_t n)
{
	size_t l = strlen(object), sl = strlen(".bpf.o");

	if (l > sl && !strcmp(object + l - sl, ".bpf.o"))
		l -= sl;
	snprintf(out, n, "%.*s%s", (int)l, object, KS_PROVEN_SUFFIX);
}
