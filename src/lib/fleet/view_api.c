// SPDX-License-Identifier: MIT
/* view_api.c - the fleet page's JSON: the NATS half, and the dispatcher
 * (view_api.h). What the hosts report comes from kshield_status through
 * the same summaries `fleet status` prints (rollout.c), so the page and
 * the command line count alike.
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "clock.h"
#include "err.h"
#include "fleet_dl.h"
#include "fleet_kv.h"
#include "meta.h"
#include "rollout.h"
#include "view_api.h"

#define HOSTS_LISTED 1000	/* a shield's host list beyond this is counted, not listed */
#define SEEN_RECENTLY_MS (5 * 60 * 1000)	/* agents re-register every 30 s */

#define MIRROR_RESYNC_MS (5 * 60 * 1000)	/* read the whole bucket again this often anyway */

/* Apply one entry of a watcher to @map: a value put, or a key gone. */
static void mirror_apply(json_object *map, kvEntry *e)
{
	const char *key = nats_fn.kvEntry_Key(e);
	json_object *val;

	if (nats_fn.kvEntry_Operation(e) != kvOp_Put) {
		json_object_object_del(map, key);
		return;
	}
	if ((val = json_tokener_parse(nats_fn.kvEntry_ValueString(e))))
		json_object_object_add(map, key, val);
}

/* Keep m->map equal to the bucket: its initial values into a fresh map,
 * swapped in whole; then every change. A reconnect (libnats watchers can
 * go silent after one), an error or the resync period starts it again. */
static void *mirror_run(void *arg)
{
	struct ks_view_mirror *m = arg;
	struct ks_view *v = m->v;
	json_object *fresh = NULL;
	kvWatcher *w = NULL;
	int gen = -1;
	int64_t made = 0;

	while (!v->stop) {
		kvEntry *e = NULL;
		natsStatus s;

		if (w && (gen != v->n.reconnects || ks_now_ms() - made > MIRROR_RESYNC_MS)) {
			nats_fn.kvWatcher_Destroy(w);
			w = NULL;
		}
		if (!w) {
			kvWatchOptions wo;

			nats_fn.kvWatchOptions_Init(&wo);
			gen = v->n.reconnects;
			if (nats_fn.kvStore_WatchAll(&w, m->kv, &wo) != NATS_OK) {
				w = NULL;
				usleep(300 * 1000);
				continue;
			}
			made = ks_now_ms();
			json_object_put(fresh);
			fresh = json_object_new_object();
		}
		s = nats_fn.kvWatcher_Next(&e, w, 500);
		if (s == NATS_TIMEOUT)
			continue;
		if (s != NATS_OK) {
			nats_fn.kvWatcher_Destroy(w);
			w = NULL;
			usleep(200 * 1000);
			continue;
		}
		if (!e) {	/* the initial values are all in */
			pthread_mutex_lock(&v->mu);
			json_object_put(m->map);
			m->map = fresh;
			m->ready = true;
			pthread_mutex_unlock(&v->mu);
			fresh = NULL;
			continue;
		}
		if (fresh) {
			mirror_apply(fresh, e);
		} else {
			pthread_mutex_lock(&v->mu);
			mirror_apply(m->map, e);
			pthread_mutex_unlock(&v->mu);
		}
		nats_fn.kvEntry_Destroy(e);
	}
	if (w)
		nats_fn.kvWatcher_Destroy(w);
	json_object_put(fresh);
	return NULL;
}

int ks_view_open(struct ks_view *v, const struct ks_nats_opts *no, const char *pginfo)
{
	struct ks_view_mirror *ms[] = { &v->desired, &v->status, &v->audit };
	int err;

	memset(v, 0, sizeof(*v));
	pthread_mutex_init(&v->mu, NULL);
	if (!(v->pginfo = strdup(pginfo)))
		return ks_err(-ENOMEM, "out of memory");
	if ((err = ks_fleet_pq_load()) || (err = ks_nats_open(&v->n, no, false, false)))
		return err;
	v->desired.kv = v->n.desired;
	v->status.kv = v->n.status;
	v->audit.kv = v->n.audit;
	for (int i = 0; i < 3; i++) {
		ms[i]->v = v;
		ms[i]->map = json_object_new_object();
		if (pthread_create(&ms[i]->th, NULL, mirror_run, ms[i]))
			return ks_err(-EAGAIN, "can't start a thread");
		ms[i]->started = true;
	}
	return 0;
}

