// SPDX-License-Identifier: MIT
/* probe_hooks.c - load one minimal program of each kind from bpf/probe.bpf.c
 * and see whether the kernel takes it.
 *
 * A probe opens the skeleton with only its own program set to autoload,
 * because one refused program fails a whole object load. The exception is
 * the group of hooks that attach by kernel BTF id (lsm, fentry, fexit,
 * fmod_ret, tp_btf): they are first tried together, to parse vmlinux BTF
 * once, and one by one only when the kernel refuses one of them. The stages
 * are load, attach, and (for hooks the probing process can trigger cheaply)
 * "fired": a program that attaches but never runs is no use to a shield, so
 * it counts as not working. Hooks are probed in parallel threads.
 *
 * Links are never pinned and every skeleton is destroyed before returning,
 * so nothing outlives the probe, even if kshield is killed halfway (links
 * die with their last fd).
 */
#define _GNU_SOURCE	/* strerrorname_np, strerrordesc_np */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "btf_find.h"
#include "err.h"
#include "file.h"
#include "sysinfo.h"
#include "probe_hooks.h"
#include "probe.skel.h"

const char *const ks_probe_hook_names[KS_PROBE_NHOOKS] = {
	"lsm", "fentry", "fexit", "fmod_ret", "kprobe", "kprobe_override",
	"uprobe", "tracepoint", "raw_tracepoint", "tp_btf",
	"cgroup_sock_create", "cgroup_sockopt", "ringbuf",
};

/* How a probed program is attached and triggered. */
enum how {
	BY_SECTION,	/* bpf_program__attach(): the section says where */
	BY_UPROBE,	/* a function of this very binary */
	BY_CGROUP,	/* the cgroup2 root */
	BY_MAP,		/* no program: create the map */
};

enum trigger {
	NO_TRIGGER,	/* load + attach is the whole test */
	BY_SOCKET,	/* socket() runs security_socket_create */
	BY_SYSCALL,	/* any syscall: raw_syscalls/sys_enter */
	BY_CALL,	/* calling ks_probe_uprobe_target() */
};

/* In ks_probe_hook_names order. */
static const struct {
	const char *name;
	enum how how;
	enum trigger trig;
} hooks[KS_PROBE_NHOOKS] = {
	{ "lsm",		BY_SECTION, BY_SOCKET },
	{ "fentry",		BY_SECTION, BY_SOCKET },
	{ "fexit",		BY_SECTION, BY_SOCKET },
	{ "fmod_ret",		BY_SECTION, BY_SOCKET },
	{ "kprobe",		BY_SECTION, BY_SOCKET },
	/* should_failslab may sit behind a static key (6.11+): loading with
	 * the helper and attaching is the whole test. */
	{ "kprobe_override",	BY_SECTION, NO_TRIGGER },
	{ "uprobe",		BY_UPROBE,  BY_CALL },
	{ "tracepoint",		BY_SECTION, BY_SYSCALL },
	{ "raw_tracepoint",	BY_SECTION, BY_SYSCALL },
	{ "tp_btf",		BY_SECTION, BY_SYSCALL },
	{ "cgroup_sock_create",	BY_CGROUP,  NO_TRIGGER },
	{ "cgroup_sockopt",	BY_CGROUP,  NO_TRIGGER },
	{ "ringbuf",		BY_MAP,     NO_TRIGGER },
};

/* This must stay a real function with a body of its own: the uprobe is
 * placed on its first instruction. */
__attribute__((noinline)) int ks_probe_uprobe_target(int x)
{
	__asm__ __volatile__("" : "+r"(x) : : "memory");
	return x + 1;
}

/* The verifier's last word on the program this thread is loading: libbpf
 * hands the whole log to the print callback on a failed load. Per thread,
 * because hooks are probed in parallel. */
static __thread char verifier_tail[160];

/* libbpf 1.1's format for a failed load's log (bpf_object_load_prog(),
 * after pr_warn's "libbpf: " prefix). */
#define LOAD_LOG_FMT "libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n"

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const char *log, *end, *start;
	va_list aq;

	if (level != LIBBPF_WARN || strcmp(fmt, LOAD_LOG_FMT))
		return 0;
	va_copy(aq, ap);
	(void)va_arg(aq, const char *);		/* program name */
	log = va_arg(aq, const char *);
	va_end(aq);
	/* Last line that is not the statistics: why the verifier gave up. */
	end = log + strlen(log);
	for (;;) {
		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		for (start = end; start > log && start[-1] != '\n'; start--)
			;
		if (start == log || strncmp(start, "processed ", 10))
			break;
		end = start;
	}
	snprintf(verifier_tail, sizeof(verifier_tail), "%.*s", (int)(end - start), start);
	return 0;
}

/* "EPERM (Operation not permitted)" for a negative or positive errno. */
static const char *errno_str(int err, char *buf, size_t len)
{
	const char *name;

	err = err < 0 ? -err : err;
	/* Kernel-internal errno that leaks to user space, e.g. attaching a BPF
	 * trampoline on arm64 6.1: libc has no name for it. */
	if (err == 524) {
		snprintf(buf, len, "ENOTSUPP (Operation is not supported by this kernel)");
		return buf;
	}
	name = strerrorname_np(err);
	if (name)
		snprintf(buf, len, "%s (%s)", name, strerrordesc_np(err));
	else
		snprintf(buf, len, "errno %d", err);
	return buf;
}

