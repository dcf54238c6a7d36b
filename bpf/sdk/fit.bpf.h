/* SPDX-License-Identifier: GPL-2.0-only */
/* fit.bpf.h - what older kernels lack (and newer ones renamed), hidden
 * behind one call each, in the spirit of libbpf-tools' compat.h. ("compat" in kshield means 32-bit compat syscalls only: __compat32, KS_SYSCALL_ENTER32.) One object
 * for every kernel from 5.10 on: each choice is made at load time, by CO-RE
 * (libbpf rewrites the check into a constant and the verifier drops the
 * branch not taken), never by a separate build. The user-space half
 * (src/lib/kernel/fit.c) fits maps to the kernel before the load and names what a
 * program needs and cannot get.
 *
 *   ks_task_storage_get(map, flags)   task local storage of the current task
 *                                     (5.11+); before, or without the
 *                                     kernel's own BTF: an LRU hash keyed
 *                                     by thread id (the loader converts it)
 *   ks_sock_cookie(sk)                a socket's cookie from tracing programs
 *                                     (the helper there is 5.12+); before:
 *                                     the cookie the kernel has generated so
 *                                     far, 0 until the socket's first packet
 *   ks_ksym_exists(sym)               libbpf 1.2's bpf_ksym_exists for 1.1
 *   ks_syscall_nr()                   the syscall the current task is in,
 *                                     from any program (LSM, fmod_ret):
 *                                     bpf_task_pt_regs (5.15+, kernel BTF);
 *                                     else the frame at the top of the
 *                                     task's stack
 *   KS_TRACEPOINT_SYSCALL_ENTER(prog, sc)  one body, two programs: "prog"
 *                                     on tracepoint syscalls/sys_enter_sc,
 *                                     "prog__raw" on raw_tp/sys_enter
 *                                     filtered by syscall number; the loader
 *                                     loads the raw twin only where
 *                                     tracepoint links cannot be pinned
 *                                     (BPF perf links, 5.15): raw tracepoint
 *                                     links pin since 5.7. For the guard;
 *                                     shields hook syscalls through the
 *                                     dispatcher (bpf/sdk/syscalls.bpf.h)
 *   ks_in_compat32(), KS_SYS_ARGS32   is this a 32-bit syscall, its args
 *   ks_socketcall32(ctx, a)           an i386 socketcall's call and args
 *
 * bpf_loop (5.17+) cannot be hidden the same way: its callback is passed as
 * a function pointer, which verifiers before 5.13 reject even in dead code.
 * A program that calls it gets a twin "X__noloop" (a bounded loop, 5.3+,
 * which the verifier walks one iteration at a time: keep it to a few
 * hundred cheap steps, or step by larger units) that the loader loads
 * instead where bpf_loop is missing; one without a twin is reported by the
 * loader as needing bpf_loop.
 *
 * A kernel without BTF of its own (no /sys/kernel/btf/vmlinux) relocates
 * against an external BTF (src/lib/kernel/btf_find.h), which says which
 * helpers it has; but the verifier types their pointers by the kernel's own
 * BTF and refuses bpf_get_current_task_btf, bpf_task_pt_regs and task
 * storage there ("invalid return type"). ks_typed_helper(name) is the
 * CO-RE check for such a helper that also asks the loader's ks_fit_nobtf;
 * the helpers above take their fallbacks there. Attaching by the kernel's
 * BTF (lsm, fentry, fmod_ret, tp_btf) is out too: a tp_btf program "X" can
 * have a twin "X__nobtf" at the same raw tracepoint (probed reads), which
 * the loader loads instead of it exactly there.
 *
 * A tracepoint that only some kernels have (io_uring_submit_req, 6.3+; its
 * name before was io_uring_submit_sqe): a tp_btf program named "X__opt"
 * loads only where the kernel's BTF has the tracepoint, and the variant
 * loads without it elsewhere (what it alone would see stays uncovered
 * there: say so in the shield's README and metadata).
 */
#ifndef KSHIELD_FIT_BPF_H
#define KSHIELD_FIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#ifndef BPF_LOCAL_STORAGE_GET_F_CREATE
#define BPF_LOCAL_STORAGE_GET_F_CREATE 1
#endif