void ks_view_close(struct ks_view *v)
{
	struct ks_view_mirror *ms[] = { &v->desired, &v->status, &v->audit };

	v->stop = 1;
	for (int i = 0; i < 3; i++) {
		if (ms[i]->started)
			pthread_join(ms[i]->th, NULL);
		json_object_put(ms[i]->map);
	}
	if (v->pg)
		pq_fn.PQfinish(v->pg);
	ks_nats_close(&v->n);
	free(v->pginfo);
	pthread_mutex_destroy(&v->mu);
	memset(v, 0, sizeof(*v));
}

bool ks_view_ready(struct ks_view *v, int timeout_ms)
{
	int64_t t0 = ks_now_ms();
	bool ready;

	do {
		pthread_mutex_lock(&v->mu);
		ready = v->desired.ready && v->status.ready && v->audit.ready;
		pthread_mutex_unlock(&v->mu);
		if (!ready)
			usleep(50 * 1000);
	} while (!ready && ks_now_ms() - t0 < timeout_ms);
	return ready;
}

/* The buckets as the mirrors hold them (the caller holds v->mu). */
static int snapshot(struct ks_view *v)
{
	if (!v->desired.ready || !v->status.ready || !v->audit.ready)
		return ks_err(-EAGAIN, "still reading the fleet's buckets from NATS: try again in a moment");
	return 0;
}

static void add_str(json_object *o, const char *k, const char *s)
{
	json_object_object_add(o, k, json_object_new_string(s ? s : ""));
}

static void add_i64(json_object *o, const char *k, int64_t n)
{
	json_object_object_add(o, k, json_object_new_int64(n));
}

static void bump(json_object *counts, const char *key)
{
	json_object *c;

	if (json_object_object_get_ex(counts, key, &c))
		json_object_set_int64(c, json_object_get_int64(c) + 1);
	else
		json_object_object_add(counts, key, json_object_new_int64(1));
}

/* The host's registration (_host.<key>), or NULL. */
static json_object *host_rec(struct ks_view *v, const char *host)
{
	char key[300], safe[256];
	json_object *h;

	ks_nats_key_safe(host, safe, sizeof(safe));
	snprintf(key, sizeof(key), "_host.%s", safe);
	return json_object_object_get_ex(v->status.map, key, &h) ? h : NULL;
}

/* Why a host is not enforcing, in a few words the page groups by: the
 * agent's refusal, else a gate that held it in audit. */
static const char *reason(json_object *e)
{
	const char *err = ks_json_str(e, "error", ""), *g = ks_json_str(e, "gate", "");

	if (*err)
		return err;
	if (!strcmp(g, "unproven"))
		return "not proven on this kernel (gated)";
	if (!strcmp(g, "refused"))
		return "failed on this kernel in the matrix (gated)";
	return "";
}

/* A summary's per-host entries into counts: variants, refusal reasons. */
static void mix(json_object *sum)
{
	json_object *ph = json_object_object_get(sum, "per_host");
	json_object *variants = json_object_new_object(), *why = json_object_new_object();
	int64_t answered = 0;

	for (size_t i = 0; i < json_object_array_length(ph); i++) {
		json_object *e = json_object_array_get_idx(ph, i);
		const char *st = ks_json_str(e, "status", ""), *r = reason(e);

		if (ks_json_i64(e, "deployed_at") != ks_json_i64(sum, "deployed_at"))
			continue;	/* answers an earlier deployment */
		answered++;
		if (!strcmp(st, "enforcing") || !strcmp(st, "auditing"))
			bump(variants, *ks_json_str(e, "variant", "") ? ks_json_str(e, "variant", "") : "-");
		if (*r && strcmp(st, "enforcing"))
			bump(why, r);
	}
	json_object_object_add(sum, "variants", variants);
	json_object_object_add(sum, "reasons", why);
	/* Targeted hosts with no answer to this deployment yet. */
	add_i64(sum, "not_reporting", ks_json_i64(sum, "targeted") > answered ?
		ks_json_i64(sum, "targeted") - answered : 0);
}

static int summaries(struct ks_view *v, const char *only, json_object **arr)
{
	int err = snapshot(v);

	if (err)
		return err;
	err = ks_rollout_summaries_of(v->desired.map, v->status.map, v->audit.map, only, true, arr);
	for (size_t i = 0; !err && i < json_object_array_length(*arr); i++)
		mix(json_object_array_get_idx(*arr, i));
	return err;
}

