// SPDX-License-Identifier: MIT
/* site_trace.h - the tracer behind `kshield sites trace`: bpf/inline_probe.bpf.c
 * loaded and sized for one function's copies (dwsites.h), attached at every
 * copy (a uprobe each, or a kprobe each for kernel:FUNCTION) or once at the
 * kernel symbol, then the hits read back per copy. The command starts the
 * traced process and prints; this holds the BPF side.
 */
#ifndef KSHIELD_SITE_TRACE_H
#define KSHIELD_SITE_TRACE_H

#include <stdbool.h>
#include <sys/types.h>
#include "dwsites.h"
#include "kshield/sites.h"

struct ks_site_trace;

/* Open and load the probe for @s's copies; @kill makes it SIGKILL the
 * process at each hit instead of counting only. 0 or -errno, message
 * recorded; *@out is freed with ks_site_trace_close(). */
int ks_site_trace_open(const struct ks_sites *s, bool kill, struct ks_site_trace **out);

/* Attach at every copy of @s (at the symbol only with @symbol, kernel
 * functions only), for process @pid only (0: every process). @flags are
 * uprobe_sites.h's (KS_SITES_PARTIAL). All or nothing; 0 or -errno. */
int ks_site_trace_attach(struct ks_site_trace *t, const struct ks_sites *s, bool symbol,
			 pid_t pid, unsigned flags);

/* How many probes are attached now (after ks_site_trace_attach). */
int ks_site_trace_nlinks(const struct ks_site_trace *t);

/* Detach every probe (the hits stay readable). */
void ks_site_trace_detach(struct ks_site_trace *t);

/* The hits per copy, @n entries (1 for a symbol trace) into @hits. */
int ks_site_trace_hits(struct ks_site_trace *t, struct ks_site_hits *hits, int n);

void ks_site_trace_close(struct ks_site_trace *t);

#endif
