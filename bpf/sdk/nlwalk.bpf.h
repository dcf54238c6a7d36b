/* SPDX-License-Identifier: GPL-2.0-only */
/* nlwalk.bpf.h - a bounded walk over the netlink messages of one send, for
 * shields that must look inside netlink requests (nf_tables batches,
 * rtnetlink traffic-control requests) to refuse only the offending ones.
 *
 * The same walk runs on the kernel copy of the request (lsm/netlink_send
 * sees the skb before it is delivered) and on the sender's own buffers
 * (tracepoint fallbacks at sys_enter_sendmsg and friends). A shield that
 * includes this header first defines two functions:
 *
 *   static __always_inline __u32 nlw_on_msg(struct nlw *w, __u32 type,
 *                                           __u32 off, __u32 len);
 *	Called for each message header at @off. Return 0 to skip the message,
 *	or the size of the family header that follows the nlmsghdr (4 for
 *	nfgenmsg, 20 for tcmsg) to walk its attributes along w->path (set
 *	w->plen and w->path[] here). May set w->hit to stop the walk.
 *
 *   static __always_inline void nlw_on_leaf(struct nlw *w, __u32 off,
 *                                           __u32 len);
 *	Called for each attribute matching the last element of the path;
 *	@off/@len are its payload. May set w->hit.
 *
 * Optionally, before including this header, a shield may define
 *   NLW_ON_ATTR(w, depth, type, off, len)  called for every attribute
 *	visited on the way along the path (any type), e.g. to read a sibling
 *	of the path at depth 1;
 *   NLW_ON_MSG_END(w)  called when the walk leaves a message it entered,
 *	for verdicts that need the whole message (attributes come in any
 *	order);
 *   NLW_ON_END(w, depth)  called when the walk has visited every
 *	attribute of a container, @depth being theirs (2 and deeper; the
 *	container's type is w->in[depth]), for verdicts on one list element
 *	whose attributes come in any order (an nf_tables expression's name
 *	and data);
 *   NLW_DESCEND(w, depth, type)  non-zero to enter the attribute (walk
 *	its payload as attributes at depth + 1) instead of following
 *	w->path, for shields that look at several places of one message
 *	(w->in[1..depth] are the types of the containers the walk is in);
 *	the walk goes no deeper than w->plen, and nlw_on_leaf is not called
 *	(NLW_ON_ATTR sees every attribute).
 *
 * Then its programs are one line per variant:
 *   NLW_LSM_PROGRAM(NETLINK_xxx)   "lsm": lsm/netlink_send, EPERM
 *   NLW_TP_PROGRAMS(NETLINK_xxx)   "tp": send syscalls' tracepoints, SIGKILL
 *   NLW_KPROBE_PROGRAMS(NETLINK_xxx) "kprobe": the send syscalls' entry
 *	functions, EPERM by bpf_override_return; write, writev, pwritev2,
 *	io_uring submissions and 32-bit sends with tp's programs, SIGKILL
 *	(list "kprobe" before "tp" in KSHIELD_VARIANTS)
 * Both guard sends on sockets of that protocol whose network namespace, or
 * whose sender, belongs to a non-initial user namespace (nlw_guarded).
 *
 * Attribute types are compared as the kernel does (NLA_TYPE_MASK strips the
 * nested and byte-order flags); NLW_ANY in a path matches every type, and
 * every occurrence of a type is visited (the kernel keeps the last one, a
 * shield that checks all of them cannot be fooled by duplicates).
 *
 * The walk is a flat state machine driven by bpf_loop (5.17+), one header
 * per step. A request larger than the step budget is reported as
 * w->truncated: shields refuse those from namespaces they guard (fail
 * closed) rather than let padding hide an offending message.
 */
#ifndef KSHIELD_NLWALK_BPF_H
#define KSHIELD_NLWALK_BPF_H

#include "shield.bpf.h"

#define NLW_DEPTH	6		/* deepest attribute path */
#define NLW_ANY		0xffff
#define NLW_STEPS	(1u << 20)	/* headers per request */
#define NLW_IOVS	64		/* iovecs walked per sendmsg/writev */

#define NLW_NLMSG_HDRLEN	16
#define NLW_ALIGN(n)		(((n) + 3u) & ~3u)
#define NLW_TYPE_MASK		0x3fff

#define NLW_AF_NETLINK		AF_NETLINK
#define NLW_S_IFMT		S_IFMT
#define NLW_S_IFSOCK		S_IFSOCK

struct nlw {
	__u64 data;			/* request bytes (kernel or user address) */
	__u32 len;
	__u32 pos;
	__u32 depth;			/* 0: between messages */
	__u32 plen;			/* path length for the current message */
	__u16 path[NLW_DEPTH + 2];	/* sized for masked indexing */
	__u32 end[NLW_DEPTH + 2];	/* payload end of the container at depth d */
	__u32 next[NLW_DEPTH + 2];	/* where the walk goes on after it */
	__u32 user;			/* read with bpf_probe_read_user */
	__u32 done;			/* reached the end of the request */
	__u32 fault;			/* could not read the request */
	__u32 hit;			/* shield-defined: non-zero stops the walk */
	__u64 arg;			/* shield-defined detail of the hit */
	__u32 msg_type;			/* type of the message being walked */
	__u32 seen;			/* shield-defined message-level state */
	__u32 iov;			/* nlw_walk_iov_noloop: iovecs started */
	__u16 in[NLW_DEPTH + 2];	/* type of the container at depth d */
	__u64 st[4];			/* shield-defined walk state */
};

