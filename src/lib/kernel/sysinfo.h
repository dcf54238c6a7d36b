/* SPDX-License-Identifier: MIT */
/* sysinfo.h - facts about the running kernel that decide what kshield can
 * do here: release and build ID, BTF, active LSMs, lockdown mode, and where
 * bpffs and cgroup2 are mounted. Read from /proc and /sys, nothing loaded.
 */
#ifndef KSHIELD_SYSINFO_H
#define KSHIELD_SYSINFO_H

#include <stdbool.h>

#define KS_SYSINFO_MAX_MOUNTS 8

struct ks_sysinfo {
	char release[65];
	char machine[65];
	char build_id[129];	/* hex GNU build-id from /sys/kernel/notes, "" if none */
	bool btf;		/* /sys/kernel/btf/vmlinux readable (btf_find.h) */
	bool lsms_known;	/* securityfs readable (mounted, or mountable) */
	char lsms[256];		/* "lockdown,capability,...", from securityfs */
	char lockdown[32];	/* none | integrity | confidentiality | unknown */
	int nbpffs, ncgroup2;
	char bpffs[KS_SYSINFO_MAX_MOUNTS][256];
	char cgroup2[KS_SYSINFO_MAX_MOUNTS][256];
};

/* Fill @si. When securityfs is not mounted it is mounted in a private mount
 * namespace of a short-lived child (nothing changes for anyone else); if
 * that fails too, LSMs and lockdown are reported unknown. Always returns 0:
 * every fact it cannot read is reported as unknown/absent instead. */
int ks_sysinfo_read(struct ks_sysinfo *si);

/* Mount points of file system @type from /proc/mounts, at most @max into
 * @out. Returns how many were found. */
int ks_mounts_of_type(const char *type, char out[][256], int max);

/* True when the kernel has BPF LSM but "bpf" is not among the active LSMs
 * (lsm= boot parameter): LSM programs would attach and never run. @lsms
 * gets the active list. False when the list cannot be read. */
bool ks_bpf_lsm_inactive(char *lsms, size_t len);

/* Tracepoint programs attach through tracefs (libbpf reads each event's id
 * there). When neither /sys/kernel/tracing nor /sys/kernel/debug/tracing
 * has it, mount tracefs at /sys/kernel/tracing, as a normal system has it.
 * Returns 0, or a negative errno with a message naming what is missing and
 * the command that fixes it. */
int ks_tracefs_ensure(void);

/* The cgroup2 mount point from /proc/mounts, or NULL. */
const char *ks_cgroup2_path(void);

#endif
