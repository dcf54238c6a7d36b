/* SPDX-License-Identifier: MIT */
/* cli.h - command tables, global options, output and error reporting.
 *
 * Library code (loader, pins, store, ...) never prints: it returns a negative
 * errno and records a one-line message with ks_err(). The command functions
 * in the noun files (shield.c, probe.c, ...) report it once, through
 * ks_report(), as "error: ..." or {"error": "..."} under -j.
 */
#ifndef KSHIELD_CLI_H
#define KSHIELD_CLI_H

#include <stdbool.h>
#include <json-c/json.h>
#include "err.h"
#include "log.h"
#include "parse.h"
#include "pins.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

extern bool json_output;	/* -j / --json */
extern bool pretty_output;	/* -p / --pretty (implies -j) */
extern bool verbose;		/* -v: libbpf's debug log */
extern const char *btf_dir_opt;	/* --btf-dir DIR, NULL when not given */
/* The bundled shields' objects: $KSHIELD_SHIELDS, else beside the binary
 * (build/shields, ../lib/kshield/shields), else /usr/lib/kshield/shields. */
const char *ks_cli_shields_dir(void);

/* Run the command in @cmds whose name @argv[0] is an unambiguous prefix of.
 * An empty argv or "help" runs @help. Returns the command's exit code. */
int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       int (*help)(int argc, char **argv));

/* One option of a command: "--store" VALUE (@val), "--kill" (@flag), a
 * whole number (@num), or a repeatable "--sites" VALUE (each value appended
 * to @list, at most @max of them, their count in *@count). */
struct ks_opt {
	const char *name;	/* "--store"; a short alias is its own entry */
	const char **val;	/* takes a value, stored here */
	bool *flag;		/* or a flag, set to true */
	int *num;		/* or a whole number (strict: "12", "-1"; not "12x") */
	const char **list;	/* or a repeatable value: list[(*count)++] */
	int *count;
	int max;
};
#define OPT_VAL(n, p)	{ .name = (n), .val = (p) }
#define OPT_FLAG(n, p)	{ .name = (n), .flag = (p) }
#define OPT_INT(n, p)	{ .name = (n), .num = (p) }
#define OPT_LIST(n, arr, cnt, mx)	{ .name = (n), .list = (arr), .count = (cnt), .max = (mx) }
#define OPT_END		{ .name = NULL }

/* A command's arguments against @opts (the last entry's name is NULL):
 * "help", "--help" and "-h" run @help; "--" ends the options; an option
 * that takes a value takes the next word, or its own after '='
 * ("--store=PATH"); every other word is positional and stays in @argv, in
 * order, their count in @npos (more than @maxpos is a usage error naming
 * @cmd). Returns true to go on; false when the command is to return *@rc
 * now (help's status, or 2 after a one-line usage error). */
bool ks_opts_parse(const char *cmd, const struct ks_opt *opts, int argc, char **argv,
		   int maxpos, int *npos, int (*help)(void), int *rc);

/* Print the recorded error (or strerror(-err) when none) once, to stderr,
 * and return the process exit code (1). */
int ks_report(int err);
/* The weakening token a command uses: --token @opt, else the config's
 * weaken_token (KS_CONFIG_DEFAULT), else the default path. */
const char *ks_token_path(const char *opt);
/* ks_weaken_allow() with that token: the gate every weakening command
 * passes first (weaken.h). */
int ks_weaken_cli(const char *token_opt, const char *action);

/* Print a usage error and return 2. */
int ks_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print @obj as JSON on stdout (pretty under -p) and drop the reference. */
void ks_json_print(struct json_object *obj);

/* Print what a sign command made (JSON with -j: @what is the key naming the signed file). */
void ks_sign_print_signed(const char *what, const char *path, const char *out, const char *id);
#ifndef KSHIELD_STATIC
/* A fleet-wide query's per-host rows (hunt.c): ks_hunt_pg's row callback
 * appends {host, hits, first_ts, last_ts} to the JSON array @ctx; the
 * print function shows them as a HOST HITS table. */
void ks_pg_host_row(const char *host, long long hits, long long first_ts, long long last_ts,
		    void *ctx);
void ks_pg_hosts_print(struct json_object *hosts);
#endif
/* `kshield shield keygen|sign|verify` (sign.c). */
int do_shield_keygen(int argc, char **argv);
int do_shield_sign(int argc, char **argv);
int do_shield_verify(int argc, char **argv);
/* `kshield shield proven` (proven.c). */
int do_shield_proven(int argc, char **argv);

/* Noun entry points, one per file. */
int do_probe(int argc, char **argv);
int do_shield(int argc, char **argv);
int do_test(int argc, char **argv);
int do_agent(int argc, char **argv);
int do_events(int argc, char **argv);
int do_hunt(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_debuginfo(int argc, char **argv);
int do_sites(int argc, char **argv);
int do_btf(int argc, char **argv);
int do_hooks(int argc, char **argv);
int do_guard(int argc, char **argv);
int do_status(int argc, char **argv);
#ifndef KSHIELD_STATIC	/* no static libnats/libpq: the guest binary has no fleet */
int do_fleet(int argc, char **argv);
int do_collect(int argc, char **argv);
#endif

#endif /* KSHIELD_CLI_H */
