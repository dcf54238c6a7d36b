// SPDX-License-Identifier: MIT
/* rollout.c - a shield's rollout through the fleet's desired state
 * (rollout.h): deploy (the object, its proven summary and sites manifests
 * into kshield_objects, the signed record into kshield_desired), the
 * impact preview, promote/rollback/renew by compare-and-set, and the
 * per-shield summaries of what the hosts report.
 */
#ifndef KSHIELD_STATIC	/* no static libnats/libpq: the guest binary has no fleet */
#define _GNU_SOURCE	/* vasprintf */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>
#include "btf_find.h"
#include "err.h"
#include "file.h"
#include "fleet_dl.h"
#include "fleet_kv.h"
#include "hex.h"
#include "hunt_pg.h"
#include "impact.h"
#include <kshield/shield.h>
#include "kernel_sites.h"
#include "proven.h"
#include "rollout.h"
#include "sign.h"
#include "units.h"

static void sayf(ks_rollout_say_fn say, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sayf(ks_rollout_say_fn say, const char *fmt, ...)
{
	char *line;
	va_list ap;
	int n;

	if (!say)
		return;
	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	say(line);
	free(line);
}

json_object *ks_desired_body(json_object *rec)
{
	const char *txt = ks_json_str(rec, "signed", NULL);
	json_object *b = txt ? json_tokener_parse(txt) : NULL;

	if (b)
		return b;
	b = json_object_new_object();
	json_object_object_foreach(rec, k, v)
		if (strcmp(k, "prev") && strcmp(k, "signed") && strcmp(k, "record_sig"))
			json_object_object_add(b, k, json_object_get(v));
	return b;
}

/* The body of stored record @rec when its signature verifies against the
 * public half of @keyfile (what this signer signed before) or a key in
 * @keys_dir; NULL with a message when not: nothing unverified from the
 * bucket is ever signed again (a rollback, a promote, a renew). */
static json_object *trusted_body(json_object *rec, const char *keyfile, const char *keys_dir)
{
	const char *txt = ks_json_str(rec, "signed", NULL);
	char id[KS_KEYID_LEN];

	if (!txt) {
		ks_err(-ENODATA, "unsigned: the record has no signed body");
		return NULL;
	}
	if (ks_sign_verify_signer(KS_SIGN_DESIRED, txt, strlen(txt), ks_json_str(rec, "record_sig", ""),
				  keyfile, keys_dir, id))
		return NULL;
	return json_tokener_parse(txt);
}

/* Give @body the next version (above @after, and at least the time now,
 * so versions stay monotonic even across a lost record) and an expiry,
 * sign it, keep @prev beside it, and put it at @name (compare-and-set on
 * @rev when non-zero). *rec: the record stored. */
static int sign_and_put(struct ks_nats *n, const char *name, json_object *body, int64_t after,
			int64_t expires_ms, json_object *prev, const char *keyfile, uint64_t rev,
			json_object **rec)
{
	int64_t now = ks_now_ms();
	char id[KS_KEYID_LEN];
	int err;

	json_object_object_add(body, "version", json_object_new_int64(after + 1 > now ? after + 1 : now));
	json_object_object_add(body, "expires_at", json_object_new_int64(now + expires_ms));
	err = ks_fleet_sign_record(KS_SIGN_DESIRED, body, keyfile, rec, id);
	if (err) {
		json_object_put(prev);
		return err;
	}
	if (prev)
		json_object_object_add(*rec, "prev", prev);
	err = ks_nats_denied(n, ks_kv_put_json(n->desired, name, *rec, rev));
	if (err) {
		json_object_put(*rec);
		*rec = NULL;
	}
	return err;
}

/* --sites FILE: a kernel sites manifest (one kernel build) shipped with the
 * shield; stored in the objects bucket by sha256, described in the desired
 * record's "sites" array. Each agent installs the one of its kernel. */
static int deploy_sites(struct ks_nats *n, const char *const *files, int nfiles,
			ks_rollout_say_fn say, json_object **out)
{
	json_object *arr = json_object_new_array();
	int err = 0;

	for (int i = 0; i < nfiles && !err; i++) {
		char sigpath[4096], shahex[65], *buf = NULL, *sig = NULL, *id = NULL;
		unsigned char h[32];
		size_t len, slen;
		json_object *m = NULL, *e;
		natsStatus ns;

		if ((err = ks_sites_manifest_check(files[i])) ||
		    (err = ks_read_file(files[i], &buf, &len)))
			break;
		m = json_tokener_parse(buf);
		id = strdup(ks_json_str(m, "build_id", ""));
		snprintf(sigpath, sizeof(sigpath), "%s.sig", files[i]);
		if (!access(sigpath, F_OK))
			err = ks_read_file(sigpath, &sig, &slen);
		else
			sayf(say, "warning: sites manifest %s has no signature (%s): agents "
			     "will refuse it; sign it: kshield sites sign %s --key KEYFILE",
			     files[i], sigpath, files[i]);
		for (size_t j = 0; !err && j < json_object_array_length(arr); j++)
			if (!strcmp(ks_json_str(json_object_array_get_idx(arr, j), "build_id", ""), id))
				err = ks_err(-EEXIST, "two --sites manifests for kernel build %s", id);
		crypto_hash_sha256(h, (unsigned char *)buf, len);
		ks_hex(h, sizeof(h), shahex, sizeof(shahex));
		if (!err) {
			ns = nats_fn.kvStore_Put(NULL, n->objects, shahex, buf, len);
			if (ns != NATS_OK)
				err = ks_nats_err(ns, "storing a sites manifest");
		}
		if (!err) {
			e = json_object_new_object();
			json_object_object_add(e, "build_id", json_object_new_string(id));
			json_object_object_add(e, "release", json_object_new_string(
				ks_json_str(m, "release", "")));
			json_object_object_add(e, "sha256", json_object_new_string(shahex));
			json_object_object_add(e, "sig", json_object_new_string(sig ? sig : ""));
			json_object_array_add(arr, e);
		}
		json_object_put(m);
		free(id);
		free(buf);
		free(sig);
	}
	if (err) {
		json_object_put(arr);
		return err;
	}
	*out = arr;
	return 0;
}

struct preview {
	ks_rollout_say_fn say;
	const char *hosts;	/* --hosts glob */
	long nhosts;
	long long hits;
	char list[512];		/* "h1 3, h2 1, ..." */
};

static void preview_host(const char *host, long long hits, long long first_ts, long long last_ts,
			 void *ctx)
{
	struct preview *p = ctx;
	size_t l = strlen(p->list);

	(void)first_ts; (void)last_ts;
	if (fnmatch(p->hosts, host, 0))
		return;
	p->nhosts++;
	p->hits += hits;
	sayf(p->say, "impact: %-32s %lld", host, hits);
	if (l < sizeof(p->list) - 64)
		snprintf(p->list + l, sizeof(p->list) - l, "%s%s %lld", l ? ", " : "", host, hits);
}

int ks_rollout_preview(const char *path, const char *pg, const char *since_s, const char *hosts,
		       bool enforce, bool force, ks_rollout_say_fn say)
{
	struct preview p = { .say = say, .hosts = hosts };
	char name[KS_NAME_LEN + 64], *sql = NULL;
	__s64 since;
	int err;

	if ((err = ks_time_parse(since_s, "--since", &since)))
		return err;
	if (ks_impact_pattern(path, name, sizeof(name), &sql)) {
		sayf(say, "impact: %s", ks_errmsg());
		return 0;
	}
	err = ks_hunt_pg(pg, name, sql, preview_host, &p, &(const struct ks_hunt_pg_opts){
		.since = since, .until = INT64_MAX, .limit = 1000000 });
	free(sql);
	if (err)
		return err;
	sayf(say, "impact: %s would have hit %lld events on %ld of the targeted hosts since %s",
	     name, p.hits, p.nhosts, since_s);
	if (p.hits && enforce && !force)
		return ks_err(-EPERM, "not deploying %s straight to enforce: it would have hit %s; "
			      "deploy with --audit-first DURATION (or --audit), or --force", name, p.list);
	return 0;
}

/* Store @len bytes under their sha256 @key in kshield_objects. */
static int put_object(struct ks_nats *n, const char *key, const void *buf, size_t len,
		      const char *what)
{
	int64_t max = nats_fn.natsConnection_GetMaxPayload(n->nc);
	natsStatus ns = NATS_OK;

	if (max > 0 && (int64_t)len > max)
		return ks_err(-EMSGSIZE, "%s: %zu bytes, more than this NATS server's max_payload "
			      "(%lld): raise max_payload in the server's config, or strip the "
			      "object's DWARF (llvm-strip -g; BTF stays)", what, len, (long long)max);
	for (int tries = 0; tries < 40; tries++) {
		ns = nats_fn.kvStore_Put(NULL, n->objects, key, buf, len);
		if (ns != NATS_NO_RESPONDERS)
			break;
		nats_fn.nats_Sleep(250);	/* new bucket: no stream leader yet */
	}
	return ns == NATS_OK ? 0 : ks_nats_denied(n, ks_nats_err(ns, what));
}

/* The build ID a BTF file is named by: NAME = <hex build ID>.btf or
 * <hex>.min.btf (what `kshield btf export` and `btf min` make). */
static bool btf_name_id(const char *path, char *id, size_t n)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t k = strspn(base, "0123456789abcdef");

	if (k < 8 || k % 2 || k >= n || (strcmp(base + k, ".btf") && strcmp(base + k, ".min.btf")))
		return false;
	snprintf(id, n, "%.*s", (int)k, base);
	return true;
}