/* Hosts registered: how many, by kind, and seen in the last minutes. */
static json_object *host_counts(struct ks_view *v)
{
	json_object *o = json_object_new_object();
	int64_t total = 0, kernel = 0, recent = 0, now = ks_now_ms();

	json_object_object_foreach(v->status.map, key, h) {
		if (strncmp(key, "_host.", 6))
			continue;
		total++;
		kernel += json_object_get_boolean(json_object_object_get(h, "kernel"));
		recent += now - ks_json_i64(h, "at") < SEEN_RECENTLY_MS;
	}
	add_i64(o, "registered", total);
	add_i64(o, "kernel", kernel);
	add_i64(o, "control_plane", total - kernel);
	add_i64(o, "seen_5m", recent);
	return o;
}

static int api_coverage(struct ks_view *v, json_object *o)
{
	json_object *arr;
	int err = summaries(v, NULL, &arr);

	if (err)
		return err;
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		json_object_object_del(json_object_array_get_idx(arr, i), "per_host");
	json_object_object_add(o, "shields", arr);
	json_object_object_add(o, "hosts", host_counts(v));
	return ks_view_pg_hits(v, o);
}

static int api_shield(struct ks_view *v, const char *name, json_object *o)
{
	json_object *arr, *sum, *ph, *list = json_object_new_array(), *groups = json_object_new_object();
	json_object *garr = json_object_new_array();
	int err = summaries(v, name, &arr);

	json_object_object_add(o, "hosts", list);
	json_object_object_add(o, "groups", garr);
	if (err) {
		json_object_put(groups);
		return err;
	}
	sum = json_object_get(json_object_array_get_idx(arr, 0));
	json_object_put(arr);
	ph = json_object_get(json_object_object_get(sum, "per_host"));
	json_object_object_del(sum, "per_host");
	json_object_object_add(o, "summary", sum);
	/* Each host with its kernel (from its registration), grouped by
	 * kernel, arch, variant, mode, status and proof. */
	for (size_t i = 0; i < json_object_array_length(ph); i++) {
		json_object *e = json_object_array_get_idx(ph, i), *h, *row = json_object_new_object();
		const char *g;
		char gk[1024];

		h = host_rec(v, ks_json_str(e, "host", ""));
		g = ks_json_str(e, "gate", "");
		add_str(row, "host", ks_json_str(e, "host", ""));
		add_str(row, "release", ks_json_str(h, "release", ""));
		add_str(row, "arch", ks_json_str(h, "arch", ""));
		add_str(row, "variant", ks_json_str(e, "variant", ""));
		add_str(row, "mode", ks_json_str(e, "mode", ""));
		add_str(row, "status", ks_json_i64(e, "deployed_at") == ks_json_i64(sum, "deployed_at") ?
			ks_json_str(e, "status", "") : "stale");
		add_str(row, "proof", !*g ? "not gated" : !strcmp(g, "proven") ? "proven on this kernel" :
			json_object_get_boolean(json_object_object_get(e, "promoted")) ?
			"unproven, promoted" : g);
		add_str(row, "why", reason(e));
		add_i64(row, "hits", ks_json_i64(e, "hits"));
		add_i64(row, "at", ks_json_i64(e, "at"));
		json_object_object_add(row, "kernel", json_object_new_boolean(
			json_object_get_boolean(json_object_object_get(e, "kernel"))));
		snprintf(gk, sizeof(gk), "%s\t%s\t%s\t%s\t%s\t%s", ks_json_str(row, "release", ""),
			 ks_json_str(row, "arch", ""), ks_json_str(row, "variant", ""),
			 ks_json_str(row, "mode", ""), ks_json_str(row, "status", ""),
			 ks_json_str(row, "proof", ""));
		bump(groups, gk);
		if (json_object_array_length(list) < HOSTS_LISTED)
			json_object_array_add(list, row);
		else
			json_object_put(row);
	}
	add_i64(o, "hosts_total", json_object_array_length(ph));
	json_object_put(ph);
	json_object_object_foreach(groups, k, n) {
		static const char *const keys[] = { "release", "arch", "variant", "mode", "status", "proof" };
		json_object *g = json_object_new_object();
		char buf[1024], *save = NULL, *t;
		int i = 0;

		snprintf(buf, sizeof(buf), "%s", k);
		for (t = strtok_r(buf, "\t", &save); t && i < 6; t = strtok_r(NULL, "\t", &save))
			add_str(g, keys[i++], t);
		add_i64(g, "hosts", json_object_get_int64(n));
		json_object_array_add(garr, g);
	}
	json_object_put(groups);
	return ks_view_pg_shield(v, name, o);
}

