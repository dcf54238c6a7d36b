/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* syscalls.h - the syscall dispatcher's tables, shared by BPF and user
 * space (bpf/sdk/syscalls.bpf.h, bpf/sysdispatch.bpf.c, src/lib/dispatch/).
 *
 * One raw_tp/sys_enter program and one raw_tp/sys_exit program serve every
 * shield: a syscall nobody registered for costs one bit of ks_sys_bits. A
 * registered one runs its chain: the programs registered for (hook, nr),
 * one tail call after the other, after an optional socket-family filter
 * on one descriptor argument that the dispatcher checks once for all. A
 * chain longer than the kernel's tail-call limit runs in segments of 32,
 * each from a dispatcher program of its own (KS_SYS_SEGS).
 *
 * Included by BPF programs (after vmlinux.h) and by user space (after
 * <linux/types.h>), as event.h.
 */
#ifndef KSHIELD_SYSCALLS_H
#define KSHIELD_SYSCALLS_H

/* Stride of ks_sys_chains per hook: entry KS_SYS_CHAIN(hook, nr) heads the
 * chain of (hook, nr) for nr below KS_SYS_NR_HOOKED (x86-64, i386, arm64:
 * below ~470); a hook on a larger number is refused at load. The entries
 * above, [KS_SYS_NR_HOOKED, KS_SYS_NR_MAX) of every hook, are the pool of
 * further segments of chains longer than KS_SYS_CHAIN_LEN. */
#define KS_SYS_NR_MAX		1024
#define KS_SYS_NR_HOOKED	512
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
/* Programs per segment of a chain: a segment runs as tail calls, and the
 * kernel allows 33 in a row (MAX_TAIL_CALL_CNT), the dispatcher's first
 * included. */
#define KS_SYS_CHAIN_LEN	32
/* Segments per chain: the dispatcher has one program per segment and
 * direction (ks_sys_enter, ks_sys_enter_1, ...), each a run of its own
 * with its own 33 tail calls, attached only while some chain of its
 * direction is that long. So a chain holds up to 256 programs. */
#define KS_SYS_SEGS		8
/* Further segments at once, from the pool above KS_SYS_NR_HOOKED. */
#define KS_SYS_XSEGS		(KS_SYS_HOOKS * (KS_SYS_NR_MAX - KS_SYS_NR_HOOKED))
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
	__u8 abi32;		/* native heads: the 32-bit chain of nr is not empty */
	__s8 sock_arg;		/* -1, or the argument every program's socket filter reads */
	__u8 segs;		/* heads: segments of the chain (0: empty; 1: this entry) */
	__u16 next;		/* the chain's next segment (a pool entry), or 0 */
	__u8 _pad[2];
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

/* Which numbers the dispatcher's program for (direction, segment) runs a
 * chain for, either ABI: bit nr of w[dir][seg] is set when the native or
 * the 32-bit chain of nr at that direction (0 entry, 1 exit) has more than
 * @seg segments. The programs carry it in their instructions: each word is
 * an immediate, KS_SYS_BITS_MAGIC(dir, seg, word) in the object, that user
 * space overwrites before loading them, so that an unrelated syscall costs
 * the dispatcher no memory read at all (a map's value costs a cache or TLB
 * miss on a busy machine). ks_sys_bits[0] records the bits of the programs
 * attached; they are loaded again when the bits change. */
struct ks_sys_bits {
	__u64 w[2][KS_SYS_SEGS][KS_SYS_NR_HOOKED / 64];
};
#define KS_SYS_BITS_MAGIC(dir, seg, word)				\
	(0x4b53424900000000ULL | ((dir) << 16) | ((seg) << 8) | (word))

/* Per-CPU position of the chain being run (tail calls do not return):
 * [0] for sys_enter, [1] for sys_exit. Chains run with preemption off. */
struct ks_sys_cursor {
	__u32 chain;
	__u32 pos;
};

#endif /* KSHIELD_SYSCALLS_H */