/* The walk's state lives in task storage, not on the stack: the verifier
 * tracks every constant stored on the stack, so a stack state makes it
 * explore each (depth, path) combination separately, while map values are
 * opaque to it. Per task, so concurrent senders cannot share it. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct nlw);
} nlw_state SEC(".maps");

/* A zeroed walk state for the current task, or NULL (callers fail closed). */
static __always_inline struct nlw *nlw_get(void)
{
	struct nlw *w = ks_task_storage_get(&nlw_state, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (w)
		__builtin_memset(w, 0, sizeof(*w));
	return w;
}

/* bpf_loop's context must be on the stack: it carries the state pointer. */
struct nlw_ref {
	struct nlw *w;
};

static __always_inline __u32 nlw_on_msg(struct nlw *w, __u32 type, __u32 off, __u32 len);
#ifndef NLW_DESCEND	/* a shield that descends itself has no leaves */
static __always_inline void nlw_on_leaf(struct nlw *w, __u32 off, __u32 len);
#endif

#ifndef NLW_ON_ATTR
#define NLW_ON_ATTR(w, depth, type, off, len) do { } while (0)
#endif
#ifndef NLW_ON_MSG_END
#define NLW_ON_MSG_END(w) do { } while (0)
#endif
#ifndef NLW_ON_END
#define NLW_ON_END(w, depth) do { } while (0)
#endif

static __always_inline int nlw_read(struct nlw *w, void *dst, __u32 size, __u32 off)
{
	const void *src = (const void *)(long)(w->data + off);

	if (w->user)
		return bpf_probe_read_user(dst, size, src);
	return bpf_probe_read_kernel(dst, size, src);
}

static __always_inline __u32 nlw_read_be32(struct nlw *w, __u32 off)
{
	__u32 v = 0;

	if (nlw_read(w, &v, sizeof(v), off))
		w->fault = 1;
	return __builtin_bswap32(v);
}

static __always_inline __u32 nlw_read_u32(struct nlw *w, __u32 off)
{
	__u32 v = 0;

	if (nlw_read(w, &v, sizeof(v), off))
		w->fault = 1;
	return v;
}

static __always_inline long nlw_step_body(__u32 i, void *ctx)
{
	struct nlw *w = ((struct nlw_ref *)ctx)->w;
	__u32 d;

	if (!w)
		return 1;
	d = w->depth;

	if (w->hit || w->fault)
		return 1;
	if (d == 0) {
		struct { __u32 len; __u16 type; __u16 flags; __u32 seq; __u32 pid; } h;
		__u32 hdr;

		if (w->pos + NLW_NLMSG_HDRLEN > w->len) {
			w->done = 1;
			return 1;
		}
		if (nlw_read(w, &h, sizeof(h), w->pos)) {
			w->fault = 1;
			return 1;
		}
		/* The kernel stops at the first malformed header too. */
		if (h.len < NLW_NLMSG_HDRLEN || h.len > w->len - w->pos) {
			w->done = 1;
			return 1;
		}
		w->msg_type = h.type;
		w->plen = 0;
		hdr = nlw_on_msg(w, h.type, w->pos, h.len);
		if (w->hit || w->fault)
			return 1;
		if (hdr && w->plen && w->plen <= NLW_DEPTH &&
		    NLW_NLMSG_HDRLEN + hdr <= h.len) {
			w->end[1] = w->pos + h.len;
			w->next[1] = w->pos + NLW_ALIGN(h.len);
			w->pos += NLW_NLMSG_HDRLEN + hdr;
			w->depth = 1;
		} else {
			w->pos += NLW_ALIGN(h.len);
		}
		return 0;
	}
	if (d > NLW_DEPTH || d > w->plen) {
		w->fault = 1;
		return 1;
	}

	struct { __u16 len; __u16 type; } a;
	__u32 end = w->end[d & 7], want, t, next;

	if (w->pos + 4 > end || nlw_read(w, &a, sizeof(a), w->pos) ||
	    a.len < 4 || a.len > end - w->pos) {
		/* End of this container (or a malformed attribute, which
		 * nla_parse refuses or ignores): back to the parent. */
		w->pos = w->next[d & 7];
		w->depth = d - 1;
		if (d == 1)
			NLW_ON_MSG_END(w);
		else
			NLW_ON_END(w, d);
		return 0;
	}
	t = a.type & NLW_TYPE_MASK;
	NLW_ON_ATTR(w, d, t, w->pos + 4, a.len - 4);
	if (w->hit || w->fault)
		return 1;
	next = w->pos + NLW_ALIGN(a.len);
#ifdef NLW_DESCEND
	(void)want;
	if (d < w->plen && NLW_DESCEND(w, d, t)) {
		w->in[(d + 1) & 7] = t;
		w->end[(d + 1) & 7] = w->pos + a.len;
		w->next[(d + 1) & 7] = next;
		w->pos += 4;
		w->depth = d + 1;
		return 0;
	}
#else
	want = w->path[(d - 1) & 7];	/* a mask: 6.1's verifier cannot bound % */
	if (want == t || want == NLW_ANY) {
		if (d == w->plen) {
			nlw_on_leaf(w, w->pos + 4, a.len - 4);
		} else {
			w->end[(d + 1) & 7] = w->pos + a.len;
			w->next[(d + 1) & 7] = next;
			w->in[(d + 1) & 7] = t;
			w->pos += 4;
			w->depth = d + 1;
			return 0;
		}
	}
#endif
	w->pos = next;
	return 0;
}

/* The bpf_loop callback (a subprogram); the bounded loops of the
 * __noloop twins call nlw_step_body, inlined: a program that also
 * tail-calls (the syscall dispatcher's chains) may have no BPF-to-BPF
 * call on kernels whose JIT cannot mix them (arm64 5.10). */
static long nlw_step(__u32 i, void *ctx)
{
	return nlw_step_body(i, ctx);
}

/* Walk one buffer of @len bytes at @data. Returns 0 when the walk ended
 * (reached the end, or a hit), 1 when the step budget ran out first.
 * @noloop (a constant): for the *__noloop twin on kernels without bpf_loop
 * (5.17; bpf/sdk/fit.bpf.h), a bounded loop of NLW_NOLOOP_STEPS headers:
 * longer requests come back truncated, and guarded senders are refused. */
#define NLW_NOLOOP_STEPS	128
static __always_inline int nlw_walk_(struct nlw *w, __u64 data, __u32 len, bool user,
				     bool noloop)
{
	w->data = data;
	w->len = len;
	w->pos = 0;
	w->depth = 0;
	w->user = user;
	w->done = 0;
	struct nlw_ref r = { .w = w };

	if (noloop) {
		for (__u32 i = 0; i < NLW_NOLOOP_STEPS; i++)
			if (nlw_step_body(i, &r))
				break;
	} else {
		bpf_loop(NLW_STEPS, nlw_step, &r, 0);
	}
	return !(w->done || w->hit || w->fault);
}
#define nlw_walk(w, data, len, user) nlw_walk_(w, data, len, user, false)

/* The sock of @file when it is a netlink socket, else NULL. */
static __always_inline struct sock *nlw_file_netlink_sock(struct file *file)
{
	struct sock *sk = ks_file_sock(file);

	if (!sk || BPF_CORE_READ(sk, __sk_common.skc_family) != NLW_AF_NETLINK)
		return NULL;
	return sk;
}

/* The sock behind descriptor @fd of the current task when it is a netlink
 * socket, else NULL. For the tracepoint fallbacks, which only get the fd. */
static __always_inline struct sock *nlw_fd_netlink_sock(int fd)
{
	return nlw_file_netlink_sock(ks_fd_file(fd));
}

/* Walk the iovecs of a sendmsg/writev from user memory. Each iovec is
 * walked as its own run of messages: netlink libraries never split a
 * message across iovecs, and one that does (or more than NLW_IOVS of them)
 * is reported as truncated so that the caller fails closed. The iovecs are
 * themselves a bpf_loop, so that the walk's callback is verified once. */
struct nlw_iov_ctx {
	struct nlw *w;
	const struct iovec *iov;
	__u64 n;
	int truncated;
};

static long nlw_iov_step(__u32 i, void *ctx)
{
	struct nlw_iov_ctx *c = ctx;
	struct nlw *w = c->w;
	struct iovec v;

	if (!w || i >= c->n)
		return 1;
	if (bpf_probe_read_user(&v, sizeof(v), &c->iov[i])) {
		w->fault = 1;
		return 1;
	}
	if (v.iov_len > 0xffffffffull) {
		c->truncated = 1;
		return 1;
	}
	c->truncated |= nlw_walk(w, (__u64)(long)v.iov_base, v.iov_len, true);
	if (w->hit || w->fault)
		return 1;
	/* Stopped before the end of the iovec: a message ran past it. */
	if (w->pos < w->len)
		c->truncated = 1;
	return 0;
}

static __always_inline int nlw_walk_iov(struct nlw *w, const struct iovec *iov, __u64 n)
{
	struct nlw_iov_ctx c = { .w = w, .iov = iov, .n = n };

	if (n > NLW_IOVS)
		return 1;
	bpf_loop(NLW_IOVS, nlw_iov_step, &c, 0);
	return c.truncated;
}

/* The same without bpf_loop (the raw tracepoint twins, kernels before
 * 5.15, which all lack bpf_loop): one bounded loop over every iovec, with
 * one budget of NLW_NOLOOP_IOV_STEPS steps for the whole request: a step
 * either starts the next iovec or walks one header or attribute (the
 * bounded walk's 128, plus one per iovec). A request that needs more (or
 * has more than NLW_NOLOOP_IOVS iovecs) is reported as truncated (callers
 * fail closed). 64 steps refused nf_tables' benign batch of four rules on
 * arm64 5.10. */
#define NLW_NOLOOP_IOV_STEPS	(NLW_NOLOOP_STEPS + NLW_NOLOOP_IOVS)
#define NLW_NOLOOP_IOVS		16
static __always_inline int nlw_walk_iov_noloop(struct nlw *w, const struct iovec *iov, __u64 n)
{
	struct nlw_ref r = { .w = w };
	struct iovec v;

	if (n > NLW_NOLOOP_IOVS)
		return 1;
	/* The iovec count lives in the map value, not a register: opaque to
	 * the verifier, so the paths that start an iovec and those that walk
	 * a header reach each iteration in one state (a register count made
	 * every (step, iovec) pair a state of its own). */
	w->iov = 0;
	w->done = 1;		/* the first step starts iovec 0 */
	w->pos = w->len = 0;
	for (__u32 i = 0; i < NLW_NOLOOP_IOV_STEPS; i++) {
		if (w->hit || w->fault)
			return 0;
		if (!w->done) {
			nlw_step_body(i, &r);
			continue;
		}
		/* Stopped before the end of the iovec: a message ran past it. */
		if (w->pos < w->len)
			return 1;
		if (w->iov >= n)
			return 0;
		if (bpf_probe_read_user(&v, sizeof(v), &iov[w->iov & (NLW_NOLOOP_IOVS - 1)])) {
			w->fault = 1;
			return 1;
		}
		if (v.iov_len > 0xffffffffull)
			return 1;
		w->iov++;
		w->data = (__u64)(long)v.iov_base;
		w->len = v.iov_len;
		w->pos = 0;
		w->depth = 0;
		w->user = 1;
		w->done = 0;
	}
	return !(w->hit || w->fault || (w->done && w->pos >= w->len && w->iov >= n));
}

/* Tracepoint fallbacks: what the sender asked to send, from its own memory. */
enum { NLW_CLEAN = 0, NLW_HIT = 1, NLW_UNPARSED = 2 };
enum { NLW_SEND_BUF, NLW_SEND_IOV, NLW_SEND_MSG, NLW_SEND_MMSG, NLW_SEND_PIPE };

/* Walk one send of @kind: BUF (a = buffer, b = length), IOV (a = iovec
 * array, b = count), MSG (a = user_msghdr). sendmmsg (MMSG) and the sends
 * whose bytes come from another file (PIPE: splice, sendfile; the bytes
 * are in a pipe or a file, not in the sender's memory) are not parsed.
 * Returns NLW_HIT, NLW_CLEAN, or NLW_UNPARSED when the request could not be
 * read whole (callers fail closed). */
static __always_inline int nlw_tp_walk(struct nlw *w, int kind, __u64 a, __u64 b, bool noloop)
{
	int truncated;

	if (kind == NLW_SEND_BUF) {
		if (b > 0xffffffffull)
			return NLW_UNPARSED;
		truncated = nlw_walk_(w, a, b, true, noloop);
	} else if (kind == NLW_SEND_MSG) {
		struct user_msghdr m;

		if (bpf_probe_read_user(&m, sizeof(m), (const void *)(long)a))
			return NLW_UNPARSED;
		truncated = noloop ? nlw_walk_iov_noloop(w, m.msg_iov, m.msg_iovlen) :
				     nlw_walk_iov(w, m.msg_iov, m.msg_iovlen);
	} else if (kind == NLW_SEND_IOV) {
		truncated = noloop ? nlw_walk_iov_noloop(w, (const struct iovec *)(long)a, b) :
				     nlw_walk_iov(w, (const struct iovec *)(long)a, b);
	} else {
		return NLW_UNPARSED;
	}
	if (w->hit)
		return NLW_HIT;
	return truncated || w->fault ? NLW_UNPARSED : NLW_CLEAN;
}

/* A send on @sk is guarded: its @protocol, and either the network namespace
 * it goes to is owned by a non-initial user namespace or the sender's
 * credentials live in one. */
static __always_inline bool nlw_guarded(struct sock *sk, int protocol)
{
	return BPF_CORE_READ(sk, sk_protocol) == protocol &&
	       (ks_sock_in_child_userns(sk) || ks_in_child_userns());
}

/* The LSM variant's verdict on one send: walk the kernel copy of the
 * request, refuse a hit, and fail closed on a request that could not be
 * walked whole (or no walk state). */
static __always_inline int nlw_lsm_send(struct sock *sk, struct sk_buff *skb, int protocol,
					bool noloop)
{
	struct nlw *w;
	int truncated;

	if (!nlw_guarded(sk, protocol))
		return 0;
	w = nlw_get();
	if (!w)
		return ks_refuse("netlink_send", 0, 0, 0, NLW_UNPARSED) ? -EPERM : 0;
	truncated = nlw_walk_(w, (__u64)(long)BPF_CORE_READ(skb, data),
			      BPF_CORE_READ(skb, len), false, noloop);
	if (!w->hit && !truncated && !w->fault)
		return 0;
	return ks_refuse("netlink_send", w->msg_type, w->arg, w->hit,
			 w->hit ? NLW_HIT : NLW_UNPARSED) ? -EPERM : 0;
}

/* The tracepoint fallback's verdict on one send (see nlw_tp_walk): SIGKILL
 * on a hit or on what could not be parsed; the send itself completes. */
static __always_inline int nlw_tp_send(int fd, int kind, __u64 a, __u64 b, int protocol,
				       bool noloop)
{
	struct sock *sk = nlw_fd_netlink_sock(fd);
	struct nlw *w;
	int r;

	if (!sk || !nlw_guarded(sk, protocol))
		return 0;
	w = nlw_get();
	r = w ? nlw_tp_walk(w, kind, a, b, noloop) : NLW_UNPARSED;
	if (r == NLW_CLEAN)
		return 0;
	ks_kill("sys_enter_send", w ? w->msg_type : 0, w ? w->arg : 0, w ? w->hit : 0, r);
	return 0;
}

/* The kprobe variant's verdict on one send, at the syscall's entry
 * function (bpf/sdk/override.bpf.h): nlw_tp_walk's parse, and -EPERM on a
 * hit or on what could not be parsed (0 in audit mode), before the send
 * runs: nothing is committed and the sender lives. */
static __always_inline int nlw_kprobe_send(int fd, int kind, __u64 a, __u64 b, int protocol,
					   const char *ks_hook, bool noloop)
{
	struct sock *sk = nlw_fd_netlink_sock(fd);
	struct nlw *w;
	int r;

	if (!sk || !nlw_guarded(sk, protocol))
		return 0;
	w = nlw_get();
	r = w ? nlw_tp_walk(w, kind, a, b, noloop) : NLW_UNPARSED;
	if (r == NLW_CLEAN)
		return 0;
	return ks_deny(w ? w->msg_type : 0, w ? w->arg : 0, w ? w->hit : 0, r);
}

#include "nlwalk_uring.bpf.h"

/* A shield that also guards what splice or sendfile feed into other
 * sockets defines NLW_TP_PIPE_SEND(fd_out, is_sendfile) before including
 * this file: it runs first in the same programs, the native splice and
 * sendfile64 ones and tp__send__compat32 for their 32-bit calls (no second
 * program on raw_tp/sys_enter, which every syscall would pay for). */
#ifndef NLW_TP_PIPE_SEND
#define NLW_TP_PIPE_SEND(fd, is_sendfile) do { } while (0)
#endif
/* The socket families whose splice and sendfile targets the tp programs
 * look at (the dispatcher's filter): netlink, and what NLW_TP_PIPE_SEND
 * guards besides. */
#ifndef NLW_TP_PIPE_FAMILIES
#define NLW_TP_PIPE_FAMILIES NLW_AF_NETLINK
#endif
/* Its kprobe twin, NLW_KPROBE_PIPE_SEND(fd_out, is_sendfile), runs first
 * in the kprobe variant's splice and sendfile programs (32-bit ones
 * included) and returns 0 or the refusal (-EPERM; `ks_hook` is in scope). */
#ifndef NLW_KPROBE_PIPE_SEND
#define NLW_KPROBE_PIPE_SEND(fd, is_sendfile) 0
#endif

/* 32-bit compat syscalls for the tp variant. The syscall tracepoints
 * (and their raw twins) skip them, so this one raw_tp/sys_enter program
 * watches every 32-bit call (i386 binaries and `int $0x80` on x86-64,
 * AArch32 tasks on arm64) and kills the sender of any send, write, splice,
 * sendfile or socketcall send to a guarded netlink socket of @protocol, and
 * of any io_uring submission to one, unparsed: the 32-bit layouts
 * (compat_msghdr, compat_iovec) are not walked, and nothing sends netlink
 * requests from 32-bit code in a user namespace (fail closed). Costs every
 * syscall of every task a program run (the number is compared first): the
 * loader loads it only where the kernel runs 32-bit code. */
static __always_inline int nlw_tp_compat(struct bpf_raw_tracepoint_args *ctx, int protocol,
					 bool kprobe)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	long nr = (long)ctx->args[1];
	struct sock *sk;
	__u64 a[6];
	int fd;

	if (nr < 0)	/* KS_NR32_* of -1: no such call in this ABI */
		return 0;
	if (nr != KS_NR32_write && nr != KS_NR32_writev && nr != KS_NR32_pwritev &&
	    nr != KS_NR32_pwritev2 && nr != KS_NR32_sendmsg && nr != KS_NR32_sendto &&
	    nr != KS_NR32_send && nr != KS_NR32_sendmmsg && nr != KS_NR32_splice &&
	    nr != KS_NR32_sendfile && nr != KS_NR32_sendfile64 &&
	    nr != KS_NR32_io_uring_enter && nr != KS_NR32_socketcall)
		return 0;
	/* The kprobe variant refuses 32-bit splice, sendfile and
	 * io_uring_enter at their entry functions, which run after this: no
	 * kill before them. */
	if (kprobe && (nr == KS_NR32_splice || nr == KS_NR32_sendfile || nr == KS_NR32_sendfile64 ||
		       nr == KS_NR32_io_uring_enter))
		return 0;
	if (!ks_in_compat32())
		return 0;
	KS_SYS_ARGS32(regs, a);
	if (nr == KS_NR32_io_uring_enter)
		return nlw_tp_uring_enter((int)a[0], (__u32)a[1], (__u32)a[3], protocol, true);
	fd = (int)a[0];
	if (nr == KS_NR32_splice) {
		fd = (int)a[2];
	} else if (nr == KS_NR32_socketcall) {
		__u32 fd32;

		/* SYS_SEND, SYS_SENDTO, SYS_SENDMSG, SYS_SENDMMSG: the socket
		 * is the first of the 32-bit arguments at a[1]. */
		if (a[0] != 9 && a[0] != 11 && a[0] != 16 && a[0] != 20)
			return 0;
		if (bpf_probe_read_user(&fd32, sizeof(fd32), (const void *)(long)a[1]))
			return 0;	/* the call fails with EFAULT */
		fd = (int)fd32;
	}
	if (nr == KS_NR32_splice || nr == KS_NR32_sendfile || nr == KS_NR32_sendfile64)
		NLW_TP_PIPE_SEND(fd, nr != KS_NR32_splice);
	sk = nlw_fd_netlink_sock(fd);
	if (!sk || !nlw_guarded(sk, protocol))
		return 0;
	ks_kill("sys_enter_compat32", nr, fd, 0, NLW_UNPARSED);
	return 0;
}

