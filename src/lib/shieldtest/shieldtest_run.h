/* SPDX-License-Identifier: MIT */
/* shieldtest_run.h - the runner's side of the shield test contract
 * (shieldtest.h): what `kshield test` (src/cmd/test.c) calls and the results
 * it reports. shieldtest_run.c runs a shield's registered cases around a real
 * load of the shield.
 */
#ifndef KSHIELD_SHIELDTEST_RUN_H
#define KSHIELD_SHIELDTEST_RUN_H

#include <stdbool.h>
#include "loader.h"
#include "meta.h"
#include "shieldtest.h"

/* One path's outcome. Case results are KS_CASE_* or <0 (did not run). */
struct ks_path_result {
	char name[KS_PATH_NAME_LEN];
	enum ks_coverage cov;	/* what the loaded variant claims */
	bool not_applicable;	/* cannot run on this kernel: why says */
	bool todo;		/* the case is not written yet (KS_CASE_TODO) */
	bool ran_enforce, ran_audit, ran_unload;
	int baseline, enforce, audit, unload;
	bool hit;		/* counted by the shield while enforcing */
	bool killed;		/* ... as killed (SIGKILL), not refused with an errno */
	bool audited;		/* counted as audited in audit mode */
	bool ok;		/* did what the variant claims (pass/n/a) */
	bool fixed_here;	/* a state-check shield (metadata "state_check") on a
				 * kernel where the bug is fixed: no effect without
				 * the shield nor with it, and no state to refuse */
	char why[384];		/* n/a reason, the case's error, or the failure */
	char effect[192];	/* baseline EFFECT: what the case saw ("" otherwise) */
	char seen[192];		/* baseline EFFECT, NOEFFECT or FIXED: the case's own words */
};

struct ks_test_result {
	char shield[KS_NAME_LEN];
	char variant[KS_VARIANT_LEN];
	char sha256[65];	/* hex SHA-256 of the object file tested */
	bool trigger_refused;	/* every path the variant prevents was refused */
	bool hit_recorded;	/* ... and each covered path counted */
	bool detect_only;	/* the variant prevents no path here, detects some */
	bool fixed_here;	/* every covered path was fixed_here: nothing to refuse */
	bool benign_ok;		/* benign passed while enforcing */
	bool benign_todo;	/* ... is not written yet (KS_CASE_TODO) */
	bool audit_ok;		/* audit: covered paths passed and were counted */
	bool unload_ok;		/* after unload every path passes again */
	bool unsupported;	/* no variant loads on this kernel */
	bool not_applicable;	/* no path can run on this kernel */
	bool partial;		/* a runnable path the variant does not cover */
	char na_reason[512];	/* ... why: the case's own words */
	int ntodo;		/* cases not written yet (KS_CASE_TODO), benign included */
	char todo[256];		/* ... their names, "native, benign" */
	/* Which steps after the baseline ran; what a step did not run says
	 * nothing (plain text shows "-" there, never ok). */
	bool ran_enforce, ran_benign, ran_audit, ran_unload;
	int trigger_case;	/* KS_CASE_* or <0: the first path while enforcing */
	const char *vulnerable;	/* "yes", "no", "unknown": from the baseline */
	int npaths;
	struct ks_path_result paths[KS_MAX_PATHS];
	char not_covered[256];	/* "variant: a, b not covered", "" when none */
	struct ks_load_result load;
	/* The baseline trigger was refused by programs of this shield loaded
	 * elsewhere: "name (id N), ..."; the test did not run (a failure). */
	char refused_by[256];
	char error[1024];	/* first failure, "" when all is well */
};

/* Record in @p->why why step @step of the path failed with case result
 * @c: the trigger's own @why, or a one-line reason when it gave none, so
 * that no failed or "error" path is reported without one. The first
 * reason recorded for a path stays. */
void ks_path_note(struct ks_path_result *p, const char *step, int c, const char *why);
struct ks_shield_test *ks_test_find(const char *name);
struct ks_shield_test *ks_test_first(void);
/* Run the whole sequence for @t with the object @object. Returns <0 only
 * when the test could not start; failures are in @r->error. */
int ks_test_run(const struct ks_shield_test *t, const char *object,
		struct ks_test_result *r);

#endif
