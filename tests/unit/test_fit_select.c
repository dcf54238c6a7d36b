// SPDX-License-Identifier: MIT
/* test_fit_select.c - ks_fit_select (src/lib/kernel/fit.c): of a
 * program "X" and its twins "X__noloop" and "X__raw" (a tracepoint
 * program's raw twin, KS_TRACEPOINT_SYSCALL_ENTER) exactly one loads,
 * chosen by what this kernel has (bpf_loop, BPF perf links), and "X__nobtf"
 * instead of "X" where the kernel has no BTF of its own; ks_fit_prepare.
 * Reads the built shield objects; nothing is loaded into the kernel. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array.h"
#include "btf_find.h"
#include "fit.h"
#include "meta.h"
#include "sysinfo.h"

#ifndef KS_TEST_BUILD
#define KS_TEST_BUILD "build"
#endif

/* Open @shield's object with only the programs of variant @v autoloaded,
 * then let compat choose. */
static struct bpf_object *open_variant(const char *shield, const char *v)
{
	char path[256], pfx[32];
	struct bpf_program *p;
	struct bpf_object *obj;

	snprintf(path, sizeof(path), KS_TEST_BUILD "/shields/%s.bpf.o", shield);
	snprintf(pfx, sizeof(pfx), "%s__", v);
	obj = bpf_object__open_file(path, NULL);
	cr_assert(obj, "open %s", path);
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strncmp(bpf_program__name(p), pfx, strlen(pfx)));
	ks_fit_select(obj);
	return obj;
}

static bool loads(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	cr_assert(p, "no program %s", name);
	return bpf_program__autoload(p);
}

Test(fit_select, raw_twin_only_without_perf_links)
{
	struct bpf_object *obj = open_variant("userns-policy", "tp");
	bool raw = !ks_kernel_perf_links();

	cr_expect_eq(loads(obj, "tp__newtask"), !raw);
	cr_expect_eq(loads(obj, "tp__newtask__raw"), raw);
	/* another variant's programs stay off */
	cr_expect(!loads(obj, "lsm__userns_create"));
	bpf_object__close(obj);
}

Test(fit_select, one_of_three)
{
	struct bpf_object *obj = open_variant("cve-2026-31431", "tp");
	bool loop = ks_kernel_enum_has("bpf_func_id", "BPF_FUNC_loop");
	int n = loads(obj, "tp__bind") + loads(obj, "tp__bind__noloop");

	/* a syscall hook (bpf/sdk/syscalls.bpf.h) and its twin without bpf_loop */
	cr_expect_eq(n, 1, "tp__bind and its noloop twin: %d load", n);
	cr_expect_eq(loads(obj, "tp__bind__noloop"), !loop);
	bpf_object__close(obj);
	obj = open_variant("cve-2021-3156", "tp");
	cr_expect_eq(loads(obj, "tp__exec") + loads(obj, "tp__exec__noloop"), 1);
	cr_expect_eq(loads(obj, "tp__exec__noloop"),
		     !ks_kernel_enum_has("bpf_func_id", "BPF_FUNC_loop"));
	bpf_object__close(obj);
}

/* "X__opt" (KS_OPT_SUFFIX): a tp_btf program loads only where the
 * kernel's BTF has its tracepoint. The host (6.18) has io_uring_submit_req,
 * not 6.1's io_uring_submit_sqe. */
Test(fit_select, opt_only_where_the_tracepoint_is)
{
	struct bpf_object *obj = open_variant("cve-2024-1086", "tp");
	struct btf *btf = btf__load_vmlinux_btf();
	bool req, sqe;

	cr_assert(!libbpf_get_error(btf), "no vmlinux BTF");
	req = btf__find_by_name_kind(btf, "btf_trace_io_uring_submit_req", BTF_KIND_TYPEDEF) >= 0;
	sqe = btf__find_by_name_kind(btf, "btf_trace_io_uring_submit_sqe", BTF_KIND_TYPEDEF) >= 0;
	btf__free(btf);
	cr_expect_eq(loads(obj, "tp__uring_submit__opt"), req);
	cr_expect_eq(loads(obj, "tp__uring_submit_sqe__opt"), sqe);
	bpf_object__close(obj);
}

/* Make this kernel look like one without BTF of its own
 * ($KSHIELD_SYSFS_BTF, btf_find.h), its BTF found by build ID in a btf_dir
 * holding a copy of the host's (as a build farm would keep it). Each test
 * runs in a process of its own, so the fit facts cached here die with it. */
