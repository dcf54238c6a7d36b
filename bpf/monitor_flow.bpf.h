/* SPDX-License-Identifier: GPL-2.0-only */
/* flow.bpf.h - the monitor's per-socket traffic accounting: `flow` records
 * (struct ks_flow_event) for TCP and UDP over IPv4 and IPv6. Included by
 * monitor.bpf.c after its maps.
 *
 * Two ways to see traffic; the loader (src/lib/monitor/monitor.c) attaches
 * one, by what the kernel has (ks_kernel_flow_calls):
 *   per call (6.5+: every send and receive of every socket passes
 *	sock_sendmsg/sock_recvmsg, which have the sock_send_length and
 *	sock_recv_length tracepoints, and .sendpage is gone): mon_flow_send
 *	and mon_flow_recv run once per send or receive call, in the caller's
 *	context, and nothing runs per packet: a connection that moves no
 *	payload costs nothing here. Unconnected UDP's peers come from the
 *	cgroup sendmsg4/6 and recvmsg4/6 hooks, which only UDP calls pass
 *	(recvmsg: when the caller asks for the source address);
 *   per packet (older kernels): cgroup_skb/egress and cgroup_skb/ingress on
 *	the cgroup2 root, which every packet of every socket pays.
 * Both: UDP counts each socket's payload and the datagrams that carry it,
 * keyed by socket cookie; TCP makes the flow's state (owner, addresses,
 * start) at its first payload and counts nothing: the kernel's own
 * tcp_sock counters are read instead (flow_tcp_read), which count each
 * byte once however often it was retransmitted;
 *   mon_sock_state (monitor.bpf.c, tp_btf/inet_sock_set_state; without the
 *	kernel's own BTF mon_sock_state__nobtf at the raw tracepoint, which
 *	reads the socket by probed reads): TCP_CLOSE sends the totals; the
 *	owner recorded at connect (mon_socks) or the listener
 *	(mon_listeners) is copied when the state is made;
 *   cgroup/sock_release: UDP close sends the totals.
 * The per-socket state is an LRU hash: memory is bounded, and a socket
 * whose state was evicted is counted in ks_lost[KS_EV_FLOW] when it
 * closes (TCP still gets a record, from the socket's own counters).
 *
 * Interim records are driven by traffic: the first call (or packet) after
 * flow_interval_ns since the last record sends one, so a slow transfer on a
 * long connection is seen while it runs and while no agent reads, with no
 * timer. The cgroup programs always return 1: accounting never drops.
 */
#ifndef KSHIELD_FLOW_BPF_H
#define KSHIELD_FLOW_BPF_H

#define IPPROTO_UDP	17
#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define FLOW_DEFAULT_NS	(60ULL * 1000000000ULL)

struct flow {
	struct ks_flow_event e;	/* e.hdr is the owner's header */
	__u64 next_report;	/* monotonic ns */
	__u64 reported;		/* bytes_out + bytes_in in the last record */
	__u32 late;		/* made by a packet, not at connect/accept: the
				 * socket is older than this state */
	__u32 syn;		/* TCP: 1 when this end connected (its SYN is
				 * in bytes_acked), 0 when it accepted */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u64);		/* socket cookie */
	__type(value, struct flow);
} mon_flows SEC(".maps");

static const struct flow flow_zero;

/* Whether cgroup_skb / cgroup sock programs may ask who is running (the
 * current-task helpers: 6.1 and 6.12 lack some there, 6.18 has them). Set by the loader from
 * libbpf_probe_bpf_helper(); when false the verifier never sees the calls,
 * and a UDP flow's owner stays unknown. */
const volatile bool skb_knows_current;
const volatile bool sock_knows_current;

static __always_inline __u64 flow_interval(void)
{
	struct ks_monitor_cfg *c = cfg();

	return c && c->flow_interval_ns ? c->flow_interval_ns : FLOW_DEFAULT_NS;
}

/* Insert zeroed state for @cookie and return it (NULL only if the map
 * refused, which an LRU hash does not when full: it evicts). */
static __always_inline struct flow *flow_new(__u64 cookie, __u8 proto)
{
	struct flow *f;

	bpf_map_update_elem(&mon_flows, &cookie, &flow_zero, BPF_NOEXIST);
	f = bpf_map_lookup_elem(&mon_flows, &cookie);
	if (f && !f->e.cookie) {
		f->e.cookie = cookie;
		f->e.proto = proto;
		f->e.start_ns = bpf_ktime_get_boot_ns();
		f->next_report = bpf_ktime_get_ns() + flow_interval();
		f->e.flags = KS_FLOW_NO_OWNER;
	}
	return f;
}

