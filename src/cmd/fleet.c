/* fleet.c - the `kshield fleet` commands: deploy a signed shield to the
 * fleet's desired state, watch it converge (status, wait), promote an
 * audit-first rollout, roll back; and `fleet agent`, one host's convergence
 * loop in the foreground (fleet_agent.c does the work). Desired state and
 * status live in JetStream KV buckets (fleet_kv.h describes the records).
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>
#include "cli.h"
#include "fleet_cli.h"
#include "fleet_kv.h"
#include "fleet_ship.h"
#include "hunt_pg.h"
#include "impact.h"
#include <kshield/shield.h>
#include "units.h"
#include "kernel_sites.h"
#include "meta.h"
#include "proven.h"
#include "sign.h"
#include "fleet_dl.h"

/* "90", "90s", "500ms", "5m", "2h" -> milliseconds; -1 when malformed. */
static int64_t parse_duration_ms(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		return v * 1000;
	if (!strcmp(end, "ms"))
		return v;
	if (!strcmp(end, "m"))
		return v * 60000;
	if (!strcmp(end, "h"))
		return v * 3600000;
	if (!strcmp(end, "d"))
		return v * 86400000;
	return -1;
}

static int open_fleet(struct ks_nats *n, struct ks_nats_opts *o)
{
	ks_nats_opts_env(o);
	return ks_nats_open(n, o, true, false);
}

static int fleet_help(void);

#define DEPLOY_MAX_SITES 64
#define DEFAULT_EXPIRES_MS ((int64_t)30 * 86400000)	/* a desired record: 30 days */
#define DEFAULT_KEY_EXPIRES_MS ((int64_t)365 * 86400000)	/* a listed signing key */
#define DEPLOY_USAGE "usage: kshield fleet deploy FILE --key KEYFILE [--keys DIR] [--hosts GLOB|--group NAME] " \
	"[--audit|--audit-first DURATION] [--expires DURATION] [--sig FILE] [--sites MANIFEST]... " \
	"[--gated] [--proven SUMMARY] [--pg CONNINFO [--since 30d] [--force]] NATS"

/* What a desired record says, as agents read it: its signed body (a new
 * reference), or for a record from before signed records, the record
 * without its bookkeeping. */
static json_object *record_body(json_object *rec)
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
			json_object **out)
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
			fprintf(stderr, "warning: sites manifest %s has no signature (%s): agents "
				"will refuse it; sign it: kshield sites sign %s --key KEYFILE\n",
				files[i], sigpath, files[i]);
		for (size_t j = 0; !err && j < json_object_array_length(arr); j++)
			if (!strcmp(ks_json_str(json_object_array_get_idx(arr, j), "build_id", ""), id))
				err = ks_err(-EEXIST, "two --sites manifests for kernel build %s", id);
		crypto_hash_sha256(h, (unsigned char *)buf, len);
		sodium_bin2hex(shahex, sizeof(shahex), h, 32);
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
	fprintf(stderr, "impact: %-32s %lld\n", host, hits);
	if (l < sizeof(p->list) - 64)
		snprintf(p->list + l, sizeof(p->list) - l, "%s%s %lld", l ? ", " : "", host, hits);
}

/* Before a rollout: what the shield would have hit on the targeted hosts
 * (shield impact --pg). Going straight to enforce where it would have hit
 * is refused unless --force. */
