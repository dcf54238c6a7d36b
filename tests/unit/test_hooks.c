// SPDX-License-Identifier: MIT
/* test_hooks.c - the pure parts of `kshield hooks` (src/lib/hooks/): the
 * order of rows, the shield program sections they match, syscall entry
 * names, the dispatcher table, and the struct-member walk (on this test
 * binary's own DWARF: a table of function pointers defined below). The
 * whole finder on real kernels is tests/hooks/bar.sh. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include "array.h"
#include "dispatch_table.h"
#include "hookrank.h"
#include "member.h"

/* ---- ranking -------------------------------------------------------- */

static struct ks_hook_row mk(enum ks_hook_kind k, const char *name, int dist, bool after)
{
	struct ks_hook_row r = { .kind = k, .distance = dist, .after = after };

	snprintf(r.name, sizeof(r.name), "%s", name);
	return r;
}

Test(hooks_rank, order_table)
{
	/* given in scrambled order; expected rank order is the index */
	struct ks_hook_row want[] = {
		mk(KS_HOOK_LSM, "fs_context_parse_param", 1, false),	/* nearest refusal */
		mk(KS_HOOK_LSM, "netlink_send", 3, false),
		mk(KS_HOOK_LSM, "socket_sendmsg", 9, false),		/* EPERM before any kill */
		mk(KS_HOOK_TRACEPOINT, "io_uring_submit_req", 2, false),
		mk(KS_HOOK_TRACEPOINT, "io_uring_link", 3, false),	/* tracepoint before syscall at one distance */
		mk(KS_HOOK_SYSCALL, "sendmsg", 3, false),
		mk(KS_HOOK_SYSCALL, "sendto", 3, false),		/* then by name */
		mk(KS_HOOK_LSM, "inode_mkdir", 1, false),		/* through a guess: after the sure ones */
		mk(KS_HOOK_NETLINK, "rtnetlink 44", 2, false),		/* descriptors after hookable points */
		mk(KS_HOOK_LSM, "file_permission", 1, true),		/* after the next call: last */
		mk(KS_HOOK_LSM, "sk_classify_flow", 2, false),		/* void: cannot refuse, last too */
	};
	struct ks_hook_row got[ARRAY_SIZE(want)];
	size_t order[] = { 8, 3, 9, 6, 0, 10, 5, 1, 7, 4, 2 };

	want[7].guessed = true;
	want[10].no_verdict = true;
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		got[i] = want[order[i]];
	ks_hook_rows_rank(got, ARRAY_SIZE(got));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		cr_expect_str_eq(got[i].name, want[i].name, "rank %zu: got %s, want %s", i + 1,
				 got[i].name, want[i].name);
}

Test(hooks_rank, rare_events_after_the_path)
{
	/* a module request and the SQPOLL thread's creation refuse a rare
	 * event, not the call on the path: after the syscalls and the
	 * netlink types, whatever their distance */
	struct ks_hook_row rows[] = {
		mk(KS_HOOK_LSM, "kernel_module_request", 1, false),
		mk(KS_HOOK_LSM, "uring_sqpoll", 2, false),
		mk(KS_HOOK_NETLINK, "rtnetlink RTM_NEWQDISC", 3, false),
		mk(KS_HOOK_SYSCALL, "io_uring_enter", 4, false),
		mk(KS_HOOK_LSM, "file_permission", 6, false),	/* one call off: on the path */
	};

	cr_expect(ks_hook_rare("kernel_module_request"));
	cr_expect(ks_hook_rare("uring_sqpoll"));
	cr_expect(!ks_hook_rare("file_permission"));
	cr_expect(!ks_hook_rare("netlink_send"));
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		rows[i].rare = rows[i].kind == KS_HOOK_LSM && ks_hook_rare(rows[i].name);
	rows[4].off_path = true;
	ks_hook_rows_rank(rows, ARRAY_SIZE(rows));
	cr_expect_str_eq(rows[0].name, "file_permission");
	cr_expect_str_eq(rows[1].name, "io_uring_enter");
	cr_expect_str_eq(rows[2].name, "rtnetlink RTM_NEWQDISC");
	cr_expect_str_eq(rows[3].name, "kernel_module_request");
	cr_expect_str_eq(rows[4].name, "uring_sqpoll");
}

