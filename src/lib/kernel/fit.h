/* SPDX-License-Identifier: MIT */
/* fit.h - fit one CO-RE object to the running kernel before it loads:
 * the user-space half of bpf/sdk/fit.bpf.h. What a kernel lacks is named
 * (feature and the release that brought it), never guessed from uname.
 */
#ifndef KSHIELD_FIT_H
#define KSHIELD_FIT_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct bpf_program;
struct bpf_link;

/* Task storage maps become LRU hashes keyed by thread id on kernels
 * without BPF_MAP_TYPE_TASK_STORAGE (5.11) or without BTF of their own;
 * ks_task_storage_get() in bpf/sdk/fit.bpf.h reads them either way. The
 * object's ks_fit_nobtf (.rodata) is set where the kernel has no BTF of
 * its own. Every loader calls this after open, before load. */
int ks_fit_prepare(struct bpf_object *obj);

/* Program-name suffixes the loaders act on, all decided here: by
 * ks_fit_select, and "__nobtf" by ks_fit_kernel_btf.
 * Twins: "X__noloop" for kernels without bpf_loop (5.17), "X__raw" (a raw
 * tracepoint, bpf/sdk/fit.bpf.h KS_TRACEPOINT_SYSCALL_ENTER) for kernels
 * that cannot pin tracepoint links (5.15). Of the autoload
 * programs exactly one of X, X__noloop, X__raw loads. Call after choosing
 * the variant. */
#define KS_NOLOOP_SUFFIX "__noloop"
#define KS_RAW_SUFFIX "__raw"
/* "X__compat32" (bpf/sdk/syscalls.bpf.h KS_SYSCALL_ENTER32 and the like): a
 * check of 32-bit compat syscalls, loaded only where the kernel runs 32-bit
 * code. (In kshield "compat" means that, and only that; the fitting of an
 * object to older kernels is "fit".) */
#define KS_COMPAT32_SUFFIX "__compat32"
/* "X__opt": a tp_btf program on a tracepoint that not every kernel has
 * (io_uring_submit_req, 6.3+): loaded only where the kernel's BTF has the
 * tracepoint (btf_trace_<name>); elsewhere the variant loads without it
 * and what it would have seen stays uncovered there (README, metadata).
 * Its raw_tp copy "X__opt__nobtf" asks the BTF found by build ID. */
#define KS_OPT_SUFFIX "__opt"
/* "X__sendpage" (or "X__sendpage__noloop"): loaded only where sockets
 * still have proto_ops.sendpage (before 6.5), through which splice and
 * sendfile into a socket bypass security_socket_sendmsg; from 6.5 they
 * pass it with MSG_SPLICE_PAGES, and a check on every read and write
 * (file_permission) is not needed. */
#define KS_SENDPAGE_SUFFIX "__sendpage"
/* "X__nobtf": a copy of tp_btf program "X" at the same raw tracepoint
 * (probed reads), for kernels without BTF of their own, where tp_btf
 * cannot attach; loaded exactly there, and "X" exactly elsewhere. */
#define KS_NOBTF_SUFFIX "__nobtf"
void ks_fit_select(struct bpf_object *obj);

/* The "__nobtf" rule for one program, for the monitor, which chooses its
 * programs one by one (bpf/monitor.bpf.c's exec and fork twins): where the
 * kernel has BTF the twin does not load; where it has none, no program
 * that attaches by it (tp_btf, fentry, fexit: BPF_PROG_TYPE_TRACING) does. */
bool ks_fit_kernel_btf(const struct bpf_program *prog);

/* Whether this kernel runs 32-bit code (x86-64: a 32-bit syscall is tried
 * in a child; arm64: the compat entry is in kallsyms). Cached. */
bool ks_kernel_runs_compat(void);

/* Whether sockets here have proto_ops.sendpage (before 6.5). */
bool ks_kernel_sendpage(void);