static int deploy_preview(const char *path, const char *pg, const char *since_s, const char *hosts,
			  bool enforce, bool force)
{
	struct preview p = { .hosts = hosts };
	char name[KS_NAME_LEN + 64], *sql = NULL;
	__s64 since;
	int err;

	if ((err = ks_time_parse(since_s, "--since", &since)))
		return err;
	if (ks_impact_pattern(path, name, sizeof(name), &sql)) {
		fprintf(stderr, "impact: %s\n", ks_errmsg());
		return 0;
	}
	err = ks_hunt_pg(pg, name, sql, since, INT64_MAX, NULL, 0, NULL, 1000000, preview_host, &p);
	free(sql);
	if (err)
		return err;
	fprintf(stderr, "impact: %s would have hit %lld events on %ld of the targeted hosts since %s\n",
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

/* The shield's proven summary for a gated deploy: @path (--proven), else
 * NAME.proven.json beside the object when there is one. Its bytes go to
 * kshield_objects beside the object; *ref = {"sha256", "size", "sig"} for
 * the desired record (NULL: no summary). It must be about this object. */
static int deploy_proven(struct ks_nats *n, const char *object, const char *objsha,
			 const char *path, json_object **ref)
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
		fprintf(stderr, "warning: %s has no signature: agents will refuse it\n", path);
	else if ((err = ks_read_file(sigpath, &sig, &slen)))
		goto out;
	crypto_hash_sha256(bin, (unsigned char *)buf, len);
	sodium_bin2hex(h, sizeof(h), bin, sizeof(bin));
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

static int do_deploy(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *path = NULL, *hosts = "*", *group = "", *sigpath = NULL;
	const char *key = getenv("KSHIELD_FLEET_KEY"), *keys = NULL;
	int64_t expires = DEFAULT_EXPIRES_MS;
	const char *sites[DEPLOY_MAX_SITES], *expires_s = NULL, *audit_first_s = NULL;
	json_object *sites_arr = NULL;
	int nsites = 0, npos, rc;
	int64_t audit_first = 0;
	bool audit = false, force = false, gated = false;
	const char *pg = NULL, *since = "30d", *proven = NULL;
	json_object *proven_ref = NULL;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no),
		OPT_VAL("--hosts", &hosts), OPT_VAL("--group", &group), OPT_VAL("--sig", &sigpath),
		OPT_VAL("--key", &key), OPT_VAL("--keys", &keys), OPT_VAL("--pg", &pg),
		OPT_VAL("--since", &since), OPT_FLAG("--force", &force),
		OPT_FLAG("--gated", &gated), OPT_VAL("--proven", &proven),
		OPT_VAL("--expires", &expires_s), OPT_LIST("--sites", sites, &nsites, DEPLOY_MAX_SITES),
		OPT_FLAG("--audit", &audit), OPT_VAL("--audit-first", &audit_first_s),
		OPT_END
	};
	char sigdef[4096], shahex[65], *obj = NULL, *sig = NULL;
	size_t len, slen;
	struct ks_meta meta = { 0 };
	struct ks_nats n;
	json_object *d, *old = NULL, *prev = NULL;
	uint64_t rev = 0;
	int64_t version = 0;
	int err;

	if (!ks_opts_parse("fleet deploy", opts, argc, argv, 1, &npos, fleet_help, &rc))
		return rc;
	if (expires_s && (expires = parse_duration_ms(expires_s)) <= 0)
		return ks_usage("bad --expires duration '%s' (e.g. 30d, 12h)", expires_s);
	if (audit_first_s && (audit_first = parse_duration_ms(audit_first_s)) <= 0)
		return ks_usage("bad --audit-first duration '%s' (e.g. 30s, 10m)", audit_first_s);
	if (!npos)
		return ks_usage(DEPLOY_USAGE);
	path = argv[0];
	if (!key)
		return ks_usage("fleet deploy needs --key KEYFILE (a fleet signing key: agents refuse "
				"unsigned desired state); make one with kshield shield keygen PREFIX");
	err = ks_meta_read(path, &meta);
	if (err)
		return ks_report(err);
	if (ks_meta_get(&meta, "name")[0] == '_') {
		ks_meta_free(&meta);
		return ks_usage("%s: shield names starting with '_' are reserved", path);
	}
	if (pg && (err = deploy_preview(path, pg, since, hosts, !audit && !audit_first, force))) {
		ks_meta_free(&meta);
		return ks_report(err);
	}
	err = ks_read_file(path, &obj, &len);
	if (err)
		goto out;
	sodium_bin2hex(shahex, sizeof(shahex), meta.sha256, 32);
	snprintf(sigdef, sizeof(sigdef), "%s.sig", path);
	if (!sigpath && access(sigdef, F_OK) == 0)
		sigpath = sigdef;
	if (sigpath && (err = ks_read_file(sigpath, &sig, &slen)))
		goto out;
	if (!sig)
		fprintf(stderr, "warning: %s has no signature: agents will refuse it\n", path);

	err = open_fleet(&n, &no);
	if (err)
		goto out;
	err = put_object(&n, shahex, obj, len, "storing the object");
	if (err)
		goto close;
	/* The summary travels with the object, gated or not. */
	if ((err = deploy_proven(&n, path, shahex, proven, &proven_ref)))
		goto close;
	if (gated && !proven_ref)
		fprintf(stderr, "warning: no proven summary beside %s (make one with kshield shield "
			"proven): every host audits it as an unproven kernel until promoted\n", path);
	if (nsites && (err = deploy_sites(&n, sites, nsites, &sites_arr)))
		goto close;
	d = json_object_new_object();
	json_object_object_add(d, "name", json_object_new_string(ks_meta_get(&meta, "name")));
	json_object_object_add(d, "sha256", json_object_new_string(shahex));
	json_object_object_add(d, "size", json_object_new_int64(len));
	json_object_object_add(d, "sig", json_object_new_string(sig ? sig : ""));
	json_object_object_add(d, "mode", json_object_new_string(audit || audit_first ? "audit" : "enforce"));
	json_object_object_add(d, "hosts", json_object_new_string(hosts));
	json_object_object_add(d, "group", json_object_new_string(group));
	json_object_object_add(d, "deployed_at", json_object_new_int64(ks_now_ms()));
	json_object_object_add(d, "audit_first_ms", json_object_new_int64(audit_first));
	json_object_object_add(d, "promote_at", json_object_new_int64(audit_first ? ks_now_ms() + audit_first : 0));
	json_object_object_add(d, "by", json_object_new_string("deploy"));
	if (sites_arr)
		json_object_object_add(d, "sites", sites_arr);
	if (proven_ref)
		json_object_object_add(d, "proven", proven_ref);
	if (gated) {
		json_object_object_add(d, "gated", json_object_new_boolean(true));
		json_object_object_add(d, "promoted", json_object_new_array());
	}
	/* Keep one earlier version for rollback; the new one's version is
	 * above it (agents refuse going back to a lower one). */
	if (!ks_kv_get_json(n.desired, ks_meta_get(&meta, "name"), &old, &rev)) {
		json_object *ob = trusted_body(old, key, keys);

		version = ks_json_i64(old, "version");
		json_object_object_del(old, "prev");
		if (!ob)
			fprintf(stderr, "warning: the stored record of %s is not kept for rollback: %s\n",
				ks_meta_get(&meta, "name"), ks_errmsg());
		else if (strcmp(ks_json_str(ob, "mode", ""), "absent"))
			prev = json_object_get(old);	/* signed, as it was */
		json_object_put(ob);
		json_object_put(old);
	}
	{
		json_object *b = d;

		err = sign_and_put(&n, ks_meta_get(&meta, "name"), b, version, expires, prev, key, 0, &d);
		json_object_put(b);
		if (err)
			goto close;
	}
	{
		if (json_output) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "name", json_object_new_string(ks_meta_get(&meta, "name")));
			json_object_object_add(o, "sha256", json_object_new_string(shahex));
			json_object_object_add(o, "mode", json_object_get(json_object_object_get(d, "mode")));
			json_object_object_add(o, "signed", json_object_new_boolean(sig != NULL));
			json_object_object_add(o, "version", json_object_get(json_object_object_get(d, "version")));
			json_object_object_add(o, "expires_at", json_object_get(json_object_object_get(d, "expires_at")));
			json_object_object_add(o, "deployed_at", json_object_get(json_object_object_get(d, "deployed_at")));
			ks_json_print(o);
		} else {
			printf("%s %.12s deployed (%s) to hosts '%s'%s%s, version %lld\n",
			       ks_meta_get(&meta, "name"), shahex, ks_json_str(d, "mode", ""), hosts,
			       *group ? " group " : "", group, (long long)ks_json_i64(d, "version"));
		}
	}
	json_object_put(d);
