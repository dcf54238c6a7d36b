// SPDX-License-Identifier: MIT
/* cli.c - command dispatch by unambiguous prefix, error reporting, JSON
 * printing: the pieces every command file uses. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "config.h"
#include "weaken.h"

bool json_output;
bool pretty_output;
bool verbose;
const char *btf_dir_opt;

int ks_report(int err)
{
	const char *msg = ks_errmsg()[0] ? ks_errmsg() : strerror(err < 0 ? -err : err);

	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "error", json_object_new_string(msg));
		fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		fprintf(stderr, "error: %s\n", msg);
	}
	return 1;
}

int ks_usage(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ks_err(-EINVAL, "%s", msg);
	ks_report(-EINVAL);
	return 2;
}

void ks_json_print(struct json_object *obj)
{
	int flags = pretty_output ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
				  : JSON_C_TO_STRING_PLAIN;

	printf("%s\n", json_object_to_json_string_ext(obj, flags | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       int (*help)(int argc, char **argv))
{
	const struct cmd *match = NULL;
	size_t len;
	int i;

	if (argc < 1 || !strcmp(argv[0], "help") || !strcmp(argv[0], "--help") ||
	    !strcmp(argv[0], "-h"))
		return help(argc, argv);

	len = strlen(argv[0]);
	for (i = 0; cmds[i].name; i++) {
		if (!strcmp(cmds[i].name, argv[0]))
			return cmds[i].fn(argc - 1, argv + 1);
		if (!strncmp(cmds[i].name, argv[0], len)) {
			if (match)
				return ks_usage("'%s' is ambiguous (%s, %s, ...); see 'help'",
						argv[0], match->name, cmds[i].name);
			match = &cmds[i];
		}
	}
	if (!match)
		return ks_usage("unknown command '%s'; see 'help'", argv[0]);
	return match->fn(argc - 1, argv + 1);
}

static const struct ks_opt *opt_find(const struct ks_opt *opts, const char *name, size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && !strncmp(opts->name, name, len))
			return opts;
	return NULL;
}

/* Store @v for option @o (spelled @a on the line); false after a usage error. */
static bool opt_set(const char *cmd, const struct ks_opt *o, const char *a, const char *v, int *rc)
{
	char *end;
	long n;

	if (o->val) {
		*o->val = v;
	} else if (o->num) {
		errno = 0;
		n = strtol(v, &end, 10);
		if (!*v || *end || errno || n < INT_MIN || n > INT_MAX) {
			*rc = ks_usage("%s: %s takes a whole number, not '%s'", cmd, o->name, v);
			return false;
		}
		*o->num = n;
	} else if (o->list) {
		if (*o->count >= o->max) {
			*rc = ks_usage("%s: at most %d %s", cmd, o->max, o->name);
			return false;
		}
		o->list[(*o->count)++] = v;
	} else {
		*rc = ks_usage("%s: %s takes no value ('%s')", cmd, o->name, a);
		return false;
	}
	return true;
}

bool ks_opts_parse(const char *cmd, const struct ks_opt *opts, int argc, char **argv,
		   int maxpos, int *npos, int (*help)(void), int *rc)
{
	bool options = true;
	int n = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq;
		const struct ks_opt *o;

		if (options && (!strcmp(a, "help") || !strcmp(a, "--help") || !strcmp(a, "-h"))) {
			*rc = help();
			return false;
		}
		if (options && !strcmp(a, "--")) {
			options = false;
			continue;
		}
		if (options && a[0] == '-' && a[1]) {
			eq = a[1] == '-' ? strchr(a, '=') : NULL;
			if (!(o = opt_find(opts, a, eq ? (size_t)(eq - a) : strlen(a)))) {
				*rc = ks_usage("%s: unknown option '%s' (see 'kshield %s help')", cmd, a, cmd);
				return false;
			}
			if (o->flag && !eq) {
				*o->flag = true;
			} else if (eq) {
				if (!opt_set(cmd, o, a, eq + 1, rc))
					return false;
			} else if (i + 1 >= argc) {
				*rc = ks_usage("%s: %s needs a value", cmd, a);
				return false;
			} else if (!opt_set(cmd, o, a, argv[++i], rc)) {
				return false;
			}
			continue;
		}
		if (n >= maxpos) {
			*rc = ks_usage("%s: unexpected argument '%s' (see 'kshield %s help')", cmd, a, cmd);
			return false;
		}
		argv[n++] = argv[i];
	}
	if (npos)
		*npos = n;
	return true;
}

const char *ks_token_path(const char *opt)
{
	static struct ks_config cfg;

	if (opt)
		return opt;
	ks_config_defaults(&cfg);
	if (ks_config_load(&cfg, KS_CONFIG_DEFAULT, false))
		return KS_WEAKEN_TOKEN_DEFAULT;
	return cfg.weaken_token;
}

int ks_weaken_cli(const char *token_opt, const char *action)
{
	return ks_weaken_allow(ks_token_path(token_opt), action);
}