/* True where the kernel has no BTF of its own: set by the loader
 * (ks_fit_prepare, src/lib/kernel/fit.c) before the load. Read-only data:
 * the verifier knows its value and drops the branch not taken, so the
 * typed helpers in that branch are never checked there. */
const volatile bool ks_fit_nobtf = false;

/* Does this kernel have helper BPF_FUNC_<name> with the typed pointers it
 * takes or returns (the kernel's own BTF)? For bpf_get_current_task_btf,
 * bpf_task_pt_regs, bpf_task_storage_get. */
#define ks_typed_helper(name)						\
	(!ks_fit_nobtf && bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_##name))

/* Largest task storage value the pre-5.11 fallback can create. */
#define KS_TASK_STORAGE_MAX 1024

/* The zero value a fallback entry starts from (task storage starts zeroed). */
static const char ks_fit_zero[KS_TASK_STORAGE_MAX];

#define ks_ksym_exists(sym) ({						\
	_Static_assert(!__builtin_constant_p(!!&sym), #sym " must be __weak"); \
	!!&sym;							\
})

/* The current task's value in task storage map @map (declared as
 * BPF_MAP_TYPE_TASK_STORAGE), created zeroed with
 * BPF_LOCAL_STORAGE_GET_F_CREATE. Before 5.11, and on a kernel without BTF
 * of its own (ks_fit_nobtf), the loader made @map an LRU hash keyed by
 * thread id: a value outlives its thread until evicted, so callers must
 * not trust a value they did not write in this call. */
static __always_inline void *ks_task_storage_get(void *map, __u64 flags)
{
	__u32 tid;
	void *v;

	if (ks_typed_helper(task_storage_get))
		return bpf_task_storage_get(map, bpf_get_current_task_btf(), 0, flags);
	tid = (__u32)bpf_get_current_pid_tgid();
	v = bpf_map_lookup_elem(map, &tid);
	if (v || !(flags & BPF_LOCAL_STORAGE_GET_F_CREATE))
		return v;
	bpf_map_update_elem(map, &tid, ks_fit_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &tid);
}

/* bpf_get_socket_cookie() became callable from tracing programs in 5.12,
 * through the helper function bpf_get_socket_ptr_cookie. Test the function,
 * not its bpf_func_proto: kallsyms lists data symbols only with
 * CONFIG_KALLSYMS_ALL, so without it the proto looks absent on any kernel
 * and every connect went without its owner. */
extern const void bpf_get_socket_ptr_cookie __ksym __weak;

/* The cookie of @sk from a tracing program (tp_btf, fentry, lsm). Before
 * 5.12: the cookie as far as the kernel generated it (on the first call of
 * bpf_get_socket_cookie from a socket or skb program), else 0. */
static __always_inline __u64 ks_sock_cookie(const struct sock *sk)
{
	if (ks_ksym_exists(bpf_get_socket_ptr_cookie))
		return bpf_get_socket_cookie((void *)sk);
	return BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);
}

/* ---- Raw tracepoint twins (kernels without BPF perf links, before 5.15) ----
 * A tracepoint program's link lives only as long as its loader there, so a
 * shield's fallback would stop with kshield. A raw tracepoint's link pins
 * (5.7+): each syscall tracepoint program gets a "__raw" twin on
 * raw_tp/sys_enter (or sys_exit), which runs on every syscall and keeps
 * only its own number; the loader (src/lib/kernel/fit.c) loads the twin
 * instead of the tracepoint program only where perf links are missing.
 * The syscall tracepoints skip 32-bit compat calls; so do the twins, so
 * that both see the same calls. A twin also runs without bpf_loop (5.17):
 * write its body without it (the *__noloop convention). */

/* Syscall numbers of the native ABI (the object is built per arch), for
 * KS_SYSCALL_ENTER(prog, sc) and friends (syscalls.bpf.h), which take the
 * name: KS_NR_<sc> here and KS_NR32_<sc> in the 32-bit table below.
 * To add a syscall: `scripts/sysnr.sh NAME` prints its four lines from the
 * kernel's UAPI headers (x86-64 and arm64 native, i386 and AArch32 EABI);
 * put each into its table, "(-1)" where an ABI lacks the call (the
 * dispatcher then registers nothing for it). `scripts/sysnr.sh --check`
 * (run by make test-host) holds every number here to those headers. */
