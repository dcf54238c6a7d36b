// SPDX-License-Identifier: MIT
/* sites.c - the `kshield sites` noun: every copy of a user-space function
 * (out-of-line and inlined) from build-ID matched DWARF, and a tracer that
 * counts the hits of each copy or kills at it.
 *
 *	kshield sites list TARGET [--vmlinux FILE | --manifest FILE]
 *	kshield sites trace TARGET [--kill] [--partial] [--system] [--symbol] [--duration S]
 *				   [-- CMD ARGS...]
 *	kshield sites export kernel:FUNCTION... [--vmlinux FILE] [-o FILE [--key KEYFILE]]
 *	kshield sites sign MANIFEST --key KEYFILE [--out SIGFILE]
 *	kshield sites verify MANIFEST --keys DIR [--sig SIGFILE]
 *
 * TARGET is PATH:FUNCTION, BUILDID:FUNCTION or kernel:FUNCTION (a kprobe at
 * each copy, at symbol+offset; see kernel_sites.h for where the sites come
 * from). `export` writes a kernel sites manifest, `sign` signs one (the
 * same Ed25519 keys as shields, another domain tag: sign.h), `verify`
 * checks it the way an agent that requires signatures does. `trace` attaches
 * bpf/inline_probe.bpf.c at every site, for CMD's process only (all
 * processes with --system, or without CMD), runs CMD (or waits --duration
 * seconds, or until SIGINT), detaches, and reports hits per site. It is what
 * a shield with KSHIELD_META(target, ...) gets from the loader, made visible.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "btf_find.h"
#include "cli.h"
#include "clock.h"
#include "dwsites.h"
#include "kernel_sites.h"
#include "sign.h"
#include "site_trace.h"
#include "uprobe_sites.h"

static int do_help(int argc, char **argv);
static int sites_help(void)
{
	return do_help(0, NULL);
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr,
		"Usage: kshield sites list TARGET [--vmlinux FILE | --manifest FILE] [-j]\n"
		"       kshield sites trace TARGET [--kill] [--partial] [--system] [--symbol]\n"
		"                               [--duration S] [-- CMD ARGS...]\n"
		"       kshield sites export kernel:FUNCTION... [--vmlinux FILE] [-o FILE [--key KEYFILE]]\n"
		"       kshield sites sign MANIFEST --key KEYFILE [--out SIGFILE]\n"
		"       kshield sites verify MANIFEST --keys DIR [--sig SIGFILE]\n"
		"\n"
		"TARGET := { PATH:FUNCTION | BUILDID:FUNCTION | kernel:FUNCTION }\n"
		"Every out-of-line and inlined copy of FUNCTION, from DWARF matched by build ID\n"
		"(the binary itself, $KSHIELD_DEBUG_DIRS or /usr/lib/debug/.build-id, then\n"
		"debuginfod when DEBUGINFOD_URLS is set). 'trace' counts the hits of each copy\n"
		"(or SIGKILLs the caller with --kill) in CMD (every process with --system or\n"
		"without CMD); --partial attaches even when some copies cannot be probed.\n"
		"Kernel functions: from the running kernel's vmlinux (by build ID), or its\n"
		"sites manifest $KSHIELD_SITES_DIR/BUILDID.json (default %s); --vmlinux\n"
		"reads any vmlinux, --manifest a given manifest (it must match this kernel).\n"
		"'export' writes the manifest of a vmlinux (--key signs it: FILE.sig);\n"
		"'sign' and 'verify' use the shield keys (kshield shield keygen): an agent with\n"
		"trusted keys (keys_dir, --keys) or $KSHIELD_SITES_KEYS refuses unsigned\n"
		"manifests. 'trace --symbol' counts what one kprobe on the symbol alone sees.\n",
		KS_SITES_DIR_DEFAULT);
	return 0;
}

static struct json_object *site_json(const struct ks_site *site, int id,
				     const struct ks_site_hits *h)
{
	struct json_object *o = json_object_new_object(), *args = json_object_new_array();
	char buf[64];
	int i;

	json_object_object_add(o, "id", json_object_new_int(id));
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)site->addr);
	json_object_object_add(o, "addr", json_object_new_string(buf));
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)site->offset);
	json_object_object_add(o, "offset", json_object_new_string(buf));
	json_object_object_add(o, "kind", json_object_new_string(ks_site_kind_name(site->kind)));
	json_object_object_add(o, "caller", json_object_new_string(site->caller));
	json_object_object_add(o, "symbol", json_object_new_string(site->symbol));
	if (site->symbol[0]) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)site->symbol_offset);
		json_object_object_add(o, "symbol_offset", json_object_new_string(buf));
	}
	if (site->kind == KS_SITE_INLINED) {
		snprintf(buf, sizeof(buf), "%s:%d", site->call_file, site->call_line);
		json_object_object_add(o, "call", json_object_new_string(buf));
	}
	json_object_object_add(o, "probeable", json_object_new_boolean(site->probeable));
	if (site->why[0])
		json_object_object_add(o, "why", json_object_new_string(site->why));
	for (i = 0; i < site->nargs; i++) {
		struct json_object *a = json_object_new_object();

		json_object_object_add(a, "name", json_object_new_string(site->args[i].name));
		json_object_object_add(a, "loc", json_object_new_string(site->args[i].loc));
		json_object_object_add(a, "available",
				       json_object_new_boolean(site->args[i].where.kind !=
							       KS_ARGLOC_UNAVAILABLE));
		json_object_array_add(args, a);
	}
	json_object_object_add(o, "args", args);
	if (h) {
		json_object_object_add(o, "hits", json_object_new_int64(h->hits));
		if (h->arg0_ok)
			json_object_object_add(o, "arg0", json_object_new_int64((__s64)h->arg0));
	}
	return o;
}

static struct json_object *sites_json(const struct ks_sites *s, const struct ks_site_hits *hits)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	int i;

	json_object_object_add(o, "binary", json_object_new_string(s->binary));
	json_object_object_add(o, "function", json_object_new_string(s->function));
	json_object_object_add(o, "build_id", json_object_new_string(s->build_id));
	json_object_object_add(o, "debug_file", json_object_new_string(s->debug_file));
	if (s->kernel) {
		json_object_object_add(o, "kernel", json_object_new_boolean(true));
		json_object_object_add(o, "release", json_object_new_string(s->release));
		json_object_object_add(o, "arch", json_object_new_string(s->arch));
	}
	json_object_object_add(o, "debug_source", json_object_new_string(s->debug_source ?: ""));
	if (s->alt_file[0])
		json_object_object_add(o, "alt_file", json_object_new_string(s->alt_file));
	json_object_object_add(o, "split_units", json_object_new_int(s->split_units));
	json_object_object_add(o, "missing_dwo", json_object_new_int(s->missing_dwo));
	for (i = 0; i < s->nsites; i++)
		json_object_array_add(arr, site_json(&s->site[i], i, hits ? &hits[i] : NULL));
	json_object_object_add(o, "sites", arr);
	return o;
}

static void sites_plain(const struct ks_sites *s, const struct ks_site_hits *hits)
{
	int i, j;

	if (s->kernel)
		printf("kernel %s (%s %s)\n  build id %s, sites from %s (%s)\n", s->function,
		       s->release[0] ? s->release : "release unknown", s->arch, s->build_id,
		       s->debug_file, s->debug_source);
	else
		printf("%s in %s\n  build id %s, DWARF from %s (%s)%s%s\n", s->function, s->binary,
		       s->build_id[0] ? s->build_id : "(none)", s->debug_file, s->debug_source,
		       s->alt_file[0] ? ", alt " : "", s->alt_file);
	if (s->split_units || s->missing_dwo)
		printf("  split DWARF: %d units read, %d .dwo missing\n", s->split_units,
		       s->missing_dwo);
	for (i = 0; i < s->nsites; i++) {
		const struct ks_site *site = &s->site[i];

		if (s->kernel)
			printf("  #%-3d %s+0x%llx %-8s in %s", i, site->symbol[0] ? site->symbol : "?",
			       (unsigned long long)site->symbol_offset,
			       ks_site_kind_name(site->kind), site->caller);
		else
			printf("  #%-3d 0x%-8llx off 0x%-8llx %-8s in %s", i,
			       (unsigned long long)site->addr, (unsigned long long)site->offset,
			       ks_site_kind_name(site->kind), site->caller);
		if (site->kind == KS_SITE_INLINED)
			printf(" (%s:%d)", site->call_file, site->call_line);
		if (hits)
			printf("  hits %llu", (unsigned long long)hits[i].hits);
		printf("\n");
		if (!site->probeable)
			printf("       not probed: %s\n", site->why);
		for (j = 0; j < site->nargs; j++)
			printf("       %s: %s\n", site->args[j].name, site->args[j].loc);
	}
}

static bool is_kernel(const char *spec)
{
	return !strncmp(spec, "kernel:", 7) && spec[7];
}

static int resolve(const char *spec, const struct ks_kernel_src *ksrc, struct ks_sites *s)
{
	char binary[PATH_MAX], function[128];
	int err;

	if (is_kernel(spec))
		return ks_kernel_sites(spec + 7, ksrc, s);
	if (ksrc->vmlinux || ksrc->manifest)
		return ks_err(-EINVAL, "--vmlinux and --manifest are for kernel:FUNCTION targets");
	err = ks_target_parse(spec, binary, sizeof(binary), function, sizeof(function));
	return err ? err : ks_sites_find(binary, function, s);
}

/* --vmlinux FILE / --manifest FILE: where kernel sites come from. */
#define SRC_OPTS(src) OPT_VAL("--vmlinux", &(src)->vmlinux), OPT_VAL("--manifest", &(src)->manifest)

