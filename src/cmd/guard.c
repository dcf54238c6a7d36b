// SPDX-License-Identifier: MIT
/* guard.c - the `kshield guard` commands: status, on, off, load, unload,
 * token and selftest. The selftest is what the kernel matrix runs in each
 * guest: the library plays both the agent and an attacker (attacks.h) and
 * this command prints its checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "attacks.h"
#include "cli.h"
#include "guard.h"
#include "units.h"
#include "config.h"
#include "weaken.h"
#include <kshield/shield.h>

static struct json_object *state_json(const struct ks_guard_state *st)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_object();

	json_object_object_add(o, "loaded", json_object_new_boolean(st->loaded));
	if (!st->loaded)
		return o;
	json_object_object_add(o, "variant", json_object_new_string(st->variant));
	json_object_object_add(o, "refuses", json_object_new_boolean(st->lsm && st->enabled));
	json_object_object_add(o, "enabled", json_object_new_boolean(st->enabled));
	json_object_object_add(o, "agent_pid", json_object_new_int64(st->agent_tgid));
	for (__u32 op = 1; op < KS_TAMPER_OP_MAX; op++)
		json_object_object_add(a, ks_tamper_op_str(op), json_object_new_uint64(st->attempts[op]));
	json_object_object_add(o, "attempts", a);
	if (st->why_no_lsm[0])
		json_object_object_add(o, "why_no_lsm", json_object_new_string(st->why_no_lsm));
	return o;
}

static void print_state(const struct ks_guard_state *st)
{
	__u64 total = 0;

	if (json_output) {
		ks_json_print(state_json(st));
		return;
	}
	if (!st->loaded) {
		printf("guard: not loaded\n");
		return;
	}
	for (int i = 1; i < KS_TAMPER_OP_MAX; i++)
		total += st->attempts[i];
	printf("guard: %s (%s variant: %s)\n", st->enabled ? "on" : "off", st->variant,
	       st->lsm ? "refuses tampering" : "records tampering only, no BPF LSM or trampolines");
	printf("agent: %s", st->agent_tgid ? "" : "none registered\n");
	if (st->agent_tgid)
		printf("pid %u\n", st->agent_tgid);
	printf("tampering attempts: %llu\n", (unsigned long long)total);
}

static int guard_help(void);

/* A guard command that takes no arguments: true to go on, else return *@rc. */
static bool no_args(const char *cmd, int argc, char **argv, int *rc)
{
	static const struct ks_opt none[] = { OPT_END };

	return ks_opts_parse(cmd, none, argc, argv, 0, NULL, guard_help, rc);
}

static int do_gstatus(int argc, char **argv)
{
	struct ks_guard_state st;
	int err;

	if (!no_args("guard status", argc, argv, &err))
		return err;
	err = ks_guard_get(&st);
	if (err && err != -ENOENT)
		return ks_report(err);
	print_state(&st);
	return 0;
}

static int set(bool on, const char *token)
{
	int err = on ? 0 : ks_weaken_cli(token, "guard-off");

	if (!err)
		err = ks_guard_set(on);
	if (err)
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "enabled", json_object_new_boolean(on));
		ks_json_print(o);
	} else {
		printf("guard %s\n", on ? "on" : "off");
	}
	return 0;
}

static int do_on(int argc, char **argv)
{
	int rc;

	if (!no_args("guard on", argc, argv, &rc))
		return rc;
	return set(true, NULL);
}

static int do_off(int argc, char **argv)
{
	const char *token = NULL;
	const struct ks_opt opts[] = { OPT_VAL("--token", &token), OPT_END };
	int rc;

	if (!ks_opts_parse("guard off", opts, argc, argv, 0, NULL, guard_help, &rc))
		return rc;
	return set(false, token);
}

/* Load by hand (the agent does this itself when the config says
 * guard = on). The calling process registers and exits, leaving the
 * guard with no agent: the kshield binary is then the trusted one. */
static int do_load(int argc, char **argv)
{
	struct ks_guard_state st;
	struct ks_config cfg;
	bool off = false;
	const char *keys = NULL, *token = NULL;
	const struct ks_opt opts[] = {
		OPT_FLAG("--off", &off), OPT_VAL("--keys", &keys), OPT_VAL("--token", &token), OPT_END
	};
	int err;

	if (!ks_opts_parse("guard load", opts, argc, argv, 0, NULL, guard_help, &err))
		return err;
	ks_config_defaults(&cfg);
	if (!keys && !ks_config_load(&cfg, KS_CONFIG_DEFAULT, false))
		keys = cfg.keys_dir;
	/* --off on a loaded guard that is on turns it off: a weakening */
	if (off && (err = ks_weaken_cli(token, "guard-off")))
		return ks_report(err);
	if ((err = ks_guard_load(!off, keys, &st)))
		return ks_report(err);
	print_state(&st);
	return 0;
}

static int do_unload(int argc, char **argv)
{
	const char *token = NULL;
	const struct ks_opt opts[] = { OPT_VAL("--token", &token), OPT_END };
	int err;

	if (!ks_opts_parse("guard unload", opts, argc, argv, 0, NULL, guard_help, &err))
		return err;
	err = ks_weaken_cli(token, "guard-off");
	if (!err)
		err = ks_guard_unload();
	if (err)
		return ks_report(err);
	if (!json_output)
		printf("guard unloaded\n");
	return 0;
}

/* ---- selftest: the attacks are attacks.c's, the report is ours ---- */

static void selftest_note(const char *line)
{
	fprintf(stderr, "guard selftest: %s\n", line);
}

