// SPDX-License-Identifier: MIT
/* nlbuild.c - raw netlink request building for shield tests (see nlbuild.h).
 * Messages are laid out exactly as libmnl lays them out: 4-byte aligned
 * attributes, NLA_F_NESTED on nests, one request per sendmsg. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include "nlbuild.h"

#define ALIGN4(n) (((n) + 3) & ~(size_t)3)

void ks_nlb_init(struct ks_nlbuild *b, void *buf, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->buf = buf;
	b->cap = cap;
	b->seq = 1;
	memset(buf, 0, cap);
}

static void *reserve(struct ks_nlbuild *b, size_t n)
{
	void *p;

	if (b->overflow || b->len + ALIGN4(n) > b->cap) {
		b->overflow = 1;
		return NULL;
	}
	p = b->buf + b->len;
	b->len += ALIGN4(n);
	return p;
}

void ks_nlb_msg(struct ks_nlbuild *b, uint16_t type, uint16_t flags, const void *hdr, size_t hdrlen)
{
	struct nlmsghdr *h;
	void *fh;

	b->msg = b->len;
	h = reserve(b, sizeof(*h));
	if (!h)
		return;
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	h->nlmsg_seq = b->seq++;
	if (hdrlen && (fh = reserve(b, hdrlen)))
		memcpy(fh, hdr, hdrlen);
}

void ks_nlb_msg_end(struct ks_nlbuild *b)
{
	if (b->overflow)
		return;
	((struct nlmsghdr *)(b->buf + b->msg))->nlmsg_len = b->len - b->msg;
}

void ks_nlb_put(struct ks_nlbuild *b, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = reserve(b, NLA_HDRLEN + len);

	if (!a)
		return;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
}

void ks_nlb_put_str(struct ks_nlbuild *b, uint16_t type, const char *s)
{
	ks_nlb_put(b, type, s, strlen(s) + 1);
}

void ks_nlb_put_u32(struct ks_nlbuild *b, uint16_t type, uint32_t v)
{
	ks_nlb_put(b, type, &v, sizeof(v));
}

void ks_nlb_put_be32(struct ks_nlbuild *b, uint16_t type, uint32_t v)
{
	v = htonl(v);
	ks_nlb_put(b, type, &v, sizeof(v));
}

void ks_nlb_nest(struct ks_nlbuild *b, uint16_t type)
{
	if (b->depth >= NLB_MAX_NEST) {
		b->overflow = 1;
		return;
	}
	b->nest[b->depth++] = b->len;
	ks_nlb_put(b, type | NLA_F_NESTED, NULL, 0);
}

void ks_nlb_nest_end(struct ks_nlbuild *b)
{
	if (b->overflow || b->depth <= 0)
		return;
	b->depth--;
	((struct nlattr *)(b->buf + b->nest[b->depth]))->nla_len = b->len - b->nest[b->depth];
}

void ks_nlb_nft_begin(struct ks_nlbuild *b)
{
	struct nfgenmsg g = { .nfgen_family = 0, .version = NFNETLINK_V0,
			      .res_id = htons(NFNL_SUBSYS_NFTABLES) };

	ks_nlb_msg(b, NFNL_MSG_BATCH_BEGIN, 0, &g, sizeof(g));
	((struct nlmsghdr *)(b->buf + b->msg))->nlmsg_flags = NLM_F_REQUEST;
	ks_nlb_msg_end(b);
}

void ks_nlb_nft_msg(struct ks_nlbuild *b, uint16_t nft_type, uint16_t flags, uint8_t family)
{
	struct nfgenmsg g = { .nfgen_family = family, .version = NFNETLINK_V0 };

	ks_nlb_msg(b, (NFNL_SUBSYS_NFTABLES << 8) | nft_type, flags, &g, sizeof(g));
}

void ks_nlb_nft_end(struct ks_nlbuild *b)
{
	struct nfgenmsg g = { .nfgen_family = 0, .version = NFNETLINK_V0,
			      .res_id = htons(NFNL_SUBSYS_NFTABLES) };

	ks_nlb_msg(b, NFNL_MSG_BATCH_END, 0, &g, sizeof(g));
	((struct nlmsghdr *)(b->buf + b->msg))->nlmsg_flags = NLM_F_REQUEST;
	ks_nlb_msg_end(b);
}

void ks_nlb_nft_table(struct ks_nlbuild *b, uint8_t family, const char *table)
{
	ks_nlb_nft_msg(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, family);
	ks_nlb_put_str(b, NFTA_TABLE_NAME, table);
	ks_nlb_msg_end(b);
}

void ks_nlb_nft_chain(struct ks_nlbuild *b, uint8_t family, const char *table, const char *chain)
{
	ks_nlb_nft_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE, family);
	ks_nlb_put_str(b, NFTA_CHAIN_TABLE, table);
	ks_nlb_put_str(b, NFTA_CHAIN_NAME, chain);
	ks_nlb_msg_end(b);
}

void ks_nlb_nft_base_chain(struct ks_nlbuild *b, uint8_t family, const char *table,
			const char *chain, uint32_t hooknum)
{
	ks_nlb_nft_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE, family);
	ks_nlb_put_str(b, NFTA_CHAIN_TABLE, table);
	ks_nlb_put_str(b, NFTA_CHAIN_NAME, chain);
	ks_nlb_nest(b, NFTA_CHAIN_HOOK);
	ks_nlb_put_be32(b, NFTA_HOOK_HOOKNUM, hooknum);
	ks_nlb_put_be32(b, NFTA_HOOK_PRIORITY, 0);
	ks_nlb_nest_end(b);
	ks_nlb_put_str(b, NFTA_CHAIN_TYPE, "filter");
	ks_nlb_msg_end(b);
}

/* Table @table and chain @chain (a base chain on @hooknum when @hooked)
 * in one acked batch through @fd. */
