// SPDX-License-Identifier: MIT
/* events.c - the table of event columns and kinds, and what is derived
 * from it in the library: decoding a record into a row, a row as JSON, a
 * row as one line (see events.h).
 *
 * The decoders of the frequent kinds (exec, exit, connections, flows)
 * build their strings without printf: it was a tenth of the store's
 * ingest cost.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <json-c/json.h>
#include "array.h"
#include "err.h"
#include "units.h"
#include "events.h"
#include "argfmt.h"

const struct ks_col_def ks_cols[KS_COL_MAX] = {
#define KS_COL_DEF_(id, n, t, old) [KS_COL_##id] = { #n, KS_COL_##t, #old },
	KS_EVENT_COLUMNS(KS_COL_DEF_)
#undef KS_COL_DEF_
};

int ks_col_find(const char *name)
{
	for (int c = 0; c < KS_COL_MAX; c++)
		if (!strcmp(ks_cols[c].name, name))
			return c;
	return -1;
}

void ks_col_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int c = 0; c < KS_COL_MAX && n < len; c++)
		n += snprintf(buf + n, len - n, "%s%s", c ? ", " : "", ks_cols[c].name);
}

/* ---- rows ---- */

void ks_row_clear(struct ks_row *r)
{
	r->set = 0;
	r->used = 0;
}

void ks_row_set_num(struct ks_row *r, enum ks_col c, __s64 v)
{
	r->set |= 1u << c;
	r->num[c] = v;
}

void ks_row_set_static(struct ks_row *r, enum ks_col c, const char *s)
{
	r->set |= 1u << c;
	r->str[c] = s;
	r->len[c] = s ? strlen(s) : 0;
}

void ks_row_copy(struct ks_row *dst, const struct ks_row *src)
{
	dst->set = src->set;
	dst->used = src->used;
	memcpy(dst->num, src->num, sizeof(dst->num));
	memcpy(dst->len, src->len, sizeof(dst->len));
	memcpy(dst->buf, src->buf, src->used);
	/* strings in src's buf move with it; static ones stay */
	for (int c = 0; c < KS_COL_MAX; c++) {
		uintptr_t p = (uintptr_t)src->str[c], b = (uintptr_t)src->buf;

		if (!(src->set & (1u << c)) || ks_cols[c].type != KS_COL_TEXT)
			continue;
		dst->str[c] = p - b < sizeof(src->buf) ? dst->buf + (p - b) : src->str[c];
	}
}

/* Room for a string of at most @max bytes (NUL included) for column @c;
 * row_commit() says how much was used. */
static char *row_reserve(struct ks_row *r, enum ks_col c, size_t *max)
{
	size_t left = sizeof(r->buf) - r->used;

	if (*max > left)
		*max = left;
	r->set |= 1u << c;
	r->str[c] = r->buf + r->used;
	r->buf[r->used] = '\0';
	return r->buf + r->used;
}

/* Column @c's string, reserved, is @n bytes long. */
static void row_commit_len(struct ks_row *r, enum ks_col c, size_t n)
{
	r->len[c] = n;
	r->used += n + 1;
}

static void row_commit(struct ks_row *r, enum ks_col c)
{
	row_commit_len(r, c, strlen(r->str[c]));
}

void ks_row_set_str(struct ks_row *r, enum ks_col c, const char *s)
{
	size_t max = strlen(s) + 1;
	char *p = row_reserve(r, c, &max);

	if (max) {
		memcpy(p, s, max - 1);
		p[max - 1] = '\0';
	}
	row_commit_len(r, c, max ? max - 1 : 0);
}

/* Copy a fixed-size, maybe unterminated kernel string into column @c,
 * printable only (and without '"' or '\\', so details need no escaping). */
static size_t clean_str(char *dst, size_t dlen, const char *src, size_t max)
{
	size_t n = strnlen(src, max), i;

	if (n >= dlen)
		n = dlen - 1;
	for (i = 0; i < n; i++) {
		unsigned char c = src[i];

		dst[i] = isprint(c) && c != '"' && c != '\\' ? c : '?';
	}
	dst[n] = '\0';
	return n;
}

static void set_kstr(struct ks_row *r, enum ks_col c, const char *src, size_t max)
{
	size_t room = max + 1;
	char *p = row_reserve(r, c, &room);

	row_commit_len(r, c, room ? clean_str(p, room, src, max) : 0);
}

