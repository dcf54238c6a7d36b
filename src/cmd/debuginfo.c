// SPDX-License-Identifier: MIT
/* debuginfo.c - the `kshield debuginfo` noun: build IDs, and whether BTF and
 * DWARF are found for them, of binaries, of a running process's mappings, or
 * of the running kernel. Shields on inlined functions (see `kshield sites`)
 * need DWARF that matches the running build exactly; this says beforehand
 * whether it is there.
 *
 *	kshield debuginfo file PATH...
 *	kshield debuginfo pid PID
 *	kshield debuginfo kernel
 *
 * Lookups are local ($KSHIELD_DEBUG_DIRS or /usr/lib/debug) unless
 * --debuginfod is given, which also asks the servers in $DEBUGINFOD_URLS
 * (and may download large files: a kernel's vmlinux is hundreds of MB).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "cli.h"
#include "debugfile.h"
#include "kernel_sites.h"

static unsigned lookup_flags = KS_DEBUG_LOCAL;

static int debuginfo_help(void)
{
	fprintf(stderr,
		"Usage: kshield debuginfo file PATH... [--debuginfod] [-j]\n"
		"       kshield debuginfo pid PID [--debuginfod] [-j]\n"
		"       kshield debuginfo kernel [--debuginfod] [-j]\n"
		"\n"
		"Build IDs and whether BTF and DWARF are found for each object. DWARF is\n"
		"looked for in the file itself, then the .build-id trees of\n"
		"$KSHIELD_DEBUG_DIRS (default /usr/lib/debug); --debuginfod also asks the\n"
		"servers in $DEBUGINFOD_URLS.\n");
	return 0;
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return debuginfo_help();
}

/* @cmd's options (--debuginfod) out of @argv, at most @maxpos words left,
 * their count in *@argc. false: return *@rc now (help, usage error). */
static bool take_flags(const char *cmd, int *argc, char **argv, int maxpos, int *rc)
{
	bool debuginfod = false;
	const struct ks_opt opts[] = { OPT_FLAG("--debuginfod", &debuginfod), OPT_END };

	if (!ks_opts_parse(cmd, opts, *argc, argv, maxpos, argc, debuginfo_help, rc))
		return false;
	if (debuginfod)
		lookup_flags &= ~KS_DEBUG_LOCAL;
	return true;
}

/* One object's report: build ID, BTF, DWARF location. @open_path is what we
 * read (e.g. /proc/PID/map_files/...), @path what we show. */
static struct json_object *describe(const char *path, const char *open_path)
{
	struct json_object *o = json_object_new_object();
	char id[KS_BUILD_ID_HEX] = "", dbg[PATH_MAX];
	const char *src = NULL;
	int err;

	json_object_object_add(o, "path", json_object_new_string(path));
	err = ks_build_id_file(open_path, id, sizeof(id));
	if (err < 0 && err != -ENODATA) {
		json_object_object_add(o, "error", json_object_new_string(ks_errmsg()));
		return o;
	}
	json_object_object_add(o, "build_id", id[0] ? json_object_new_string(id) : NULL);
	json_object_object_add(o, "btf", json_object_new_boolean(ks_elf_has_btf(open_path)));
	err = ks_debug_find(id, open_path, lookup_flags, dbg, sizeof(dbg), &src);
	if (!err) {
		json_object_object_add(o, "dwarf", json_object_new_string(
			!strcmp(src, "binary") ? path : dbg));
		json_object_object_add(o, "dwarf_source", json_object_new_string(src));
	} else {
		json_object_object_add(o, "dwarf", NULL);
		if (err == -EILSEQ)
			json_object_object_add(o, "dwarf_refused", json_object_new_string(ks_errmsg()));
	}
	return o;
}

static void print_plain(struct json_object *o)
{
	struct json_object *v;
	const char *id = NULL, *dwarf = NULL, *src = NULL;

	if (json_object_object_get_ex(o, "error", &v)) {
		printf("%s\n  error: %s\n", json_object_get_string(json_object_object_get(o, "path")),
		       json_object_get_string(v));
		return;
	}
	if (json_object_object_get_ex(o, "build_id", &v) && v)
		id = json_object_get_string(v);
	if (json_object_object_get_ex(o, "dwarf", &v) && v)
		dwarf = json_object_get_string(v);
	if (json_object_object_get_ex(o, "dwarf_source", &v) && v)
		src = json_object_get_string(v);
	printf("%s\n  build id %s\n  btf      %s\n  dwarf    %s%s%s%s\n",
	       json_object_get_string(json_object_object_get(o, "path")), id ? id : "(none)",
	       json_object_get_boolean(json_object_object_get(o, "btf")) ? "yes" : "no",
	       dwarf ? dwarf : "not found", src ? " (" : "", src ? src : "", src ? ")" : "");
	if (json_object_object_get_ex(o, "dwarf_refused", &v))
		printf("  refused  %s\n", json_object_get_string(v));
	if (json_object_object_get_ex(o, "kprobes", &v))
		printf("  kprobes  %s\n", json_object_get_boolean(v) ? "yes" : "no");
	if (json_object_object_get_ex(o, "sites_manifest", &v))
		printf("  sites    %s\n", v ? json_object_get_string(v) : "no manifest");
}

