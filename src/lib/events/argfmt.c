// SPDX-License-Identifier: MIT
/* argfmt.c - one argument word of a shield event as text or JSON, by the
 * format the event table gives it (see argfmt.h). Names are the kernel's
 * own spellings of its constants ("AF_ALG", "SOCK_DGRAM", "EPERM"), syscalls
 * by their bare names ("splice"), so that a value can be looked up in the
 * kernel's sources or a man page as shown. */
#define _GNU_SOURCE	/* strerrorname_np */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <json-c/json.h>
#include "argfmt.h"
#include "array.h"

/* linux/socket.h */
static const char *const af_names[] = {
	"AF_UNSPEC", "AF_UNIX", "AF_INET", "AF_AX25", "AF_IPX", "AF_APPLETALK", "AF_NETROM",
	"AF_BRIDGE", "AF_ATMPVC", "AF_X25", "AF_INET6", "AF_ROSE", "AF_DECnet", "AF_NETBEUI",
	"AF_SECURITY", "AF_KEY", "AF_NETLINK", "AF_PACKET", "AF_ASH", "AF_ECONET", "AF_ATMSVC",
	"AF_RDS", "AF_SNA", "AF_IRDA", "AF_PPPOX", "AF_WANPIPE", "AF_LLC", "AF_IB", "AF_MPLS",
	"AF_CAN", "AF_TIPC", "AF_BLUETOOTH", "AF_IUCV", "AF_RXRPC", "AF_ISDN", "AF_PHONET",
	"AF_IEEE802154", "AF_CAIF", "AF_ALG", "AF_NFC", "AF_VSOCK", "AF_KCM", "AF_QIPCRTR",
	"AF_SMC", "AF_XDP", "AF_MCTP",
};

const char *ks_af_name(__u64 family)
{
	return family < ARRAY_SIZE(af_names) ? af_names[family] : NULL;
}

struct sc {
	__u64 nr;
	const char *name;
};

/* The calls shields hook, report or care about, by this host's native
 * numbers (glibc's SYS_*). */
#define SC(n) { SYS_##n, #n }
static const struct sc sc_native[] = {
	SC(read), SC(write), SC(writev), SC(pwrite64), SC(pwritev), SC(pwritev2),
	SC(sendto), SC(sendmsg), SC(sendmmsg), SC(splice), SC(tee), SC(vmsplice),
	SC(sendfile), SC(copy_file_range), SC(mmap), SC(io_uring_enter), SC(io_submit),
	SC(io_uring_register), SC(socket), SC(bind), SC(connect), SC(accept), SC(accept4),
	SC(setsockopt), SC(fsconfig), SC(unshare), SC(clone), SC(clone3), SC(setns),
};
#undef SC

/* The same calls in the 32-bit ABI this host runs (bpf/sdk/fit.bpf.h's
 * KS_NR32_*), which no libc header of a 64-bit host spells. */
static const struct sc sc_32[] = {
#if defined(__aarch64__)
	{ 3, "read" }, { 4, "write" }, { 120, "clone" }, { 146, "writev" },
	{ 181, "pwrite64" }, { 187, "sendfile" }, { 192, "mmap2" }, { 239, "sendfile64" },
	{ 281, "socket" }, { 282, "bind" }, { 285, "accept" }, { 289, "send" },
	{ 290, "sendto" }, { 294, "setsockopt" }, { 296, "sendmsg" }, { 337, "unshare" },
	{ 340, "splice" }, { 362, "pwritev" }, { 366, "accept4" }, { 374, "sendmmsg" },
	{ 375, "setns" }, { 393, "pwritev2" }, { 426, "io_uring_enter" },
	{ 427, "io_uring_register" }, { 431, "fsconfig" }, { 435, "clone3" },
#else	/* i386 */
	{ 3, "read" }, { 4, "write" }, { 90, "mmap" }, { 102, "socketcall" }, { 120, "clone" },
	{ 146, "writev" }, { 181, "pwrite64" }, { 187, "sendfile" }, { 192, "mmap2" },
	{ 239, "sendfile64" }, { 310, "unshare" }, { 313, "splice" }, { 334, "pwritev" },
	{ 345, "sendmmsg" }, { 346, "setns" }, { 359, "socket" }, { 361, "bind" },
	{ 364, "accept4" }, { 366, "setsockopt" }, { 369, "sendto" }, { 370, "sendmsg" },
	{ 379, "pwritev2" }, { 426, "io_uring_enter" }, { 427, "io_uring_register" },
	{ 431, "fsconfig" }, { 435, "clone3" },
#endif
};

