// SPDX-License-Identifier: MIT
/* shieldtest_effect.c - helpers for trigger cases that check the exploit's
 * effect (see shieldtest_effect.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/io_uring.h>
#include "shieldtest.h"
#include "shieldtest_effect.h"

int ks_fx_scratch(const void *data, size_t n, char *why, size_t len)
{
	char path[] = "/tmp/ks-effect-XXXXXX";
	int fd = mkstemp(path), ro;

	if (fd < 0) {
		snprintf(why, len, "mkstemp: %s", strerror(errno));
		return -errno;
	}
	if (write(fd, data, n) != (ssize_t)n) {
		snprintf(why, len, "write scratch file: %s", strerror(errno));
		unlink(path);
		close(fd);
		return -EIO;
	}
	/* The attacker's view: a descriptor that cannot write. */
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		snprintf(why, len, "reopen scratch file: %s", strerror(errno));
	unlink(path);
	close(fd);
	return ro < 0 ? -errno : ro;
}

int ks_fx_page_cache(int fd, const void *orig, size_t n, const char *what,
		     char *why, size_t len)
{
	unsigned char *now = malloc(n);
	const unsigned char *o = orig;
	size_t i;
	ssize_t got;

	if (!now)
		return -ENOMEM;
	got = pread(fd, now, n, 0);
	if (got != (ssize_t)n) {
		snprintf(why, len, "re-reading the scratch file: %s",
			 got < 0 ? strerror(errno) : "short read");
		free(now);
		return -EIO;
	}
	for (i = 0; i < n && now[i] == o[i]; i++)
		;
	if (i == n) {
		free(now);
		snprintf(why, len, "%s: the read-only scratch file's page cache is unchanged "
			 "(%zu bytes re-read)", what, n);
		return KS_CASE_NOEFFECT;
	}
	snprintf(why, len, "%s: the read-only scratch file's page cache changed at offset %zu:"
		 " %02x%02x%02x%02x -> %02x%02x%02x%02x", what, i,
		 o[i], i + 1 < n ? o[i + 1] : 0, i + 2 < n ? o[i + 2] : 0, i + 3 < n ? o[i + 3] : 0,
		 now[i], i + 1 < n ? now[i + 1] : 0, i + 2 < n ? now[i + 2] : 0,
		 i + 3 < n ? now[i + 3] : 0);
	free(now);
	return KS_CASE_EFFECT;
}

int ks_fx_page_cache_wait(int fd, const void *orig, size_t n, const char *what, int ms,
			  char *why, size_t len)
{
	int rc;

	for (;;) {
		rc = ks_fx_page_cache(fd, orig, n, what, why, len);
		if (rc != KS_CASE_NOEFFECT || ms <= 0)
			return rc;
		usleep(20000);
		ms -= 20;
	}
}

int ks_fx_step_failed(const char *step, char *why, size_t len)
{
	int err = errno ? errno : EIO;

	snprintf(why, len, "%s: %s", step, strerror(err));
	return err == EPERM ? -EACCES : -err;
}

int ks_fx_splice_send(int sock, const void *hdr, size_t hlen, int file, size_t n,
		      const char **step)
{
	struct iovec iov = { .iov_base = (void *)hdr, .iov_len = hlen };
	int p[2], err = 0;
	loff_t off = 0;
	ssize_t r;

	*step = "pipe";
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	*step = "vmsplice(header)";
	if ((r = vmsplice(p[1], &iov, 1, 0)) != (ssize_t)hlen)
		goto fail;
	*step = "splice(file -> pipe)";
	if ((r = splice(file, &off, p[1], NULL, n, 0)) != (ssize_t)n)
		goto fail;
	*step = "splice(pipe -> socket)";
	if ((r = splice(p[0], NULL, sock, NULL, hlen + n, 0)) != (ssize_t)(hlen + n))
		goto fail;
	goto out;
fail:
	err = r < 0 ? -errno : -EIO;	/* a short move: nothing to blame but the size */
out:
	close(p[0]);
	close(p[1]);
	errno = -err;
	return err;
}

int ks_fx_loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		err = -errno;
	else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			err = -errno;
	}
	close(fd);
	return err;
}

int ks_fx_af_alg_restricted(const char *type, const char *name, char *why, size_t len)
{
	FILE *f = fopen("/proc/sys/crypto/af_alg_restrict", "re");
	int level = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &level) != 1)
		level = 0;
	fclose(f);
	if (level > 0)
		snprintf(why, len, KS_CASE_NA "this kernel's AF_ALG allowlist refuses %s %s "
			 "(/proc/sys/crypto/af_alg_restrict=%d; 0 lifts it)", type, name, level);
	return level > 0 ? level : 0;
}

