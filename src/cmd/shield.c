// SPDX-License-Identifier: MIT
/* shield.c - the `kshield shield` commands: load, list, info, mode, unload,
 * stats. They are thin: the work is in loader.c and meta.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include "array.h"
#include "cli.h"
#include "events.h"
#include "hex.h"
#include "impact.h"
#include "loader.h"
#include "store.h"
#include "units.h"
#ifndef KSHIELD_STATIC
#include "hunt_pg.h"	/* impact --pg: per host over the collector's PostgreSQL */
#endif
#include "meta.h"
#include "scaffold.h"
#include "sign.h"
#include "weaken.h"
#include <limits.h>
#include <unistd.h>

static const char *mode_name(__u32 mode)
{
	return mode == KS_MODE_AUDIT ? "audit" : "enforce";
}

static int parse_mode(const char *s, enum ks_mode *mode)
{
	if (!strcmp(s, "enforce"))
		*mode = KS_MODE_ENFORCE;
	else if (!strcmp(s, "audit"))
		*mode = KS_MODE_AUDIT;
	else
		return ks_err(-EINVAL, "unknown mode '%s': use enforce or audit", s);
	return 0;
}

static struct json_object *tries_json(const struct ks_load_result *r)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; i < r->ntried; i++) {
		struct json_object *t = json_object_new_object();

		json_object_object_add(t, "variant", json_object_new_string(r->tried[i].name));
		json_object_object_add(t, "ok", json_object_new_boolean(!r->tried[i].err));
		if (r->tried[i].err)
			json_object_object_add(t, "why", json_object_new_string(r->tried[i].why));
		json_object_array_add(arr, t);
	}
	return arr;
}

static int shield_help(void);

/* The positional words of a shield command without options: at most
 * @maxpos, their count in *@argc; false: return *@rc (help, usage). */
static bool words(const char *cmd, int *argc, char **argv, int maxpos, int *rc)
{
	static const struct ks_opt none[] = { OPT_END };

	return ks_opts_parse(cmd, none, *argc, argv, maxpos, argc, shield_help, rc);
}

static int do_load(int argc, char **argv)
{
	enum ks_mode mode = KS_MODE_ENFORCE;
	struct ks_load_result res;
	const char *path = NULL;
	bool audit = false;
	const char *token = NULL;
	const struct ks_opt opts[] = {
		OPT_FLAG("--audit", &audit), OPT_VAL("--token", &token), OPT_END
	};
	struct ks_meta meta;
	char action[KS_NAME_LEN + 16], dir[PATH_MAX], *buf = NULL;
	size_t len = 0;
	int err, npos;

	if (!ks_opts_parse("shield load", opts, argc, argv, 1, &npos, shield_help, &err))
		return err;
	if (!npos)
		return ks_usage("usage: kshield shield load FILE [--audit] [--token FILE]");
	path = argv[0];
	if (audit)
		mode = KS_MODE_AUDIT;
	/* Read once: the bytes named and gated are the bytes loaded. */
	if ((err = ks_read_file(path, &buf, &len)))
		return ks_report(err);
	/* Replacing a loaded shield by hand (with any object, in any mode)
	 * can take its enforcement away: as unloading it does. */
	err = ks_meta_read_buf(path, buf, len, &meta);
	if (!err) {
		snprintf(action, sizeof(action), "unload:%s", ks_meta_get(&meta, "name"));
		ks_pin_path(dir, sizeof(dir), KS_PIN_SHIELDS "/%s", ks_meta_get(&meta, "name"));
		ks_meta_free(&meta);
		if (!access(dir, F_OK))
			err = ks_weaken_cli(token, action);
	}
	if (!err)
		err = ks_shield_load_buf(path, buf, len, mode, &res);
	free(buf);
	if (err)
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(res.name));
		json_object_object_add(o, "variant", json_object_new_string(res.variant));
		json_object_object_add(o, "mode", json_object_new_string(mode_name(mode)));
		json_object_object_add(o, "load_ms", json_object_new_double(res.load_ms));
		json_object_object_add(o, "replaced", json_object_new_boolean(res.replaced));
		json_object_object_add(o, "tried", tries_json(&res));
		ks_json_print(o);
	} else {
		printf("%s %s: variant %s, %s, %.1f ms\n", res.name,
		       res.replaced ? "replaced" : "loaded", res.variant, mode_name(mode),
		       res.load_ms);
		for (int i = 0; i < res.ntried; i++)
			if (res.tried[i].err)
				printf("  variant %s refused: %s\n", res.tried[i].name,
				       res.tried[i].why);
	}
	return 0;
}

