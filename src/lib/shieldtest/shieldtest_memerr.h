// SPDX-License-Identifier: MIT
/* shieldtest_memerr.h - the effect of a kernel memory-safety bug (a use-
 * after-free, a double free, an out-of-bounds write) as a case result:
 * the KASAN report it leaves in the kernel log (read by the reader of
 * shieldtest_effect.h, ks_fx_kasan_*), on a kernel built with KASAN (the
 * matrix's custom-vulnerable rows). On a kernel without KASAN such a bug
 * leaves nothing a test can see, so no report there says nothing: the
 * case is PASSED (no effect observable), never NOEFFECT.
 *
 *	ks_memerr_begin(why, len);	// before the namespace, the trigger
 *	... the trigger, and the exploit's next use of the object ...
 *	return ks_memerr_end("nft_set_lookup", 500, "native", why, len);
 *
 * The mark is kept for the process (each case runs in a child of its
 * own), so a netlink trigger's effect step (nltrigger.h) finds it.
 */
#ifndef KSHIELD_SHIELDTEST_MEMERR_H
#define KSHIELD_SHIELDTEST_MEMERR_H

#include <stdbool.h>
#include <stddef.h>

/* Take the mark: the kernel log from now on. Call before entering a user
 * namespace or dropping privileges (/dev/kmsg needs CAP_SYSLOG to open
 * where dmesg_restrict is 1). 0, or -errno with @why filled. A second
 * call in the same process keeps the first mark. */
int ks_memerr_begin(char *why, size_t len);

/* Is this a KASAN kernel? (its BTF, or kallsyms, names kasan_report) */
bool ks_memerr_kasan(void);

/* The effect since the mark, waiting up to @ms for a report naming @func
 * (NULL: any report): KS_CASE_EFFECT (@why: "@what: " and the report's
 * first line), KS_CASE_NOEFFECT (a KASAN kernel and no such report),
 * KS_CASE_PASSED (no KASAN here: @why says the effect cannot be seen), or
 * -errno (no mark, /dev/kmsg unreadable). */
int ks_memerr_end(const char *func, int ms, const char *what, char *why, size_t len);

#endif
