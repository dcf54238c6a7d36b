/* SPDX-License-Identifier: GPL-2.0-only */
/* shield.bpf.h - the shield SDK. A shield is one BPF C file:
 *
 *	#include "shield.bpf.h"
 *
 *	KSHIELD_NAME("cve-2021-22555");
 *	KSHIELD_META(cve, "CVE-2021-22555");
 *	KSHIELD_META(summary, "x_tables IPT_SO_SET_REPLACE from a user namespace");
 *	KSHIELD_VARIANTS("lsm,cgroup");	// strongest first
 *
 *	SEC("lsm/socket_setsockopt")
 *	int BPF_PROG(lsm__setsockopt, struct socket *sock, int level, int optname)
 *	{
 *		if (!is_trigger(level, optname))
 *			return 0;
 *		return ks_refuse("socket_setsockopt", level, optname, 0, 0) ? -EPERM : 0;
 *	}
 *
 * Programs belong to a variant by name: "<variant>__<anything>". The loader
 * tries the variants in KSHIELD_VARIANTS order and keeps the first whose
 * programs all load and attach on this kernel.
 *
 * A hook written once gives two variants (KS_SECURITY_HOOK below): "lsm"
 * (BPF LSM, needs bpf in lsm=) and "fmod_ret" (the same body as fmod_ret on
 * the kernel's security_<hook> function: any kernel with BPF trampolines,
 * whatever lsm= says), both refusing with -EPERM:
 *
 *	KSHIELD_VARIANTS("lsm,fmod_ret,tp");
 *	KS_SECURITY_HOOK(setsockopt, socket_setsockopt,
 *			 struct socket *sock, int level, int optname)
 *	{
 *		if (!is_trigger(level, optname))
 *			return 0;
 *		return ks_deny(level, optname, 0, 0);
 *	}
 *
 * A syscall check can refuse on kernels without trampolines too: the
 * "kprobe" variant (KS_SYSCALL_KPROBE, bpf/sdk/override.bpf.h) puts it at
 * the syscall's entry function and refuses with bpf_override_return where
 * the kernel has it (BPF_KPROBE_OVERRIDE); list it before "tp", which
 * takes over elsewhere: KSHIELD_VARIANTS("lsm,fmod_ret,kprobe,tp").
 *
 * Metadata keys (all strings, read from the object without loading it):
 *   name, cve, summary, refs, signs (an SQL condition on events: what the
 *   exploit leaves besides a hit; `kshield hunt NAME` looks for those and
 *   the shield's own hits), hunt (a whole SELECT instead), variants,
 *   variant_<v> (one line on what variant <v> does, e.g. that it is blunt),
 *   target (what uprobe/kprobe variants probe: "PATH:FUNCTION" or
 *   "BUILDID:FUNCTION" puts a uprobe, "kernel:FUNCTION" a kprobe, at every
 *   out-of-line and inlined copy of FUNCTION found in DWARF, each link
 *   pinned as link_<prog>__site<N> with N as its BPF cookie; see
 *   sites.bpf.h and docs/inline-sites.md; text without ':' ("sudo") only
 *   names what the shield watches, its programs attach by their SEC),
 *   modules (kernel modules the test needs, loaded in the order given; one
 *   neither loaded nor built in makes a test whose trigger fails n/a),
 *   prevents_<v> and detects_<v> (comma lists of the test's trigger path
 *   names, src/lib/shieldtest/shieldtest.h: the paths variant <v> refuses before the
 *   exploit's effect, and those it only sees, e.g. kills after the call;
 *   a path in neither is "not covered" by <v> and its test row partial;
 *   fmod_ret with neither takes lsm's: the same body, KS_SECURITY_HOOK),
 *   requires_<v> (kernel features variant <v> is pointless without; the
 *   loader skips it, saying why, where one is missing: "compat" = 32-bit
 *   compat syscalls, for variants that watch only those), requires (the
 *   same for every variant; also "before-X.Y", the kernel's release below
 *   X.Y, and "no-member:STRUCT.MEMBER", the kernel's BTF struct without
 *   that direct member: the window of kernels where the bug can exist;
 *   outside it nothing loads and `kshield test` says n/a, unless a path
 *   showed the effect without the shield; KSHIELD_FIT_RELEASE stands in
 *   for the release, to prove and measure a shield outside its window),
 *   state_check (the shield refuses a kernel state that only arises where
 *   its bug is live, e.g. cve-2022-0847: where it is fixed, a path with no
 *   effect without the shield nor with it is "fixed-here", not a failure
 *   to prevent; the value names the state), impact (the
 *   pattern `kshield shield impact` runs; else hunt, else signs),
 *   fix_function (comma list of the kernel functions the bug's fix
 *   changed: `kshield hooks --shield NAME` lists the refusal points on
 *   the paths to them and ranks the shield's own hooks among them). The README's "Writing a
 *   shield" has them as a table; `kshield shield new` writes a shield
 *   with the usual ones.
 *
 * Loops: the verifier walks a bounded loop one iteration at a time, and
 * stops at 8192 pending branch states ("The sequence of 8193 jumps is too
 * complex": a 4096-step scan with a branch per step hits it) or 1M
 * processed instructions. Scan with bpf_loop (5.17+; its callback is
 * verified once) and keep the __noloop twin's bounded loop (kernels
 * without bpf_loop, bpf/sdk/fit.bpf.h) to a few hundred cheap steps, or
 * larger units per step: nlwalk.bpf.h's NLW_STEPS / NLW_NOLOOP_STEPS.
 */