/* Send @f as a record (final or interim) with the current time. */
static __always_inline void flow_send(struct flow *f, __u8 flags)
{
	struct ks_flow_event *e = ks_reserve(KS_EV_FLOW, sizeof(*e));

	if (!e)
		return;
	__builtin_memcpy(e, &f->e, sizeof(*e));
	e->hdr.kind = KS_EV_FLOW;
	e->hdr.size = sizeof(*e);
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	e->flags |= flags;
	submit(e);
}

/* The interval is over (@now): an interim record if the totals moved
 * since the last one, and the next one an interval on. */
static __always_inline void flow_interim(struct flow *f, __u64 now)
{
	__u64 moved = f->e.bytes_out + f->e.bytes_in;

	f->next_report = now + flow_interval();
	if (moved != f->reported) {
		f->reported = moved;
		flow_send(f, 0);
	}
}

/* ---- per packet ---- */

/* Fill the 5-tuple from the packet: local is the source going out. */
static __always_inline void flow_addrs(struct __sk_buff *skb, struct flow *f, bool v4,
				       __u32 ipl, bool out)
{
	__u16 ports[2];
	__u32 a[8] = {};

	f->e.family = v4 ? AF_INET : AF_INET6;
	if (v4) {
		bpf_skb_load_bytes(skb, 12, a, 8);
		a[4] = a[1];	/* daddr into the second half, as for IPv6 */
		a[1] = 0;
	} else {
		bpf_skb_load_bytes(skb, 8, a, 32);
	}
	if (bpf_skb_load_bytes(skb, ipl, ports, 4))
		ports[0] = ports[1] = 0;
	__builtin_memcpy(out ? f->e.laddr : f->e.raddr, &a[0], 16);
	__builtin_memcpy(out ? f->e.raddr : f->e.laddr, &a[4], 16);
	f->e.lport = bpf_ntohs(out ? ports[0] : ports[1]);
	f->e.rport = bpf_ntohs(out ? ports[1] : ports[0]);
}

/* UDP: flag a packet whose peer is not the first one: its port, or its
 * address (IPv4: the word; IPv6: the last word, which differs between
 * almost any two peers). */
static __always_inline void flow_peer_check(struct __sk_buff *skb, struct flow *f, bool v4,
					    __u32 ipl, bool out)
{
	__u16 port = 0;
	__u32 w = 0;

	if (v4)
		bpf_skb_load_bytes(skb, out ? 16 : 12, &w, 4);
	else
		bpf_skb_load_bytes(skb, out ? 36 : 20, &w, 4);
	bpf_skb_load_bytes(skb, ipl + (out ? 2 : 0), &port, 2);
	if (w != *(__u32 *)&f->e.raddr[v4 ? 0 : 12] || bpf_ntohs(port) != f->e.rport)
		f->e.flags |= KS_FLOW_PEERS;
}

/* The owner of TCP connection @cookie: the process that connected
 * (mon_socks; f->syn: its SYN is in bytes_acked), else the one listening
 * on local @port, else NULL. */
static __always_inline struct ks_hdr *tcp_owner(struct flow *f, __u64 cookie, __u16 family,
						__u16 port)
{
	struct ks_hdr *h = bpf_map_lookup_elem(&mon_socks, &cookie);

	if (h) {
		f->syn = 1;
		return h;
	}
	return listener_of(family, port);
}

/* A TCP flow's state is made at its first payload packet (a connection
 * that carries none costs no state): the owner is the connecting process
 * (mon_socks, by cookie, from connect) or the listener (mon_listeners, by
 * local port). State made after payload already moved (the socket is older
 * than the monitor, or its state was evicted) is late: its totals at close
 * come from the socket's own counters. @segs: this packet's segments when
 * TCP already counted them (egress). */
static __always_inline void flow_tcp_owner(struct bpf_sock *sk, struct flow *f, __u64 cookie,
					   __u32 segs)
{
	struct ks_hdr *h = tcp_owner(f, cookie, sk->family, sk->src_port);
	struct bpf_tcp_sock *tp;

	if (h) {
		f->e.hdr = *h;
		f->e.flags &= ~KS_FLOW_NO_OWNER;
	}
	tp = bpf_tcp_sock(sk);
	if (!h || (tp && tp->data_segs_in + tp->data_segs_out > segs))
		f->late = 1;
}