/* Whether @prog (autoload or not) calls a helper this kernel does not have
 * and cannot be hidden behind a CO-RE check (bpf_loop: its callback is a
 * subprogram older verifiers do not know; bpf_override_return, which
 * exists only with CONFIG_BPF_KPROBE_OVERRIDE). Fills @why with the
 * feature and returns true when it does. */
bool ks_fit_prog_missing(const struct bpf_program *prog, char *why, size_t len);

/* What a kernel offers a variant's programs, asked before they load. */
struct ks_kernel_offers {
	bool kernel_btf;	/* its own BTF: lsm, fentry/fexit/fmod_ret, tp_btf
				 * and struct_ops programs attach by it */
	bool loop;		/* bpf_loop (5.17) */
	bool kprobe_override;	/* bpf_override_return (BPF_KPROBE_OVERRIDE and
				 * FUNCTION_ERROR_INJECTION) on kprobes that keep
				 * it: the kprobe variants that refuse a call */
	bool kprobe_optimized;	/* the helper exists, but entry kprobes are
				 * jump-optimized (OPTPROBES without kprobes on
				 * ftrace), which drops the override */
};

/* The running kernel's offers. bpf_override_return is probed (a program
 * loaded, not attached, and whether entry kprobes can be jump-optimized:
 * /proc/sys/debug/kprobes-optimization, the function tracer; cached)
 * only when one of @obj's autoload programs calls it; else
 * kprobe_override is false. */
void ks_kernel_offers(struct bpf_object *obj, struct ks_kernel_offers *k);

/* Can every autoload program of @obj (one variant's, after
 * ks_fit_select) run on a kernel that offers @k? 0, or -EOPNOTSUPP with
 * @why naming the first program that cannot and what it needs. The
 * loader asks it before loading a variant; a variant it rules out is
 * passed over for the next in the shield's list (lsm and fmod_ret without
 * the kernel's BTF, a kprobe variant that overrides without
 * bpf_override_return: tp then). */
int ks_fit_variant_needs(struct bpf_object *obj, const struct ks_kernel_offers *k, char *why,
			 size_t len);

/* An attach error in words: 524 (ENOTSUPP, kernel-internal, no libc
 * name) is a kernel without BPF trampolines (arm64 before 6.0). */
const char *ks_attach_strerror(int err);

/* Whether every send and receive of every socket passes sock_sendmsg and
 * sock_recvmsg and their tracepoints (sock_send_length, 6.3; .sendpage
 * gone, 6.5): the monitor then accounts flows per call, not per packet. */
bool ks_kernel_flow_calls(void);

/* Whether this kernel pins links of tracepoint, kprobe and uprobe programs
 * (BPF_LINK_TYPE_PERF_EVENT, 5.15). Without it those links live only as
 * long as the process that made them. */
bool ks_kernel_perf_links(void);

/* Whether the link of @prog is one of those on a kernel that cannot pin it. */
bool ks_fit_link_unpinnable(const struct bpf_program *prog);

/* The running kernel's release as major * 256 + minor (uname; 0 when it
 * cannot be read). $KSHIELD_FIT_RELEASE ("5.10") stands in for it: for
 * proving and measuring, on a kernel outside a shield's window, the
 * programs that the window keeps from loading (never in production). */
int ks_kernel_release(void);

/* Does the running kernel's BTF have struct @type with member @member?
 * No BTF: true (do not guess). */
bool ks_kernel_struct_has(const char *type, const char *member);

/* Is requirement @req ("compat", "before-5.17", "no-member:S.M", see
 * bpf/sdk/shield.bpf.h) met by this kernel? 0 yes; -EOPNOTSUPP no, with
 * @why saying what this kernel has; -EINVAL for a requirement unknown. */
int ks_kernel_meets(const char *req, char *why, size_t len);

/* Does the running kernel's BTF enum @type have a value named @value?
 * Parses the BTF (megabytes) each call and frees it: not for hot paths. */
bool ks_kernel_enum_has(const char *type, const char *value);

#endif