close:
	ks_nats_close(&n);
out:
	free(obj);
	free(sig);
	ks_meta_free(&meta);
	return err ? ks_report(err) : 0;
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
	json_object *d = record_body(rec);
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

static int fleet_summaries(struct ks_nats *n, const char *only, bool per_host, json_object **out)
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
	*out = json_object_new_array();
	json_object_object_foreach(desired, name, d) {
		if (name[0] == '_' || (only && strcmp(only, name)))
			continue;
		json_object_array_add(*out, summarize(name, d, all, audit, per_host));
	}
	json_object_put(desired);
	json_object_put(all);
	json_object_put(audit);
	if (only && !json_object_array_length(*out)) {
		json_object_put(*out);
		return ks_err(-ENOENT, "shield %s is not in the fleet's desired state", only);
	}
	return 0;
}

static int do_fleet_status(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *only = NULL;
	const struct ks_opt opts[] = { OPTS_NATS(&no), OPT_END };
	struct ks_nats n;
	json_object *arr;
	int err, npos;

	if (!ks_opts_parse("fleet status", opts, argc, argv, 1, &npos, fleet_help, &err))
		return err;
	only = npos ? argv[0] : NULL;
	err = open_fleet(&n, &no);
	if (err)
		return ks_report(err);
	err = fleet_summaries(&n, only, only != NULL, &arr);
	ks_nats_close(&n);
	if (err)
		return ks_report(err);
	if (json_output) {
		ks_json_print(arr);
		return 0;
	}
	printf("%-20s %-8s %-12s %8s %9s %8s %7s %6s %8s %-15s %s\n", "SHIELD", "MODE", "SHA256",
	       "TARGETED", "ENFORCING", "AUDITING", "REFUSED", "FAILED", "AUDITHIT",
	       "PROVEN/UNPR/REF", "BY");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *s = json_object_array_get_idx(arr, i), *ph;

		json_object *k = json_object_object_get(s, "kernels");
		char gate[48] = "-";

		if (json_object_get_boolean(json_object_object_get(s, "gated")) ||
		    ks_json_i64(k, "proven") + ks_json_i64(k, "unproven") + ks_json_i64(k, "refused"))
			snprintf(gate, sizeof(gate), "%lld/%lld/%lld", (long long)ks_json_i64(k, "proven"),
				 (long long)ks_json_i64(k, "unproven"), (long long)ks_json_i64(k, "refused"));
		printf("%-20s %-8s %-12.12s %8lld %9lld %8lld %7lld %6lld %8lld %-15s %s\n",
		       ks_json_str(s, "shield", ""), ks_json_str(s, "mode", ""),
		       ks_json_str(s, "sha256", ""), (long long)ks_json_i64(s, "targeted"),
		       (long long)ks_json_i64(s, "enforcing"), (long long)ks_json_i64(s, "auditing"),
		       (long long)ks_json_i64(s, "refused"), (long long)ks_json_i64(s, "failed"),
		       (long long)ks_json_i64(s, "audit_hit_hosts"), gate, ks_json_str(s, "by", ""));
		if (!json_object_object_get_ex(s, "per_host", &ph))
			continue;
		for (size_t k = 0; k < json_object_array_length(ph); k++) {
			json_object *h = json_object_array_get_idx(ph, k);
			const char *g = ks_json_str(h, "gate", "");
			/* An error first; else, gated and not proven, why
			 * ("unproven kernel: ...", "refused kernel: ..."). */
			const char *why = *ks_json_str(h, "error", "") ? ks_json_str(h, "error", "")
				: *g && strcmp(g, "proven") ? ks_json_str(h, "gate_why", "") : "";

			printf("  %-24s %-10s %-8s %-14s hits %-6lld %s%s\n", ks_json_str(h, "host", ""),
			       ks_json_str(h, "status", ""), ks_json_str(h, "mode", ""),
			       ks_json_str(h, "variant", ""), (long long)ks_json_i64(h, "hits"),
			       json_object_get_boolean(json_object_object_get(h, "promoted")) ?
			       "(promoted) " : "", why);
		}
	}
	json_object_put(arr);
	return 0;
}

