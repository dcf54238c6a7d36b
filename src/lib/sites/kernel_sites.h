/* SPDX-License-Identifier: MIT */
/* kernel_sites.h - every copy of a kernel function, out of line and inlined,
 * probed with one kprobe each at symbol+offset (KASLR moves addresses, not
 * offsets into a symbol), each link carrying its site index as BPF cookie.
 *
 * Sites come from the vmlinux DWARF of the exact running build (found by
 * the build ID in /sys/kernel/notes), or from a sites manifest: the same
 * resolution done once where the -dbg package is (`kshield sites export`)
 * and shipped as a small JSON file keyed by the kernel's build ID, for
 * machines that will never carry a 500 MB vmlinux. A manifest or vmlinux of
 * another build is refused: an offset from another build lands mid-
 * instruction or in another function.
 *
 * Manifests are looked up as $KSHIELD_SITES_DIR/<build-id>.json (default
 * directory /var/lib/kshield/sites; the agent's sites_dir). Under a signing
 * policy (the agent's trusted keys, or $KSHIELD_SITES_KEYS) every manifest
 * read must carry a detached signature FILE.sig by one of those keys
 * (sign.h, KS_SIGN_SITES): the build ID guards against another kernel, the
 * signature against a forged file. Format (docs/inline-sites.md):
 *   {"kshield_sites": 1, "build_id": "...", "release": "...", "arch": "x86_64",
 *    "vmlinux": "...", "functions": [{"function": "...", "sites": [...]}]}
 */
#ifndef KSHIELD_KERNEL_SITES_H
#define KSHIELD_KERNEL_SITES_H

#include <stdio.h>
#include <bpf/libbpf.h>
#include "buildid.h"	/* ks_kernel_build_id(), ks_kernel_vmlinux_find() */
#include "dwsites.h"

#define KS_SITES_DIR_DEFAULT	"/var/lib/kshield/sites"

/* The manifest directory and the trusted keys manifests must be signed by,
 * for this process (NULL: leave as is; "": unset); unset, they come from
 * $KSHIELD_SITES_DIR (else KS_SITES_DIR_DEFAULT) and $KSHIELD_SITES_KEYS.
 * The agent calls this before loading anything. */
void ks_kernel_sites_policy(const char *dir, const char *keys_dir);
const char *ks_kernel_sites_dir(void);
/* The trusted keys directory, or NULL when manifests need no signature. */
const char *ks_kernel_sites_keys(void);

/* Where kernel sites come from: an explicit vmlinux (any build: for making
 * manifests), an explicit manifest (must match the running kernel), or
 * neither (manifest directory, then the local vmlinux, both by the running
 * kernel's build ID). */
struct ks_kernel_src {
	const char *vmlinux;
	const char *manifest;
};

/* Every copy of kernel @function (see above). Returns 0 or -errno, with a
 * one-line message that says what to do. Free with ks_sites_free(). */
int ks_kernel_sites(const char *function, const struct ks_kernel_src *src,
		    struct ks_sites *s);

/* Write resolved functions (all of one vmlinux) as a manifest to @f. */
int ks_sites_manifest_write(FILE *f, const struct ks_sites *fns, int n);
/* Read @function's sites from manifest @path. When @want_build_id is not
 * NULL, a manifest of another build is refused (-EILSEQ). -ENOENT when the
 * manifest does not list the function. Under a signing policy (above), an
 * unsigned manifest is refused with -ENODATA, one signed by an unknown key
 * with -ENOKEY, an altered one with -EBADMSG. */
int ks_sites_manifest_read(const char *path, const char *function,
			   const char *want_build_id, struct ks_sites *s);

/* Whether @path is a sites manifest (version 1, with a build ID). */
int ks_sites_manifest_check(const char *path);

/* Whether this kernel has kprobes (the kprobe perf event source); when not,
 * @why says so in one line. */
bool ks_kprobes_available(char *why, size_t len);

/* Attach @prog (loaded, of type kprobe) at every probeable site of @s, one
 * kprobe each at symbol+offset with the site index as cookie, writing the
 * per-site argument table into @sites_map when given. All or nothing, like
 * ks_uprobe_attach_resolved() (same @flags, same limit: the entries of
 * @sites_map). Refuses at once on a kernel without kprobes. Free with
 * ks_uprobe_links_free(). */
int ks_kprobe_attach_resolved(struct bpf_program *prog, const struct ks_sites *s,
			      struct bpf_map *sites_map, unsigned flags,
			      struct bpf_link ***links, int *nlinks);

#endif /* KSHIELD_KERNEL_SITES_H */
