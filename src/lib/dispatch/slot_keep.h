/* SPDX-License-Identifier: MIT */
/* slot_keep.h - which registrations a dispatcher's drop takes away: the
 * slots of one owner (a shield's pin directory) except the programs it
 * keeps (a replaced shield's new ones). Shared by the syscall and the
 * file_permission dispatchers, whose slot structs differ. */
#ifndef KSHIELD_SLOT_KEEP_H
#define KSHIELD_SLOT_KEEP_H

#include <stdbool.h>
#include <string.h>
#include <linux/types.h>

struct ks_slot_keep {
	const char *owner;
	const __u32 *ids;
	int n;
};

/* True when a slot of @owner (a fixed-size field of @len bytes) holding
 * program @prog_id is to go. */
static inline bool ks_slot_dropped(const char *owner, size_t len, __u32 prog_id,
				   const struct ks_slot_keep *k)
{
	if (strncmp(owner, k->owner, len))
		return false;
	for (int i = 0; i < k->n; i++)
		if (k->ids[i] == prog_id)
			return false;
	return true;
}

#endif /* KSHIELD_SLOT_KEEP_H */