/* Wait until @count hosts report @want ("enforcing", "auditing",
 * "refused", "unloaded") for the shield's current desired object. */
static int do_wait(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *name = NULL, *want = "enforcing", *timeout_arg = NULL;
	int count = -1;
	double timeout_s = 60;
	int64_t t0 = ks_now_ms();
	const struct ks_opt opts[] = {
		OPTS_NATS(&no), OPT_VAL("--status", &want), OPT_INT("--count", &count),
		OPT_VAL("--timeout", &timeout_arg), OPT_END
	};
	struct ks_nats n;
	int err, npos;

	if (!ks_opts_parse("fleet wait", opts, argc, argv, 1, &npos, fleet_help, &err))
		return err;
	if (!npos)
		return ks_usage("usage: kshield fleet wait SHIELD [--status S] [--count N] [--timeout SECONDS] NATS");
	name = argv[0];
	if (timeout_arg)
		timeout_s = atof(timeout_arg);
	err = open_fleet(&n, &no);
	if (err)
		return ks_report(err);
	for (;;) {
		json_object *arr, *s;
		long have, need;

		err = fleet_summaries(&n, name, false, &arr);
		if (err == -ETIMEDOUT || err == -EIO) {
			/* NATS busy electing a leader: keep waiting. */
			if (ks_now_ms() - t0 > timeout_s * 1000)
				break;
			usleep(250 * 1000);
			continue;
		}
		if (err)
			break;
		s = json_object_array_get_idx(arr, 0);
		have = ks_json_i64(s, want);
		need = count >= 0 ? count : ks_json_i64(s, "targeted");
		if (have >= need && need > 0) {
			if (json_output) {
				json_object *o = json_object_new_object();

				json_object_object_add(o, "shield", json_object_new_string(name));
				json_object_object_add(o, "status", json_object_new_string(want));
				json_object_object_add(o, "hosts", json_object_new_int64(have));
				json_object_object_add(o, "deploy_to_last_report_ms", json_object_new_int64(
					ks_json_i64(s, "last_report_at") - ks_json_i64(s, "deployed_at")));
				json_object_object_add(o, "waited_ms", json_object_new_int64(ks_now_ms() - t0));
				json_object_object_add(o, "summary", json_object_get(s));
				ks_json_print(o);
			} else {
				printf("%s: %ld hosts %s, %lld ms after deploy\n", name, have, want,
				       (long long)(ks_json_i64(s, "last_report_at") - ks_json_i64(s, "deployed_at")));
			}
			json_object_put(arr);
			break;
		}
		json_object_put(arr);
		if (ks_now_ms() - t0 > timeout_s * 1000) {
			err = ks_err(-ETIMEDOUT, "%s: %ld of %ld hosts %s after %.0f s", name, have, need,
				     want, timeout_s);
			break;
		}
		usleep(200 * 1000);
	}
	ks_nats_close(&n);
	return err ? ks_report(err) : 0;
}