/* A TCP flow's totals so far, for an interim record, from what a
 * cgroup_skb program may read of the socket (struct bpf_tcp_sock has no
 * bytes_sent): bytes_acked counts each byte once, plus the SYN at the
 * connecting end (f->syn; an older socket without owner may count it as
 * 1 more); the final record is exact (flow_tcp_read). */
static __always_inline void flow_tcp_so_far(struct bpf_sock *sk, struct flow *f)
{
	struct bpf_tcp_sock *tp = bpf_tcp_sock(sk);

	if (!tp)
		return;
	f->e.bytes_out = tp->bytes_acked > f->syn ? tp->bytes_acked - f->syn : 0;
	f->e.bytes_in = tp->bytes_received;
	f->e.pkts_out = tp->data_segs_out;
	f->e.pkts_in = tp->data_segs_in;
}

/* The byte at @off from the network header: read in place when it is in
 * the linear part (headers are, nearly always), which costs a fraction of
 * a bpf_skb_load_bytes() call. */
struct pkt {
	struct __sk_buff *skb;
	__u8 *data, *end;
};

static __always_inline int byte_at(struct pkt *k, __u32 off, __u8 *b)
{
	__u8 *p = k->data, *end = k->end;

	if (off < 512) {
		p += off;
		if (p + 1 <= end) {
			*b = *p;
			return 0;
		}
	}
	return bpf_skb_load_bytes(k->skb, off, b, 1);
}

static __always_inline int flow_count(struct __sk_buff *skb, bool out)
{
	struct bpf_sock *sk = skb->sk;
	__u32 ipl, l4, len, segs, proto;
	__u64 cookie, payload, now;
	struct flow *f;
	__u8 b = 0;
	bool v4;

	struct pkt k = { skb };

	if (!sk || !(sk = bpf_sk_fullsock(sk)))
		return 1;
	/* read once, at fixed context offsets (the verifier requires it) */
	k.data = (__u8 *)(long)skb->data;
	k.end = (__u8 *)(long)skb->data_end;
	proto = sk->protocol;
	if (proto == IPPROTO_TCP) {
		/* listeners see handshakes, closed sockets only resets */
		if (sk->state == TCP_LISTEN || sk->state == TCP_CLOSE)
			return 1;
	} else if (proto != IPPROTO_UDP) {
		return 1;
	}
	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		if (byte_at(&k, 0, &b))
			return 1;
		ipl = (b & 0xf) * 4;
		v4 = true;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		ipl = 40;
		v4 = false;
		if (byte_at(&k, 6, &b))
			return 1;
		/* extension headers: BIG TCP's hop-by-hop jumbo header above
		 * all (a GSO packet over 64K), routing, destination options */
		for (int i = 0; i < 3 && (b == 0 || b == 43 || b == 60); i++) {
			__u8 len8 = 0;

			if (byte_at(&k, ipl, &b) || byte_at(&k, ipl + 1, &len8))
				return 1;
			ipl += (len8 + 1) * 8;
		}
	} else {
		return 1;
	}
	if (proto == IPPROTO_TCP) {
		if (byte_at(&k, ipl + 12, &b))
			return 1;
		l4 = (b >> 4) * 4;
	} else {
		l4 = 8;
	}
	len = skb->len;
	payload = len > ipl + l4 ? len - ipl - l4 : 0;
	/* handshakes, pure ACKs, FINs, resets: nothing to count, and no
	 * lookup (a connect storm is made of nothing else) */
	if (!payload)
		return 1;
	segs = skb->gso_segs ? skb->gso_segs : 1;

	cookie = bpf_get_socket_cookie(skb);
	f = bpf_map_lookup_elem(&mon_flows, &cookie);
	if (!f) {
		if (!(f = flow_new(cookie, proto)))
			return 1;
		if (proto == IPPROTO_TCP)
			flow_tcp_owner(sk, f, cookie, out ? segs : 0);
	}
	if (!f->e.family)
		flow_addrs(skb, f, v4, ipl, out);
	else if (proto == IPPROTO_UDP)
		flow_peer_check(skb, f, v4, ipl, out);
	if (proto == IPPROTO_TCP) {
		/* TCP counts in the socket (interim records read it below) */
	} else if (out) {
		__sync_fetch_and_add(&f->e.bytes_out, payload);
		__sync_fetch_and_add(&f->e.pkts_out, segs);
		/* UDP sends run in the sender's context: the first names the owner */
		if (skb_knows_current && (f->e.flags & KS_FLOW_NO_OWNER)) {
			ks_fill_hdr(&f->e.hdr, KS_EV_FLOW, sizeof(f->e));
			f->e.flags &= ~KS_FLOW_NO_OWNER;
		}
	} else {
		__sync_fetch_and_add(&f->e.bytes_in, payload);
		__sync_fetch_and_add(&f->e.pkts_in, segs);
	}
	now = bpf_ktime_get_ns();
	if (now >= f->next_report) {
		if (proto == IPPROTO_TCP)
			flow_tcp_so_far(sk, f);
		flow_interim(f, now);
	}
	return 1;
}

