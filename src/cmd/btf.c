// SPDX-License-Identifier: MIT
/* btf.c - the `kshield btf` noun: BTF for kernels built without it.
 *
 *	kshield btf find			which BTF the loaders use here, and from where
 *	kshield btf export --vmlinux PATH [-o FILE]	detached BTF from a vmlinux with DWARF
 *	kshield btf min [--shield NAME]... [--no-agent] [--btf FILE] -o FILE
 *
 * A kernel without /sys/kernel/btf/vmlinux is served by btf_dir/<build-id>.btf
 * (btf_find.h). `export` makes that file where the build's DWARF is (a build
 * farm, a -dbg package); `min` cuts a BTF to what the shields, the monitor,
 * the guard and the dispatcher relocate against (bpftool gen min_core_btf).
 */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "btf_find.h"
#include "cli.h"
#include "debugfile.h"
#include "file.h"
#include "guard.h"
#include "monitor.h"
#include "sysdispatch.h"
#include "fpdispatch.h"

#define MAX_OBJS 128

static int btf_help(void)
{
	fprintf(stderr,
		"Usage: kshield btf find\n"
		"       kshield btf export --vmlinux PATH [-o FILE]\n"
		"       kshield btf min [--shield NAME]... [--no-agent] [--btf FILE] -o FILE\n"
		"\n"
		"Kernels built without CONFIG_DEBUG_INFO_BTF have no /sys/kernel/btf/vmlinux;\n"
		"kshield then relocates its programs against the BTF of that build, found by\n"
		"the kernel's build ID: BTF_DIR/<build-id>.btf (--btf-dir, config btf_dir,\n"
		"default /var/lib/kshield/btf; fleet agents write there the BTF a shield's\n"
		"signed bundle carries: fleet deploy --btf), else the servers of\n"
		"$DEBUGINFOD_URLS (the build's .BTF section, else its DWARF converted with\n"
		"pahole), cached there.\n"
		"\n"
		"  find     which BTF the loaders use on this kernel, and where it came from\n"
		"  export   detached BTF of a vmlinux with DWARF (pahole --btf_encode_detached),\n"
		"           by default BTF_DIR/<its build-id>.btf\n"
		"  min      a BTF (--btf, default this kernel's) cut to what the bundled\n"
		"           shields (or --shield NAME...) and the monitor, guard and syscall\n"
		"           dispatcher (unless --no-agent) relocate against\n");
	return 0;
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return btf_help();
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

static int do_find(int argc, char **argv)
{
	static const struct ks_opt none[] = { OPT_END };
	struct ks_btf_src s;
	int err;

	if (!ks_opts_parse("btf find", none, argc, argv, 0, &argc, btf_help, &err))
		return err;
	if ((err = ks_btf_find(&s)))
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "source", json_object_new_string(s.source));
		json_object_object_add(o, "path", json_object_new_string(
					       s.path[0] ? s.path : KS_SYSFS_BTF));
		json_object_object_add(o, "build_id",
				       s.build_id[0] ? json_object_new_string(s.build_id) : NULL);
		json_object_object_add(o, "btf_dir", json_object_new_string(ks_btf_dir()));
		ks_json_print(o);
	} else if (!s.path[0]) {
		printf("kernel BTF: %s\n", KS_SYSFS_BTF);
	} else {
		printf("no BTF: using BTF from %s for build ID %s (%s)\n", s.source, s.build_id,
		       s.path);
	}
	return 0;
}

static int do_export(int argc, char **argv)
{
	const char *vmlinux = NULL, *out = NULL;
	const struct ks_opt opts[] = {
		OPT_VAL("--vmlinux", &vmlinux), OPT_VAL("-o", &out), OPT_VAL("--out", &out), OPT_END
	};
	char id[KS_BUILD_ID_HEX], def[PATH_MAX + 200];
	int err;

	if (!ks_opts_parse("btf export", opts, argc, argv, 0, &argc, btf_help, &err))
		return err;
	if (!vmlinux)
		return ks_usage("usage: kshield btf export --vmlinux PATH [-o FILE]");
	if ((err = ks_build_id_file(vmlinux, id, sizeof(id))) < 0)
		return ks_report(err);
	if (!ks_elf_has_dwarf(vmlinux))
		return ks_report(ks_err(-ENODATA, "%s has no DWARF: export from the vmlinux of the "
					"kernel's debug package (e.g. /usr/lib/debug/boot/vmlinux-RELEASE)",
					vmlinux));
	if (!out) {
		if (mkdir(ks_btf_dir(), 0755) && errno != EEXIST)
			return ks_report(ks_err(-errno, "can't create %s: %s", ks_btf_dir(),
						strerror(errno)));
		snprintf(def, sizeof(def), "%s/%s.btf", ks_btf_dir(), id);
		out = def;
	}
	if ((err = ks_btf_encode(vmlinux, out)))
		return ks_report(err);
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "vmlinux", json_object_new_string(vmlinux));
		json_object_object_add(o, "build_id", json_object_new_string(id));
		json_object_object_add(o, "btf", json_object_new_string(out));
		json_object_object_add(o, "bytes", json_object_new_int64(file_size(out)));
		ks_json_print(o);
	} else {
		printf("%s: %ld bytes of BTF for build ID %s\n", out, file_size(out), id);
	}
	return 0;
}