#ifndef KSHIELD_SHIELD_BPF_H
#define KSHIELD_SHIELD_BPF_H

#include "kshield.bpf.h"
#include "syscalls.bpf.h"
#include "override.bpf.h"
#include "fpchain.bpf.h"
#include "kconst.bpf.h"
#include <kshield/shield.h>

#define KSHIELD_META(key, val)						\
	static const char __ks_meta_##key[]				\
	__attribute__((section(KS_META_SECTION), used)) = #key "=" val

#define KSHIELD_NAME(n)							\
	KSHIELD_META(name, n);						\
	static const char ks_shield_name[KS_NAME_LEN] = n

#define KSHIELD_VARIANTS(v)	KSHIELD_META(variants, v)

/* The event's four argument words by name, per hook: what an agent shows
 * of a hit, read from this object (an agent older than the shield knows
 * nothing else of it). One line per hook a ks_refuse/ks_kill/ks_deny of
 * the shield names; slots are "-" (unused) or NAME:FORMAT with FORMAT
 * int, uint, hex, bool, fd, errno, family (AF_*), socktype, syscall,
 * syscall32 (the 32-bit ABI's numbers), dev (a dev_t), str8 (8 bytes of
 * a name), enum:TABLE or flags:TABLE (a KSHIELD_VALS table of the object):
 *
 *	KSHIELD_ARGS("socket_bind", "family:family addrlen:int name:str8 "
 *		     "fail_closed:enum:bind_fail");
 *	KSHIELD_VALS(bind_fail, "1=mark_not_stored 2=name_not_read");
 *	KSHIELD_ARGS_IF("file_permission", 2, 1, "...");  // when args[2] == 1
 *
 * kconst.bpf.h has the tables of the kernel's constants (KS_VALS_MSG_FLAGS,
 * ...). The strings are the metadata keys "args/1" and "vals/1"
 * (src/lib/events/events.h has the grammar). */
/* __KS_CAT: fpchain.bpf.h */
#define __KS_META_ENTRY(key, val)					\
	static const char __KS_CAT(__ks_meta_e, __COUNTER__)[]		\
	__attribute__((section(KS_META_SECTION), used)) = key "=" val
