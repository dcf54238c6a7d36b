/* SPDX-License-Identifier: MIT */
/* kmodtree.h - the modules of one kernel build, from a tree of .ko files
 * (a -dbg package's usr/lib/debug/lib/modules/<release>/): which module
 * defines a function, which ones call into it (an undefined symbol of that
 * name), and what each depends on (.modinfo depends=). Only the symbol
 * tables are read: a whole tree of 1100 modules takes about a second.
 */
#ifndef KSHIELD_KMODTREE_H
#define KSHIELD_KMODTREE_H

#include <stddef.h>

struct ks_kmod {
	char *name;		/* "nf_tables" ('-' read as '_') */
	char *path;
	char **deps;		/* depends= */
	int ndeps;
	char **defs;		/* defined function symbols, sorted */
	size_t ndefs;
	char **undefs;		/* undefined symbols, sorted */
	size_t nundefs;
};

struct ks_kmodtree {
	struct ks_kmod *mod;
	int n;
};

/* Every .ko (plain; .ko.xz and other compressed ones are skipped) under
 * @dir. Returns 0 (possibly with no modules) or -errno with a message.
 * Not thread-safe (nftw gives its callback no context). */
int ks_kmodtree_scan(const char *dir, struct ks_kmodtree *t);
void ks_kmodtree_free(struct ks_kmodtree *t);
/* The module named @name ('-' and '_' alike), or -1. */
int ks_kmodtree_find(const struct ks_kmodtree *t, const char *name);
/* The module defining function @func, or -1. */
int ks_kmodtree_defining(const struct ks_kmodtree *t, const char *func);
/* Modules whose DWARF names @name (.debug_str holds it): where a static
 * function inlined into all its callers lives, having no symbol. Fills
 * @idx with at most @max of them; returns how many. */
int ks_kmodtree_mentioning(const struct ks_kmodtree *t, const char *name, int *idx, int max);
/* Whether module @i has an undefined symbol @sym (calls into it). */
int ks_kmodtree_imports(const struct ks_kmodtree *t, int i, const char *sym);

#endif /* KSHIELD_KMODTREE_H */
