// SPDX-License-Identifier: MIT
/* fit.c - fit one CO-RE object to the running kernel (see fit.h).
 * The kernel's own BTF says what it has: enum bpf_map_type, bpf_func_id and
 * bpf_link_type list exactly what this build knows. */
#include <errno.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "array.h"
#include "btf_find.h"
#include "fit.h"
#include "sysinfo.h"

/* Threads whose task storage an LRU fallback keeps at once. */
#define KS_TASK_STORAGE_FALLBACK 16384

/* Whether @btf's enum @type has a value named @value; no BTF: true
 * (nothing CO-RE loads anyway; do not guess). */
static bool enum_has(const struct btf *btf, const char *type, const char *value)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id;

	if (!btf)
		return true;
	id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), value))
			return true;
	return false;
}

static struct btf *load_vmlinux_btf(void)
{
	struct ks_btf_src src;
	struct btf *btf;

	/* A kernel without BTF of its own: the one its objects relocate
	 * against (btf_find.h). */
	if (!ks_btf_kernel_has())
		btf = ks_btf_find(&src) ? NULL : btf__parse(src.path, NULL);
	else
		btf = btf__load_vmlinux_btf();

	return libbpf_get_error(btf) ? NULL : btf;
}

/* The kernel's BTF parsed is megabytes (6 MB on 6.18), so it is never kept:
 * the facts the loaders ask are read in one pass and cached. */
static struct kfacts { bool task_storage, loop, perf_links, flow_calls, sendpage; } kfacts;

/* Does @btf's struct @type have a member named @member? */
static bool struct_has(const struct btf *btf, const char *type, const char *member)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);

	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

static const struct kfacts *facts(void)
{
	static bool read;

	if (!read) {
		struct btf *btf = load_vmlinux_btf();

		kfacts.task_storage = enum_has(btf, "bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE");
		kfacts.loop = enum_has(btf, "bpf_func_id", "BPF_FUNC_loop");
		kfacts.perf_links = enum_has(btf, "bpf_link_type", "BPF_LINK_TYPE_PERF_EVENT");
		/* sock_send_length/sock_recv_length (6.3), and no .sendpage
		 * (gone in 6.5: before, sendfile and splice into a socket
		 * bypassed sock_sendmsg) */
		kfacts.flow_calls = btf &&
			btf__find_by_name_kind(btf, "btf_trace_sock_send_length", BTF_KIND_TYPEDEF) >= 0 &&
			btf__find_by_name_kind(btf, "btf_trace_sock_recv_length", BTF_KIND_TYPEDEF) >= 0 &&
			struct_has(btf, "proto_ops", "sendmsg") && !struct_has(btf, "proto_ops", "sendpage");
		/* no BTF: say yes, so that a __sendpage program is not left out
		 * on a kernel that needs it */
		kfacts.sendpage = !btf || struct_has(btf, "proto_ops", "sendpage");
		btf__free(btf);
		read = true;
	}
	return &kfacts;
}

bool ks_kernel_enum_has(const char *type, const char *value)
{
	struct btf *btf = load_vmlinux_btf();
	bool has = enum_has(btf, type, value);

	btf__free(btf);
	return has;
}

/* Set the object's ks_fit_nobtf (bpf/sdk/fit.bpf.h), where it has one, to
 * @nobtf: found by name in the BTF of its .rodata, as a skeleton would. */
static int set_nobtf(struct bpf_object *obj, bool nobtf)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, ".rodata");
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	const void *init;
	size_t size;
	int id;

	if (!map || !btf || (id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC)) < 0)
		return 0;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);
		char *data;
		int err;

		if (strcmp(btf__name_by_offset(btf, v->name_off), "ks_fit_nobtf"))
			continue;
		init = bpf_map__initial_value(map, &size);
		if (!init || vs->offset >= size)
			return -EINVAL;
		if (!(data = malloc(size)))
			return -ENOMEM;
		memcpy(data, init, size);
		data[vs->offset] = nobtf;
		err = bpf_map__set_initial_value(map, data, size);
		free(data);
		return err;
	}
	return 0;
}

