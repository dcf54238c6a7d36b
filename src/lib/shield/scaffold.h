/* SPDX-License-Identifier: MIT */
/* scaffold.h - `kshield shield new`: a new shield's folder, written so that
 * it builds and its test runs at once, every case saying "not written yet"
 * (KS_CASE_TODO) until its author writes it.
 *
 *	DIR/NAME/shield.bpf.c	the includes, metadata, the event arguments
 *				by name (KSHIELD_ARGS), one KS_SECURITY_HOOK
 *				per LSM hook (its arguments from the kernel's
 *				BTF: the security_<hook> prototype) and its
 *				KS_SECURITY_FILTER on a hot hook, a tp
 *				fallback at the trigger syscall's entry (and
 *				32-bit entry)
 *	DIR/NAME/test.c		the path table (native, io-uring, splice,
 *				compat, clone-files, pre-existing: as the
 *				syscall allows), benign, the effect oracle
 *	DIR/NAME/README.md	the sections every shield README has
 */
#ifndef KSHIELD_SCAFFOLD_H
#define KSHIELD_SCAFFOLD_H

#include <stdbool.h>
#include <stddef.h>

#define KS_SCAFFOLD_MAX_HOOKS 8

struct ks_scaffold {
	const char *name;		/* the folder and KSHIELD_NAME: [a-z0-9._-] */
	const char *cve;		/* CVE-YYYY-NNNN */
	const char *hooks[KS_SCAFFOLD_MAX_HOOKS];	/* LSM hooks: "socket_setsockopt" */
	int nhooks;
	const char *syscall;		/* the trigger syscall, for the tp fallback */
	const char *fix_function;	/* comma list, or NULL */
	/* A hot hook's filter (file_permission: its programs run in a chain
	 * that skips calls outside it): "MAY_WRITE:S_IFREG", mask bits and
	 * inode types by the kernel's names, ',' or '|' between several.
	 * NULL: the syscall's (MAY_READ for reads, else MAY_WRITE) on S_IFREG. */
	const char *filter;
	const char *dir;		/* where NAME/ goes ("shields") */
	const char *btf_path;		/* NULL: the running kernel's BTF */
};

/* What the SDK knows of a syscall (bpf/sdk/fit.bpf.h's tables), and the
 * ways to it that a test has. */
struct ks_scaffold_syscall {
	const char *name;
	bool abi32;		/* KS_NR32_<name> exists (-1 on an ABI that lacks it) */
	int socketcall;		/* i386 socketcall(N, ...) call number, 0: none */
	const char *uring;	/* the io_uring opcode that does the same, or NULL */
	bool splice;		/* data moves through it: splice/sendfile feed it */
	bool fd;		/* acts on or makes a descriptor: clone-files */
};

/* The syscalls bpf/sdk/fit.bpf.h has numbers for (NULL-terminated by
 * name); tests/unit/test_scaffold.c holds this table to that header. */
extern const struct ks_scaffold_syscall ks_scaffold_syscalls[];
const struct ks_scaffold_syscall *ks_scaffold_syscall(const char *name);

/* Write @s->dir/@s->name/ (refused when it exists). The folder written in
 * @out. 0, or -errno with ks_errmsg() saying what to do (a hook this
 * kernel's BTF lacks, a syscall the SDK has no number for). */
int ks_scaffold_write(const struct ks_scaffold *s, char *out, size_t outlen);

#endif /* KSHIELD_SCAFFOLD_H */
