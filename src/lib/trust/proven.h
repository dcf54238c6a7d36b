/* SPDX-License-Identifier: MIT */
/* proven.h - what the kernel matrix proved about one shield object, and
 * the gate an agent applies with it before enforcing.
 *
 * A proven summary is a JSON file, one per shield, made from the matrix's
 * results.json (`kshield shield proven`) and signed under its own domain
 * tag (KS_SIGN_PROVEN), so it travels beside the object and is verified
 * with the same keys:
 *   {"kind": "kshield-proven", "version": 1, "shield": NAME,
 *    "generated_at": ms, "objects": [sha256 of each object tested],
 *    "proven":  [{"release", "build_id", "arch", "variant", "sha256", "kernel"}],
 *    "refused": [{"release", "build_id", "arch", "variant", "sha256", "kernel", "error"}],
 *    "rows": {"pass": N, "partial": N, ...}}
 * Only a row with status "pass", a variant, the kernel's GNU build ID and
 * the object's sha256 proves anything: partial, unprotected, n/a and rows
 * of an older matrix (no build ID) prove nothing. A "fail" row is a refusal:
 * that variant (every variant, when none loaded) must never enforce on that
 * kernel build.
 */
#ifndef KSHIELD_PROVEN_H
#define KSHIELD_PROVEN_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "sign.h"

#define KS_PROVEN_KIND "kshield-proven"
#define KS_PROVEN_SUFFIX ".proven.json"	/* NAME.proven.json beside NAME.bpf.o */

enum ks_gate {
	KS_GATE_PROVEN,		/* this variant passed on this very kernel build */
	KS_GATE_UNPROVEN,	/* never tested here (or no summary): audit only */
	KS_GATE_REFUSED,	/* it failed here on the matrix: never enforce */
};

/* Per-shield summaries of a matrix results.json array: *out = {NAME:
 * summary}. Rows without a shield (matrix checks) are left out. -EINVAL
 * with a message when @results is not an array of rows. */
int ks_proven_from_results(json_object *results, int64_t now_ms, json_object **out);

/* Parse and check summary text (kind, shield, lists). *out owned by the
 * caller. -EINVAL with a message naming @what when it is not one. */
int ks_proven_parse(const char *buf, size_t len, const char *what, json_object **out);

/* The gate for object @sha256 (hex) loaded as @variant on the kernel
 * @release with build ID @build_id. @summary NULL: unproven. @why gets one
 * line for people ("proven on 6.1.0-47-cloud-amd64 (lsm)", "variant lsm
 * failed here on the matrix: ...", "kernel 6.18.44 4f61d8f6... not in the
 * proven list"). */
/* @variant KS_PROVEN_ANY_VARIANT: proven if some variant passed here
 * and none failed here: the judgement before a load, when the variant is
 * not known yet. */
#define KS_PROVEN_ANY_VARIANT "*"
enum ks_gate ks_proven_judge(json_object *summary, const char *sha256, const char *release,
			     const char *build_id, const char *variant, char *why, size_t whylen);

/* Write summary @s as DIR/NAME.proven.json (replaced atomically) and, with
 * @keyfile, sign it into NAME.proven.json.sig (@keyid: the signer). @path
 * gets the file written. */
int ks_proven_write(json_object *s, const char *dir, const char *keyfile, char *path,
		    size_t pathlen, char keyid[KS_KEYID_LEN]);
/* Read the summary at @path; with @keys_dir verify it against PATH.sig
 * first (KS_SIGN_PROVEN). *out parsed; *buf (malloc'ed, may be NULL) and
 * *len the exact bytes, to ship them on. */
int ks_proven_read(const char *path, const char *keys_dir, json_object **out, char **buf,
		   size_t *len);
/* The summary path beside a shield object: DIR/NAME.bpf.o ->
 * DIR/NAME.proven.json. */
void ks_proven_path(const char *object, char *out, size_t n);

/* Was object @sha256 (hex) among the objects the summary's rows tested? */
bool ks_proven_covers(json_object *summary, const char *sha256);

/* ks_proven_judge() for this machine's running kernel (uname release,
 * GNU build ID from /sys/kernel/notes, read once). */
enum ks_gate ks_proven_judge_here(json_object *summary, const char *sha256, const char *variant,
				  char *why, size_t whylen);

/* "proven", "unproven", "refused". */
const char *ks_gate_name(enum ks_gate g);

#endif
