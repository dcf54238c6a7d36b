/* SPDX-License-Identifier: GPL-2.0-only */
/* syscalls.bpf.h - syscall hooks for shields: where a tp variant's checks
 * run. A shield writes
 *
 *	KS_SYSCALL_ENTER(tp__bind, bind) { ... args[0] ... }
 *	KS_SYSCALL_ENTER32(tp__bind, bind)	// the same body for 32-bit calls
 *	KS_SYSCALL_SOCK(tp__bind, 0, AF_ALG);	// only when args[0] is such a socket
 *	KS_SYSCALL_PIPE(tp__write, 0);		// only when args[0] is a pipe
 *	KS_SYSCALL_EXIT(tp__unshare_exit, unshare) { ... ret ... }
 *	KS_SYSCALL_EXIT32(tp__unshare_exit, unshare)	// 32-bit exits too
 *	KS_SOCKETCALL32(tp__bind, 2)		// i386 socketcall(SYS_BIND, ...)
 *	KS_SYSCALLS(tp__send__compat32, enter32, KS_NR32_write, KS_NR32_sendmsg)
 *	{ ... ctx (raw tracepoint args: regs, id) ... }
 *
 * and none of these programs is attached on its own. One dispatcher
 * (bpf/sysdispatch.bpf.c, src/lib/dispatch/) owns raw_tp/sys_enter and
 * raw_tp/sys_exit for all of kshield: it tests the syscall's number in a
 * bitmap, so an unregistered syscall costs one bit however many shields
 * are loaded, checks the chain's socket filter once, and then runs the
 * chain's programs as tail calls, each ending with ks_sys_next(). A chain
 * of more than 32 runs in segments of 32 (the kernel's tail-call limit),
 * one dispatcher program each; ks_sys_next() ends a segment at its n.
 * The native chain never sees a 32-bit call and the 32-bit chain never a
 * native one: the dispatcher tells them apart (ks_in_compat32).
 *
 * The registrations are metadata ("sys.<prog>=<hook> <nr>,...",
 * "sysf.<prog>=<arg> <family>,..."), read by the loader, which puts the
 * programs into the dispatcher's slots. A program whose name ends in
 * "__noloop" or "__compat32" shares its base name's socket filter.
 */
#ifndef KSHIELD_SYSCALLS_BPF_H
#define KSHIELD_SYSCALLS_BPF_H

#include "fit.bpf.h"
#include <kshield/shield.h>
#include <kshield/syscalls.h>

/* The dispatcher's maps, pinned by name beside ks_events: every shield's
 * syscall programs and the dispatcher share them. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, KS_SYS_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_sys_progs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_SYS_HOOKS * KS_SYS_NR_MAX);
	__type(key, __u32);
	__type(value, struct ks_sys_chain);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_sys_chains SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct ks_sys_cursor);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_sys_cur SEC(".maps");

#define KS_SYS_CUR_ENTER	0
#define KS_SYS_CUR_EXIT		1

/* Run the next program of the chain in progress, if any. Does not return
 * when there is one (a tail call). */
static __always_inline void ks_sys_next(void *ctx, __u32 cur)
{
	struct ks_sys_cursor *c = bpf_map_lookup_elem(&ks_sys_cur, &cur);
	struct ks_sys_chain *ch;
	__u32 pos;

	if (!c)
		return;
	ch = bpf_map_lookup_elem(&ks_sys_chains, &c->chain);
	if (!ch)
		return;
	pos = ++c->pos;
	if (pos >= ch->n)
		return;
	/* n <= KS_SYS_CHAIN_LEN (a power of two): the mask changes nothing
	 * but shows the verifier the bound. */
	bpf_tail_call(ctx, &ks_sys_progs, ch->slot[pos & (KS_SYS_CHAIN_LEN - 1)]);
}

#define __KS_STR(...)	#__VA_ARGS__
#define KS_STR(...)	__KS_STR(__VA_ARGS__)

/* "sys.<prog>=<hook> <nr>, <nr>": where the dispatcher runs @prog. A
 * number of -1 (KS_NR32_* of a call the ABI lacks) registers nothing. */
#define __KS_SYS_META(prog, val)					\
	static const char __ks_sys_##prog[]				\
	__attribute__((section(KS_META_SECTION), used)) = "sys." #prog "=" val

/* Run @prog only when argument @arg (a descriptor) is a socket of one of
 * the address families given: checked once by the dispatcher for the whole
 * chain when every program of it has such a filter on that argument, so a
 * write() to a file costs no shield a look at its descriptor. The program
 * still checks what it needs itself (a chain's filter is the union). */
