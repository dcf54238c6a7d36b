// SPDX-License-Identifier: MIT
/* fleet.c - the `kshield fleet` commands: deploy a signed shield to the
 * fleet's desired state, watch it converge (status, wait), promote an
 * audit-first rollout, roll back (rollout.c does the work); record, publish,
 * hosts, ship; and `fleet agent`, one host's convergence loop in the
 * foreground (fleet_converge.c does the work). `fleet keys` is fleet_keys.c.
 * Desired state and status live in JetStream KV buckets (fleet_kv.h
 * describes the records).
 */
#ifndef KSHIELD_STATIC
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "btf_find.h"
#include "cli.h"
#include "file.h"
#include "fleet_btf.h"
#include "fleet_cli.h"
#include "fleet_kv.h"
#include "fleet_ship.h"
#include "kernel_sites.h"
#include "meta.h"
#include <kshield/event.h>
#include "rollout.h"

static int fleet_help(void);

#define DEPLOY_MAX_SITES 64
#define DEPLOY_MAX_BTF 64
#define DEPLOY_USAGE "usage: kshield fleet deploy FILE --key KEYFILE [--keys DIR] [--hosts GLOB|--group NAME] " \
	"[--audit|--audit-first DURATION] [--expires DURATION] [--sig FILE] [--sites MANIFEST]... " \
	"[--btf FILE|DIR]... " \
	"[--gated] [--proven SUMMARY] [--pg CONNINFO [--since 30d] [--force]] NATS"

/* The rollout's warnings and impact lines, as they come. */
static void say(const char *line)
{
	fprintf(stderr, "%s\n", line);
}

