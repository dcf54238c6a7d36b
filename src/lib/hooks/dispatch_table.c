// SPDX-License-Identifier: MIT
/* dispatch_table.c - the kernel's function-pointer dispatchers that DWARF
 * cannot connect (dispatch_table.h). Each row was read off the kernel
 * source of 6.1 and 6.12 (the call through the member, in the function
 * named); extend it when `kshield hooks` says "no dispatcher known".
 */
#include <string.h>
#include <stdio.h>
#include "array.h"
#include "dispatch_table.h"

static const struct ks_dispatch dispatch[] = {
	/* netlink families: the message handlers */
	{ "nfnl_callback.call", "nfnetlink_rcv_batch,nfnetlink_rcv_msg", "nfnetlink",
	  KS_ENTRY_NETLINK, "nfnetlink" },
	{ "rtnl_msg_handler.doit", "rtnetlink_rcv_msg", NULL, KS_ENTRY_NETLINK, "rtnetlink" },
	{ "xfrm_link.doit", "xfrm_user_rcv_msg", "xfrm_user", KS_ENTRY_NETLINK, "xfrm" },
	{ "genl_ops.doit", "genl_family_rcv_msg_doit", NULL, KS_ENTRY_NETLINK, "genetlink" },
	{ "genl_small_ops.doit", "genl_family_rcv_msg_doit", NULL, KS_ENTRY_NETLINK, "genetlink" },
	/* a kernel socket's input runs from netlink_unicast (netlink_unicast_kernel,
	 * inlined); user space gets there by netlink_sendmsg. The kernel's own
	 * unicasts go to user sockets: walking up netlink_unicast's callers
	 * would add every audit and reply sender. */
	{ "netlink_kernel_cfg.input", "netlink_sendmsg", NULL, 0, NULL },
	/* nf_tables: expressions, sets, objects */
	{ "nft_expr_ops.init", "nf_tables_newexpr", "nf_tables", 0, NULL },
	{ "nft_expr_ops.activate", "nft_rule_expr_activate", "nf_tables", 0, NULL },
	{ "nft_expr_ops.deactivate", "nft_rule_expr_deactivate", "nf_tables", 0, NULL },
	{ "nft_expr_ops.destroy", "nf_tables_expr_destroy,nft_expr_destroy", "nf_tables", 0, NULL },
	{ "nft_expr_type.select_ops", "nf_tables_expr_parse", "nf_tables", 0, NULL },
	{ "nfnetlink_subsystem.commit", "nfnetlink_rcv_batch", "nfnetlink", 0, NULL },
	{ "nfnetlink_subsystem.abort", "nfnetlink_rcv_batch", "nfnetlink", 0, NULL },
	{ "nft_set_ops.insert", "nft_setelem_insert", "nf_tables", 0, NULL },
	{ "nft_set_ops.remove", "nft_setelem_remove", "nf_tables", 0, NULL },
	{ "nft_set_ops.deactivate", "nft_setelem_catchall_deactivate,__nft_set_elem_deactivate,nft_setelem_deactivate", "nf_tables", 0, NULL },
	/* traffic control */
	{ "tcf_proto_ops.change", "tc_new_tfilter", NULL, 0, NULL },
	{ "tcf_proto_ops.delete", "tc_del_tfilter,tfilter_del_notify", NULL, 0, NULL },
	{ "tcf_proto_ops.init", "tcf_proto_create", NULL, 0, NULL },
	{ "Qdisc_ops.init", "qdisc_create", NULL, 0, NULL },
	{ "Qdisc_ops.change", "qdisc_change", NULL, 0, NULL },
	{ "Qdisc_class_ops.change", "tc_ctl_tclass", NULL, 0, NULL },
	/* sockets */
	{ "proto_ops.setsockopt", "__sys_setsockopt,do_sock_setsockopt", NULL, 0, NULL },
	{ "proto_ops.getsockopt", "__sys_getsockopt,do_sock_getsockopt", NULL, 0, NULL },
	{ "proto_ops.sendmsg", "sock_sendmsg_nosec,__sock_sendmsg", NULL, 0, NULL },
	{ "proto_ops.recvmsg", "sock_recvmsg_nosec", NULL, 0, NULL },
	{ "proto_ops.bind", "__sys_bind,__sys_bind_socket", NULL, 0, NULL },
	{ "proto_ops.accept", "do_accept,__sys_accept4_file", NULL, 0, NULL },
	{ "proto_ops.sendpage", "kernel_sendpage,sock_sendpage", NULL, 0, NULL },
	{ "proto_ops.splice_read", "sock_splice_read", NULL, 0, NULL },
	{ "proto_ops.mmap", "sock_mmap", NULL, 0, NULL },
	{ "sock.sk_destruct", "__sk_destruct", NULL, 0, NULL },
	{ "proto.setsockopt", "sock_common_setsockopt", NULL, 0, NULL },
	{ "inet_connection_sock_af_ops.setsockopt", "tcp_setsockopt,ipv6_setsockopt", NULL, 0, NULL },
	{ "proto.sendmsg", "inet_sendmsg,inet6_sendmsg", NULL, 0, NULL },
	{ "proto.recvmsg", "inet_recvmsg,inet6_recvmsg,sock_common_recvmsg", NULL, 0, NULL },
	{ "net_proto_family.create", "__sock_create", NULL, 0, NULL },
	{ "nf_sockopt_ops.set", "nf_setsockopt,nf_sockopt", NULL, 0, NULL },
	{ "nf_sockopt_ops.get", "nf_getsockopt,nf_sockopt", NULL, 0, NULL },
	{ "af_alg_type.accept", "af_alg_accept", "af_alg", 0, NULL },
	{ "af_alg_type.setkey", "alg_setkey", "af_alg", 0, NULL },
	{ "af_alg_type.bind", "alg_bind", "af_alg", 0, NULL },
	/* files and file systems */
	{ "fs_context_operations.parse_param", "vfs_parse_fs_param", NULL, 0, NULL },
	{ "fs_context_operations.get_tree", "vfs_get_tree", NULL, 0, NULL },
	{ "fs_context_operations.parse_monolithic", "parse_monolithic_mount_data", NULL, 0, NULL },
	{ "inode_operations.mkdir", "vfs_mkdir", NULL, 0, NULL },
	{ "file_operations.get_unmapped_area", "__get_unmapped_area,get_unmapped_area", NULL, 0, NULL },
	{ "file_operations.sendpage", "pipe_to_sendpage", NULL, 0, NULL },
	{ "file_operations.copy_file_range", "vfs_copy_file_range", NULL, 0, NULL },
	{ "file_operations.mmap", "call_mmap,mmap_file,mmap_region,__mmap_region", NULL, 0, NULL },
	{ "file_operations.write_iter", "call_write_iter,new_sync_write,do_iter_readv_writev,vfs_iter_write,do_iter_write", NULL, 0, NULL },
	{ "file_operations.read_iter", "call_read_iter,new_sync_read,do_iter_readv_writev,vfs_iter_read,do_iter_read", NULL, 0, NULL },
	{ "file_operations.unlocked_ioctl", "vfs_ioctl", NULL, 0, NULL },
	{ "file_operations.read", "vfs_read", NULL, 0, NULL },
	{ "file_operations.write", "vfs_write", NULL, 0, NULL },
	{ "seq_operations.show", "seq_read_iter,traverse", NULL, 0, NULL },
	/* kernfs and the files made on it (cgroup's cftype), sysctl */
	{ "kernfs_ops.write", "kernfs_fop_write_iter", NULL, 0, NULL },
	{ "cftype.write", "cgroup_file_write", NULL, 0, NULL },
	{ "cftype.write_u64", "cgroup_file_write", NULL, 0, NULL },
	{ "cftype.write_s64", "cgroup_file_write", NULL, 0, NULL },
	{ "ctl_table.proc_handler", "proc_sys_call_handler", NULL, 0, NULL },
	{ "file_operations.splice_write", "do_splice_from", NULL, 0, NULL },
	/* the call through it: do_splice_to (6.1), do_splice_read (6.12) */
	{ "file_operations.splice_read", "do_splice_to,do_splice_read", NULL, 0, NULL },
	/* io_uring: the opcode table */
	{ "io_issue_def.issue", "io_issue_sqe", NULL, KS_ENTRY_URING, "io_uring" },
	{ "io_issue_def.prep", "io_init_req", NULL, KS_ENTRY_URING, "io_uring" },
	{ "io_op_def.issue", "io_issue_sqe", NULL, KS_ENTRY_URING, "io_uring" },
	{ "io_op_def.prep", "io_init_req", NULL, KS_ENTRY_URING, "io_uring" },
	/* packet receive: softirq below, so these paths end there, said so */
	{ "net_protocol.handler", "ip_protocol_deliver_rcu", NULL, 0, NULL },
	{ "inet6_protocol.handler", "ip6_protocol_deliver_rcu", NULL, 0, NULL },
	/* xfrm */
	{ "xfrm4_protocol.handler", "xfrm4_esp_rcv,xfrm4_ah_rcv,xfrm4_ipcomp_rcv,xfrm4_rcv_encap", NULL, 0, NULL },
	{ "xfrm6_protocol.handler", "xfrm6_esp_rcv,xfrm6_ah_rcv,xfrm6_ipcomp_rcv,xfrm6_rcv_encap", NULL, 0, NULL },
	{ "xfrm_type.input", "xfrm_input", NULL, 0, NULL },
	{ "xfrm_type.init_state", "xfrm_init_state,__xfrm_init_state", NULL, 0, NULL },
	{ "xfrm_type.output", "xfrm_output_one", NULL, 0, NULL },
	{ "xfrm_type_offload.input_tail", "xfrm_input", NULL, 0, NULL },
	/* x_tables */
	{ "xt_target.compat_from_user", "xt_compat_target_from_user", "x_tables", 0, NULL },
	{ "xt_match.compat_from_user", "xt_compat_match_from_user", "x_tables", 0, NULL },
	/* rxrpc security classes */
	{ "rxrpc_security.verify_packet", "rxrpc_verify_data", "rxrpc", 0, NULL },
	{ "rxrpc_security.respond_to_challenge", "rxrpc_process_event,rxrpc_respond_to_challenge", "rxrpc", 0, NULL },
	{ "rxrpc_security.verify_response", "rxrpc_process_event,rxrpc_verify_response", "rxrpc", 0, NULL },
};

