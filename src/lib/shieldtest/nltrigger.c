// SPDX-License-Identifier: MIT
/* nltrigger.c - netlink trigger paths for shield tests (see nltrigger.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "nltrigger.h"
#include "shieldtest_effect.h"
#include "shieldtest_memerr.h"

static const char *const names[NLT_PATH_MAX] = {
	[NLT_SENDMSG] = "sendmsg", [NLT_SENDTO] = "sendto", [NLT_WRITE] = "write",
	[NLT_WRITEV] = "writev", [NLT_PWRITEV2] = "pwritev2", [NLT_SENDMMSG] = "sendmmsg",
	[NLT_SPLICE] = "splice", [NLT_SENDFILE] = "sendfile", [NLT_IO_URING] = "io-uring",
	[NLT_IO_URING_SQPOLL] = "io-uring-sqpoll",
	[NLT_IO_URING_SQPOLL_FIXED] = "io-uring-sqpoll-fixed",
	[NLT_IO_URING_WRITEV_FIXED] = "io-uring-writev-fixed",
	[NLT_SCM_RIGHTS] = "scm-rights", [NLT_CLONE_FILES] = "clone-files",
	[NLT_CLONE_FILES_SQPOLL] = "clone-files-sqpoll",
	[NLT_COMPAT_SENDMSG] = "32-bit sendmsg", [NLT_COMPAT_WRITE] = "32-bit write",
	[NLT_COMPAT_SOCKETCALL] = "32-bit socketcall",
};

const char *ks_nlt_path_name(enum ks_nlt_path p)
{
	return p < NLT_PATH_MAX ? names[p] : "?";
}

/* One iovec per message, as libmnl batches are sent. */
static int split_iov(struct ks_nlbuild *b, struct iovec *iov, int max)
{
	size_t off = 0;
	int n = 0;

	while (off < b->len) {
		struct nlmsghdr *h = (struct nlmsghdr *)(b->buf + off);

		if (n == max)
			return -E2BIG;
		iov[n].iov_base = h;
		iov[n++].iov_len = NLMSG_ALIGN(h->nlmsg_len);
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	return n;
}

static int uring_send(int fd, struct msghdr *m, int sqpoll, int fixed, int op);

/* IORING_OP_SENDMSG of @m on @fd through a ring of its own, without
 * liburing: setup, map, one SQE, enter and wait, one CQE. With @sqpoll the
 * ring's kernel thread (an io thread of this process, 5.12+) submits the
 * SQE on its own: io_uring_enter only waits for the completion (to_submit
 * 0, waking the thread should it have gone idle), as an attacker who
 * avoids every submitting syscall would. SQPOLL needs CAP_SYS_ADMIN before
 * 5.11: -ENOSYS there, as for a kernel without io_uring. (The ring cannot
 * be made before entering the user namespace: unshare(CLONE_NEWUSER)
 * refuses a process whose SQPOLL thread runs, EINVAL, measured on 6.18.)
 * With @fixed the socket is registered with the ring first and the SQE
 * names it by index (IOSQE_FIXED_FILE). */
static int uring_sendmsg(int fd, struct msghdr *m, int sqpoll, int fixed)
{
	return uring_send(fd, m, sqpoll, fixed, 0);
}

/* IORING_OP_WRITEV_FIXED (6.15): the request's iovecs, written through a
 * buffer registered with the ring (IORING_REGISTER_BUFFERS) that holds
 * them all. A kernel without the opcode answers EINVAL: -ENOSYS (n/a). */
#define KS_IORING_OP_WRITEV_FIXED	61

static int uring_writev_fixed(int fd, struct msghdr *m)
{
	return uring_send(fd, m, 0, 0, KS_IORING_OP_WRITEV_FIXED);
}

static int uring_send(int fd, struct msghdr *m, int sqpoll, int fixed, int op)
{
	struct io_uring_params p = { 0 };
	size_t sq_sz, cq_sz;
	void *sq, *cq, *sqes_map;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned *tail, *array, *mask, *ctail, *chead;
	int ring, res;

	if (sqpoll) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 2000;	/* ms */
	}
	ring = syscall(__NR_io_uring_setup, 2, &p);
	if (ring < 0)
		return errno == EPERM || errno == ENOSYS ? -ENOSYS : -errno;
	sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if ((p.features & IORING_FEAT_SINGLE_MMAP) && cq_sz > sq_sz)
		sq_sz = cq_sz;
	sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		  IORING_OFF_SQ_RING);
	cq = (p.features & IORING_FEAT_SINGLE_MMAP) ? sq :
	     mmap(NULL, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		  IORING_OFF_CQ_RING);
	sqes_map = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes_map == MAP_FAILED) {
		res = -errno;
		close(ring);
		return res;
	}
	sqe = sqes_map;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op ? op : IORING_OP_SENDMSG;
	sqe->fd = fd;
	if (op == KS_IORING_OP_WRITEV_FIXED) {
		char *lo = m->msg_iov[0].iov_base, *hi = lo;
		struct iovec reg;

		for (size_t i = 0; i < m->msg_iovlen; i++) {
			char *b = m->msg_iov[i].iov_base, *e = b + m->msg_iov[i].iov_len;

			lo = b < lo ? b : lo;
			hi = e > hi ? e : hi;
		}
		reg.iov_base = lo;
		reg.iov_len = hi - lo;
		if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &reg, 1) < 0) {
			res = errno == EINVAL || errno == ENOSYS ? -ENOSYS : -errno;
			close(ring);
			return res;
		}
		sqe->addr = (unsigned long)m->msg_iov;
		sqe->len = m->msg_iovlen;
		sqe->buf_index = 0;
		sqe->off = -1;	/* the file position: a socket has none */
	}
	if (fixed) {
		if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0) {
			res = -errno;
			close(ring);
			return res;
		}
		sqe->fd = 0;
		sqe->flags = IOSQE_FIXED_FILE;
	}
	if (op != KS_IORING_OP_WRITEV_FIXED)
		sqe->addr = (unsigned long)m;
	tail = (unsigned *)((char *)sq + p.sq_off.tail);
	mask = (unsigned *)((char *)sq + p.sq_off.ring_mask);
	array = (unsigned *)((char *)sq + p.sq_off.array);
	array[*tail & *mask] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (sqpoll) {
		unsigned *sqflags = (unsigned *)((char *)sq + p.sq_off.flags);
		unsigned wake;

		/* The tail store must be visible before the flags load (as
		 * liburing's io_uring_smp_mb()): otherwise the SQ thread can go
		 * to sleep without seeing the entry while this load misses its
		 * NEED_WAKEUP, and the enter below waits forever. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		wake = __atomic_load_n(sqflags, __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP ?
				IORING_ENTER_SQ_WAKEUP : 0;

		res = syscall(__NR_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS | wake,
			      NULL, 0);
	} else {
		res = syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	}
	if (res < 0) {
		res = -errno;
	} else {
		chead = (unsigned *)((char *)cq + p.cq_off.head);
		ctail = (unsigned *)((char *)cq + p.cq_off.tail);
		if (__atomic_load_n(ctail, __ATOMIC_ACQUIRE) == *chead) {
			res = -EAGAIN;
		} else {
			cqe = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes) +
			      (*chead & *(unsigned *)((char *)cq + p.cq_off.ring_mask));
			res = cqe->res < 0 ? cqe->res : 0;
			if (op == KS_IORING_OP_WRITEV_FIXED && res == -EINVAL)
				res = -ENOSYS;	/* no such opcode here (before 6.15) */
		}
	}
	close(ring);	/* the mappings go with the process */
	return res;
}

