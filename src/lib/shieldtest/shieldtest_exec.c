// SPDX-License-Identifier: MIT
/* shieldtest_exec.c - set-ID execs for shield tests (shieldtest_exec.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <linux/capability.h>
#include <sys/wait.h>
#include <unistd.h>
#include "shieldtest.h"
#include "shieldtest_exec.h"

char *const ks_exec_argv_empty[] = { NULL };

/* The oracle's code: geteuid(); push it under argc and argv[0]; write the
 * 24 bytes at the stack pointer to fd 1; exit(0). */
#if defined(__x86_64__)
#define ORACLE_MACHINE	EM_X86_64
static const unsigned char oracle_code[] = {
	0xb8, 0x6b, 0x00, 0x00, 0x00,	/* mov $107, %eax (geteuid) */
	0x0f, 0x05,			/* syscall */
	0x50,				/* push %rax: euid, argc, argv[0] */
	0xb8, 0x01, 0x00, 0x00, 0x00,	/* mov $1, %eax (write) */
	0x89, 0xc7,			/* mov %eax, %edi (fd 1) */
	0x48, 0x89, 0xe6,		/* mov %rsp, %rsi */
	0xba, 0x18, 0x00, 0x00, 0x00,	/* mov $24, %edx */
	0x0f, 0x05,			/* syscall */
	0xb8, 0x3c, 0x00, 0x00, 0x00,	/* mov $60, %eax (exit) */
	0x31, 0xff,			/* xor %edi, %edi */
	0x0f, 0x05,			/* syscall */
};
#elif defined(__aarch64__)
#define ORACLE_MACHINE	EM_AARCH64
static const uint32_t oracle_insns[] = {
	0xd28015e8,	/* mov x8, #175 (geteuid) */
	0xd4000001,	/* svc #0 */
	0xa9400be1,	/* ldp x1, x2, [sp]: argc, argv[0] */
	0xd10083ff,	/* sub sp, sp, #32 */
	0xa90007e0,	/* stp x0, x1, [sp] */
	0xf9000be2,	/* str x2, [sp, #16] */
	0xd2800020,	/* mov x0, #1 */
	0x910003e1,	/* mov x1, sp */
	0xd2800302,	/* mov x2, #24 */
	0xd2800808,	/* mov x8, #64 (write) */
	0xd4000001,	/* svc #0 */
	0xd2800000,	/* mov x0, #0 */
	0xd2800ba8,	/* mov x8, #93 (exit) */
	0xd4000001,	/* svc #0 */
};
#define oracle_code ((const unsigned char *)oracle_insns)
#endif

#define ORACLE_BASE	0x400000ul

static int prog_dir(struct ks_setid_prog *p, const char *name, char *why, size_t len)
{
	snprintf(p->dir, sizeof(p->dir), "/tmp/kshield-setid-XXXXXX");
	if (!mkdtemp(p->dir))
		return ks_case_fail("mkdtemp under /tmp", -errno, why, len);
	if (chmod(p->dir, 0755)) {
		int e = -errno;

		rmdir(p->dir);
		return ks_case_fail("chmod of the program's directory", e, why, len);
	}
	snprintf(p->path, sizeof(p->path), "%s/%s", p->dir, name);
	return 0;
}

/* Owner root (the test runs as root), then the mode: chmod after chown,
 * which clears set-ID bits. */
static int finish(struct ks_setid_prog *p, int fd, unsigned mode, char *why, size_t len)
{
	int err = 0;

	if (fchown(fd, 0, 0) || fchmod(fd, mode))
		err = ks_case_fail("chown/chmod of the set-ID program", -errno, why, len);
	if (close(fd) && !err)
		err = ks_case_fail("close of the set-ID program", -errno, why, len);
	if (err)
		ks_setid_remove(p);
	return err;
}