static const struct ks_registrar registrars[] = {
	{ "rtnl_register", 2, 1, "rtnetlink_rcv_msg", KS_ENTRY_NETLINK, "rtnetlink" },
	{ "rtnl_register_module", 3, 2, "rtnetlink_rcv_msg", KS_ENTRY_NETLINK, "rtnetlink" },
};

/* Functions stored into a struct on the stack before registration: no
 * data word, no constant argument holds them. */
static const struct ks_named_cb named[] = {
	{ "rtnetlink_rcv", "netlink_kernel_cfg.input" },
	{ "nfnetlink_rcv", "netlink_kernel_cfg.input" },
	{ "xfrm_netlink_rcv", "netlink_kernel_cfg.input" },
	{ "genl_rcv", "netlink_kernel_cfg.input" },
	{ "audit_receive", "netlink_kernel_cfg.input" },
	{ "sock_diag_rcv", "netlink_kernel_cfg.input" },
};

/* Functions not walked up through: everything that sleeps, exits or
 * faults reaches them, so a path through them says nothing about who
 * triggers the function, and a hook above them refuses everything.
 * release_sock runs the socket's backlog of received packets, busy polling
 * and softirqs run the receive path inside whatever syscall happens to be
 * there: packet receive is reached from everywhere, so it stops here. */