int ks_fit_prepare(struct bpf_object *obj)
{
	bool nobtf = !ks_btf_kernel_has();
	struct bpf_map *map;
	int err;

	if ((err = set_nobtf(obj, nobtf)))
		return err;
	/* Task storage needs the kernel's own BTF, as its helper's task
	 * argument does (an external BTF lists the map type all the same). */
	if (facts()->task_storage && !nobtf)
		return 0;
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) != BPF_MAP_TYPE_TASK_STORAGE)
			continue;
		if ((err = bpf_map__set_type(map, BPF_MAP_TYPE_LRU_HASH)) ||
		    (err = bpf_map__set_map_flags(map, 0)) ||
		    (err = bpf_map__set_max_entries(map, KS_TASK_STORAGE_FALLBACK)))
			return err;
	}
	return 0;
}

static bool has_loop(void)
{
	return facts()->loop;
}

/* Do the first @len characters of @p end in @sfx (after something)? */
static bool has_suffix_n(const char *p, size_t len, const char *sfx)
{
	size_t n = strlen(sfx);

	return len > n && !strncmp(p + len - n, sfx, n);
}

static bool has_suffix(const char *p, const char *sfx)
{
	return has_suffix_n(p, strlen(p), sfx);
}

/* Is there an autoload program named @base followed by @sfx and @tail? */
static bool has_twin3(struct bpf_object *obj, const char *base, size_t blen, const char *sfx,
		      const char *tail)
{
	struct bpf_program *twin;
	char name[256];

	snprintf(name, sizeof(name), "%.*s%s%s", (int)blen, base, sfx, tail);
	twin = bpf_object__find_program_by_name(obj, name);
	return twin && bpf_program__autoload(twin);
}

static bool has_twin(struct bpf_object *obj, const char *base, size_t blen, const char *sfx)
{
	return has_twin3(obj, base, blen, sfx, "");
}

/* An "X__opt" program's hook is in this kernel: a tp_btf program's
 * tracepoint has its btf_trace_<name> typedef in the kernel's BTF (no BTF
 * of its own: no tp_btf program loads), and so has a raw_tp one's (its
 * "__nobtf" copy) in the BTF found for the kernel's build ID, which
 * describes the same build. Other program types are not optional.
 * Answers are cached by tracepoint, as facts() caches its own: every
 * shield asks about the same few, and the BTF is parsed once for all of
 * them (*@btf, read on the first miss and freed by the caller). */
static bool opt_hook_exists(struct btf **btf, bool *btf_read, const struct bpf_program *prog)
{
	static struct { char name[96]; bool has; } seen[16];
	static size_t nseen;
	const char *sec = bpf_program__section_name(prog);
	char name[160];
	bool has;

	/* tp_btf attaches by the kernel's own BTF, which some have not. */
	if ((strncmp(sec, "tp_btf/", 7) || !ks_btf_kernel_has()) && strncmp(sec, "raw_tp/", 7))
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", sec + 7);
	for (size_t i = 0; i < nseen; i++)
		if (!strcmp(seen[i].name, name))
			return seen[i].has;
	if (!*btf_read) {
		*btf = load_vmlinux_btf();
		*btf_read = true;
	}
	has = *btf && btf__find_by_name_kind(*btf, name, BTF_KIND_TYPEDEF) >= 0;
	if (nseen < ARRAY_SIZE(seen) && strlen(name) < sizeof(seen[0].name)) {
		strcpy(seen[nseen].name, name);
		seen[nseen++].has = has;
	}
	return has;
}

/* "X__nobtf" loads exactly where the kernel has no BTF of its own, and
 * "X" (where it has such a twin) exactly where it has; the rules below
 * then apply to each as to "X" ("X__noloop__nobtf" is the twin of
 * "X__noloop"). Of "X", "X__noloop" and "X__raw" (each where present among
 * the autoload programs), exactly one loads: "X__raw" without perf links
 * (it is written without bpf_loop: kernels without perf links predate it),
 * else "X__noloop" without bpf_loop, else "X". Then "__compat32" programs
 * only where 32-bit code runs, "__opt" ones where their tracepoint exists,
 * and "__sendpage" ones where sockets have .sendpage. Decided for every
 * program before any autoload flag changes: the one place of the suffix
 * rules (fit.h). */