/* promote, rollback and renew: a new version of the desired record, signed
 * with --key, written by compare-and-set. */
enum change_op { CHANGE_PROMOTE, CHANGE_ROLLBACK, CHANGE_RENEW };

static int change(int argc, char **argv, enum change_op op)
{
	static const char *const opname[] = { "promote", "rollback", "renew" };
	struct ks_nats_opts no = { 0 };
	const char *name = NULL, *key = getenv("KSHIELD_FLEET_KEY"), *keys = NULL, *host = NULL;
	int64_t expires = DEFAULT_EXPIRES_MS;
	const char *expires_s = NULL;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no), OPT_VAL("--key", &key), OPT_VAL("--keys", &keys),
		OPT_VAL("--host", &host), OPT_VAL("--expires", &expires_s), OPT_END
	};
	char cmd[32];
	struct ks_nats n;
	json_object *d = NULL, *rec = NULL, *prev;
	uint64_t rev;
	int err, npos;

	snprintf(cmd, sizeof(cmd), "fleet %s", opname[op]);
	if (!ks_opts_parse(cmd, opts, argc, argv, 1, &npos, fleet_help, &err))
		return err;
	if (expires_s && (expires = parse_duration_ms(expires_s)) <= 0)
		return ks_usage("bad --expires duration '%s' (e.g. 30d, 12h)", expires_s);
	name = npos ? argv[0] : NULL;
	if (host && op != CHANGE_PROMOTE)
		return ks_usage("fleet %s: --host is for fleet promote only", opname[op]);
	if (!name || !key)
		return ks_usage("usage: kshield fleet %s SHIELD --key KEYFILE [--expires DURATION] NATS"
				"%s", opname[op], name ? " (--key: agents refuse unsigned desired state)" : "");
	err = open_fleet(&n, &no);
	if (err)
		return ks_report(err);
	for (int tries = 0; tries < 10; tries++) {
		json_object *cur;
		int64_t version;

		err = ks_kv_get_json(n.desired, name, &cur, &rev);
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
		if (op == CHANGE_PROMOTE) {
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
		} else if (op == CHANGE_RENEW) {
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
		err = sign_and_put(&n, name, d, version, expires, prev, key, rev, &rec);
		json_object_put(d);
		d = NULL;
		if (err != -EAGAIN)
			break;
	}
	if (!err) {
		if (json_output) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "shield", json_object_new_string(name));
			json_object_object_add(o, "mode", json_object_new_string(ks_json_str(rec, "mode", "")));
			json_object_object_add(o, "sha256", json_object_new_string(ks_json_str(rec, "sha256", "")));
			json_object_object_add(o, "version", json_object_new_int64(ks_json_i64(rec, "version")));
			ks_json_print(o);
		} else {
			printf("%s: now %s %.12s, version %lld\n", name, ks_json_str(rec, "mode", ""),
			       ks_json_str(rec, "sha256", ""), (long long)ks_json_i64(rec, "version"));
		}
	}
	json_object_put(rec);
	ks_nats_close(&n);
	return err ? ks_report(err) : 0;
}

