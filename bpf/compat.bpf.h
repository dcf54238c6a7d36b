/* compat.bpf.h - what older kernels lack (and newer ones renamed), hidden
 * behind one call each, in the spirit of libbpf-tools' compat.h. One object
 * for every kernel from 5.10 on: each choice is made at load time, by CO-RE
 * (libbpf rewrites the check into a constant and the verifier drops the
 * branch not taken), never by a separate build. The user-space half
 * (src/lib/kernel/compat.c) fits maps to the kernel before the load and names what a
 * program needs and cannot get.
 *
 *   ks_task_storage_get(map, flags)   task local storage of the current task
 *                                     (5.11+); before: an LRU hash keyed by
 *                                     thread id (the loader converts the map)
 *   ks_sock_cookie(sk)                a socket's cookie from tracing programs
 *                                     (the helper there is 5.12+); before:
 *                                     the cookie the kernel has generated so
 *                                     far, 0 until the socket's first packet
 *   ks_ksym_exists(sym)               libbpf 1.2's bpf_ksym_exists for 1.1
 *
 * bpf_loop (5.17+) cannot be hidden the same way: its callback is passed as
 * a function pointer, which verifiers before 5.13 reject even in dead code.
 * A program that calls it is reported by the loader as needing bpf_loop;
 * scans of a few hundred steps use a plain bounded loop (5.3+) instead,
 * which every supported kernel verifies.
 */
#ifndef KSHIELD_COMPAT_BPF_H
#define KSHIELD_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#ifndef BPF_LOCAL_STORAGE_GET_F_CREATE
#define BPF_LOCAL_STORAGE_GET_F_CREATE 1
#endif

/* Largest task storage value the pre-5.11 fallback can create. */
#define KS_TASK_STORAGE_MAX 1024

/* The zero value a fallback entry starts from (task storage starts zeroed). */
static const char ks_compat_zero[KS_TASK_STORAGE_MAX];

#define ks_ksym_exists(sym) ({						\
	_Static_assert(!__builtin_constant_p(!!&sym), #sym " must be __weak"); \
	!!&sym;							\
})

/* The current task's value in task storage map @map (declared as
 * BPF_MAP_TYPE_TASK_STORAGE), created zeroed with
 * BPF_LOCAL_STORAGE_GET_F_CREATE. Before 5.11 the loader made @map an LRU
 * hash keyed by thread id: a value outlives its thread until evicted, so
 * callers must not trust a value they did not write in this call. */
static __always_inline void *ks_task_storage_get(void *map, __u64 flags)
{
	__u32 tid;
	void *v;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_storage_get))
		return bpf_task_storage_get(map, bpf_get_current_task_btf(), 0, flags);
	tid = (__u32)bpf_get_current_pid_tgid();
	v = bpf_map_lookup_elem(map, &tid);
	if (v || !(flags & BPF_LOCAL_STORAGE_GET_F_CREATE))
		return v;
	bpf_map_update_elem(map, &tid, ks_compat_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &tid);
}

/* bpf_get_socket_cookie() became callable from tracing programs in 5.12,
 * with bpf_get_socket_ptr_cookie_proto. */
extern const void bpf_get_socket_ptr_cookie_proto __ksym __weak;

/* The cookie of @sk from a tracing program (tp_btf, fentry, lsm). Before
 * 5.12: the cookie as far as the kernel generated it (on the first call of
 * bpf_get_socket_cookie from a socket or skb program), else 0. */
static __always_inline __u64 ks_sock_cookie(const struct sock *sk)
{
	if (ks_ksym_exists(bpf_get_socket_ptr_cookie_proto))
		return bpf_get_socket_cookie((void *)sk);
	return BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);
}

#endif /* KSHIELD_COMPAT_BPF_H */
