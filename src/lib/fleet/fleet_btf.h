/* SPDX-License-Identifier: MIT */
/* fleet_btf.h - kernels' BTF travelling in a shield's signed bundle, for
 * kernels built without BTF of their own (btf_find.h).
 *
 * `fleet deploy --btf FILE|DIR` stores each <build-id>.btf (a min_core_btf
 * cut: `kshield btf min`, a few KB) in kshield_objects by its sha256 and
 * lists it in the signed desired record:
 *   "btf": {"<build-id>": {"sha256": HEX, "size": N}, ...}
 * A host whose kernel has no BTF and whose btf_dir has no <build-id>.btf
 * takes the one listed for its build ID: fetched, its size and sha256
 * checked against the signed record (the record's signature is what vouches
 * for the bytes), parsed as BTF, then written to btf_dir (with a .from note,
 * so the lookup names "the signed bundle of SHIELD"). Bytes that do not
 * match are refused with one line and nothing is written or loaded.
 */
#ifndef KSHIELD_FLEET_BTF_H
#define KSHIELD_FLEET_BTF_H

#include <stdbool.h>
#include <json-c/json.h>
#include "fleet_nats.h"

enum ks_fleet_btf_got {
	KS_FLEET_BTF_NONE,	/* the record carries no BTF for this build */
	KS_FLEET_BTF_PRESENT,	/* btf_dir has <build-id>.btf already: kept, not fetched */
	KS_FLEET_BTF_VERIFIED,	/* checked, not written (@keep false) */
	KS_FLEET_BTF_KEPT,	/* checked and written to btf_dir */
};

/* The BTF verified desired body @body (of shield @shield) carries for
 * kernel @build_id, taken as above (@keep: write it to btf_dir; false:
 * check only, the control plane's way). Returns 0 with *@got, or -errno
 * with one line: -EBADMSG for bytes that do not match the signed record,
 * -EINVAL for bytes that are not BTF; *@transient when fetching failed
 * for a reason that may pass (NATS). */
int ks_fleet_btf_take(kvStore *objects, json_object *body, const char *shield,
		      const char *build_id, bool keep, enum ks_fleet_btf_got *got, bool *transient);

/* This kernel's BTF from the fleet: from shield @only's record, or (NULL)
 * from the first record in kshield_desired that lists this kernel's build
 * ID; records are used only when their signature verifies against a key in
 * @keys_dir. The shield it came from in @from. Returns 0 with *@got, or
 * -errno with one line (-ENOENT: no verified record lists this build). */
int ks_fleet_btf_fetch(struct ks_nats *n, const char *keys_dir, const char *only,
		       char *from, size_t from_len, enum ks_fleet_btf_got *got);

#endif /* KSHIELD_FLEET_BTF_H */