static int do_deploy(int argc, char **argv)
{
	struct ks_nats_opts no = { 0 };
	const char *path = NULL, *hosts = "*", *group = "", *sigpath = NULL;
	const char *key = getenv("KSHIELD_FLEET_KEY"), *keys = NULL;
	int64_t expires = KS_DESIRED_EXPIRES_MS;
	const char *sites[DEPLOY_MAX_SITES], *expires_s = NULL, *audit_first_s = NULL;
	const char *btf[DEPLOY_MAX_BTF];
	int nsites = 0, nbtf = 0, npos, rc;
	int64_t audit_first = 0;
	bool audit = false, force = false, gated = false, is_signed = false;
	const char *pg = NULL, *since = "30d", *proven = NULL;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no),
		OPT_VAL("--hosts", &hosts), OPT_VAL("--group", &group), OPT_VAL("--sig", &sigpath),
		OPT_VAL("--key", &key), OPT_VAL("--keys", &keys), OPT_VAL("--pg", &pg),
		OPT_VAL("--since", &since), OPT_FLAG("--force", &force),
		OPT_FLAG("--gated", &gated), OPT_VAL("--proven", &proven),
		OPT_VAL("--expires", &expires_s), OPT_LIST("--sites", sites, &nsites, DEPLOY_MAX_SITES),
		OPT_LIST("--btf", btf, &nbtf, DEPLOY_MAX_BTF),
		OPT_FLAG("--audit", &audit), OPT_VAL("--audit-first", &audit_first_s),
		OPT_END
	};
	struct ks_meta meta = { 0 };
	struct ks_rollout_deploy dp;
	json_object *d = NULL;
	int err;

	if (!ks_opts_parse("fleet deploy", opts, argc, argv, 1, &npos, fleet_help, &rc))
		return rc;
	if (expires_s && (expires = ks_fleet_duration_ms(expires_s)) <= 0)
		return ks_usage("bad --expires duration '%s' (e.g. 30d, 12h)", expires_s);
	if (audit_first_s && (audit_first = ks_fleet_duration_ms(audit_first_s)) <= 0)
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
	if (pg && (err = ks_rollout_preview(path, pg, since, hosts, !audit && !audit_first, force,
					    say))) {
		ks_meta_free(&meta);
		return ks_report(err);
	}
	dp = (struct ks_rollout_deploy){
		.path = path, .meta = &meta, .sigpath = sigpath, .hosts = hosts, .group = group,
		.key = key, .keys = keys, .expires_ms = expires, .audit_first_ms = audit_first,
		.audit = audit, .gated = gated, .proven = proven, .sites = sites, .nsites = nsites,
		.btf = btf, .nbtf = nbtf, .say = say,
	};
	ks_nats_opts_env(&no);
	err = ks_rollout_deploy(&dp, &no, &d, &is_signed);
	if (!err) {
		if (json_output) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "name", json_object_new_string(ks_meta_get(&meta, "name")));
			json_object_object_add(o, "sha256", json_object_new_string(ks_json_str(d, "sha256", "")));
			json_object_object_add(o, "mode", json_object_get(json_object_object_get(d, "mode")));
			json_object_object_add(o, "signed", json_object_new_boolean(is_signed));
			json_object_object_add(o, "version", json_object_get(json_object_object_get(d, "version")));
			json_object_object_add(o, "expires_at", json_object_get(json_object_object_get(d, "expires_at")));
			json_object_object_add(o, "deployed_at", json_object_get(json_object_object_get(d, "deployed_at")));
			ks_json_print(o);
		} else {
			printf("%s %.12s deployed (%s) to hosts '%s'%s%s, version %lld\n",
			       ks_meta_get(&meta, "name"), ks_json_str(d, "sha256", ""),
			       ks_json_str(d, "mode", ""), hosts, *group ? " group " : "", group,
			       (long long)ks_json_i64(d, "version"));
		}
	}
	json_object_put(d);
	ks_meta_free(&meta);
	return err ? ks_report(err) : 0;
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
	err = ks_fleet_open(&n, &no);
	if (err)
		return ks_report(err);
	err = ks_rollout_summaries(&n, only, only != NULL, &arr);
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
	err = ks_fleet_open(&n, &no);
	if (err)
		return ks_report(err);
	for (;;) {
		json_object *arr, *s;
		long have, need;

		err = ks_rollout_summaries(&n, name, false, &arr);
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
 * with --key, written by compare-and-set (rollout.c). */
static int change(int argc, char **argv, enum ks_rollout_change op)
{
	static const char *const opname[] = { "promote", "rollback", "renew" };
	struct ks_nats_opts no = { 0 };
	const char *name = NULL, *key = getenv("KSHIELD_FLEET_KEY"), *keys = NULL, *host = NULL;
	int64_t expires = KS_DESIRED_EXPIRES_MS;
	const char *expires_s = NULL;
	const struct ks_opt opts[] = {
		OPTS_NATS(&no), OPT_VAL("--key", &key), OPT_VAL("--keys", &keys),
		OPT_VAL("--host", &host), OPT_VAL("--expires", &expires_s), OPT_END
	};
	char cmd[32];
	struct ks_nats n;
	json_object *rec = NULL;
	int err, npos;

	snprintf(cmd, sizeof(cmd), "fleet %s", opname[op]);
	if (!ks_opts_parse(cmd, opts, argc, argv, 1, &npos, fleet_help, &err))
		return err;
	if (expires_s && (expires = ks_fleet_duration_ms(expires_s)) <= 0)
		return ks_usage("bad --expires duration '%s' (e.g. 30d, 12h)", expires_s);
	name = npos ? argv[0] : NULL;
	if (host && op != KS_ROLLOUT_PROMOTE)
		return ks_usage("fleet %s: --host is for fleet promote only", opname[op]);
	if (!name || !key)
		return ks_usage("usage: kshield fleet %s SHIELD --key KEYFILE [--expires DURATION] NATS"
				"%s", opname[op], name ? " (--key: agents refuse unsigned desired state)" : "");
	err = ks_fleet_open(&n, &no);
	if (err)
		return ks_report(err);
	err = ks_rollout_change(&n, name, op, host, key, keys, expires, &rec);
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
	err = ks_fleet_open(&n, &no);
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
	err = ks_fleet_open(&n, &no);
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
	return change(argc, argv, KS_ROLLOUT_PROMOTE);
}

static int do_rollback(int argc, char **argv)
{
	return change(argc, argv, KS_ROLLOUT_ROLLBACK);
}

static int do_renew(int argc, char **argv)
{
	return change(argc, argv, KS_ROLLOUT_RENEW);
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
	err = ks_fleet_open(&n, &no);
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
	struct ks_converge_cfg cfg = { 0 };
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

		ks_converge_keys_dir(&cfg, keys, sizeof(keys));
		ks_kernel_sites_policy(NULL, keys);
	}
	err = ks_converge_run(&cfg, &agent_stop);
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

/* This kernel's BTF from a signed bundle in the fleet, into btf_dir: what
 * a fleet agent does before it loads a shield, for a host to have it
 * before anything starts (the monitor, a first shield). */
static int do_fleet_btf(int argc, char **argv)
{
	static const char *const said[] = {
		[KS_FLEET_BTF_PRESENT] = "kept: btf_dir has it already",
		[KS_FLEET_BTF_KEPT] = "checked against the signed record and kept",
	};
	struct ks_nats_opts no = { 0 };
	const char *keys = NULL;
	const struct ks_opt opts[] = { OPTS_NATS(&no), OPT_VAL("--keys", &keys), OPT_END };
	enum ks_fleet_btf_got got;
	struct ks_nats n;
	char from[KS_NAME_LEN];
	int err, npos;

	if (!ks_opts_parse("fleet btf", opts, argc, argv, 1, &npos, fleet_help, &err))
		return err;
	if (!keys)
		return ks_usage("usage: kshield fleet btf [SHIELD] --keys DIR NATS (--keys: the "
				"public keys the records must verify against)");
	if (ks_btf_kernel_has()) {
		if (json_output) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "kernel_btf", json_object_new_boolean(true));
			json_object_object_add(o, "kept", json_object_new_boolean(false));
			ks_json_print(o);
		} else {
			printf("this kernel has BTF of its own (%s): nothing to fetch\n", KS_SYSFS_BTF);
		}
		return 0;
	}
	ks_nats_opts_env(&no);
	if ((err = ks_nats_open(&n, &no, false, false)))
		return ks_report(err);
	err = ks_fleet_btf_fetch(&n, keys, npos ? argv[0] : NULL, from, sizeof(from), &got);
	ks_nats_close(&n);
	if (err)
		return ks_report(err);
	if (json_output) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "shield", json_object_new_string(from));
		json_object_object_add(o, "btf_dir", json_object_new_string(ks_btf_dir()));
		json_object_object_add(o, "kept", json_object_new_boolean(got == KS_FLEET_BTF_KEPT));
		ks_json_print(o);
	} else {
		printf("BTF for this kernel in the signed bundle of %s: %s (%s)\n", from, said[got],
		       ks_btf_dir());
	}
	return 0;
}