void ks_fit_select(struct bpf_object *obj)
{
	struct bpf_program *prog;
	bool keep[1024];
	size_t i = 0, nl = strlen(KS_NOLOOP_SUFFIX), nb = strlen(KS_NOBTF_SUFFIX);
	bool kbtf = ks_btf_kernel_has();
	struct btf *btf = NULL;
	bool btf_read = false;

	bpf_object__for_each_program(prog, obj) {
		const char *p = bpf_program__name(prog), *tail = "";
		size_t len = strlen(p);
		bool k = bpf_program__autoload(prog);

		if (i >= ARRAY_SIZE(keep))
			break;
		if (has_suffix(p, KS_NOBTF_SUFFIX)) {
			k = k && !kbtf;
			len -= nb;
			tail = KS_NOBTF_SUFFIX;
		} else if (k && has_twin(obj, p, len, KS_NOBTF_SUFFIX)) {
			k = kbtf;
		}
		if (k && has_suffix_n(p, len, KS_RAW_SUFFIX))
			k = !ks_kernel_perf_links();
		else if (k && has_suffix_n(p, len, KS_NOLOOP_SUFFIX))
			k = !has_loop() && !(has_twin3(obj, p, len - nl, KS_RAW_SUFFIX, tail) &&
					     !ks_kernel_perf_links());
		else if (k)
			k = !(has_twin3(obj, p, len, KS_NOLOOP_SUFFIX, tail) && !has_loop()) &&
			    !(has_twin3(obj, p, len, KS_RAW_SUFFIX, tail) && !ks_kernel_perf_links());
		if (k && has_suffix_n(p, len, KS_OPT_SUFFIX))
			k = opt_hook_exists(&btf, &btf_read, prog);
		if (k && has_suffix_n(p, len, KS_COMPAT32_SUFFIX))
			k = ks_kernel_runs_compat();
		if (k && (has_suffix_n(p, len, KS_SENDPAGE_SUFFIX) ||
			  has_suffix_n(p, len, KS_SENDPAGE_SUFFIX KS_NOLOOP_SUFFIX)))
			k = facts()->sendpage;
		keep[i++] = k;
	}
	i = 0;
	bpf_object__for_each_program(prog, obj) {
		if (i >= ARRAY_SIZE(keep))
			break;
		bpf_program__set_autoload(prog, keep[i++]);
	}
	btf__free(btf);
}

bool ks_fit_kernel_btf(const struct bpf_program *prog)
{
	bool twin = has_suffix(bpf_program__name(prog), KS_NOBTF_SUFFIX);

	if (twin || bpf_program__type(prog) == BPF_PROG_TYPE_TRACING)
		return twin != ks_btf_kernel_has();
	return true;
}

enum { KS_OVERRIDE_NONE, KS_OVERRIDE_WORKS, KS_OVERRIDE_OPTIMIZED };

/* Does @prog call helper @id? */
static bool prog_calls(const struct bpf_program *prog, int id)
{
	const struct bpf_insn *in = bpf_program__insns(prog);
	size_t n = bpf_program__insn_cnt(prog);

	for (size_t i = 0; i < n; i++)
		if (in[i].code == (BPF_JMP | BPF_CALL) && in[i].src_reg == 0 && in[i].imm == id)
			return true;
	return false;
}

/* What @prog needs that @k lacks, in @why: true when something. */
static bool prog_lacks(const struct bpf_program *prog, const struct ks_kernel_offers *k,
		       char *why, size_t len)
{
	enum bpf_prog_type t = bpf_program__type(prog);

	/* These attach by the kernel's BTF type IDs: an external BTF serves
	 * CO-RE only. */
	if (!k->kernel_btf && (t == BPF_PROG_TYPE_LSM || t == BPF_PROG_TYPE_TRACING ||
			       t == BPF_PROG_TYPE_STRUCT_OPS)) {
		snprintf(why, len, "%s: %s programs need the kernel's own BTF; this kernel has none",
			 bpf_program__name(prog), bpf_program__section_name(prog));
		return true;
	}
	if (!k->loop && prog_calls(prog, BPF_FUNC_loop)) {
		snprintf(why, len, "%s: needs bpf_loop (5.17+), which this kernel lacks",
			 bpf_program__name(prog));
		return true;
	}
	if (!k->kprobe_override && prog_calls(prog, BPF_FUNC_override_return)) {
		if (k->kprobe_optimized)
			snprintf(why, len, "%s: needs bpf_override_return on kprobes that are "
				 "never jump-optimized; this kernel optimizes them (OPTPROBES, "
				 "debug.kprobes-optimization=1) and has no kprobes on ftrace "
				 "(FUNCTION_TRACER): the override would stop refusing",
				 bpf_program__name(prog));
		else
			snprintf(why, len, "%s: needs bpf_override_return, which this kernel lacks "
				 "(built without CONFIG_BPF_KPROBE_OVERRIDE)", bpf_program__name(prog));
		return true;
	}
	return false;
}