#if defined(__TARGET_ARCH_arm64)
#define KS_NR_bind		200
#define KS_NR_accept		202
#define KS_NR_accept4		242
#define KS_NR_splice		76
#define KS_NR_sendfile64	71
#define KS_NR_unshare		97
#define KS_NR_setns		268
#define KS_NR_clone		220
#define KS_NR_clone3		435
#define KS_NR_fsconfig		431
#define KS_NR_socket		198
#define KS_NR_io_uring_register	427
#define KS_NR_mmap		222
#define KS_NR_kill		129
#define KS_NR_tgkill		131
#define KS_NR_bpf		280
#define KS_NR_unlinkat		35
#define KS_NR_sendmsg		211
#define KS_NR_sendto		206
#define KS_NR_write		64
#define KS_NR_writev		66
#define KS_NR_sendmmsg		269
#define KS_NR_pwritev2		287
#define KS_NR_pwrite64		68
#define KS_NR_pwritev		70
#define KS_NR_io_uring_enter	426
#define KS_NR_mount		40
#define KS_NR_umount2		39
#define KS_NR_fsopen		430
#define KS_NR_fsmount		432
#define KS_NR_move_mount	429
#define KS_NR_fspick		433
#define KS_NR_keyctl		219
#define KS_NR_add_key		217
#define KS_NR_request_key	218
#define KS_NR_perf_event_open	241
#define KS_NR_vmsplice		75
#define KS_NR_tee		77
#define KS_NR_pipe2		59
#define KS_NR_execve		221
#define KS_NR_execveat		281
#define KS_NR_setsockopt	208
#define KS_NR_getsockopt	209
#define KS_NR_connect		203
#define KS_NR_listen		201
#define KS_NR_recvmsg		212
#define KS_NR_recvfrom		207
#define KS_NR_read		63
#define KS_NR_readv		65
#define KS_NR_openat		56
#define KS_NR_ioctl		29
#define KS_NR_io_uring_setup	425
#define KS_NR_userfaultfd	282
#define KS_NR_memfd_create	279
#define KS_NR_msgsnd		189
#define KS_NR_io_submit		2
#else
#define KS_NR_bind		49
#define KS_NR_accept		43
#define KS_NR_accept4		288
#define KS_NR_splice		275
#define KS_NR_sendfile64	40
#define KS_NR_unshare		272
#define KS_NR_setns		308
#define KS_NR_clone		56
#define KS_NR_clone3		435
#define KS_NR_fsconfig		431
#define KS_NR_socket		41
#define KS_NR_io_uring_register	427
#define KS_NR_mmap		9
#define KS_NR_kill		62
#define KS_NR_tgkill		234
#define KS_NR_bpf		321
#define KS_NR_unlinkat		263
#define KS_NR_sendmsg		46
#define KS_NR_sendto		44
#define KS_NR_write		1
#define KS_NR_writev		20
#define KS_NR_sendmmsg		307
#define KS_NR_pwritev2		328
#define KS_NR_pwrite64		18
#define KS_NR_pwritev		296
#define KS_NR_io_uring_enter	426
#define KS_NR_mount		165
#define KS_NR_umount2		166
#define KS_NR_fsopen		430
#define KS_NR_fsmount		432
#define KS_NR_move_mount	429
#define KS_NR_fspick		433
#define KS_NR_keyctl		250
#define KS_NR_add_key		248
#define KS_NR_request_key	249
#define KS_NR_perf_event_open	298
#define KS_NR_vmsplice		278
#define KS_NR_tee		276
#define KS_NR_pipe2		293
#define KS_NR_execve		59
#define KS_NR_execveat		322
#define KS_NR_setsockopt	54
#define KS_NR_getsockopt	55
#define KS_NR_connect		42
#define KS_NR_listen		50
#define KS_NR_recvmsg		47
#define KS_NR_recvfrom		45
#define KS_NR_read		0
#define KS_NR_readv		19
#define KS_NR_openat		257
#define KS_NR_ioctl		16
#define KS_NR_io_uring_setup	425
#define KS_NR_userfaultfd	323
#define KS_NR_memfd_create	319
#define KS_NR_msgsnd		69
#define KS_NR_io_submit		209
#endif