const char *ks_syscall_name(__u64 nr, bool abi32)
{
	const struct sc *t = abi32 ? sc_32 : sc_native;
	size_t n = abi32 ? ARRAY_SIZE(sc_32) : ARRAY_SIZE(sc_native);

	for (size_t i = 0; i < n; i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}

static const char *val_name(const struct ks_arg_val *vals, __u64 v)
{
	for (; vals && vals->name; vals++)
		if (vals->v == v)
			return vals->name;
	return NULL;
}

/* "A|B|0x40": the named bits of @v, then what no name covers. */
static void flags_str(const struct ks_arg_val *vals, __u64 v, char *buf, size_t len)
{
	size_t n = 0;
	__u64 rest = v;

	buf[0] = '\0';
	for (; vals && vals->name && n < len; vals++)
		if (vals->v && (v & vals->v) == vals->v) {
			n += snprintf(buf + n, len - n, "%s%s", n ? "|" : "", vals->name);
			rest &= ~vals->v;
		}
	if (n < len && (rest || !n))
		snprintf(buf + n, len - n, n ? "|0x%" PRIx64 : "0x%" PRIx64, (uint64_t)rest);
}

static const struct ks_arg_val sock_types[] = {
	{ 1, "SOCK_STREAM" }, { 2, "SOCK_DGRAM" }, { 3, "SOCK_RAW" }, { 4, "SOCK_RDM" },
	{ 5, "SOCK_SEQPACKET" }, { 6, "SOCK_DCCP" }, { 10, "SOCK_PACKET" }, { 0, NULL },
};

const char *ks_arg_fmt_str(const struct ks_arg_def *d, __u64 v, char *buf, size_t len)
{
	const char *name = NULL;
	__s64 s = (__s64)v;

	buf[0] = '\0';
	switch (d->fmt) {
	case KS_ARG_NONE:
		break;
	case KS_ARG_INT:
	case KS_ARG_FD:
		snprintf(buf, len, "%" PRId64, (int64_t)s);
		break;
	case KS_ARG_UINT:
		snprintf(buf, len, "%" PRIu64, (uint64_t)v);
		break;
	case KS_ARG_HEX:
		snprintf(buf, len, "0x%" PRIx64, (uint64_t)v);
		break;
	case KS_ARG_BOOL:
		snprintf(buf, len, "%s", v ? "true" : "false");
		break;
	case KS_ARG_ERRNO:
		if (s < 0)
			s = -s;
		name = s > 0 && s < 4096 ? strerrorname_np((int)s) : NULL;
		if (!name)
			snprintf(buf, len, "%" PRId64, (int64_t)(__s64)v);
		break;
	case KS_ARG_FAMILY:
		name = ks_af_name(v);
		if (!name)
			snprintf(buf, len, "%" PRIu64, (uint64_t)v);
		break;
	case KS_ARG_SOCKTYPE: {
		const char *t = val_name(sock_types, v & 0xf);
		__u64 rest = v & ~0xfULL & ~(__u64)(02000000 | 04000);

		if (!t || rest) {
			snprintf(buf, len, "%" PRIu64, (uint64_t)v);
			break;
		}
		snprintf(buf, len, "%s%s%s", t, v & 04000 ? "|SOCK_NONBLOCK" : "",
			 v & 02000000 ? "|SOCK_CLOEXEC" : "");
		break;
	}
	case KS_ARG_SYSCALL:
	case KS_ARG_SYSCALL32:
		name = ks_syscall_name(v, d->fmt == KS_ARG_SYSCALL32);
		if (!name)
			snprintf(buf, len, "%" PRIu64, (uint64_t)v);
		break;
	case KS_ARG_DEV:	/* the kernel's dev_t: 12 bits of major, 20 of minor */
		snprintf(buf, len, "%" PRIu64 ":%" PRIu64, (uint64_t)(v >> 20) & 0xfff,
			 (uint64_t)v & 0xfffff);
		break;
	case KS_ARG_STR8: {
		char b[8];
		size_t i;

		memcpy(b, &v, sizeof(b));	/* memory order: what the BPF side copied */
		for (i = 0; i < sizeof(b) && b[i] && i + 1 < len; i++)
			buf[i] = b[i] >= 0x20 && b[i] < 0x7f ? b[i] : '?';
		if (len)
			buf[i < len ? i : len - 1] = '\0';
		break;
	}
	case KS_ARG_ENUM:
		name = val_name(d->vals, v);
		if (!name)
			snprintf(buf, len, "%" PRIu64, (uint64_t)v);
		break;
	case KS_ARG_FLAGS:
		flags_str(d->vals, v, buf, len);
		break;
	}
	if (name)
		snprintf(buf, len, "%s", name);
	return buf;
}

struct json_object *ks_arg_fmt_json(const struct ks_arg_def *d, __u64 v)
{
	char buf[128];

	switch (d->fmt) {
	case KS_ARG_INT:
	case KS_ARG_FD:
		return json_object_new_int64((__s64)v);
	case KS_ARG_UINT:
		return json_object_new_uint64(v);
	case KS_ARG_BOOL:
		return json_object_new_boolean(v != 0);
	case KS_ARG_NONE:
		return NULL;
	case KS_ARG_HEX:
	case KS_ARG_FLAGS:
	case KS_ARG_DEV:
	case KS_ARG_STR8:
		return json_object_new_string(ks_arg_fmt_str(d, v, buf, sizeof(buf)));
	default:
		/* a named value; one the format cannot name stays a number */
		ks_arg_fmt_str(d, v, buf, sizeof(buf));
		if (buf[0] == '-')
			return json_object_new_int64((__s64)v);
		if (buf[0] >= '0' && buf[0] <= '9')
			return json_object_new_uint64(v);
		return json_object_new_string(buf);
	}
}
