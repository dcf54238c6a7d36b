/* SPDX-License-Identifier: GPL-2.0-only */
/* override.bpf.h - the `kprobe` variant: a kprobe at a syscall's entry
 * function (or another error-injectable function) that refuses the call
 * with bpf_override_return. The function does not run at all: the caller
 * gets -EPERM and lives on, as under an LSM hook. For kernels without BPF
 * trampolines (no lsm, no fmod_ret) built with CONFIG_BPF_KPROBE_OVERRIDE
 * and CONFIG_FUNCTION_ERROR_INJECTION; elsewhere bpf_override_return is an
 * unknown helper and the variant does not load (the loader goes on to the
 * next one, usually `tp`).
 *
 *	KSHIELD_VARIANTS("lsm,fmod_ret,kprobe,tp");
 *	KS_SYSCALL_KPROBE(kprobe__socket, socket)
 *	{
 *		if ((int)args[0] != AF_RXRPC)
 *			return 0;
 *		return ks_deny(args[0], args[1], args[2], 0);
 *	}
 *	KS_SYSCALL_KPROBE32(kprobe__socket, socket)	// 32-bit callers
 *
 * The body sees the syscall's six arguments as `const __u64 *args` (read
 * from the saved user registers, as KS_SYSCALL_ENTER's) and `noloop`, and
 * returns 0 (let the call run) or -errno (refuse it); ks_deny() records a
 * hit on the function (verdict refused, event with four arguments) and
 * gives -EPERM, or 0 in audit mode.
 *
 * What the kernel lets a kprobe override: functions marked
 * ALLOW_ERROR_INJECTION (/sys/kernel/debug/error_injection/list). Every
 * syscall's entry is (__x64_sys_*, __ia32_sys_*, __ia32_compat_sys_* on
 * x86-64; __arm64_sys_*, __arm64_compat_sys_* on arm64), and a few
 * allocation and block-layer functions (should_failslab, ...); no
 * security_* function is on 6.1. So this variant guards syscalls, and
 * only the calls that enter through them: io_uring requests
 * (IORING_OP_SOCKET calls __sys_socket_file, not the socket syscall) pass
 * no syscall entry, and a shield must say so (detects_ or no coverage for
 * that path) or keep a tracepoint program in the variant that sees it.
 */
#ifndef KSHIELD_OVERRIDE_BPF_H
#define KSHIELD_OVERRIDE_BPF_H

#if defined(__TARGET_ARCH_arm64)
#define __KS_SYS_ENTRY(sc)	"__arm64_sys_" #sc
#else
#define __KS_SYS_ENTRY(sc)	"__x64_sys_" #sc
#endif

/* The user registers the syscall was entered with: the only argument of
 * the entry functions of x86-64 and arm64 (ARCH_HAS_SYSCALL_WRAPPER). */
#define __KS_SYS_REGS(ctx)	((struct pt_regs *)PT_REGS_PARM1(ctx))

/* A kprobe program @prog at kernel function @fn running body @body with
 * hook name @hook: overrides the function's return with what the body
 * returns, unless 0. @read fills `a` from `regs`. */
#define __KS_KPROBE_PROG(prog, fn, body, read, noloop)			\
SEC("kprobe/" fn)							\
int prog(struct pt_regs *ctx)						\
{									\
	struct pt_regs *regs = __KS_SYS_REGS(ctx);			\
	__u64 a[6];							\
	int __ret;							\
									\
	read(regs, a);							\
	__ret = body(a, __ks_khook_##body, noloop);			\
	if (__ret)							\
		bpf_override_return(ctx, __ret);			\
	return 0;							\
}

/* KS_SYSCALL_KPROBE(kprobe__fsconfig, fsconfig) { ... }: at the entry
 * function of native syscall @sc, with its twin "prog__noloop" (no
 * bpf_loop: the loader's rule, fit.h). The hook name in events is
 * "sys_<sc>". */
#define KS_SYSCALL_KPROBE(prog, sc)					\
static const char __ks_khook_____##prog[KS_HOOK_LEN] = "sys_" #sc;	\
static __always_inline int ____##prog(const __u64 *args, const char *ks_hook, \
				      bool noloop);			\