int ks_setid_oracle(struct ks_setid_prog *p, unsigned mode, char *why, size_t len)
{
#ifdef ORACLE_MACHINE
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		unsigned char code[sizeof(
#if defined(__aarch64__)
			oracle_insns
#else
			oracle_code
#endif
		)];
	} __attribute__((packed)) img = {
		.eh = {
			.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				     EV_CURRENT, ELFOSABI_SYSV },
			.e_type = ET_EXEC, .e_machine = ORACLE_MACHINE, .e_version = EV_CURRENT,
			.e_entry = ORACLE_BASE + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr),
			.e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
			.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1,
		},
		.ph = {
			.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
			.p_vaddr = ORACLE_BASE, .p_paddr = ORACLE_BASE,
			.p_filesz = sizeof(img), .p_memsz = sizeof(img), .p_align = 0x1000,
		},
	};
	int fd, err;

	memcpy(img.code, oracle_code, sizeof(img.code));
	err = prog_dir(p, "oracle", why, len);
	if (err)
		return err;
	fd = open(p->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (fd < 0 || write(fd, &img, sizeof(img)) != (ssize_t)sizeof(img)) {
		err = ks_case_fail("writing the set-ID test program", -errno, why, len);
		if (fd >= 0)
			close(fd);
		ks_setid_remove(p);
		return err;
	}
	return finish(p, fd, mode, why, len);
#else
	(void)p;
	(void)mode;
	snprintf(why, len, KS_CASE_NA "no set-ID test program for this architecture");
	return -ENOTSUP;
#endif
}

int ks_setid_filecap(struct ks_setid_prog *p, char *why, size_t len)
{
	struct vfs_cap_data cap = {
		.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
		.data = { { .permitted = 1u << CAP_NET_RAW } },
	};

	if (setxattr(p->path, "security.capability", &cap, XATTR_CAPS_SZ_2, 0)) {
		int e = errno;

		if (e == EOPNOTSUPP) {
			snprintf(why, len, KS_CASE_NA "no security xattrs under /tmp: %s",
				 strerror(e));
			return -e;
		}
		return ks_case_fail("setxattr(security.capability)", -e, why, len);
	}
	return 0;
}