#define KSHIELD_ARGS(hook, slots)	__KS_META_ENTRY("args/1", hook " " slots)
#define KSHIELD_ARGS_IF(hook, i, v, slots)				\
	__KS_META_ENTRY("args/1", hook "?a" #i "=" #v " " slots)
/* An SDK header's default for a hook it reports: used only when the
 * shield names that hook nowhere else. */
#define KSHIELD_ARGS_FALLBACK(hook, slots)				\
	__KS_META_ENTRY("args/1", hook "~ " slots)
#define KSHIELD_VALS(table, vals)	__KS_META_ENTRY("vals/1", #table " " vals)

char LICENSE[] SEC("license") = "GPL";

/* Defined by KSHIELD_NAME in the shield; declared here for the helpers. */
static const char ks_shield_name[KS_NAME_LEN];

/* Runtime mode and identity, written by the loader, pinned per shield. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_shield_cfg);
} ks_cfg SEC(".maps");

/* Hits per verdict (enum ks_verdict), pinned per shield. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KS_VERDICT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} ks_stats SEC(".maps");

static __always_inline struct ks_shield_cfg *ks_config(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ks_cfg, &zero);
}

static __always_inline __u32 __ks_hit(const char *hook, __u32 verdict_enforce,
				      __u64 a0, __u64 a1, __u64 a2, __u64 a3)
{
	struct ks_shield_cfg *cfg = ks_config();
	struct ks_shield_event *e;
	__u32 mode = cfg ? cfg->mode : KS_MODE_ENFORCE;
	__u32 verdict = mode == KS_MODE_AUDIT ? KS_VERDICT_AUDITED : verdict_enforce;
	__u64 *n;

	n = bpf_map_lookup_elem(&ks_stats, &verdict);
	if (n)
		(*n)++;

	e = ks_reserve(KS_EV_SHIELD, sizeof(*e));
	if (e) {
		ks_fill_hdr(&e->hdr, KS_EV_SHIELD, sizeof(*e));
		__builtin_memcpy(e->shield, ks_shield_name, KS_NAME_LEN);
		__builtin_memcpy(e->hook, hook, KS_HOOK_LEN);
		if (cfg)
			__builtin_memcpy(e->variant, cfg->variant, KS_VARIANT_LEN);
		else
			__builtin_memset(e->variant, 0, KS_VARIANT_LEN);
		e->verdict = verdict;
		e->mode = mode;
		e->args[0] = a0;
		e->args[1] = a1;
		e->args[2] = a2;
		e->args[3] = a3;
		bpf_ringbuf_submit(e, 0);
	}
	return verdict;
}

/* The hook name is copied whole into the event, so it is padded here. */
#define __KS_HOOK(h) ({ static const char __h[KS_HOOK_LEN] = h; __h; })

/* Record a hit and say whether to refuse: true in enforce mode, false in
 * audit mode. The caller turns it into its program type's refusal (-EPERM
 * for LSM/fmod_ret, 0 for cgroup programs). */
#define ks_refuse(hook, a0, a1, a2, a3)					\
	(__ks_hit(__KS_HOOK(hook), KS_VERDICT_REFUSED,			\
		  (__u64)(a0), (__u64)(a1), (__u64)(a2), (__u64)(a3))	\
	 == KS_VERDICT_REFUSED)

/* Last resort for hooks that cannot refuse (tracepoints, uprobes): record a
 * hit and, in enforce mode, SIGKILL the caller before the call proceeds. */
#define ks_kill(hook, a0, a1, a2, a3)					\
	({								\
		int __killed = __ks_hit(__KS_HOOK(hook), KS_VERDICT_KILLED, \
					(__u64)(a0), (__u64)(a1),	\
					(__u64)(a2), (__u64)(a3))	\
			       == KS_VERDICT_KILLED;			\
		if (__killed)						\
			bpf_send_signal(SIGKILL);			\
		__killed;						\
	})

/* One body, two variants: "lsm__<name>" on LSM hook @hook and
 * "fmod_ret__<name>" on @fn, the kernel function that calls it (the
 * verifier allows fmod_ret on every security_* function), each with its
 * twin "...__noloop" that the loader picks where bpf_loop is missing
 * (bpf/sdk/fit.bpf.h); the body sees `noloop` (a constant) and must not
 * call bpf_loop when it is true. Both get the hook's arguments, then the
 * return value of the programs before them (the last argument): a refusal
 * already made is kept and the body not run. The body returns 0 for "no
 * decision" or -errno to refuse, whatever the hook's own "not mine" value
 * is: an lsm program's 0 lets the hook's default run (-ENOPARAM for
 * fs_context_parse_param), and an fmod_ret program's 0 lets the security_
 * function run, every other LSM included; any other value there skips
 * them all. `ks_deny(a0, a1, a2, a3)` records a hit on this hook and gives
 * the refusal (-EPERM, or 0 in audit mode). For int hooks whose security_
 * function takes the same arguments; write two programs around a shared
 * helper where they differ (mmap_file: the hook has reqprot,
 * security_mmap_file not), and use fentry for void hooks. */
/* On a hot hook (file_permission: bpf/sdk/fpchain.bpf.h) the programs
 * are chain members: each ends by running the next member when it made no
 * decision, and the loader registers them with the hook's one kshield
 * program instead of attaching them. */
#define __KS_SECURITY_PROG(sec, prog, name, noloop, hook, fpv, fpprogs)	\
SEC(sec)								\
int prog(unsigned long long *ctx)					\
{									\
	int __v = ____ks_entry_##name(ctx, noloop);			\
									\
	if (KS_HOOK_IS_HOT(hook))					\
		return ks_fp_next(ctx, fpv, &fpprogs, __v, KS_FP_SELF(hook)); \
	return __v;							\
}
#define KS_SECURITY_HOOK_FN(name, hook, fn, args...)			\
__KS_FP_META(name, hook)						\
static const char __ks_hook_##name[KS_HOOK_LEN] = #hook;		\
static __always_inline int ____ks_##name(unsigned long long *ctx, args,	\
					 const char *ks_hook, bool noloop);	\
