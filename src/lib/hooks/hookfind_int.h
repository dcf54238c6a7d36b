/* SPDX-License-Identifier: MIT */
/* hookfind_int.h - the state of one `kshield hooks` search, shared by
 * hookfind.c (the module set, the rows, one search over the graph),
 * hookwalk.c (the walk over callers) and hookpoints.c (the refusal points
 * of a function on the path); not an interface: everything else goes
 * through hookfind.h. */
#ifndef KSHIELD_HOOKFIND_INT_H
#define KSHIELD_HOOKFIND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "callgraph.h"
#include "hookfind.h"
#include "hookrank.h"
#include "kmodtree.h"

enum hop {
	HOP_SOURCE,		/* one of the functions asked about */
	HOP_CALL,		/* calls child */
	HOP_INLINED,		/* child is inlined into it */
	HOP_CALLBACK,		/* passes &child to a function that calls it */
	HOP_TABLE,		/* calls through the struct member child sits in */
	HOP_REGISTERED,		/* dispatches what a registrar recorded */
	HOP_NAMED,		/* calls through a run-time callback (dispatch_table.c) */
	HOP_GUESS,		/* holds a pointer to the struct and calls through a pointer */
	HOP_MADE,		/* makes (looks up by name) the object holding child (registry.h) */
};

/* Functions on paths after which the no-row fallback's guesses stop: a
 * guess through a notifier chain reaches half the kernel (32k functions,
 * minutes of search), and the nearest rows are found long before. */
#define FALLBACK_MAX 2000

struct lost {
	int dist;
	char *what;
};

struct search {
	struct ks_cg *g;
	const struct ks_hooks_query *q;
	struct ks_hooks_result *r;
	struct ks_kmodtree tree;
	int maxdist;
	bool guess;		/* q->guess, or the fallback when nothing else gave a row */
	bool capped;		/* the fallback stopped at FALLBACK_MAX functions */
	uint8_t module_done[KS_CG_MAX_FILES];	/* ks_module_makers followed */

	/* per function */
	int *dist;
	uint32_t *child;
	uint8_t *hop;
	size_t *hop_idx;	/* edge (CALL, INLINED) or ref (CALLBACK) index */
	char **note;		/* TABLE, REGISTERED, NAMED, CALLBACK: what was followed */
	uint32_t *queue;
	size_t nqueue;
	uint32_t nf;		/* functions when the arrays were made */

	/* refs and drefs by function (counting sort) */
	uint32_t *ref_first, *ref_idx, *dref_first, *dref_idx;

	/* every caller -> callee step seen (also to functions already
	 * visited): walked forward from the syscall entries, it says which
	 * functions user space reaches */
	struct link { uint32_t from, to; bool guess; } *links;
	size_t nlinks, links_cap;
	uint8_t *reach;		/* 1: reached from a syscall entry; 2: only through a guess */
	uint8_t *guessed;	/* per function: its path to the function has a guess */
	bool phase2;		/* guessing: members without a known dispatcher */
	const char *hook_list;	/* the variable whose members are the LSM hooks, NULL unknown */
	struct guess { uint32_t f; char sname[96]; char note[256]; } *guesses;
	size_t nguesses, guesses_cap;
	uint32_t *entry;	/* the entry it was reached from */

	struct ks_hook_row *rows;
	uint32_t *row_at;	/* per row: the function holding it */
	size_t nrows, rows_cap;
	struct lost *lost;
	size_t nlost, lost_cap;
	char want[64][64];	/* modules to read next */
	int nwant;
	int err;
};

static inline const char *fname(const struct search *s, uint32_t f)
{
	return s->g->funcs[f].name;
}

/* hookfind.c */
void ks_hooks_appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ks_hooks_want_module(struct search *s, const char *name);
struct ks_hook_row *ks_hooks_row_get(struct search *s, enum ks_hook_kind kind, const char *name);
bool ks_hooks_row_better(const struct ks_hook_row *row, int dist, bool after, bool guessed);
void ks_hooks_lostf(struct search *s, int dist, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ks_hooks_path_of(const struct search *s, uint32_t at, struct ks_hook_row *row);

/* hookwalk.c: the callers of @f, each visited one step further away */
void ks_hooks_expand(struct search *s, uint32_t f);
/* hookwalk.c: the guesses recorded so far, followed */
void ks_hooks_run_guesses(struct search *s);

/* hookpoints.c: the rows of @f, a function on a path */
void ks_hooks_points_of(struct search *s, uint32_t f);

#endif /* KSHIELD_HOOKFIND_INT_H */