/* A bounded string builder for details. */
struct out {
	char *p, *end;
};

static inline void o_mem(struct out *o, const char *s, size_t n)
{
	if (n > (size_t)(o->end - o->p))
		n = o->end - o->p;
	memcpy(o->p, s, n);
	o->p += n;
	*o->p = '\0';
}

/* inline: the length of a literal is known when compiled */
static inline void o_s(struct out *o, const char *s)
{
	o_mem(o, s, strlen(s));
}

static void o_u(struct out *o, uint64_t v)
{
	char d[20], *q = d + sizeof(d);

	do
		*--q = '0' + v % 10;
	while ((v /= 10));
	o_mem(o, q, d + sizeof(d) - q);
}

/* Start column @c's text (at most @max bytes). */
static struct out o_start(struct ks_row *r, enum ks_col c, size_t max)
{
	char *p = row_reserve(r, c, &max);

	return (struct out){ p, p + (max ? max - 1 : 0) };
}

/* Column @c's text, started by o_start(), ends at @o. */
static void o_commit(struct ks_row *r, enum ks_col c, const struct out *o)
{
	row_commit_len(r, c, o->p - r->str[c]);
}

/* One flag bit of a record and its key in the detail. */
struct flag {
	__u32 bit;
	const char *key;
};

/* ,"key":0|1 for every flag of @f; bits no entry names as "other_flags",
 * so that every bit the BPF side sets reaches the row. */
static void o_flags(struct out *o, __u32 flags, const struct flag *f, int n, bool first)
{
	__u32 known = 0;

	for (int i = 0; i < n; i++, first = false) {
		o_s(o, first ? "\"" : ",\"");
		o_s(o, f[i].key);
		o_s(o, flags & f[i].bit ? "\":1" : "\":0");
		known |= f[i].bit;
	}
	if (flags & ~known) {
		o_s(o, first ? "\"other_flags\":" : ",\"other_flags\":");
		o_u(o, flags & ~known);
	}
}

/* The text of address @a in @buf; its length. */
static size_t addr_str(int family, const __u8 *a, char *buf, size_t len)
{
	/* IPv4 by hand: glibc's inet_ntop formats it with sprintf */
	if (family != AF_INET6 && len >= 16) {
		struct out o = { buf, buf + len - 1 };

		for (int i = 0; i < 4; i++) {
			o_u(&o, a[i]);
			if (i < 3)
				o_s(&o, ".");
		}
		return o.p - buf;
	}
	if (!inet_ntop(AF_INET6, a, buf, len))
		snprintf(buf, len, "?");
	return strlen(buf);
}

static void set_addr(struct ks_row *r, enum ks_col c, int family, const __u8 *a)
{
	size_t max = 48;
	char *p = row_reserve(r, c, &max);

	row_commit_len(r, c, max ? addr_str(family, a, p, max) : 0);
}

/* ---- decoders, one per kind ---- */

static const struct flag exec_flags[] = {
	{ KS_EXEC_SETUID, "setuid" },
	{ KS_EXEC_SETGID, "setgid" },
	{ KS_EXEC_SECURE, "secureexec" },
	{ KS_EXEC_ARGV_TRUNC, "argv_truncated" },
	{ KS_EXEC_PATH_TRUNC, "path_truncated" },
};

static void decode_exec(const void *rec, struct ks_row *r)
{
	const struct ks_exec_event *e = rec;
	size_t n = e->argv_len < sizeof(e->argv) ? e->argv_len : sizeof(e->argv);
	struct out o;

	ks_row_set_num(r, KS_COL_PARENT_EXEC_ID, e->parent_exec_id);
	set_kstr(r, KS_COL_BINARY, e->path, sizeof(e->path));
	/* argv: NUL-separated -> space-separated, printable */
	o = o_start(r, KS_COL_ARGS, KS_ARGV_LEN + 1);
	for (size_t i = 0; i < n && o.p < o.end; i++) {
		unsigned char c = e->argv[i];

		*o.p++ = c == 0 ? ' ' : (isprint(c) ? c : '?');
	}
	while (o.p > r->str[KS_COL_ARGS] && o.p[-1] == ' ')
		o.p--;
	*o.p = '\0';
	o_commit(r, KS_COL_ARGS, &o);
	o = o_start(r, KS_COL_DETAIL, 256);
	o_s(&o, "{");
	o_flags(&o, e->flags, exec_flags, (int)ARRAY_SIZE(exec_flags), true);
	o_s(&o, "}");
	o_commit(r, KS_COL_DETAIL, &o);
}