int ks_nlt_send(int fd, struct ks_nlbuild *b, enum ks_nlt_path p)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct iovec iov[NLB_MAX_IOV];
	struct msghdr m = { .msg_iov = iov };
	int n, pfd[2], mfd, err = 0;
	ssize_t r;

	if (b->overflow)
		return -ENOBUFS;
	n = split_iov(b, iov, NLB_MAX_IOV);
	if (n < 0)
		return n;
	m.msg_iovlen = n;
	switch (p) {
	case NLT_SENDMSG:
		r = sendmsg(fd, &m, 0);
		break;
	case NLT_SENDTO:
		r = sendto(fd, b->buf, b->len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
		break;
	case NLT_WRITE:
		r = write(fd, b->buf, b->len);
		break;
	case NLT_WRITEV:
		r = writev(fd, iov, n);
		break;
	case NLT_PWRITEV2:
		r = pwritev2(fd, iov, n, -1, 0);
		break;
	case NLT_SENDMMSG: {
		struct mmsghdr mm = { .msg_hdr = m };

		r = syscall(SYS_sendmmsg, fd, &mm, 1, 0);
		break;
	}
	case NLT_SPLICE:
		if (pipe2(pfd, O_CLOEXEC))
			return -errno;
		r = write(pfd[1], b->buf, b->len);
		if (r == (ssize_t)b->len)
			r = splice(pfd[0], NULL, fd, NULL, b->len, 0);
		else if (r >= 0)
			errno = EIO, r = -1;
		err = errno;
		close(pfd[0]);
		close(pfd[1]);
		errno = err;
		break;
	case NLT_SENDFILE:
		mfd = memfd_create("kshield-nl", MFD_CLOEXEC);
		if (mfd < 0)
			return -errno;
		r = pwrite(mfd, b->buf, b->len, 0);
		if (r == (ssize_t)b->len)
			r = sendfile(fd, mfd, NULL, b->len);
		else if (r >= 0)
			errno = EIO, r = -1;
		err = errno;
		close(mfd);
		errno = err;
		break;
	case NLT_IO_URING:
	case NLT_IO_URING_SQPOLL:
	case NLT_IO_URING_SQPOLL_FIXED:
		return uring_sendmsg(fd, &m, p != NLT_IO_URING, p == NLT_IO_URING_SQPOLL_FIXED);
	case NLT_IO_URING_WRITEV_FIXED:
		return uring_writev_fixed(fd, &m);
	default:
		return -EINVAL;
	}
	return r < 0 ? -errno : 0;
}

