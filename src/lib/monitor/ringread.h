/* SPDX-License-Identifier: MIT */
/* ringread.h - the agent's reader of a BPF ring buffer that gives space
 * back only when told: records read are released (the kernel's consumer
 * position moved past them) once they are stored or counted, not when
 * read as libbpf's ring_buffer does. The position lives in the pinned
 * map, so an agent killed with a batch read but not committed (SIGKILL,
 * the OOM killer) leaves those records to the next agent, which reads
 * them again: a kill loses nothing. The store records with each commit
 * how far it reached (ks_store_ring_next()); the next agent skips to
 * there (ks_ring_skip()), so a kill between a commit and its release
 * stores nothing twice.
 */
#ifndef KSHIELD_RINGREAD_H
#define KSHIELD_RINGREAD_H

#include <stddef.h>
#include <linux/types.h>

struct ks_ring {
	int fd;			/* the map (not owned) */
	__u64 *consumer;	/* the kernel's consumer position (shared) */
	__u64 *producer;
	void *data;		/* 2 x size, the same pages mapped twice */
	__u64 mask;
	__u64 pos;		/* next record to read (consumer <= pos) */
	size_t page, size;
};

/* Map ring buffer map @fd. Returns 0 or a negative errno (one line). */
int ks_ring_open(struct ks_ring *r, int fd);
void ks_ring_close(struct ks_ring *r);
/* Call @fn for every complete record from the read position on; returns
 * the records read or @fn's first nonzero return (negative). */
int ks_ring_read(struct ks_ring *r, int (*fn)(void *ctx, void *data, size_t len), void *ctx);
/* Give the space of every record read so far back to the kernel. */
void ks_ring_release(struct ks_ring *r);
/* Move the read position and the kernel's consumer position forward to
 * @pos (records already stored), if nothing was read yet and @pos lies
 * between them and the producer's. Returns the bytes skipped. */
__u64 ks_ring_skip(struct ks_ring *r, __u64 pos);
/* Records read and not released, in bytes. */
__u64 ks_ring_held(const struct ks_ring *r);

#endif
