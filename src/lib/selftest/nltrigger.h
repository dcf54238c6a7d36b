/* nltrigger.h - the known ways of getting one netlink request to the
 * kernel, as trigger paths for the netlink shields' tests (cve-2022-2588,
 * cve-2023-32233, cve-2024-1086, ...). A shield test describes its trigger
 * once (struct nlt_trigger) and registers one path per way in:
 *
 *	static const struct nlt_trigger trig = { NETLINK_ROUTE, setup, build, judge };
 *	NLT_PATH_FNS(trig)
 *	KSHIELD_TEST_PATHS("cve-x", benign, NLT_PATHS(trig), { "no-kind", no_kind });
 *
 * Every path opens the socket in a new user+network namespace (the
 * attacker's position), prepares it with @setup, sends what @build writes,
 * and reads the replies: the kernel queues one for each message it
 * processed (every message asks for an ack), which is how a path that
 * outlives a SIGKILL shows that its request still went through. The
 * compat ways hand the built request to a 32-bit sender (nlt_send_compat)
 * and read the replies here, so each message is written once.
 */
#ifndef KSHIELD_NLTRIGGER_H
#define KSHIELD_NLTRIGGER_H

#include <stddef.h>
#include "nlbuild.h"
#include "selftest.h"

/* Ways in. */
enum nlt_path {
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

struct nlt_trigger {
	int protocol;	/* NETLINK_* */
	/* Prepare the fresh socket (table and chain, a qdisc). 0 or <0 with
	 * @why filled. */
	int (*setup)(int fd, char *why, size_t len);
	/* The trigger request. */
	void (*build)(struct nlbuild *b);
	/* Case result of the first error the kernel answered (0: none),
	 * once the request was processed: KS_CASE_PASSED or <0. */
	int (*judge)(int ack, char *why, size_t len);
	/* Optional: once @judge said KS_CASE_PASSED, observe the bug on the
	 * same socket (the objects the trigger made are still there):
	 * KS_CASE_EFFECT, KS_CASE_NOEFFECT or <0 with @why filled. */
	int (*effect)(int fd, char *why, size_t len);
};

const char *nlt_path_name(enum nlt_path p);
/* Send everything built in @b on @fd by way of @p (socket ways only: not
 * NLT_SCM_RIGHTS / NLT_CLONE_FILES* / NLT_COMPAT_*). 0 or -errno; -ENOSYS when this
 * kernel lacks the way (io_uring; an SQPOLL ring for this user). */
int nlt_send(int fd, struct nlbuild *b, enum nlt_path p);
/* Send @b on @fd by a 32-bit process (NLT_COMPAT_*: the shared
 * shields/common/compat/nlsend, in this process's namespaces); the replies
 * stay queued on @fd for this process. A case result: PASSED (sent),
 * REFUSED (EPERM, or the sender killed), <0 with @why (n/a where no 32-bit
 * code runs). */
int nlt_send_compat(int fd, struct nlbuild *b, enum nlt_path p, char *why, size_t len);
/* Run @t by way of @p: a case result. */
int nlt_run(const struct nlt_trigger *t, enum nlt_path p, char *why, size_t len);
/* The "pre-existing" path: nlt_before() enters the namespace, opens the
 * socket and sets it up (a ks_path's @before, run before the shield
 * loads); nlt_after() sends the trigger on it (sendmsg) afterwards. */
int nlt_before(const struct nlt_trigger *t, char *why, size_t len);
int nlt_after(const struct nlt_trigger *t, char *why, size_t len);

#define __NLT_FN(t, name, p)						\
	static int t##__##name(char *why, size_t len)			\
	{ return nlt_run(&t, p, why, len); }

#if defined(__aarch64__)
#define __NLT_COMPAT_SOCKETCALL_FN(t)	/* AArch32 (EABI) has no socketcall */
#else
#define __NLT_COMPAT_SOCKETCALL_FN(t)	__NLT_FN(t, compat_socketcall, NLT_COMPAT_SOCKETCALL)
#endif

/* One case function per way in, for the trigger @t. */
#define NLT_PATH_FNS(t)							\
	__NLT_FN(t, sendmsg, NLT_SENDMSG)				\
	__NLT_FN(t, sendto, NLT_SENDTO)					\
	__NLT_FN(t, write, NLT_WRITE)					\
	__NLT_FN(t, writev, NLT_WRITEV)					\
	__NLT_FN(t, pwritev2, NLT_PWRITEV2)				\
	__NLT_FN(t, sendmmsg, NLT_SENDMMSG)				\
	__NLT_FN(t, splice, NLT_SPLICE)					\
	__NLT_FN(t, sendfile, NLT_SENDFILE)				\
	__NLT_FN(t, io_uring, NLT_IO_URING)				\
	__NLT_FN(t, io_uring_sqpoll, NLT_IO_URING_SQPOLL)		\
	__NLT_FN(t, io_uring_sqpoll_fixed, NLT_IO_URING_SQPOLL_FIXED)	\
	__NLT_FN(t, scm_rights, NLT_SCM_RIGHTS)				\
	__NLT_FN(t, clone_files, NLT_CLONE_FILES)			\
	__NLT_FN(t, clone_files_sqpoll, NLT_CLONE_FILES_SQPOLL)		\
	__NLT_FN(t, compat_sendmsg, NLT_COMPAT_SENDMSG)			\
	__NLT_FN(t, compat_write, NLT_COMPAT_WRITE)			\
	__NLT_COMPAT_SOCKETCALL_FN(t)					\
	static int t##__pre_before(char *why, size_t len)		\
	{ return nlt_before(&t, why, len); }				\
	static int t##__pre_after(char *why, size_t len)		\
	{ return nlt_after(&t, why, len); }

/* The compat paths: the request sent by a 32-bit program (the shared
 * shields/common/compat/nlsend.c), named by the 32-bit ABI of this
 * build's architecture (the BPF side's NLW_PATHS_COMPAT); n/a where the
 * kernel runs no 32-bit code. */
#if defined(__aarch64__)
#define NLT_COMPAT_PATHS(t)						\
	{ "compat-arm", t##__compat_sendmsg },				\
	{ "compat-arm-write", t##__compat_write }
#else
#define NLT_COMPAT_PATHS(t)						\
	{ "compat-i386", t##__compat_sendmsg },				\
	{ "compat-i386-write", t##__compat_write },			\
	{ "compat-i386-socketcall", t##__compat_socketcall }
#endif

/* The path entries, "native" being @native's way (sendmsg or sendto, as
 * the public exploit sends); the other of the two is left out. */
#define NLT_PATHS(t, native, other)					\
	{ "native", t##__##native },					\
	{ "write", t##__write },					\
	{ "writev", t##__writev },					\
	{ "pwritev2", t##__pwritev2 },					\
	{ "sendmmsg", t##__sendmmsg },					\
	{ "splice", t##__splice },					\
	{ "sendfile", t##__sendfile },					\
	{ "io-uring", t##__io_uring },					\
	{ "io-uring-sqpoll", t##__io_uring_sqpoll },			\
	{ "io-uring-sqpoll-fixed", t##__io_uring_sqpoll_fixed },	\
	{ "scm-rights", t##__scm_rights },				\
	{ "clone-files", t##__clone_files },				\
	{ "clone-files-sqpoll", t##__clone_files_sqpoll },		\
	{ "pre-existing", t##__pre_after, t##__pre_before },		\
	{ #other, t##__##other },					\
	NLT_COMPAT_PATHS(t)

#endif