#define KS_SYSCALL_SOCK(prog, arg, families...)				\
	static const char __ks_sysf_##prog[]				\
	__attribute__((section(KS_META_SECTION), used)) =		\
		"sysf." #prog "=" #arg " " KS_STR(families)

/* Run @prog only when argument @arg is a pipe or FIFO (the dispatcher's
 * filter, as KS_SYSCALL_SOCK: a write() to a file or a socket costs the
 * chain one look at its descriptor). */
#define KS_SYSCALL_PIPE(prog, arg)					\
	static const char __ks_sysf_##prog[]				\
	__attribute__((section(KS_META_SECTION), used)) =		\
		"sysf." #prog "=" #arg " " KS_STR(KS_SYS_FD_PIPE)

#define __KS_SYS_SEC_enter	"raw_tp/sys_enter"
#define __KS_SYS_SEC_enter32	"raw_tp/sys_enter"
#define __KS_SYS_SEC_exit	"raw_tp/sys_exit"
#define __KS_SYS_SEC_exit32	"raw_tp/sys_exit"
#define __KS_SYS_CUR_enter	KS_SYS_CUR_ENTER
#define __KS_SYS_CUR_enter32	KS_SYS_CUR_ENTER
#define __KS_SYS_CUR_exit	KS_SYS_CUR_EXIT
#define __KS_SYS_CUR_exit32	KS_SYS_CUR_EXIT

/* KS_SYSCALLS(prog, hook, nr...) { ... ctx ... }: a program run by the
 * dispatcher at @hook (enter, exit, enter32, exit32) of each syscall
 * number given; the body gets the raw tracepoint's arguments (ctx->args[0]
 * the saved registers; ctx->args[1] the number at entry, the return value
 * at exit). */
