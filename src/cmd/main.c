// SPDX-License-Identifier: MIT
/* main.c - kshield's entry point: global options, then the noun table.
 *
 *	kshield [-j|-p] [-v] [--bpffs DIR] <noun> <verb> [args]
 *
 * Global flags may appear anywhere on the line (bpftool style); they are
 * removed before the noun sees its arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <bpf/libbpf.h>
#include "btf_find.h"
#include "cli.h"
#include "config.h"
#include "meta.h"
#ifndef KSHIELD_STATIC
#include "fleet_converge.h"
#endif

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* kshield reports failures itself, in one line; libbpf's own
	 * account (and the verifier's) is for -v. */
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr,
		"Usage: kshield [OPTIONS] OBJECT COMMAND [ARGS]\n"
		"       kshield --version\n"
		"\n"
		"OBJECT := { probe | shield | test | agent | events | hunt | stats | status |\n"
		"            guard | debuginfo | sites | hooks | fleet | collect }\n"
		"OPTIONS := { -j|--json | -p|--pretty | -v|--verbose | --bpffs DIR | --btf-dir DIR }\n"
		"(--bpffs defaults to $KSHIELD_BPFFS, else /sys/fs/bpf/kshield; --btf-dir, where\n"
		"the BTF of kernels without their own is kept, to $KSHIELD_BTF_DIR, else\n"
		"/var/lib/kshield/btf)\n"
		"\n"
		"  probe              what this kernel offers to BPF shields\n"
		"  shield load|list|info|mode|unload|stats|sign|verify   manage shields\n"
		"  test NAME|--all    prove a shield on this kernel (trigger, benign)\n"
		"  agent              monitor + shields + store; keeps running (see 'agent help')\n"
		"  events             stored events (--kind, --since, --tree, ...)\n"
		"  hunt list|NAME     was it exploited here? symptoms? (read-only SQL)\n"
		"  stats              events per kind, store size, losses\n"
		"  status             agent, shields, monitor, store, guard at a glance\n"
		"  guard status|on|off|load|unload|selftest   the tamper guard\n"
		"  debuginfo          build IDs, BTF and DWARF of binaries, processes, the kernel\n"
		"  sites list|trace|export|sign|verify   every inlined and out-of-line copy of a function\n"
		"  btf find|export|min  BTF for kernels built without it (by build ID)\n"
		"  hooks FUNCTION     where the paths from user space to a kernel function can be refused\n"
		"  fleet deploy|status|wait|promote|rollback|agent   signed shields to a fleet (NATS)\n"
		"  collect            fleet events from NATS into PostgreSQL\n"
		"\n"
		"Run 'kshield OBJECT help' for an object's commands.\n");
	return 0;
}

static const struct cmd nouns[] = {
	{ "help",	do_help },
	{ "probe",	do_probe },
	{ "shield",	do_shield },
	{ "test",	do_test },
	{ "agent",	do_agent },
	{ "events",	do_events },
	{ "hunt",	do_hunt },
	{ "stats",	do_stats },
	{ "debuginfo",	do_debuginfo },
	{ "sites",	do_sites },
	{ "btf",	do_btf },
	{ "hooks",	do_hooks },
	{ "guard",	do_guard },
	{ "status",	do_status },
#ifndef KSHIELD_STATIC
	{ "fleet",	do_fleet },
	{ "collect",	do_collect },
#endif
	{ 0 }
};

int main(int argc, char **argv)
{
	const char *default_root = ks_bpffs_root;
	char *args[argc + 1];
	int i, n = 0;

	/* Pull global flags out of the whole line. The agent owns its own
	 * "--json FILE" (event mirror), so only -j counts as global there. */
	bool agent = false;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!n && !strncmp(a, "agent", strlen(a)) && strlen(a) >= 2)
			agent = true;
		if (!strcmp(a, "-j") || (!strcmp(a, "--json") && !agent)) {
			json_output = true;
		} else if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
			json_output = pretty_output = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = true;
		} else if (!strcmp(a, "--bpffs") && i + 1 < argc) {
			ks_bpffs_root = argv[++i];
		} else if (!strcmp(a, "--btf-dir") && i + 1 < argc) {
			btf_dir_opt = argv[++i];
			ks_btf_set_dir(btf_dir_opt);
		} else if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
			printf(json_output ? "{\"version\":\"%s\"}\n" : "kshield %s\n",
			       KSHIELD_VERSION);
			return 0;
		} else {
			args[n++] = argv[i];
		}
	}
	args[n] = NULL;

	if (getenv("KSHIELD_BPFFS") && ks_bpffs_root == default_root)
		ks_bpffs_root = getenv("KSHIELD_BPFFS");
	libbpf_set_print(print_libbpf);
	/* where shield events find the names of their arguments: the loaded
	 * instance's object, else these (the agent adds its own) */
	ks_shield_args_add_dir(ks_cli_shields_dir());
	ks_shield_args_add_dir(KS_SHIELDS_DIR_DEFAULT);
#ifndef KSHIELD_STATIC
	ks_shield_args_add_dir(KS_FLEET_STATE_DEFAULT);
#endif
	return cmd_select(nouns, n, args, do_help);
}
