/* SPDX-License-Identifier: MIT */
/* nltrigger.h - the known ways of getting one netlink request to the
 * kernel, as trigger paths for the netlink shields' tests (cve-2022-2588,
 * cve-2023-32233, cve-2024-1086, ...). A shield test describes its trigger
 * once (struct ks_nlt_trigger) and registers one path per way in, as rows
 * of its table:
 *
 *	static const struct ks_nlt_trigger trig = { NETLINK_ROUTE, setup, build, judge };
 *	KSHIELD_TEST_PATHS("cve-x", benign, NLT_PATHS(trig, sendmsg, sendto),
 *		NLT_PATH("no-kind", trig_no_kind, NLT_SENDMSG));
 *
 * Every path opens the socket in a new user+network namespace (the
 * attacker's position), prepares it with @setup, sends what @build writes,
 * and reads the replies: the kernel queues one for each message it
 * processed (every message asks for an ack), which is how a path that
 * outlives a SIGKILL shows that its request still went through. The
 * compat ways hand the built request to a 32-bit sender (ks_nlt_send_compat)
 * and read the replies here, so each message is written once.
 */
#ifndef KSHIELD_NLTRIGGER_H
#define KSHIELD_NLTRIGGER_H

#include <stddef.h>
#include "nlbuild.h"
#include "shieldtest.h"

/* Ways in. */
enum ks_nlt_path {
	NLT_SENDMSG,		/* sendmsg, one iovec per message (nft, libmnl) */
	NLT_SENDTO,		/* sendto of the whole request (tc, iproute2) */
	NLT_WRITE,
	NLT_WRITEV,
	NLT_PWRITEV2,		/* offset -1: a writev that sockets accept */
	NLT_SENDMMSG,
	NLT_SPLICE,		/* write into a pipe, splice the pipe into the socket */
	NLT_SENDFILE,		/* from a memfd */
	NLT_IO_URING,		/* IORING_OP_SENDMSG */
	NLT_IO_URING_SQPOLL,	/* the same on an SQPOLL ring: its kernel thread
				 * submits, no io_uring_enter submits anything */
	NLT_IO_URING_SQPOLL_FIXED, /* ... the socket a registered file
				 * (IOSQE_FIXED_FILE): no descriptor in the SQE */
	NLT_IO_URING_WRITEV_FIXED, /* IORING_OP_WRITEV_FIXED (6.15): a writev through a
				 * registered buffer, an opcode that came after the
				 * tp variant's list of sends was first written */
	NLT_SCM_RIGHTS,		/* socket made in the namespace, sent out to its owner */
	NLT_CLONE_FILES,	/* sent by a process sharing the descriptor table,
				 * the replies read by the one that stays */
	NLT_CLONE_FILES_SQPOLL,	/* ... by that process's SQPOLL ring: shows
				 * whether a request killed at submission still
				 * goes through */
	NLT_COMPAT_SENDMSG,	/* a 32-bit process (i386, AArch32) in the same
				 * namespaces sends it: sendmsg ... */
	NLT_COMPAT_WRITE,	/* ... write ... */
	NLT_COMPAT_SOCKETCALL,	/* ... socketcall(SYS_SENDMSG) (i386 only) */
	NLT_PATH_MAX,
};

struct ks_nlt_trigger {
	int protocol;	/* NETLINK_* */
	/* Prepare the fresh socket (table and chain, a qdisc). 0 or <0 with
	 * @why filled. */
	int (*setup)(int fd, char *why, size_t len);
	/* The trigger request. */
	void (*build)(struct ks_nlbuild *b);
	/* Case result of the first error the kernel answered (0: none),
	 * once the request was processed: KS_CASE_PASSED or <0. */
	int (*judge)(int ack, char *why, size_t len);
	/* Optional: once @judge said KS_CASE_PASSED, observe the bug on the
	 * same socket (the objects the trigger made are still there):
	 * KS_CASE_EFFECT, KS_CASE_NOEFFECT or <0 with @why filled. */
	int (*effect)(int fd, char *why, size_t len);
};

const char *ks_nlt_path_name(enum ks_nlt_path p);
/* Send everything built in @b on @fd by way of @p (socket ways only: not
 * NLT_SCM_RIGHTS / NLT_CLONE_FILES* / NLT_COMPAT_*). 0 or -errno; -ENOSYS when this
 * kernel lacks the way (io_uring; an SQPOLL ring for this user). */