/* Syscall numbers of the 32-bit ABI (i386 on x86-64, AArch32 EABI on
 * arm64), as raw_tp/sys_enter sees them for a 32-bit call. */
#if defined(__TARGET_ARCH_arm64)
#define KS_NR32_write		4
#define KS_NR32_writev		146
#define KS_NR32_pwrite64	181
#define KS_NR32_sendfile	187
#define KS_NR32_sendfile64	239
#define KS_NR32_send		289
#define KS_NR32_sendto		290
#define KS_NR32_sendmsg		296
#define KS_NR32_splice		340
#define KS_NR32_pwritev		362
#define KS_NR32_sendmmsg	374
#define KS_NR32_pwritev2	393
#define KS_NR32_io_uring_enter	426
#define KS_NR32_fsconfig	431
#define KS_NR32_unshare		337
#define KS_NR32_setns		375
#define KS_NR32_clone		120
#define KS_NR32_clone3		435
#define KS_NR32_socket		281
#define KS_NR32_bind		282
#define KS_NR32_accept		285
#define KS_NR32_accept4		366
#define KS_NR32_socketcall	(-1)	/* OABI only: not on arm64 */
#define KS_NR32_mount		21
#define KS_NR32_umount2		52
#define KS_NR32_fsopen		430
#define KS_NR32_fsmount		432
#define KS_NR32_move_mount	429
#define KS_NR32_fspick		433
#define KS_NR32_keyctl		311
#define KS_NR32_add_key		309
#define KS_NR32_request_key	310
#define KS_NR32_perf_event_open	364
#define KS_NR32_vmsplice	343
#define KS_NR32_tee		342
#define KS_NR32_pipe2		359
#define KS_NR32_execve		11
#define KS_NR32_execveat	387
#define KS_NR32_setsockopt	294
#define KS_NR32_getsockopt	295
#define KS_NR32_connect		283
#define KS_NR32_listen		284
#define KS_NR32_recvmsg		297
#define KS_NR32_recvfrom	292
#define KS_NR32_read		3
#define KS_NR32_readv		145
#define KS_NR32_openat		322
#define KS_NR32_ioctl		54
#define KS_NR32_io_uring_setup	425
#define KS_NR32_userfaultfd	388
#define KS_NR32_memfd_create	385
#define KS_NR32_msgsnd		301
#define KS_NR32_bpf		386
#define KS_NR32_io_uring_register	427
#define KS_NR32_kill		37
#define KS_NR32_tgkill		268
#define KS_NR32_unlinkat	328
#else
#define KS_NR32_write		4
#define KS_NR32_socketcall	102
#define KS_NR32_writev		146
#define KS_NR32_pwrite64	181
#define KS_NR32_sendfile	187
#define KS_NR32_sendfile64	239
#define KS_NR32_splice		313
#define KS_NR32_pwritev		334
#define KS_NR32_sendmmsg	345
#define KS_NR32_sendto		369
#define KS_NR32_sendmsg		370
#define KS_NR32_pwritev2	379
#define KS_NR32_io_uring_enter	426
#define KS_NR32_fsconfig	431
#define KS_NR32_unshare		310
#define KS_NR32_setns		346
#define KS_NR32_clone		120
#define KS_NR32_clone3		435
#define KS_NR32_socket		359
#define KS_NR32_bind		361
#define KS_NR32_accept4		364
#define KS_NR32_accept		(-1)	/* socketcall only */
#define KS_NR32_send		(-1)	/* i386 sends through socketcall */
#define KS_NR32_mount		21
#define KS_NR32_umount2		52
#define KS_NR32_fsopen		430
#define KS_NR32_fsmount		432
#define KS_NR32_move_mount	429
#define KS_NR32_fspick		433
#define KS_NR32_keyctl		288
#define KS_NR32_add_key		286
#define KS_NR32_request_key	287
#define KS_NR32_perf_event_open	336
#define KS_NR32_vmsplice	316
#define KS_NR32_tee		315
#define KS_NR32_pipe2		331
#define KS_NR32_execve		11
#define KS_NR32_execveat	358
#define KS_NR32_setsockopt	366
#define KS_NR32_getsockopt	365
#define KS_NR32_connect		362
#define KS_NR32_listen		363
#define KS_NR32_recvmsg		372
#define KS_NR32_recvfrom	371
#define KS_NR32_read		3
#define KS_NR32_readv		145
#define KS_NR32_openat		295
#define KS_NR32_ioctl		54
#define KS_NR32_io_uring_setup	425
#define KS_NR32_userfaultfd	374
#define KS_NR32_memfd_create	356
#define KS_NR32_msgsnd		400
#define KS_NR32_bpf		357
#define KS_NR32_io_uring_register	427
#define KS_NR32_kill		37
#define KS_NR32_tgkill		270
#define KS_NR32_unlinkat	301
#endif

