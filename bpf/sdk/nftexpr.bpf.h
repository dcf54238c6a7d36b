/* nftexpr.bpf.h - nf_tables expressions seen from an nlwalk walk, for the
 * shields of bugs in expressions (cve-2022-1015, cve-2022-32250): message
 * and attribute numbers, and which expression an NFTA_EXPR_NAME names.
 * Include after nlwalk.bpf.h.
 *
 * An expression is a list element { NFTA_EXPR_NAME, NFTA_EXPR_DATA } whose
 * attributes come in any order: a shield records what it sees of the data
 * and the name in w->st, and decides at the element's end (NLW_ON_END).
 */
#ifndef KSHIELD_NFTEXPR_BPF_H
#define KSHIELD_NFTEXPR_BPF_H

#define NFT_NETLINK_NETFILTER	12
#define NFT_SUBSYS		(10 << 8)
#define NFT_NEWRULE		(NFT_SUBSYS | 6)
#define NFT_NEWSET		(NFT_SUBSYS | 9)
#define NFT_NEWSETELEM		(NFT_SUBSYS | 12)
#define NFT_NFGENMSG_LEN	4

#define NFTA_LIST_ELEM			1
#define NFTA_EXPR_NAME			1
#define NFTA_EXPR_DATA			2
#define NFTA_RULE_EXPRESSIONS		4
#define NFTA_SET_EXPR			17
#define NFTA_SET_EXPRESSIONS		18
#define NFTA_SET_ELEM_LIST_ELEMENTS	3
#define NFTA_SET_ELEM_EXPR		7
#define NFTA_SET_ELEM_EXPRESSIONS	11
#define NFTA_DYNSET_EXPR		7
#define NFTA_DYNSET_EXPRESSIONS		10

/* The expression types, by name. NFT_X_LONG: a name attribute longer than
 * 16 bytes, which only trailing NULs (stripped by the kernel's
 * nla_strcmp) can make match a type: callers treat it as any type. */
enum {
	NFT_X_UNKNOWN, NFT_X_LONG,
	/* stateful: the only ones a set, an element or dynset may hold */
	NFT_X_COUNTER, NFT_X_QUOTA, NFT_X_LIMIT, NFT_X_CONNLIMIT, NFT_X_LAST,
	/* with registers */
	NFT_X_IMMEDIATE, NFT_X_BITWISE, NFT_X_BYTEORDER, NFT_X_CMP, NFT_X_RANGE,
	NFT_X_LOOKUP, NFT_X_DYNSET, NFT_X_PAYLOAD, NFT_X_EXTHDR, NFT_X_HASH,
	NFT_X_META, NFT_X_RT, NFT_X_SOCKET, NFT_X_CT, NFT_X_QUEUE, NFT_X_NAT,
	NFT_X_TPROXY, NFT_X_MASQ, NFT_X_REDIR, NFT_X_DUP, NFT_X_FWD,
	NFT_X_OBJREF, NFT_X_FIB, NFT_X_NUMGEN, NFT_X_OSF, NFT_X_XFRM,
	NFT_X_TUNNEL,
};

/* Byte @i of string literal @s as the @i-th byte of a little-endian u64
 * (0 past its end): names compared as two words, folded at compile time. */
#define NFTX_B(s, i, sh) ((i) < sizeof(s) ? (__u64)(unsigned char)(s)[(i) < sizeof(s) ? (i) : 0] << (sh) : 0)
#define NFTX_W(s, o) (NFTX_B(s, o, 0) | NFTX_B(s, o + 1, 8) | NFTX_B(s, o + 2, 16) | \
		      NFTX_B(s, o + 3, 24) | NFTX_B(s, o + 4, 32) | NFTX_B(s, o + 5, 40) | \
		      NFTX_B(s, o + 6, 48) | NFTX_B(s, o + 7, 56))
#define NFTX_IS(n, s) ((n)[0] == NFTX_W(s, 0) && (n)[1] == NFTX_W(s, 8))

/* The type an NFTA_EXPR_NAME payload at @off, @len bytes, names, compared
 * as the kernel does (nla_strcmp: trailing NULs stripped, so the name read
 * zero-padded to 16 bytes equals the constant zero-padded). */
static __always_inline __u32 nft_expr_name(struct nlw *w, __u32 off, __u32 len)
{
	__u64 n[2] = { 0, 0 };

	if (len > sizeof(n))
		return NFT_X_LONG;
	if (len == 0)
		return NFT_X_UNKNOWN;
	if (nlw_read(w, n, len, off)) {
		w->fault = 1;
		return NFT_X_UNKNOWN;
	}
	if (NFTX_IS(n, "counter")) return NFT_X_COUNTER;
	if (NFTX_IS(n, "quota")) return NFT_X_QUOTA;
	if (NFTX_IS(n, "limit")) return NFT_X_LIMIT;
	if (NFTX_IS(n, "connlimit")) return NFT_X_CONNLIMIT;
	if (NFTX_IS(n, "last")) return NFT_X_LAST;
	if (NFTX_IS(n, "immediate")) return NFT_X_IMMEDIATE;
	if (NFTX_IS(n, "bitwise")) return NFT_X_BITWISE;
	if (NFTX_IS(n, "byteorder")) return NFT_X_BYTEORDER;
	if (NFTX_IS(n, "cmp")) return NFT_X_CMP;
	if (NFTX_IS(n, "range")) return NFT_X_RANGE;
	if (NFTX_IS(n, "lookup")) return NFT_X_LOOKUP;
	if (NFTX_IS(n, "dynset")) return NFT_X_DYNSET;
	if (NFTX_IS(n, "payload")) return NFT_X_PAYLOAD;
	if (NFTX_IS(n, "exthdr")) return NFT_X_EXTHDR;
	if (NFTX_IS(n, "hash")) return NFT_X_HASH;
	if (NFTX_IS(n, "meta")) return NFT_X_META;
	if (NFTX_IS(n, "rt")) return NFT_X_RT;
	if (NFTX_IS(n, "socket")) return NFT_X_SOCKET;
	if (NFTX_IS(n, "ct")) return NFT_X_CT;
	if (NFTX_IS(n, "queue")) return NFT_X_QUEUE;
	if (NFTX_IS(n, "nat")) return NFT_X_NAT;
	if (NFTX_IS(n, "tproxy")) return NFT_X_TPROXY;
	if (NFTX_IS(n, "masq")) return NFT_X_MASQ;
	if (NFTX_IS(n, "redir")) return NFT_X_REDIR;
	if (NFTX_IS(n, "dup")) return NFT_X_DUP;
	if (NFTX_IS(n, "fwd")) return NFT_X_FWD;
	if (NFTX_IS(n, "objref")) return NFT_X_OBJREF;
	if (NFTX_IS(n, "fib")) return NFT_X_FIB;
	if (NFTX_IS(n, "numgen")) return NFT_X_NUMGEN;
	if (NFTX_IS(n, "osf")) return NFT_X_OSF;
	if (NFTX_IS(n, "xfrm")) return NFT_X_XFRM;
	if (NFTX_IS(n, "tunnel")) return NFT_X_TUNNEL;
	return NFT_X_UNKNOWN;
}

/* NFT_EXPR_STATEFUL types (nft_counter, nft_quota, nft_limit,
 * nft_connlimit, nft_last): the only ones nft_expr_init() accepts. */
static __always_inline bool nft_expr_stateful(__u32 x)
{
	return x >= NFT_X_COUNTER && x <= NFT_X_LAST;
}

#endif