/* The stored desired record of SHIELD as it is (signed text included). */
static int do_record(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *name = NULL;
	const struct ks_opt opts[] = { OPTS_NATS(&no), OPT_END };
	struct ks_nats n;
	json_object *d;
	int err, npos;

	if (!ks_opts_parse("fleet record", opts, argc, argv, 1, &npos, fleet_help, &err))
		return err;
	if (!npos)
		return ks_usage("usage: kshield fleet record SHIELD NATS");
	name = argv[0];
	err = open_fleet(&n, &no);
	if (err)
		return ks_report(err);
	err = ks_kv_get_json(n.desired, name, &d, NULL);
	ks_nats_close(&n);
	if (err)
		return ks_report(err);
	printf("%s\n", json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(d);
	return 0;
}

/* Store a record prepared elsewhere (signed offline, or kept from before)
 * under SHIELD as it is. Agents judge it: nothing here checks it. */
static int do_publish(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *name = NULL, *file = NULL;
	struct ks_nats n;
	json_object *d;
	const struct ks_opt opts[] = { OPTS_NATS(&no), OPT_END };
	char *buf;
	size_t len;
	int err, npos;

	if (!ks_opts_parse("fleet publish", opts, argc, argv, 2, &npos, fleet_help, &err))
		return err;
	if (npos < 2)
		return ks_usage("usage: kshield fleet publish SHIELD RECORD.json NATS");
	name = argv[0];
	file = argv[1];
	if ((err = ks_read_file(file, &buf, &len)))
		return ks_report(err);
	d = json_tokener_parse(buf);
	free(buf);
	if (!d)
		return ks_usage("%s is not JSON", file);
	err = open_fleet(&n, &no);
	if (!err) {
		err = ks_nats_denied(&n, ks_kv_put_json(n.desired, name, d, 0));
		ks_nats_close(&n);
	}
	json_object_put(d);
	if (err)
		return ks_report(err);
	if (!json_output)
		printf("%s: record published\n", name);
	return 0;
}

static int do_promote(int argc, char **argv)
{
	return change(argc, argv, CHANGE_PROMOTE);
}

static int do_rollback(int argc, char **argv)
{
	return change(argc, argv, CHANGE_ROLLBACK);
}

static int do_renew(int argc, char **argv)
{
	return change(argc, argv, CHANGE_RENEW);
}

/* `fleet keys set`: the fleet's signing keys, as a list signed by a root
 * key (agents started with --root-keys trust exactly the listed keys that
 * are neither expired nor revoked). The list replaces the one before. */
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
	int64_t expires = DEFAULT_EXPIRES_MS, now = ks_now_ms(), version = 0;
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
	if (expires_s && (expires = parse_duration_ms(expires_s)) <= 0)
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
				kexp = parse_duration_ms(colon + 1);
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
	err = open_fleet(&n, &no);
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
	err = open_fleet(&n, &no);
	if (err)
		return ks_report(err);
	err = ks_kv_get_json(n.desired, KS_KEYS_KEY, &rec, NULL);
	ks_nats_close(&n);
	if (err)
		return ks_report(err == -ENOENT ? ks_err(err, "no key list: agents use their --keys "
							 "directories (kshield fleet keys set ...)") : err);
	b = record_body(rec);
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

static int do_keys(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "set", keys_set },
		{ "show", keys_show },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, keys_help);
}