/* Is the current syscall a 32-bit one: ia32 (TS_COMPAT) on x86-64, an
 * AArch32 task (TIF_32BIT) on arm64? */
static __always_inline bool ks_in_compat32(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

#if defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(task, thread_info.flags) & (1UL << 22);
#else
	return BPF_CORE_READ(task, thread_info.status) & 0x0002;
#endif
}

/* The syscall's number and arguments from its saved user registers. */
#if defined(__TARGET_ARCH_arm64)
#define KS_SYS_NR(regs)		BPF_CORE_READ(regs, syscallno)
#define KS_SYS_ARGS(regs, a) ({						\
	(a)[0] = BPF_CORE_READ(regs, regs[0]);				\
	(a)[1] = BPF_CORE_READ(regs, regs[1]);				\
	(a)[2] = BPF_CORE_READ(regs, regs[2]);				\
	(a)[3] = BPF_CORE_READ(regs, regs[3]);				\
	(a)[4] = BPF_CORE_READ(regs, regs[4]);				\
	(a)[5] = BPF_CORE_READ(regs, regs[5]);				\
})
#else
#define KS_SYS_NR(regs)		BPF_CORE_READ(regs, orig_ax)
#define KS_SYS_ARGS(regs, a) ({						\
	(a)[0] = BPF_CORE_READ(regs, di);				\
	(a)[1] = BPF_CORE_READ(regs, si);				\
	(a)[2] = BPF_CORE_READ(regs, dx);				\
	(a)[3] = BPF_CORE_READ(regs, r10);				\
	(a)[4] = BPF_CORE_READ(regs, r8);				\
	(a)[5] = BPF_CORE_READ(regs, r9);				\
})
#endif

/* The same for a 32-bit syscall (ks_in_compat32): i386 passes its
 * arguments in ebx, ecx, edx, esi, edi, ebp; AArch32 in r0-r5, which are
 * regs[0-5] of arm64's pt_regs. Zero-extended 32-bit values. */
#if defined(__TARGET_ARCH_arm64)
#define KS_SYS_ARGS32(regs, a)	KS_SYS_ARGS(regs, a)
#else
#define KS_SYS_ARGS32(regs, a) ({					\
	(a)[0] = (__u32)BPF_CORE_READ(regs, bx);			\
	(a)[1] = (__u32)BPF_CORE_READ(regs, cx);			\
	(a)[2] = (__u32)BPF_CORE_READ(regs, dx);			\
	(a)[3] = (__u32)BPF_CORE_READ(regs, si);			\
	(a)[4] = (__u32)BPF_CORE_READ(regs, di);			\
	(a)[5] = (__u32)BPF_CORE_READ(regs, bp);			\
})
#endif

#define KS_PF_IO_WORKER		0x00000010
#define KS_PF_KTHREAD		0x00200000
/* THREAD_SIZE of x86-64 and arm64 (4 KiB pages) without KASAN, as every
 * Debian build has it: only the pre-5.15 fallback below uses it, and a
 * frame not found there reads as "unknown", never as another syscall. */
#define KS_THREAD_SIZE		16384

/* Is @regs a frame saved on entry from user space (64- or 32-bit)? */
static __always_inline bool ks_user_frame(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_arm64)
	return (BPF_CORE_READ(regs, pstate) & 0xf) == 0;	/* EL0t, AArch64 or 32 */
#else
	return (BPF_CORE_READ(regs, cs) & 3) == 3;		/* CPL 3 */
#endif
}

/* The registers the current task saved at entry from user space, which
 * no other thread can change; NULL when there are none to read: kernel
 * threads and io_uring workers (their saved registers are zeros or a copy
 * of their creator's, not a syscall of theirs), or a frame that is not a
 * user-mode one. bpf_task_pt_regs is 5.15+; before it the frame is the
 * last struct pt_regs of the task's stack (task_pt_regs()). For reading
 * with BPF_CORE_READ. */