SEC("cgroup_skb/egress")
int mon_flow_egress(struct __sk_buff *skb)
{
	return flow_count(skb, true);
}

SEC("cgroup_skb/ingress")
int mon_flow_ingress(struct __sk_buff *skb)
{
	return flow_count(skb, false);
}

/* ---- open and close ---- */

/* Send the final record of @cookie's flow and forget it. Flows that moved
 * no payload have their connect/accept records and nothing more. */
static __always_inline bool flow_close(__u64 cookie, struct flow *f)
{
	if (!f)
		return false;
	if (f->e.bytes_out || f->e.bytes_in)
		flow_send(f, KS_FLOW_FINAL);
	bpf_map_delete_elem(&mon_flows, &cookie);
	return true;
}

/* A TCP socket's payload totals from its own counters (RFC 4898's), each
 * byte once however often it was sent: out = bytes_sent - bytes_retrans
 * (both since 4.19; bytes_acked would also count the connecting end's SYN
 * and an acknowledged FIN, 1 each, measured), in = bytes_received less
 * the FIN it counts as 1 once one came (SOCK_DONE). Packets are the data
 * segments, retransmitted ones again. */
static __always_inline bool flow_tcp_fin(const struct tcp_sock *tp, const bool probed)
{
	return KS_RD(probed, tp, bytes_received) &&
	       (KS_RD(probed, tp, inet_conn.icsk_inet.sk.__sk_common.skc_flags) &
		(1UL << SOCK_DONE));
}

static __always_inline void flow_tcp_read(const struct tcp_sock *tp, struct ks_flow_event *e,
					  const bool probed)
{
	__u64 sent = KS_RD(probed, tp, bytes_acked);

	if (bpf_core_field_exists(tp->bytes_sent) && bpf_core_field_exists(tp->bytes_retrans))
		sent = KS_RD(probed, tp, bytes_sent) - KS_RD(probed, tp, bytes_retrans);
	e->bytes_out = sent;
	e->bytes_in = KS_RD(probed, tp, bytes_received) - flow_tcp_fin(tp, probed);
	e->pkts_out = KS_RD(probed, tp, data_segs_out);
	e->pkts_in = KS_RD(probed, tp, data_segs_in);
}

/* TCP close without state: evicted (table full) or older than the monitor.
 * The socket gives the totals and the 5-tuple. */
static __always_inline void flow_untracked(const struct sock *sk, const struct tcp_sock *tp,
					   __u64 cookie, const bool probed)
{
	struct ks_flow_event *e;

	ks_count_lost(KS_EV_FLOW);
	e = ks_reserve(KS_EV_FLOW, sizeof(*e));
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->hdr.kind = KS_EV_FLOW;
	e->hdr.size = sizeof(*e);
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	e->cookie = cookie;
	e->start_ns = e->hdr.ts_ns;	/* unknown */
	flow_tcp_read(tp, e, probed);
	e->proto = IPPROTO_TCP;
	e->flags = KS_FLOW_FINAL | KS_FLOW_NO_OWNER | KS_FLOW_UNTRACKED;
	SK_ADDRS(sk, e, probed);
	submit(e);
}

/* TCP_CLOSE of a connection (called by mon_sock_state): the totals are
 * the socket's (flow_tcp_read), whatever the per-packet state saw. A
 * connection that moved no payload has no state (made at the first
 * payload packet) and no record: no lookup (a connect storm is made of
 * nothing else). State made late (the socket is older than the monitor,
 * or its state was evicted and made again) has a start and maybe an owner
 * that are not the connection's: flagged untracked. @probed (a raw
 * tracepoint's plain address, KS_RD): @sk is a TCP socket's, a full one
 * (inet_sock_set_state is traced for those only), read as its tcp_sock. */
