/* SPDX-License-Identifier: GPL-2.0-only */
/* nlwalk_uring.bpf.h - io_uring requests to netlink sockets, for the tp
 * variant of a netlink shield (bpf/sdk/nlwalk.bpf.h includes it): the
 * submission ring scanned at io_uring_enter, and each request judged as
 * the kernel submits it. Uses the walker's nlw_fd_netlink_sock and
 * nlw_guarded, and the shield's NLW_URING_TARGET / NLW_URING_TARGET_SK.
 */
#ifndef KSHIELD_NLWALK_URING_BPF_H
#define KSHIELD_NLWALK_URING_BPF_H

/* io_uring for the tp variant: requests that reach a socket without a
 * send syscall. At io_uring_enter() the SQEs about to be submitted are in
 * the ring (kernel memory, mapped to the submitter): each send or write
 * opcode whose target is a guarded netlink socket of @protocol kills the
 * submitter, unparsed (blunt: nothing sends netlink requests through
 * io_uring). Not seen here: rings polled by their own thread
 * (IORING_SETUP_SQPOLL submits without io_uring_enter), and targets given
 * as registered files (IOSQE_FIXED_FILE), which are killed here only when
 * the submitter itself lives in a child user namespace: both are judged at
 * submission instead (nlw_tp_uring_req), where the kernel has the
 * tracepoint. */
#define NLW_IOSQE_FIXED_FILE		1
#define NLW_IORING_SETUP_SQE128		(1u << 10)
#define NLW_IORING_ENTER_REGISTERED	(1u << 4)
#define NLW_IO_RINGFD_REG_MAX		16
#define NLW_SQ_SCAN			4096	/* SQEs looked at per enter */

/* A shield may guard other targets of these operations too: it defines
 * NLW_URING_TARGET(opcode, fd) (true: kill) before including this file. */
#ifndef NLW_URING_TARGET
#define NLW_URING_TARGET(op, fd) false
#endif

/* Opcodes up to IORING_OP_PIPE (62, 6.16) are known. Of those, these can
 * send on the socket their SQE names: WRITEV (2), WRITE_FIXED (5), SENDMSG
 * (9), WRITE (23), SEND (26), SPLICE (30: fd is fd_out), SEND_ZC (47),
 * SENDMSG_ZC (48), WRITEV_FIXED (61, 6.15). Every other known opcode reads,
 * receives, polls or works on files: harmless on a netlink socket. */
#define NLW_URING_OPS_KNOWN	63
#define NLW_URING_SENDS		((1ull << 2) | (1ull << 5) | (1ull << 9) | (1ull << 23) | \
				 (1ull << 26) | (1ull << 30) | (1ull << 47) | (1ull << 48) | \
				 (1ull << 61))

/* Does a request with opcode @op send on its target? Judged by what is
 * known harmless, not by a list of known sends: an opcode added after this
 * was written counts as a send, so a new way in is refused, not missed. */
static __always_inline bool nlw_uring_op_sends(__u8 op)
{
	return op >= NLW_URING_OPS_KNOWN || ((NLW_URING_SENDS >> op) & 1);
}

struct nlw_uring_scan {
	__u64 sqes;
	__u32 *sq_array;
	__u32 head, n, mask, stride;
	int protocol;
	int hit;		/* fd of the first guarded target, or -1 */
};

static __always_inline long nlw_uring_step_body(__u32 i, void *arg)
{
	struct nlw_uring_scan *c = arg;
	struct { __u8 opcode; __u8 flags; __u16 ioprio; __s32 fd; } sqe;
	__u32 pos, idx = 0;
	struct sock *sk;

	if (i >= c->n)
		return 1;
	pos = (c->head + i) & c->mask;
	if (c->sq_array) {
		if (bpf_probe_read_kernel(&idx, sizeof(idx), &c->sq_array[pos]))
			return 1;
	} else {
		idx = pos;
	}
	if (bpf_probe_read_kernel(&sqe, sizeof(sqe),
				  (void *)(long)(c->sqes + (__u64)(idx & c->mask) * c->stride)))
		return 1;
	if (!nlw_uring_op_sends(sqe.opcode))
		return 0;
	if (sqe.flags & NLW_IOSQE_FIXED_FILE) {
		if (ks_in_child_userns()) {
			c->hit = sqe.fd;
			return 1;
		}
		return 0;
	}
	if (NLW_URING_TARGET(sqe.opcode, sqe.fd)) {
		c->hit = sqe.fd;
		return 1;
	}
	sk = nlw_fd_netlink_sock(sqe.fd);
	if (sk && nlw_guarded(sk, c->protocol)) {
		c->hit = sqe.fd;
		return 1;
	}
	return 0;
}

/* The bpf_loop callback (a subprogram); the bounded loops of the
 * __noloop twins call nlw_uring_step_body, inlined: a program that also
 * tail-calls (the syscall dispatcher's chains) may have no BPF-to-BPF
 * call on kernels whose JIT cannot mix them (arm64 5.10). */
static long nlw_uring_step(__u32 i, void *arg)
{
	return nlw_uring_step_body(i, arg);
}

