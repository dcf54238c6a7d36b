// SPDX-License-Identifier: MIT
/* fleet_converge.c - one host's side of the fleet: watch kshield_desired,
 * converge the loaded shields on it, report status into kshield_status.
 *
 * A desired record is acted on only when its signed body verifies against a
 * trusted key (--keys, or the key list a --root-keys key signed), its
 * version is not below the highest this host accepted for that shield
 * (<state>/seen.json, so a restart does not forget), and a new version has
 * not expired. Anything else (a forged, unsigned, replayed or expired
 * record, a deleted one) is reported "refused" and changes nothing here.
 * Desired state and objects are read-only to an agent: audit-first hits go
 * to kshield_audit, and each agent promotes its own shield when the quiet
 * period has passed with no host reporting hits there.
 *
 * Convergence is idempotent and driven by what the kernel pins say is loaded
 * (ks_shield_get), so a restarted or long-offline agent simply converges on
 * the current desired state when its watcher delivers it. An object is
 * loaded only after its bytes match the desired sha256 and its Ed25519
 * signature verifies against a key in --keys; otherwise the status says
 * why ("refused") and whatever was loaded before keeps enforcing. A desired
 * record may carry kernel sites manifests (one per kernel build ID, for
 * shields on kernel:FUNCTION): the one for this host's kernel is checked
 * the same way (sha256, signature by a --keys key) and written into the
 * sites directory before the load; the others are not this host's.
 *
 * The desired records and keys this host accepts are fleet_accept.c's, the
 * converging of one shield fleet_apply.c's; here the watch loop.
 *
 * The watcher is recreated after every reconnect (libnats 3.4 watchers can
 * go silent then) and every --resync seconds (its consumer may have lived
 * on a server that died while our own connection did not notice).
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <sodium.h>
#include "err.h"
#include "log.h"
#include "fleet_converge.h"
#include "fleet_kv.h"
#include "fleet_ship.h"
#include "loader.h"
#include "fleet_dl.h"
#include "fleet_converge_int.h"

static struct fa_shield *shield_slot(struct fa *a, const char *name)
{
	for (int i = 0; i < a->nsh; i++)
		if (!strcmp(a->sh[i].name, name))
			return &a->sh[i];
	if (a->nsh == FA_MAX_SHIELDS || strlen(name) >= KS_NAME_LEN)
		return NULL;
	memset(&a->sh[a->nsh], 0, sizeof(a->sh[0]));
	snprintf(a->sh[a->nsh].name, KS_NAME_LEN, "%s", name);
	return &a->sh[a->nsh++];
}


static void tick(struct fa *a)
{
	if (a->key_expiry && ks_now_ms() >= a->key_expiry)
		ks_fa_keys_install(a, ks_fa_keylist);	/* a listed key just expired */
	for (int i = 0; i < a->nsh; i++) {
		struct fa_shield *s = &a->sh[i];
		struct ks_shield_state st;
		enum ks_mode mode;
		char sha[65];
		bool loaded;

		if (s->retry) {
			ks_fa_converge(a, s);
			continue;
		}
		if (!s->desired || !s->reported || s->refused)
			continue;
		loaded = ks_fa_current(a, s, sha, &mode, &st);
		if (!strcmp(ks_json_str(s->desired, "mode", "absent"), "absent") ||
		    !ks_fleet_targets(s->desired, a->host, a->cfg->groups))
			continue;
		/* Unloaded behind our back, or a new hit count: converge
		 * re-loads or just re-reports (only changes are written). */
		if (!loaded || strcmp(sha, ks_json_str(s->desired, "sha256", "")))
			continue;	/* refused/failed objects wait for a new deploy */
		ks_fa_audit_report(a, s, &st);
		ks_fa_converge(a, s);
	}
}

static void register_host(struct fa *a)
{
	json_object *o = json_object_new_object();
	struct utsname u;
	char key[300];

	json_object_object_add(o, "host", json_object_new_string(a->host));
	json_object_object_add(o, "groups", json_object_new_string(a->cfg->groups ? a->cfg->groups : ""));
	json_object_object_add(o, "kernel", json_object_new_boolean(!a->cfg->control_plane));
	/* What the fleet page shows of a host: its kernel and agent. */
	if (!uname(&u)) {
		json_object_object_add(o, "release", json_object_new_string(u.release));
		json_object_object_add(o, "arch", json_object_new_string(u.machine));
	}
	json_object_object_add(o, "agent", json_object_new_string(KSHIELD_VERSION));
	if (a->cfg->host_facts)
		a->cfg->host_facts(o);
	json_object_object_add(o, "at", json_object_new_int64(ks_now_ms()));
	snprintf(key, sizeof(key), "_host.%s", a->key);
	ks_kv_put_json(a->n->status, key, o, 0);
	json_object_put(o);
}

static void handle_entry(struct fa *a, kvEntry *e)
{
	const char *key = nats_fn.kvEntry_Key(e);
	json_object *rec = nats_fn.kvEntry_Operation(e) == kvOp_Put ?
			   json_tokener_parse(nats_fn.kvEntry_ValueString(e)) : NULL;
	struct fa_shield *s;

	if (!strcmp(key, KS_KEYS_KEY)) {
		if (a->cfg->root_dir)
			ks_fa_take_keys(a, rec, false);
		json_object_put(rec);
		return;
	}
	if (key[0] == '_' || !(s = shield_slot(a, key))) {
		json_object_put(rec);
		return;
	}
	json_object_put(s->raw);
	s->raw = rec;
	ks_fa_take_record(a, s);
}