/* Do kprobes at function entries keep an instruction pointer their
 * program changed? A jump-optimized kprobe (OPTPROBES) drops it: the
 * program runs and counts, and bpf_override_return changes nothing. Entry
 * kprobes are never optimized where kprobes go through ftrace
 * (KPROBES_ON_FTRACE: the function tracer's entries exist, in
 * available_filter_functions) or where optimization is off or absent
 * (debug.kprobes-optimization). */
static bool kprobes_keep_ip(void)
{
	FILE *f = fopen("/proc/sys/debug/kprobes-optimization", "re");
	int on = 0;

	if (!f)
		return true;
	if (fscanf(f, "%d", &on) != 1)
		on = 1;
	fclose(f);
	if (!on)
		return true;
	ks_tracefs_ensure();
	return !access("/sys/kernel/tracing/available_filter_functions", R_OK) ||
	       !access("/sys/kernel/debug/tracing/available_filter_functions", R_OK);
}

/* bpf_override_return for kprobe programs: probed by loading a program
 * that calls it (the verifier knows it only with BPF_KPROBE_OVERRIDE),
 * and kept only where it lasts (kprobes_keep_ip). */
static int kprobe_override(void)
{
	static int known = -1;

	if (known < 0) {
		known = KS_OVERRIDE_NONE;
		if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_override_return,
					    NULL) == 1)
			known = kprobes_keep_ip() ? KS_OVERRIDE_WORKS : KS_OVERRIDE_OPTIMIZED;
	}
	return known;
}

static bool has_kprobe_override(void)
{
	return kprobe_override() == KS_OVERRIDE_WORKS;
}

void ks_kernel_offers(struct bpf_object *obj, struct ks_kernel_offers *k)
{
	struct bpf_program *prog;
	bool calls = false;

	k->kernel_btf = ks_btf_kernel_has();
	k->loop = has_loop();
	bpf_object__for_each_program(prog, obj)
		calls = calls || (bpf_program__autoload(prog) &&
				  prog_calls(prog, BPF_FUNC_override_return));
	k->kprobe_override = calls && has_kprobe_override();
	k->kprobe_optimized = calls && kprobe_override() == KS_OVERRIDE_OPTIMIZED;
}

const char *ks_attach_strerror(int err)
{
	return err == -524 ? "this kernel has no BPF trampolines (ENOTSUPP)" : strerror(-err);
}

int ks_fit_variant_needs(struct bpf_object *obj, const struct ks_kernel_offers *k, char *why,
			 size_t len)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		if (bpf_program__autoload(prog) && prog_lacks(prog, k, why, len))
			return -EOPNOTSUPP;
	return 0;
}

bool ks_fit_prog_missing(const struct bpf_program *prog, char *why, size_t len)
{
	struct ks_kernel_offers k = { .kernel_btf = true, .loop = has_loop(), .kprobe_override = true };

	if (prog_calls(prog, BPF_FUNC_override_return)) {
		k.kprobe_override = has_kprobe_override();
		k.kprobe_optimized = kprobe_override() == KS_OVERRIDE_OPTIMIZED;
	}
	return prog_lacks(prog, &k, why, len);
}

/* Does this kernel have 32-bit compat syscalls? Functions of their entry
 * and of a compat-only syscall are in kallsyms exactly when it does (the
 * syscall tables are data, listed only with CONFIG_KALLSYMS_ALL, which
 * Debian's arm64 lacks); several names, for they moved across versions. */