static void no_kernel_btf(void)
{
	struct ks_sysinfo si;
	char cmd[512];

	ks_sysinfo_read(&si);
	cr_assert(si.build_id[0], "no build ID in /sys/kernel/notes");
	snprintf(cmd, sizeof(cmd), "mkdir -p /tmp/ks-unit-nobtf-%d && cp " KS_SYSFS_BTF
		 " /tmp/ks-unit-nobtf-%d/%s.btf", getpid(), getpid(), si.build_id);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "/tmp/ks-unit-nobtf-%d", getpid());
	setenv("KSHIELD_BTF_DIR", cmd, 1);
	setenv("KSHIELD_SYSFS_BTF", "/nonexistent", 1);
	unsetenv("DEBUGINFOD_URLS");
	cr_assert(!ks_btf_kernel_has());
}

static void no_kernel_btf_done(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf /tmp/ks-unit-nobtf-%d", getpid());
	cr_expect_eq(system(cmd), 0);
}

/* "X__nobtf" (KS_NOBTF_SUFFIX): a tp_btf program's raw tracepoint copy
 * loads exactly where the kernel has no BTF of its own, and "X" exactly
 * where it has; each as "X" would otherwise (its __noloop twin, __opt). */
Test(fit_select, nobtf_copy_with_kernel_btf)
{
	struct bpf_object *obj = open_variant("cve-2023-4911", "tp");
	bool loop = ks_kernel_enum_has("bpf_func_id", "BPF_FUNC_loop");

	cr_assert(ks_btf_kernel_has(), "the host has no BTF of its own");
	cr_expect_eq(loads(obj, "tp__exec"), loop);
	cr_expect_eq(loads(obj, "tp__exec__noloop"), !loop);
	cr_expect(!loads(obj, "tp__exec__nobtf"));
	cr_expect(!loads(obj, "tp__exec__noloop__nobtf"));
	bpf_object__close(obj);
	obj = open_variant("cve-2022-1015", "tp");
	cr_expect(!loads(obj, "tp__uring_submit__opt__nobtf"));
	cr_expect(!loads(obj, "tp__uring_submit_sqe__opt__nobtf"));
	bpf_object__close(obj);
}

Test(fit_select, nobtf_copy_without_kernel_btf, .init = no_kernel_btf,
     .fini = no_kernel_btf_done)
{
	struct bpf_object *obj = open_variant("cve-2023-4911", "tp");
	bool loop = ks_kernel_enum_has("bpf_func_id", "BPF_FUNC_loop");
	struct btf *btf = btf__load_vmlinux_btf();
	bool req, sqe;

	cr_expect(!loads(obj, "tp__exec"));
	cr_expect(!loads(obj, "tp__exec__noloop"));
	cr_expect_eq(loads(obj, "tp__exec__nobtf"), loop);
	cr_expect_eq(loads(obj, "tp__exec__noloop__nobtf"), !loop);
	bpf_object__close(obj);
	obj = open_variant("cve-2021-4034", "tp");
	cr_expect(!loads(obj, "tp__exec"));
	cr_expect(loads(obj, "tp__exec__nobtf"));
	bpf_object__close(obj);
	/* __opt on a raw tracepoint: the tracepoint's btf_trace_ typedef in
	 * the BTF found by build ID (here the host's own, copied) */
	cr_assert(!libbpf_get_error(btf), "no vmlinux BTF");
	req = btf__find_by_name_kind(btf, "btf_trace_io_uring_submit_req", BTF_KIND_TYPEDEF) >= 0;
	sqe = btf__find_by_name_kind(btf, "btf_trace_io_uring_submit_sqe", BTF_KIND_TYPEDEF) >= 0;
	btf__free(btf);
	obj = open_variant("cve-2022-1015", "tp");
	cr_expect(!loads(obj, "tp__uring_submit__opt"));
	cr_expect(!loads(obj, "tp__uring_submit_sqe__opt"));
	cr_expect_eq(loads(obj, "tp__uring_submit__opt__nobtf"), req);
	cr_expect_eq(loads(obj, "tp__uring_submit_sqe__opt__nobtf"), sqe);
	/* programs without a copy are left to the loader, which names what
	 * needs the kernel's BTF: a syscall hook loads as before */
	cr_expect_eq(loads(obj, "tp__sendmsg") + loads(obj, "tp__sendmsg__noloop"), 1);
	bpf_object__close(obj);
}