/* Coverage of @variant: {"prevents": [..], "detects": [..], "declared": b}. */
static struct json_object *coverage_json(const struct ks_meta *meta, const char *variant)
{
	struct json_object *o = json_object_new_object();
	const char *what[] = { "prevents", "detects" };

	for (int i = 0; i < 2; i++) {
		struct json_object *a = json_object_new_array();
		char *copy, *save = NULL;
		const char *v;

		v = ks_meta_coverage_list(meta, what[i], variant);
		copy = v ? strdup(v) : NULL;
		for (char *t = copy ? strtok_r(copy, ", ", &save) : NULL; t;
		     t = strtok_r(NULL, ", ", &save))
			json_object_array_add(a, json_object_new_string(t));
		free(copy);
		json_object_object_add(o, what[i], a);
	}
	bool declared = ks_meta_coverage_list(meta, "prevents", variant) ||
			ks_meta_coverage_list(meta, "detects", variant);
	json_object_object_add(o, "declared", json_object_new_boolean(declared));
	return o;
}

/* The loaded variant's coverage, from the object it was loaded from: "-"
 * when that file is gone or changed. */
static void loaded_coverage(const struct ks_shield_state *s, char *buf, size_t len,
			    struct json_object **json)
{
	struct ks_meta meta;

	snprintf(buf, len, "-");
	if (json)
		*json = NULL;
	if (ks_meta_read(s->cfg.object, &meta))
		return;
	if (!memcmp(meta.sha256, s->cfg.sha256, 32)) {
		ks_meta_coverage_str(&meta, s->cfg.variant, buf, len);
		if (json)
			*json = coverage_json(&meta, s->cfg.variant);
	}
	ks_meta_free(&meta);
}

static struct json_object *state_json(const struct ks_shield_state *s)
{
	struct json_object *o = json_object_new_object(), *h = json_object_new_object();
	char sha[65];

	ks_hex(s->cfg.sha256, 32, sha, sizeof(sha));
	json_object_object_add(o, "name", json_object_new_string(s->name));
	json_object_object_add(o, "mode", json_object_new_string(mode_name(s->cfg.mode)));
	json_object_object_add(o, "variant", json_object_new_string(s->cfg.variant));
	json_object_object_add(o, "hits", json_object_new_int64(
		s->hits[KS_VERDICT_REFUSED] + s->hits[KS_VERDICT_AUDITED] + s->hits[KS_VERDICT_KILLED]));
	json_object_object_add(h, "refused", json_object_new_int64(s->hits[KS_VERDICT_REFUSED]));
	json_object_object_add(h, "audited", json_object_new_int64(s->hits[KS_VERDICT_AUDITED]));
	json_object_object_add(h, "killed", json_object_new_int64(s->hits[KS_VERDICT_KILLED]));
	json_object_object_add(o, "verdicts", h);
	json_object_object_add(o, "links", json_object_new_int(s->nlinks));
	json_object_object_add(o, "object", json_object_new_string(s->cfg.object));
	json_object_object_add(o, "sha256", json_object_new_string(sha));
	json_object_object_add(o, "loaded_at_ns", json_object_new_int64(s->cfg.loaded_realtime_ns));
	{
		struct json_object *cov;
		char buf[256];

		loaded_coverage(s, buf, sizeof(buf), &cov);
		json_object_object_add(o, "coverage", cov);
	}
	return o;
}

