// SPDX-License-Identifier: GPL-2.0-only
/* sysdispatch.bpf.c - the one program on raw_tp/sys_enter and the one on
 * raw_tp/sys_exit for all of kshield's syscall hooks (bpf/sdk/syscalls.bpf.h).
 * An unregistered syscall costs one bit of a bitmap that user space writes
 * into the programs' instructions, tested before anything else is read; a registered one its chain's socket filter,
 * then its programs as tail calls. A chain longer than the kernel's 33
 * tail calls runs in segments of 32, each from a program of its own here
 * (ks_sys_enter_1, ...): the kernel counts tail calls per program run.
 * User space (src/lib/dispatch/) fills the maps and attaches each program
 * only while some chain of its direction has that many segments.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "fit.bpf.h"
#include "syscalls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Who registered what (struct ks_sys_slot): read and written by user space
 * only, so that any later kshield process can rebuild the chains. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_SYS_SLOTS);
	__type(key, __u32);
	__type(value, struct ks_sys_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_sys_slots SEC(".maps");

/* The bits the attached programs carry (struct ks_sys_bits): written and
 * read by user space only, which loads the programs again when they
 * change. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_sys_bits);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ks_sys_bits SEC(".maps");

/* Argument @i of the syscall in progress, from its saved registers. */
static __always_inline __u64 sys_arg(struct pt_regs *regs, int i, bool abi32)
{
	/* Typed registers (5.15+, with the kernel's own BTF): one plain
	 * load for the one argument asked, not six helper reads. They are
	 * the frame the raw tracepoint's @regs points at: the task's own,
	 * saved at entry. Else @regs, read with helpers. */
	if (ks_typed_helper(task_pt_regs)) {
		struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

#if defined(__TARGET_ARCH_arm64)
		/* constant indices: the verifier allows no variable offset
		 * into a typed pointer */
		__u64 v;

		switch (i) {
		case 0: v = r->regs[0]; break;
		case 1: v = r->regs[1]; break;
		case 2: v = r->regs[2]; break;
		case 3: v = r->regs[3]; break;
		case 4: v = r->regs[4]; break;
		case 5: v = r->regs[5]; break;
		default: return 0;
		}
		return abi32 ? (__u32)v : v;
#else
		switch (abi32 ? i + 8 : i) {
		case 0: return r->di;
		case 1: return r->si;
		case 2: return r->dx;
		case 3: return r->r10;
		case 4: return r->r8;
		case 5: return r->r9;
		case 8: return (__u32)r->bx;
		case 9: return (__u32)r->cx;
		case 10: return (__u32)r->dx;
		case 11: return (__u32)r->si;
		case 12: return (__u32)r->di;
		case 13: return (__u32)r->bp;
		}
		return 0;
#endif
	} else {
		__u64 a[6];

		if (abi32)
			KS_SYS_ARGS32(regs, a);
		else
			KS_SYS_ARGS(regs, a);
		return i >= 0 && i < 6 ? a[i & 7] : 0;
	}
}

/* Is the current syscall a 32-bit one? ks_in_compat32, through the
 * typed task (a plain load, 5.11+) where it can. */
static __always_inline bool sys_abi32(void)
{
	if (ks_typed_helper(get_current_task_btf)) {
		struct task_struct *t = bpf_get_current_task_btf();

#if defined(__TARGET_ARCH_arm64)
		return t->thread_info.flags & (1UL << 22);
#else
		return t->thread_info.status & 0x0002;
#endif
	}
	return ks_in_compat32();
}

/* Does descriptor @fd pass a chain's filter @families: a socket of one of
 * those AF_* families, or a pipe or FIFO when KS_SYS_FD_PIPE is among them?
 * Every write() on the machine asks this while a netlink or pipe shield
 * is loaded, so the file is told apart by one read: its file operations
 * (socket_file_ops, pipefifo_fops, where the kernel's BTF lists them),
 * else its inode's mode. */
