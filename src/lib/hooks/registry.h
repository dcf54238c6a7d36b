// SPDX-License-Identifier: MIT
/* registry.h - where the kernel makes objects by name: the paths that
 * create an object whose ops struct holds a function no dispatcher table
 * names.
 *
 * Much of the kernel reaches a bug through an object made by name: a qdisc
 * (RTM_NEWQDISC kind "hfsc"), a tc action, a TCP ULP (setsockopt TCP_ULP
 * "tls"), a crypto template (an AF_ALG bind), a cgroup file. Their ops
 * structs are registered once, at boot or module load, by passing the
 * struct's address to a registrar (register_qdisc(&hfsc_qdisc_ops)), and
 * found again by name when user space asks for one. From the kernel's own
 * DWARF and data:
 *   - the registration: a call in __init code passing the object's address
 *     (DW_TAG_call_site_parameter, DW_OP_addr naming the object), or the
 *     object's address held in another object that is registered
 *     (hfsc_class_ops in hfsc_qdisc_ops.cl_ops), up to three levels;
 *   - the makers: the functions that return a pointer to the registered
 *     struct type (qdisc_lookup_ops -> const struct Qdisc_ops *), and the
 *     functions other than the registrar that pass the same registry head
 *     the registrar passes (crypto_register_notifier(&nb) ->
 *     blocking_notifier_chain_register(&crypto_chain, nb);
 *     crypto_probing_notify -> blocking_notifier_call_chain(&crypto_chain)).
 * A struct returned by many functions (struct sock *) is no registry:
 * it is skipped and said so.
 */
#ifndef KSHIELD_REGISTRY_H
#define KSHIELD_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "callgraph.h"

#define KS_REGISTRY_MAX_MAKERS 16

struct ks_made {
	uint32_t func;		/* a maker: the walk continues from it */
	char note[256];		/* "hfsc_qdisc_ops registered by register_qdisc() in hfsc_init; Qdisc_ops found by qdisc_lookup_ops" */
};

/* The makers of object @obj of file @fi (struct @sname, NULL: from its
 * DWARF type). Returns how many were written to @out (up to @max); when 0,
 * @why says what was missing. */
int ks_registry_makers(struct ks_cg *g, const char *obj, int fi, const char *sname,
		       struct ks_made *out, int max, char *why, size_t whylen);

/* The makers of every object module file @fi registers in its __init code:
 * the way into a module whose functions are reached only through pointers
 * stored at run time (kTLS's tls_prots, essiv's instances). */
int ks_module_makers(struct ks_cg *g, int fi, struct ks_made *out, int max, char *why,
		     size_t whylen);

/* The functions of file @fi whose code takes the address of function or
 * object @name (a module's text relocations: a pointer stored at run
 * time), appended to @out from @n; returns the new count. */
int ks_code_takers(struct ks_cg *g, const char *name, int fi, bool func, struct ks_made *out, int n,
		int max);
/* The node named @name defined in file @fi, else the first of that name. */
uint32_t ks_cg_node_in(const struct ks_cg *g, const char *name, int fi);

#endif /* KSHIELD_REGISTRY_H */
