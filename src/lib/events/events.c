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

/* ---- shield event arguments: the table (see events.h) ----
 *
 * One entry per (shield, hook) of the bundled shields and of the SDK's
 * netlink walker (bpf/sdk/nlwalk.bpf.h), from the ks_refuse() / ks_kill()
 * calls in shields/<name>/shield.bpf.c: a shield that changes what it
 * passes changes its line here (tests/unit/test_shield_args.c checks the
 * table's shape, and that every hook those calls name has an entry).
 * Slots a call leaves 0 are KS_ARG_NONE. */

#define A_NONE			{ NULL, KS_ARG_NONE, NULL }
#define A(name, fmt)		{ name, KS_ARG_##fmt, NULL }
#define A_ENUM(name, vals)	{ name, KS_ARG_ENUM, vals }
#define A_FLAGS(name, vals)	{ name, KS_ARG_FLAGS, vals }
#define ANY			KS_ARG_ANY, 0

/* linux/io_uring.h (enum io_uring_op; the unit test holds these to it) */
static const struct ks_arg_val iouring_ops[] = {
	{ 0, "IORING_OP_NOP" }, { 1, "IORING_OP_READV" }, { 2, "IORING_OP_WRITEV" },
	{ 4, "IORING_OP_READ_FIXED" }, { 5, "IORING_OP_WRITE_FIXED" },
	{ 9, "IORING_OP_SENDMSG" }, { 10, "IORING_OP_RECVMSG" }, { 13, "IORING_OP_ACCEPT" },
	{ 16, "IORING_OP_CONNECT" }, { 22, "IORING_OP_READ" }, { 23, "IORING_OP_WRITE" },
	{ 26, "IORING_OP_SEND" }, { 27, "IORING_OP_RECV" }, { 30, "IORING_OP_SPLICE" },
	{ 33, "IORING_OP_TEE" }, { 45, "IORING_OP_SOCKET" }, { 46, "IORING_OP_URING_CMD" },
	{ 47, "IORING_OP_SEND_ZC" }, { 48, "IORING_OP_SENDMSG_ZC" }, { 0, NULL },
};

static const struct ks_arg_val ipprotos[] = {
	{ 6, "IPPROTO_TCP" }, { 17, "IPPROTO_UDP" }, { 50, "IPPROTO_ESP" },
	{ 136, "IPPROTO_UDPLITE" }, { 0, NULL },
};

/* bpf/sdk/nlwalk.bpf.h: what the walk made of the request */
static const struct ks_arg_val nlw_results[] = {
	{ 1, "hit" },		/* NLW_HIT: the shield's check matched */
	{ 2, "unparsed" },	/* NLW_UNPARSED: unread, cut or 32-bit: refused unseen */
	{ 0, NULL },
};

/* which call of cve-2026-31431's tp fallback fed the page cache in */
static const struct ks_arg_val splice_calls[] = {
	{ 0, "splice" }, { 1, "sendfile" }, { 0, NULL },
};

/* cve-2026-31431: the step of the exploit a kill was at, and why a bind
 * was refused unscanned (fail closed) */
static const struct ks_arg_val esn_steps[] = {
	{ 0, "bind" }, { 1, "accept" }, { 2, "splice" }, { 0, NULL },
};
static const struct ks_arg_val esn_bind_fail[] = {
	{ 1, "mark_not_stored" }, { 2, "name_not_read" }, { 0, NULL },
};

/* cve-2022-0847: the call a pipe write was refused or killed at */
static const struct ks_arg_val dp_calls[] = {
	{ 0, "file_permission" }, { 1, "write" }, { 2, "writev" }, { 3, "pwritev2" },
	{ 4, "sendfile" }, { 5, "io_uring" }, { 6, "io_submit" }, { 0, NULL },
};

/* cve-2022-0492: who lacked CAP_SYS_ADMIN in the initial user namespace,
 * and the call a release_agent write or option was refused or killed at */
static const struct ks_arg_val ra_lacks[] = {
	{ 0x1, "writer" }, { 0x2, "opener" }, { 0x4, "userns_context" }, { 0, NULL },
};
static const struct ks_arg_val ra_calls[] = {
	{ 0, "file_permission" }, { 1, "fs_context_parse_param" }, { 2, "write" },
	{ 3, "splice" }, { 4, "sendfile" }, { 5, "io_uring" }, { 6, "fsconfig" }, { 0, NULL },
};