int ks_setid_copy(struct ks_setid_prog *p, const char *src, unsigned mode, char *why, size_t len)
{
	const char *base = strrchr(src, '/');
	struct stat st;
	int in, out, err = 0;
	ssize_t n = 0;

	err = prog_dir(p, base ? base + 1 : src, why, len);
	if (err)
		return err;
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(p->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (in < 0 || out < 0 || fstat(in, &st))
		err = -errno;
	while (!err && (n = sendfile(out, in, NULL, st.st_size)) > 0)
		;
	if (!err && n < 0)
		err = -errno;
	if (in >= 0)
		close(in);
	if (err) {
		char what[PATH_MAX + 16];

		snprintf(what, sizeof(what), "copy of %s", src);
		if (out >= 0)
			close(out);
		ks_setid_remove(p);
		return ks_case_fail(what, err, why, len);
	}
	return finish(p, out, mode, why, len);
}

void ks_setid_remove(struct ks_setid_prog *p)
{
	char compat[sizeof(p->dir) + 16];

	snprintf(compat, sizeof(compat), "%s/exec32", p->dir);
	unlink(compat);
	unlink(p->path);
	rmdir(p->dir);
}

struct thread_exec {
	const char *path;
	char *const *argv, *const *envp;
	int err;
};

static void *thread_exec(void *arg)
{
	struct thread_exec *t = arg;

	syscall(SYS_execve, t->path, t->argv, t->envp);
	t->err = errno;
	return NULL;
}

/* The 32-bit caller (shields/common/compat/exec.c), copied beside the
 * program: the unprivileged child must be able to reach it. */
static int compat_caller(const struct ks_setid_prog *p, char *path, size_t plen, char *why,
			 size_t len)
{
	char src[PATH_MAX];
	int err = ks_test_compat_path("common", "exec", src, sizeof(src), why, len);

	if (err)
		return err;
	snprintf(path, plen, "%s/exec32", p->dir);
	{	/* a plain copy (no set-ID bit) */
		int in = open(src, O_RDONLY | O_CLOEXEC), out;
		struct stat st;
		ssize_t n = 0;

		out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
		if (in < 0 || out < 0 || fstat(in, &st))
			err = -errno;
		while (!err && (n = sendfile(out, in, NULL, st.st_size)) > 0)
			;
		if (!err && n < 0)
			err = -errno;
		if (!err && fchmod(out, 0755))
			err = -errno;
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
	}
	return err ? ks_case_fail("copy of the 32-bit exec program", err, why, len) : 0;
}

/* In the unprivileged child: the exec itself. Returns the errno of a
 * failed exec (0 never: a successful exec does not return). */
static int child_exec(const struct ks_setid_prog *p, enum ks_exec_way way, char *const argv[],
		      char *const envp[], const char *compat)
{
	const char *name = strrchr(p->path, '/') + 1;
	pid_t pid;
	int fd, status;

	switch (way) {
	case KS_EXEC_EXECVE:
		syscall(SYS_execve, p->path, argv, envp);
		return errno;
	case KS_EXEC_EXECVEAT:
		fd = open(p->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		syscall(SYS_execveat, fd, name, argv, envp, 0);
		return errno;
	case KS_EXEC_FEXECVE:
		fd = open(p->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
		return errno;
	case KS_EXEC_SPAWN: {
		int rc = posix_spawn(&pid, p->path, NULL, NULL, argv ? argv : ks_exec_argv_empty,
				     envp);

		if (rc)
			return rc;
		if (waitpid(pid, &status, 0) < 0)
			return errno;
		/* Pass the spawned image's fate on as our own. */
		if (WIFSIGNALED(status)) {
			signal(WTERMSIG(status), SIG_DFL);
			kill(getpid(), WTERMSIG(status));
		}
		_exit(WEXITSTATUS(status));
	}
	case KS_EXEC_THREAD: {
		struct thread_exec t = { p->path, argv, envp, 0 };
		pthread_t th;
		int rc = pthread_create(&th, NULL, thread_exec, &t);

		if (rc)
			return rc;
		pthread_join(th, NULL);
		return t.err;
	}
	case KS_EXEC_COMPAT:
	case KS_EXEC_COMPAT_EXECVEAT: {
		char *const args[] = { "exec", way == KS_EXEC_COMPAT ? "execve" : "execveat",
				       (char *)p->path,
				       argv == KS_EXEC_ARGV_NULL ? "null" :
				       argv[0] == NULL ? "empty" : argv[0], NULL };

		execve(compat, args, envp);
		return errno;
	}
	}
	return EINVAL;
}

int ks_exec_setid(const struct ks_setid_prog *p, enum ks_exec_way way, char *const argv[],
		  char *const envp[], struct ks_exec_result *r, char *why, size_t len)
{
	char compat[PATH_MAX] = "";
	unsigned char rec[24];
	int out[2], st[2], status, e = 0, err;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (way == KS_EXEC_COMPAT || way == KS_EXEC_COMPAT_EXECVEAT) {
		err = compat_caller(p, compat, sizeof(compat), why, len);
		if (err)
			return err;
	}
	if (pipe2(out, O_CLOEXEC))
		return ks_case_fail("pipe", -errno, why, len);
	if (pipe2(st, O_CLOEXEC)) {
		err = -errno;
		close(out[0]);
		close(out[1]);
		return ks_case_fail("pipe", err, why, len);
	}
	pid = fork();
	if (pid == 0) {
		close(out[0]);
		close(st[0]);
		if (dup2(out[1], 1) < 0 || ks_test_drop_to(KS_EXEC_NOBODY, KS_EXEC_NOBODY))
			e = errno;
		else
			e = child_exec(p, way, argv, envp, compat);
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(127);
	}
	err = pid < 0 ? -errno : 0;
	close(out[1]);
	close(st[1]);
	while (!err && got < sizeof(rec) && (n = read(out[0], rec + got, sizeof(rec) - got)) > 0)
		got += n;
	if (!err && read(st[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(out[0]);
	close(st[0]);
	if (err)
		return ks_case_fail("fork", err, why, len);
	if (waitpid(pid, &status, 0) < 0)
		return ks_case_fail("waitpid", -errno, why, len);
	if (e == ENOEXEC && compat[0])
		return ks_test_compat_exec_failed(compat, e, why, len);
	r->exec_errno = e;
	/* The 32-bit caller reports its exec's failure as 64 + errno. */
	if (!e && compat[0] && WIFEXITED(status) && WEXITSTATUS(status) > 64 &&
	    WEXITSTATUS(status) < 128)
		r->exec_errno = WEXITSTATUS(status) - 64;
	if (WIFSIGNALED(status)) {
		r->killed = WTERMSIG(status) == SIGKILL;
		r->signal = WTERMSIG(status);
	} else if (WIFEXITED(status)) {
		r->exit_code = WEXITSTATUS(status);
	}
	if (got == sizeof(rec)) {
		r->reported = true;
		memcpy(&r->euid, rec, 8);
		memcpy(&r->argc, rec + 8, 8);
		memcpy(&r->argv0, rec + 16, 8);
	}
	return 0;
}

int ks_exec_refused(const struct ks_exec_result *r, char *why, size_t len)
{
	if (r->exec_errno == EPERM || r->killed)
		return KS_CASE_REFUSED;
	if (r->exec_errno)
		return ks_case_fail("exec of the set-ID program", -r->exec_errno, why, len);
	return -1;
}
