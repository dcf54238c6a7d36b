// SPDX-License-Identifier: MIT
/* site_trace.c - bpf/inline_probe.bpf.c at every copy of a function: see
 * site_trace.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "btf_find.h"
#include "err.h"
#include "kernel_sites.h"
#include "site_trace.h"
#include "uprobe_sites.h"
#include "inline_probe.skel.h"

struct ks_site_trace {
	struct inline_probe_bpf *skel;
	struct bpf_link **links;
	int nlinks;
};

int ks_site_trace_open(const struct ks_sites *s, bool kill, struct ks_site_trace **out)
{
	LIBBPF_OPTS(bpf_object_open_opts, oopts);
	struct ks_site_trace *t;
	int err;

	*out = NULL;
	if (!(t = calloc(1, sizeof(*t))))
		return ks_err(-ENOMEM, "out of memory");
	if ((err = ks_btf_open_opts(&oopts)))
		goto fail;
	t->skel = inline_probe_bpf__open_opts(&oopts);
	if (!t->skel) {
		err = ks_err(-errno, "can't open the site probe: %s", strerror(errno));
		goto fail;
	}
	t->skel->rodata->kill = kill;
	/* One entry per copy in both per-site maps (hundreds for some). */
	if (s->nsites > (int)bpf_map__max_entries(t->skel->maps.ks_sites) &&
	    ((err = bpf_map__set_max_entries(t->skel->maps.ks_sites, s->nsites)) ||
	     (err = bpf_map__set_max_entries(t->skel->maps.site_hits, s->nsites)))) {
		err = ks_err(err, "can't size the site maps for %d copies: %s", s->nsites,
			     strerror(-err));
		goto fail;
	}
	if ((err = inline_probe_bpf__load(t->skel))) {
		err = ks_err(err, "can't load the site probe: %s", strerror(-err));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	ks_site_trace_close(t);
	return err;
}

/* One kprobe on the symbol: what a plain kprobe sees. */
static int attach_symbol(struct ks_site_trace *t, const char *function)
{
	char why[128];

	if (!ks_kprobes_available(why, sizeof(why)))
		return ks_err(-EOPNOTSUPP, "%s", why);
	if (!(t->links = calloc(1, sizeof(*t->links))))
		return ks_err(-ENOMEM, "out of memory");
	t->links[0] = bpf_program__attach_kprobe(t->skel->progs.site_hit, false, function);
	if (!t->links[0])
		return ks_err(-errno, "kprobe on %s: %s", function, strerror(errno));
	t->nlinks = 1;
	return 0;
}

int ks_site_trace_attach(struct ks_site_trace *t, const struct ks_sites *s, bool symbol,
			 pid_t pid, unsigned flags)
{
	struct bpf_program *prog = t->skel->progs.site_hit;

	if (!s->kernel)
		return ks_uprobe_attach_resolved(prog, s, pid ? pid : -1, t->skel->maps.ks_sites,
						 flags, &t->links, &t->nlinks);
	/* Kprobes fire for every process: the probe filters on the tgid. */
	t->skel->bss->only_tgid = pid;
	if (symbol)
		return attach_symbol(t, s->function);
	return ks_kprobe_attach_resolved(prog, s, t->skel->maps.ks_sites, flags, &t->links,
					 &t->nlinks);
}

int ks_site_trace_nlinks(const struct ks_site_trace *t)
{
	return t->nlinks;
}

void ks_site_trace_detach(struct ks_site_trace *t)
{
	if (t->links)
		ks_uprobe_links_free(t->links, t->nlinks);
	t->links = NULL;
}

int ks_site_trace_hits(struct ks_site_trace *t, struct ks_site_hits *hits, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		__u32 key = i;

		err = bpf_map__lookup_elem(t->skel->maps.site_hits, &key, sizeof(key), &hits[i],
					   sizeof(hits[i]), 0);
		if (err)
			return ks_err(err, "can't read the hits of copy %d: %s", i, strerror(-err));
	}
	return 0;
}

void ks_site_trace_close(struct ks_site_trace *t)
{
	if (!t)
		return;
	ks_site_trace_detach(t);
	inline_probe_bpf__destroy(t->skel);
	free(t);
}