/* linux/fs_context.h, linux/mount.h */
static const struct ks_arg_val fs_value_types[] = {
	{ 1, "fs_value_is_flag" }, { 2, "fs_value_is_string" }, { 0, NULL },
};
static const struct ks_arg_val fsconfig_cmds[] = {
	{ 0, "FSCONFIG_SET_FLAG" }, { 1, "FSCONFIG_SET_STRING" }, { 0, NULL },
};

/* linux/fs.h MAY_*, linux/socket.h MSG_*, linux/mman.h PROT_* */
static const struct ks_arg_val may_mask[] = {
	{ 0x1, "MAY_EXEC" }, { 0x2, "MAY_WRITE" }, { 0x4, "MAY_READ" }, { 0x8, "MAY_APPEND" },
	{ 0x10, "MAY_ACCESS" }, { 0x20, "MAY_OPEN" }, { 0x40, "MAY_CHDIR" }, { 0, NULL },
};
static const struct ks_arg_val msg_flags[] = {
	{ 0x1, "MSG_OOB" }, { 0x2, "MSG_PEEK" }, { 0x40, "MSG_DONTWAIT" },
	{ 0x100, "MSG_WAITALL" }, { 0x8000, "MSG_MORE" }, { 0x8000000, "MSG_SPLICE_PAGES" },
	{ 0x40000000, "MSG_CMSG_CLOEXEC" }, { 0, NULL },
};
static const struct ks_arg_val prot_flags[] = {
	{ 0x1, "PROT_READ" }, { 0x2, "PROT_WRITE" }, { 0x4, "PROT_EXEC" }, { 0, NULL },
};

/* io_uring: IORING_REGISTER_PBUF_RING, and io_uring_buf_reg.flags */
static const struct ks_arg_val iouring_register_ops[] = {
	{ 22, "IORING_REGISTER_PBUF_RING" }, { 0, NULL },
};
static const struct ks_arg_val pbuf_flags[] = {
	{ 1, "IOU_PBUF_RING_MMAP" }, { 0, NULL },
};

/* linux/sched.h CLONE_NEW* (what userns-policy and a reader care about) */
static const struct ks_arg_val clone_flags[] = {
	{ 0x00000100, "CLONE_VM" }, { 0x00000200, "CLONE_FS" }, { 0x00000400, "CLONE_FILES" },
	{ 0x00000800, "CLONE_SIGHAND" }, { 0x00010000, "CLONE_THREAD" },
	{ 0x00020000, "CLONE_NEWNS" }, { 0x02000000, "CLONE_NEWCGROUP" },
	{ 0x04000000, "CLONE_NEWUTS" }, { 0x08000000, "CLONE_NEWIPC" },
	{ 0x10000000, "CLONE_NEWUSER" }, { 0x20000000, "CLONE_NEWPID" },
	{ 0x40000000, "CLONE_NEWNET" }, { 0, NULL },
};

/* netlink message types the netlink shields stop at */
static const struct ks_arg_val rtm_types[] = {
	{ 44, "RTM_NEWTFILTER" }, { 0, NULL },
};
#define NFT(n)	((10 << 8) | (n))	/* NFNL_SUBSYS_NFTABLES */
static const struct ks_arg_val nft_types[] = {
	{ NFT(6), "NFT_MSG_NEWRULE" }, { NFT(8), "NFT_MSG_DELRULE" }, { NFT(9), "NFT_MSG_NEWSET" },
	{ NFT(12), "NFT_MSG_NEWSETELEM" }, { NFT(14), "NFT_MSG_DELSETELEM" }, { 0, NULL },
};
#undef NFT
static const struct ks_arg_val xfrm_types[] = {
	{ 0x10, "XFRM_MSG_NEWSA" }, { 0x1a, "XFRM_MSG_UPDSA" }, { 0, NULL },
};
/* cve-2022-2588's SEEN_* bits of the message it refused */
static const struct ks_arg_val route4_seen[] = {
	{ 1, "kind_route" }, { 2, "to_0" }, { 4, "from_0" }, { 8, "kind" }, { 16, "handle_0" },
	{ 0, NULL },
};
/* cve-2023-32233 */
static const struct ks_arg_val nft_set_flags[] = {
	{ 0x1, "NFT_SET_ANONYMOUS" }, { 0x2, "NFT_SET_CONSTANT" }, { 0x4, "NFT_SET_INTERVAL" },
	{ 0x8, "NFT_SET_MAP" }, { 0x10, "NFT_SET_TIMEOUT" }, { 0x20, "NFT_SET_EVAL" },
	{ 0x40, "NFT_SET_OBJECT" }, { 0x80, "NFT_SET_CONCAT" }, { 0x100, "NFT_SET_EXPR" },
	{ 0, NULL },
};
static const struct ks_arg_val nft_32233_hits[] = {
	{ 1, "modifiable_anonymous_set" }, { 2, "delrule_then_delsetelem" }, { 0, NULL },
};
/* cve-2026-43284: xfrm_usersa_info.flags */
static const struct ks_arg_val xfrm_sa_flags[] = {
	{ 1, "XFRM_STATE_NOECN" }, { 2, "XFRM_STATE_DECAP_DSCP" }, { 4, "XFRM_STATE_NOPMTUDISC" },
	{ 8, "XFRM_STATE_WILDRECV" }, { 16, "XFRM_STATE_ICMP" }, { 32, "XFRM_STATE_AF_UNSPEC" },
	{ 64, "XFRM_STATE_ALIGN4" }, { 128, "XFRM_STATE_ESN" }, { 0, NULL },
};

