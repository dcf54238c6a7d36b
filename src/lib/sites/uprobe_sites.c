// SPDX-License-Identifier: MIT
/* uprobe_sites.c - attach a uprobe program at each DWARF-resolved copy of a
 * function: raw file offsets (no symbol lookup, which would find only the
 * out-of-line copy), one link per site, the site index as BPF cookie so the
 * program knows which copy fired, and the per-site argument table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "uprobe_sites.h"

#define DETACH_THREADS	32

struct detach {
	struct bpf_link **links;
	int n, stride;
};

static void *detach_stripe(void *arg)
{
	struct detach *d = arg;

	for (int i = 0; i < d->n; i += d->stride)
		bpf_link__destroy(d->links[i]);
	return NULL;
}

void ks_uprobe_links_free(struct bpf_link **links, int nlinks)
{
	/* Each detach waits out an RCU grace period in the kernel (about
	 * 0.2 s on a loaded host): one by one, 300 copies took a minute.
	 * Detaches running at once share their grace periods. */
	struct detach d[DETACH_THREADS];
	pthread_t th[DETACH_THREADS];
	int i, nt = nlinks < DETACH_THREADS ? nlinks : DETACH_THREADS, started = 0;

	for (i = 1; i < nt; i++) {
		d[i] = (struct detach){ links + i, nlinks - i, nt };
		if (pthread_create(&th[i], NULL, detach_stripe, &d[i]))
			break;
		started = i;
	}
	/* This thread takes stripe 0, and any stripe that got no thread. */
	for (i = 0; i < nlinks; i++)
		if (i % (nt ? nt : 1) == 0 || i % nt > started)
			bpf_link__destroy(links[i]);
	for (i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	free(links);
}

int ks_site_info_store(struct bpf_map *sites_map, int i, const struct ks_site *site,
		       bool kernel)
{
	struct ks_site_info info;
	__u32 key = i;
	int err;

	ks_site_info(site, &info);
	info.kernel = kernel;
	err = bpf_map__update_elem(sites_map, &key, sizeof(key), &info, sizeof(info), 0);
	if (err)
		return ks_err(err, "can't write site %d into %s: %s", i,
			      bpf_map__name(sites_map), strerror(-err));
	return 0;
}

int ks_sites_attach_each(struct bpf_program *prog, const struct ks_sites *s,
			 struct bpf_map *sites_map, bool kernel, ks_site_attach_fn attach,
			 void *ctx, struct bpf_link ***links, int *nlinks)
{
	struct bpf_link **l = calloc(s->nsites ? s->nsites : 1, sizeof(*l));
	int n = 0, err = 0;

	if (!l)
		return ks_err(-ENOMEM, "out of memory");
	for (int i = 0; i < s->nsites; i++) {
		if (sites_map && (err = ks_site_info_store(sites_map, i, &s->site[i], kernel)))
			goto fail;
		if (!s->site[i].probeable)
			continue;
		if ((err = attach(prog, s, i, ctx, &l[n])))
			goto fail;
		n++;
	}
	*links = l;
	*nlinks = n;
	return 0;
fail:
	ks_uprobe_links_free(l, n);
	return err;
}

/* ks_site_attach_fn of uprobes; @ctx: the pid. */
static int attach_uprobe(struct bpf_program *prog, const struct ks_sites *s, int i, void *ctx,
			 struct bpf_link **link)
{
	const struct ks_site *site = &s->site[i];
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = i);
	int err;

	*link = bpf_program__attach_uprobe_opts(prog, *(int *)ctx, s->binary, site->offset, &opts);
	if (*link)
		return 0;
	err = -errno;
	return ks_err(err, "%s: uprobe at %s+0x%llx (copy #%d of %s in %s): %s",
		      bpf_program__name(prog), s->binary, (unsigned long long)site->offset, i,
		      s->function, site->caller, strerror(-err));
}

int ks_uprobe_attach_resolved(struct bpf_program *prog, const struct ks_sites *s,
			      int pid, struct bpf_map *sites_map, unsigned flags,
			      struct bpf_link ***links, int *nlinks)
{
	int i;

	*links = NULL;
	*nlinks = 0;
	/* The cookie (site index) is a u64: only the argument table limits
	 * how many copies one program tells apart. */
	if (sites_map && s->nsites > (int)bpf_map__max_entries(sites_map))
		return ks_err(-E2BIG, "%s has %d copies in %s, more than the %u entries of %s "
			      "(size it before the load)", s->function, s->nsites, s->binary,
			      bpf_map__max_entries(sites_map), bpf_map__name(sites_map));
	if (!(flags & KS_SITES_PARTIAL) && s->missing_dwo)
		return ks_err(-ENOENT, "%s: %d split DWARF units (.dwo) not found: copies of %s "
			      "in them would go unprobed", s->binary, s->missing_dwo, s->function);
	if (!(flags & KS_SITES_PARTIAL))
		for (i = 0; i < s->nsites; i++)
			if (!s->site[i].probeable && !s->site[i].covered)
				return ks_err(-EOPNOTSUPP, "%s: copy #%d of %s in %s at 0x%llx "
					      "cannot carry a uprobe: %s", s->binary, i,
					      s->function, s->site[i].caller,
					      (unsigned long long)s->site[i].addr, s->site[i].why);
	return ks_sites_attach_each(prog, s, sites_map, false, attach_uprobe, &pid, links, nlinks);
}