/* The kprobe variants of cve-2026-31431 and cve-2026-43284 refuse at
 * syscall entry functions and keep tp's io_uring submission programs for
 * the requests that pass none: where the variant runs (a kernel without
 * trampolines, and here without BTF of its own) their raw tracepoint
 * copies load beside the kprobes, and no tp program does. */
Test(fit_select, kprobe_variant_keeps_the_uring_submission_programs, .init = no_kernel_btf,
     .fini = no_kernel_btf_done)
{
	static const char *const shields[] = { "cve-2026-31431", "cve-2026-43284" };
	struct btf *btf = btf__load_vmlinux_btf();
	bool req, sqe;

	cr_assert(!libbpf_get_error(btf), "no vmlinux BTF");
	req = btf__find_by_name_kind(btf, "btf_trace_io_uring_submit_req", BTF_KIND_TYPEDEF) >= 0;
	sqe = btf__find_by_name_kind(btf, "btf_trace_io_uring_submit_sqe", BTF_KIND_TYPEDEF) >= 0;
	btf__free(btf);
	cr_assert(req || sqe, "neither io_uring submission tracepoint in the BTF");
	for (size_t i = 0; i < ARRAY_SIZE(shields); i++) {
		struct bpf_object *obj = open_variant(shields[i], "kprobe");

		cr_expect_eq(loads(obj, "kprobe__splice") + loads(obj, "kprobe__splice__noloop"), 1,
			     "%s: kprobe__splice", shields[i]);
		cr_expect_eq(loads(obj, "kprobe__sendfile") + loads(obj, "kprobe__sendfile__noloop"),
			     1, "%s: kprobe__sendfile", shields[i]);
		cr_expect(!loads(obj, "kprobe__uring_submit__opt"), "%s", shields[i]);
		cr_expect_eq(loads(obj, "kprobe__uring_submit__opt__nobtf"), req, "%s", shields[i]);
		cr_expect_eq(loads(obj, "kprobe__uring_submit_sqe__opt__nobtf"), sqe, "%s",
			     shields[i]);
		cr_expect(!loads(obj, "tp__splice"), "%s: a tp program in the kprobe variant",
			  shields[i]);
		bpf_object__close(obj);
	}
}

/* cve-2026-43284's kprobe variant refuses at the entries of the rarer
 * sends and leaves the copying writes to tp's programs run by the
 * dispatcher for calls on a netlink socket only: a kprobe on write() made
 * every write on the machine pay (harm check, every shield loaded:
 * read+write 2.87x with it, 2.30x without). */
static const struct {
	const char *prog, *sec, *sock;	/* sock: the dispatcher's filter, or NULL */
} nl43284_kprobe[] = {
	{ "kprobe__sendmsg", "kprobe/__x64_sys_sendmsg", NULL },
	{ "kprobe__sendto", "kprobe/__x64_sys_sendto", NULL },
	{ "kprobe__sendmmsg", "kprobe/__x64_sys_sendmmsg", NULL },
	{ "kprobe__splice", "kprobe/__x64_sys_splice", NULL },
	{ "kprobe__sendfile", "kprobe/__x64_sys_sendfile64", NULL },
	{ "kprobe__io_uring_enter", "kprobe/__x64_sys_io_uring_enter", NULL },
	{ "kprobe__tp_write", "raw_tp/sys_enter", "0 16" },
	{ "kprobe__tp_writev", "raw_tp/sys_enter", "0 16" },
	{ "kprobe__tp_pwritev2", "raw_tp/sys_enter", "0 16" },
};