/* One BTF file into kshield_objects and the record's "btf" object. */
static int deploy_btf_file(struct ks_nats *n, const char *path, json_object *all)
{
	char id[KS_BUILD_ID_HEX], shahex[65], *buf = NULL;
	int64_t max = nats_fn.natsConnection_GetMaxPayload(n->nc);
	unsigned char h[32];
	json_object *e;
	size_t len;
	int err;

	if (!btf_name_id(path, id, sizeof(id)))
		return ks_err(-EINVAL, "--btf %s: name it <build-id>.btf (kshield btf export names "
			      "it so)", path);
	if (json_object_object_get_ex(all, id, NULL))
		return ks_err(-EEXIST, "two --btf files for build ID %s", id);
	if ((err = ks_read_file(path, &buf, &len)))
		return err;
	if ((err = ks_btf_check_buf(buf, len))) {
		free(buf);
		return ks_err_ctx(err, "--btf %s (make it with kshield btf export or btf min)", path);
	}
	if (max > 0 && (int64_t)len > max) {
		free(buf);
		return ks_err(-EMSGSIZE, "--btf %s: %zu bytes, more than this NATS server's "
			      "max_payload (%lld): cut it with kshield btf min", path, len,
			      (long long)max);
	}
	crypto_hash_sha256(h, (unsigned char *)buf, len);
	ks_hex(h, sizeof(h), shahex, sizeof(shahex));
	err = put_object(n, shahex, buf, len, "storing a BTF");
	free(buf);
	if (err)
		return err;
	e = json_object_new_object();
	json_object_object_add(e, "sha256", json_object_new_string(shahex));
	json_object_object_add(e, "size", json_object_new_int64(len));
	json_object_object_add(all, id, e);
	return 0;
}