static int do_list(int argc, char **argv)
{
	struct ks_shield_state *st;
	int n, err;

	if (!words("shield list", &argc, argv, 0, &err))
		return err;
	err = ks_shield_list(&st, &n);
	if (err)
		return ks_report(err);
	if (json_output) {
		struct json_object *arr = json_object_new_array();

		for (int i = 0; i < n; i++)
			json_object_array_add(arr, state_json(&st[i]));
		ks_json_print(arr);
	} else {
		printf("%-24s %-8s %-10s %10s %10s %6s  %s\n", "NAME", "MODE", "VARIANT",
		       "REFUSED", "AUDITED", "LINKS", "COVERAGE");
		for (int i = 0; i < n; i++) {
			char cov[256];

			loaded_coverage(&st[i], cov, sizeof(cov), NULL);
			printf("%-24s %-8s %-10s %10llu %10llu %6d  %s\n", st[i].name,
			       mode_name(st[i].cfg.mode), st[i].cfg.variant,
			       (unsigned long long)(st[i].hits[KS_VERDICT_REFUSED] +
						    st[i].hits[KS_VERDICT_KILLED]),
			       (unsigned long long)st[i].hits[KS_VERDICT_AUDITED], st[i].nlinks, cov);
		}
	}
	free(st);
	return 0;
}

static int do_shield_stats(int argc, char **argv)
{
	struct ks_shield_state *st;
	int n, err;

	if (!words("shield stats", &argc, argv, 0, &err))
		return err;
	err = ks_shield_list(&st, &n);
	if (err)
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();

		for (int i = 0; i < n; i++) {
			struct json_object *s = state_json(&st[i]);
			struct json_object *v;

			json_object_object_get_ex(s, "verdicts", &v);
			json_object_object_add(o, st[i].name, json_object_get(v));
			json_object_put(s);
		}
		ks_json_print(o);
	} else {
		printf("%-24s %10s %10s %10s\n", "SHIELD", "REFUSED", "AUDITED", "KILLED");
		for (int i = 0; i < n; i++)
			printf("%-24s %10llu %10llu %10llu\n", st[i].name,
			       (unsigned long long)st[i].hits[KS_VERDICT_REFUSED],
			       (unsigned long long)st[i].hits[KS_VERDICT_AUDITED],
			       (unsigned long long)st[i].hits[KS_VERDICT_KILLED]);
	}
	free(st);
	return 0;
}

static int do_info(int argc, char **argv)
{
	struct ks_meta meta;
	char sha[65];
	int err;

	if (!words("shield info", &argc, argv, 1, &err))
		return err;
	if (argc != 1)
		return ks_usage("usage: kshield shield info FILE");
	err = ks_meta_read(argv[0], &meta);
	if (err)
		return ks_report(err);
	ks_hex(meta.sha256, 32, sha, sizeof(sha));
	char *variants = (char *)ks_meta_get(&meta, "variants");
	/* the hunt `kshield hunt NAME` runs: composed from signs when the
	 * shield gives no whole SELECT */
	char *hunt = NULL;

	if (!ks_meta_get(&meta, "hunt"))
		ks_meta_hunt_sql(&meta, &hunt);
	/* an event-argument line readers would not understand: said here */
	char args_err[512] = "";

	if (ks_meta_args_learn(&meta))
		snprintf(args_err, sizeof(args_err), "%s", ks_errmsg());
	if (json_output) {
		struct json_object *o = json_object_new_object();

		struct json_object *cov = json_object_new_object();

		for (int i = 0; i < meta.n; i++) {
			struct json_object *l;

			/* the event argument tables: one key each, many times */
			if (strcmp(meta.key[i], KS_ARGS_KEY) && strcmp(meta.key[i], KS_VALS_KEY)) {
				json_object_object_add(o, meta.key[i],
						       json_object_new_string(meta.val[i]));
				continue;
			}
			if (!json_object_object_get_ex(o, meta.key[i], &l)) {
				l = json_object_new_array();
				json_object_object_add(o, meta.key[i], l);
			}
			json_object_array_add(l, json_object_new_string(meta.val[i]));
		}
		if (hunt)
			json_object_object_add(o, "hunt", json_object_new_string(hunt));
		json_object_object_add(o, "sha256", json_object_new_string(sha));
		if (*args_err)
			json_object_object_add(o, "args_error", json_object_new_string(args_err));
		for (char *v = variants; *v; v += strcspn(v, ","), v += *v == ',') {
			char name[KS_VARIANT_LEN];

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(v, ","), v);
			json_object_object_add(cov, name, coverage_json(&meta, name));
		}
		json_object_object_add(o, "coverage", cov);
		ks_json_print(o);
	} else {
		for (int i = 0; i < meta.n; i++)
			printf("%-16s %s\n", meta.key[i], meta.val[i]);
		if (hunt)
			printf("%-16s %s\n", "hunt", hunt);
		printf("%-16s %s\n", "sha256", sha);
		if (*args_err)
			printf("%-16s %s\n", "args_error", args_err);
		/* What each variant covers, in the loader's order. */
		for (char *v = variants; *v; v += strcspn(v, ","), v += *v == ',') {
			char name[KS_VARIANT_LEN], cov[256];

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(v, ","), v);
			ks_meta_coverage_str(&meta, name, cov, sizeof(cov));
			printf("coverage %-7s %s\n", name, cov);
		}
	}
	free(hunt);
	ks_meta_free(&meta);
	return 0;
}