#define KS_SYSCALLS(prog, hook, nrs...)					\
__KS_SYS_META(prog, #hook " " KS_STR(nrs));				\
static __always_inline int ____##prog(struct bpf_raw_tracepoint_args *ctx); \
SEC(__KS_SYS_SEC_##hook)						\
int prog(struct bpf_raw_tracepoint_args *ctx)				\
{									\
	____##prog(ctx);						\
	ks_sys_next(ctx, __KS_SYS_CUR_##hook);				\
	return 0;							\
}									\
static __always_inline int ____##prog(struct bpf_raw_tracepoint_args *ctx)

/* KS_SYSCALL_ENTER(tp__bind, bind) { ... args[1] ... }: the body sees the
 * six arguments as `const __u64 *args`, and `noloop` (a constant: true in
 * the twin "prog__noloop" that the loader picks where bpf_loop is missing,
 * bpf/sdk/fit.bpf.h), and runs at entry to native syscall @sc. */
#define KS_SYSCALL_ENTER(prog, sc)					\
__KS_SYS_META(prog, "enter " KS_STR(KS_NR_##sc));			\
static __always_inline int ____##prog(const __u64 *args, bool noloop);	\
static __always_inline void ____ks_run_##prog(struct bpf_raw_tracepoint_args *ctx, \
					      bool noloop)		\
{									\
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];		\
	__u64 a[6];							\
									\
	KS_SYS_ARGS(regs, a);						\
	____##prog(a, noloop);						\
	ks_sys_next(ctx, KS_SYS_CUR_ENTER);				\
}									\
SEC("raw_tp/sys_enter")							\
int prog(struct bpf_raw_tracepoint_args *ctx)				\
{									\
	____ks_run_##prog(ctx, false);					\
	return 0;							\
}									\
SEC("raw_tp/sys_enter")							\
int prog##__noloop(struct bpf_raw_tracepoint_args *ctx)			\
{									\
	____ks_run_##prog(ctx, true);					\
	return 0;							\
}									\
static __always_inline int ____##prog(const __u64 *args, bool noloop)

/* KS_SYSCALL_ENTER32(tp__fsconfig, fsconfig), after KS_SYSCALL_ENTER of
 * the same program: "prog__compat32" runs the same body at entry to the
 * 32-bit syscall @sc (KS_NR32_<sc>), with zero-extended 32-bit arguments
 * and `noloop` true. The loader loads it only where the kernel runs 32-bit
 * code. */
#define KS_SYSCALL_ENTER32(prog, sc)	KS_SYSCALL_ENTER32_OR(prog, sc, sc)
/* The same for either of two syscalls (sendfile and sendfile64). */
#define KS_SYSCALL_ENTER32_OR(prog, sc, sc2)				\
__KS_SYS_META(prog##__compat32, "enter32 " KS_STR(KS_NR32_##sc, KS_NR32_##sc2)); \
SEC("raw_tp/sys_enter")							\
int prog##__compat32(struct bpf_raw_tracepoint_args *ctx)		\
{									\
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];		\
	__u64 a[6];							\
									\
	KS_SYS_ARGS32(regs, a);						\
	____##prog(a, true);						\
	ks_sys_next(ctx, KS_SYS_CUR_ENTER);				\
	return 0;							\
}

/* KS_SYSCALL_EXIT(tp__unshare_exit, unshare) { ... ret ... }: at the exit
 * of native syscall @sc, to finish what a kill at entry began (the call
 * still completes: record what it made, kill a child it forked). It runs
 * only while the shield enforces: in audit mode nothing was killed, and
 * the dispatcher leaves the shield's exit hooks out, so that no syscall on
 * the machine pays for a sys_exit program (ks_sysd_set_audit). Record hits
 * at entry, where audit mode sees them. */
#define KS_SYSCALL_EXIT(prog, sc)					\
__KS_SYS_META(prog, "exit " KS_STR(KS_NR_##sc));			\
static __always_inline int ____##prog(long ret);			\
SEC("raw_tp/sys_exit")							\
int prog(struct bpf_raw_tracepoint_args *ctx)				\
{									\
	____##prog((long)ctx->args[1]);					\
	ks_sys_next(ctx, KS_SYS_CUR_EXIT);				\
	return 0;							\
}									\
static __always_inline int ____##prog(long ret)

/* KS_SYSCALL_EXIT32(tp__unshare_exit, unshare), after KS_SYSCALL_EXIT of
 * the same program: "prog__compat32" runs its body at the exit of the
 * 32-bit syscall @sc. */
#define KS_SYSCALL_EXIT32(prog, sc)					\
__KS_SYS_META(prog##__compat32, "exit32 " KS_STR(KS_NR32_##sc));	\
SEC("raw_tp/sys_exit")							\
int prog##__compat32(struct bpf_raw_tracepoint_args *ctx)		\
{									\
	____##prog((long)ctx->args[1]);					\
	ks_sys_next(ctx, KS_SYS_CUR_EXIT);				\
	return 0;							\
}

/* KS_SOCKETCALL32(tp__bind, 2), after KS_SYSCALL_ENTER of the same
 * program: "prog__socketcall__compat32" runs its body for i386
 * socketcall(@call, args) (SYS_BIND 2, SYS_ACCEPT 5, ...), with the first
 * three of the call's 32-bit arguments (read from user memory; racy
 * against another thread, as any user memory a tracepoint reads) and
 * `noloop` true. Registers nothing on arm64 (AArch32 EABI has no
 * socketcall). */
#define KS_SOCKETCALL32(prog, call)					\
__KS_SYS_META(prog##__socketcall__compat32, "enter32 " KS_STR(KS_NR32_socketcall)); \
SEC("raw_tp/sys_enter")							\
int prog##__socketcall__compat32(struct bpf_raw_tracepoint_args *ctx)	\
{									\
	__u64 a[6];							\
									\
	if (ks_socketcall32(ctx, a) == (call))				\
		____##prog(a, true);					\
	ks_sys_next(ctx, KS_SYS_CUR_ENTER);				\
	return 0;							\
}

/* The file behind descriptor @fd of the current task, or NULL, by probe
 * reads. (The typed walk below, used here, made Copy Fail's io_uring scan
 * too large for arm64 6.1's verifier: 1,000,001 instructions.) */
static __always_inline struct file *ks_fd_file(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;

	if (fd < 0 || !fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]))
		return NULL;
	return file;
}

/* ks_fd_file through the typed task where the kernel has it (5.11+:
 * plain loads), for checks that run on every write() of the machine;
 * elsewhere ks_fd_file. */
static __always_inline struct file *ks_fd_file_typed(int fd)
{
	struct files_struct *files;
	struct file **fds, *file = NULL;
	struct fdtable *fdt;

	if (!ks_typed_helper(get_current_task_btf))
		return ks_fd_file(fd);
	files = bpf_get_current_task_btf()->files;
	if (fd < 0 || !files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]))
		return NULL;
	return file;
}

/* The sock of @file, or NULL when it is no socket. */
static __always_inline struct sock *ks_file_sock(struct file *file)
{
	struct socket *sock;

	if (!file || (BPF_CORE_READ(file, f_inode, i_mode) & 00170000) != 0140000)	/* S_IFSOCK */
		return NULL;
	sock = BPF_CORE_READ(file, private_data);
	return sock ? BPF_CORE_READ(sock, sk) : NULL;
}

/* The sock behind descriptor @fd of the current task, or NULL when @fd is
 * no socket: for syscall hooks, which get descriptors, not objects. */
static __always_inline struct sock *ks_fd_sock(int fd)
{
	return ks_file_sock(ks_fd_file(fd));
}

#endif /* KSHIELD_SYSCALLS_BPF_H */