static int fleet_help(void)
{
	fprintf(stderr,
		"Usage: kshield fleet deploy FILE --key KEYFILE [--keys DIR] [--hosts GLOB|--group NAME]\n"
		"                             [--audit|--audit-first DURATION] [--expires DURATION]\n"
		"                             [--sites MANIFEST]... [--btf FILE|DIR]... [--gated]\n"
		"                             [--proven SUMMARY]\n"
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
		"       kshield fleet btf [SHIELD] --keys DIR NATS\n"
		"       kshield fleet view --pg CONNINFO [--listen ADDR:PORT] [--token-file FILE] NATS\n"
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
		"--btf ships kernels' BTF with a shield, each <build-id>.btf (a DIR: every one\n"
		"in it; cut them with kshield btf min); an agent on a kernel without BTF whose\n"
		"btf_dir lacks its build's checks the one listed for it against the signed\n"
		"record and writes it there before loading; bytes that differ are refused.\n"
		"btf does that now, from SHIELD's record or the first that lists this kernel.\n"
		"The shield's proven summary (NAME.proven.json beside FILE, or --proven; see\n"
		"kshield shield proven) travels with it, verified by the agents like the object.\n"
		"--gated (or an agent's own --gated): a host enforces only where the matrix\n"
		"proved the loaded variant on its very kernel (release and build ID); elsewhere\n"
		"it audits and reports 'unproven kernel' until promote --host GLOB names it;\n"
		"a kernel where the variant failed on the matrix ('refused') never enforces.\n"
		"status shows hosts per shield by kernel: PROVEN/UNPR(oven)/REF(used).\n"
		"view serves the read-only fleet page (kshield fleet view help).\n");
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
		{ "keys", do_fleet_keys },
		{ "agent", do_fleet_agent },
		{ "ship", do_ship },
		{ "btf", do_fleet_btf },
		{ "view", do_fleet_view },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, do_help);
}
#endif /* KSHIELD_STATIC */