Test(hooks_rank, variants_str)
{
	char b[64];

	ks_hook_variants_str(KS_VARIANT_LSM | KS_VARIANT_FMOD_RET, b, sizeof(b));
	cr_expect_str_eq(b, "lsm,fmod_ret");
	ks_hook_variants_str(KS_VARIANT_TP, b, sizeof(b));
	cr_expect_str_eq(b, "tp");
	ks_hook_variants_str(0, b, sizeof(b));
	cr_expect_str_eq(b, "-");
}

Test(hooks_rank, sections)
{
	static const struct { const char *sec; bool ok; enum ks_hook_kind kind; const char *name; } t[] = {
		{ "lsm/netlink_send", true, KS_HOOK_LSM, "netlink_send" },
		{ "lsm.s/file_open", true, KS_HOOK_LSM, "file_open" },
		{ "fmod_ret/security_socket_setsockopt", true, KS_HOOK_LSM, "socket_setsockopt" },
		{ "fentry/security_sk_free", true, KS_HOOK_LSM, "sk_free" },
		{ "tp/syscalls/sys_enter_fsconfig", true, KS_HOOK_SYSCALL, "fsconfig" },
		{ "tp_btf/io_uring_submit_req", true, KS_HOOK_TRACEPOINT, "io_uring_submit_req" },
		{ "raw_tp/sys_enter", false, 0, NULL },	/* the dispatcher's: by metadata instead */
		{ "lsm/", false, 0, NULL },
		{ "fentry/do_splice", false, 0, NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		enum ks_hook_kind k;
		char name[96];
		bool ok = ks_hook_of_section(t[i].sec, &k, name, sizeof(name));

		cr_expect_eq(ok, t[i].ok, "%s", t[i].sec);
		if (ok && t[i].ok) {
			cr_expect_eq(k, t[i].kind, "%s", t[i].sec);
			cr_expect_str_eq(name, t[i].name, "%s", t[i].sec);
		}
	}
}

/* ---- entries and dispatchers ---------------------------------------- */

Test(hooks_table, syscall_entries)
{
	static const struct { const char *fn, *sc, *abi; } t[] = {
		{ "__x64_sys_setsockopt", "setsockopt", "x64" },
		{ "__ia32_sys_setsockopt", "setsockopt", "ia32" },
		{ "__ia32_compat_sys_sendmsg", "sendmsg", "ia32_compat" },
		{ "__do_sys_fsconfig", "fsconfig", "" },
		{ "__se_sys_mount", "mount", "" },
		{ "__sys_setsockopt", NULL, NULL },	/* the syscall's body, not its entry */
		{ "ksys_mmap_pgoff", NULL, NULL },
		{ "__x64_sys_", NULL, NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char abi[16] = "";
		const char *sc = ks_syscall_of(t[i].fn, abi, sizeof(abi));

		if (!t[i].sc) {
			cr_expect_null(sc, "%s", t[i].fn);
			continue;
		}
		cr_assert_not_null(sc, "%s", t[i].fn);
		cr_expect_str_eq(sc, t[i].sc);
		cr_expect_str_eq(abi, t[i].abi, "%s", t[i].fn);
	}
}

Test(hooks_table, dispatchers)
{
	static const struct { const char *member, *dispatcher; enum ks_entry_kind entry; } t[] = {
		{ "nfnl_callback.call", "nfnetlink_rcv_batch", KS_ENTRY_NETLINK },
		{ "fs_context_operations.parse_param", "vfs_parse_fs_param", KS_ENTRY_NONE },
		{ "tcf_proto_ops.change", "tc_new_tfilter", KS_ENTRY_NONE },
		{ "io_issue_def.issue", "io_issue_sqe", KS_ENTRY_URING },
		{ "proto_ops.setsockopt", "do_sock_setsockopt", KS_ENTRY_NONE },	/* 6.8+ */
		{ "proto_ops.setsockopt", "__sys_setsockopt", KS_ENTRY_NONE },	/* before */
		{ "nf_sockopt_ops.set", "nf_setsockopt", KS_ENTRY_NONE },
		{ "file_operations.splice_read", "do_splice_to", KS_ENTRY_NONE },	/* 6.1 */
		{ "file_operations.splice_read", "do_splice_read", KS_ENTRY_NONE },	/* 6.12 */
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const struct ks_dispatch *d = ks_dispatch_find(t[i].member);

		cr_assert_not_null(d, "%s", t[i].member);
		cr_expect(ks_list_has(d->dispatchers, t[i].dispatcher), "%s: %s not in %s",
			  t[i].member, t[i].dispatcher, d->dispatchers);
		cr_expect_eq(d->entry, t[i].entry, "%s", t[i].member);
	}
	cr_expect_null(ks_dispatch_find("no_such.member"));
	cr_expect_str_eq(ks_index_prefix(ks_dispatch_find("nfnl_callback.call"), "nf_tables_cb"), "NFT_MSG_");
	cr_expect_null(ks_index_prefix(ks_dispatch_find("nfnl_callback.call"), "some_other_cb"));
	cr_expect_str_eq(ks_index_prefix(ks_dispatch_find("io_issue_def.issue"), "io_issue_defs"), "IORING_OP_");
	cr_expect_str_eq(ks_registrar_prefix(ks_registrar_find("rtnl_register")), "RTM_");
	cr_expect_str_eq(ks_named_cb_member("rtnetlink_rcv"), "netlink_kernel_cfg.input");
	cr_expect_not_null(ks_registrar_find("rtnl_register"));
	cr_expect(ks_hub("schedule") && !ks_hub("vfs_parse_fs_param"));
	cr_expect(!ks_list_has("a,bc,d", "b") && ks_list_has("a,bc,d", "bc") &&
		  ks_list_has("a,bc,d", "d") && !ks_list_has("", "a"));
}

/* ---- member walk, on this binary's DWARF ------------------------------- */

struct ks_test_cb {
	int type;
	int (*call)(int);
	const char *name;
};

struct ks_test_subsys {
	long id;
	struct ks_test_cb cb[3];
};

static int t_call(int x) { return x + 1; }

/* used: the DWARF keeps it, and the walk has something real to resolve */
const struct ks_test_subsys ks_test_subsys_table[2] = {
	[1] = { .id = 7, .cb = { [2] = { .type = 1, .call = t_call, .name = "x" } } },
};

static bool find_var(Dwarf *dw, const char *name, Dwarf_Die *var)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, c;
	Dwarf_Half ver;
	uint8_t ut;

	while (dwarf_get_units(dw, cu, &cu, &ver, &ut, &cudie, NULL) == 0) {
		if (dwarf_child(&cudie, &c))
			continue;
		do {
			if (dwarf_tag(&c) == DW_TAG_variable && dwarf_diename(&c) &&
			    !strcmp(dwarf_diename(&c), name) && dwarf_hasattr(&c, DW_AT_location)) {
				*var = c;
				return true;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	return false;
}

Test(hooks_member, walk_table)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	Dwarf_Attribute a;
	Dwarf_Die var, type;
	static const struct { size_t off; int rc; const char *member, *expr; int nidx; long idx[2]; } t[] = {
		{ sizeof(struct ks_test_subsys) + offsetof(struct ks_test_subsys, cb) +
		  2 * sizeof(struct ks_test_cb) + offsetof(struct ks_test_cb, call),
		  0, "ks_test_cb.call", "[1].cb[2].call", 2, { 1, 2 } },
		{ offsetof(struct ks_test_subsys, cb) + offsetof(struct ks_test_cb, name),
		  0, "ks_test_cb.name", "[0].cb[0].name", 2, { 0, 0 } },
		/* an int member: not a pointer, no answer */
		{ sizeof(struct ks_test_subsys) + offsetof(struct ks_test_subsys, id), -EINVAL, NULL, NULL, 0, { 0, 0 } },
		/* mid-pointer: not its start */
		{ offsetof(struct ks_test_subsys, cb) + offsetof(struct ks_test_cb, call) + 4,
		  -EINVAL, NULL, NULL, 0, { 0, 0 } },
	};

	cr_assert_not_null(dw, "no DWARF in the unit test binary (built without -g?)");
	cr_assert(t_call(1) == 2 && ks_test_subsys_table[1].id == 7);
	cr_assert(find_var(dw, "ks_test_subsys_table", &var));
	cr_assert(dwarf_attr_integrate(&var, DW_AT_type, &a) && dwarf_formref_die(&a, &type));
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct ks_member_at m = { 0 };
		int rc = ks_member_walk(&type, t[i].off, &m);

		cr_expect_eq(rc, t[i].rc, "case %zu: rc %d", i, rc);
		if (rc || t[i].rc)
			continue;
		cr_expect_str_eq(m.member, t[i].member, "case %zu", i);
		cr_expect_str_eq(m.expr, t[i].expr, "case %zu", i);
		cr_expect_eq(m.nindex, t[i].nidx, "case %zu", i);
		for (int j = 0; j < t[i].nidx; j++)
			cr_expect_eq(m.index[j], t[i].idx[j], "case %zu index %d", i, j);
	}
	dwarf_end(dw);
	close(fd);
}