static void *fa_loop(void *arg)
{
	struct fa *a = arg;
	int resync_ms = (a->cfg->resync_s > 0 ? a->cfg->resync_s : 30) * 1000;
	int report_ms = a->cfg->report_ms > 0 ? a->cfg->report_ms : 1000;

	while (!*a->stop) {
		int64_t now = ks_now_ms();
		kvEntry *e = NULL;
		natsStatus ns;

		if (a->w && (a->gen != a->n->reconnects || now - a->w_made > resync_ms)) {
			nats_fn.kvWatcher_Destroy(a->w);
			a->w = NULL;
		}
		if (!a->w) {
			kvWatchOptions wo;

			nats_fn.kvWatchOptions_Init(&wo);
			a->gen = a->n->reconnects;
			if (nats_fn.kvStore_WatchAll(&a->w, a->n->desired, &wo) != NATS_OK) {
				a->w = NULL;
				usleep(300 * 1000);
				continue;
			}
			a->w_made = now;
			register_host(a);
		}
		ns = nats_fn.kvWatcher_Next(&e, a->w, 250);
		if (ns == NATS_OK && e) {
			handle_entry(a, e);
			nats_fn.kvEntry_Destroy(e);
		} else if (ns != NATS_OK && ns != NATS_TIMEOUT) {
			nats_fn.kvWatcher_Destroy(a->w);
			a->w = NULL;
			usleep(200 * 1000);
		}
		if (now - a->last_tick >= report_ms) {
			a->last_tick = now;
			tick(a);
		}
	}
	if (a->w)
		nats_fn.kvWatcher_Destroy(a->w);
	for (int i = 0; i < a->nsh; i++) {
		json_object_put(a->sh[i].desired);
		json_object_put(a->sh[i].raw);
		json_object_put(a->sh[i].proven);
	}
	json_object_put(a->seen);
	return NULL;
}

int ks_converge_run(const struct ks_converge_cfg *cfg_in, volatile sig_atomic_t *stop)
{
	struct ks_converge_cfg cfg = *cfg_in;
	struct ks_nats n;
	struct ks_ship *ship = NULL;
	char hostname[256];
	struct fa *fa;
	pthread_attr_t attr;
	int ninst = cfg.control_plane && cfg.instances > 0 ? cfg.instances : 1, err;

	if (!cfg.keys_dir == !cfg.root_dir)
		return ks_err(-EINVAL, "the fleet agent needs --keys DIR (trusted public keys) or "
			      "--root-keys DIR (root keys: trust the key list they sign), not both");
	if (cfg.root_dir && cfg.control_plane)
		return ks_err(-EINVAL, "--root-keys is for real agents, not --control-plane");
	if (!cfg.host) {
		gethostname(hostname, sizeof(hostname));
		cfg.host = hostname;
	}
	if (!cfg.state_dir)
		cfg.state_dir = KS_FLEET_STATE_DEFAULT;
	if (!cfg.control_plane && mkdir(cfg.state_dir, 0700) && errno != EEXIST)
		return ks_err(-errno, "can't create %s: %s", cfg.state_dir, strerror(errno));
	fa = calloc(ninst, sizeof(*fa));
	for (int i = 0; i < ninst; i++) {
		err = ks_fa_agent_state(&fa[i], &cfg);
		if (err) {
			for (int k = 0; k <= i; k++)
				json_object_put(fa[k].seen);
			free(fa);
			return err;
		}
	}
	cfg.nats.retry_connect = true;
	err = ks_nats_open(&n, &cfg.nats, true, false);
	if (err) {
		free(fa);
		return err;
	}
	/* Started before NATS was reachable, or while JetStream elects its
	 * leaders: bind once it answers, however long that takes. */
	while (!*stop) {
		if (n.connected && !ks_nats_bind(&n, &cfg.nats, false))
			break;
		usleep(250 * 1000);
	}
	if (*stop) {
		ks_nats_close(&n);
		free(fa);
		return 0;
	}
	if (cfg.store) {
		err = ks_ship_start(&ship, &n, cfg.host, cfg.store, stop);
		if (err) {
			ks_nats_close(&n);
			free(fa);
			return err;
		}
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int i = 0; i < ninst; i++) {
		fa[i].n = &n;
		fa[i].stop = stop;
		if (ninst > 1)
			snprintf(fa[i].host, sizeof(fa[i].host), "%s-%d", cfg.host, i);
		else
			snprintf(fa[i].host, sizeof(fa[i].host), "%s", cfg.host);
		ks_nats_key_safe(fa[i].host, fa[i].key, sizeof(fa[i].key));
		if (pthread_create(&fa[i].th, &attr, fa_loop, &fa[i])) {
			ninst = i;
			break;
		}
	}
	pthread_attr_destroy(&attr);
	for (int i = 0; i < ninst; i++)
		pthread_join(fa[i].th, NULL);
	ks_ship_stop(ship);
	free(fa);
	ks_nats_close(&n);
	return 0;
}

/* Background form for `kshield agent --fleet`. */
static struct {
	struct ks_converge_cfg cfg;
	volatile sig_atomic_t stop;
	pthread_t th;
	bool running;
} bg;

static void *bg_main(void *arg)
{
	(void)arg;
	if (ks_converge_run(&bg.cfg, &bg.stop))
		ks_log("fleet: %s", ks_errmsg());
	return NULL;
}

int ks_converge_start(const struct ks_converge_cfg *cfg)
{
	if (bg.running)
		return ks_err(-EBUSY, "the fleet agent is already running");
	bg.cfg = *cfg;
	bg.stop = 0;
	if (pthread_create(&bg.th, NULL, bg_main, NULL))
		return ks_err(-EAGAIN, "can't start the fleet agent thread");
	bg.running = true;
	return 0;
}

void ks_converge_stop(void)
{
	if (!bg.running)
		return;
	bg.stop = 1;
	pthread_join(bg.th, NULL);
	bg.running = false;
}
#endif /* KSHIELD_STATIC */