static int do_mode(int argc, char **argv)
{
	enum ks_mode mode = KS_MODE_ENFORCE;
	const char *token = NULL;
	const struct ks_opt opts[] = { OPT_VAL("--token", &token), OPT_END };
	char action[KS_NAME_LEN + 16];
	int err, npos;

	if (!ks_opts_parse("shield mode", opts, argc, argv, 2, &npos, shield_help, &err))
		return err;
	if (npos != 2)
		return ks_usage("usage: kshield shield mode NAME enforce|audit [--token FILE]");
	err = parse_mode(argv[1], &mode);
	snprintf(action, sizeof(action), "audit:%s", argv[0]);
	if (!err && mode == KS_MODE_AUDIT)
		err = ks_weaken_cli(token, action);
	if (!err)
		err = ks_shield_set_mode(argv[0], mode);
	if (err)
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(argv[0]));
		json_object_object_add(o, "mode", json_object_new_string(mode_name(mode)));
		ks_json_print(o);
	}
	return 0;
}

static int do_unload(int argc, char **argv)
{
	const char *token = NULL;
	const struct ks_opt opts[] = { OPT_VAL("--token", &token), OPT_END };
	char action[KS_NAME_LEN + 16];
	int err, npos;

	if (!ks_opts_parse("shield unload", opts, argc, argv, 1, &npos, shield_help, &err))
		return err;
	if (npos != 1)
		return ks_usage("usage: kshield shield unload NAME [--token FILE]");
	snprintf(action, sizeof(action), "unload:%s", argv[0]);
	err = ks_weaken_cli(token, action);
	if (!err)
		err = ks_shield_unload(argv[0]);
	return err ? ks_report(err) : 0;
}

/* ---- impact: what the shield would have hit here in the past ---- */

static void impact_row(const struct ks_impact_row *r, void *ctx)
{
	char first[40], last[40];

	if (ctx) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "binary", json_object_new_string(r->binary));
		json_object_object_add(o, "uid", json_object_new_int64(r->uid));
		json_object_object_add(o, "hits", json_object_new_int64(r->hits));
		json_object_object_add(o, "first_ts", json_object_new_int64(r->first_ts));
		json_object_object_add(o, "last_ts", json_object_new_int64(r->last_ts));
		json_object_array_add(ctx, o);
		return;
	}
	ks_time_fmt(r->first_ts, first, sizeof(first));
	ks_time_fmt(r->last_ts, last, sizeof(last));
	printf("  %-40s %6lld %8lld  %.19s .. %.19s\n", r->binary, r->uid, r->hits, first, last);
}


static int impact_help(void)
{
	fprintf(stderr,
		"Usage: kshield shield impact FILE [--since 30d] [--until T] [--store PATH] [--pg CONNINFO] [-j]\n"
		"What FILE's shield would have hit on this machine (or, with --pg, on each host of\n"
		"the fleet) in the past: its declared pattern (metadata impact, else hunt) over the\n"
		"event store, by binary and user. Run it before enforcing a shield.\n");
	return 0;
}

