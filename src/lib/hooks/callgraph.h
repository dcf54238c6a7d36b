/* SPDX-License-Identifier: MIT */
/* callgraph.h - a kernel's call graph from its DWARF, for `kshield hooks`.
 *
 * Functions are nodes, named as the DWARF names them; a static function of
 * a .c file is keyed by its file too, so that same-named static functions
 * of unrelated files do not join their callers (header inlines and
 * external functions are one node per name). Edges come from DW_TAG_call_site (direct calls, and indirect
 * ones with no callee: KS_CG_INDIRECT) and DW_TAG_inlined_subroutine (the
 * callee's body copied into the caller). Each edge keeps the site's address
 * and the out-of-line function whose code holds it, so that within one
 * caller one can tell which of two calls comes first.
 *
 * Function pointers leave two kinds of traces, both kept: a function's
 * address stored in static data (a table: vmlinux data words equal to a
 * function symbol, module data relocations naming one), and a function's
 * address passed as a constant argument (DW_TAG_call_site_parameter whose
 * value is DW_OP_addr: registrations such as rtnl_register(..., doit, ...)
 * and callbacks such as netlink_rcv_skb(skb, &rtnetlink_rcv_msg)).
 *
 * Files are added one at a time (vmlinux, then modules: ET_REL objects,
 * relocated by libdwfl); ks_cg_finish() then indexes callers.
 */
#ifndef KSHIELD_CALLGRAPH_H
#define KSHIELD_CALLGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include "debugfile.h"

#define KS_CG_NONE	UINT32_MAX
#define KS_CG_MAX_FILES	256

enum ks_cg_kind {
	KS_CG_CALL,		/* a direct call */
	KS_CG_INLINED,		/* the callee's body inlined into the caller */
	KS_CG_INDIRECT,		/* a call through a pointer (callee: the "<indirect>" node) */
};

struct ks_cg_edge {
	uint32_t caller, callee;
	uint32_t concrete;	/* out-of-line function holding the site */
	uint8_t kind;		/* enum ks_cg_kind */
	uint8_t file;		/* index into the graph's files */
	uint64_t pc;		/* the site's address (file-relative for modules) */
};

#define KS_CG_MAX_CONSTS 4

/* A function's address passed as a constant argument. */
struct ks_cg_ref {
	uint32_t func;		/* whose address */
	uint32_t holder;	/* the function making the call */
	uint32_t concrete;	/* out-of-line function holding the site */
	uint32_t to;		/* the function it is passed to */
	uint8_t file;
	int8_t argno;		/* 0-based, -1 when the register is not an argument's */
	uint8_t nconst;
	int8_t const_argno[KS_CG_MAX_CONSTS];
	int64_t consts[KS_CG_MAX_CONSTS];	/* the call's constant integer arguments */
	uint64_t pc;
};

/* A data object's address passed as a constant argument: a registration
 * (register_qdisc(&hfsc_qdisc_ops), crypto_register_notifier(&nb)) or a
 * registry head (blocking_notifier_call_chain(&crypto_chain, ...)). */
struct ks_cg_oref {
	const char *obj;	/* the object's symbol */
	uint32_t holder;	/* the function making the call */
	uint32_t concrete;	/* out-of-line function holding the site */
	uint32_t to;		/* the function it is passed to */
	uint8_t file;		/* where the call is */
	uint8_t objfile;	/* where the object is */
	int8_t argno;
};

/* A module's data object whose address sits in its static data (a
 * relocation: hfsc_qdisc_ops.cl_ops = &hfsc_class_ops). vmlinux's are
 * found on demand (ks_obj_refs). */
struct ks_cg_odref {
	const char *obj;
	uint8_t file;
	uint32_t shndx;
	uint64_t off;
};

/* A module's code taking the address of a function or object (a
 * relocation in its text that is no call): &fn stored at run time
 * (prot->recvmsg = tls_sw_recvmsg in build_protos), an ops object set at
 * run time (set->variant = &bitmap_ip in bitmap_ip_create). */
struct ks_cg_cref {
	const char *name;	/* the function or object */
	const char *holder;	/* the function whose code takes it */
	uint8_t file;
	bool func;		/* a function (else an object) */
};

/* A function's address in static data. */
struct ks_cg_dref {
	uint32_t func;
	uint8_t file;
	uint32_t shndx;		/* section holding it */
	uint64_t off;		/* offset in that section */
};

#define KS_CGF_OUTLINE	(1u << 0)	/* has an out-of-line copy */
#define KS_CGF_INLINED	(1u << 1)	/* inlined somewhere */
#define KS_CGF_HDR_STATIC (1u << 2)	/* a header's static function: one node for
					 * copies in many units (NF_HOOK) */

struct ks_cg_func {
	const char *name;
	const char *key;	/* name, or name@file for a static function of a .c file */
	uint32_t next_same;	/* the next node of the same name, KS_CG_NONE */
	uint8_t flags;
	uint8_t file;		/* where its DIE was seen first (die_off) */
	Dwarf_Off die;		/* an out-of-line or abstract DIE (0: none) */
	uint64_t lowpc;		/* entry of its first out-of-line copy (0: none) */
	const char *ret_struct;	/* the struct it returns a pointer to, NULL */
	uint32_t ncallers;	/* after ks_cg_finish: edges into it */
	uint32_t first_caller;	/* index into the callers index */
	uint32_t ncallees;	/* edges out of it */
	uint32_t first_callee;
};