#ifndef KS_SYSD_NOBTF
extern const struct file_operations socket_file_ops __ksym __weak;
extern const struct file_operations pipefifo_fops __ksym __weak;
#else
/* sysdispatch_nobtf.bpf.c: typed ksyms need the kernel's own BTF, plain
 * ones are kallsyms addresses (data symbols: CONFIG_KALLSYMS_ALL). */
extern const void socket_file_ops __ksym __weak;
extern const void pipefifo_fops __ksym __weak;
#endif

#define S_IFMT_		00170000
#define S_IFIFO_	0010000
#define S_IFSOCK_	0140000

static __always_inline bool fd_match(int fd, __u64 families)
{
	bool pipes = families & (1ULL << KS_SYS_FD_PIPE);
	const struct file_operations *fop;
	struct file *file;
	struct socket *sock;
	struct sock *sk;
	__u16 family;

	file = ks_fd_file_typed(fd);	/* on the hot path: plain loads */
	if (!file)
		return false;
	if (ks_ksym_exists(socket_file_ops)) {
		fop = BPF_CORE_READ(file, f_op);
		if (fop != &socket_file_ops) {
			if (!pipes)
				return false;
			if (ks_ksym_exists(pipefifo_fops))
				return fop == &pipefifo_fops;
			return (BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT_) == S_IFIFO_;
		}
	} else {
		umode_t mode = BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT_;

		if (mode == S_IFIFO_)
			return pipes;
		if (mode != S_IFSOCK_)
			return false;
	}
	sock = BPF_CORE_READ(file, private_data);
	sk = sock ? BPF_CORE_READ(sock, sk) : NULL;
	if (!sk)
		return false;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	return family < KS_SYS_FD_PIPE && (families & (1ULL << family));
}

/* Does the chain's descriptor filter let this call through? */
static __always_inline bool sock_match(struct pt_regs *regs, const struct ks_sys_chain *ch,
				       bool abi32)
{
	if (ch->sock_arg < 0)
		return true;
	return fd_match((int)sys_arg(regs, ch->sock_arg, abi32), ch->families);
}

/* Run segment @seg of the chain of (@dir, @nr) in the call's ABI, where
 * @word is the word of the program's bitmap that holds @nr's bit. */
static __always_inline int dispatch(struct bpf_raw_tracepoint_args *ctx, int dir,
				    __u64 nr, __u64 word, __u32 cur, int seg)
{
	struct ks_sys_chain *ch;
	struct ks_sys_cursor *c;
	__u32 idx;
	bool abi32;

	if (!((word >> (nr & 63)) & 1))
		return 0;
	/* Only now is it worth asking which ABI the call is in: native and
	 * 32-bit numbers overlap. */
	abi32 = sys_abi32();
	idx = KS_SYS_CHAIN(dir + (abi32 ? KS_SYS_ENTER32 : 0), nr);
	ch = bpf_map_lookup_elem(&ks_sys_chains, &idx);
	if (!ch || ch->segs <= seg)
		return 0;
	for (int k = 0; k < seg; k++) {	/* constant bound: unrolled */
		idx = ch->next;
		ch = bpf_map_lookup_elem(&ks_sys_chains, &idx);
		if (!ch)
			return 0;
	}
	if (!ch->n || (dir == KS_SYS_ENTER &&
		       !sock_match((struct pt_regs *)ctx->args[0], ch, abi32)))
		return 0;
	c = bpf_map_lookup_elem(&ks_sys_cur, &cur);
	if (!c)
		return 0;
	c->chain = idx;
	c->pos = 0;
	bpf_tail_call(ctx, &ks_sys_progs, ch->slot[0]);
	return 0;
}

/* A 64-bit immediate (ld_imm64), never folded into anything else: user
 * space finds it by its value in the object and writes the bits there. */
