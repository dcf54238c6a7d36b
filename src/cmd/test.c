// SPDX-License-Identifier: MIT
/* test.c - `kshield test NAME|--all`: prove shields on this kernel with
 * their own trigger and benign cases (see shieldtest_run.c). Prints one JSON line
 * per shield under -j, which is what the kernel matrix collects. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "cli.h"
#include "shieldtest_run.h"

const char *ks_cli_shields_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (getenv("KSHIELD_SHIELDS"))
		return getenv("KSHIELD_SHIELDS");
	/* build/kshield -> build/shields; /usr/sbin -> /usr/lib/kshield/shields */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(dir, sizeof(dir), "%s/shields", exe);
		if (!access(dir, F_OK))
			return dir;
		snprintf(dir, sizeof(dir), "%s/../lib/kshield/shields", exe);
		if (!access(dir, F_OK))
			return dir;
	}
	return "/usr/lib/kshield/shields";
}

static const char *step_str(bool ran, bool ok)
{
	return !ran ? "-" : ok ? "ok" : "FAIL";
}

/* A path's verdict, as the row and JSON say it. */
static const char *path_status(const struct ks_path_result *p)
{
	if (p->not_applicable)
		return "n/a";
	if (p->todo)
		return "not-written";
	if (!p->ran_enforce)
		return p->why[0] ? "fail" : "-";
	if (p->enforce < 0)
		return "fail";
	if (p->fixed_here)
		return "fixed-here";
	if (p->cov == KS_COV_NONE)
		return "not-covered";
	return p->ok ? (p->cov == KS_COV_DETECTS ? "detected" : "prevented") : "fail";
}

static const char *trigger_str(const struct ks_test_result *r)
{
	if (!r->ran_enforce)
		return "-";
	if (r->ntodo && r->trigger_case < 0 && !r->trigger_refused && !r->detect_only)
		return "TODO";
	if (r->fixed_here)
		return "no-effect";
	if (r->detect_only)
		return r->hit_recorded ? "detected" : "MISSED";
	if (r->trigger_refused)
		return "refused";
	return r->trigger_case == KS_CASE_REFUSED ? "refused" :
	       r->trigger_case >= 0 ? "PASSED" : "ERROR";
}

/* Did any path run in audit mode (@unload 0) or after unload (1)? A step
 * where every case is still to be written shows "-", not a vacuous ok. */
static bool any_path(const struct ks_test_result *r, int unload)
{
	for (int i = 0; i < r->npaths; i++)
		if (unload ? r->paths[i].ran_unload : r->paths[i].ran_audit)
			return true;
	return !r->ntodo;
}

/* One line per shield, then one per path when there are several (or the
 * one is not prevented). Not applicable, unprotected and not run (the
 * shield already enforcing, loaded elsewhere) say so and why, with no step
 * columns; a step that did not run shows "-", never ok. */
static void print_text(const struct ks_test_result *r)
{
	bool detail = r->npaths > 1;

	if (r->not_applicable) {
		printf("%-22s n/a: %s\n", r->shield, r->na_reason);
		return;
	}
	if (r->refused_by[0]) {
		printf("%-22s %s\n", r->shield, r->error);
		return;
	}
	if (r->unsupported) {
		printf("%-22s unprotected: %s\n", r->shield, r->error);
		return;
	}
	printf("%-22s %-8s trigger %-8s benign %-4s audit %-4s unload %-4s %6.1f ms  "
	       "vulnerable %s  %s%s%s\n",
	       r->shield, r->variant[0] ? r->variant : "-", trigger_str(r),
	       r->benign_todo ? "TODO" : step_str(r->ran_benign, r->benign_ok),
	       step_str(r->ran_audit && any_path(r, 0), r->audit_ok),
	       step_str(r->ran_unload && any_path(r, 1), r->unload_ok), r->load.load_ms, r->vulnerable,
	       r->partial ? "partial: " : "", r->not_covered,
	       r->error[0] ? (r->partial ? "; " : "") : "");
	if (r->error[0])
		printf("%-22s   %s\n", "", r->error);
	for (int i = 0; i < r->npaths; i++)
		detail |= r->paths[i].cov != KS_COV_PREVENTS || r->paths[i].not_applicable ||
			  r->paths[i].todo || r->paths[i].seen[0];
	for (int i = 0; detail && i < r->npaths; i++) {
		const struct ks_path_result *p = &r->paths[i];

		if (p->not_applicable) {
			printf("  path %-14s n/a: %s\n", p->name, p->why);
			continue;
		}
		if (p->todo) {	/* its why says "not written yet" (ks_case_todo) */
			printf("  path %-14s %s%s\n", p->name,
			       strncmp(p->why, "not written yet", 15) ? "not written yet: " : "", p->why);
			continue;
		}
		printf("  path %-14s %-9s baseline %-9s enforce %-9s%s audit %-9s unload %-9s %s%s%s\n",
		       p->name, ks_coverage_name(p->cov), ks_case_str(p->baseline),
		       p->ran_enforce ? ks_case_str(p->enforce) : "-", p->hit ? " (hit)" : "      ",
		       p->ran_audit ? ks_case_str(p->audit) : "-",
		       p->ran_unload ? ks_case_str(p->unload) : "-", path_status(p),
		       p->why[0] ? ": " : "", p->why);
		/* What the baseline saw: why the kernel is (or is not) vulnerable. */
		if (p->seen[0])
			printf("  %-19s baseline %s: %s\n", "", ks_case_str(p->baseline), p->seen);
	}
}