/* The built-in objects written out for bpftool, into @dir. */
static int write_agent_objs(const char *dir, char **objs, int *n)
{
	static const struct { const char *name; const void *(*elf)(size_t *); } agent[] = {
		{ "monitor", ks_monitor_elf }, { "guard", ks_guard_elf },
		{ "sysdispatch", ks_sysd_elf }, { "fpdispatch", ks_fpd_elf },
	};

	for (size_t i = 0; i < ARRAY_SIZE(agent); i++) {
		char path[PATH_MAX];
		size_t len;
		const void *buf = agent[i].elf(&len);
		int err;

		snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, agent[i].name);
		if ((err = ks_write_file_atomic(path, buf, len, 0600)))
			return err;
		objs[(*n)++] = strdup(path);
	}
	return 0;
}

static int do_min(int argc, char **argv)
{
	const char *names[MAX_OBJS], *btf = NULL, *out = NULL, *sdir = ks_cli_shields_dir();
	int nnames = 0, n = 0, nshields = 0, err, i;
	bool no_agent = false;
	const struct ks_opt opts[] = {
		OPT_LIST("--shield", names, &nnames, MAX_OBJS - 4), OPT_FLAG("--no-agent", &no_agent),
		OPT_VAL("--btf", &btf), OPT_VAL("-o", &out), OPT_VAL("--out", &out),
		OPT_VAL("--dir", &sdir), OPT_END
	};
	char *objs[MAX_OBJS], tmpdir[] = "/tmp/kshield-btfmin.XXXXXX";
	struct ks_btf_src src;
	DIR *d;

	if (!ks_opts_parse("btf min", opts, argc, argv, 0, &argc, btf_help, &err))
		return err;
	if (!out)
		return ks_usage("usage: kshield btf min [--shield NAME]... [--no-agent] [--btf FILE] "
				"-o FILE");
	if (!btf) {
		if ((err = ks_btf_find(&src)))
			return ks_report(err);
		btf = src.path[0] ? src.path : KS_SYSFS_BTF;
	}
	for (i = 0; i < nnames; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s.bpf.o", sdir, names[i]);
		if (access(path, R_OK))
			return ks_report(ks_err(-errno, "no shield %s in %s: %s", names[i], sdir,
						strerror(errno)));
		objs[n++] = strdup(path);
	}
	if (!nnames) {
		struct dirent *e;

		if (!(d = opendir(sdir)))
			return ks_report(ks_err(-errno, "can't read %s: %s", sdir, strerror(errno)));
		while ((e = readdir(d)) && n < MAX_OBJS - 4) {
			size_t l = strlen(e->d_name);
			char path[PATH_MAX];

			if (l < 7 || strcmp(e->d_name + l - 6, ".bpf.o"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", sdir, e->d_name);
			objs[n++] = strdup(path);
		}
		closedir(d);
	}
	nshields = n;
	if (!nshields) {
		err = ks_err(-ENOENT, "no shield objects (*.bpf.o) in %s", sdir);
		goto out;
	}
	if (!mkdtemp(tmpdir)) {
		err = ks_err(-errno, "can't create %s: %s", tmpdir, strerror(errno));
		goto out;
	}
	if ((no_agent || !(err = write_agent_objs(tmpdir, objs, &n))) &&
	    !(err = ks_btf_min(btf, out, (const char *const *)objs, n))) {
		if (json_output) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "btf", json_object_new_string(btf));
			json_object_object_add(o, "btf_bytes", json_object_new_int64(file_size(btf)));
			json_object_object_add(o, "out", json_object_new_string(out));
			json_object_object_add(o, "out_bytes", json_object_new_int64(file_size(out)));
			json_object_object_add(o, "shields", json_object_new_int(nshields));
			json_object_object_add(o, "agent", json_object_new_boolean(!no_agent));
			ks_json_print(o);
		} else {
			printf("%s: %ld bytes (from %ld of %s) for %d shields%s\n", out,
			       file_size(out), file_size(btf), btf, nshields,
			       no_agent ? "" : ", the monitor, the guard and the dispatcher");
		}
	}
	for (i = nshields; i < n; i++)
		unlink(objs[i]);
	rmdir(tmpdir);
out:
	for (i = 0; i < n; i++)
		free(objs[i]);
	return err ? ks_report(err) : 0;
}

int do_btf(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "find",	do_find },
		{ "export",	do_export },
		{ "min",	do_min },
		{ "help",	do_help },
		{ 0 }
	};

	return cmd_select(cmds, argc, argv, do_help);
}