int ks_fx_uring_op(const struct io_uring_sqe *one, char *why, size_t len)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	void *sq = MAP_FAILED, *cq = MAP_FAILED, *sqes = MAP_FAILED;
	size_t sq_len, cq_len, sqes_len = sizeof(*sqe);
	unsigned *tail, *head, *array;
	int fd, rc;

	fd = syscall(SYS_io_uring_setup, 1, &p);
	if (fd < 0) {
		/* ENOSYS: not built; EPERM: kernel.io_uring_disabled. */
		snprintf(why, len, KS_CASE_NA "io_uring_setup: %s", strerror(errno));
		return KS_FX_NO_URING;
	}
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		snprintf(why, len, "io_uring mmap: %s", strerror(errno));
		rc = -errno;
		goto out;
	}
	sqe = sqes;
	*sqe = *one;
	array = (unsigned *)((char *)sq + p.sq_off.array);
	tail = (unsigned *)((char *)sq + p.sq_off.tail);
	array[*tail & *(unsigned *)((char *)sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		snprintf(why, len, "io_uring_enter: %s", strerror(errno));
		rc = -errno;
		goto out;
	}
	head = (unsigned *)((char *)cq + p.cq_off.head);
	if (__atomic_load_n(head, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n((unsigned *)((char *)cq + p.cq_off.tail), __ATOMIC_ACQUIRE)) {
		snprintf(why, len, "io_uring: no completion");
		rc = -EIO;
		goto out;
	}
	cqe = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes) +
	      (*head & *(unsigned *)((char *)cq + p.cq_off.ring_mask));
	rc = cqe->res;
out:
	if (sqes != MAP_FAILED)
		munmap(sqes, sqes_len);
	if (cq != MAP_FAILED)
		munmap(cq, cq_len);
	if (sq != MAP_FAILED)
		munmap(sq, sq_len);
	close(fd);
	return rc;
}

int ks_fx_uring_splice(int in, long long off_in, int out, unsigned n, char *why, size_t len)
{
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_SPLICE,
		.fd = out,
		.off = (uint64_t)-1,		/* no offset on the output side */
		.splice_fd_in = in,
		.splice_off_in = off_in < 0 ? (uint64_t)-1 : (uint64_t)off_in,
		.len = n,
	};
	int rc = ks_fx_uring_op(&sqe, why, len);

	if (rc == -EINVAL) {
		snprintf(why, len, KS_CASE_NA "io_uring has no IORING_OP_SPLICE here (EINVAL)");
		rc = KS_FX_NO_URING;
	}
	return rc;
}

int ks_fx_uring_socket(int domain, int type, int protocol, char *why, size_t len)
{
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_SOCKET,
		.fd = domain,
		.off = type,
		.len = protocol,
	};
	int rc = ks_fx_uring_op(&sqe, why, len);

	if (rc == -EINVAL) {
		snprintf(why, len, KS_CASE_NA "io_uring has no IORING_OP_SOCKET here (added in 5.19)");
		rc = KS_FX_NO_URING;
	}
	return rc;
}

int ks_fx_fd_from_helper(int (*make)(char *why, size_t len), char *why, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct { int err; char why[256]; } msg = { 0 };
	struct iovec iov = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int sv[2], fd = -1, status;
	ssize_t n;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		snprintf(why, len, "socketpair: %s", strerror(errno));
		return -errno;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		close(sv[0]);
		fd = make(msg.why, sizeof(msg.why));
		if (fd < 0) {
			msg.err = fd;
			m.msg_control = NULL;
			m.msg_controllen = 0;
		} else {
			c = CMSG_FIRSTHDR(&m);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		_exit(sendmsg(sv[1], &m, 0) < 0);
	}
	close(sv[1]);
	n = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
	close(sv[0]);
	if (waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		snprintf(why, len, "the helper process was killed (SIGKILL)");
		return KS_FX_HELPER_KILLED;
	}
	if (n <= 0) {
		snprintf(why, len, "no answer from the helper process");
		return -EIO;
	}
	if (msg.err < 0) {
		snprintf(why, len, "%s", msg.why);
		return msg.err;
	}
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
		snprintf(why, len, "the helper process passed no descriptor");
		return -EIO;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

struct clone_call {
	int (*fn)(void *arg);
	void *arg;
};

static int clone_entry(void *p)
{
	const struct clone_call *c = p;
	int rc = c->fn(c->arg);

	_exit(rc < 0 && rc > -256 ? -rc : rc ? 255 : 0);
}

int ks_fx_clone_files(int (*fn)(void *arg), void *arg)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct clone_call c = { .fn = fn, .arg = arg };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = clone(clone_entry, stack + sizeof(stack), CLONE_FILES | SIGCHLD, &c);
	if (pid < 0)
		return -errno;
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGKILL ? KS_FX_HELPER_KILLED : -EINTR;
	return -WEXITSTATUS(status);
}

int ks_fx_next_fd(void)
{
	int fd = dup(0);

	if (fd < 0)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd;
}