/* A function symbol: vmlinux by address, a module's by section << 40 |
 * offset in it. */
struct ks_cg_fsym {
	uint64_t key;
	const char *name;
};

/* One file of the graph (vmlinux or a module). */
struct ks_cg_file {
	char path[4096];
	char name[64];		/* "vmlinux", or the module's name ("nf_tables") */
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr bias;
	bool rel;		/* ET_REL (a module) */
	double secs;		/* time to index it */
	struct ks_elf_file ef;		/* the file itself, for its symbols and data */
	struct ks_cg_fsym *syms;	/* function symbols by address */
	size_t nsyms;
	Elf_Data *symdata;		/* its .symtab */
	size_t strndx;
	struct ks_cg_osym *objs;	/* object symbols by (section, offset), made on first use */
	bool odrefs_done;		/* vmlinux: its object-address data words indexed */
	size_t nobjs;
};

/* An object symbol: section, section-relative start, size, name. */
struct ks_cg_osym {
	uint32_t shndx;
	uint64_t start, size;
	const char *name;
};


struct ks_cg {
	Dwfl *dwfl;
	int nfiles;
	struct ks_cg_file file[KS_CG_MAX_FILES];

	uint32_t nfuncs, funcs_cap;
	struct ks_cg_func *funcs;
	uint32_t hash_cap;		/* key -> func id (open addressing) */
	uint32_t *hash;
	uint32_t *nhash;		/* name -> its first func id */

	size_t nedges, edges_cap;
	struct ks_cg_edge *edges;
	uint32_t *by_callee;		/* edge indexes sorted by callee */
	uint32_t *by_caller;		/* and by caller */
	size_t nindexed;		/* edges covered by by_callee */

	size_t nrefs, refs_cap;
	struct ks_cg_ref *refs;
	size_t ndrefs, drefs_cap;
	struct ks_cg_dref *drefs;
	size_t norefs, orefs_cap;
	struct ks_cg_oref *orefs;
	size_t nodrefs, odrefs_cap;
	struct ks_cg_odref *odrefs;
	size_t ncrefs, crefs_cap;
	struct ks_cg_cref *crefs;

	/* Functions that call through a pointer and hold a pointer to a
	 * struct (a parameter or variable): the possible dispatchers of that
	 * struct's members, for members no table names (lower confidence). */
	size_t nholders, holders_cap;
	struct ks_cg_holder { uint32_t func; const char *sname; } *holders;

	/* Top-level variables with a static address: name -> (file, DIE). */
	size_t nvars, vars_cap;
	struct ks_cg_var { uint32_t name; uint8_t file; Dwarf_Off die; } *vars;

	uint32_t *vars_by_name;		/* indexes into vars sorted by name id, on first use */

	/* Top-level enumerations, one per first enumerator name (headers
	 * repeat them in every unit): message types and opcodes by name. */
	size_t nenums, enums_cap;
	struct ks_cg_enum { uint8_t file; Dwarf_Off die; const char *first; } *enums;
	uint32_t indirect;		/* the "<indirect>" node */
	char *strpool;			/* names, in blocks */
	char *pool_cur;
	size_t pool_left;
};

/* Start an empty graph. Returns 0 or -errno (message recorded). */
int ks_cg_init(struct ks_cg *g);
void ks_cg_free(struct ks_cg *g);
/* Add the DWARF and data references of @path (vmlinux with DWARF, or a
 * module's .ko with DWARF), naming it @name. Call ks_cg_finish() after the
 * last one (and again after adding more). Returns 0 or -errno. */
int ks_cg_add(struct ks_cg *g, const char *path, const char *name);
/* Index callers of everything added so far. */
int ks_cg_finish(struct ks_cg *g);
/* Whether @name was added already. */
bool ks_cg_has_file(const struct ks_cg *g, const char *name);

/* The first node named @name, or KS_CG_NONE; the others of that name
 * (static functions of other files) follow by ks_cg_next_same(). Data and
 * call-parameter references, found by symbol name, are all kept on the
 * first (ks_cg_canonical). */
uint32_t ks_cg_lookup(const struct ks_cg *g, const char *name);
uint32_t ks_cg_next_same(const struct ks_cg *g, uint32_t id);
uint32_t ks_cg_canonical(const struct ks_cg *g, uint32_t id);
/* Edges into @func: *@n of them, indexes into g->edges. */
const uint32_t *ks_cg_callers(const struct ks_cg *g, uint32_t func, uint32_t *n);
/* Edges out of @func (its calls, and the functions inlined into it). */
const uint32_t *ks_cg_callees(const struct ks_cg *g, uint32_t func, uint32_t *n);

/* The name of the enumerator with value @value whose name starts with
 * @prefix ("NFT_MSG_", 6 -> "NFT_MSG_NEWRULE"), or NULL. */
const char *ks_cg_enumerator(const struct ks_cg *g, const char *prefix, long value);

/* Whether @func's out-of-line code (the file's section at its entry) is
 * __init text: code that runs once at boot or module load. */
bool ks_cg_is_init(const struct ks_cg *g, uint32_t func);
/* The symbol of file @file covering @addr (file-relative, as in edges):
 * name, or NULL. */
const char *ks_cg_addr_symbol(const struct ks_cg *g, int file, uint64_t addr);

#endif /* KSHIELD_CALLGRAPH_H */