static int do_list(int argc, char **argv)
{
	struct ks_kernel_src ksrc = {};
	struct ks_sites s;
	int err, n;
	const struct ks_opt opts[] = { SRC_OPTS(&ksrc), OPT_END };

	if (!ks_opts_parse("sites", opts, argc, argv, 1, &n, sites_help, &err))
		return err;
	if (n != 1 || (ksrc.vmlinux && ksrc.manifest))
		return ks_usage("usage: kshield sites list TARGET [--vmlinux FILE | --manifest FILE]");
	err = resolve(argv[0], &ksrc, &s);
	if (err)
		return ks_report(err);
	if (json_output)
		ks_json_print(sites_json(&s, NULL));
	else
		sites_plain(&s, NULL);
	ks_sites_free(&s);
	return 0;
}

static int do_export(int argc, char **argv)
{
	struct ks_kernel_src ksrc;
	struct ks_sites *fns;
	const char *out = NULL, *key = NULL;
	char id[KS_KEYID_LEN];
	FILE *f = stdout;
	int i, n = 0, err = 0;

	const struct ks_opt opts[] = {
		SRC_OPTS(&ksrc), OPT_VAL("--key", &key), OPT_VAL("-o", &out), OPT_END,
	};

	memset(&ksrc, 0, sizeof(ksrc));
	if (!ks_opts_parse("sites", opts, argc, argv, argc, &argc, sites_help, &err))
		return err;
	if (ksrc.manifest)
		return ks_usage("usage: kshield sites export kernel:FUNCTION... [--vmlinux FILE] "
				"[-o FILE [--key KEYFILE]]");
	fns = calloc(argc ? argc : 1, sizeof(*fns));
	if (!fns)
		return ks_report(ks_err(-ENOMEM, "out of memory"));
	for (i = 0; i < argc && !err; i++) {
		if (!is_kernel(argv[i])) {
			free(fns);
			return ks_usage("export takes kernel:FUNCTION targets, not '%s'", argv[i]);
		} else if (!(err = ks_kernel_sites(argv[i] + 7, &ksrc, &fns[n]))) {
			/* One manifest describes one build. */
			if (n && strcmp(fns[n].build_id, fns[0].build_id))
				err = ks_err(-EILSEQ, "%s resolved from build %s, %s from %s",
					     fns[n].function, fns[n].build_id, fns[0].function,
					     fns[0].build_id);
			n++;
		}
	}
	if (!err && !n)
		err = ks_err(-EINVAL, "no kernel:FUNCTION to export");
	if (!err && key && !out)
		err = ks_err(-EINVAL, "--key signs the manifest into FILE.sig: give -o FILE");
	if (!err && out && !(f = fopen(out, "we")))
		err = ks_err(-errno, "can't write %s: %s", out, strerror(errno));
	if (!err)
		err = ks_sites_manifest_write(f, fns, n);
	if (f && f != stdout && fclose(f) && !err)
		err = ks_err(-errno, "can't write %s: %s", out, strerror(errno));
	if (!err && key)
		err = ks_sign_file(KS_SIGN_SITES, out, key, NULL, id);
	for (i = 0; i < n; i++)
		ks_sites_free(&fns[i]);
	free(fns);
	return err ? ks_report(err) : 0;
}