static int do_impact(int argc, char **argv)
{
	const char *since_s = "30d", *until_s = NULL, *store = NULL, *pg = NULL;
	char name[KS_NAME_LEN + 64], *sql = NULL;
	struct json_object *rows = NULL;
	__s64 since, until = INT64_MAX;
	struct ks_store *s = NULL;
	long long total;
	int err, npos;
	const struct ks_opt opts[] = {
		OPT_VAL("--since", &since_s), OPT_VAL("--until", &until_s), OPT_VAL("--store", &store),
		OPT_VAL("--pg", &pg), OPT_END,
	};

	if (!ks_opts_parse("shield impact", opts, argc, argv, 1, &npos, impact_help, &err))
		return err;
	if (npos != 1)
		return ks_usage("usage: kshield shield impact FILE [--since 30d] [--store PATH] [--pg CONNINFO]");
	if ((err = ks_time_parse(since_s, "--since", &since)))
		return ks_report(err);
	if (until_s && (err = ks_time_parse(until_s, "--until", &until)))
		return ks_report(err);
	if ((err = ks_impact_pattern(argv[0], name, sizeof(name), &sql)))
		return ks_report(err);
	rows = json_object_new_array();
	if (pg) {
#ifndef KSHIELD_STATIC
		const struct ks_hunt_pg_opts ho = { .since = since, .until = until,
						    .limit = 1000000 /* hosts */ };

		err = ks_hunt_pg(pg, name, sql, ks_pg_host_row, rows, &ho);
		free(sql);
		if (err) {
			json_object_put(rows);
			return ks_report(err);
		}
		if (json_output) {
			ks_json_print(rows);
			return 0;
		}
		printf("%s would have hit, per host, since %s:\n", name, since_s);
		ks_pg_hosts_print(rows);
		json_object_put(rows);
		return 0;
#else
		free(sql);
		json_object_put(rows);
		return ks_usage("--pg: this static build has no PostgreSQL client");
#endif
	}
	if ((err = ks_store_open(&s, ks_store_path(store), KS_STORE_RDONLY))) {
		free(sql);
		json_object_put(rows);
		return ks_report(err);
	}
	if (!json_output)
		printf("%s: events of its pattern since %s, by binary and user:\n  %-40s %6s %8s  %s\n",
		       name, since_s, "BINARY ([comm]: no exec seen)", "UID", "HITS", "FIRST .. LAST");
	total = ks_impact_store(s, sql, since, until, impact_row, json_output ? rows : NULL);
	ks_store_close(s);
	free(sql);
	if (total < 0) {
		json_object_put(rows);
		return ks_report((int)total);
	}
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "shield", json_object_new_string(name));
		json_object_object_add(o, "since", json_object_new_int64(since));
		json_object_object_add(o, "hits", json_object_new_int64(total));
		json_object_object_add(o, "by_binary_user", rows);
		ks_json_print(o);
	} else {
		json_object_put(rows);
		printf("%lld event%s: %s\n", total, total == 1 ? "" : "s",
		       total ? "enforcing would refuse (or kill, where only a tp variant loads) these"
			     : "nothing here would have been refused");
	}
	return 0;
}

static int new_help(void)
{
	fprintf(stderr,
		"Usage: kshield shield new NAME --cve CVE-YYYY-NNNN --hook HOOK [--hook HOOK2 ...]\n"
		"                          --syscall SYSCALL [--fix-function F ...] [--dir DIR]\n"
		"                          [--filter MASK:TYPES] [--btf FILE]\n"
		"\n"
		"Writes DIR/NAME/ (DIR: shields): shield.bpf.c (metadata, one KS_SECURITY_HOOK\n"
		"per LSM hook with its arguments from this kernel's BTF, a tp fallback at\n"
		"SYSCALL's entry), test.c (the path table as SYSCALL allows it: native,\n"
		"io-uring, splice, compat, clone-files, pre-existing; benign; the effect\n"
		"oracle) and README.md. It builds at once (make) and refuses nothing;\n"
		"`kshield test NAME` reports every case \"not written yet\" and fails until\n"
		"they are written. HOOK: an LSM hook name (socket_setsockopt), as\n"
		"`kshield hooks` prints it. The shield names its event's arguments\n"
		"(KSHIELD_ARGS: what agents show of a hit). --filter: file_permission runs\n"
		"for every read and write, so its programs run only for a mask with one of\n"
		"these bits on an inode of one of these types (KS_SECURITY_FILTER; default\n"
		"MAY_WRITE:S_IFREG, MAY_READ for a read syscall). --btf: another kernel's\n"
		"BTF instead of /sys/kernel/btf/vmlinux.\n"
		"\n"
		"Example (a write to a cgroup v1 release_agent: file_permission sees it\n"
		"on descriptors opened before the shield loaded, file_open would not):\n"
		"  kshield shield new cve-2022-0492 --cve CVE-2022-0492 --hook file_permission \\\n"
		"      --filter MAY_WRITE:S_IFREG --syscall write \\\n"
		"      --fix-function cgroup_release_agent_write\n");
	return 0;
}