static __always_inline void flow_tcp_close(const struct sock *sk, __u64 cookie,
					   const bool probed)
{
	struct tcp_sock *tp = probed ? (struct tcp_sock *)sk : bpf_skc_to_tcp_sock((void *)sk);
	struct ks_flow_event t;
	struct flow *f;

	if (!tp)
		return;
	flow_tcp_read(tp, &t, probed);
	if (!t.bytes_out && !t.bytes_in)
		return;
	f = bpf_map_lookup_elem(&mon_flows, &cookie);
	if (!f) {
		flow_untracked(sk, tp, cookie, probed);
		return;
	}
	f->e.bytes_out = t.bytes_out;
	f->e.bytes_in = t.bytes_in;
	f->e.pkts_out = t.pkts_out;
	f->e.pkts_in = t.pkts_in;
	if (f->late)
		f->e.flags |= KS_FLOW_UNTRACKED;
	flow_close(cookie, f);
}

/* ---- per call (6.5+) ---- */

#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define MSG_PEEK	2

/* A TCP flow's state made at a send or receive of @ret bytes (@out: a
 * send): the owner as flow_tcp_owner() finds it, or the caller for a
 * socket neither end of which the monitor saw made; late when payload
 * moved before this call: what the application wrote before it (the acked
 * bytes, less this end's SYN, and what is queued) or read before it (what
 * arrived less what is still unread). */
static __always_inline void flow_call_tcp_new(struct sock *sk, struct flow *f, __u64 cookie,
					      int ret, bool out)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	struct ks_hdr *h = tcp_owner(f, cookie, sk->__sk_common.skc_family,
				     sk->__sk_common.skc_num);
	__s64 wrote, read;
	__u32 unread, fin;

	if (h)
		f->e.hdr = *h;
	else
		ks_fill_owner(&f->e.hdr, KS_EV_FLOW, sizeof(f->e));
	f->e.flags &= ~KS_FLOW_NO_OWNER;
	if (!tp)
		return;
	wrote = (__s64)tp->bytes_acked - f->syn + (__u32)(tp->write_seq - tp->snd_una) -
		(out ? ret : 0);
	/* A FIN that came counts 1 in bytes_received and in rcv_nxt, and once
	 * read (the call that returned the last bytes reads it too) 1 in
	 * copied_seq: without it, 1 byte "read before" and every server end
	 * whose client had closed first was flagged untracked. */
	fin = flow_tcp_fin(tp, false);
	unread = tp->rcv_nxt - tp->copied_seq;
	if (fin && unread)
		unread--;
	read = (__s64)tp->bytes_received - fin - unread - (out ? 0 : ret);
	if (!h || wrote > 0 || read > 0)
		f->late = 1;
}

/* A send (@out) or receive of @ret bytes on @sk, after it happened, in
 * the caller's context: UDP counts it (one datagram a call: UDP_SEGMENT
 * sends count as one), TCP only makes its state; either may send an
 * interim record. */
static __always_inline void flow_call(struct sock *sk, int ret, int flags, bool out)
{
	__u16 family, proto, type;
	__u64 cookie, now;
	struct flow *f;

	if (ret <= 0 || !sk || (!out && (flags & MSG_PEEK)))
		return;
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return;
	proto = sk->sk_protocol;
	type = sk->sk_type;
	if (!(proto == IPPROTO_TCP && type == SOCK_STREAM) &&
	    !(proto == IPPROTO_UDP && type == SOCK_DGRAM))
		return;
	cookie = ks_sock_cookie(sk);
	f = bpf_map_lookup_elem(&mon_flows, &cookie);
	if (!f) {
		if (!(f = flow_new(cookie, proto)))
			return;
		if (proto == IPPROTO_TCP)
			flow_call_tcp_new(sk, f, cookie, ret, out);
	}
	if (!f->e.family)
		SK_ADDRS(sk, &f->e, false);
	if (proto == IPPROTO_UDP) {
		/* the first caller owns it (a receive-only socket too) */
		if (f->e.flags & KS_FLOW_NO_OWNER) {
			ks_fill_owner(&f->e.hdr, KS_EV_FLOW, sizeof(f->e));
			f->e.flags &= ~KS_FLOW_NO_OWNER;
		}
		if (out) {
			__sync_fetch_and_add(&f->e.bytes_out, ret);
			__sync_fetch_and_add(&f->e.pkts_out, 1);
		} else {
			__sync_fetch_and_add(&f->e.bytes_in, ret);
			__sync_fetch_and_add(&f->e.pkts_in, 1);
		}
	}
	now = bpf_ktime_get_ns();
	if (now >= f->next_report) {
		if (proto == IPPROTO_TCP) {
			struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

			if (tp)
				flow_tcp_read(tp, &f->e, false);
		}
		flow_interim(f, now);
	}
}