static int refuse(char *why, size_t len, const char *stage, int err, const char *hint)
{
	char e[96];

	snprintf(why, len, "%s: %s%s%s", stage, errno_str(err, e, sizeof(e)),
		 hint ? "; " : "", hint ? hint : "");
	return 0;
}

/* File offset of ks_probe_uprobe_target() in the binary that is running,
 * from /proc/self/maps: works for PIE, non-PIE and static binaries, stripped
 * or not (no symbol lookup). Returns 0 or a negative errno. */
static int self_offset(const void *addr, size_t *off)
{
	unsigned long start, end, pgoff, a = (unsigned long)addr;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
			continue;
		if (a >= start && a < end) {
			*off = a - start + pgoff;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

static int probe_ringbuf(char *why, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ks_probe_rb", 0, 0,
				page > 0 ? page : 4096, NULL);

	if (fd < 0)
		return refuse(why, len, "map create", -errno, NULL);
	close(fd);
	return 1;
}

/* Open the probe object with only the programs of hooks @idx[0..@n)
 * enabled, and load it. Returns the skeleton, or NULL with the reason in
 * @why (a refused program fails the whole load). */
static struct probe_bpf *load_progs(const int *idx, int n, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct probe_bpf *skel;
	struct bpf_program *p;
	char progname[64];
	int i, err;

	/* No BTF found: probe anyway, so that what needs none (a probe
	 * without CO-RE relocations) is still answered; `kshield probe`
	 * says which BTF is missing. */
	ks_btf_open_opts(&opts);
	skel = probe_bpf__open_opts(&opts);
	if (!skel) {
		refuse(why, len, "open", -errno, NULL);
		return NULL;
	}
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, false);
	for (i = 0; i < n; i++) {
		snprintf(progname, sizeof(progname), "probe_%s", hooks[idx[i]].name);
		p = bpf_object__find_program_by_name(skel->obj, progname);
		if (!p) {
			snprintf(why, len, "open: no program %s in probe object", progname);
			probe_bpf__destroy(skel);
			return NULL;
		}
		bpf_program__set_autoload(p, true);
	}
	skel->rodata->probe_tgid = getpid();

	verifier_tail[0] = '\0';
	err = probe_bpf__load(skel);
	if (err) {
		refuse(why, len, "load", err, verifier_tail[0] ? verifier_tail : NULL);
		probe_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Attach the loaded program of hook @idx, trigger it, check that it ran,
 * detach it. Returns 1 or 0 with the reason in @why. */
static int attach_and_fire(struct probe_bpf *skel, int idx, char *why, size_t len)
{
	const char *name = hooks[idx].name;
	enum trigger trig = hooks[idx].trig;
	struct bpf_program *prog;
	struct bpf_link *link = NULL;
	char progname[64], e[96];
	int cgfd = -1, err, ret = 0;

	snprintf(progname, sizeof(progname), "probe_%s", name);
	prog = bpf_object__find_program_by_name(skel->obj, progname);
	if (!prog) {
		snprintf(why, len, "open: no program %s in probe object", progname);
		return 0;
	}

	switch (hooks[idx].how) {
	case BY_SECTION:
		if (!strcmp(name, "tracepoint") && ks_tracefs_ensure()) {
			snprintf(why, len, "%s", ks_errmsg());
			goto out;
		}
		link = bpf_program__attach(prog);
		break;
	case BY_UPROBE: {
		size_t off = 0;

		err = self_offset((const void *)ks_probe_uprobe_target, &off);
		if (err) {
			snprintf(why, len, "attach: cannot find own code in /proc/self/maps: %s",
				 errno_str(err, e, sizeof(e)));
			goto out;
		}
		/* pid 0: only this process, so nobody else runs the probe. */
		link = bpf_program__attach_uprobe(prog, false, 0, "/proc/self/exe", off);
		break;
	}
	case BY_MAP:
		break;
	case BY_CGROUP: {
		/* Not ks_cgroup2_path(): its static buffer is shared by the
		 * threads probing both cgroup hooks at once. */
		char mounts[1][256];
		const char *cg = ks_mounts_of_type("cgroup2", mounts, 1) ? mounts[0] : NULL;

		if (!cg) {
			snprintf(why, len, "attach: no cgroup2 file system mounted");
			goto out;
		}
		cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0) {
			snprintf(why, len, "attach: cannot open cgroup2 mount %s: %s", cg,
				 errno_str(errno, e, sizeof(e)));
			goto out;
		}
		link = bpf_program__attach_cgroup(prog, cgfd);
		break;
	}
	}
	if (!link) {
		err = -errno;
		const char *hint = NULL;

		if (!strncmp(name, "kprobe", 6) &&
		    access("/sys/bus/event_source/devices/kprobe", F_OK))
			hint = "no kprobe event source in this kernel";
		refuse(why, len, "attach", err, hint);
		goto out;
	}

	switch (trig) {
	case NO_TRIGGER:
		break;
	case BY_SOCKET: {
		int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		ks_zclose(&s);
		break;
	}
	case BY_SYSCALL:
		(void)getppid();
		break;
	case BY_CALL: {
		int (*volatile fn)(int) = ks_probe_uprobe_target;

		(void)fn(1);
		break;
	}
	}
	if (trig != NO_TRIGGER && skel->bss->hits[idx] == 0) {
		snprintf(why, len, "attached, but the program never ran when triggered");
		goto out;
	}
	ret = 1;
out:
	bpf_link__destroy(link);
	ks_zclose(&cgfd);
	return ret;
}

static int probe_prog(int idx, char *why, size_t len)
{
	struct probe_bpf *skel = load_progs(&idx, 1, why, len);
	int ret;

	if (!skel)
		return 0;
	ret = attach_and_fire(skel, idx, why, len);
	probe_bpf__destroy(skel);
	return ret;
}

/* Find @name in the table; -ENOENT with a message when unknown. */
static int hook_index(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(hooks); i++)
		if (!strcmp(hooks[i].name, name))
			return i;
	return ks_err(-ENOENT, "unknown hook '%s'", name);
}