/* A netlink shield's five hooks (bpf/sdk/nlwalk.bpf.h): the walk's findings at
 * lsm/netlink_send and the send syscalls (the message type, the shield's
 * own detail w->arg, its w->hit, the walk's result), and the requests
 * killed unparsed (io_uring, 32-bit calls). */
#define NLW_HOOKS(shield, type, detail, hit)						\
	{ shield, "netlink_send", ANY,							\
	  { type, detail, hit, A_ENUM("walk", nlw_results) } },				\
	{ shield, "sys_enter_send", ANY,						\
	  { type, detail, hit, A_ENUM("walk", nlw_results) } },				\
	{ shield, "sys_enter_io_uring_enter", ANY,					\
	  { A_NONE, A("fd", FD), A_NONE, A_ENUM("walk", nlw_results) } },		\
	{ shield, "io_uring_submit", ANY,						\
	  { A_ENUM("opcode", iouring_ops), A("fd", FD), A_NONE, A_ENUM("walk", nlw_results) } }, \
	{ shield, "sys_enter_compat32", ANY,						\
	  { A("syscall", SYSCALL32), A("fd", FD), A_NONE, A_ENUM("walk", nlw_results) } }

/* The same verdicts refused at the send syscalls' entry functions (the
 * kprobe variant, nlw_kprobe_send: "sys_<call>"; its write, writev and
 * pwritev2 are tp's programs, "sys_enter_send"). */
#define NLW_KPROBE_HOOK(shield, hook, ...)						\
	{ shield, hook, ANY, { __VA_ARGS__, A_ENUM("walk", nlw_results) } }
#define NLW_KPROBE_HOOKS(shield, ...)							\
	NLW_KPROBE_HOOK(shield, "sys_sendmsg", __VA_ARGS__),				\
	NLW_KPROBE_HOOK(shield, "sys_sendto", __VA_ARGS__),				\
	NLW_KPROBE_HOOK(shield, "sys_sendmmsg", __VA_ARGS__),				\
	NLW_KPROBE_HOOK(shield, "sys_splice", __VA_ARGS__),				\
	NLW_KPROBE_HOOK(shield, "sys_sendfile64", __VA_ARGS__),				\
	{ shield, "sys_io_uring_enter", ANY,						\
	  { A_NONE, A("fd", FD), A_NONE, A_ENUM("walk", nlw_results) } }

/* userns-policy: the executable that was not allowed (its device and
 * inode, the ks_userns_allow key) */
#define EXE	A("exe_dev", DEV), A("exe_ino", UINT)