/* No twins (monitor.bpf.c MON_TWIN): these run for every send and
 * receive. A skipped run is counted ('missed'): a UDP datagram's bytes, or
 * a TCP flow's state made one call late (untracked). */
SEC("tp_btf/sock_send_length")
int BPF_PROG(mon_flow_send, struct sock *sk, int ret, int flags)
{
	flow_call(sk, ret, flags, true);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(mon_flow_recv, struct sock *sk, int ret, int flags)
{
	flow_call(sk, ret, flags, false);
	return 0;
}

/* Unconnected UDP: the peer of a sendto() (its destination) or of a
 * recvfrom() that asks for the source. The first peer is the flow's; a
 * second one sets KS_FLOW_PEERS (IPv6: compared by its last word). */
static __always_inline void flow_peer(struct bpf_sock_addr *ctx, bool v6)
{
	struct bpf_sock *sk = ctx->sk;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 a[4] = {};
	__u64 cookie;
	struct flow *f;

	if (!sk || sk->protocol != IPPROTO_UDP)
		return;
	if (v6) {
		a[0] = ctx->user_ip6[0];
		a[1] = ctx->user_ip6[1];
		a[2] = ctx->user_ip6[2];
		a[3] = ctx->user_ip6[3];
	} else {
		a[0] = ctx->user_ip4;
	}
	cookie = bpf_get_socket_cookie(ctx);
	f = bpf_map_lookup_elem(&mon_flows, &cookie);
	if (!f && !(f = flow_new(cookie, IPPROTO_UDP)))
		return;
	if (!f->e.family) {
		f->e.family = v6 ? AF_INET6 : AF_INET;
		f->e.lport = sk->src_port;
		f->e.rport = port;
		__builtin_memcpy(f->e.raddr, a, 16);
		if (v6) {
			a[0] = sk->src_ip6[0];
			a[1] = sk->src_ip6[1];
			a[2] = sk->src_ip6[2];
			a[3] = sk->src_ip6[3];
		} else {
			a[0] = sk->src_ip4;
		}
		__builtin_memcpy(f->e.laddr, a, 16);
	} else if (a[v6 ? 3 : 0] != *(__u32 *)&f->e.raddr[v6 ? 12 : 0] || port != f->e.rport) {
		f->e.flags |= KS_FLOW_PEERS;
	}
}

SEC("cgroup/sendmsg4")
int mon_flow_sendmsg4(struct bpf_sock_addr *ctx)
{
	flow_peer(ctx, false);
	return 1;
}

SEC("cgroup/sendmsg6")
int mon_flow_sendmsg6(struct bpf_sock_addr *ctx)
{
	flow_peer(ctx, true);
	return 1;
}

SEC("cgroup/recvmsg4")
int mon_flow_recvmsg4(struct bpf_sock_addr *ctx)
{
	flow_peer(ctx, false);
	return 1;
}

SEC("cgroup/recvmsg6")
int mon_flow_recvmsg6(struct bpf_sock_addr *ctx)
{
	flow_peer(ctx, true);
	return 1;
}

/* close() of a UDP socket, in the closing process's context: a socket
 * that only received is attributed to the process that closes it. */
SEC("cgroup/sock_release")
int mon_flow_release(struct bpf_sock *sk)
{
	__u64 cookie;
	struct flow *f;

	if (sk->protocol != IPPROTO_UDP)
		return 1;
	cookie = bpf_get_socket_cookie(sk);
	f = bpf_map_lookup_elem(&mon_flows, &cookie);
	if (sock_knows_current && f && (f->e.flags & KS_FLOW_NO_OWNER)) {
		ks_fill_hdr(&f->e.hdr, KS_EV_FLOW, sizeof(f->e));
		f->e.flags &= ~KS_FLOW_NO_OWNER;
	}
	flow_close(cookie, f);
	return 1;
}

#endif /* KSHIELD_FLOW_BPF_H */