__KS_KPROBE_PROG(prog, __KS_SYS_ENTRY(sc), ____##prog, KS_SYS_ARGS, false) \
__KS_KPROBE_PROG(prog##__noloop, __KS_SYS_ENTRY(sc), ____##prog, KS_SYS_ARGS, true) \
static __always_inline int ____##prog(const __u64 *args, const char *ks_hook, \
				      bool noloop)

/* KS_SYSCALL_KPROBE32(kprobe__fsconfig, fsconfig), after
 * KS_SYSCALL_KPROBE of the same program: "prog__compat32" runs its body
 * (`noloop` true, zero-extended 32-bit arguments) for 32-bit callers of
 * @sc, a syscall without a compat version of its own (no
 * COMPAT_SYSCALL_DEFINE): at __ia32_sys_<sc> on x86-64. Check the
 * 32-bit syscall table (arch/x86/entry/syscalls/syscall_32.tbl, its
 * compat column): i386 clone enters compat_sys_ia32_clone, so
 * KS_COMPAT_SYSCALL_KPROBE32(prog, ia32_clone) there; a program on a
 * function no table names loads, attaches and never runs. On arm64 AArch32
 * callers of such a syscall enter __arm64_sys_<sc>, the native program's
 * function, with their arguments in the same registers: nothing to add.
 * Loaded only where the kernel runs 32-bit code. */
#if defined(__TARGET_ARCH_arm64)
#define KS_SYSCALL_KPROBE32(prog, sc)
#else
#define KS_SYSCALL_KPROBE32(prog, sc)					\
__KS_KPROBE_PROG(prog##__compat32, "__ia32_sys_" #sc, ____##prog, KS_SYS_ARGS32, true)
#endif

/* KS_SYSCALL_KPROBE32_ONLY(prog, sc) { ... }: the body of
 * KS_SYSCALL_KPROBE for 32-bit callers of @sc only, for a bug no 64-bit
 * call reaches: no kprobe on the native entry, whose every call would pay
 * for one. On x86-64 "prog__compat32" at __ia32_sys_<sc> (a syscall
 * without a compat version, as KS_SYSCALL_KPROBE32); on arm64, where
 * AArch32 callers enter __arm64_sys_<sc>, "prog" there, running the body
 * only for them (ks_in_compat32). The hook name in events is "sys_<sc>". */
#if defined(__TARGET_ARCH_arm64)
#define __KS_KPROBE32_ONLY_PROG(prog, sc)				\
static __always_inline int ____##prog##__native32(const __u64 *args,	\
						  const char *ks_hook,	\
						  bool noloop)		\
{									\
	return ks_in_compat32() ?					\
	       ____##prog(args, __ks_khook_____##prog, noloop) : 0;	\
}									\
static const char __ks_khook_____##prog##__native32[KS_HOOK_LEN] = "sys_" #sc; \
__KS_KPROBE_PROG(prog, __KS_SYS_ENTRY(sc), ____##prog##__native32, KS_SYS_ARGS, true)
#else
#define __KS_KPROBE32_ONLY_PROG(prog, sc)				\
__KS_KPROBE_PROG(prog##__compat32, "__ia32_sys_" #sc, ____##prog, KS_SYS_ARGS32, true)
#endif
#define KS_SYSCALL_KPROBE32_ONLY(prog, sc)				\
static const char __ks_khook_____##prog[KS_HOOK_LEN] = "sys_" #sc;	\
static __always_inline int ____##prog(const __u64 *args, const char *ks_hook, \
				      bool noloop);			\
__KS_KPROBE32_ONLY_PROG(prog, sc)					\
static __always_inline int ____##prog(const __u64 *args, const char *ks_hook, \
				      bool noloop)

/* KS_COMPAT_SYSCALL_KPROBE32(prog, sc): the same for a syscall whose
 * 32-bit callers have a compat version (COMPAT_SYSCALL_DEFINE):
 * __ia32_compat_sys_<sc>, __arm64_compat_sys_<sc>. */
#if defined(__TARGET_ARCH_arm64)
#define __KS_COMPAT_ENTRY(sc)	"__arm64_compat_sys_" #sc
#else
#define __KS_COMPAT_ENTRY(sc)	"__ia32_compat_sys_" #sc
#endif
#define KS_COMPAT_SYSCALL_KPROBE32(prog, sc)				\
	KS_COMPAT_SYSCALL_KPROBE32_AS(prog, prog, sc)

/* KS_COMPAT_SYSCALL_KPROBE32_AS(prog, body, sc): the same as program
 * "prog__compat32" running the body of KS_SYSCALL_KPROBE program @body,
 * for a check with a second 32-bit entry (i386 sendfile enters
 * compat_sys_sendfile, sendfile64 sys_sendfile64: KS_SYSCALL_KPROBE32
 * of @body names the other). */
#define KS_COMPAT_SYSCALL_KPROBE32_AS(prog, body, sc)			\
__KS_KPROBE_PROG(prog##__compat32, __KS_COMPAT_ENTRY(sc), ____##body, KS_SYS_ARGS32, true)

/* i386 socketcall(@call, args), after KS_SYSCALL_KPROBE of the same
 * program: "prog__socketcall__compat32" at __ia32_compat_sys_socketcall
 * runs the body with the first three of the call's arguments (read from
 * user memory, as KS_SOCKETCALL32) when the call is @call (SYS_SOCKET 1,
 * ...). Nothing on arm64 (AArch32 EABI has no socketcall). */
#if defined(__TARGET_ARCH_arm64)
#define KS_SOCKETCALL32_KPROBE(prog, call)
#else
#define KS_SOCKETCALL32_KPROBE(prog, call)				\
SEC("kprobe/__ia32_compat_sys_socketcall")				\
int prog##__socketcall__compat32(struct pt_regs *ctx)			\
{									\
	__u64 a[6];							\
	int __ret;							\
									\
	if (ks_socketcall32_regs(__KS_SYS_REGS(ctx), a) != (call))	\
		return 0;						\
	__ret = ____##prog(a, __ks_khook_____##prog, true);		\
	if (__ret)							\
		bpf_override_return(ctx, __ret);			\
	return 0;							\
}
#endif

#endif /* KSHIELD_OVERRIDE_BPF_H */