#define KS_IMM(v) ({ __u64 __x; asm volatile("%0 = %1 ll" : "=r"(__x) : "i"(v)); __x; })
/* Word nr / 64 of the bitmap of (dir, seg), from the instructions. */
#define KS_BITS_WORD(dir, seg, nr) ({					\
	__u64 __w;							\
	switch ((nr) >> 6) {						\
	case 0: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 0)); break;	\
	case 1: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 1)); break;	\
	case 2: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 2)); break;	\
	case 3: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 3)); break;	\
	case 4: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 4)); break;	\
	case 5: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 5)); break;	\
	case 6: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 6)); break;	\
	default: __w = KS_IMM(KS_SYS_BITS_MAGIC(dir, seg, 7)); break;	\
	}								\
	__w;								\
})
_Static_assert(KS_SYS_NR_HOOKED == 8 * 64, "eight words per bitmap above");

/* The number at exit, read through the task's typed registers (a plain
 * load, 5.15+), else with a helper. */
static __always_inline __u64 exit_nr(struct bpf_raw_tracepoint_args *ctx)
{
	if (ks_typed_helper(task_pt_regs)) {
		struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

#if defined(__TARGET_ARCH_arm64)
		return r->syscallno;
#else
		return r->orig_ax;
#endif
	}
	return KS_SYS_NR((struct pt_regs *)ctx->args[0]);
}

/* One program per segment and direction; every syscall's entry passes
 * through each one attached, and its exit while some exit chain is not
 * empty (userns-policy enforcing). Their first instructions decide "not
 * mine" from the number and the bits in their code, before any memory is
 * read; an unrelated call costs them nothing more. */
#define KS_SYS_ENTER_PROG(name, seg)					\
SEC("raw_tp/sys_enter")							\
int name(struct bpf_raw_tracepoint_args *ctx)				\
{									\
	__u64 nr = ctx->args[1];					\
									\
	if (nr >= KS_SYS_NR_HOOKED)					\
		return 0;						\
	return dispatch(ctx, KS_SYS_ENTER, nr, KS_BITS_WORD(0, seg, nr),	\
			KS_SYS_CUR_ENTER, seg);				\
}
#define KS_SYS_EXIT_PROG(name, seg)					\
SEC("raw_tp/sys_exit")							\
int name(struct bpf_raw_tracepoint_args *ctx)				\
{									\
	__u64 nr = exit_nr(ctx);					\
									\
	if (nr >= KS_SYS_NR_HOOKED)					\
		return 0;						\
	return dispatch(ctx, KS_SYS_EXIT, nr, KS_BITS_WORD(1, seg, nr),	\
			KS_SYS_CUR_EXIT, seg);				\
}

KS_SYS_ENTER_PROG(ks_sys_enter, 0)
KS_SYS_ENTER_PROG(ks_sys_enter_1, 1)
KS_SYS_ENTER_PROG(ks_sys_enter_2, 2)
KS_SYS_ENTER_PROG(ks_sys_enter_3, 3)
KS_SYS_ENTER_PROG(ks_sys_enter_4, 4)
KS_SYS_ENTER_PROG(ks_sys_enter_5, 5)
KS_SYS_ENTER_PROG(ks_sys_enter_6, 6)
KS_SYS_ENTER_PROG(ks_sys_enter_7, 7)
KS_SYS_EXIT_PROG(ks_sys_exit, 0)
KS_SYS_EXIT_PROG(ks_sys_exit_1, 1)
KS_SYS_EXIT_PROG(ks_sys_exit_2, 2)
KS_SYS_EXIT_PROG(ks_sys_exit_3, 3)
KS_SYS_EXIT_PROG(ks_sys_exit_4, 4)
KS_SYS_EXIT_PROG(ks_sys_exit_5, 5)
KS_SYS_EXIT_PROG(ks_sys_exit_6, 6)
KS_SYS_EXIT_PROG(ks_sys_exit_7, 7)
_Static_assert(KS_SYS_SEGS == 8, "one program per segment above");