/* The shield's hunt, from its own object's metadata in kshield_objects. */
static int api_hunt(struct ks_view *v, const char *name, json_object *o)
{
	json_object *d, *rec;
	struct ks_meta meta;
	char *obj = NULL, *sql = NULL, got[65];
	size_t len;
	bool transient;
	int err = snapshot(v);

	if (err)
		return err;
	if (!json_object_object_get_ex(v->desired.map, name, &rec))
		return ks_err(-ENOENT, "shield %s is not in the fleet's desired state", name);
	d = ks_desired_body(rec);
	err = ks_fleet_object_get(v->n.objects, ks_json_str(d, "sha256", ""), &obj, &len, got, &transient);
	json_object_put(d);
	if (err)
		return err;
	err = ks_meta_read_buf(name, obj, len, &meta);
	free(obj);
	if (err)
		return err;
	err = ks_meta_hunt_sql(&meta, &sql);
	ks_meta_free(&meta);
	if (err == -ENOENT) {
		add_str(o, "hunt", "");
		json_object_object_add(o, "rows", json_object_new_array());
		return 0;
	}
	if (err)
		return err;
	add_str(o, "hunt", name);
	err = ks_view_pg_hunt(v, name, sql, o);
	free(sql);
	return err;
}

static int api_host(struct ks_view *v, const char *host, json_object *o)
{
	json_object *h, *shields = json_object_new_array();
	char safe[256];
	size_t sl;
	int err = snapshot(v);

	json_object_object_add(o, "shields", shields);
	if (err)
		return err;
	h = host_rec(v, host);
	json_object_object_add(o, "host", h ? json_object_get(h) : json_object_new_object());
	add_str(o, "name", host);
	ks_nats_key_safe(host, safe, sizeof(safe));
	sl = strlen(safe);
	/* <shield>.<host key>: this host's entries. */
	json_object_object_foreach(v->status.map, key, e) {
		size_t kl = strlen(key);

		if (key[0] == '_' || kl <= sl + 1 || strcmp(key + kl - sl, safe) || key[kl - sl - 1] != '.')
			continue;
		json_object_array_add(shields, json_object_get(e));
	}
	if (!h && !json_object_array_length(shields))
		add_str(o, "unknown", "no agent registered under this name");
	return ks_view_pg_host(v, host, o);
}

/* What waits on an operator: audit-first rollouts, gates holding kernels
 * back, records nearing their expiry; and the command that acts. */
static int api_rollouts(struct ks_view *v, json_object *o)
{
	json_object *arr, *out = json_object_new_array();
	int64_t now = ks_now_ms();
	int err = summaries(v, NULL, &arr);

	json_object_object_add(o, "rollouts", out);
	if (err)
		return err;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *s = json_object_array_get_idx(arr, i), *r = json_object_new_object();
		json_object *ph = json_object_object_get(s, "per_host"), *unproven = json_object_new_object();
		json_object *cmds = json_object_new_array(), *rec, *d;
		const char *name = ks_json_str(s, "shield", "");
		int64_t exp = ks_json_i64(s, "expires_at"), promote_at = 0, af = 0;
		char cmd[512];

		if (json_object_object_get_ex(v->desired.map, name, &rec)) {
			d = ks_desired_body(rec);
			promote_at = ks_json_i64(d, "promote_at");
			af = ks_json_i64(d, "audit_first_ms");
			json_object_put(d);
		}
		for (size_t k = 0; k < json_object_array_length(ph); k++) {
			json_object *e = json_object_array_get_idx(ph, k);

			if (!strcmp(ks_json_str(e, "gate", ""), "unproven") &&
			    !json_object_get_boolean(json_object_object_get(e, "promoted"))) {
				json_object *hr = host_rec(v, ks_json_str(e, "host", ""));

				bump(unproven, *ks_json_str(hr, "release", "") ? ks_json_str(hr, "release", "")
				     : "(kernel not reported)");
			}
		}
		add_str(r, "shield", name);
		add_str(r, "mode", ks_json_str(s, "mode", ""));
		add_str(r, "by", ks_json_str(s, "by", ""));
		add_i64(r, "version", ks_json_i64(s, "version"));
		add_i64(r, "deployed_at", ks_json_i64(s, "deployed_at"));
		add_i64(r, "audit_first_ms", af);
		add_i64(r, "promote_at", promote_at);
		add_i64(r, "expires_at", exp);
		add_i64(r, "expires_in_ms", exp - now);
		add_i64(r, "targeted", ks_json_i64(s, "targeted"));
		add_i64(r, "enforcing", ks_json_i64(s, "enforcing"));
		add_i64(r, "auditing", ks_json_i64(s, "auditing"));
		add_i64(r, "audit_hit_hosts", ks_json_i64(s, "audit_hit_hosts"));
		json_object_object_add(r, "gated", json_object_get(json_object_object_get(s, "gated")));
		json_object_object_add(r, "kernels", json_object_get(json_object_object_get(s, "kernels")));
		json_object_object_add(r, "unproven_kernels", unproven);
		json_object_object_add(r, "audit_first", json_object_new_boolean(
			promote_at > 0 && !strcmp(ks_json_str(s, "mode", ""), "audit")));
		/* The page changes nothing: it shows what to sign and run. */
		if (!strcmp(ks_json_str(s, "mode", ""), "audit")) {
			snprintf(cmd, sizeof(cmd), "kshield fleet promote %s --key KEYFILE --nats URLS", name);
			json_object_array_add(cmds, json_object_new_string(cmd));
		}
		if (json_object_object_length(unproven)) {
			snprintf(cmd, sizeof(cmd), "kshield fleet promote %s --host 'GLOB' --key KEYFILE --nats URLS",
				 name);
			json_object_array_add(cmds, json_object_new_string(cmd));
		}
		if (exp - now < (int64_t)7 * 86400000) {
			snprintf(cmd, sizeof(cmd), "kshield fleet renew %s --key KEYFILE --expires 30d --nats URLS",
				 name);
			json_object_array_add(cmds, json_object_new_string(cmd));
		}
		snprintf(cmd, sizeof(cmd), "kshield fleet rollback %s --key KEYFILE --nats URLS", name);
		json_object_array_add(cmds, json_object_new_string(cmd));
		json_object_object_add(r, "commands", cmds);
		json_object_array_add(out, r);
	}
	json_object_put(arr);
	return 0;
}