const struct ks_shield_args_def ks_shield_args[] = {
	/* x_tables replace from a user namespace: setsockopt's level and name */
	{ "cve-2021-22555", "socket_setsockopt", ANY,
	  { A("level", INT), A("optname", INT), A("compat", BOOL), A_NONE } },
	{ "cve-2021-22555", "compat_setsockopt", ANY,
	  { A("level", INT), A("optname", INT), A("syscall", SYSCALL32), A_NONE } },
	/* sudoedit -s with an argument ending in a backslash */
	{ "cve-2021-3156", "sched_process_exec", ANY,
	  { A("argv_index", UINT), A("shell", BOOL), A("odd_backslashes", BOOL), A_NONE } },
	/* PwnKit: a set-ID exec with argc 0 (or argv[0] "" where the kernel
	 * forces argc 1) */
	{ "cve-2021-4034", "bprm_creds_from_file", ANY,
	  { A("argc", INT), A("mode", HEX), A("secureexec", BOOL), A_NONE } },
	{ "cve-2021-4034", "sched_process_exec", ANY,
	  { A("argc", INT), A("mode", HEX), A("secureexec", BOOL), A("arg_bytes", UINT) } },
	/* Looney Tunables: a GLIBC_TUNABLES item with two '=' in a secure exec */
	{ "cve-2023-4911", "sched_process_exec", ANY,
	  { A("string", UINT), A("tunables", UINT), A("unreadable", BOOL), A_NONE } },
	/* legacy fs_context option buffer filled to a page */
	{ "cve-2022-0185", "fs_context_parse_param", ANY,
	  { A("data_size", INT), A("param_len", UINT), A_ENUM("type", fs_value_types), A_NONE } },
	{ "cve-2022-0185", "sys_enter_fsconfig", ANY,
	  { A("data_size", INT), A("param_len", UINT), A_ENUM("cmd", fsconfig_cmds), A_NONE } },
	/* io_uring buffer ring mmap */
	{ "cve-2024-0582", "mmap_file", ANY,
	  { A("syscall", SYSCALL), A("offset", HEX), A_FLAGS("prot", prot_flags), A_NONE } },
	{ "cve-2024-0582", "sys_enter_mmap", ANY,
	  { A("syscall", SYSCALL), A("offset", HEX), A_FLAGS("prot", prot_flags), A_NONE } },
	{ "cve-2024-0582", "sys_enter_io_uring_register", ANY,
	  { A_ENUM("opcode", iouring_register_ops), A_FLAGS("flags", pbuf_flags), A_NONE,
	    A_NONE } },
	/* Copy Fail: AF_ALG authencesn, then page-cache pages spliced in */
	{ "cve-2026-31431", "socket_bind", ANY,
	  { A("family", FAMILY), A("addrlen", INT), A("name", STR8),
	    A_ENUM("fail_closed", esn_bind_fail) } },
	{ "cve-2026-31431", "sys_enter_bind", ANY,
	  { A("family", FAMILY), A("addrlen", INT), A("name", STR8), A_NONE } },
	{ "cve-2022-0847", "file_permission", ANY,
	  { A("buf_flags", HEX), A_FLAGS("mask", may_mask), A_NONE, A_ENUM("call", dp_calls) } },
	{ "cve-2022-0847", "sys_enter_write", ANY,
	  { A("buf_flags", HEX), A("fd", FD), A_NONE, A_ENUM("call", dp_calls) } },
	{ "cve-2022-0847", "io_uring_submit", ANY,
	  { A("buf_flags", HEX), A_ENUM("opcode", iouring_ops), A_NONE, A_ENUM("call", dp_calls) } },
	/* cgroup v1 release_agent without CAP_SYS_ADMIN in the initial user ns */
	{ "cve-2022-0492", "file_permission", ANY,
	  { A_FLAGS("lacks", ra_lacks), A("uid", UINT), A_FLAGS("mask", may_mask),
	    A_ENUM("call", ra_calls) } },
	{ "cve-2022-0492", "fs_context_parse_param", ANY,
	  { A_FLAGS("lacks", ra_lacks), A("uid", UINT), A_NONE, A_ENUM("call", ra_calls) } },
	{ "cve-2022-0492", "sys_enter_write", ANY,
	  { A_FLAGS("lacks", ra_lacks), A("uid", UINT), A("fd", FD), A_ENUM("call", ra_calls) } },
	{ "cve-2022-0492", "sys_enter_fsconfig", ANY,
	  { A_FLAGS("lacks", ra_lacks), A("uid", UINT), A("fd", FD), A_ENUM("call", ra_calls) } },
	{ "cve-2022-0492", "io_uring_submit", ANY,
	  { A_FLAGS("lacks", ra_lacks), A("uid", UINT), A_ENUM("opcode", iouring_ops),
	    A_ENUM("call", ra_calls) } },
	{ "cve-2026-31431", "sys_bind", ANY,	/* kprobe: the socket_bind layout */
	  { A("family", FAMILY), A("addrlen", INT), A("name", STR8),
	    A_ENUM("fail_closed", esn_bind_fail) } },
	{ "cve-2026-31431", "file_permission", ANY,
	  { A("family", FAMILY), A_FLAGS("mask", may_mask), A_NONE, A_NONE } },
	{ "cve-2026-31431", "socket_sendmsg", ANY,
	  { A("family", FAMILY), A_FLAGS("msg_flags", msg_flags), A("size", INT), A_NONE } },
	{ "cve-2026-31431", "sys_enter_accept", ANY,
	  { A("family", FAMILY), A("fd", FD), A_NONE, A_ENUM("step", esn_steps) } },
	{ "cve-2026-31431", "sys_enter_splice", ANY,
	  { A("family", FAMILY), A("fd", FD), A_ENUM("call", splice_calls),
	    A_ENUM("step", esn_steps) } },
	/* kprobe: accept, accept4, splice, sendfile64 refused at entry */
	{ "cve-2026-31431", "sys_accept", ANY,
	  { A("family", FAMILY), A("fd", FD), A_NONE, A_ENUM("step", esn_steps) } },
	{ "cve-2026-31431", "sys_accept4", ANY,
	  { A("family", FAMILY), A("fd", FD), A_NONE, A_ENUM("step", esn_steps) } },
	{ "cve-2026-31431", "sys_splice", ANY,
	  { A("family", FAMILY), A("fd", FD), A_ENUM("call", splice_calls),
	    A_ENUM("step", esn_steps) } },
	{ "cve-2026-31431", "sys_sendfile64", ANY,
	  { A("family", FAMILY), A("fd", FD), A_ENUM("call", splice_calls),
	    A_ENUM("step", esn_steps) } },
	{ "cve-2026-31431", "io_uring_submit", ANY,
	  { A("family", FAMILY), A_ENUM("opcode", iouring_ops), A_NONE,
	    A_ENUM("step", esn_steps) } },
	/* DirtyFrag ESP: file pages into a UDP socket of a user namespace's
	 * network namespace, and the xfrm ESP state (netlink) */
	{ "cve-2026-43284", "file_permission", 2, 1,	/* a 32-bit call */
	  { A_ENUM("proto", ipprotos), A("syscall", SYSCALL32), A("compat", BOOL),
	    A("family", FAMILY) } },
	{ "cve-2026-43284", "file_permission", ANY,
	  { A_ENUM("proto", ipprotos), A("syscall", SYSCALL), A("compat", BOOL),
	    A("family", FAMILY) } },
	{ "cve-2026-43284", "socket_sendmsg", ANY,	/* 6.5+: MSG_SPLICE_PAGES */
	  { A_ENUM("proto", ipprotos), A("size", INT), A_FLAGS("msg_flags", msg_flags),
	    A("family", FAMILY) } },
	{ "cve-2026-43284", "sys_enter_splice", ANY,
	  { A_ENUM("proto", ipprotos), A("fd", FD), A_ENUM("call", splice_calls),
	    A("family", FAMILY) } },
	/* its splice check on a 32-bit call (nlwalk's own sends 32-bit
	 * syscall numbers in a0, never 17) */
	{ "cve-2026-43284", "sys_enter_compat32", 0, 17,
	  { A_ENUM("proto", ipprotos), A("fd", FD), A_ENUM("call", splice_calls),
	    A("family", FAMILY) } },
	/* kprobe: the splice check at splice/sendfile's entry (a0 17, where
	 * nlwalk's refusals have a netlink message type) */
	{ "cve-2026-43284", "sys_splice", 0, 17,
	  { A_ENUM("proto", ipprotos), A("fd", FD), A_ENUM("call", splice_calls),
	    A("family", FAMILY) } },
	{ "cve-2026-43284", "sys_sendfile64", 0, 17,
	  { A_ENUM("proto", ipprotos), A("fd", FD), A_ENUM("call", splice_calls),
	    A("family", FAMILY) } },
	NLW_HOOKS("cve-2026-43284", A_ENUM("msg_type", xfrm_types),
		  A_FLAGS("sa_flags", xfrm_sa_flags), A("hit", BOOL)),
	NLW_KPROBE_HOOKS("cve-2026-43284", A_ENUM("msg_type", xfrm_types),
			 A_FLAGS("sa_flags", xfrm_sa_flags), A("hit", BOOL)),
	/* AF_RXRPC from user space */
	{ "cve-2026-43500", "socket_create", ANY,
	  { A("family", FAMILY), A("type", SOCKTYPE), A("protocol", INT), A("kern", BOOL) } },
	{ "cve-2026-43500", "sys_enter_socket", ANY,
	  { A("family", FAMILY), A("type", SOCKTYPE), A("protocol", INT), A_NONE } },
	{ "cve-2026-43500", "socket_sendmsg", ANY,
	  { A("family", FAMILY), A("size", INT), A_NONE, A_NONE } },
	{ "cve-2026-43500", "socket_recvmsg", ANY,
	  { A("family", FAMILY), A("size", INT), A_FLAGS("flags", msg_flags), A_NONE } },
	/* netlink shields */
	NLW_HOOKS("cve-2022-2588", A_ENUM("msg_type", rtm_types), A_FLAGS("seen", route4_seen),
		  A("hit", BOOL)),
	NLW_HOOKS("cve-2023-32233", A_ENUM("msg_type", nft_types),
		  A_FLAGS("set_flags", nft_set_flags), A_ENUM("hit", nft_32233_hits)),
	NLW_HOOKS("cve-2024-1086", A_ENUM("msg_type", nft_types), A("verdict", HEX),
		  A("hit", BOOL)),
	/* register value << 32 | expression type << 8 | attribute types
	 * (bpf/sdk/nftexpr.bpf.h's NFT_X_*, bit per NFTA_* type) */
	NLW_HOOKS("cve-2022-1015", A_ENUM("msg_type", nft_types), A("reg_expr_attrs", HEX),
		  A("hit", BOOL)),
	/* the non-stateful expression's type (NFT_X_*) */
	NLW_HOOKS("cve-2022-32250", A_ENUM("msg_type", nft_types), A("expr_type", INT),
		  A("hit", BOOL)),
	/* user namespaces outside the allow list */
	{ "userns-policy", "userns_create", ANY, { EXE, A("euid", INT), A_NONE } },
	{ "userns-policy", "sys_enter_unshare", ANY,
	  { EXE, A_FLAGS("flags", clone_flags), A_NONE } },
	{ "userns-policy", "sys_enter_clone", ANY, { EXE, A_FLAGS("flags", clone_flags), A_NONE } },
	{ "userns-policy", "sys_enter_clone3", ANY, { EXE, A_FLAGS("flags", clone_flags), A_NONE } },
	{ "userns-policy", "task_newtask", ANY,
	  { EXE, A_FLAGS("flags", clone_flags), A("child_tid", INT) } },
	{ "userns-policy", "sys_exit_setns", ANY,
	  { A("userns", HEX), A("userns_inum", UINT), A_NONE, A_NONE } },
	/* any other shield built on bpf/sdk/nlwalk.bpf.h: the hooks only the
	 * walker uses (io_uring_submit and sys_enter_compat32 are names
	 * shields use for their own checks too) */
	{ NULL, "netlink_send", ANY,
	  { A("msg_type", UINT), A("detail", HEX), A("hit", UINT), A_ENUM("walk", nlw_results) } },
	{ NULL, "sys_enter_send", ANY,
	  { A("msg_type", UINT), A("detail", HEX), A("hit", UINT), A_ENUM("walk", nlw_results) } },
	{ NULL, "sys_enter_io_uring_enter", ANY,
	  { A_NONE, A("fd", FD), A_NONE, A_ENUM("walk", nlw_results) } },
};
const size_t ks_shield_args_n = ARRAY_SIZE(ks_shield_args);

const struct ks_shield_args_def ks_shield_args_generic = {
	NULL, NULL, ANY, { A("arg0", UINT), A("arg1", UINT), A("arg2", UINT), A("arg3", UINT) },
};

#undef A_NONE
#undef A
#undef A_ENUM
#undef A_FLAGS
#undef ANY
#undef NLW_HOOKS
#undef EXE

const struct ks_shield_args_def *ks_shield_args_find(const char *shield, const char *hook,
						     const __u64 a[KS_SHIELD_ARGS])
{
	for (size_t i = 0; i < ks_shield_args_n; i++) {
		const struct ks_shield_args_def *d = &ks_shield_args[i];

		if (d->shield && strcmp(d->shield, shield))
			continue;
		if (strcmp(d->hook, hook))
			continue;
		if (d->when != KS_ARG_ANY && a[d->when] != d->is)
			continue;
		return d;
	}
	return &ks_shield_args_generic;
}

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
