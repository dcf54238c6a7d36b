/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* shield.h - the contract between a shield object and the loader: runtime
 * configuration, counters and the bpffs layout that outlives the loader.
 */
#ifndef KSHIELD_SHIELD_H
#define KSHIELD_SHIELD_H

#include "event.h"

enum ks_mode {
	KS_MODE_ENFORCE = 0,	/* zero: a shield is never accidentally lenient */
	KS_MODE_AUDIT = 1,
};

/* The single entry of a shield's "ks_cfg" array map, pinned as
 * <bpffs>/kshield/shields/<name>/cfg. The BPF side reads mode on every hit;
 * the rest describes the loaded instance to later kshield processes. */
struct ks_shield_cfg {
	__u32 mode;			/* enum ks_mode */
	__u32 variant_idx;		/* position in the variants list */
	__u64 loaded_realtime_ns;	/* when it was loaded */
	char variant[KS_VARIANT_LEN];	/* active variant */
	__u8 sha256[32];		/* of the object file it came from */
	char object[KS_PATH_LEN];	/* path it was loaded from */
};

/* The pin layout under the bpffs root is written down once, in
 * src/lib/bpffs/pins.h. */

/* ELF section that holds a shield's metadata as NUL-terminated "key=value"
 * strings, readable without loading the object. */
#define KS_META_SECTION		".kshield"

#endif /* KSHIELD_SHIELD_H */
