/* SPDX-License-Identifier: MIT */
/* nlbuild.h - build and send raw netlink requests, for shield tests that
 * must send the exact messages an exploit sends (nf_tables batches,
 * rtnetlink traffic-control requests) without linking libmnl.
 *
 *	struct nlbuild b;
 *	nlb_init(&b, buf, sizeof(buf));
 *	nlb_msg(&b, type, NLM_F_CREATE, &nfg, sizeof(nfg));
 *	nlb_put_str(&b, NFTA_TABLE_NAME, "t");
 *	nlb_nest(&b, NFTA_RULE_EXPRESSIONS); ... nlb_nest_end(&b);
 *	nlb_msg_end(&b);
 *	err = nlb_talk(fd, &b, &ack);
 *
 * Overflowing the buffer is sticky (b->overflow) and makes nlb_talk fail
 * with -ENOBUFS, so builders need not check each call.
 */
#ifndef KSHIELD_NLBUILD_H
#define KSHIELD_NLBUILD_H

#include <stddef.h>
#include <stdint.h>

#define NLB_MAX_NEST 8

struct nlbuild {
	char *buf;
	size_t len, cap;
	size_t msg;			/* offset of the open message */
	size_t nest[NLB_MAX_NEST];
	int depth;
	uint32_t seq;
	int overflow;
};

void nlb_init(struct nlbuild *b, void *buf, size_t cap);
/* Open a message with NLM_F_REQUEST|NLM_F_ACK|@flags and a family header. */
void nlb_msg(struct nlbuild *b, uint16_t type, uint16_t flags, const void *hdr, size_t hdrlen);
void nlb_msg_end(struct nlbuild *b);
void nlb_put(struct nlbuild *b, uint16_t type, const void *data, size_t len);
void nlb_put_str(struct nlbuild *b, uint16_t type, const char *s);
void nlb_put_u32(struct nlbuild *b, uint16_t type, uint32_t v);
void nlb_put_be32(struct nlbuild *b, uint16_t type, uint32_t v);
void nlb_nest(struct nlbuild *b, uint16_t type);
void nlb_nest_end(struct nlbuild *b);

/* An nf_tables batch: nlb_nft_begin, nf_tables messages made with
 * nlb_nft_msg (type NFT_MSG_*, family NFPROTO_*), nlb_nft_end. */
void nlb_nft_begin(struct nlbuild *b);
void nlb_nft_msg(struct nlbuild *b, uint16_t nft_type, uint16_t flags, uint8_t family);
void nlb_nft_end(struct nlbuild *b);
/* NEWTABLE / NEWCHAIN (a regular chain, no hook) messages, whole. */
void nlb_nft_table(struct nlbuild *b, uint8_t family, const char *table);
void nlb_nft_chain(struct nlbuild *b, uint8_t family, const char *table, const char *chain);
/* Table @table with regular chain @chain in one batch through @fd, acked:
 * 0, or the error with @why filled ("nf_tables unavailable: ..."). */
int nlb_nft_setup(int fd, uint8_t family, const char *table, const char *chain,
		  char *why, size_t len);
/* A base chain ("type filter hook @hooknum priority 0", NF_INET_*), and
 * the same as nlb_nft_setup with it: the chain a packet meets. */
void nlb_nft_base_chain(struct nlbuild *b, uint8_t family, const char *table,
			const char *chain, uint32_t hooknum);
int nlb_nft_setup_hooked(int fd, uint8_t family, const char *table, const char *chain,
			 uint32_t hooknum, char *why, size_t len);
/* A payload expression loading @len bytes at @offset of header @base
 * (NFT_PAYLOAD_*) into register @dreg: one element inside a rule's
 * NFTA_RULE_EXPRESSIONS, as nft's "ip saddr". */
void nlb_nft_payload_expr(struct nlbuild *b, uint32_t dreg, uint32_t base, uint32_t offset,
			  uint32_t len);
/* An immediate expression that sets @verdict (NF_DROP, NF_ACCEPT, NFT_*):
 * one element inside a rule's NFTA_RULE_EXPRESSIONS, as nft's "drop". */
void nlb_nft_verdict_expr(struct nlbuild *b, uint32_t verdict);

/* Send everything built so far in one sendmsg and collect the replies the
 * kernel queued for it (netlink requests are processed inside sendmsg).
 * Returns 0 or -errno of sendmsg itself; *ack gets 0 or the first error
 * (-errno) the kernel reported for a message. */
int nlb_talk(int fd, struct nlbuild *b, int *ack);
/* The same with sendmsg and one iovec per message, as nft sends batches. */
#define NLB_MAX_IOV 16
int nlb_talk_iov(int fd, struct nlbuild *b, int *ack);
/* Read the replies queued on @fd (the kernel queues them while handling
 * the request, inside the send) until there are none: how many; *ack the
 * first error (0 none). */
int nlb_replies(int fd, int *ack);
/* The kernel's extended-ack message for the first error nlb_replies()
 * saw ("" when none, or when the socket did not set NETLINK_EXT_ACK). */
const char *nlb_errmsg(void);

#endif