static int do_selftest(int argc, char **argv)
{
	struct ks_guard_attacks t;
	int rc, failed;

	if (!no_args("guard selftest", argc, argv, &rc))
		return rc;
	rc = ks_guard_attacks_run(&t, selftest_note);
	if (rc)
		return ks_report(rc);
	failed = ks_guard_attacks_failed(&t);
	if (json_output) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		json_object_object_add(o, "refuses", json_object_new_boolean(t.lsm));
		json_object_object_add(o, "variant", json_object_new_string(t.variant));
		for (int i = 0; i < t.n; i++) {
			struct json_object *c = json_object_new_object();

			json_object_object_add(c, "name", json_object_new_string(t.c[i].name));
			json_object_object_add(c, "ok", json_object_new_boolean(t.c[i].ok));
			json_object_object_add(c, "got", json_object_new_string(t.c[i].got));
			json_object_array_add(arr, c);
		}
		json_object_object_add(o, "checks", arr);
		json_object_object_add(o, "passed", json_object_new_boolean(!failed));
		ks_json_print(o);
	} else {
		printf("guard selftest (%s variant: %s)\n", t.variant, t.lsm ? "refuses" :
		       "records only");
		for (int i = 0; i < t.n; i++)
			printf("  %-4s %-48s %s\n", t.c[i].ok ? "ok" : "FAIL", t.c[i].name, t.c[i].got);
		printf("%s\n", failed ? "FAILED" : "passed");
	}
	return failed ? 1 : 0;
}

/* `kshield guard token --key KEY [--host H] [--expires DUR] [--out FILE]
 * ACTION...`: made where the shield key lives, copied to the host's
 * weaken_token path, then SIGHUP. */
static int do_token(int argc, char **argv)
{
	const char *key = NULL, *out = NULL, *expires = "1h";
	char host[256] = "", allow[2048] = "", *text = NULL;
	__u64 ns = 0;
	size_t used = 0;
	int err;
	FILE *f;
	const char *host_arg = NULL;
	const struct ks_opt opts[] = {
		OPT_VAL("--key", &key), OPT_VAL("--host", &host_arg), OPT_VAL("--expires", &expires),
		OPT_VAL("--out", &out), OPT_END
	};

	if (!ks_opts_parse("guard token", opts, argc, argv, argc, &argc, guard_help, &err))
		return err;
	gethostname(host, sizeof(host) - 1);
	if (host_arg)
		snprintf(host, sizeof(host), "%s", host_arg);
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];

		if (!strncmp(o, "audit:", 6) || !strncmp(o, "unload:", 7) || !strcmp(o, "guard-off")) {
			used += snprintf(allow + used, used < sizeof(allow) ? sizeof(allow) - used : 0,
					 "%s%s", used ? "," : "", o);
		} else {
			return ks_report(ks_err(-EINVAL, "guard token: unknown argument '%s' (actions: "
						"audit:NAME, unload:NAME, guard-off)", o));
		}
	}
	if (!key || !used)
		return ks_report(ks_err(-EINVAL, "usage: kshield guard token --key KEYFILE [--host "
					"HOST|'*'] [--expires 1h] [--out FILE] ACTION..."));
	if ((err = ks_duration_parse(expires, "--expires", &ns)))
		return ks_report(err);
	err = ks_weaken_token(key, host, (long long)time(NULL) + (long long)(ns / 1000000000ULL),
			      allow, &text);
	if (err)
		return ks_report(err);
	f = out ? fopen(out, "we") : stdout;
	if (!f) {
		free(text);
		return ks_report(ks_err(-errno, "can't write %s: %s", out, strerror(errno)));
	}
	fputs(text, f);
	if (out)
		fclose(f);
	free(text);
	return 0;
}

static int guard_help(void)
{
	fprintf(stderr,
		"Usage: kshield guard { status | on | off | load | unload | selftest | token }\n"
		"\n"
		"  status     is the guard loaded, refusing (BPF LSM) or recording only, who is the agent\n"
		"  on         turn refusing on\n"
		"  off [--token FILE]\n"
		"             turn refusing off: only the agent, or the kshield binary while no\n"
		"             agent runs (stop the service first), and while the guard is on only\n"
		"             with a token allowing guard-off (FILE: default the config's weaken_token)\n"
		"  load [--off] [--keys DIR] [--token FILE]\n"
		"             load the guard by hand (the agent does it when guard = on); it records\n"
		"             the public keys of DIR (default the config's keys_dir) as the only\n"
		"             keys tokens are checked against while it is loaded\n"
		"  unload [--token FILE]\n"
		"             remove the guard's pins (needs a guard-off token while it is on)\n"
		"  selftest   play agent and attacker in a scratch --bpffs root; exit 0 if every\n"
		"             check passed (the kernel matrix runs this in each guest)\n"
		"  token --key KEY [--host H] [--expires 1h] [--out FILE] ACTION...\n"
		"             a signed permission for weakening changes while the guard is on:\n"
		"             audit:NAME, unload:NAME, guard-off (guard off and unload)\n"
		"\n"
		"Without a token: " KS_WEAKEN_ADVICE ".\n", "guard-off");
	return 0;
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return guard_help();
}

int do_guard(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "help", do_help },
		{ "status", do_gstatus },
		{ "on", do_on },
		{ "off", do_off },
		{ "load", do_load },
		{ "unload", do_unload },
		{ "selftest", do_selftest },
		{ "token", do_token },
		{ 0 }
	};
	return cmd_select(cmds, argc, argv, do_help);
}
