// SPDX-License-Identifier: MIT
/* ringread.c - see ringread.h. The layout is the kernel's
 * (kernel/bpf/ringbuf.c): a consumer page mapped writable, then a
 * producer page and the data pages mapped twice, read-only; each record
 * has an 8-byte header (length with BUSY and DISCARD bits, page offset)
 * and is padded to 8 bytes. libbpf's ring_buffer reads the same way. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "err.h"
#include "ringread.h"

int ks_ring_open(struct ks_ring *r, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *p;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return ks_err(-errno, "can't read the ring buffer's size: %s", strerror(errno));
	r->page = sysconf(_SC_PAGESIZE);
	r->size = info.max_entries;
	r->mask = info.max_entries - 1;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return ks_err(-errno, "can't map the ring buffer: %s", strerror(errno));
	r->consumer = p;
	p = mmap(NULL, r->page + 2 * r->size, PROT_READ, MAP_SHARED, fd, r->page);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap(r->consumer, r->page);
		r->consumer = NULL;
		return ks_err(err, "can't map the ring buffer: %s", strerror(-err));
	}
	r->producer = p;
	r->data = (char *)p + r->page;
	r->pos = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return 0;
}

void ks_ring_close(struct ks_ring *r)
{
	if (r->producer)
		munmap(r->producer, r->page + 2 * r->size);
	if (r->consumer)
		munmap(r->consumer, r->page);
	r->producer = r->consumer = NULL;
}

int ks_ring_read(struct ks_ring *r, int (*fn)(void *ctx, void *data, size_t len), void *ctx)
{
	__u64 prod;
	int n = 0, err;

	if (!r->producer)
		return 0;
	for (;;) {
		prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
		if (r->pos >= prod)
			return n;
		while (r->pos < prod) {
			__u32 *hdr = (__u32 *)((char *)r->data + (r->pos & r->mask));
			__u32 len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

			if (len & BPF_RINGBUF_BUSY_BIT)
				return n;	/* still being written */
			r->pos += ((len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT)) +
				   BPF_RINGBUF_HDR_SZ + 7) / 8 * 8;
			if (len & BPF_RINGBUF_DISCARD_BIT)
				continue;
			n++;
			if ((err = fn(ctx, (char *)hdr + BPF_RINGBUF_HDR_SZ, len)))
				return err < 0 ? err : n;
		}
	}
}

void ks_ring_release(struct ks_ring *r)
{
	if (r->consumer)
		__atomic_store_n(r->consumer, r->pos, __ATOMIC_RELEASE);
}

__u64 ks_ring_skip(struct ks_ring *r, __u64 pos)
{
	__u64 cons, prod, n;

	if (!r->consumer)
		return 0;
	cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	if (r->pos != cons || pos <= cons || pos > prod)
		return 0;
	n = pos - cons;
	r->pos = pos;
	__atomic_store_n(r->consumer, pos, __ATOMIC_RELEASE);
	return n;
}

__u64 ks_ring_held(const struct ks_ring *r)
{
	return r->consumer ? r->pos - __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE) : 0;
}