/* The cases not written yet, by name ("benign" for the benign case). */
static struct json_object *todo_json(const struct ks_test_result *r)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < r->npaths; i++)
		if (r->paths[i].todo)
			json_object_array_add(a, json_object_new_string(r->paths[i].name));
	if (r->benign_todo)
		json_object_array_add(a, json_object_new_string("benign"));
	return a;
}

static struct json_object *case_json(bool ran, int c)
{
	return ran ? json_object_new_string(ks_case_str(c)) : NULL;
}

static struct json_object *paths_json(const struct ks_test_result *r)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < r->npaths; i++) {
		const struct ks_path_result *p = &r->paths[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(o, "coverage", p->ran_enforce ?
				       json_object_new_string(ks_coverage_name(p->cov)) : NULL);
		json_object_object_add(o, "status", json_object_new_string(path_status(p)));
		json_object_object_add(o, "baseline", json_object_new_string(ks_case_str(p->baseline)));
		json_object_object_add(o, "enforce", case_json(p->ran_enforce, p->enforce));
		json_object_object_add(o, "hit", json_object_new_boolean(p->hit));
		json_object_object_add(o, "killed", json_object_new_boolean(p->killed));
		json_object_object_add(o, "audit", case_json(p->ran_audit, p->audit));
		json_object_object_add(o, "audited", json_object_new_boolean(p->audited));
		json_object_object_add(o, "unload", case_json(p->ran_unload, p->unload));
		json_object_object_add(o, "why", p->why[0] ? json_object_new_string(p->why) : NULL);
		json_object_object_add(o, "effect", p->effect[0] ? json_object_new_string(p->effect) : NULL);
		json_object_object_add(o, "baseline_why", p->seen[0] ? json_object_new_string(p->seen) : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

static void print_result(const struct ks_test_result *r)
{
	struct utsname u;

	uname(&u);
	if (json_output) {
		struct json_object *o = json_object_new_object(), *tried = json_object_new_array();
		struct json_object *nc = json_object_new_array();

		json_object_object_add(o, "kernel", json_object_new_string(u.release));
		json_object_object_add(o, "arch", json_object_new_string(u.machine));
		json_object_object_add(o, "shield", json_object_new_string(r->shield));
		json_object_object_add(o, "variant", r->variant[0] ?
				       json_object_new_string(r->variant) : NULL);
		json_object_object_add(o, "sha256", r->sha256[0] ?
				       json_object_new_string(r->sha256) : NULL);
		json_object_object_add(o, "trigger_refused", json_object_new_boolean(r->trigger_refused));
		json_object_object_add(o, "hit_recorded", json_object_new_boolean(r->hit_recorded));
		json_object_object_add(o, "detect_only", json_object_new_boolean(r->detect_only));
		json_object_object_add(o, "fixed_here", json_object_new_boolean(r->fixed_here));
		json_object_object_add(o, "benign_ok", json_object_new_boolean(r->benign_ok));
		json_object_object_add(o, "audit_ok", json_object_new_boolean(r->audit_ok));
		json_object_object_add(o, "unload_ok", json_object_new_boolean(r->unload_ok));
		json_object_object_add(o, "unsupported", json_object_new_boolean(r->unsupported));
		json_object_object_add(o, "not_applicable", json_object_new_boolean(r->not_applicable));
		if (r->not_applicable)
			json_object_object_add(o, "na_reason", json_object_new_string(r->na_reason));
		json_object_object_add(o, "vulnerable", json_object_new_string(r->vulnerable));
		json_object_object_add(o, "partial", json_object_new_boolean(r->partial));
		for (int i = 0; i < r->npaths; i++)
			if (r->paths[i].ran_enforce && r->paths[i].cov == KS_COV_NONE)
				json_object_array_add(nc, json_object_new_string(r->paths[i].name));
		json_object_object_add(o, "not_covered", nc);
		json_object_object_add(o, "todo", todo_json(r));
		json_object_object_add(o, "coverage_note", r->not_covered[0] ?
				       json_object_new_string(r->not_covered) : NULL);
		json_object_object_add(o, "paths", paths_json(r));
		json_object_object_add(o, "load_ms", json_object_new_double(r->load.load_ms));
		for (int i = 0; i < r->load.ntried; i++) {
			struct json_object *t = json_object_new_object();

			json_object_object_add(t, "variant", json_object_new_string(r->load.tried[i].name));
			json_object_object_add(t, "ok", json_object_new_boolean(!r->load.tried[i].err));
			if (r->load.tried[i].err)
				json_object_object_add(t, "why", json_object_new_string(r->load.tried[i].why));
			json_object_array_add(tried, t);
		}
		json_object_object_add(o, "tried", tried);
		json_object_object_add(o, "refused_by", r->refused_by[0] ?
				       json_object_new_string(r->refused_by) : NULL);
		json_object_object_add(o, "error", r->error[0] ? json_object_new_string(r->error) : NULL);
		ks_json_print(o);
		fflush(stdout);
		return;
	}
	print_text(r);
	fflush(stdout);
}

static int run_one(const struct ks_shield_test *t, const char *object, bool *ok)
{
	struct ks_test_result r;
	int err = ks_test_run(t, object, &r);

	if (err)
		return err;
	print_result(&r);
	/* Partial (a path not covered) is not a pass either. */
	*ok = !r.error[0] && !r.partial;
	return 0;
}

static int do_help(void)
{
	fprintf(stderr,
		"Usage: kshield test NAME [--object FILE]\n"
		"       kshield test --all [--dir DIR]\n"
		"       kshield test list\n"
		"\n"
		"Loads each shield for real and runs its cases, for each known path to the\n"
		"bug: the trigger without the shield (must go through; its effect, where\n"
		"checked, says whether this kernel is vulnerable), enforcing (a path the\n"
		"variant prevents must be refused and counted, one it detects counted),\n"
		"benign enforcing (must pass), each covered path in audit mode (must go\n"
		"through and be counted), each path after unload (must go through).\n"
		"A path the loaded variant does not cover makes the result partial.\n"
		"Exit status 1 if any shield failed or was partial.\n"
		"Shield objects are looked up in DIR (default $KSHIELD_SHIELDS, or the\n"
		"shields directory beside the kshield binary).\n");
	return 0;
}

int do_test(int argc, char **argv)
{
	const char *name = NULL, *object = NULL, *dir = ks_cli_shields_dir();
	char path[PATH_MAX];
	bool all = false, ok = true, one;
	const struct ks_opt opts[] = {
		OPT_FLAG("--all", &all), OPT_VAL("--object", &object), OPT_VAL("--dir", &dir), OPT_END
	};
	int err, npos;

	if (!ks_opts_parse("test", opts, argc, argv, 1, &npos, do_help, &err))
		return err;
	name = npos ? argv[0] : NULL;
	ks_test_shields_dir = dir;
	if (name && !strcmp(name, "list")) {
		for (struct ks_shield_test *t = ks_test_first(); t; t = t->next) {
			printf("%s", t->shield);
			for (int i = 0; i < t->npaths; i++)
				printf("%s%s", i ? "," : " ", t->paths[i].name);
			printf("\n");
		}
		return 0;
	}
	if (!all && !name)
		return ks_usage("usage: kshield test NAME [--object FILE] | --all");
	if (all) {
		for (struct ks_shield_test *t = ks_test_first(); t; t = t->next) {
			snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, t->shield);
			if (access(path, R_OK))
				continue;
			err = run_one(t, path, &one);
			if (err)
				return ks_report(err);
			ok &= one;
		}
		return ok ? 0 : 1;
	}
	const struct ks_shield_test *t = ks_test_find(name);

	if (!t)
		return ks_report(ks_err(-ENOENT, "no test for shield '%s' (see 'kshield test list')", name));
	if (!object) {
		snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, name);
		object = path;
	}
	err = run_one(t, object, &one);
	if (err)
		return ks_report(err);
	return one ? 0 : 1;
}