/* --btf FILE|DIR: kernels' BTF travelling with the shield (fleet_btf.h),
 * each stored by sha256 and listed by build ID in *@out. A DIR gives every
 * <build-id>.btf in it. */
static int deploy_btf(struct ks_nats *n, const char *const *paths, int npaths, json_object **out)
{
	json_object *all = json_object_new_object();
	int err = 0;

	for (int i = 0; i < npaths && !err; i++) {
		DIR *d = opendir(paths[i]);
		struct dirent *de;
		char id[KS_BUILD_ID_HEX], file[4400];
		int before = json_object_object_length(all);

		if (!d) {
			err = deploy_btf_file(n, paths[i], all);
			continue;
		}
		while (!err && (de = readdir(d)))
			if (btf_name_id(de->d_name, id, sizeof(id))) {
				snprintf(file, sizeof(file), "%s/%s", paths[i], de->d_name);
				err = deploy_btf_file(n, file, all);
			}
		closedir(d);
		if (!err && json_object_object_length(all) == before)
			err = ks_err(-ENOENT, "--btf %s: no <build-id>.btf in it", paths[i]);
	}
	if (err) {
		json_object_put(all);
		return err;
	}
	*out = all;
	return 0;
}

/* The shield's proven summary for a gated deploy: @path (--proven), else
 * NAME.proven.json beside the object when there is one. Its bytes go to
 * kshield_objects beside the object; *ref = {"sha256", "size", "sig"} for
 * the desired record (NULL: no summary). It must be about this object. */