/* The "lsm" and "fmod_ret" (security_netlink_send) variants of a netlink
 * shield for sockets of @protocol. */
#define NLW_LSM_PROGRAM(protocol)					\
KS_SECURITY_HOOK(netlink_send, netlink_send, struct sock *sk, struct sk_buff *skb) \
{									\
	return nlw_lsm_send(sk, skb, protocol, noloop);			\
}

/* Coverage of the trigger paths every netlink shield's test registers
 * (src/lib/shieldtest/nltrigger.h), for KSHIELD_META(prevents_<v>, ...) / detects_<v>.
 * lsm and fmod_ret judge the kernel copy in security_netlink_send(), which
 * every way in passes. tp kills the sender after its send completed: the
 * request is committed, and what stops the exploit is that its only holder
 * of the socket and namespace dies before the next step; a process that
 * shares the socket (clone-files: a sibling sends and is killed, the other
 * keeps the committed state) is only seen. io_uring sends are judged as
 * each request is submitted (nlw_tp_uring_req: SQPOLL rings and registered
 * files too; the tracepoint with the request exists on every kernel of the
 * matrix, 5.10 to 7.3) and at io_uring_enter (nlw_tp_uring_enter); 32-bit
 * compat sends pass none of the syscall tracepoints: tp kills their
 * senders from raw_tp/sys_enter (nlw_tp_compat), like native.
 * pre-existing (namespace entered, socket opened and set up before the
 * shield loaded, the trigger sent after) is judged at the send like native.
 * The compat paths are named by the 32-bit ABI of the object's arch. */