bool ks_kernel_runs_compat(void)
{
	static const char *const names[] = {
		"do_fast_syscall_32", "do_int80_syscall_32", "int80_emulation",
		"__ia32_compat_sys_sigreturn",			/* x86-64 IA32_EMULATION */
		"el0t_32_sync_handler", "el0_sync_compat_handler",
		"__arm64_compat_sys_sigreturn",			/* arm64 COMPAT */
		"ia32_sys_call_table", "compat_sys_call_table",
	};
	static int known = -1;
	char line[256];
	FILE *f;

	if (known >= 0)
		return known;
#if defined(__x86_64__)
	/* On x86-64 the entry is built in whenever IA32_EMULATION is, even
	 * where it is off at run time (ia32_emulation=0, or
	 * IA32_EMULATION_DEFAULT_DISABLED, as some cloud kernels build). Ask the kernel: a
	 * child makes one 32-bit syscall (int $0x80, getpid), which kills it
	 * with SIGSEGV where 32-bit syscalls are off or absent. */
	pid_t pid = fork();

	if (pid == 0) {
		long ret = 20;	/* __NR_getpid, i386 */

		__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
		_exit(ret == getpid() ? 0 : 1);
	}
	if (pid > 0) {
		int status;

		if (waitpid(pid, &status, 0) == pid) {
			known = WIFEXITED(status) && WEXITSTATUS(status) == 0;
			return known;
		}
	}
#endif
	f = fopen("/proc/kallsyms", "re");
	known = 0;
	while (f && !known && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');

		if (!name || strchr(line, '['))	/* module symbols: not entry code */
			continue;
		name[strcspn(name, "\n")] = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(names) && !known; i++)
			known = !strcmp(name + 1, names[i]);
	}
	if (f)
		fclose(f);
	return known;
}

bool ks_kernel_sendpage(void)
{
	return facts()->sendpage;
}

bool ks_kernel_flow_calls(void)
{
	return facts()->flow_calls;
}

bool ks_kernel_perf_links(void)
{
	return facts()->perf_links;
}

bool ks_fit_link_unpinnable(const struct bpf_program *prog)
{
	switch (bpf_program__type(prog)) {
	case BPF_PROG_TYPE_TRACEPOINT:
	case BPF_PROG_TYPE_KPROBE:
	case BPF_PROG_TYPE_PERF_EVENT:
		return !ks_kernel_perf_links();
	default:
		return false;
	}
}

int ks_kernel_release(void)
{
	const char *env = getenv("KSHIELD_FIT_RELEASE");
	struct utsname u;
	int maj = 0, min = 0;

	if (env && *env) {
		if (sscanf(env, "%d.%d", &maj, &min) == 2)
			return maj * 256 + min;
		return 0;
	}
	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj * 256 + min;
}

bool ks_kernel_struct_has(const char *type, const char *member)
{
	struct btf *btf = load_vmlinux_btf();
	bool has = !btf || struct_has(btf, type, member);

	btf__free(btf);
	return has;
}

int ks_kernel_meets(const char *req, char *why, size_t len)
{
	char type[64], member[64];
	int maj, min, rel;

	if (!strcmp(req, "compat")) {
		if (ks_kernel_runs_compat())
			return 0;
		snprintf(why, len, "this kernel has no 32-bit compat syscalls (no 32-bit syscall "
			 "entry in kallsyms)");
		return -EOPNOTSUPP;
	}
	if (sscanf(req, "before-%d.%d", &maj, &min) == 2) {
		rel = ks_kernel_release();
		if (!rel || rel < maj * 256 + min)
			return 0;	/* unreadable: load rather than guess */
		snprintf(why, len, "this kernel is %d.%d, past %d.%d", rel >> 8, rel & 255, maj, min);
		return -EOPNOTSUPP;
	}
	if (sscanf(req, "no-member:%63[^.].%63s", type, member) == 2) {
		if (!ks_kernel_struct_has(type, member))
			return 0;
		snprintf(why, len, "this kernel's struct %s has %s", type, member);
		return -EOPNOTSUPP;
	}
	snprintf(why, len, "unknown requirement \"%s\"", req);
	return -EINVAL;
}