static __always_inline struct pt_regs *ks_syscall_regs(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pt_regs *regs;

	if (BPF_CORE_READ(task, flags) & (KS_PF_KTHREAD | KS_PF_IO_WORKER))
		return NULL;
	if (ks_typed_helper(task_pt_regs))
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	else
		regs = (struct pt_regs *)((char *)BPF_CORE_READ(task, stack) + KS_THREAD_SIZE -
					  bpf_core_type_size(struct pt_regs));
	if (!regs || !ks_user_frame(regs))
		return NULL;
	return regs;
}

/* The number of the syscall the current task is in (in the table of its
 * ABI: ks_in_compat32() says which), from ks_syscall_regs(); -1 when there
 * is none. */
static __always_inline long ks_syscall_nr(void)
{
	struct pt_regs *regs = ks_syscall_regs();

	return regs ? (long)KS_SYS_NR(regs) : -1;
}

/* KS_TRACEPOINT_SYSCALL_ENTER(tp__kill, kill) { ... args[1] ... }: a program
 * attached on its own to the syscall tracepoint (the tamper guard, which
 * must not depend on the shields' dispatcher); shields use
 * KS_SYSCALL_ENTER (bpf/sdk/syscalls.bpf.h). The body sees the six arguments
 * as `const __u64 *args`, and `noloop` (a constant: true in the raw twin,
 * which must not call bpf_loop), and returns the program's value. */
#define KS_TRACEPOINT_SYSCALL_ENTER(prog, sc)					\
static __always_inline int ____##prog(const __u64 *args, bool noloop);	\
SEC("tracepoint/syscalls/sys_enter_" #sc)				\
int prog(struct trace_event_raw_sys_enter *ctx)				\
{									\
	__u64 a[6] = { ctx->args[0], ctx->args[1], ctx->args[2],	\
		       ctx->args[3], ctx->args[4], ctx->args[5] };	\
									\
	return ____##prog(a, false);					\
}									\
SEC("raw_tp/sys_enter")							\
int prog##__raw(struct bpf_raw_tracepoint_args *ctx)			\
{									\
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];		\
	__u64 a[6];							\
									\
	if (ctx->args[1] != KS_NR_##sc || ks_in_compat32())		\
		return 0;						\
	KS_SYS_ARGS(regs, a);						\
	return ____##prog(a, true);					\
}									\
static __always_inline int ____##prog(const __u64 *args, bool noloop)

#if !defined(__TARGET_ARCH_arm64)
/* An i386 socketcall's call number and its first three arguments (read
 * from the caller's array in user memory), from the user registers @regs;
 * -1 when the array cannot be read. */
static __always_inline long ks_socketcall32_regs(struct pt_regs *regs, __u64 *a)
{
	__u32 a32[3];
	long call = (__u32)BPF_CORE_READ(regs, bx);

	a[0] = a[1] = a[2] = a[3] = a[4] = a[5] = 0;
	if (bpf_probe_read_user(a32, sizeof(a32), (const void *)(long)(__u32)BPF_CORE_READ(regs, cx)))
		return -1;
	a[0] = a32[0];
	a[1] = a32[1];
	a[2] = a32[2];
	return call;
}
#endif

/* i386 socketcall(call, args) from raw_tp/sys_enter: for a 32-bit
 * socketcall, its call number (SYS_SOCKET 1, SYS_BIND 2, ...) with the
 * first three of its 32-bit arguments in @a (read from user memory); -1
 * for any other syscall, on arm64 (AArch32 EABI has no socketcall), or
 * when the array is unreadable (the call then fails with EFAULT). */
static __always_inline long ks_socketcall32(struct bpf_raw_tracepoint_args *ctx, __u64 *a)
{
#if defined(__TARGET_ARCH_arm64)
	return -1;
#else
	if ((long)ctx->args[1] != KS_NR32_socketcall || !ks_in_compat32())
		return -1;
	return ks_socketcall32_regs((struct pt_regs *)ctx->args[0], a);
#endif
}

#endif /* KSHIELD_FIT_BPF_H */
