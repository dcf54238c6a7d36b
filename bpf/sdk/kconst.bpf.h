// SPDX-License-Identifier: GPL-2.0-only
/* kconst.bpf.h - the kernel's constants that shields test for, once.
 *
 * vmlinux.h has the kernel's types and enums (IPPROTO_*, SOCK_*, enum
 * io_uring_op's IORING_OP_*, fs_value_is_*) but none of its #defines: a
 * shield used to copy the ones it needed. They are here, as the kernel's
 * UAPI and internal headers spell them (values are ABI: the same on every
 * kernel and architecture kshield runs on, unless a comment says so).
 * shield.bpf.h includes this header.
 *
 * With them, the tables that name them in a shield's event arguments
 * (KSHIELD_VALS, shield.bpf.h): a shield that shows an argument as
 * flags:msg_flags puts KS_VALS_MSG_FLAGS; in its metadata block.
 */
#ifndef KSHIELD_KCONST_BPF_H
#define KSHIELD_KCONST_BPF_H

/* linux/fs.h: the mask of security_file_permission and inode_permission */
#define MAY_EXEC		0x00000001
#define MAY_WRITE		0x00000002
#define MAY_READ		0x00000004
#define MAY_APPEND		0x00000008
#define MAY_ACCESS		0x00000010
#define MAY_OPEN		0x00000020
#define MAY_CHDIR		0x00000040
/* linux/fs.h: file->f_mode */
#define FMODE_READ		0x1
#define FMODE_WRITE		0x2

/* linux/stat.h: inode->i_mode */
#define S_IFMT			00170000
#define S_IFSOCK		0140000
#define S_IFLNK			0120000
#define S_IFREG			0100000
#define S_IFBLK			0060000
#define S_IFDIR			0040000
#define S_IFCHR			0020000
#define S_IFIFO			0010000
#define S_ISUID			0004000
#define S_ISGID			0002000
#define S_ISVTX			0001000
#define S_IRWXU			00700
#define S_IRWXG			00070
#define S_IXGRP			00010
#define S_IRWXO			00007
#define S_ISREG(m)		(((m) & S_IFMT) == S_IFREG)
#define S_ISDIR(m)		(((m) & S_IFMT) == S_IFDIR)
#define S_ISFIFO(m)		(((m) & S_IFMT) == S_IFIFO)
#define S_ISSOCK(m)		(((m) & S_IFMT) == S_IFSOCK)

/* linux/socket.h: address families and socket option levels */
#define AF_UNIX			1
#define AF_INET			2
#define AF_INET6		10
#define AF_KEY			15
#define AF_NETLINK		16
#define AF_PACKET		17
#define AF_RDS			21
#define AF_TIPC			30
#define AF_RXRPC		33
#define AF_ALG			38
#define AF_VSOCK		40
#define SOL_IP			0
#define SOL_SOCKET		1
#define SOL_TCP			6
#define SOL_UDP			17
#define SOL_IPV6		41
#define SOL_PACKET		263
#define SOL_ALG			279
#define SOL_TLS			282
/* linux/socket.h: msghdr.msg_flags, send/recv flags */
#define MSG_OOB			1
#define MSG_PEEK		2
#define MSG_DONTWAIT		0x40
#define MSG_WAITALL		0x100
#define MSG_MORE		0x8000
#define MSG_SPLICE_PAGES	0x8000000	/* 6.5+; an unused bit before */
#define MSG_CMSG_CLOEXEC	0x40000000

/* linux/netlink.h: netlink protocols */
#define NETLINK_ROUTE		0
#define NETLINK_XFRM		6
#define NETLINK_NETFILTER	12

/* linux/mman.h */
#define PROT_READ		0x1
#define PROT_WRITE		0x2
#define PROT_EXEC		0x4
#define MAP_SHARED		0x01
#define MAP_PRIVATE		0x02
#define MAP_FIXED		0x10
#define MAP_ANONYMOUS		0x20	/* x86 and arm64 (not mips, parisc, ...) */

