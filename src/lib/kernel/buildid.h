// SPDX-License-Identifier: MIT
/* buildid.h - the running kernel's build ID, and the vmlinux debug file of
 * a kernel build: what BTF lookups (btf_find.c), the proven gate
 * (proven.c) and kernel sites (kernel_sites.c) all key on.
 */
#ifndef KSHIELD_BUILDID_H
#define KSHIELD_BUILDID_H

#include <stddef.h>

/* Build ID of the running kernel (GNU note in /sys/kernel/notes), as hex.
 * Returns 0 or -errno with a message recorded. $KSHIELD_KERNEL_NOTES names
 * another notes file (tests). */
int ks_kernel_build_id(char *hex, size_t len);

/* The vmlinux debug file with build ID @build_id for kernel @release:
 * /usr/lib/debug/boot/vmlinux-RELEASE and the other places Debian and
 * kernel builds put it, then the .build-id trees and debuginfod
 * (ks_debug_find, @flags). Returns 0, -ENOENT, or -EILSEQ when only files
 * of other builds were found (message recorded). */
int ks_kernel_vmlinux_find(const char *build_id, const char *release, unsigned flags,
			   char *path, size_t len, const char **source);

#endif