static void decode_exit(const void *rec, struct ks_row *r)
{
	const struct ks_exit_event *e = rec;
	struct out o = o_start(r, KS_COL_DETAIL, 128);

	o_s(&o, "{\"exit_code\":");
	o_u(&o, (e->exit_code >> 8) & 0xff);
	o_s(&o, ",\"signal\":");
	o_u(&o, e->exit_code & 0x7f);
	o_s(&o, ",\"lifetime_ns\":");
	o_u(&o, e->lifetime_ns);
	o_s(&o, "}");
	o_commit(r, KS_COL_DETAIL, &o);
}

static const struct flag conn_flags[] = {
	{ KS_CONN_ESTABLISHED, "established" },
	{ KS_CONN_NO_OWNER, "owner_unknown" },
};

static void decode_conn(const void *rec, struct ks_row *r)
{
	const struct ks_conn_event *e = rec;
	struct out o;

	set_addr(r, KS_COL_LADDR, e->family, e->laddr);
	ks_row_set_num(r, KS_COL_LPORT, e->lport);
	if (e->hdr.kind != KS_EV_LISTEN) {
		set_addr(r, KS_COL_RADDR, e->family, e->raddr);
		ks_row_set_num(r, KS_COL_RPORT, e->rport);
	}
	o = o_start(r, KS_COL_DETAIL, 128);
	o_s(&o, "{\"family\":");
	o_u(&o, e->family);
	o_flags(&o, e->flags, conn_flags, (int)ARRAY_SIZE(conn_flags), false);
	o_s(&o, "}");
	o_commit(r, KS_COL_DETAIL, &o);
}

static const struct flag flow_flags[] = {
	{ KS_FLOW_FINAL, "final" },
	{ KS_FLOW_NO_OWNER, "owner_unknown" },
	{ KS_FLOW_PEERS, "peers" },
	{ KS_FLOW_UNTRACKED, "untracked" },
};

static void decode_flow(const void *rec, struct ks_row *r)
{
	const struct ks_flow_event *e = rec;
	const __u64 n[] = { e->bytes_out, e->bytes_in, e->pkts_out, e->pkts_in,
			    e->hdr.ts_ns - e->start_ns };
	static const char *const keys[] = { ",\"bytes_out\":", ",\"bytes_in\":", ",\"pkts_out\":",
					    ",\"pkts_in\":", ",\"duration_ns\":" };
	struct out o;

	set_addr(r, KS_COL_LADDR, e->family, e->laddr);
	set_addr(r, KS_COL_RADDR, e->family, e->raddr);
	ks_row_set_num(r, KS_COL_LPORT, e->lport);
	ks_row_set_num(r, KS_COL_RPORT, e->rport);
	o = o_start(r, KS_COL_DETAIL, 400);
	o_s(&o, e->proto == 6 ? "{\"proto\":\"tcp\",\"family\":" : "{\"proto\":\"udp\",\"family\":");
	o_u(&o, e->family);
	for (int i = 0; i < (int)ARRAY_SIZE(n); i++) {
		o_s(&o, keys[i]);
		o_u(&o, n[i]);
	}
	o_flags(&o, e->flags, flow_flags, (int)ARRAY_SIZE(flow_flags), false);
	/* "flow" names the connection across its interim and final records
	 * (cookies restart at each boot; the start time does not) */
	o_s(&o, ",\"flow\":\"");
	o_u(&o, e->cookie);
	o_s(&o, "-");
	o_u(&o, e->start_ns);
	o_s(&o, "\"}");
	o_commit(r, KS_COL_DETAIL, &o);
}

/* The rare kinds: printf is fine. */
#define DETAIL(r, ...) do {							\
		size_t max_ = 512;						\
		char *p_ = row_reserve(r, KS_COL_DETAIL, &max_);		\
		if (max_)							\
			snprintf(p_, max_, __VA_ARGS__);			\
		row_commit(r, KS_COL_DETAIL);					\
	} while (0)

static void decode_socket(const void *rec, struct ks_row *r)
{
	const struct ks_socket_event *e = rec;

	ks_row_set_num(r, KS_COL_RET, e->ret);
	DETAIL(r, "{\"family\":%d,\"type\":%d,\"protocol\":%d}", e->family, e->type, e->protocol);
}

