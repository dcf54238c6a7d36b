/* SPDX-License-Identifier: MIT */
/* btf_find.h - the running kernel's BTF, also where the kernel carries none.
 *
 * CO-RE relocates every program against the kernel's BTF. Kernels built
 * without CONFIG_DEBUG_INFO_BTF (appliance, Yocto, OpenWrt builds) have no
 * /sys/kernel/btf/vmlinux; their BTF is found by the kernel's GNU build ID
 * (/sys/kernel/notes), in order:
 *   1. btf_dir/<build-id>.btf (default /var/lib/kshield/btf); a fleet agent
 *      writes there the BTF a shield's signed bundle carries for this
 *      kernel (fleet_btf.h) before it loads the shield;
 *   2. the debuginfod servers of $DEBUGINFOD_URLS: the build's .BTF section
 *      (/buildid/ID/section/.BTF), cached into btf_dir;
 *   3. the build's DWARF (a -dbg package's vmlinux, the .build-id trees,
 *      debuginfod's /buildid/ID/debuginfo) converted by
 *      `pahole --btf_encode_detached` into btf_dir/<build-id>.btf.
 * Every loader opens its objects through ks_btf_open_opts(), so they all
 * relocate against the same file.
 */
#ifndef KSHIELD_BTF_FIND_H
#define KSHIELD_BTF_FIND_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct bpf_object_open_opts;

#define KS_BTF_DIR_DEFAULT	"/var/lib/kshield/btf"
#define KS_SYSFS_BTF		"/sys/kernel/btf/vmlinux"

struct ks_btf_src {
	char path[PATH_MAX];	/* the BTF file; "" = the kernel's own */
	char build_id[129];	/* the kernel's, "" when it has its own BTF */
	char source[160];	/* "kernel", "btf_dir", "the signed bundle of
				 * SHIELD", "debuginfod", "debuginfod DWARF" (or
				 * "debug package DWARF", ...: converted by pahole) */
};

/* btf_dir: @dir (the agent's config, --btf-dir), else $KSHIELD_BTF_DIR,
 * else KS_BTF_DIR_DEFAULT. NULL or "" keeps the current one. Call before
 * any load (not thread-safe against lookups). */
void ks_btf_set_dir(const char *dir);
const char *ks_btf_dir(void);

/* Whether the kernel has BTF of its own: $KSHIELD_SYSFS_BTF (for tests:
 * "/nonexistent" makes a BTF kernel look like one without) or
 * /sys/kernel/btf/vmlinux is readable. */
bool ks_btf_kernel_has(void);

/* Find the running kernel's BTF (above). Returns 0 with @out filled, or
 * -ENOENT with the one line "no BTF found for build ID X: put X.btf in
 * DIR" recorded (or another -errno: unreadable build ID, a file in btf_dir
 * that is not BTF, pahole failing). A success is kept for the process:
 * later calls are cheap and thread-safe. */
int ks_btf_find(struct ks_btf_src *out);

/* Set @opts->btf_custom_path to the external BTF when the kernel has none
 * of its own (left NULL when it has). Returns 0, or ks_btf_find()'s error. */
int ks_btf_open_opts(struct bpf_object_open_opts *opts);

/* 0 when @path parses as BTF (raw, or an ELF with .BTF), else -EINVAL with
 * one line (a truncated or foreign file must not reach libbpf). */
int ks_btf_check(const char *path);
/* 0 when @len bytes at @buf are raw BTF (what `btf export` and `btf min`
 * write), else -EINVAL with one line. */
int ks_btf_check_buf(const void *buf, size_t len);

/* Keep @len bytes of BTF (already checked against what a signed record
 * says of them) as btf_dir/<@build_id>.btf, with <@build_id>.btf.from
 * beside it naming @from (a shield) and their sha256 @sha: the lookup then
 * names "the signed bundle of @from" as the source, as long as the file
 * still has that sha256. Returns 0 or -errno with one line; the bytes are
 * refused (-EINVAL, nothing written) when they are not raw BTF. */
int ks_btf_keep_bundled(const char *build_id, const void *buf, size_t len, const char *from,
			const char *sha);

/* Write detached BTF of @vmlinux (an ELF with DWARF) to @out with pahole
 * --btf_encode_detached, through a temporary file renamed over @out.
 * Returns 0, or -errno with pahole's last line of complaint recorded
 * (-ENOEXEC: pahole is not installed). */
int ks_btf_encode(const char *vmlinux, const char *out);

/* The BTF of @btf cut to what the CO-RE relocations of @objs[0..@n) use
 * (`bpftool gen min_core_btf`), into @out, plus the btf_trace_<name>
 * typedef of each of their raw_tp and tp_btf tracepoints that @btf has
 * (the loader looks for it to know the tracepoint is in the build;
 * structs behind its arguments as forward declarations): a shield can
 * carry many kernels' BTF in kilobytes. Returns 0 or -errno with bpftool's
 * complaint. */
int ks_btf_min(const char *btf, const char *out, const char *const *objs, int n);

#endif /* KSHIELD_BTF_FIND_H */