Test(fit_select, kprobe_variant_leaves_the_writes_to_the_dispatcher)
{
	static const char *const hot[] = { "kprobe/__x64_sys_write", "kprobe/__x64_sys_writev",
					   "kprobe/__x64_sys_pwritev2", "kprobe/__ia32_sys_write",
					   "kprobe/__ia32_compat_sys_writev" };
	const char *path = KS_TEST_BUILD "/shields/cve-2026-43284.bpf.o";
	struct bpf_object *obj = open_variant("cve-2026-43284", "kprobe");
	struct bpf_program *p;
	struct ks_meta m;

	cr_assert_eq(ks_meta_read(path, &m), 0, "%s", path);
	for (size_t i = 0; i < ARRAY_SIZE(nl43284_kprobe); i++) {
		char key[64], twin[64];
		const char *f;

		snprintf(twin, sizeof(twin), "%s__noloop", nl43284_kprobe[i].prog);
		cr_expect_eq(loads(obj, nl43284_kprobe[i].prog) + loads(obj, twin), 1, "%s",
			     nl43284_kprobe[i].prog);
		p = bpf_object__find_program_by_name(obj, nl43284_kprobe[i].prog);
		cr_expect_str_eq(bpf_program__section_name(p), nl43284_kprobe[i].sec, "%s",
				 nl43284_kprobe[i].prog);
		snprintf(key, sizeof(key), "sysf.%s", nl43284_kprobe[i].prog);
		f = ks_meta_get(&m, key);
		if (nl43284_kprobe[i].sock)
			cr_expect(f && !strcmp(f, nl43284_kprobe[i].sock), "%s: filter %s",
				  nl43284_kprobe[i].prog, f ? f : "none");
		else
			cr_expect_null(f, "%s", key);
	}
	bpf_object__for_each_program(p, obj)
		for (size_t i = 0; i < ARRAY_SIZE(hot); i++)
			cr_expect(strcmp(bpf_program__section_name(p), hot[i]),
				  "%s: a kprobe on %s", bpf_program__name(p), hot[i] + 7);
	ks_meta_free(&m);
	bpf_object__close(obj);
}

/* ks_fit_prepare: ks_fit_nobtf (.rodata, bpf/sdk/fit.bpf.h) says whether
 * the kernel lacks BTF of its own, and task storage becomes an LRU hash
 * there (the helper's task argument needs that BTF). */
static void expect_prepared(bool nobtf)
{
	struct bpf_object *obj = open_variant("cve-2026-31431", "tp");
	struct bpf_map *rodata = bpf_object__find_map_by_name(obj, ".rodata");
	struct bpf_map *scan = bpf_object__find_map_by_name(obj, "scan_state");
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	const char *data;
	size_t size;
	int id, found = 0;

	cr_assert(rodata && scan && btf);
	cr_assert_eq(ks_fit_prepare(obj), 0);
	data = bpf_map__initial_value(rodata, &size);
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	cr_assert(id > 0);
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++)
		if (!strcmp(btf__name_by_offset(btf, btf__type_by_id(btf, vs->type)->name_off),
			    "ks_fit_nobtf")) {
			cr_assert(vs->offset < size);
			cr_expect_eq(data[vs->offset], nobtf);
			found++;
		}
	cr_expect_eq(found, 1, "ks_fit_nobtf in .rodata");
	if (nobtf)
		cr_expect_eq(bpf_map__type(scan), BPF_MAP_TYPE_LRU_HASH);
	else if (ks_kernel_enum_has("bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE"))
		cr_expect_eq(bpf_map__type(scan), BPF_MAP_TYPE_TASK_STORAGE);
	bpf_object__close(obj);
}

Test(fit_select, prepare_with_kernel_btf)
{
	expect_prepared(false);
}

Test(fit_select, prepare_without_kernel_btf, .init = no_kernel_btf, .fini = no_kernel_btf_done)
{
	expect_prepared(true);
}

/* "X__sendpage" (KS_SENDPAGE_SUFFIX): loaded only where sockets still have
 * proto_ops.sendpage (before 6.5; the host's 6.18 has none), its __noloop
 * twin likewise; the socket_sendmsg hook that covers those paths from 6.5
 * loads everywhere. */
Test(fit_select, sendpage_only_where_sockets_have_it)
{
	struct bpf_object *obj = open_variant("cve-2026-43284", "lsm");
	bool sp = ks_kernel_sendpage();
	bool loop = ks_kernel_enum_has("bpf_func_id", "BPF_FUNC_loop");

	cr_expect_eq(loads(obj, "lsm__file_permission__sendpage"), sp && loop);
	cr_expect_eq(loads(obj, "lsm__file_permission__sendpage__noloop"), sp && !loop);
	cr_expect_eq(loads(obj, "lsm__sendmsg") + loads(obj, "lsm__sendmsg__noloop"), 1);
	bpf_object__close(obj);
}