/* Every registered host (name, kind, kernel, last seen), for the host
 * picker; cut at HOSTS_LISTED with the total given. */
static int api_hosts(struct ks_view *v, const char *glob, json_object *o)
{
	json_object *list = json_object_new_array();
	int64_t total = 0;
	int err = snapshot(v);

	json_object_object_add(o, "hosts", list);
	if (err)
		return err;
	json_object_object_foreach(v->status.map, key, h) {
		json_object *r;

		if (strncmp(key, "_host.", 6) || (*glob && fnmatch(glob, ks_json_str(h, "host", ""), 0)))
			continue;
		if (total++ >= HOSTS_LISTED)
			continue;
		r = json_object_new_object();
		add_str(r, "host", ks_json_str(h, "host", ""));
		add_str(r, "release", ks_json_str(h, "release", ""));
		add_str(r, "arch", ks_json_str(h, "arch", ""));
		add_str(r, "agent", ks_json_str(h, "agent", ""));
		add_i64(r, "at", ks_json_i64(h, "at"));
		json_object_object_add(r, "kernel", json_object_get(json_object_object_get(h, "kernel")));
		json_object_array_add(list, r);
	}
	add_i64(o, "total", total);
	json_object_object_add(o, "counts", host_counts(v));
	return 0;
}

int ks_view_api(void *ctx, const char *what, const char *name, char **body, size_t *len)
{
	struct ks_view *v = ctx;
	json_object *o = json_object_new_object();
	int64_t t0 = ks_now_ms();
	int err, code = 200;
	const char *txt;

	/* One request at a time, and no change applied meanwhile: json-c's
	 * reference counts are not atomic. */
	pthread_mutex_lock(&v->mu);
	if (!strcmp(what, "coverage"))
		err = api_coverage(v, o);
	else if (!strcmp(what, "shield") && *name)
		err = api_shield(v, name, o);
	else if (!strcmp(what, "hunt") && *name)
		err = api_hunt(v, name, o);
	else if (!strcmp(what, "host") && *name)
		err = api_host(v, name, o);
	else if (!strcmp(what, "rollouts"))
		err = api_rollouts(v, o);
	else if (!strcmp(what, "hosts"))
		err = api_hosts(v, name, o);
	else
		err = ks_err(-EINVAL, "unknown API path /api/%s (or ?name= missing)", what);
	if (err) {
		code = err == -ENOENT ? 404 : err == -EINVAL ? 400 : 503;
		add_str(o, "error", ks_errmsg());
	}
	add_i64(o, "at", ks_now_ms());
	add_i64(o, "took_ms", ks_now_ms() - t0);
	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	*len = strlen(txt);
	*body = malloc(*len + 1);
	if (*body)
		memcpy(*body, txt, *len + 1);
	json_object_put(o);
	pthread_mutex_unlock(&v->mu);
	return code;
}
#endif /* KSHIELD_STATIC */