#if defined(__TARGET_ARCH_arm64)
#define NLW_PATHS_COMPAT "compat-arm,compat-arm-write"
#else
#define NLW_PATHS_COMPAT "compat-i386,compat-i386-write,compat-i386-socketcall"
#endif
#define NLW_PATHS_ALL	"native,sendto,write,writev,pwritev2,sendmmsg,splice,sendfile,io-uring,io-uring-sqpoll,io-uring-sqpoll-fixed,io-uring-writev-fixed,scm-rights,clone-files,clone-files-sqpoll,pre-existing," NLW_PATHS_COMPAT
#define NLW_PATHS_TP	"native,sendto,write,writev,pwritev2,sendmmsg,splice,sendfile,io-uring,io-uring-sqpoll,io-uring-sqpoll-fixed,io-uring-writev-fixed,scm-rights,pre-existing," NLW_PATHS_COMPAT
#define NLW_PATHS_TP_SEEN "clone-files,clone-files-sqpoll"

/* What the tp variant of a netlink shield does, for its variant_tp
 * metadata; @what: the shield's own words on what a kill leaves behind
 * and what it kills bluntly. */
#define NLW_VARIANT_TP(what)						\
	"syscall hooks (sendmsg, sendto, write, writev, pwritev2, sendmmsg, splice, sendfile, " \
	"io_uring_enter) run by the syscall dispatcher for calls on netlink sockets only: the " \
	"same parse of the sender's buffers, SIGKILL; the send itself still completes (" what "); " \
	"io_uring sends judged as each request is submitted (tp_btf io_uring_submit_req, " \
	"io_uring_submit_sqe on 6.1: SQPOLL rings and registered files included), and at " \
	"io_uring_enter from the ring (kernels without that tracepoint: SQPOLL unseen); 32-bit " \
	"sends (any send, write, splice, sendfile, socketcall or io_uring submission to a " \
	"guarded socket) killed unparsed"