static const char *const hubs[] = {
	"schedule", "__schedule", "schedule_timeout", "schedule_preempt_disabled",
	"preempt_schedule", "preempt_schedule_common", "preempt_schedule_irq",
	"io_schedule", "schedule_idle", "__cond_resched", "do_exit", "do_group_exit",
	"exit_to_user_mode_loop", "exit_to_user_mode_prepare", "irqentry_exit_to_user_mode",
	"task_work_run", "resume_user_mode_work", "get_signal",
	/* exec tears the old image down as exit does (io_uring cancel, files
	 * closed on exec, the old mm): everything reachable from exit is */
	"begin_new_exec",
	"release_sock", "__release_sock",
	"napi_busy_loop", "napi_busy_loop_rcu", "__napi_busy_loop", "net_rx_action",
	"do_softirq", "__do_softirq", "handle_softirqs", "__local_bh_enable_ip", "irq_exit_rcu",
};

bool ks_hub(const char *fn)
{
	for (size_t i = 0; i < ARRAY_SIZE(hubs); i++)
		if (!strcmp(hubs[i], fn))
			return true;
	return false;
}

bool ks_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (list && *list) {
		const char *end = strchr(list, ',');
		size_t len = end ? (size_t)(end - list) : strlen(list);

		if (len == n && !strncmp(list, name, n))
			return true;
		list = end ? end + 1 : NULL;
	}
	return false;
}

