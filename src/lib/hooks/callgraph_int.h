/* SPDX-License-Identifier: MIT */
/* callgraph_int.h - what callgraph.c (the nodes, the graph),
 * callgraph_dwarf.c (the DWARF walk) and callgraph_refs.c (the data
 * references) share; not an interface: everything else goes through
 * callgraph.h. */
#ifndef KSHIELD_CALLGRAPH_INT_H
#define KSHIELD_CALLGRAPH_INT_H

#include <stddef.h>
#include <stdint.h>
#include "callgraph.h"

/* callgraph.c: the nodes */
char *ks_cg_pool_dup(struct ks_cg *g, const char *s);
/* Make room in *@arr for @need elements of @elem bytes (*@cap updated);
 * 0, or -ENOMEM with ks_err set. */
int ks_cg_grow(void **arr, size_t *cap, size_t need, size_t elem);
uint32_t ks_cg_intern(struct ks_cg *g, const char *name);
uint32_t ks_cg_intern_die(struct ks_cg *g, Dwarf_Die *die, const char *name);

/* callgraph_dwarf.c: the walk */
const char *ks_cg_fsym_find(struct ks_cg_fsym *s, size_t n, uint64_t key);
struct ks_cg_fsym *ks_cg_func_syms(Elf *elf, bool rel, size_t *n, Elf_Data **symdata,
				   size_t *strndx);
int ks_cg_walk_dwarf(struct ks_cg *g, int fi);

/* callgraph_refs.c: the data references */
int ks_cg_scan_data(struct ks_cg *g, int fi);

#endif /* KSHIELD_CALLGRAPH_INT_H */