static int do_sign(int argc, char **argv)
{
	const char *path = NULL, *key = NULL, *out = NULL;
	char sigpath[PATH_MAX + 8], id[KS_KEYID_LEN];
	int n, err;
	const struct ks_opt opts[] = { OPT_VAL("--key", &key), OPT_VAL("--out", &out), OPT_END };

	if (!ks_opts_parse("sites", opts, argc, argv, 1, &n, sites_help, &err))
		return err;
	path = n ? argv[0] : NULL;
	if (!path || !key)
		return ks_usage("usage: kshield sites sign MANIFEST --key KEYFILE [--out SIGFILE]");
	snprintf(sigpath, sizeof(sigpath), "%s.sig", path);
	out = out ?: sigpath;
	/* Only a manifest: signing some other file under the manifest tag
	 * would only make a signature nobody can use. */
	err = ks_sites_manifest_check(path);
	if (!err)
		err = ks_sign_file(KS_SIGN_SITES, path, key, out, id);
	if (err)
		return ks_report(err);
	ks_sign_print_signed("manifest", path, out, id);
	return 0;
}

static int do_verify(int argc, char **argv)
{
	const char *path = NULL, *keys = NULL, *sig = NULL;
	char id[KS_KEYID_LEN];
	int n, err;
	const struct ks_opt opts[] = { OPT_VAL("--keys", &keys), OPT_VAL("--sig", &sig), OPT_END };

	if (!ks_opts_parse("sites", opts, argc, argv, 1, &n, sites_help, &err))
		return err;
	path = n ? argv[0] : NULL;
	if (!path || !keys)
		return ks_usage("usage: kshield sites verify MANIFEST --keys DIR [--sig SIGFILE]");
	err = ks_sign_verify_file(KS_SIGN_SITES, path, sig, keys, id);
	if (err)
		return ks_report(ks_err_ctx(err, "sites manifest %s", path));
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "manifest", json_object_new_string(path));
		json_object_object_add(o, "status", json_object_new_string("verified"));
		json_object_object_add(o, "keyid", json_object_new_string(id));
		ks_json_print(o);
	} else {
		printf("%s: verified, signed by key %s\n", path, id);
	}
	return 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Start @argv held before exec (it waits for a byte on *@go), so that the
 * probes can be attached for its pid before it runs. */