/* Which enumeration names a table's index: by the table's object for
 * shared structs (every nfnetlink subsystem has its nfnl_callback array),
 * by family otherwise. */
static const struct { const char *object, *family, *prefix; } prefixes[] = {
	{ "nf_tables_cb", NULL, "NFT_MSG_" },
	{ "ip_set_netlink_subsys_cb", NULL, "IPSET_CMD_" },
	{ "ctnl_cb", NULL, "IPCTNL_MSG_CT_" },
	{ "nfqnl_cb", NULL, "NFQNL_MSG_" },
	{ NULL, "io_uring", "IORING_OP_" },
	{ NULL, "rtnetlink", "RTM_" },
	{ NULL, "xfrm", "XFRM_MSG_" },
};

const char *ks_index_prefix(const struct ks_dispatch *d, const char *object)
{
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		if (prefixes[i].object && object && !strcmp(prefixes[i].object, object))
			return prefixes[i].prefix;
		if (prefixes[i].family && d->family && !strcmp(prefixes[i].family, d->family))
			return prefixes[i].prefix;
	}
	return NULL;
}

const char *ks_registrar_prefix(const struct ks_registrar *r)
{
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (prefixes[i].family && r->family && !strcmp(prefixes[i].family, r->family))
			return prefixes[i].prefix;
	return NULL;
}

const struct ks_dispatch *ks_dispatch_find(const char *member)
{
	for (size_t i = 0; i < ARRAY_SIZE(dispatch); i++)
		if (!strcmp(dispatch[i].member, member))
			return &dispatch[i];
	return NULL;
}

const struct ks_registrar *ks_registrar_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(registrars); i++)
		if (!strcmp(registrars[i].name, name))
			return &registrars[i];
	return NULL;
}

const char *ks_named_cb_member(const char *fn)
{
	for (size_t i = 0; i < ARRAY_SIZE(named); i++)
		if (!strcmp(named[i].fn, fn))
			return named[i].member;
	return NULL;
}

const char *ks_syscall_of(const char *fn, char *abi, size_t abilen)
{
	static const struct { const char *prefix, *abi; } p[] = {
		{ "__x64_sys_", "x64" }, { "__ia32_compat_sys_", "ia32_compat" },
		{ "__ia32_sys_", "ia32" }, { "__x32_compat_sys_", "x32_compat" },
		{ "__se_sys_", "" }, { "__do_sys_", "" },
		{ "__arm64_sys_", "arm64" }, { "__arm64_compat_sys_", "arm64_compat" },
		{ "__se_compat_sys_", "compat" }, { "__do_compat_sys_", "compat" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		size_t n = strlen(p[i].prefix);

		if (!strncmp(fn, p[i].prefix, n) && fn[n]) {
			snprintf(abi, abilen, "%s", p[i].abi);
			return fn + n;
		}
	}
	return NULL;
}
