/* SPDX-License-Identifier: MIT */
/* nlbuild.h - build and send raw netlink requests, for shield tests that
 * must send the exact messages an exploit sends (nf_tables batches,
 * rtnetlink traffic-control requests) without linking libmnl.
 *
 *	struct ks_nlbuild b;
 *	ks_nlb_init(&b, buf, sizeof(buf));
 *	ks_nlb_msg(&b, type, NLM_F_CREATE, &nfg, sizeof(nfg));
 *	ks_nlb_put_str(&b, NFTA_TABLE_NAME, "t");
 *	ks_nlb_nest(&b, NFTA_RULE_EXPRESSIONS); ... ks_nlb_nest_end(&b);
 *	ks_nlb_msg_end(&b);
 *	err = ks_nlb_talk(fd, &b, &ack);
 *
 * Overflowing the buffer is sticky (b->overflow) and makes ks_nlb_talk fail
 * with -ENOBUFS, so builders need not check each call.
 */
#ifndef KSHIELD_NLBUILD_H
#define KSHIELD_NLBUILD_H

#include <stddef.h>
#include <stdint.h>

#define NLB_MAX_NEST 8

struct ks_nlbuild {
	char *buf;
	size_t len, cap;
	size_t msg;			/* offset of the open message */
	size_t nest[NLB_MAX_NEST];
	int depth;
	uint32_t seq;
	int overflow;
};

void ks_nlb_init(struct ks_nlbuild *b, void *buf, size_t cap);
/* Open a message with NLM_F_REQUEST|NLM_F_ACK|@flags and a family header. */
void ks_nlb_msg(struct ks_nlbuild *b, uint16_t type, uint16_t flags, const void *hdr, size_t hdrlen);
void ks_nlb_msg_end(struct ks_nlbuild *b);
void ks_nlb_put(struct ks_nlbuild *b, uint16_t type, const void *data, size_t len);
void ks_nlb_put_str(struct ks_nlbuild *b, uint16_t type, const char *s);
void ks_nlb_put_u32(struct ks_nlbuild *b, uint16_t type, uint32_t v);
void ks_nlb_put_be32(struct ks_nlbuild *b, uint16_t type, uint32_t v);
void ks_nlb_nest(struct ks_nlbuild *b, uint16_t type);
void ks_nlb_nest_end(struct ks_nlbuild *b);

/* An nf_tables batch: ks_nlb_nft_begin, nf_tables messages made with
 * ks_nlb_nft_msg (type NFT_MSG_*, family NFPROTO_*), ks_nlb_nft_end. */
void ks_nlb_nft_begin(struct ks_nlbuild *b);
void ks_nlb_nft_msg(struct ks_nlbuild *b, uint16_t nft_type, uint16_t flags, uint8_t family);
void ks_nlb_nft_end(struct ks_nlbuild *b);
/* NEWTABLE / NEWCHAIN (a regular chain, no hook) messages, whole. */
void ks_nlb_nft_table(struct ks_nlbuild *b, uint8_t family, const char *table);
void ks_nlb_nft_chain(struct ks_nlbuild *b, uint8_t family, const char *table, const char *chain);
/* Table @table with regular chain @chain in one batch through @fd, acked:
 * 0, or the error with @why filled ("nf_tables unavailable: ..."). */
int ks_nlb_nft_setup(int fd, uint8_t family, const char *table, const char *chain,
		  char *why, size_t len);
/* A base chain ("type filter hook @hooknum priority 0", NF_INET_*), and
 * the same as ks_nlb_nft_setup with it: the chain a packet meets. */
void ks_nlb_nft_base_chain(struct ks_nlbuild *b, uint8_t family, const char *table,
			const char *chain, uint32_t hooknum);
int ks_nlb_nft_setup_hooked(int fd, uint8_t family, const char *table, const char *chain,
			 uint32_t hooknum, char *why, size_t len);
/* A payload expression loading @len bytes at @offset of header @base
 * (NFT_PAYLOAD_*) into register @dreg: one element inside a rule's
 * NFTA_RULE_EXPRESSIONS, as nft's "ip saddr". */
void ks_nlb_nft_payload_expr(struct ks_nlbuild *b, uint32_t dreg, uint32_t base, uint32_t offset,
			  uint32_t len);
/* An immediate expression that sets @verdict (NF_DROP, NF_ACCEPT, NFT_*):
 * one element inside a rule's NFTA_RULE_EXPRESSIONS, as nft's "drop". */
void ks_nlb_nft_verdict_expr(struct ks_nlbuild *b, uint32_t verdict);

/* Send everything built so far in one sendmsg and collect the replies the
 * kernel queued for it (netlink requests are processed inside sendmsg).
 * Returns 0 or -errno of sendmsg itself; *ack gets 0 or the first error
 * (-errno) the kernel reported for a message. */
int ks_nlb_talk(int fd, struct ks_nlbuild *b, int *ack);
/* The same with sendmsg and one iovec per message, as nft sends batches. */
#define NLB_MAX_IOV 16
int ks_nlb_talk_iov(int fd, struct ks_nlbuild *b, int *ack);
/* Read the replies queued on @fd (the kernel queues them while handling
 * the request, inside the send) until there are none: how many; *ack the
 * first error (0 none). */
int ks_nlb_replies(int fd, int *ack);
/* The kernel's extended-ack message for the first error ks_nlb_replies()
 * saw ("" when none, or when the socket did not set NETLINK_EXT_ACK). */
const char *ks_nlb_errmsg(void);

#endif