int ks_nlt_send(int fd, struct ks_nlbuild *b, enum ks_nlt_path p);
/* Send @b on @fd by a 32-bit process (NLT_COMPAT_*: the shared
 * shields/common/compat/nlsend, in this process's namespaces); the replies
 * stay queued on @fd for this process. A case result: PASSED (sent),
 * REFUSED (EPERM, or the sender killed), <0 with @why (n/a where no 32-bit
 * code runs). */
int ks_nlt_send_compat(int fd, struct ks_nlbuild *b, enum ks_nlt_path p, char *why, size_t len);
/* One UDP datagram to 127.0.0.1 in the network namespace of the netlink
 * socket @fd (entered first: the scm-rights path's process is outside
 * it; lo brought up): what makes the rules of an effect step run. 0, or
 * -errno with @why filled. */
int ks_nlt_packet(int fd, char *why, size_t len);
/* Run @t by way of @p: a case result. */
int ks_nlt_run(const struct ks_nlt_trigger *t, enum ks_nlt_path p, char *why, size_t len);
/* The same as a path's case (struct ks_path's @call): the trigger is the
 * path's @arg, the way its @way. */
int ks_nlt_case(const struct ks_path *path, char *why, size_t len);
/* The "pre-existing" path: ks_nlt_before() enters the namespace, opens the
 * socket and sets it up (a path's @call_before, run before the shield
 * loads); ks_nlt_after() sends the trigger on it (sendmsg) afterwards. The
 * trigger is the path's @arg. */
int ks_nlt_before(const struct ks_path *path, char *why, size_t len);
int ks_nlt_after(const struct ks_path *path, char *why, size_t len);

/* A table row: trigger @t (a struct ks_nlt_trigger) sent by way @way. */
#define NLT_PATH(name, t, way_)							{ name, .call = ks_nlt_case, .arg = &(t), .way = (way_) }

/* The compat paths: the request sent by a 32-bit program (the shared
 * shields/common/compat/nlsend.c), named by the 32-bit ABI of this
 * build's architecture (the BPF side's NLW_PATHS_COMPAT); n/a where the
 * kernel runs no 32-bit code. socketcall only where the ABI has it. */
#define NLT_COMPAT_PATHS(t)						\
	NLT_PATH("compat-" KS_ABI32_NAME, t, NLT_COMPAT_SENDMSG),	\
	NLT_PATH("compat-" KS_ABI32_NAME "-write", t, NLT_COMPAT_WRITE)	\
	KS_IF_SOCKETCALL32(,						\
	NLT_PATH("compat-" KS_ABI32_NAME "-socketcall", t, NLT_COMPAT_SOCKETCALL))

#define __NLT_WAY_sendmsg	NLT_SENDMSG
#define __NLT_WAY_sendto	NLT_SENDTO

/* The path rows of trigger @t by every way in, "native" being @native's
 * way (sendmsg or sendto, as the public exploit sends); the other of the
 * two is the row named after it. */
#define NLT_PATHS(t, native, other)					\
	NLT_PATH("native", t, __NLT_WAY_##native),			\
	NLT_PATH("write", t, NLT_WRITE),				\
	NLT_PATH("writev", t, NLT_WRITEV),				\
	NLT_PATH("pwritev2", t, NLT_PWRITEV2),				\
	NLT_PATH("sendmmsg", t, NLT_SENDMMSG),				\
	NLT_PATH("splice", t, NLT_SPLICE),				\
	NLT_PATH("sendfile", t, NLT_SENDFILE),				\
	NLT_PATH("io-uring", t, NLT_IO_URING),				\
	NLT_PATH("io-uring-sqpoll", t, NLT_IO_URING_SQPOLL),		\
	NLT_PATH("io-uring-sqpoll-fixed", t, NLT_IO_URING_SQPOLL_FIXED), \
	NLT_PATH("io-uring-writev-fixed", t, NLT_IO_URING_WRITEV_FIXED), \
	NLT_PATH("scm-rights", t, NLT_SCM_RIGHTS),			\
	NLT_PATH("clone-files", t, NLT_CLONE_FILES),			\
	NLT_PATH("clone-files-sqpoll", t, NLT_CLONE_FILES_SQPOLL),	\
	{ "pre-existing", .call = ks_nlt_after, .call_before = ks_nlt_before, .arg = &(t) }, \
	NLT_PATH(#other, t, __NLT_WAY_##other),				\
	NLT_COMPAT_PATHS(t)

#endif