static int deploy_proven(struct ks_nats *n, const char *object, const char *objsha,
			 const char *path, ks_rollout_say_fn say, json_object **ref)
{
	char def[4096], sigpath[4200], h[65], *buf = NULL, *sig = NULL;
	unsigned char bin[32];
	json_object *s = NULL;
	size_t len, slen;
	int err;

	*ref = NULL;
	if (!path) {
		ks_proven_path(object, def, sizeof(def));
		if (access(def, F_OK))
			return 0;
		path = def;
	}
	err = ks_proven_read(path, NULL, &s, &buf, &len);
	if (err)
		return err;
	if (!ks_proven_covers(s, objsha)) {
		err = ks_err(-EINVAL, "%s is not about %s (sha256 %.12s): make it from the matrix "
			     "results of this very object (kshield shield proven)", path, object, objsha);
		goto out;
	}
	snprintf(sigpath, sizeof(sigpath), "%s.sig", path);
	if (access(sigpath, F_OK))
		sayf(say, "warning: %s has no signature: agents will refuse it", path);
	else if ((err = ks_read_file(sigpath, &sig, &slen)))
		goto out;
	crypto_hash_sha256(bin, (unsigned char *)buf, len);
	ks_hex(bin, sizeof(bin), h, sizeof(h));
	err = put_object(n, h, buf, len, "storing the proven summary");
	if (err)
		goto out;
	*ref = json_object_new_object();
	json_object_object_add(*ref, "sha256", json_object_new_string(h));
	json_object_object_add(*ref, "size", json_object_new_int64(len));
	json_object_object_add(*ref, "sig", json_object_new_string(sig ? sig : ""));
out:
	json_object_put(s);
	free(buf);
	free(sig);
	return err;
}

int ks_rollout_deploy(const struct ks_rollout_deploy *dp, const struct ks_nats_opts *no,
		      json_object **rec, bool *is_signed)
{
	const char *path = dp->path, *sigpath = dp->sigpath, *name = ks_meta_get(dp->meta, "name");
	char sigdef[4096], shahex[65], *obj = NULL, *sig = NULL;
	json_object *d, *old = NULL, *prev = NULL, *sites_arr = NULL, *proven_ref = NULL, *btf = NULL;
	bool audit = dp->audit || dp->audit_first_ms;
	uint64_t rev = 0;
	int64_t version = 0;
	size_t len, slen;
	struct ks_nats n;
	int err;

	*rec = NULL;
	err = ks_read_file(path, &obj, &len);
	if (err)
		goto out;
	ks_hex(dp->meta->sha256, sizeof(dp->meta->sha256), shahex, sizeof(shahex));
	snprintf(sigdef, sizeof(sigdef), "%s.sig", path);
	if (!sigpath && access(sigdef, F_OK) == 0)
		sigpath = sigdef;
	if (sigpath && (err = ks_read_file(sigpath, &sig, &slen)))
		goto out;
	if (!sig)
		sayf(dp->say, "warning: %s has no signature: agents will refuse it", path);
	*is_signed = sig != NULL;

	err = ks_nats_open(&n, no, true, false);
	if (err)
		goto out;
	err = put_object(&n, shahex, obj, len, "storing the object");
	if (err)
		goto close;
	/* The summary travels with the object, gated or not. */
	if ((err = deploy_proven(&n, path, shahex, dp->proven, dp->say, &proven_ref)))
		goto close;
	if (dp->gated && !proven_ref)
		sayf(dp->say, "warning: no proven summary beside %s (make one with kshield shield "
		     "proven): every host audits it as an unproven kernel until promoted", path);
	if (dp->nsites && (err = deploy_sites(&n, dp->sites, dp->nsites, dp->say, &sites_arr)))
		goto close;
	if (dp->nbtf && (err = deploy_btf(&n, dp->btf, dp->nbtf, &btf))) {
		json_object_put(sites_arr);
		json_object_put(proven_ref);
		goto close;
	}
	d = json_object_new_object();
	json_object_object_add(d, "name", json_object_new_string(name));
	json_object_object_add(d, "sha256", json_object_new_string(shahex));
	json_object_object_add(d, "size", json_object_new_int64(len));
	json_object_object_add(d, "sig", json_object_new_string(sig ? sig : ""));
	json_object_object_add(d, "mode", json_object_new_string(audit ? "audit" : "enforce"));
	json_object_object_add(d, "hosts", json_object_new_string(dp->hosts));
	json_object_object_add(d, "group", json_object_new_string(dp->group));
	json_object_object_add(d, "deployed_at", json_object_new_int64(ks_now_ms()));
	json_object_object_add(d, "audit_first_ms", json_object_new_int64(dp->audit_first_ms));
	json_object_object_add(d, "promote_at", json_object_new_int64(dp->audit_first_ms ?
				ks_now_ms() + dp->audit_first_ms : 0));
	json_object_object_add(d, "by", json_object_new_string("deploy"));
	if (sites_arr)
		json_object_object_add(d, "sites", sites_arr);
	if (proven_ref)
		json_object_object_add(d, "proven", proven_ref);
	if (btf)
		json_object_object_add(d, "btf", btf);
	if (dp->gated) {
		json_object_object_add(d, "gated", json_object_new_boolean(true));
		json_object_object_add(d, "promoted", json_object_new_array());
	}
	/* Keep one earlier version for rollback; the new one's version is
	 * above it (agents refuse going back to a lower one). */
	if (!ks_kv_get_json(n.desired, name, &old, &rev)) {
		json_object *ob = trusted_body(old, dp->key, dp->keys);

		version = ks_json_i64(old, "version");
		json_object_object_del(old, "prev");
		if (!ob)
			sayf(dp->say, "warning: the stored record of %s is not kept for rollback: %s",
			     name, ks_errmsg());
		else if (strcmp(ks_json_str(ob, "mode", ""), "absent"))
			prev = json_object_get(old);	/* signed, as it was */
		json_object_put(ob);
		json_object_put(old);
	}
	err = sign_and_put(&n, name, d, version, dp->expires_ms, prev, dp->key, 0, rec);
	json_object_put(d);
close:
	ks_nats_close(&n);
out:
	free(obj);
	free(sig);
	return err;
}

