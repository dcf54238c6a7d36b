// SPDX-License-Identifier: MIT
/* test_btf_min.c - ks_btf_min (src/lib/kernel/btf_find.c): a min BTF keeps,
 * beside what the CO-RE relocations name (bpftool gen min_core_btf), the
 * btf_trace_<tracepoint> typedef of every raw_tp and tp_btf section the
 * objects have, where the full BTF has it: the loader asks for it to know a
 * tracepoint is in the build (fit.c, "__opt" programs), so a cut without it
 * silently drops those programs on a kernel without BTF of its own. Cuts
 * this host's BTF; nothing is loaded into the kernel. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "btf_find.h"
#include "err.h"

#ifndef KS_TEST_BUILD
#define KS_TEST_BUILD "build"
#endif

static bool has_typedef(const struct btf *b, const char *name)
{
	return btf__find_by_name_kind(b, name, BTF_KIND_TYPEDEF) >= 0;
}

Test(btf_min, keeps_the_trace_typedefs_of_the_objects_tracepoints)
{
	/* cve-2026-31431: raw_tp/io_uring_submit_req (6.5 on) and
	 * raw_tp/io_uring_submit_sqe (6.1), "__opt" both; sched_process_exec. */
	static const char *const tps[] = { "btf_trace_io_uring_submit_req",
		"btf_trace_io_uring_submit_sqe", "btf_trace_sys_enter" };
	const char *obj = KS_TEST_BUILD "/shields/cve-2026-31431.bpf.o";
	char out[64];
	struct btf *full, *min;
	int err, found = 0;

	snprintf(out, sizeof(out), "/tmp/ks-test-btf-min-%d.btf", getpid());
	err = ks_btf_min(KS_SYSFS_BTF, out, &obj, 1);
	cr_assert_eq(err, 0, "%s", ks_errmsg());
	full = btf__parse(KS_SYSFS_BTF, NULL);
	min = btf__parse(out, NULL);
	unlink(out);
	cr_assert(!libbpf_get_error(full) && !libbpf_get_error(min));
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		if (!has_typedef(full, tps[i]))
			continue;
		found++;
		cr_expect(has_typedef(min, tps[i]), "%s dropped by the cut", tps[i]);
	}
	cr_expect(found >= 2, "this kernel's BTF has none of the tracepoints asked for");
	/* Not a typedef the objects do not ask for. */
	cr_expect(!has_typedef(min, "btf_trace_sched_switch"), "a typedef no object asks for kept");
	cr_expect(btf__type_cnt(min) < btf__type_cnt(full) / 50, "not a cut: %u of %u types",
		  btf__type_cnt(min), btf__type_cnt(full));
	btf__free(full);
	btf__free(min);
}
