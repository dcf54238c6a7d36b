/* SPDX-License-Identifier: GPL-2.0-only */
/* sites.bpf.h - for uprobe and kprobe programs attached at every
 * DWARF-resolved copy of a function (src/lib/sites/uprobe_sites.c for a shield whose
 * target is PATH:FUNCTION or BUILDID:FUNCTION, src/lib/sites/kernel_sites.c for
 * kernel:FUNCTION): which site fired, and the value of a parameter there.
 *
 * The BPF cookie of each link is the site's index, also the <N> of its pin
 * link_<prog>__site<N>. A kernel copy is probed at symbol+offset from the
 * running build's vmlinux DWARF or its sites manifest; a parameter held in
 * memory there is read as kernel memory. An inlined copy does not
 * receive its arguments in the calling-convention registers, so user space
 * writes each site's parameter locations (from DWARF) into the "ks_sites"
 * array, and ks_site_arg() reads a parameter through it. A location DWARF
 * cannot express at a site reads as "unavailable" (returns -ENOENT), never
 * as a guessed register.
 */
#ifndef KSHIELD_SITES_BPF_H
#define KSHIELD_SITES_BPF_H

#include <kshield/sites.h>

#ifndef ENOENT
#define ENOENT 2
#endif

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_SITES_MAX);
	__type(key, __u32);
	__type(value, struct ks_site_info);
} ks_sites SEC(".maps");

/* Index of the site that fired (its BPF cookie). */
static __always_inline __u32 ks_site_id(struct pt_regs *ctx)
{
	return (__u32)bpf_get_attach_cookie(ctx);
}

/* Parameter @i of the function at the site that fired, into *@val.
 * Returns 0, or -ENOENT when DWARF says the value is not available here. */
static __always_inline int ks_site_arg(struct pt_regs *ctx, __u32 i, __u64 *val)
{
	__u32 id = ks_site_id(ctx);
	struct ks_site_info *si = bpf_map_lookup_elem(&ks_sites, &id);
	struct ks_argloc *l;
	__u64 base = 0, v = 0;
	__u32 sz;

	if (!si || i >= KS_SITE_MAX_ARGS || i >= si->nargs)
		return -ENOENT;
	l = &si->args[i];
	if (l->kind == KS_ARGLOC_CONST) {
		*val = l->value;
		return 0;
	}
	if (l->kind == KS_ARGLOC_REG || l->kind == KS_ARGLOC_MEM) {
		if (l->reg >= sizeof(struct pt_regs) / 8)
			return -ENOENT;
		if (bpf_probe_read_kernel(&base, 8, (void *)ctx + l->reg * 8))
			return -ENOENT;
		if (l->kind == KS_ARGLOC_REG) {
			*val = base;
			return 0;
		}
		base += l->value;
	} else if (l->kind == KS_ARGLOC_ADDR) {
		base = l->value;
	} else {
		return -ENOENT;
	}
	sz = l->size;
	if (!sz || sz > 8)
		sz = 8;
	if (si->kernel ? bpf_probe_read_kernel(&v, sz & 15, (void *)base)
		       : bpf_probe_read_user(&v, sz & 15, (void *)base))
		return -ENOENT;
	*val = v;
	return 0;
}

#endif /* KSHIELD_SITES_BPF_H */
