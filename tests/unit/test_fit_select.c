/* test_fit_select.c - ks_fit_select (src/lib/kernel/fit.c): of a
 * program "X" and its twins "X__noloop" and "X__raw" (a tracepoint
 * program's raw twin, KS_TRACEPOINT_SYSCALL_ENTER) exactly one loads,
 * chosen by what this kernel has (bpf_loop, BPF perf links). Reads the
 * built shield objects; nothing is loaded into the kernel. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fit.h"

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
	}
	unsetenv("KSHIELD_SYSFS_BTF");
	bpf_object__close(obj);
}