static int probe_one(int idx, char *why, size_t len)
{
	if (len)
		why[0] = '\0';
	if (hooks[idx].how == BY_MAP)
		return probe_ringbuf(why, len);
	return probe_prog(idx, why, len);
}

int ks_probe_hook(const char *name, bool show_log, char *why, size_t len)
{
	libbpf_print_fn_t old = NULL;
	int idx = hook_index(name), ret;

	if (idx < 0)
		return idx;
	/* Refusals are the expected answer here, not warnings to print. */
	if (!show_log)
		old = libbpf_set_print(quiet_print);
	ret = probe_one(idx, why, len);
	if (!show_log)
		libbpf_set_print(old);
	return ret;
}

/* Hooks whose programs need the kernel's BTF (attach by BTF id). Loading
 * them from one object parses vmlinux BTF once instead of once each, which
 * is most of their cost in a QEMU guest under TCG. */
static bool needs_vmlinux_btf(int idx)
{
	const char *n = hooks[idx].name;

	return !strcmp(n, "lsm") || !strcmp(n, "fentry") || !strcmp(n, "fexit") ||
	       !strcmp(n, "fmod_ret") || !strcmp(n, "tp_btf");
}

struct probe_job {
	pthread_t thread;
	bool started;
	int n;
	int idx[KS_PROBE_NHOOKS];
	struct ks_probe_result *res[KS_PROBE_NHOOKS];
};

static void *probe_thread(void *arg)
{
	struct probe_job *job = arg;
	struct probe_bpf *skel = NULL;
	char why[256];
	int i;

	/* A group loads together when the kernel takes all of it; when it
	 * refuses one program, each is probed on its own for its own answer. */
	if (job->n > 1)
		skel = load_progs(job->idx, job->n, why, sizeof(why));
	for (i = 0; i < job->n; i++) {
		struct ks_probe_result *r = job->res[i];

		r->why[0] = '\0';
		r->works = skel ? attach_and_fire(skel, job->idx[i], r->why, sizeof(r->why))
				: probe_one(job->idx[i], r->why, sizeof(r->why));
	}
	if (skel)
		probe_bpf__destroy(skel);
	return NULL;
}

int ks_probe_hooks(struct ks_probe_result *res, int n, bool show_log)
{
	struct probe_job jobs[KS_PROBE_NHOOKS] = {}, *btf_job = NULL;
	libbpf_print_fn_t old = NULL;
	int i, idx, njobs = 0;

	if (n > KS_PROBE_NHOOKS)
		return ks_err(-E2BIG, "too many hooks to probe (%d)", n);
	for (i = 0; i < n; i++) {
		struct probe_job *job;

		idx = hook_index(res[i].name);
		if (idx < 0)
			return idx;
		if (needs_vmlinux_btf(idx)) {
			if (!btf_job)
				btf_job = &jobs[njobs++];
			job = btf_job;
		} else {
			job = &jobs[njobs++];
		}
		job->idx[job->n] = idx;
		job->res[job->n++] = &res[i];
	}
	if (!show_log)
		old = libbpf_set_print(quiet_print);
	/* One thread per job: most of a probe's time is the kernel sleeping
	 * in RCU grace periods while it registers or tears down a uprobe or
	 * tracepoint, so probing in parallel costs about the slowest hook. */
	for (i = 0; i < njobs; i++)
		jobs[i].started = !pthread_create(&jobs[i].thread, NULL, probe_thread, &jobs[i]);
	for (i = 0; i < njobs; i++)
		if (!jobs[i].started)	/* out of threads: probe it here */
			probe_thread(&jobs[i]);
	for (i = 0; i < njobs; i++)
		if (jobs[i].started)
			pthread_join(jobs[i].thread, NULL);
	if (!show_log)
		libbpf_set_print(old);
	return 0;
}