/* Registered agents (each registers when its watcher starts). */
static int do_hosts(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const struct ks_opt opts[] = { OPTS_NATS(&no), OPT_END };
	json_object *all, *arr;
	struct ks_nats n;
	int err;

	if (!ks_opts_parse("fleet hosts", opts, argc, argv, 0, NULL, fleet_help, &err))
		return err;
	err = open_fleet(&n, &no);
	if (!err)
		err = ks_kv_all_json(n.status, "_host.*", &all);
	ks_nats_close(&n);
	if (err)
		return ks_report(err);
	arr = json_object_new_array();
	json_object_object_foreach(all, key, v) {
		(void)key;
		json_object_array_add(arr, json_object_get(v));
	}
	json_object_put(all);
	if (json_output) {
		ks_json_print(arr);
		return 0;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *h = json_object_array_get_idx(arr, i);

		printf("%-32s %-20s %s\n", ks_json_str(h, "host", ""), ks_json_str(h, "groups", ""),
		       json_object_get_boolean(json_object_object_get(h, "kernel")) ? "kernel" : "control-plane");
	}
	json_object_put(arr);
	return 0;
}

static volatile sig_atomic_t agent_stop;

static void on_signal(int sig)
{
	(void)sig;
	agent_stop = 1;
}

static int do_fleet_agent(int argc, char **argv)
{
	struct ks_fleet_agent_cfg cfg = { 0 };
	const struct ks_opt opts[] = { OPTS_FLEET_AGENT(&cfg), OPT_END };
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	if (!ks_opts_parse("fleet agent", opts, argc, argv, 0, NULL, fleet_help, &err))
		return err;
	ks_nats_opts_env(&cfg.nats);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Signed shields only, so signed sites manifests only (same keys). */
	{
		char keys[4096];

		ks_fleet_agent_keys_dir(&cfg, keys, sizeof(keys));
		ks_kernel_sites_policy(NULL, keys);
	}
	err = ks_fleet_agent_run(&cfg, &agent_stop);
	return err ? ks_report(err) : 0;
}

/* One shipping pass to completion (what the agent's shipper does in a
 * loop): for tests, and to drain a store by hand. */
static int do_ship(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *store = NULL, *host = NULL;
	char hn[256];
	struct ks_nats n;
	int64_t total = 0, r, mark = 0;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no), OPT_VAL("--store", &store), OPT_VAL("--host", &host), OPT_END
	};
	int err;

	if (!ks_opts_parse("fleet ship", opts, argc, argv, 0, NULL, fleet_help, &err))
		return err;
	if (!store)
		return ks_usage("usage: kshield fleet ship --store DB [--host NAME] NATS");
	if (!host) {
		gethostname(hn, sizeof(hn));
		host = hn;
	}
	ks_nats_opts_env(&no);
	err = ks_nats_open(&n, &no, true, true);
	if (err)
		return ks_report(err);
	while ((r = ks_ship_pass(&n, host, store, 0, &mark)) > 0)
		total += r;
	ks_nats_close(&n);
	if (r < 0)
		return ks_report((int)r);
	if (json_output) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "host", json_object_new_string(host));
		json_object_object_add(o, "shipped", json_object_new_int64(total));
		json_object_object_add(o, "mark", json_object_new_int64(mark));
		ks_json_print(o);
	} else {
		printf("%s: shipped %lld events, mark %lld\n", host, (long long)total, (long long)mark);
	}
	return 0;
}