/* Hosts that reported audit hits for version @version of shield @name. */
static int audit_hit_hosts(const char *name, int64_t version, json_object *audit)
{
	size_t plen = strlen(name);
	int n = 0;

	json_object_object_foreach(audit, key, v)
		if (!strncmp(key, name, plen) && key[plen] == '.' &&
		    ks_json_i64(v, "version") == version && ks_json_i64(v, "audited") > 0)
			n++;
	return n;
}

/* Summary of one shield's rollout across the hosts' status entries. An
 * audit-first rollout past its promotion time with no audit hits is shown
 * as what the agents made of it: enforce, auto-promoted. */
static json_object *summarize(const char *name, json_object *rec, json_object *all,
			      json_object *audit, bool per_host)
{
	json_object *d = ks_desired_body(rec);
	json_object *o = json_object_new_object(), *hosts = json_object_new_array(), *ah;
	const char *sha = ks_json_str(d, "sha256", "");
	const char *dmode = ks_json_str(d, "mode", "absent");
	int targeted = 0, enforcing = 0, auditing = 0, refused = 0, failed = 0, unloaded = 0;
	int stale = 0, hit_hosts = 0, control = 0;
	int proven = 0, unproven = 0, refused_k = 0, promoted = 0;
	int64_t last_at = 0, hits = 0;
	size_t plen = strlen(name);

	json_object_object_foreach(all, key, v) {
		if (!strncmp(key, "_host.", 6)) {
			if (ks_fleet_targets(d, ks_json_str(v, "host", ""), ks_json_str(v, "groups", "")))
				targeted++;
			continue;
		}
		if (strncmp(key, name, plen) || key[plen] != '.')
			continue;
		const char *st = ks_json_str(v, "status", "");
		/* Only answers to this deployment count (agents report the
		 * deployed_at they converged to); older entries are stale. */
		bool answers = ks_json_i64(v, "deployed_at") == ks_json_i64(d, "deployed_at");
		bool current = answers && !strcmp(ks_json_str(v, "sha256", ""), sha);

		if (!answers)
			stale++;
		else if (!strcmp(st, "unloaded"))
			unloaded++;
		else if (!current)
			stale++;
		else if (!strcmp(st, "enforcing"))
			enforcing++;
		else if (!strcmp(st, "auditing"))
			auditing++;
		else if (!strcmp(st, "refused"))
			refused++;
		else
			failed++;
		if (current && ks_json_i64(v, "audited") > 0)
			hit_hosts++;
		if (current) {
			const char *g = ks_json_str(v, "gate", "");

			proven += !strcmp(g, "proven");
			unproven += !strcmp(g, "unproven");
			refused_k += !strcmp(g, "refused");
			promoted += json_object_get_boolean(json_object_object_get(v, "promoted"));
		}
		if (current)
			hits += ks_json_i64(v, "hits");
		if (!json_object_get_boolean(json_object_object_get(v, "kernel")))
			control++;
		if (ks_json_i64(v, "at") > last_at)
			last_at = ks_json_i64(v, "at");
		if (per_host)
			json_object_array_add(hosts, json_object_get(v));
	}
	ah = NULL;
	if (audit_hit_hosts(name, ks_json_i64(d, "version"), audit) > hit_hosts)
		hit_hosts = audit_hit_hosts(name, ks_json_i64(d, "version"), audit);
	if (!strcmp(dmode, "audit") && ks_json_i64(d, "promote_at") > 0 &&
	    ks_now_ms() >= ks_json_i64(d, "promote_at") && !hit_hosts) {
		char by[128];

		snprintf(by, sizeof(by), "auto-promote after a quiet %llds",
			 (long long)ks_json_i64(d, "audit_first_ms") / 1000);
		dmode = "enforce";
		ah = json_object_new_string(by);
	}
	json_object_object_add(o, "shield", json_object_new_string(name));
	json_object_object_add(o, "sha256", json_object_new_string(sha));
	json_object_object_add(o, "mode", json_object_new_string(dmode));
	json_object_object_add(o, "hosts", json_object_new_string(ks_json_str(d, "hosts", "*")));
	json_object_object_add(o, "group", json_object_new_string(ks_json_str(d, "group", "")));
	json_object_object_add(o, "by", ah ? ah : json_object_new_string(ks_json_str(d, "by", "")));
	json_object_object_add(o, "version", json_object_new_int64(ks_json_i64(d, "version")));
	json_object_object_add(o, "expires_at", json_object_new_int64(ks_json_i64(d, "expires_at")));
	json_object_object_add(o, "signed", json_object_new_boolean(ks_json_str(rec, "record_sig", NULL) != NULL));
	json_object_object_add(o, "targeted", json_object_new_int(targeted));
	json_object_object_add(o, "enforcing", json_object_new_int(enforcing));
	json_object_object_add(o, "auditing", json_object_new_int(auditing));
	json_object_object_add(o, "refused", json_object_new_int(refused));
	json_object_object_add(o, "failed", json_object_new_int(failed));
	json_object_object_add(o, "unloaded", json_object_new_int(unloaded));
	json_object_object_add(o, "stale", json_object_new_int(stale));
	json_object_object_add(o, "audit_hit_hosts", json_object_new_int(hit_hosts));
	json_object_object_add(o, "hits", json_object_new_int64(hits));
	json_object_object_add(o, "gated", json_object_new_boolean(
		json_object_get_boolean(json_object_object_get(d, "gated"))));
	json_object_object_add(o, "proven_summary", json_object_new_boolean(
		json_object_object_get(d, "proven") != NULL));
	{
		json_object *g = json_object_new_object();

		/* Hosts by what the matrix proved for their kernel (gated
		 * agents report it; ungated ones do not judge). */
		json_object_object_add(g, "proven", json_object_new_int(proven));
		json_object_object_add(g, "unproven", json_object_new_int(unproven));
		json_object_object_add(g, "refused", json_object_new_int(refused_k));
		json_object_object_add(g, "promoted", json_object_new_int(promoted));
		json_object_object_add(o, "kernels", g);
	}
	json_object_object_add(o, "control_plane_hosts", json_object_new_int(control));
	json_object_object_add(o, "deployed_at", json_object_new_int64(ks_json_i64(d, "deployed_at")));
	json_object_object_add(o, "last_report_at", json_object_new_int64(last_at));
	if (ks_json_i64(d, "promote_at"))
		json_object_object_add(o, "promote_at", json_object_new_int64(ks_json_i64(d, "promote_at")));
	if (per_host)
		json_object_object_add(o, "per_host", hosts);
	else
		json_object_put(hosts);
	json_object_put(d);
	return o;
}

