/* SPDX-License-Identifier: GPL-2.0-only */
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
	NFT_X_MAX
};

/* The type names, by a perfect hash of the name read as two little-endian
 * words (zero-padded to 16 bytes): one table read instead of a comparison
 * per name, which the verifier would follow one by one in every step of
 * the bounded loop kernels without bpf_loop run. Generated for NFTX_K
 * (searched so that no two names share a slot). */
struct nftx_ent {
	__u64 a, b;
	__u32 x;
};
#define NFTX_K	0x18074ae53df7b5a3ull
#define NFTX_H(a, b)	((((a) ^ ((b) * 0x9E3779B97F4A7C15ull)) * NFTX_K) >> 58)
const volatile struct nftx_ent nftx_tab[64] = {
	[0] = { 0x0000000000007472ull, 0x0000000000000000ull, NFT_X_RT },	/* "rt" */
	[1] = { 0x000000000074616eull, 0x0000000000000000ull, NFT_X_NAT },	/* "nat" */
	[2] = { 0x0065736977746962ull, 0x0000000000000000ull, NFT_X_BITWISE },	/* "bitwise" */
	[4] = { 0x0064616f6c796170ull, 0x0000000000000000ull, NFT_X_PAYLOAD },	/* "payload" */
	[7] = { 0x00000074696d696cull, 0x0000000000000000ull, NFT_X_LIMIT },	/* "limit" */
	[8] = { 0x000000006d726678ull, 0x0000000000000000ull, NFT_X_XFRM },	/* "xfrm" */
	[10] = { 0x0000000000706d63ull, 0x0000000000000000ull, NFT_X_CMP },	/* "cmp" */
	[14] = { 0x0000000000647766ull, 0x0000000000000000ull, NFT_X_FWD },	/* "fwd" */
	[15] = { 0x0000000000626966ull, 0x0000000000000000ull, NFT_X_FIB },	/* "fib" */
	[18] = { 0x000070756b6f6f6cull, 0x0000000000000000ull, NFT_X_LOOKUP },	/* "lookup" */
	[19] = { 0x0000000068736168ull, 0x0000000000000000ull, NFT_X_HASH },	/* "hash" */
	[20] = { 0x00000065676e6172ull, 0x0000000000000000ull, NFT_X_RANGE },	/* "range" */
	[26] = { 0x000000007473616cull, 0x0000000000000000ull, NFT_X_LAST },	/* "last" */
	[27] = { 0x000074656b636f73ull, 0x0000000000000000ull, NFT_X_SOCKET },	/* "socket" */
	[28] = { 0x00006665726a626full, 0x0000000000000000ull, NFT_X_OBJREF },	/* "objref" */
	[29] = { 0x0000007269646572ull, 0x0000000000000000ull, NFT_X_REDIR },	/* "redir" */
	[30] = { 0x0000726468747865ull, 0x0000000000000000ull, NFT_X_EXTHDR },	/* "exthdr" */
	[31] = { 0x0000000000707564ull, 0x0000000000000000ull, NFT_X_DUP },	/* "dup" */
	[34] = { 0x000000000066736full, 0x0000000000000000ull, NFT_X_OSF },	/* "osf" */
	[36] = { 0x74616964656d6d69ull, 0x0000000000000065ull, NFT_X_IMMEDIATE },	/* "immediate" */
	[38] = { 0x0000000000007463ull, 0x0000000000000000ull, NFT_X_CT },	/* "ct" */
	[42] = { 0x00006e65676d756eull, 0x0000000000000000ull, NFT_X_NUMGEN },	/* "numgen" */
	[43] = { 0x00007465736e7964ull, 0x0000000000000000ull, NFT_X_DYNSET },	/* "dynset" */
	[45] = { 0x0000006575657571ull, 0x0000000000000000ull, NFT_X_QUEUE },	/* "queue" */
	[49] = { 0x00000061746f7571ull, 0x0000000000000000ull, NFT_X_QUOTA },	/* "quota" */
	[52] = { 0x000000007173616dull, 0x0000000000000000ull, NFT_X_MASQ },	/* "masq" */
	[54] = { 0x00006c656e6e7574ull, 0x0000000000000000ull, NFT_X_TUNNEL },	/* "tunnel" */
	[56] = { 0x007265746e756f63ull, 0x0000000000000000ull, NFT_X_COUNTER },	/* "counter" */
	[57] = { 0x696d696c6e6e6f63ull, 0x0000000000000074ull, NFT_X_CONNLIMIT },	/* "connlimit" */
	[58] = { 0x000000006174656dull, 0x0000000000000000ull, NFT_X_META },	/* "meta" */
	[61] = { 0x000079786f727074ull, 0x0000000000000000ull, NFT_X_TPROXY },	/* "tproxy" */
	[62] = { 0x6564726f65747962ull, 0x0000000000000072ull, NFT_X_BYTEORDER },	/* "byteorder" */
};

/* The type an NFTA_EXPR_NAME payload at @off, @len bytes, names, compared
 * as the kernel does (nla_strcmp: trailing NULs stripped, so the name read
 * zero-padded to 16 bytes equals the table's zero-padded words). */
static __always_inline __u32 nft_expr_name(struct nlw *w, __u32 off, __u32 len)
{
	__u64 n[2] = { 0, 0 };
	const volatile struct nftx_ent *e;

	if (len > sizeof(n))
		return NFT_X_LONG;
	if (len == 0)
		return NFT_X_UNKNOWN;
	if (nlw_read(w, n, len, off)) {
		w->fault = 1;
		return NFT_X_UNKNOWN;
	}
	e = &nftx_tab[NFTX_H(n[0], n[1]) & 63];
	if (e->a == n[0] && e->b == n[1])
		return e->x;
	return NFT_X_UNKNOWN;
}

static __always_inline __u64 nft_x_load(const __u64 *p)
{
	return *(const volatile __u64 *)p;
}

/* NFT_EXPR_STATEFUL types (nft_counter, nft_quota, nft_limit,
 * nft_connlimit, nft_last): the only ones nft_expr_init() accepts. */
static __always_inline bool nft_expr_stateful(__u32 x)
{
	return x >= NFT_X_COUNTER && x <= NFT_X_LAST;
}

#endif