/* Set @w's attribute path (nlw_on_msg): the attribute types from the
 * message's top level down, NLW_ANY for "any element of a list". */
#define NLW_PATH(w, ...) do {						\
	const __u16 __p[] = { __VA_ARGS__ };				\
									\
	_Static_assert(sizeof(__p) / sizeof(__p[0]) <= NLW_DEPTH, "path deeper than NLW_DEPTH"); \
	for (int __i = 0; __i < (int)(sizeof(__p) / sizeof(__p[0])); __i++) \
		(w)->path[__i] = __p[__i];				\
	(w)->plen = sizeof(__p) / sizeof(__p[0]);			\
} while (0)

/* io_uring sends judged as each request is submitted (SQPOLL rings and
 * registered files included), by the tp variant and behind the kprobe
 * variant's io_uring_enter refusal: the programs are named after the
 * variant (@v) that loads them. */
#define NLW_URING_SUBMIT_PROGRAMS(v, protocol)				\
SEC("tp_btf/io_uring_submit_req")					\
int BPF_PROG(v##__uring_submit__opt, struct io_kiocb *req)		\
{									\
	return nlw_tp_uring_req(req, protocol);				\
}									\
SEC("tp_btf/io_uring_submit_sqe")	/* its name before 6.3 */	\
int v##__uring_submit_sqe__opt(unsigned long long *ctx)			\
{									\
	return nlw_tp_uring_req(ks_uring_sqe_req(ctx), protocol);	\
}									\
/* kernels without BTF of their own: the raw tracepoints */		\
SEC("raw_tp/io_uring_submit_req")					\
int BPF_PROG(v##__uring_submit__opt__nobtf, struct io_kiocb *req)	\
{									\
	return nlw_tp_uring_req(req, protocol);				\
}									\
SEC("raw_tp/io_uring_submit_sqe")					\
int v##__uring_submit_sqe__opt__nobtf(unsigned long long *ctx)		\
{									\
	return nlw_tp_uring_req(ks_uring_sqe_req(ctx), protocol);	\
}

/* The "tp" variant: the syscalls that reach netlink_sendmsg(), each
 * walked by nlw_tp_send() for sockets of @protocol: sendmsg, sendto,
 * write, writev and pwritev2 (offset -1 is a plain writev, the only form a
 * socket accepts) with user buffers; sendmmsg, splice and sendfile into the
 * socket, unparsed (killed when guarded: nothing sends netlink requests that
 * way). Syscall hooks run by the dispatcher (bpf/sdk/syscalls.bpf.h), and
 * only for calls on a netlink socket (KS_SYSCALL_SOCK): a write() to a file
 * or a pipe costs these programs nothing. io_uring sends are judged at
 * io_uring_enter from the submission ring (nlw_tp_uring_enter), and as
 * each request is submitted (tp__uring_submit__opt on
 * tp_btf/io_uring_submit_req, tp__uring_submit_sqe__opt on its name before
 * 6.3; the loader loads the one this kernel has; their "__nobtf" copies
 * at the raw tracepoints where it has no BTF of its own): rings polled by their
 * own thread (SQPOLL) make no syscall, and only this one sees them. It runs
 * for io_uring submissions only, no other syscall pays for it. 32-bit
 * compat syscalls skip the syscall tracepoints: tp__send__compat32 (one
 * raw_tp/sys_enter program, loaded only where the kernel runs 32-bit
 * code) kills those senders unparsed. vmsplice and tee only fill pipes: the splice out of the pipe is
 * what is seen. */
#define NLW_TP_PROGRAMS(protocol)					\
KS_SYSCALL_ENTER(tp__sendmsg, sendmsg)					\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_MSG, args[1], 0, protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__sendto, sendto)					\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_BUF, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__write, write)					\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_BUF, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__writev, writev)					\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_IOV, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__sendmmsg, sendmmsg)				\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_MMSG, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__pwritev2, pwritev2)				\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_IOV, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__splice, splice)					\
{									\
	NLW_TP_PIPE_SEND((int)args[2], 0);				\
	return nlw_tp_send((int)args[2], NLW_SEND_PIPE, 0, 0, protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__sendfile, sendfile64)				\
{									\
	NLW_TP_PIPE_SEND((int)args[0], 1);				\
	return nlw_tp_send((int)args[0], NLW_SEND_PIPE, 0, 0, protocol, noloop); \
}									\
KS_SYSCALL_ENTER(tp__io_uring_enter, io_uring_enter)			\
{									\
	return nlw_tp_uring_enter((int)args[0], (__u32)args[1],	\
				  (__u32)args[3], protocol, noloop);	\
}									\
KS_SYSCALLS(tp__send__compat32, enter32, KS_NR32_write, KS_NR32_writev,	\
	    KS_NR32_pwritev, KS_NR32_pwritev2, KS_NR32_sendmsg, KS_NR32_sendto, \
	    KS_NR32_send, KS_NR32_sendmmsg, KS_NR32_splice, KS_NR32_sendfile, \
	    KS_NR32_sendfile64, KS_NR32_io_uring_enter, KS_NR32_socketcall) \
{									\
	return nlw_tp_compat(ctx, protocol, false);			\
}									\
KS_SYSCALL_SOCK(tp__sendmsg, 0, NLW_AF_NETLINK);			\
KS_SYSCALL_SOCK(tp__sendto, 0, NLW_AF_NETLINK);				\
KS_SYSCALL_SOCK(tp__write, 0, NLW_AF_NETLINK);				\
KS_SYSCALL_SOCK(tp__writev, 0, NLW_AF_NETLINK);				\
KS_SYSCALL_SOCK(tp__sendmmsg, 0, NLW_AF_NETLINK);			\
KS_SYSCALL_SOCK(tp__pwritev2, 0, NLW_AF_NETLINK);			\
KS_SYSCALL_SOCK(tp__splice, 2, NLW_TP_PIPE_FAMILIES);			\
KS_SYSCALL_SOCK(tp__sendfile, 0, NLW_TP_PIPE_FAMILIES);			\
NLW_URING_SUBMIT_PROGRAMS(tp, protocol)

/* The "kprobe" variant (bpf/sdk/override.bpf.h): the tp variant's parse
 * at the entry functions of sendmsg, sendto, sendmmsg, splice and
 * sendfile64, refusing with EPERM by bpf_override_return before the
 * request reaches netlink_sendmsg (no dispatcher filters these by family:
 * every such call on the machine runs a program, which leaves after one
 * descriptor lookup). The copying writes (write, writev, pwritev2) stay
 * with tp's programs run by the dispatcher, for calls on a netlink socket
 * only (KS_SYSCALL_SOCK), which kill: a kprobe at the entry of write()
 * would make every write on the machine pay for it, on top of the
 * dispatcher's one raw_tp/sys_enter program that tp programs share (its
 * look at the descriptor is all a write pays here). 32-bit splice and
 * sendfile (the 32-bit twins, NLW_KPROBE_PIPE_SEND's targets too) are
 * refused alike, unparsed. io_uring_enter (native and 32-bit) is refused
 * when its ring holds a send to a guarded socket (tp's scan of the SQEs):
 * nothing of that submission is issued. What passes no syscall entry of
 * its own stays with the tp programs, which kill: requests as they are
 * submitted (SQPOLL rings, an SQE rewritten after the entry's read) and
 * the other 32-bit sends (from raw_tp/sys_enter, unparsed, as tp). */
#define NLW_KPROBE_PROGRAMS(protocol)					\
KS_SYSCALL_KPROBE(kprobe__sendmsg, sendmsg)				\
{									\
	return nlw_kprobe_send((int)args[0], NLW_SEND_MSG, args[1], 0, protocol, ks_hook, noloop); \
}									\
KS_SYSCALL_KPROBE(kprobe__sendto, sendto)				\
{									\
	return nlw_kprobe_send((int)args[0], NLW_SEND_BUF, args[1], args[2], protocol, ks_hook, noloop); \
}									\
KS_SYSCALL_KPROBE(kprobe__sendmmsg, sendmmsg)				\
{									\
	return nlw_kprobe_send((int)args[0], NLW_SEND_MMSG, args[1], args[2], protocol, ks_hook, noloop); \
}									\
KS_SYSCALL_ENTER(kprobe__tp_write, write)				\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_BUF, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_ENTER(kprobe__tp_writev, writev)				\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_IOV, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_ENTER(kprobe__tp_pwritev2, pwritev2)			\
{									\
	return nlw_tp_send((int)args[0], NLW_SEND_IOV, args[1], args[2], protocol, noloop); \
}									\
KS_SYSCALL_SOCK(kprobe__tp_write, 0, NLW_AF_NETLINK);			\
KS_SYSCALL_SOCK(kprobe__tp_writev, 0, NLW_AF_NETLINK);			\
KS_SYSCALL_SOCK(kprobe__tp_pwritev2, 0, NLW_AF_NETLINK);		\
KS_SYSCALL_KPROBE(kprobe__splice, splice)				\
{									\
	int __r = NLW_KPROBE_PIPE_SEND((int)args[2], 0);		\
									\
	return __r ? __r : nlw_kprobe_send((int)args[2], NLW_SEND_PIPE, 0, 0, protocol, ks_hook, noloop); \
}									\
KS_SYSCALL_KPROBE(kprobe__sendfile, sendfile64)			\
{									\
	int __r = NLW_KPROBE_PIPE_SEND((int)args[0], 1);		\
									\
	return __r ? __r : nlw_kprobe_send((int)args[0], NLW_SEND_PIPE, 0, 0, protocol, ks_hook, noloop); \
}									\
KS_SYSCALL_KPROBE32(kprobe__splice, splice)				\
KS_SYSCALL_KPROBE32(kprobe__sendfile, sendfile64)			\
KS_COMPAT_SYSCALL_KPROBE32_AS(kprobe__sendfile32, kprobe__sendfile, sendfile) \
KS_SYSCALL_KPROBE(kprobe__io_uring_enter, io_uring_enter)		\
{									\
	int __hit = nlw_uring_enter_hit((int)args[0], (__u32)args[1],	\
					(__u32)args[3], protocol, noloop); \
									\
	return __hit < 0 ? 0 : ks_deny(0, __hit, 0, NLW_UNPARSED);	\
}									\
KS_SYSCALL_KPROBE32(kprobe__io_uring_enter, io_uring_enter)		\
KS_SYSCALLS(kprobe__send__compat32, enter32, KS_NR32_write, KS_NR32_writev, \
	    KS_NR32_pwritev, KS_NR32_pwritev2, KS_NR32_sendmsg, KS_NR32_sendto, \
	    KS_NR32_send, KS_NR32_sendmmsg, KS_NR32_socketcall)		\
{									\
	return nlw_tp_compat(ctx, protocol, true);			\
}									\
NLW_URING_SUBMIT_PROGRAMS(kprobe, protocol)

/* ---- event arguments (KSHIELD_ARGS, shield.bpf.h) ----
 * The walk's refusals carry the message type, the shield's own w->arg
 * and w->hit, and what the walk made of the request (NLW_HIT, or
 * NLW_UNPARSED: unread, cut or 32-bit, refused unseen). A shield names
 * its three words once:
 *	KS_NLW_ARGS("msg_type:enum:nft_types", "verdict:hex", "hit:bool");
 * and KS_NLW_KPROBE_ARGS(the same) when it has the kprobe variant. */
KSHIELD_VALS(nlw_results, "1=hit 2=unparsed");
KSHIELD_ARGS_FALLBACK("netlink_send", "msg_type:uint detail:hex hit:uint walk:enum:nlw_results");
KSHIELD_ARGS_FALLBACK("sys_enter_send", "msg_type:uint detail:hex hit:uint walk:enum:nlw_results");
KSHIELD_ARGS_FALLBACK("sys_enter_io_uring_enter", "- fd:fd - walk:enum:nlw_results");

#define KS_NLW_ARGS(type, detail, hit)						\
	KSHIELD_ARGS("netlink_send", type " " detail " " hit " walk:enum:nlw_results"); \
	KSHIELD_ARGS("sys_enter_send", type " " detail " " hit " walk:enum:nlw_results"); \
	KSHIELD_ARGS("sys_enter_io_uring_enter", "- fd:fd - walk:enum:nlw_results");	\
	KSHIELD_ARGS("io_uring_submit", "opcode:enum:iouring_ops fd:fd - walk:enum:nlw_results"); \
	KSHIELD_ARGS("sys_enter_compat32", "syscall:syscall32 fd:fd - walk:enum:nlw_results"); \
	KS_VALS_IOURING_OPS
/* The kprobe variant's refusals at the send syscalls' entry ("sys_<call>"). */
#define __KS_NLW_KPROBE_ARG(call, type, detail, hit)				\
	KSHIELD_ARGS("sys_" #call, type " " detail " " hit " walk:enum:nlw_results")
#define KS_NLW_KPROBE_ARGS(type, detail, hit)					\
	__KS_NLW_KPROBE_ARG(sendmsg, type, detail, hit);				\
	__KS_NLW_KPROBE_ARG(sendto, type, detail, hit);				\
	__KS_NLW_KPROBE_ARG(sendmmsg, type, detail, hit);				\
	__KS_NLW_KPROBE_ARG(splice, type, detail, hit);				\
	__KS_NLW_KPROBE_ARG(sendfile64, type, detail, hit);			\
	KSHIELD_ARGS("sys_io_uring_enter", "- fd:fd - walk:enum:nlw_results")

#endif /* KSHIELD_NLWALK_BPF_H */