static int start_command(char **argv, pid_t *pid, int *go)
{
	int p[2];

	if (pipe(p))
		return ks_err(-errno, "pipe: %s", strerror(errno));
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	*pid = fork();
	if (*pid < 0) {
		close(p[0]);
		close(p[1]);
		return ks_err(-errno, "fork: %s", strerror(errno));
	}
	if (!*pid) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);	/* the tracer gave up */
		/* Under -j our stdout carries one JSON document: the command's
		 * own output goes to stderr. */
		if (json_output)
			dup2(2, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return 0;
}

/* Let the held command run (@run) or die unborn, and reap it. */
static int finish_command(pid_t pid, int go, bool run, int *status)
{
	int err = 0;

	if (run && write(go, "g", 1) != 1)
		err = ks_err(-errno, "can't start the command: %s", strerror(errno));
	close(go);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return err ? err : ks_err(-errno, "waitpid: %s", strerror(errno));
	return err;
}

/* Wait for SIGINT/SIGTERM, or @duration seconds when >= 0. */
static void wait_traced(double duration)
{
	int64_t t0 = ks_mono_ns();

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop) {
		usleep(100 * 1000);
		if (duration >= 0 && (ks_mono_ns() - t0) / 1e9 >= duration)
			break;
	}
}

static void print_command_status(struct json_object *o, int status)
{
	struct json_object *c = o ? json_object_new_object() : NULL;

	if (o) {
		if (WIFEXITED(status))
			json_object_object_add(c, "exit", json_object_new_int(WEXITSTATUS(status)));
		if (WIFSIGNALED(status))
			json_object_object_add(c, "signal", json_object_new_int(WTERMSIG(status)));
		json_object_object_add(o, "command", c);
	} else if (WIFSIGNALED(status)) {
		printf("command killed by signal %d\n", WTERMSIG(status));
	} else {
		printf("command exited %d\n", WEXITSTATUS(status));
	}
}

static void print_symbol_hits(const struct ks_sites *s, const struct ks_site_hits *h,
			      bool cmd, int status)
{
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "function", json_object_new_string(s->function));
		json_object_object_add(o, "symbol_hits", json_object_new_int64(h->hits));
		if (cmd && WIFEXITED(status))
			json_object_object_add(o, "exit", json_object_new_int(WEXITSTATUS(status)));
		if (cmd && WIFSIGNALED(status))
			json_object_object_add(o, "signal", json_object_new_int(WTERMSIG(status)));
		ks_json_print(o);
	} else {
		printf("kprobe on the symbol %s: %llu hits\n", s->function,
		       (unsigned long long)h->hits);
	}
}

