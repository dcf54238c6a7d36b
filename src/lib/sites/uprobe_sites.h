/* SPDX-License-Identifier: MIT */
/* uprobe_sites.h - attach one uprobe program at every copy of a function
 * (dwsites.h), at raw file offsets, each link carrying its site index as the
 * BPF cookie. Used by the loader for shields that declare
 * KSHIELD_META(target, "PATH:FUNCTION") or "BUILDID:FUNCTION" (it resolves
 * the sites itself, before the load), and by `kshield sites trace`.
 */
#ifndef KSHIELD_UPROBE_SITES_H
#define KSHIELD_UPROBE_SITES_H

#include <bpf/libbpf.h>
#include "dwsites.h"

/* Attach even when some sites cannot carry a uprobe (they are reported in
 * the sites list). Without it, one such site fails the whole attach: a
 * shield with a hole is worse than a shield that says it cannot load. */
#define KS_SITES_PARTIAL	(1u << 0)

/* Attach @prog (already loaded) at every probeable site of @s, for process
 * @pid only (-1: every process that maps the binary). When
 * @sites_map (an array of struct ks_site_info, may be NULL) is given, each
 * site's argument locations are written at its index (-E2BIG when the map
 * has fewer entries than @s has sites: the loader and `sites trace` size it
 * before the load). On success *@links
 * is a malloc'ed array of *@nlinks links, in site order (unprobeable sites
 * have none); free it with ks_uprobe_links_free(). All or nothing: on
 * failure nothing stays attached. Returns 0 or -errno, message recorded. */
int ks_uprobe_attach_resolved(struct bpf_program *prog, const struct ks_sites *s,
			      int pid, struct bpf_map *sites_map, unsigned flags,
			      struct bpf_link ***links, int *nlinks);

/* Write copy @i's argument locations (struct ks_site_info) into
 * @sites_map; @kernel marks a kprobe site (kernel_sites.c). */
int ks_site_info_store(struct bpf_map *sites_map, int i, const struct ks_site *site,
		       bool kernel);

/* Attach one copy: site @i of @s (probeable), *@link set; 0 or -errno,
 * message recorded. */
typedef int (*ks_site_attach_fn)(struct bpf_program *prog, const struct ks_sites *s, int i,
				 void *ctx, struct bpf_link **link);
/* The loop of ks_uprobe_attach_resolved and ks_kprobe_attach_resolved:
 * each site's info into @sites_map (when given), @attach at each probeable
 * one; all or nothing, *@links and *@nlinks as they describe. */
int ks_sites_attach_each(struct bpf_program *prog, const struct ks_sites *s,
			 struct bpf_map *sites_map, bool kernel, ks_site_attach_fn attach,
			 void *ctx, struct bpf_link ***links, int *nlinks);

/* Destroy (detach, unless pinned) and free what an attach returned; from
 * several threads, since each detach waits for a kernel grace period. */
void ks_uprobe_links_free(struct bpf_link **links, int nlinks);

#endif /* KSHIELD_UPROBE_SITES_H */