static int fleet_help(void)
{
	fprintf(stderr,
		"Usage: kshield fleet deploy FILE --key KEYFILE [--keys DIR] [--hosts GLOB|--group NAME]\n"
		"                             [--audit|--audit-first DURATION] [--expires DURATION]\n"
		"                             [--sites MANIFEST]... [--gated] [--proven SUMMARY]\n"
		"                             [--pg CONNINFO [--since 30d] [--force]] NATS\n"
		"       kshield fleet status [SHIELD] NATS\n"
		"       kshield fleet wait SHIELD [--status enforcing|auditing|refused|unloaded] [--count N] [--timeout S] NATS\n"
		"       kshield fleet promote|rollback|renew SHIELD --key KEYFILE [--keys DIR] [--expires DURATION] NATS\n"
		"       kshield fleet promote SHIELD --host GLOB ...   (gated: enforce on those unproven kernels)\n"
		"       kshield fleet keys set --root ROOTKEY [--add PUBFILE[:DURATION]]... [--revoke KEYID]...\n"
		"                              [--expires DURATION] NATS\n"
		"       kshield fleet keys show NATS\n"
		"       kshield fleet record SHIELD NATS   /   fleet publish SHIELD RECORD.json NATS\n"
		"       kshield fleet hosts NATS\n"
		"       kshield fleet agent " KS_FLEET_AGENT_OPTS_HELP
		"       kshield fleet ship --store DB [--host NAME] NATS\n"
		KS_NATS_OPTS_HELP
		"\n"
		"deploy stores the object (and its FILE.sig) in JetStream and sets the shield's\n"
		"desired state: a record (object sha256, mode, targets, a monotonic version,\n"
		"an expiry, default 30d) signed with --key. Agents verify it and the object\n"
		"against their --keys (or the key list their --root-keys trust), refuse a\n"
		"version below one they accepted and a new one already expired, load it\n"
		"new-before-old and report status. --audit-first loads it in audit mode; agents\n"
		"enforce after DURATION unless a host reported audit hits (kshield_audit).\n"
		"--pg first previews the shield's impact per targeted host (shield impact --pg)\n"
		"and refuses to go straight to enforce where it would have hit, unless --force.\n"
		"rollback signs the previous version again, or 'absent' for a first version;\n"
		"renew re-signs the current one with a new expiry (before it runs out).\n"
		"Nothing read from the bucket is signed again unless it verifies against --key's\n"
		"own public key or one in --keys DIR (a stored record someone else wrote is not\n"
		"kept for rollback, and promote/rollback/renew refuse it).\n"
		"keys set publishes the fleet's signing keys, each with an expiry, and revoked\n"
		"key ids, signed by a root key.\n"
		"--sites ships a kernel sites manifest (and its MANIFEST.sig) with a shield on\n"
		"kernel:FUNCTION, one per kernel build; each agent verifies and installs the\n"
		"one for its kernel in its sites_dir before loading.\n"
		"The shield's proven summary (NAME.proven.json beside FILE, or --proven; see\n"
		"kshield shield proven) travels with it, verified by the agents like the object.\n"
		"--gated (or an agent's own --gated): a host enforces only where the matrix\n"
		"proved the loaded variant on its very kernel (release and build ID); elsewhere\n"
		"it audits and reports 'unproven kernel' until promote --host GLOB names it;\n"
		"a kernel where the variant failed on the matrix ('refused') never enforces.\n"
		"status shows hosts per shield by kernel: PROVEN/UNPR(oven)/REF(used).\n");
	return 0;
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return fleet_help();
}

int do_fleet(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "help", do_help },
		{ "deploy", do_deploy },
		{ "status", do_fleet_status },
		{ "wait", do_wait },
		{ "hosts", do_hosts },
		{ "promote", do_promote },
		{ "rollback", do_rollback },
		{ "renew", do_renew },
		{ "record", do_record },
		{ "publish", do_publish },
		{ "keys", do_keys },
		{ "agent", do_fleet_agent },
		{ "ship", do_ship },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, do_help);
}
#endif /* KSHIELD_STATIC */