static void print_site_hits(const struct ks_sites *s, const struct ks_site_hits *hits,
			    int nlinks, bool kill, bool cmd, int status)
{
	if (json_output) {
		struct json_object *o = sites_json(s, hits);

		json_object_object_add(o, "attached", json_object_new_int(nlinks));
		json_object_object_add(o, "kill", json_object_new_boolean(kill));
		if (cmd)
			print_command_status(o, status);
		ks_json_print(o);
	} else {
		sites_plain(s, hits);
		if (cmd)
			print_command_status(NULL, status);
	}
}

static int do_trace(int argc, char **argv)
{
	struct ks_site_trace *t = NULL;
	struct ks_site_hits *hits = NULL;
	struct ks_sites s = { 0 };
	struct ks_kernel_src ksrc;
	unsigned flags = 0;
	bool kill = false, system = false, symbol = false;
	pid_t child = -1;
	int go = -1;
	double duration = -1;
	char **cmd = NULL;
	int nlinks = 0, status = 0, err, i;
	const char *spec = NULL;

	const char *dur = NULL;
	bool partial = false;
	const struct ks_opt opts[] = {
		SRC_OPTS(&ksrc), OPT_FLAG("--kill", &kill), OPT_FLAG("--symbol", &symbol),
		OPT_FLAG("--system", &system), OPT_FLAG("--partial", &partial),
		OPT_VAL("--duration", &dur), OPT_END,
	};
	int nopt;

	/* "-- CMD ARGS...": the command to run traced, not more options. */
	for (nopt = 0; nopt < argc && strcmp(argv[nopt], "--"); nopt++)
		;
	if (nopt < argc)
		cmd = &argv[nopt + 1];
	memset(&ksrc, 0, sizeof(ksrc));
	if (!ks_opts_parse("sites", opts, nopt, argv, 1, &i, sites_help, &err))
		return err;
	if (ksrc.vmlinux && ksrc.manifest)
		return ks_usage("--vmlinux FILE or --manifest FILE, not both");
	spec = i ? argv[0] : NULL;
	if (partial)
		flags |= KS_SITES_PARTIAL;
	if (dur) {
		char *end;

		duration = strtod(dur, &end);
		if (*end || duration < 0)
			return ks_usage("invalid --duration '%s'", dur);
	}
	if (!spec || (cmd && !cmd[0]))
		return ks_usage("usage: kshield sites trace TARGET [--kill] [-- CMD ARGS...]");
	if (symbol && !is_kernel(spec))
		return ks_usage("--symbol is for kernel:FUNCTION targets");

	if (symbol) {
		/* One kprobe on the symbol: what a plain kprobe sees. */
		s.kernel = true;
		snprintf(s.function, sizeof(s.function), "%s", spec + 7);
		snprintf(s.binary, sizeof(s.binary), "vmlinux");
	} else if ((err = resolve(spec, &ksrc, &s))) {
		return ks_report(err);
	}
	if ((err = ks_site_trace_open(&s, kill, &t)))
		goto out;
	/* With a command, count (or kill) that process only, unless
	 * --system: other users of a shared library would blur the counts. */
	if (cmd && (err = start_command(cmd, &child, &go)))
		goto out;
	err = ks_site_trace_attach(t, &s, symbol, cmd && !system ? child : 0, flags);
	nlinks = ks_site_trace_nlinks(t);
	if (cmd) {
		int ferr = finish_command(child, go, !err, &status);

		if (!err)
			err = ferr;
		child = -1;
	}
	if (err)
		goto out;
	if (!cmd) {
		if (!json_output)
			fprintf(stderr, "tracing %d sites of %s; Ctrl-C to stop\n", nlinks,
				s.function);
		wait_traced(duration);
	}
	ks_site_trace_detach(t);

	hits = calloc(s.nsites ? s.nsites : 1, sizeof(*hits));
	if (!hits) {
		err = ks_err(-ENOMEM, "out of memory");
		goto out;
	}
	if ((err = ks_site_trace_hits(t, hits, symbol ? 1 : s.nsites)))
		goto out;
	if (symbol)
		print_symbol_hits(&s, hits, cmd, status);
	else
		print_site_hits(&s, hits, nlinks, kill, cmd, status);
out:
	ks_site_trace_close(t);
	ks_sites_free(&s);
	free(hits);
	return err ? ks_report(err) : 0;
}

int do_sites(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "list",	do_list },
		{ "trace",	do_trace },
		{ "export",	do_export },
		{ "sign",	do_sign },
		{ "verify",	do_verify },
		{ "help",	do_help },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, do_help);
}