/* ks_kernel_meets: the "requires" of a shield's metadata. The release
 * comes from KSHIELD_FIT_RELEASE here, so the answers do not depend on
 * the kernel the test runs on; the member checks read its BTF, where
 * struct pipe_inode_info has bufs on every kernel kshield supports. */
Test(fit_select, requires_window)
{
	char why[160];
	int rel;

	setenv("KSHIELD_FIT_RELEASE", "5.10", 1);
	rel = ks_kernel_release();
	cr_expect_eq(rel, 5 * 256 + 10);
	cr_expect_eq(ks_kernel_meets("before-5.17", why, sizeof(why)), 0);
	cr_expect_eq(ks_kernel_meets("before-5.10", why, sizeof(why)), -EOPNOTSUPP);
	cr_expect(strstr(why, "5.10, past 5.10"), "why: %s", why);
	setenv("KSHIELD_FIT_RELEASE", "6.12", 1);
	cr_expect_eq(ks_kernel_meets("before-5.17", why, sizeof(why)), -EOPNOTSUPP);
	unsetenv("KSHIELD_FIT_RELEASE");
	cr_expect_eq(ks_kernel_meets("no-member:pipe_inode_info.bufs", why, sizeof(why)), -EOPNOTSUPP);
	cr_expect(strstr(why, "struct pipe_inode_info has bufs"), "why: %s", why);
	cr_expect_eq(ks_kernel_meets("no-member:pipe_inode_info.no_such_member", why, sizeof(why)), 0);
	cr_expect_eq(ks_kernel_meets("before-5", why, sizeof(why)), -EINVAL);
	cr_expect_eq(ks_kernel_meets("newer-than-5.8", why, sizeof(why)), -EINVAL);
}

/* ks_fit_kernel_btf: the monitor's "X__nobtf" raw tracepoint twins load
 * only on kernels without their own BTF, and its programs that attach by
 * that BTF (tp_btf, fentry) only on kernels with it; other programs either
 * way. KSHIELD_SYSFS_BTF points the check at a file that is there or not. */
Test(fit_select, nobtf_twins_only_without_kernel_btf)
{
	static const char *const has_file[] = { "/dev/null", "/nonexistent/vmlinux" };
	struct bpf_object *obj = bpf_object__open_file(KS_TEST_BUILD "/bpf/monitor.bpf.o", NULL);

	cr_assert(obj, "open the monitor's object");
	for (int i = 0; i < 2; i++) {
		bool btf = i == 0;

		setenv("KSHIELD_SYSFS_BTF", has_file[i], 1);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_exec")), btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_exec__nobtf")), !btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_fork")), btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_fork__nobtf")), !btf);
		cr_expect(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_exit")));
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_sock_state")), btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_sock_state_twin")), btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_sock_state__nobtf")), !btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_sock_state_twin__nobtf")), !btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_cookie4__nobtf")), !btf);
		cr_expect_eq(ks_fit_kernel_btf(bpf_object__find_program_by_name(obj, "mon_cookie6__nobtf")), !btf);
	}
	unsetenv("KSHIELD_SYSFS_BTF");
	bpf_object__close(obj);
}

/* Every tp_btf program of the monitor but the per-call flow ones (6.5+,
 * which kernels without BTF of their own count per packet instead) has a
 * "__nobtf" copy at the same raw tracepoint. */
Test(fit_select, monitor_tp_btf_programs_have_nobtf_copies)
{
	struct bpf_object *obj = bpf_object__open_file(KS_TEST_BUILD "/bpf/monitor.bpf.o", NULL);
	struct bpf_program *prog, *copy;
	int n = 0;

	cr_assert(obj, "open the monitor's object");
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog), *name = bpf_program__name(prog);
		char want[128], tp[128];

		if (strncmp(sec, "tp_btf/", 7) || !strncmp(name, "mon_flow_", 9))
			continue;
		snprintf(want, sizeof(want), "%s" KS_NOBTF_SUFFIX, name);
		snprintf(tp, sizeof(tp), "raw_tp/%s", sec + 7);
		copy = bpf_object__find_program_by_name(obj, want);
		cr_expect(copy, "%s (%s) has no %s", name, sec, want);
		if (copy)
			cr_expect_str_eq(bpf_program__section_name(copy), tp, "%s", want);
		n++;
	}
	cr_expect_eq(n, 6, "tp_btf programs: exec, fork and the TCP state change, each with its twin");
	bpf_object__close(obj);
}