static int make_proto;

static int make_socket(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, make_proto);

	return fd < 0 ? -errno : fd;
}

/* The socket of a path, in a new user+network namespace: made there, or
 * made there and passed out to this process (scm-rights). */
static int open_socket(const struct ks_nlt_trigger *t, enum ks_nlt_path p, char *why, size_t len)
{
	int fd, err;

	/* A trigger that observes its effect reads the kernel log from here:
	 * opened before the namespace (CAP_SYSLOG); without it the effect
	 * step says so. */
	if (t->effect)
		ks_memerr_begin(why, len);

	if (p == NLT_SCM_RIGHTS) {
		make_proto = t->protocol;
		fd = ks_test_fd_from_userns(1, make_socket);
		if (fd < 0)
			snprintf(why, len, "netlink socket from a user namespace over SCM_RIGHTS: %s",
				 strerror(-fd));
		return fd;
	}
	err = ks_test_enter_userns(1);
	if (err) {
		snprintf(why, len, "unshare(CLONE_NEWUSER|CLONE_NEWNET): %s", strerror(-err));
		return err;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, t->protocol);
	if (fd < 0) {
		snprintf(why, len, "socket(AF_NETLINK, %d): %s", t->protocol, strerror(errno));
		return -errno;
	}
	return fd;
}

/* clone-files: a process sharing this one's descriptor table sends the
 * request by way @way and ends (or is killed). Its exit status carries the
 * send's errno (0: sent). */
static int send_from_sibling(int fd, struct ks_nlbuild *b, enum ks_nlt_path way, int *killed)
{
	int status;
	pid_t pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(-ks_nlt_send(fd, b, way) & 0xff);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	*killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	return WIFEXITED(status) ? -WEXITSTATUS(status) : 0;
}

/* The 32-bit nlsend (shields/common/compat/nlsend.c) is run in this
 * process's namespaces; the descriptors reach it by exec (copies without
 * O_CLOEXEC), the request in a memfd. */
int ks_nlt_send_compat(int fd, struct ks_nlbuild *b, enum ks_nlt_path p, char *why, size_t len)
{
	static const char *const way[NLT_PATH_MAX] = {
		[NLT_COMPAT_SENDMSG] = "sendmsg", [NLT_COMPAT_WRITE] = "write",
		[NLT_COMPAT_SOCKETCALL] = "socketcall",
	};
	char sfd[16], rfd[16];
	char *argv[] = { (char *)way[p], sfd, rfd, NULL };
	int mfd, dfd, rc;

	if (b->overflow)
		return ks_case_from(-1, ENOBUFS, ks_nlt_path_name(p), why, len);
	mfd = memfd_create("kshield-nl32", 0);
	if (mfd < 0)
		return ks_case_from(-1, errno, "memfd_create", why, len);
	if (pwrite(mfd, b->buf, b->len, 0) != (ssize_t)b->len) {
		close(mfd);
		return ks_case_from(-1, EIO, "pwrite(memfd)", why, len);
	}
	dfd = fcntl(fd, F_DUPFD, 3);
	if (dfd < 0) {
		rc = ks_case_from(-1, errno, "fcntl(F_DUPFD)", why, len);
		close(mfd);
		return rc;
	}
	snprintf(sfd, sizeof(sfd), "%d", dfd);
	snprintf(rfd, sizeof(rfd), "%d", mfd);
	rc = ks_test_run_compat("common", "nlsend", argv, why, len);
	close(dfd);
	close(mfd);
	return rc;
}