static int nft_setup(int fd, uint8_t family, const char *table, const char *chain,
		     bool hooked, uint32_t hooknum, char *why, size_t len)
{
	char buf[1024];
	struct ks_nlbuild b;
	int err, ack;

	ks_nlb_init(&b, buf, sizeof(buf));
	ks_nlb_nft_begin(&b);
	ks_nlb_nft_table(&b, family, table);
	if (hooked)
		ks_nlb_nft_base_chain(&b, family, table, chain, hooknum);
	else
		ks_nlb_nft_chain(&b, family, table, chain);
	ks_nlb_nft_end(&b);
	err = ks_nlb_talk(fd, &b, &ack);
	if (err || ack) {
		err = err ? err : ack;
		snprintf(why, len, "nf_tables unavailable: table and %schain batch: %s",
			 hooked ? "base " : "", strerror(-err));
		return err;
	}
	return 0;
}

int ks_nlb_nft_setup_hooked(int fd, uint8_t family, const char *table, const char *chain,
			 uint32_t hooknum, char *why, size_t len)
{
	return nft_setup(fd, family, table, chain, true, hooknum, why, len);
}

int ks_nlb_nft_setup(int fd, uint8_t family, const char *table, const char *chain,
		  char *why, size_t len)
{
	return nft_setup(fd, family, table, chain, false, 0, why, len);
}

void ks_nlb_nft_payload_expr(struct ks_nlbuild *b, uint32_t dreg, uint32_t base, uint32_t offset,
			  uint32_t len)
{
	ks_nlb_nest(b, NFTA_LIST_ELEM);
	ks_nlb_put_str(b, NFTA_EXPR_NAME, "payload");
	ks_nlb_nest(b, NFTA_EXPR_DATA);
	ks_nlb_put_be32(b, NFTA_PAYLOAD_DREG, dreg);
	ks_nlb_put_be32(b, NFTA_PAYLOAD_BASE, base);
	ks_nlb_put_be32(b, NFTA_PAYLOAD_OFFSET, offset);
	ks_nlb_put_be32(b, NFTA_PAYLOAD_LEN, len);
	ks_nlb_nest_end(b);
	ks_nlb_nest_end(b);
}

void ks_nlb_nft_verdict_expr(struct ks_nlbuild *b, uint32_t verdict)
{
	ks_nlb_nest(b, NFTA_LIST_ELEM);
	ks_nlb_put_str(b, NFTA_EXPR_NAME, "immediate");
	ks_nlb_nest(b, NFTA_EXPR_DATA);
	ks_nlb_put_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	ks_nlb_nest(b, NFTA_IMMEDIATE_DATA);
	ks_nlb_nest(b, NFTA_DATA_VERDICT);
	ks_nlb_put_be32(b, NFTA_VERDICT_CODE, verdict);
	ks_nlb_nest_end(b);
	ks_nlb_nest_end(b);
	ks_nlb_nest_end(b);
	ks_nlb_nest_end(b);
}

static char errmsg[128];

const char *ks_nlb_errmsg(void)
{
	return errmsg;
}

/* The extended ack's message (NLMSGERR_ATTR_MSG) of error reply @h, if
 * the socket asked for them (NETLINK_EXT_ACK), into errmsg. */
static void save_errmsg(const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t off = NLMSG_HDRLEN, end = h->nlmsg_len;

	errmsg[0] = '\0';
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off += h->nlmsg_flags & NLM_F_CAPPED ? sizeof(*e) :
	       sizeof(e->error) + NLMSG_ALIGN(e->msg.nlmsg_len);
	while (off + sizeof(struct nlattr) <= end) {
		const struct nlattr *a = (const void *)((const char *)h + off);

		if (a->nla_len < sizeof(*a) || off + a->nla_len > end)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
			snprintf(errmsg, sizeof(errmsg), "%.*s", (int)(a->nla_len - sizeof(*a)),
				 (const char *)(a + 1));
			return;
		}
		off += NLA_ALIGN(a->nla_len);
	}
}

int ks_nlb_replies(int fd, int *ack)
{
	char rbuf[8192];
	int count = 0;
	ssize_t r;

	*ack = 0;
	errmsg[0] = '\0';
	while ((r = recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT)) > 0) {
		int n = r;

		for (struct nlmsghdr *h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct nlmsgerr *e = NLMSG_DATA(h);

			count++;
			if (h->nlmsg_type == NLMSG_ERROR && e->error && !*ack) {
				*ack = e->error;
				save_errmsg(h);
			}
		}
	}
	return count;
}

int ks_nlb_talk(int fd, struct ks_nlbuild *b, int *ack)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	*ack = 0;
	if (b->overflow)
		return -ENOBUFS;
	if (sendto(fd, b->buf, b->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	ks_nlb_replies(fd, ack);
	return 0;
}

int ks_nlb_talk_iov(int fd, struct ks_nlbuild *b, int *ack)
{
	struct iovec iov[NLB_MAX_IOV];
	struct msghdr m = { .msg_iov = iov };
	size_t off = 0;

	*ack = 0;
	if (b->overflow)
		return -ENOBUFS;
	while (off < b->len) {
		struct nlmsghdr *h = (struct nlmsghdr *)(b->buf + off);

		if (m.msg_iovlen == NLB_MAX_IOV)
			return -E2BIG;
		iov[m.msg_iovlen].iov_base = h;
		iov[m.msg_iovlen++].iov_len = NLMSG_ALIGN(h->nlmsg_len);
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	if (sendmsg(fd, &m, 0) < 0)
		return -errno;
	ks_nlb_replies(fd, ack);
	return 0;
}