static void decode_userns(const void *rec, struct ks_row *r)
{
	const struct ks_userns_event *e = rec;
	static const char *const sc[] = { "?", "unshare", "clone", "clone3" };

	ks_row_set_num(r, KS_COL_RET, e->ret);
	DETAIL(r, "{\"flags\":%" PRIu64 ",\"syscall\":\"%s\"}", (uint64_t)e->flags,
	       sc[e->syscall < 4 ? e->syscall : 0]);
}

static void decode_priv(const void *rec, struct ks_row *r)
{
	const struct ks_priv_event *e = rec;
	static const char *const at[] = { "?", "exec", "fork", "syscall", "exit" };

	DETAIL(r, "{\"old_uid\":%u,\"old_euid\":%u,\"old_suid\":%u,\"new_uid\":%u,\"new_euid\":%u,"
	       "\"new_suid\":%u,\"old_caps\":%" PRIu64 ",\"new_caps\":%" PRIu64 ",\"seen_at\":\"%s\"}",
	       e->old_uid, e->old_euid, e->old_suid, e->new_uid, e->new_euid, e->new_suid,
	       (uint64_t)e->old_caps, (uint64_t)e->new_caps, at[e->where < 5 ? e->where : 0]);
}

static void decode_bpf(const void *rec, struct ks_row *r)
{
	const struct ks_bpf_event *e = rec;
	char name[sizeof(e->prog_name) + 1];

	ks_row_set_num(r, KS_COL_RET, e->ret);
	clean_str(name, sizeof(name), e->prog_name, sizeof(e->prog_name));
	DETAIL(r, "{\"cmd\":%u,\"prog_type\":%u,\"insn_cnt\":%u,\"prog_name\":\"%s\"}", e->cmd,
	       e->prog_type, e->insn_cnt, name);
}

static void decode_alg_bind(const void *rec, struct ks_row *r)
{
	const struct ks_alg_bind_event *e = rec;

	ks_row_set_num(r, KS_COL_RET, e->ret);
	set_kstr(r, KS_COL_ALG_TYPE, e->type, sizeof(e->type));
	set_kstr(r, KS_COL_ALG_NAME, e->name, sizeof(e->name));
	DETAIL(r, "{\"feat\":%u,\"mask\":%u}", e->feat, e->mask);
}

const char *ks_verdict_name(__u32 v)
{
	static const char *const names[] = { "refused", "audited", "killed" };

	return v < KS_VERDICT_MAX ? names[v] : "unknown";
}

static void decode_shield(const void *rec, struct ks_row *r)
{
	const struct ks_shield_event *e = rec;
	char hook[KS_HOOK_LEN + 1], var[KS_VARIANT_LEN + 1];

	set_kstr(r, KS_COL_SHIELD, e->shield, sizeof(e->shield));
	ks_row_set_static(r, KS_COL_VERDICT, ks_verdict_name(e->verdict));
	clean_str(hook, sizeof(hook), e->hook, sizeof(e->hook));
	clean_str(var, sizeof(var), e->variant, sizeof(e->variant));
	DETAIL(r, "{\"hook\":\"%s\",\"variant\":\"%s\",\"mode\":\"%s\",\"args\":[%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%" PRIu64 "]}", hook, var, e->mode ? "audit" : "enforce",
	       (uint64_t)e->args[0], (uint64_t)e->args[1], (uint64_t)e->args[2], (uint64_t)e->args[3]);
}

static void decode_tamper(const void *rec, struct ks_row *r)
{
	const struct ks_tamper_event *e = rec;
	char target[KS_PATH_LEN + 1];

	ks_row_set_num(r, KS_COL_RET, e->ret);
	clean_str(target, sizeof(target), e->target, sizeof(e->target));
	DETAIL(r, "{\"op\":%u,\"target\":\"%s\",\"id\":%u,\"arg\":%u}", e->op, target, e->id, e->arg);
}

/* ---- summaries, one line per event ---- */

static void sum_exec(const struct ks_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s  [%s]", ks_row_str(r, KS_COL_BINARY), ks_row_str(r, KS_COL_ARGS));
}

static void sum_conn(const struct ks_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%lld -> %s:%lld", ks_row_str(r, KS_COL_LADDR),
		 (long long)ks_row_num(r, KS_COL_LPORT), ks_row_str(r, KS_COL_RADDR),
		 (long long)ks_row_num(r, KS_COL_RPORT));
}

