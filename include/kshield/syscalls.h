/* syscalls.h - the syscall dispatcher's tables, shared by BPF and user
 * space (bpf/sdk/syscalls.bpf.h, bpf/sysdispatch.bpf.c, src/lib/dispatch/).
 *
 * One raw_tp/sys_enter program and one raw_tp/sys_exit program serve every
 * shield: a syscall nobody registered for costs one array lookup. A
 * registered one runs its chain: the programs registered for (hook, nr),
 * one tail call after the other, after an optional socket-family filter
 * on one descriptor argument that the dispatcher checks once for all.
 *
 * Included by BPF programs (after vmlinux.h) and by user space (after
 * <linux/types.h>), as event.h.
 */
#ifndef KSHIELD_SYSCALLS_H
#define KSHIELD_SYSCALLS_H

/* Syscall numbers below this are dispatched (x86-64: ~470, i386: ~470,
 * arm64: ~470); a hook on a larger one is refused at load. */
#define KS_SYS_NR_MAX		1024
/* The hooks: entry and exit, native and 32-bit ABI. */
enum ks_sys_hook {
	KS_SYS_ENTER = 0,
	KS_SYS_EXIT = 1,
	KS_SYS_ENTER32 = 2,
	KS_SYS_EXIT32 = 3,
	KS_SYS_HOOKS = 4,
};
/* Chain index of (hook, nr): ks_sys_chains[hook * KS_SYS_NR_MAX + nr]. */
#define KS_SYS_CHAIN(hook, nr)	((hook) * KS_SYS_NR_MAX + (nr))
/* Programs per chain: a chain runs as tail calls, and the kernel allows 33
 * in a row (MAX_TAIL_CALL_CNT), the dispatcher's first included. */
#define KS_SYS_CHAIN_LEN	32
/* Registered programs at once (the prog array's size). */
#define KS_SYS_SLOTS		1024
/* Syscalls one program may register for. */
#define KS_SYS_REGS		24

/* The "family" bit of a descriptor filter that matches a pipe or FIFO (no
 * AF_* is 63): a chain on write() for a pipe shield skips files and
 * sockets as the netlink chains skip files and pipes. */
#define KS_SYS_FD_PIPE		63

struct ks_sys_chain {
	__u8 n;			/* programs in slot[] */
	__u8 abi32;		/* native hooks: the 32-bit chain of nr is not empty */
	__s8 sock_arg;		/* -1, or the argument every program's socket filter reads */
	__u8 _pad[5];
	__u64 families;		/* sock_arg's socket must be of one of these AF_* (bit per family),
				 * or a pipe (KS_SYS_FD_PIPE) */
	__u16 slot[KS_SYS_CHAIN_LEN];	/* indices into ks_sys_progs */
};

/* One registered program: who owns it, and where it runs. Kept in the
 * pinned ks_sys_slots array so that any later kshield process can rebuild
 * the chains. */
struct ks_sys_slot {
	__u32 prog_id;		/* 0: free */
	__s8 sock_arg;		/* -1: no socket filter */
	__u8 nregs;
	__u8 paused;		/* owner audits: its exit hooks are left out of the chains */
	__u8 _pad;
	__u64 families;
	char owner[48];		/* pin directory under the bpffs root: "shields/<name>", "guard" */
	char prog[64];
	struct {
		__u16 hook;	/* enum ks_sys_hook */
		__u16 nr;
	} reg[KS_SYS_REGS];
};

/* Per-CPU position of the chain being run (tail calls do not return):
 * [0] for sys_enter, [1] for sys_exit. Chains run with preemption off. */
struct ks_sys_cursor {
	__u32 chain;
	__u32 pos;
};

#endif /* KSHIELD_SYSCALLS_H */