static int emit(struct json_object *list, struct json_object *top)
{
	size_t i;

	if (json_output) {
		ks_json_print(top);
		return 0;
	}
	for (i = 0; i < json_object_array_length(list); i++)
		print_plain(json_object_array_get_idx(list, i));
	json_object_put(top);
	return 0;
}

static int do_file(int argc, char **argv)
{
	struct json_object *top, *list;
	int i, rc;

	if (!take_flags("debuginfo file", &argc, argv, argc, &rc))
		return rc;
	if (argc < 1)
		return ks_usage("usage: kshield debuginfo file PATH...");
	top = json_object_new_object();
	list = json_object_new_array();
	for (i = 0; i < argc; i++) {
		char real[PATH_MAX];

		if (!realpath(argv[i], real)) {
			int err = ks_err(-errno, "%s: %s", argv[i], strerror(errno));

			json_object_put(top);
			json_object_put(list);
			return ks_report(err);
		}
		json_object_array_add(list, describe(real, real));
	}
	json_object_object_add(top, "objects", list);
	return emit(list, top);
}

static int do_pid(int argc, char **argv)
{
	struct json_object *top, *list;
	unsigned long long pid;
	char maps[64], line[PATH_MAX + 256];
	FILE *f;
	int err;

	if (!take_flags("debuginfo pid", &argc, argv, 1, &err))
		return err;
	if (argc != 1)
		return ks_usage("usage: kshield debuginfo pid PID");
	if ((err = ks_parse_u64(argv[0], "pid", &pid)))
		return ks_report(err);
	snprintf(maps, sizeof(maps), "/proc/%llu/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return ks_report(ks_err(-errno, "can't read %s: %s", maps, strerror(errno)));
	top = json_object_new_object();
	list = json_object_new_array();
	json_object_object_add(top, "pid", json_object_new_int64(pid));
	/* One entry per mapped file: the first mapping of each path names it,
	 * read through map_files so a replaced file still shows what runs. */
	while (fgets(line, sizeof(line), f)) {
		char range[64], *path = strchr(line, '/'), mf[PATH_MAX], id[KS_BUILD_ID_HEX];
		size_t i;
		bool seen = false;

		if (!path || sscanf(line, "%63s", range) != 1)
			continue;
		path[strcspn(path, "\n")] = 0;
		for (i = 0; i < json_object_array_length(list); i++)
			if (!strcmp(json_object_get_string(json_object_object_get(
					    json_object_array_get_idx(list, i), "path")), path))
				seen = true;
		if (seen)
			continue;
		snprintf(mf, sizeof(mf), "/proc/%llu/map_files/%s", pid, range);
		if (access(mf, R_OK))
			snprintf(mf, sizeof(mf), "%s", path);
		/* Data files mapped by the process (locales, caches) are not
		 * objects with build IDs: leave them out. */
		if (ks_build_id_file(mf, id, sizeof(id)) == -ENOEXEC)
			continue;
		json_object_array_add(list, describe(path, mf));
	}
	fclose(f);
	json_object_object_add(top, "objects", list);
	return emit(list, top);
}

static int do_kernel(int argc, char **argv)
{
	struct json_object *top, *list, *o;
	char id[KS_BUILD_ID_HEX] = "", path[PATH_MAX], dbg[PATH_MAX] = "";
	const char *src = NULL;
	struct utsname u;
	int err;

	if (!take_flags("debuginfo kernel", &argc, argv, 0, &err))
		return err;
	top = json_object_new_object();
	list = json_object_new_array();
	o = json_object_new_object();
	uname(&u);
	if ((err = ks_kernel_build_id(id, sizeof(id)))) {
		json_object_put(top);
		json_object_put(list);
		json_object_put(o);
		return ks_report(err);
	}
	snprintf(path, sizeof(path), "vmlinux-%s", u.release);
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "build_id", json_object_new_string(id));
	json_object_object_add(o, "btf", json_object_new_boolean(!access("/sys/kernel/btf/vmlinux", R_OK)));

	/* The -dbg package's places, then .build-id trees (and debuginfod
	 * with --debuginfod); each candidate must carry the running build ID. */
	err = ks_kernel_vmlinux_find(id, u.release, lookup_flags, dbg, sizeof(dbg), &src);
	json_object_object_add(o, "dwarf", err ? NULL : json_object_new_string(dbg));
	if (!err)
		json_object_object_add(o, "dwarf_source", json_object_new_string(src));
	else if (err == -EILSEQ)
		json_object_object_add(o, "dwarf_refused", json_object_new_string(ks_errmsg()));
	/* What kernel shields on inlined functions need besides DWARF. */
	{
		char why[128], m[PATH_MAX];

		snprintf(m, sizeof(m), "%s/%s.json", ks_kernel_sites_dir(), id);
		json_object_object_add(o, "sites_manifest",
				       access(m, R_OK) ? NULL : json_object_new_string(m));
		json_object_object_add(o, "kprobes",
				       json_object_new_boolean(ks_kprobes_available(why, sizeof(why))));
	}
	json_object_array_add(list, o);
	json_object_object_add(top, "kernel", json_object_new_string(u.release));
	json_object_object_add(top, "objects", list);
	return emit(list, top);
}

int do_debuginfo(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "file",	do_file },
		{ "pid",	do_pid },
		{ "kernel",	do_kernel },
		{ "help",	do_help },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, do_help);
}