static void sum_listen(const struct ks_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%lld", ks_row_str(r, KS_COL_LADDR), (long long)ks_row_num(r, KS_COL_LPORT));
}

static void size_fmt(double b, char *buf, size_t len)
{
	static const char units[] = " KMGT";
	int u = 0;

	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, len, "%.1f%c", b, units[u]);
	else
		snprintf(buf, len, "%.0f", b);
}

/* "tcp 10.0.0.1:5000 -> 1.2.3.4:443 out 52.4M in 1.2K 12.000s final" */
static void sum_flow(const struct ks_row *r, char *buf, size_t len)
{
	struct json_object *d = json_tokener_parse(ks_row_str(r, KS_COL_DETAIL)), *v;
	static const char *const keys[] = { "bytes_out", "bytes_in", "duration_ns", "final" };
	double n[4] = { 0 };
	char out[16], in[16];

	for (int i = 0; i < 4; i++)
		if (d && json_object_object_get_ex(d, keys[i], &v))
			n[i] = json_object_get_double(v);
	size_fmt(n[0], out, sizeof(out));
	size_fmt(n[1], in, sizeof(in));
	snprintf(buf, len, "%s %s:%lld -> %s:%lld out %s in %s %.3fs %s",
		 d && json_object_object_get_ex(d, "proto", &v) ? json_object_get_string(v) : "?",
		 ks_row_str(r, KS_COL_LADDR), (long long)ks_row_num(r, KS_COL_LPORT),
		 ks_row_str(r, KS_COL_RADDR), (long long)ks_row_num(r, KS_COL_RPORT), out, in,
		 n[2] / 1e9, n[3] ? "final" : "open");
	json_object_put(d);
}

static bool detail_args(struct json_object *d, const char **hook, __u64 a[KS_SHIELD_ARGS]);

/* "cve-2026-31431 refused socket_bind(family=AF_ALG addrlen=88 name=authence
 * fail_closed=mark_not_stored) lsm enforce"; a detail of another shape
 * (hand-made rows) is shown as it is. */
static void sum_shield(const struct ks_row *r, char *buf, size_t len)
{
	struct json_object *d = json_tokener_parse(ks_row_str(r, KS_COL_DETAIL)), *v, *m;
	const char *shield = ks_row_str(r, KS_COL_SHIELD), *hook;
	__u64 a[KS_SHIELD_ARGS];
	char args[512];

	if (!detail_args(d, &hook, a)) {
		snprintf(buf, len, "%s %s %s", shield, ks_row_str(r, KS_COL_VERDICT),
			 ks_row_str(r, KS_COL_DETAIL));
		json_object_put(d);
		return;
	}
	ks_shield_args_str(ks_shield_args_find(shield, hook, a), a, args, sizeof(args));
	snprintf(buf, len, "%s %s %s(%s) %s %s", shield, ks_row_str(r, KS_COL_VERDICT), hook, args,
		 json_object_object_get_ex(d, "variant", &v) ? json_object_get_string(v) : "?",
		 json_object_object_get_ex(d, "mode", &m) ? json_object_get_string(m) : "?");
	json_object_put(d);
}

static void sum_alg_bind(const struct ks_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s ret=%lld", ks_row_str(r, KS_COL_ALG_TYPE),
		 ks_row_str(r, KS_COL_ALG_NAME), (long long)ks_row_num(r, KS_COL_RET));
}

/* ---- the table ---- */

#define ADDRS	(KS_COL(LADDR) | KS_COL(LPORT) | KS_COL(RADDR) | KS_COL(RPORT))

