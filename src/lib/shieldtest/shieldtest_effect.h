/* SPDX-License-Identifier: MIT */
/* shieldtest_effect.h - helpers for trigger cases that check the exploit's
 * effect, not only that the call went through: a scratch file
 * whose page cache the exploit's write primitive is aimed at, read back
 * and compared; one io_uring operation (a path that no syscall tracepoint
 * sees); a descriptor made by a helper process and passed over
 * SCM_RIGHTS.
 *
 * Nothing here touches a file outside the scratch file it made (unlinked
 * at once, so nothing is left behind even when a shield kills the case).
 */
#ifndef KSHIELD_SHIELDTEST_EFFECT_H
#define KSHIELD_SHIELDTEST_EFFECT_H

#include <stddef.h>

/* A read-only descriptor of a new scratch file holding @n bytes of @data
 * (made in /tmp, unlinked at once): what an attacker holds of a file he
 * may read but not write. The fd, or -errno with @why filled. */
int ks_fx_scratch(const void *data, size_t n, char *why, size_t len);

/* Read @fd back through the page cache and compare it with @orig:
 * KS_CASE_EFFECT (the first changed bytes go into @why), KS_CASE_NOEFFECT,
 * or -errno when it cannot be read. */
int ks_fx_page_cache(int fd, const void *orig, size_t n, const char *what,
		     char *why, size_t len);

/* Submit one operation on a fresh ring and wait for its completion: the
 * CQE's result (-EINVAL: this kernel lacks the operation), or
 * KS_FX_NO_URING when there is no io_uring (ENOSYS, io_uring_disabled) or
 * -errno of the ring itself, @why filled. */
struct io_uring_sqe;
int ks_fx_uring_op(const struct io_uring_sqe *sqe, char *why, size_t len);

/* One IORING_OP_SPLICE of @n bytes from @in (at offset @off_in, -1 for a
 * pipe) to @out on a fresh ring. The CQE's result (bytes or -errno), or
 * -errno of the ring setup with @why filled, KS_FX_NO_URING added when
 * the kernel has no io_uring (or no splice op). */
#define KS_FX_NO_URING (-100000)
int ks_fx_uring_splice(int in, long long off_in, int out, unsigned n, char *why, size_t len);
/* IORING_OP_SOCKET (5.19+): a socket made without the socket syscall. The
 * fd, -errno, or KS_FX_NO_URING (why filled). */
int ks_fx_uring_socket(int domain, int type, int protocol, char *why, size_t len);

/* Run @make in a forked helper process and receive the descriptor it
 * returns over SCM_RIGHTS. The fd; KS_FX_HELPER_KILLED when the helper
 * was killed by SIGKILL (a tracepoint shield); or the helper's own
 * negative return (-errno). @make's @why reaches @why. */
/* A step other than the guarded call failed (errno set): fill @why with
 * "@step: error" and return -errno, EPERM turned into -EACCES (a refusal
 * there is not the shield's, and must not count as one). */
int ks_fx_step_failed(const char *step, char *why, size_t len);

/* @hlen bytes of @hdr, then the first @n bytes of @file by reference (its
 * page-cache pages, not a copy), out as one write on the connected @sock:
 * vmsplice + splice into a pipe, splice out of it (the splice path of the
 * page-cache-write bugs). 0, or -errno (errno set too, for
 * ks_fx_step_failed) with *@step naming the call that failed. */
int ks_fx_splice_send(int sock, const void *hdr, size_t hlen, int file, size_t n,
		      const char **step);

/* Bring "lo" up in this network namespace (minimal guests and new network
 * namespaces start with it down). 0 or -errno. */
int ks_fx_loopback_up(void);

/* An AF_ALG bind of @type @name failed with ENOENT: was it this kernel's
 * AF_ALG allowlist (/proc/sys/crypto/af_alg_restrict, Linux 7.3+, default
 * 1: a short list of algorithms, never authenc/authencesn) rather than a
 * missing algorithm? Its level (1, 2) with @why set to a KS_CASE_NA reason
 * naming the sysctl, or 0 (no such sysctl, or 0: unrestricted). */
int ks_fx_af_alg_restricted(const char *type, const char *name, char *why, size_t len);

/* Wait up to @ms for ks_fx_page_cache() to see a change (the effect may
 * come from a softirq or a crypto worker after the call returned). */
int ks_fx_page_cache_wait(int fd, const void *orig, size_t n, const char *what, int ms,
			  char *why, size_t len);

#define KS_FX_HELPER_KILLED (-200000)
int ks_fx_fd_from_helper(int (*make)(char *why, size_t len), char *why, size_t len);

/* Run @fn(@arg) in a child that shares this process's descriptor table
 * (clone(CLONE_FILES)): what it opens stays open here even when a shield
 * kills it after its syscall completed. 0 or -errno as @fn returned
 * (@fn returns 0 or -errno), or KS_FX_HELPER_KILLED. */
int ks_fx_clone_files(int (*fn)(void *arg), void *arg);

/* The descriptor number the next open of this process gets (the lowest
 * free one): for finding what a killed ks_fx_clone_files child opened. */
int ks_fx_next_fd(void);

/* A kernel memory-safety report in the kernel log (shieldtest_kasan.c):
 * the effect of a use-after-free or out-of-bounds bug on a kernel built
 * with KASAN (the matrix's custom-vulnerable rows, issue 35), or the Oops
 * of one without it.
 *
 * ks_fx_kasan_mark() opens /dev/kmsg at its end: the mark, a descriptor
 * that ks_fx_kasan_since() reads the records written after it from (each
 * call goes on where the last stopped). Take it before the trigger and
 * before dropping privileges or entering a user namespace (opening
 * /dev/kmsg needs CAP_SYSLOG where kernel.dmesg_restrict is 1; reading an
 * open one does not). The descriptor (>= 0, close it when done) or -errno
 * with @why filled. */
int ks_fx_kasan_mark(char *why, size_t len);

/* Did a report appear since @mark? A report begins with "BUG: KASAN:",
 * "general protection fault", "BUG: unable to handle", "kernel BUG at",
 * "Oops:" or "UBSAN:"; it names @func when its first line or its call
 * trace has "@func+" in it (@func NULL: any report will do).
 * KS_CASE_EFFECT: a report naming @func (its first line in @why);
 * KS_CASE_NOEFFECT: none (@why empty), or only reports not naming @func
 * (@why says "a report not naming FUNC: ..."); -errno when /dev/kmsg
 * cannot be read. Records the kernel overwrote before they were read are
 * skipped (the log is a ring): a storm of messages can hide a report. */
int ks_fx_kasan_since(int mark, const char *func, char *why, size_t len);

/* ks_fx_kasan_since(), waiting up to @ms for a report naming @func (one
 * found in an RCU callback or a worker comes after the call returned). */
int ks_fx_kasan_wait(int mark, const char *func, int ms, char *why, size_t len);

#endif
