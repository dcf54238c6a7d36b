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

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

extern bool json_output;	/* -j / --json */
extern bool pretty_output;	/* -p / --pretty (implies -j) */
extern bool verbose;		/* -v: libbpf's debug log */
extern const char *ks_bpffs_root;	/* --bpffs DIR, default /sys/fs/bpf/kshield */

/* Run the command in @cmds whose name @argv[0] is an unambiguous prefix of.
 * An empty argv or "help" runs @help. Returns the command's exit code. */
int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       int (*help)(int argc, char **argv));

/* Record the error message for the current failure; returns @err so that
 * callers can write `return ks_err(-ENOENT, "...")`. */
int ks_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepend context to the recorded message ("loading x: <old message>"). */
int ks_err_ctx(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ks_errmsg(void);

/* Print the recorded error (or strerror(-err) when none) once, to stderr,
 * and return the process exit code (1). */
int ks_report(int err);
/* Print a usage error and return 2. */
int ks_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print @obj as JSON on stdout (pretty under -p) and drop the reference. */
void ks_json_print(struct json_object *obj);

/* Parse helpers: return 0 or a negative errno with a message recorded. */
int ks_parse_u64(const char *s, const char *what, unsigned long long *out);

/* Noun entry points, one per file. */
int do_probe(int argc, char **argv);
int do_shield(int argc, char **argv);
int do_test(int argc, char **argv);
int do_kagent(int argc, char **argv);	/* agent.c (fleet.c has a static do_agent) */
int do_events(int argc, char **argv);
int do_hunt(int argc, char **argv);
int do_kstats(int argc, char **argv);	/* stats.c (shield.c has a static do_stats) */
int do_debuginfo(int argc, char **argv);
int do_sites(int argc, char **argv);
int do_guard(int argc, char **argv);
int do_kstatus(int argc, char **argv);	/* status.c (fleet.c has a static do_status) */
#ifndef KSHIELD_STATIC	/* no static libnats/libpq: the guest binary has no fleet */
int do_fleet(int argc, char **argv);
int do_collect(int argc, char **argv);
#endif

#endif /* KSHIELD_CLI_H */