const struct ks_kind_def ks_kinds[KS_EV_KIND_MAX] = {
	[KS_EV_EXEC] = { "exec", sizeof(struct ks_exec_event),
		KS_COLS_HDR | KS_COL(PARENT_EXEC_ID) | KS_COL(BINARY) | KS_COL(ARGS),
		decode_exec, sum_exec },
	[KS_EV_EXIT] = { "exit", sizeof(struct ks_exit_event), KS_COLS_HDR, decode_exit },
	[KS_EV_CONNECT] = { "connect", sizeof(struct ks_conn_event), KS_COLS_HDR | ADDRS,
		decode_conn, sum_conn },
	[KS_EV_ACCEPT] = { "accept", sizeof(struct ks_conn_event), KS_COLS_HDR | ADDRS,
		decode_conn, sum_conn },
	[KS_EV_LISTEN] = { "listen", sizeof(struct ks_conn_event),
		KS_COLS_HDR | KS_COL(LADDR) | KS_COL(LPORT), decode_conn, sum_listen },
	[KS_EV_SOCKET] = { "socket", sizeof(struct ks_socket_event), KS_COLS_HDR | KS_COL(RET),
		decode_socket },
	[KS_EV_USERNS] = { "userns", sizeof(struct ks_userns_event), KS_COLS_HDR | KS_COL(RET),
		decode_userns },
	[KS_EV_PRIVILEGE] = { "privilege", sizeof(struct ks_priv_event), KS_COLS_HDR, decode_priv },
	[KS_EV_BPF] = { "bpf", sizeof(struct ks_bpf_event), KS_COLS_HDR | KS_COL(RET), decode_bpf },
	[KS_EV_SHIELD] = { "shield", sizeof(struct ks_shield_event),
		KS_COLS_HDR | KS_COL(SHIELD) | KS_COL(VERDICT), decode_shield, sum_shield },
	[KS_EV_ALG_BIND] = { "alg_bind", sizeof(struct ks_alg_bind_event),
		KS_COLS_HDR | KS_COL(ALG_TYPE) | KS_COL(ALG_NAME) | KS_COL(RET),
		decode_alg_bind, sum_alg_bind },
	/* the agent's own records (selfdefence.c) name the shield they repaired */
	[KS_EV_TAMPER] = { "tamper", sizeof(struct ks_tamper_event),
		KS_COLS_HDR | KS_COL(SHIELD) | KS_COL(RET), decode_tamper },
	[KS_EV_FLOW] = { "flow", sizeof(struct ks_flow_event), KS_COLS_HDR | ADDRS, decode_flow,
		sum_flow },
};

/* ---- shield event arguments, named by the tables in argtab.c ---- */

struct json_object *ks_shield_args_json(const struct ks_shield_args_def *d,
					const __u64 a[KS_SHIELD_ARGS])
{
	struct json_object *o = json_object_new_object();

	for (int i = 0; i < KS_SHIELD_ARGS; i++)
		if (d->arg[i].fmt != KS_ARG_NONE)
			json_object_object_add(o, d->arg[i].name, ks_arg_fmt_json(&d->arg[i], a[i]));
	return o;
}

void ks_shield_args_str(const struct ks_shield_args_def *d, const __u64 a[KS_SHIELD_ARGS],
			char *buf, size_t len)
{
	size_t n = 0;
	char v[128];

	buf[0] = '\0';
	for (int i = 0; i < KS_SHIELD_ARGS && n < len; i++)
		if (d->arg[i].fmt != KS_ARG_NONE)
			n += snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", d->arg[i].name,
				      ks_arg_fmt_str(&d->arg[i], a[i], v, sizeof(v)));
}

/* The hook and argument words of a shield event's parsed detail; false
 * when it has not both. */
static bool detail_args(struct json_object *d, const char **hook, __u64 a[KS_SHIELD_ARGS])
{
	struct json_object *h, *args;

	if (!d || !json_object_is_type(d, json_type_object) ||
	    !json_object_object_get_ex(d, "hook", &h) ||
	    !json_object_object_get_ex(d, "args", &args) ||
	    !json_object_is_type(args, json_type_array) ||
	    json_object_array_length(args) != KS_SHIELD_ARGS)
		return false;
	*hook = json_object_get_string(h);
	for (int i = 0; i < KS_SHIELD_ARGS; i++)
		a[i] = json_object_get_uint64(json_object_array_get_idx(args, i));
	return true;
}

void ks_event_json_name_args(struct json_object *ev)
{
	struct json_object *kind, *shield, *d;
	const char *hook;
	__u64 a[KS_SHIELD_ARGS];

	if (!json_object_object_get_ex(ev, "kind", &kind) ||
	    strcmp(json_object_get_string(kind) ?: "", "shield") ||
	    !json_object_object_get_ex(ev, "shield", &shield) ||
	    !json_object_object_get_ex(ev, "detail", &d) || !detail_args(d, &hook, a))
		return;
	json_object_object_add(d, "arg", ks_shield_args_json(
		ks_shield_args_find(json_object_get_string(shield), hook, a), a));
}