/* linux/sched.h: clone, unshare */
#define CLONE_VM		0x00000100
#define CLONE_FS		0x00000200
#define CLONE_FILES		0x00000400
#define CLONE_SIGHAND		0x00000800
#define CLONE_THREAD		0x00010000
#define CLONE_NEWNS		0x00020000
#define CLONE_NEWCGROUP		0x02000000
#define CLONE_NEWUTS		0x04000000
#define CLONE_NEWIPC		0x08000000
#define CLONE_NEWUSER		0x10000000
#define CLONE_NEWPID		0x20000000
#define CLONE_NEWNET		0x40000000

/* linux/errno.h: kernel-internal errors shields return or test */
#define ENOPARAM		519	/* fs_parse: parameter not supported */

/* linux/netfilter/nfnetlink.h: a message type is subsystem << 8 | message */
#define NFNL_SUBSYS_NFTABLES	10
#define NFT_MSG_TYPE(m)		((NFNL_SUBSYS_NFTABLES << 8) | (m))

/* ---- their names in event arguments (KSHIELD_VALS) ---- */

#define KS_VALS_MAY_MASK KSHIELD_VALS(may_mask,					\
	"0x1=MAY_EXEC 0x2=MAY_WRITE 0x4=MAY_READ 0x8=MAY_APPEND 0x10=MAY_ACCESS "	\
	"0x20=MAY_OPEN 0x40=MAY_CHDIR")
#define KS_VALS_MSG_FLAGS KSHIELD_VALS(msg_flags,					\
	"0x1=MSG_OOB 0x2=MSG_PEEK 0x40=MSG_DONTWAIT 0x100=MSG_WAITALL 0x8000=MSG_MORE "	\
	"0x8000000=MSG_SPLICE_PAGES 0x40000000=MSG_CMSG_CLOEXEC")
#define KS_VALS_PROT_FLAGS KSHIELD_VALS(prot_flags,					\
	"0x1=PROT_READ 0x2=PROT_WRITE 0x4=PROT_EXEC")
#define KS_VALS_CLONE_FLAGS KSHIELD_VALS(clone_flags,					\
	"0x100=CLONE_VM 0x200=CLONE_FS 0x400=CLONE_FILES 0x800=CLONE_SIGHAND "		\
	"0x10000=CLONE_THREAD 0x20000=CLONE_NEWNS 0x2000000=CLONE_NEWCGROUP "		\
	"0x4000000=CLONE_NEWUTS 0x8000000=CLONE_NEWIPC 0x10000000=CLONE_NEWUSER "	\
	"0x20000000=CLONE_NEWPID 0x40000000=CLONE_NEWNET")
#define KS_VALS_IPPROTOS KSHIELD_VALS(ipprotos,					\
	"6=IPPROTO_TCP 17=IPPROTO_UDP 50=IPPROTO_ESP 136=IPPROTO_UDPLITE")
/* enum io_uring_op: the requests shields look at */
#define KS_VALS_IOURING_OPS KSHIELD_VALS(iouring_ops,					\
	"0=IORING_OP_NOP 1=IORING_OP_READV 2=IORING_OP_WRITEV 4=IORING_OP_READ_FIXED "	\
	"5=IORING_OP_WRITE_FIXED 9=IORING_OP_SENDMSG 10=IORING_OP_RECVMSG "		\
	"13=IORING_OP_ACCEPT 16=IORING_OP_CONNECT 22=IORING_OP_READ 23=IORING_OP_WRITE "	\
	"26=IORING_OP_SEND 27=IORING_OP_RECV 30=IORING_OP_SPLICE 33=IORING_OP_TEE "	\
	"45=IORING_OP_SOCKET 46=IORING_OP_URING_CMD 47=IORING_OP_SEND_ZC "		\
	"48=IORING_OP_SENDMSG_ZC")
/* nf_tables messages the netlink shields stop at */
#define KS_VALS_NFT_TYPES KSHIELD_VALS(nft_types,					\
	"0xa06=NFT_MSG_NEWRULE 0xa08=NFT_MSG_DELRULE 0xa09=NFT_MSG_NEWSET "		\
	"0xa0c=NFT_MSG_NEWSETELEM 0xa0e=NFT_MSG_DELSETELEM")

#endif /* KSHIELD_KCONST_BPF_H */