/* The socket of @t for way @p, in the attacker's position, set up. */
static int prepare(const struct ks_nlt_trigger *t, enum ks_nlt_path p, char *why, size_t len)
{
	int fd, err;

	fd = open_socket(t, p, why, len);
	if (fd < 0)
		return fd;
	err = t->setup(fd, why, len);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Send the trigger on the prepared @fd by way of @p, judge the replies,
 * observe the effect; consumes @fd. */
static int finish(const struct ks_nlt_trigger *t, enum ks_nlt_path p, int fd, char *why, size_t len)
{
	char buf[4096];
	struct ks_nlbuild b;
	int err, ack, n, killed = 0;

	ks_nlb_init(&b, buf, sizeof(buf));
	t->build(&b);
	if (p >= NLT_COMPAT_SENDMSG) {
		/* The 32-bit sender refused or killed is the attacker stopped,
		 * as for the native ways (this process only holds the socket
		 * to read what went through). */
		err = ks_nlt_send_compat(fd, &b, p, why, len);
		if (err != KS_CASE_PASSED) {
			close(fd);
			return err;
		}
	} else if (p == NLT_CLONE_FILES)
		err = send_from_sibling(fd, &b, NLT_SENDMSG, &killed);
	else if (p == NLT_CLONE_FILES_SQPOLL)
		err = send_from_sibling(fd, &b, NLT_IO_URING_SQPOLL, &killed);
	else	/* scm-rights: the exploit's own sendmsg on the passed socket */
		err = ks_nlt_send(fd, &b, p == NLT_SCM_RIGHTS ? NLT_SENDMSG : p);
	n = ks_nlb_replies(fd, &ack);
	if (err || n == 0 || !t->effect)
		close(fd);
	if (err == -ENOSYS && p == NLT_IO_URING) {
		snprintf(why, len, KS_CASE_NA "io_uring is not available here");
		return -ENOSYS;
	}
	if (err == -ENOSYS && p == NLT_IO_URING_WRITEV_FIXED) {
		snprintf(why, len, KS_CASE_NA "no IORING_OP_WRITEV_FIXED here (6.15+), or no io_uring");
		return -ENOSYS;
	}
	if (err == -ENOSYS && (p == NLT_IO_URING_SQPOLL || p == NLT_IO_URING_SQPOLL_FIXED ||
			       p == NLT_CLONE_FILES_SQPOLL)) {
		snprintf(why, len, KS_CASE_NA "no SQPOLL ring for a user-namespace root here "
			 "(IORING_SETUP_SQPOLL needs CAP_SYS_ADMIN before 5.11, or no io_uring)");
		return -ENOSYS;
	}
	if (err)
		return ks_case_from(-1, -err, ks_nlt_path_name(p), why, len);
	/* No reply: the request never reached its handler (the sibling of
	 * clone-files was killed before it sent, or the send was refused). */
	if (n == 0) {
		if (killed)
			return KS_CASE_REFUSED;
		snprintf(why, len, "%s: sent, but the kernel answered nothing", ks_nlt_path_name(p));
		return -EPROTO;
	}
	if (!t->effect)
		return t->judge(ack, why, len);
	err = t->judge(ack, why, len);
	if (err == KS_CASE_PASSED)
		err = t->effect(fd, why, len);
	close(fd);
	return err;
}

int ks_nlt_run(const struct ks_nlt_trigger *t, enum ks_nlt_path p, char *why, size_t len)
{
	int fd = prepare(t, p, why, len);

	return fd < 0 ? fd : finish(t, p, fd, why, len);
}

int ks_nlt_case(const struct ks_path *path, char *why, size_t len)
{
	return ks_nlt_run(path->arg, path->way, why, len);
}

/* pre-existing: the socket of the case's child, made before the load. */
static int pre_fd = -1;

int ks_nlt_before(const struct ks_path *path, char *why, size_t len)
{
	pre_fd = prepare(path->arg, NLT_SENDMSG, why, len);
	return pre_fd < 0 ? pre_fd : 0;
}

int ks_nlt_after(const struct ks_path *path, char *why, size_t len)
{
	if (pre_fd < 0) {
		snprintf(why, len, "pre-existing: no socket from before the load");
		return -EBADF;
	}
	return finish(path->arg, NLT_SENDMSG, pre_fd, why, len);
}

int ks_nlt_packet(int fd, char *why, size_t len)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int ns = ioctl(fd, SIOCGSKNS), s, err;

	/* scm-rights: this process is outside the socket's namespace, whose
	 * owner it is: it may enter it. */
	if (ns < 0 || setns(ns, CLONE_NEWNET)) {
		err = -errno;
		snprintf(why, len, "entering the netlink socket's network namespace: %s",
			 strerror(errno));
		if (ns >= 0)
			close(ns);
		return err;
	}
	close(ns);
	err = ks_fx_loopback_up();
	if (err) {
		snprintf(why, len, "bringing lo up: %s", strerror(-err));
		return err;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		snprintf(why, len, "socket(AF_INET, SOCK_DGRAM): %s", strerror(errno));
		return -errno;
	}
	/* Its fate (sent, dropped, an error) is the rule's business. */
	(void)!sendto(s, "kshield", 7, 0, (struct sockaddr *)&to, sizeof(to));
	close(s);
	return 0;
}