int ks_rollout_summaries_of(json_object *desired, json_object *all, json_object *audit,
			    const char *only, bool per_host, json_object **out)
{
	*out = json_object_new_array();
	json_object_object_foreach(desired, name, d) {
		if (name[0] == '_' || (only && strcmp(only, name)))
			continue;
		json_object_array_add(*out, summarize(name, d, all, audit, per_host));
	}
	if (only && !json_object_array_length(*out)) {
		json_object_put(*out);
		return ks_err(-ENOENT, "shield %s is not in the fleet's desired state", only);
	}
	return 0;
}

int ks_rollout_summaries(struct ks_nats *n, const char *only, bool per_host, json_object **out)
{
	json_object *desired, *all, *audit;
	int err = ks_kv_all_json(n->desired, ">", &desired);

	if (err)
		return err;
	err = ks_kv_all_json(n->status, ">", &all);
	if (err) {
		json_object_put(desired);
		return err;
	}
	err = ks_kv_all_json(n->audit, ">", &audit);
	if (err) {
		json_object_put(desired);
		json_object_put(all);
		return err;
	}
	err = ks_rollout_summaries_of(desired, all, audit, only, per_host, out);
	json_object_put(desired);
	json_object_put(all);
	json_object_put(audit);
	return err;
}

int ks_rollout_change(struct ks_nats *n, const char *name, enum ks_rollout_change op,
		      const char *host, const char *key, const char *keys, int64_t expires,
		      json_object **rec)
{
	json_object *d = NULL, *prev;
	uint64_t rev;
	int err = 0;

	*rec = NULL;
	for (int tries = 0; tries < 10; tries++) {
		json_object *cur;
		int64_t version;

		err = ks_kv_get_json(n->desired, name, &cur, &rev);
		if (err)
			break;
		version = ks_json_i64(cur, "version");
		d = trusted_body(cur, key, keys);
		prev = NULL;
		if (json_object_object_get_ex(cur, "prev", &prev))
			prev = json_object_get(prev);
		json_object_put(cur);
		if (!d) {
			json_object_put(prev);
			err = ks_err_ctx(-EBADMSG, "the stored record of %s is not one to sign again "
					 "(deploy it again)", name);
			break;
		}
		if (op == KS_ROLLOUT_PROMOTE) {
			if (!strcmp(ks_json_str(d, "mode", ""), "absent")) {
				json_object_put(prev);
				err = ks_err(-ENOENT, "%s is rolled back: deploy it again", name);
				break;
			}
			if (host && !json_object_get_boolean(json_object_object_get(d, "gated"))) {
				json_object_put(prev);
				err = ks_err(-EINVAL, "%s is not a gated rollout: promote --host lifts the "
					     "gate only (deploy it with --gated, or promote without --host)",
					     name);
				break;
			} else if (host) {
				/* Gated: let hosts matching GLOB enforce on an
				 * unproven kernel (never on a refused one). */
				json_object *pl;
				char by[300];

				if (!json_object_object_get_ex(d, "promoted", &pl) ||
				    !json_object_is_type(pl, json_type_array)) {
					pl = json_object_new_array();
					json_object_object_add(d, "promoted", pl);
				}
				json_object_array_add(pl, json_object_new_string(host));
				snprintf(by, sizeof(by), "promote --host %s", host);
				json_object_object_add(d, "by", json_object_new_string(by));
			} else {
				json_object_object_add(d, "mode", json_object_new_string("enforce"));
				json_object_object_add(d, "by", json_object_new_string("promote"));
			}
		} else if (op == KS_ROLLOUT_RENEW) {
			json_object_object_add(d, "by", json_object_new_string("renew"));
		} else if (prev) {
			/* Back to the version before this one, as it was signed. */
			json_object_put(d);
			d = trusted_body(prev, key, keys);
			json_object_put(prev);
			prev = NULL;
			if (!d) {
				err = ks_err_ctx(-EBADMSG, "the version before %s's current one is not one "
						 "to sign again", name);
				break;
			}
			json_object_object_add(d, "by", json_object_new_string("rollback"));
			json_object_object_add(d, "deployed_at", json_object_new_int64(ks_now_ms()));
			json_object_object_add(d, "audit_first_ms", json_object_new_int64(0));
			json_object_object_add(d, "promote_at", json_object_new_int64(0));
		} else {
			/* First version: roll back to "not deployed" (agents unload). */
			json_object_object_add(d, "mode", json_object_new_string("absent"));
			json_object_object_add(d, "by", json_object_new_string("rollback"));
			json_object_object_add(d, "deployed_at", json_object_new_int64(ks_now_ms()));
		}
		err = sign_and_put(n, name, d, version, expires, prev, key, rev, rec);
		json_object_put(d);
		d = NULL;
		if (err != -EAGAIN)
			break;
	}
	return err;
}
#endif /* KSHIELD_STATIC */