const char *ks_kind_name(unsigned kind)
{
	return kind < KS_EV_KIND_MAX ? ks_kinds[kind].name : NULL;
}

int ks_kind_parse(const char *name)
{
	char all[256];
	size_t n = 0;

	for (int k = 1; k < KS_EV_KIND_MAX; k++)
		if (ks_kinds[k].name && !strcmp(ks_kinds[k].name, name))
			return k;
	all[0] = '\0';
	for (int k = 1; k < KS_EV_KIND_MAX && n < sizeof(all); k++)
		if (ks_kinds[k].name)
			n += snprintf(all + n, sizeof(all) - n, "%s%s", n ? ", " : "", ks_kinds[k].name);
	return ks_err(-EINVAL, "unknown event kind '%s' (%s)", name, all);
}

const struct ks_kind_def *ks_kind_find(const char *name)
{
	for (int k = 1; k < KS_EV_KIND_MAX; k++)
		if (ks_kinds[k].name && !strcmp(ks_kinds[k].name, name))
			return &ks_kinds[k];
	return NULL;
}

int ks_row_decode(const void *rec, size_t len, __s64 boot_to_real, struct ks_row *r)
{
	const struct ks_hdr *h = rec;
	const struct ks_kind_def *k;

	if (len < sizeof(*h) || !ks_kind_name(h->kind))
		return ks_err(-EINVAL, "malformed record (kind %u, %zu bytes)",
			      len >= sizeof(*h) ? h->kind : 0, len);
	k = &ks_kinds[h->kind];
	ks_row_clear(r);
	ks_row_set_num(r, KS_COL_TS, (__s64)h->ts_ns + boot_to_real);
	ks_row_set_static(r, KS_COL_KIND, k->name);
	if (h->tgid || h->pid) {
		ks_row_set_num(r, KS_COL_PID, h->tgid);
		ks_row_set_num(r, KS_COL_TID, h->pid);
		ks_row_set_num(r, KS_COL_PPID, h->ppid);
		ks_row_set_num(r, KS_COL_UID, h->uid);
		ks_row_set_num(r, KS_COL_EUID, h->euid);
		ks_row_set_num(r, KS_COL_CGROUP_ID, (__s64)h->cgroup_id);
		set_kstr(r, KS_COL_COMM, h->comm, sizeof(h->comm));
	}
	if (h->exec_id)
		ks_row_set_num(r, KS_COL_EXEC_ID, (__s64)h->exec_id);
	if (len >= k->size)
		k->decode(rec, r);
	return 0;
}

/* ---- derived shapes ---- */

void ks_col_json_add(struct json_object *o, enum ks_col c, __s64 num, const char *str)
{
	struct json_object *v = NULL;
	char ts[40];

	switch (ks_cols[c].type) {
	case KS_COL_INT:
		if (c == KS_COL_TS) {
			json_object_object_add(o, "ts_ns", json_object_new_int64(num));
			ks_time_fmt(num, ts, sizeof(ts));
			v = json_object_new_string(ts);
		} else {
			v = json_object_new_int64(num);
		}
		break;
	case KS_COL_ID:
		v = json_object_new_uint64((uint64_t)num);
		break;
	case KS_COL_TEXT:
		if (c == KS_COL_DETAIL && str && (v = json_tokener_parse(str)))
			break;
		v = json_object_new_string(str ? str : "");
		break;
	}
	json_object_object_add(o, ks_cols[c].name, v);
}

struct json_object *ks_row_json_obj(const struct ks_row *r)
{
	struct json_object *o = json_object_new_object();

	for (int c = 0; c < KS_COL_MAX; c++)
		if (ks_row_has(r, c) && (ks_cols[c].type != KS_COL_TEXT || *ks_row_str(r, c)))
			ks_col_json_add(o, c, r->num[c], r->str[c]);
	ks_event_json_name_args(o);
	return o;
}

void ks_row_summary(const struct ks_row *r, char *buf, size_t len)
{
	const struct ks_kind_def *k = ks_kind_find(ks_row_str(r, KS_COL_KIND));

	if (k && k->summary)
		k->summary(r, buf, len);
	else if (ks_row_has(r, KS_COL_RET))
		snprintf(buf, len, "ret=%lld %s", (long long)r->num[KS_COL_RET],
			 ks_row_str(r, KS_COL_DETAIL));
	else
		snprintf(buf, len, "%s", ks_row_str(r, KS_COL_DETAIL));
}
