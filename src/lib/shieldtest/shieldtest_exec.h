/* SPDX-License-Identifier: MIT */
/* shieldtest_exec.h - set-ID execs for the tests of shields of user-space
 * bugs that are refused at exec (cve-2021-4034 PwnKit, cve-2023-4911
 * Looney Tunables): a set-user-ID program made for the case, and one exec
 * of it by an unprivileged user, by each way the kernel offers.
 *
 * The program ("oracle") is a few instructions of this machine's own code
 * in a minimal static ELF written at run time (no libc, no loader, so
 * nothing of the host's glibc decides what it sees): it writes its
 * effective uid, argc and argv[0] pointer, as three u64, to fd 1 and
 * exits 0. Run by uid 65534 it shows that the exec was a real privilege
 * change (euid 0) and what argc the kernel gave it.
 */
#ifndef KSHIELD_SHIELDTEST_EXEC_H
#define KSHIELD_SHIELDTEST_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KS_EXEC_NOBODY	65534u

/* A private directory under /tmp (mode 0755: the unprivileged caller must
 * reach the program) holding one program. */
struct ks_setid_prog {
	char dir[64];
	char path[96];
};

/* Write the oracle at @p->path with @mode (04755, 02755, 0755), owned by
 * root. 0, or <0 with @why. */
int ks_setid_oracle(struct ks_setid_prog *p, unsigned mode, char *why, size_t len);
/* Give it file capabilities instead of set-ID bits: CAP_NET_RAW
 * permitted and effective (security.capability, revision 2), which makes
 * an exec by an unprivileged user a secure one. 0, or <0 with @why (n/a
 * where the filesystem under /tmp keeps no security xattrs). */
int ks_setid_filecap(struct ks_setid_prog *p, char *why, size_t len);
/* Copy @src there instead (a compat program), with @mode. */
int ks_setid_copy(struct ks_setid_prog *p, const char *src, unsigned mode, char *why, size_t len);
/* Remove the program and its directory. */
void ks_setid_remove(struct ks_setid_prog *p);

enum ks_exec_way {
	KS_EXEC_EXECVE,		/* execve(path, argv, envp) */
	KS_EXEC_EXECVEAT,	/* execveat(dirfd, name, argv, envp, 0) */
	KS_EXEC_FEXECVE,	/* execveat(fd, "", ..., AT_EMPTY_PATH) */
	KS_EXEC_SPAWN,		/* posix_spawn (vfork-like clone + execve) */
	KS_EXEC_THREAD,		/* execve from a second thread */
	KS_EXEC_COMPAT,		/* execve by a 32-bit process */
	KS_EXEC_COMPAT_EXECVEAT, /* execveat by a 32-bit process */
};

struct ks_exec_result {
	int exec_errno;		/* the exec failed with it (EPERM: refused) */
	bool killed;		/* the new image was SIGKILLed */
	int signal;		/* ... or died of this signal */
	int exit_code;		/* ... or exited with it */
	bool reported;		/* the oracle's record was read */
	uint64_t euid, argc, argv0;
};

/* The empty argv of an argc-0 exec: { NULL }; KS_EXEC_ARGV_NULL passes a
 * NULL argv pointer instead (the kernel takes both as argc 0). */
extern char *const ks_exec_argv_empty[];
#define KS_EXEC_ARGV_NULL	((char *const *)0)

/* In a child that dropped to uid and gid 65534, exec @p by @way with
 * @argv and @envp, its stdout read here; @r says what happened. 0, or <0
 * with @why when the case could not run (a compat way where no 32-bit
 * code runs: n/a). The 32-bit ways run the shared compat program
 * shields/common/compat/exec.c, copied beside @p. */
int ks_exec_setid(const struct ks_setid_prog *p, enum ks_exec_way way, char *const argv[],
		  char *const envp[], struct ks_exec_result *r, char *why, size_t len);

/* The case result of an exec that was meant to be refused: REFUSED when
 * it failed with EPERM or the image was SIGKILLed, else -1 (went
 * through: the caller decides), or an error for any other failure. */
int ks_exec_refused(const struct ks_exec_result *r, char *why, size_t len);

#endif