static int do_new(int argc, char **argv)
{
	struct ks_scaffold sc = { .dir = "shields" };
	const char *fix[16];
	int nfix = 0, npos, err;
	char out[4096], fixes[1024] = "";
	const struct ks_opt opts[] = {
		OPT_VAL("--cve", &sc.cve), OPT_LIST("--hook", sc.hooks, &sc.nhooks, KS_SCAFFOLD_MAX_HOOKS),
		OPT_VAL("--syscall", &sc.syscall), OPT_LIST("--fix-function", fix, &nfix, 16),
		OPT_VAL("--dir", &sc.dir), OPT_VAL("--btf", &sc.btf_path),
		OPT_VAL("--filter", &sc.filter), OPT_END
	};
	static const char *files[] = { "shield.bpf.c", "test.c", "README.md" };

	if (!ks_opts_parse("shield new", opts, argc, argv, 1, &npos, new_help, &err))
		return err;
	if (npos != 1 || !sc.cve || !sc.nhooks || !sc.syscall)
		return ks_usage("usage: kshield shield new NAME --cve CVE --hook HOOK --syscall SYSCALL "
				"[--fix-function F] [--filter MASK:TYPES] [--dir DIR]");
	sc.name = argv[0];
	for (int i = 0; i < nfix; i++) {
		size_t n = strlen(fixes);

		snprintf(fixes + n, sizeof(fixes) - n, "%s%s", n ? "," : "", fix[i]);
	}
	sc.fix_function = fixes;
	if ((err = ks_scaffold_write(&sc, out, sizeof(out))))
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();
		char path[4200];

		json_object_object_add(o, "dir", json_object_new_string(out));
		for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
			snprintf(path, sizeof(path), "%s/%s", out, files[i]);
			json_object_array_add(a, json_object_new_string(path));
		}
		json_object_object_add(o, "files", a);
		ks_json_print(o);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		printf("%s/%s\n", out, files[i]);
	printf("next: make (it builds as it is), then `kshield test %s`: every case says\n"
	       "\"not written yet\" until you write it; matrix/run.sh --quick --shield %s proves it\n",
	       sc.name, sc.name);
	return 0;
}

static int shield_help(void)
{
	fprintf(stderr,
		"Usage: kshield shield load FILE [--audit]\n"
		"       kshield shield new NAME --cve CVE --hook HOOK --syscall SYSCALL   (see shield new help)\n"
		"       kshield shield list\n"
		"       kshield shield info FILE\n"
		"       kshield shield mode NAME enforce|audit [--token FILE]\n"
		"       kshield shield unload NAME [--token FILE]\n"
		"       kshield shield stats\n"
		"       kshield shield impact FILE [--since 30d] [--store PATH] [--pg CONNINFO]\n"
		"       kshield shield keygen PREFIX | sign FILE --key KEY | verify FILE --keys DIR\n"
		"       kshield shield proven RESULTS.json --out DIR [--key KEY]   (see shield proven help)\n"
		"\n"
		"load tries the shield's variants strongest first and keeps the first that\n"
		"loads and attaches here; links are pinned under <bpffs>/shields/NAME so the\n"
		"shield keeps enforcing after kshield exits. Loading a loaded shield again\n"
		"replaces it, new before old.\n"
		"\n"
		"While the tamper guard is on, unload NAME, mode NAME audit and a load that\n"
		"replaces NAME need a token (--token FILE, default the config's weaken_token)\n"
		"allowing unload:NAME or audit:NAME (docs/guard.md). Without one: "
		KS_WEAKEN_ADVICE ".\n", "unload:NAME");
	return 0;
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return shield_help();
}

int do_shield(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "help", do_help },
		{ "load", do_load },
		{ "list", do_list },
		{ "info", do_info },
		{ "mode", do_mode },
		{ "unload", do_unload },
		{ "stats", do_shield_stats },
		{ "impact", do_impact },
		{ "sign", do_shield_sign },
		{ "verify", do_shield_verify },
		{ "keygen", do_shield_keygen },
		{ "proven", do_shield_proven },
		{ "new", do_new },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, do_help);
}
