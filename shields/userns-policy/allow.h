/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* allow.h - the userns-policy shield's allow-list entry, shared by the BPF
 * side (shield.bpf.c) and user space (test.c, allow.sh documents the same
 * layout for bpftool).
 *
 * The map is pinned by name as <bpffs root>/maps/ks_userns_allow, so it
 * outlives reloads of the shield and can be filled while it runs. A binary
 * is identified by the inode of its executable (the kernel's encoding of
 * the file system's device, and the inode number) AND the file name it was
 * allowed under: a replaced binary (new inode) needs a new entry, and an
 * inode number recycled for another file rarely also has the same name.
 */
#ifndef KSHIELD_USERNS_ALLOW_H
#define KSHIELD_USERNS_ALLOW_H

#define KS_USERNS_ALLOW_MAP	"ks_userns_allow"
#define KS_USERNS_NAME_LEN	64

struct ks_userns_allow_key {
	__u32 dev;	/* kernel dev_t: major << 20 | minor */
	__u32 _pad;
	__u64 ino;
};

struct ks_userns_allow_val {
	char name[KS_USERNS_NAME_LEN];	/* basename of the allowed path */
};

#endif