static __always_inline int ____ks_entry_##name(unsigned long long *ctx, bool noloop) \
{									\
	int __prev = (int)ctx[___bpf_narg(args)];			\
									\
	if (__prev)							\
		return __prev;						\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")		\
	return ____ks_##name(___bpf_ctx_cast(args), __ks_hook_##name, noloop); \
	_Pragma("GCC diagnostic pop")					\
}									\
__KS_SECURITY_PROG("lsm/" #hook, lsm__##name, name, false, hook,	\
		   KS_FP_LSM, ks_fp_progs_lsm)				\
__KS_SECURITY_PROG("lsm/" #hook, lsm__##name##__noloop, name, true, hook, \
		   KS_FP_LSM, ks_fp_progs_lsm)				\
__KS_SECURITY_PROG("fmod_ret/" #fn, fmod_ret__##name, name, false, hook, \
		   KS_FP_FMOD_RET, ks_fp_progs_fmod_ret)		\
__KS_SECURITY_PROG("fmod_ret/" #fn, fmod_ret__##name##__noloop, name, true, hook, \
		   KS_FP_FMOD_RET, ks_fp_progs_fmod_ret)		\
static __always_inline int ____ks_##name(unsigned long long *ctx, args,	\
					 const char *ks_hook, bool noloop)

/* The common case: the function is security_<hook>. */
#define KS_SECURITY_HOOK(name, hook, args...)				\
	KS_SECURITY_HOOK_FN(name, hook, security_##hook, ##args)

/* In a KS_SECURITY_HOOK body: record a hit on its hook with four
 * arguments for the event, and give the refusal: -EPERM when enforcing, 0
 * (no decision) in audit mode. */
#define ks_deny(a0, a1, a2, a3)						\
	(__ks_hit(ks_hook, KS_VERDICT_REFUSED, (__u64)(a0), (__u64)(a1), \
		  (__u64)(a2), (__u64)(a3)) == KS_VERDICT_REFUSED ? -EPERM : 0)

/* cgroup/setsockopt: let the call through unchanged. optlen 0 tells the
 * kernel to use the caller's own buffer: it saves a kmalloc+copy on every
 * setsockopt and avoids -EFAULT for options longer than a page on older
 * kernels. A refusal (return 0) ignores optlen, so a program may call this
 * first and decide after: a ctx store placed after helper calls can be
 * compiled as ctx + offset in a register, which the verifier refuses
 * ("dereference of modified ctx ptr"). */
static __always_inline int ks_sockopt_pass(struct bpf_sockopt *ctx)
{
	ctx->optlen = 0;
	return 1;
}

/* True when the current task's credentials belong to a user namespace other
 * than the initial one: the precondition of most unprivileged kernel LPEs.
 * Not enough on its own for objects made inside a namespace (sockets, fs
 * contexts): one can be passed out (SCM_RIGHTS) to its owner in the initial
 * namespace, who keeps every capability over the child namespace. Check the
 * object's namespace too (ks_sock_in_child_userns). */
static __always_inline bool ks_in_child_userns(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, cred, user_ns, level) > 0;
}

/* True when @sk's network namespace is owned by a non-initial user
 * namespace: CAP_NET_ADMIN there is within reach of an unprivileged user,
 * whoever makes the call on the socket. */
static __always_inline bool ks_sock_in_child_userns(struct sock *sk)
{
	return BPF_CORE_READ(sk, __sk_common.skc_net.net, user_ns, level) > 0;
}

/* The kernel socket of a cgroup/setsockopt or getsockopt program. ctx->sk
 * is a PTR_TO_SOCKET the verifier lets no one walk (no pointer arithmetic);
 * the kernel's own context (struct bpf_sockopt_kern) holds the same
 * pointer, read here as plain memory. NULL when it cannot be read. */
static __always_inline struct sock *ks_sockopt_sk(struct bpf_sockopt *ctx)
{
	struct bpf_sockopt_kern *k = (void *)ctx;

	return BPF_CORE_READ(k, sk);
}

/* ---- io_uring requests at submission (tp_btf/io_uring_submit_req, 6.3+;
 * io_uring_submit_sqe before) ----
 * The tracepoint fires in the submitting task after io_init_req (and the
 * op's prep): from io_uring_enter, and from the SQPOLL thread, an io
 * thread of the ring's process (not a kernel thread) that shares its
 * descriptor table. From 5.19 (6.1 here) req->cqe.fd holds the SQE's fd
 * and the file is assigned later (at issue), so it is looked up here: in
 * the task's table, or for IOSQE_FIXED_FILE (REQ_F_FIXED_FILE, bit 0 in
 * every version) in the ring's registered files, whose layout changed in
 * 6.13 (io_fixed_file array -> rsrc nodes). Before (Debian's 5.10 carries
 * 5.15's io_uring since 5.10.162) io_init_req assigned req->file itself,
 * registered files included, and io_uring_submit_sqe passed (ctx, req,
 * user_data, opcode, flags, force_nonblock, sq_thread), not (req,
 * force_nonblock). */
struct io_fixed_file___ks {
	unsigned long file_ptr;
} __attribute__((preserve_access_index));
struct io_file_table___ks_old {
	struct io_fixed_file___ks *files;
} __attribute__((preserve_access_index));
struct io_ring_ctx___ks_old {
	struct io_file_table___ks_old file_table;
	unsigned int nr_user_files;
} __attribute__((preserve_access_index));
struct io_rsrc_node___ks {
	unsigned long file_ptr;
} __attribute__((preserve_access_index));
struct io_rsrc_data___ks {
	unsigned int nr;
	struct io_rsrc_node___ks **nodes;
} __attribute__((preserve_access_index));
struct io_file_table___ks_new {
	struct io_rsrc_data___ks data;
} __attribute__((preserve_access_index));
struct io_ring_ctx___ks_new {
	struct io_file_table___ks_new file_table;
} __attribute__((preserve_access_index));
struct io_kiocb___ks {
	struct file *file;
	struct io_ring_ctx *ctx;
	__u8 opcode;
	__u32 flags;	/* u64 in 6.12 and later: its low word (little-endian) */
	struct io_cqe cqe;
} __attribute__((preserve_access_index));

/* Does this kernel's io_kiocb carry the SQE's fd (req->cqe.fd, 5.19+)? */
#define ks_uring_req_has_fd() bpf_core_field_exists(((struct io_kiocb___ks *)0)->cqe)

/* The request of a tp_btf/io_uring_submit_sqe program's @ctx. Both
 * arguments are read at fixed offsets, then chosen: a choice of offset
 * compiles to ctx + 8, which verifiers refuse ("dereference of modified
 * ctx ptr", 5.10). */
static __always_inline struct io_kiocb *ks_uring_sqe_req(unsigned long long *ctx)
{
	__u64 a0 = *(volatile __u64 *)&ctx[0], a1 = *(volatile __u64 *)&ctx[1];

	return (struct io_kiocb *)(long)(ks_uring_req_has_fd() ? a0 : a1);
}

/* The request's opcode and, where the request carries it, its fd (-1). */
#define ks_uring_req_op(req)	BPF_CORE_READ((struct io_kiocb___ks *)(req), opcode)
#define ks_uring_req_fd(req)						\
	(ks_uring_req_has_fd() ? BPF_CORE_READ((struct io_kiocb___ks *)(req), cqe.fd) : -1)

#define KS_REQ_F_FIXED_FILE	1u
#define KS_FFS_MASK		(~7ul)	/* FFS_* flag bits of a file_ptr */

/* The file a request targets at submission, or NULL. */
static __always_inline struct file *ks_uring_req_file(struct io_kiocb *r)
{
	struct io_kiocb___ks *req = (void *)r;
	unsigned long ptr = 0;
	int fd;

	if (!ks_uring_req_has_fd())
		return BPF_CORE_READ(req, file);
	fd = BPF_CORE_READ(req, cqe.fd);
	if (!(BPF_CORE_READ(req, flags) & KS_REQ_F_FIXED_FILE))
		return ks_fd_file(fd);
	if (fd < 0)
		return NULL;
	if (bpf_core_field_exists(((struct io_ring_ctx___ks_new *)0)->file_table.data.nodes)) {
		struct io_ring_ctx___ks_new *ctx = (void *)BPF_CORE_READ(req, ctx);
		struct io_rsrc_node___ks **nodes = BPF_CORE_READ(ctx, file_table.data.nodes);
		struct io_rsrc_node___ks *node = NULL;

		if ((unsigned int)fd >= BPF_CORE_READ(ctx, file_table.data.nr) ||
		    bpf_probe_read_kernel(&node, sizeof(node), &nodes[fd]) || !node)
			return NULL;
		ptr = BPF_CORE_READ(node, file_ptr);
	} else if (bpf_core_field_exists(((struct io_ring_ctx___ks_old *)0)->file_table.files)) {
		struct io_ring_ctx___ks_old *ctx = (void *)BPF_CORE_READ(req, ctx);
		struct io_fixed_file___ks *files = BPF_CORE_READ(ctx, file_table.files);

		if ((unsigned int)fd >= BPF_CORE_READ(ctx, nr_user_files) ||
		    bpf_probe_read_kernel(&ptr, sizeof(ptr), &files[fd].file_ptr))
			return NULL;
	}
	return (struct file *)(ptr & KS_FFS_MASK);
}

#endif /* KSHIELD_SHIELD_BPF_H */