/* The io_uring file behind @fd of io_uring_enter(@flags), or NULL. */
static __always_inline struct file *nlw_uring_file(int fd, __u32 flags)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file *file = NULL;
	char name[11] = {};

	if (flags & NLW_IORING_ENTER_REGISTERED) {
		struct io_uring_task *tctx = BPF_CORE_READ(task, io_uring);

		if (!tctx || fd < 0 || fd >= NLW_IO_RINGFD_REG_MAX ||
		    !bpf_core_field_exists(tctx->registered_rings))
			return NULL;
		bpf_probe_read_kernel(&file, sizeof(file), &tctx->registered_rings[fd & 15]);
	} else {
		file = ks_fd_file(fd);
	}
	if (!file || bpf_probe_read_kernel_str(name, sizeof(name),
					       BPF_CORE_READ(file, f_path.dentry, d_name.name)) != 11 ||
	    __builtin_memcmp(name, "[io_uring]", 11))
		return NULL;
	return file;
}

/* SQEs looked at per enter without bpf_loop (the raw twins, before 5.15):
 * a submission of more is judged by its first NLW_SQ_SCAN_NOLOOP, and
 * killed whole when the submitter lives in a child user namespace. */
#define NLW_SQ_SCAN_NOLOOP		16

/* The descriptor of the first SQE that io_uring_enter(@fd, @to_submit,
 * @flags) would submit to a guarded socket (or -1): the ring's SQEs,
 * read as the kernel will read them, in memory the submitter shares (a
 * second thread may rewrite an SQE after this read: the submission
 * programs, nlw_tp_uring_req, see what is submitted). */
static __always_inline int nlw_uring_enter_hit(int fd, __u32 to_submit, __u32 flags, int protocol,
					       bool noloop)
{
	struct nlw_uring_scan c = { .protocol = protocol, .hit = -1 };
	struct io_ring_ctx *ctx;
	struct file *file;
	__u32 tail, entries;

	if (!to_submit)
		return -1;
	file = nlw_uring_file(fd, flags);
	if (!file)
		return -1;
	ctx = BPF_CORE_READ(file, private_data);
	if (!ctx)
		return -1;
	entries = BPF_CORE_READ(ctx, sq_entries);
	if (!entries || entries & (entries - 1))
		return -1;
	c.mask = entries - 1;
	c.head = BPF_CORE_READ(ctx, cached_sq_head);
	tail = BPF_CORE_READ(ctx, rings, sq.tail);
	c.n = tail - c.head;
	if (c.n > to_submit)
		c.n = to_submit;
	if (c.n > entries)
		c.n = entries;
	c.sqes = (__u64)(long)BPF_CORE_READ(ctx, sq_sqes);
	c.sq_array = BPF_CORE_READ(ctx, sq_array);
	c.stride = (BPF_CORE_READ(ctx, flags) & NLW_IORING_SETUP_SQE128) ? 128 : 64;
	if (noloop) {
		for (__u32 i = 0; i < NLW_SQ_SCAN_NOLOOP; i++)
			if (nlw_uring_step_body(i, &c))
				break;
		if (c.hit < 0 && c.n > NLW_SQ_SCAN_NOLOOP && ks_in_child_userns())
			c.hit = fd;
	} else {
		bpf_loop(NLW_SQ_SCAN, nlw_uring_step, &c, 0);
	}
	return c.hit;
}

static __always_inline int nlw_tp_uring_enter(int fd, __u32 to_submit, __u32 flags, int protocol,
					      bool noloop)
{
	int hit = nlw_uring_enter_hit(fd, to_submit, flags, protocol, noloop);

	if (hit >= 0)
		ks_kill("sys_enter_io_uring_enter", 0, hit, 0, NLW_UNPARSED);
	return 0;
}

/* io_uring at submission, for the tp variant: each request as the kernel
 * submits it (ks_uring_req_file, bpf/sdk/shield.bpf.h), from io_uring_enter
 * or from an SQPOLL ring's thread, which makes no syscall at all. A send
 * or write opcode whose target (registered files resolved) is a guarded
 * netlink socket of @protocol kills the submitter's process, unparsed as
 * at io_uring_enter. The SQPOLL thread is an io thread (PF_IO_WORKER, not
 * PF_KTHREAD) of that process: bpf_send_signal kills the whole thread
 * group, the thread included, with SIGKILL pending before the request is
 * issued. A shield that guards other targets defines
 * NLW_URING_TARGET_SK(opcode, sk) (true: kill) before including this file. */
#ifndef NLW_URING_TARGET_SK
#define NLW_URING_TARGET_SK(op, sk) false
#endif

static __always_inline int nlw_tp_uring_req(struct io_kiocb *req, int protocol)
{
	struct sock *sk;
	__u8 op;

	op = ks_uring_req_op(req);
	if (!nlw_uring_op_sends(op))
		return 0;
	sk = ks_file_sock(ks_uring_req_file(req));
	if (!sk)
		return 0;
	if (!NLW_URING_TARGET_SK(op, sk) &&
	    (BPF_CORE_READ(sk, __sk_common.skc_family) != NLW_AF_NETLINK ||
	     !nlw_guarded(sk, protocol)))
		return 0;
	ks_kill("io_uring_submit", op, ks_uring_req_fd(req), 0, NLW_UNPARSED);
	return 0;
}

#endif /* KSHIELD_NLWALK_URING_BPF_H */
