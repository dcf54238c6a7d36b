/* cli.c - command dispatch by unambiguous prefix, error reporting, JSON
 * printing: the pieces every command file uses. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

bool json_output;
bool pretty_output;
bool verbose;

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

static const struct ks_opt *opt_find(const struct ks_opt *opts, const char *name)
{
	for (; opts->name; opts++)
		if (!strcmp(opts->name, name))
			return opts;
	return NULL;
}

bool ks_opts_parse(const char *cmd, const struct ks_opt *opts, int argc, char **argv,
		   int maxpos, int *npos, int (*help)(void), int *rc)
{
	bool options = true;
	int n = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
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
			if (!(o = opt_find(opts, a))) {
				*rc = ks_usage("%s: unknown option '%s' (see 'kshield %s help')", cmd, a, cmd);
				return false;
			}
			if (o->flag) {
				*o->flag = true;
			} else if (i + 1 >= argc) {
				*rc = ks_usage("%s: %s needs a value", cmd, a);
				return false;
			} else {
				*o->val = argv[++i];
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
