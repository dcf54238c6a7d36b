/* SPDX-License-Identifier: MIT */
/* events.h - the one table of event columns and kinds.
 *
 * Every record the BPF side sends (include/kshield/event.h) becomes one row
 * of the columns below. Each column is defined here once; the store's
 * tables and `events` view, the agent's --json lines, the SELECT of
 * `kshield events`, the fleet's PostgreSQL view and the printer are all
 * derived from this table. Adding a column is one line in
 * KS_EVENT_COLUMNS, then the decoders that fill it and their kinds'
 * column sets (ks_kinds[].cols: the store gives a kind's table those
 * columns; tests/unit/test_events.c fails when a decoder fills a column
 * its kind does not list). The four argument words of a shield event are
 * named by the shield's own object (below).
 *
 * Process ids use the names the kernel shows users: `pid` is the process
 * (thread group id: getpid(), what ps and kill take), `tid` the thread
 * (gettid()). struct ks_hdr keeps the kernel-internal names of
 * bpf_get_current_pid_tgid(): hdr.tgid becomes pid, hdr.pid becomes tid.
 * Stores of schema version 2 and older, and events that agents of that
 * time shipped to the fleet, called them pid (the thread) and tgid (the
 * process): column.v2 names them, and readers of such data map them.
 */
#ifndef KSHIELD_EVENTS_H
#define KSHIELD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <kshield/event.h>

struct json_object;

/* X(ID, name, type, name in stores of schema version 2 and older) */
#define KS_EVENT_COLUMNS(X) \
	X(TS,		ts,		INT,	ts)		/* CLOCK_REALTIME ns, the row key */ \
	X(KIND,		kind,		TEXT,	kind)		/* "exec", "connect", ... */ \
	X(PID,		pid,		INT,	tgid)		/* process (thread group) id */ \
	X(TID,		tid,		INT,	pid)		/* thread id */ \
	X(PPID,		ppid,		INT,	ppid)		/* parent process */ \
	X(UID,		uid,		INT,	uid) \
	X(EUID,		euid,		INT,	euid) \
	X(COMM,		comm,		TEXT,	comm) \
	X(CGROUP_ID,	cgroup_id,	ID,	cgroup_id) \
	X(EXEC_ID,	exec_id,	ID,	exec_id)	/* the image the process runs */ \
	X(PARENT_EXEC_ID, parent_exec_id, ID,	parent_exec_id)	/* exec: the image before */ \
	X(BINARY,	binary,		TEXT,	binary)		/* exec: path as passed to execve */ \
	X(ARGS,		args,		TEXT,	args)		/* exec: argv, space-separated */ \
	X(LADDR,	laddr,		TEXT,	laddr) \
	X(LPORT,	lport,		INT,	lport) \
	X(RADDR,	raddr,		TEXT,	raddr) \
	X(RPORT,	rport,		INT,	rport) \
	X(SHIELD,	shield,		TEXT,	shield)		/* shield: its name */ \
	X(VERDICT,	verdict,	TEXT,	verdict)	/* shield: refused, audited, killed */ \
	X(ALG_TYPE,	alg_type,	TEXT,	alg_type)	/* alg_bind */ \
	X(ALG_NAME,	alg_name,	TEXT,	alg_name) \
	X(RET,		ret,		INT,	ret)		/* syscall result */ \
	X(DETAIL,	detail,		TEXT,	detail)		/* JSON object: the rest of the record */

enum ks_col {
#define KS_COL_ENUM_(id, name, type, v2) KS_COL_##id,
	KS_EVENT_COLUMNS(KS_COL_ENUM_)
#undef KS_COL_ENUM_
	KS_COL_MAX
};

#define KS_COL(id)	(1u << KS_COL_##id)

enum ks_col_type {
	KS_COL_INT,	/* a signed integer */
	KS_COL_ID,	/* a 64-bit id: shown unsigned, stored as its bits */
	KS_COL_TEXT,
};

struct ks_col_def {
	const char *name;
	enum ks_col_type type;
	const char *v2;		/* its name in schema version 2 and older */
};

extern const struct ks_col_def ks_cols[KS_COL_MAX];

/* The column named @name, or -1. */
int ks_col_find(const char *name);
/* "ts, kind, pid, tid, ..." (every column, in order) into @buf. */
void ks_col_list(char *buf, size_t len);

/* One event as a row: the columns it has (set), their values. Strings
 * live in buf, or are static. */
struct ks_row {
	__u32 set;			/* KS_COL(x): the row has column x */
	__s64 num[KS_COL_MAX];		/* INT and ID columns */
	const char *str[KS_COL_MAX];	/* TEXT columns */
	__u16 len[KS_COL_MAX];		/* their lengths */
	size_t used;			/* bytes of buf taken */
	char buf[2048];
};

/* The columns every decoded record may have (from struct ks_hdr). */
#define KS_COLS_HDR	(KS_COL(TS) | KS_COL(KIND) | KS_COL(PID) | KS_COL(TID) | KS_COL(PPID) | \
			 KS_COL(UID) | KS_COL(EUID) | KS_COL(COMM) | KS_COL(CGROUP_ID) | \
			 KS_COL(EXEC_ID) | KS_COL(DETAIL))

/* One kind of record. */
struct ks_kind_def {
	const char *name;
	size_t size;		/* bytes its payload decoder needs: a shorter
				 * record keeps its header's columns only */
	__u32 cols;		/* KS_COL(x): the columns its rows may have */
	void (*decode)(const void *rec, struct ks_row *r);
	/* What the event says beyond who and when, one line for people. */
	void (*summary)(const struct ks_row *r, char *buf, size_t len);
};

/* Indexed by enum ks_kind; unused slots have no name. */
extern const struct ks_kind_def ks_kinds[KS_EV_KIND_MAX];

/* ---- shield event arguments ----
 *
 * A shield reports four argument words (ks_refuse / ks_kill in
 * bpf/sdk/shield.bpf.h; struct ks_shield_event.args) whose meaning depends on
 * the shield and the hook that sent them. Each shield's object names and
 * types them, per hook, in its metadata (KSHIELD_ARGS, KSHIELD_VALS:
 * the keys KS_ARGS_KEY and KS_VALS_KEY below), the way a tracer names a
 * probe's arguments, so that an agent built before the shield existed
 * reads its hits by name. Readers show them by name (detail.arg in JSON,
 * name=value in lines); the stored record keeps the raw words
 * (detail.args): the names are applied when a row is shown, so a shield
 * that learns to name an argument names its old rows too. A hook its
 * object does not name, or a shield whose object cannot be found, gets
 * arg0..arg3 as numbers.
 *
 * The metadata, version 1 (argtab.c reads it):
 *   args/1=<hook>[?a<i>=<n>][~] <slot> <slot> <slot> <slot>
 *	slot: "-" (unused) or <name>:<fmt>, fmt one of int uint hex bool fd
 *	errno family socktype syscall syscall32 dev str8 (enum ks_arg_fmt),
 *	or <name>:enum:<table> / <name>:flags:<table>; slots left out are
 *	unused. "?a<i>=<n>": the entry holds only when word i is n (one hook,
 *	two layouts), and is tried first. "~": a header's fallback, used only
 *	when the shield names the hook nowhere else.
 *   vals/1=<table> <n>=<name> <n>=<name> ...	(n decimal or 0x hex)
 * A later grammar gets new keys (args/2), which readers of this one pass
 * over: an object may carry both for older agents. */
#define KS_ARGS_KEY	"args/1"
#define KS_VALS_KEY	"vals/1"

/* How one argument word is shown. */
enum ks_arg_fmt {
	KS_ARG_NONE = 0,	/* unused slot: not shown */
	KS_ARG_INT,		/* signed decimal (the word is a sign-extended int) */
	KS_ARG_UINT,		/* unsigned decimal */
	KS_ARG_HEX,		/* "0x8000000" */
	KS_ARG_BOOL,		/* false for 0, else true */
	KS_ARG_FD,		/* a file descriptor: signed decimal */
	KS_ARG_ERRNO,		/* "EPERM" (the word may be -errno or errno) */
	KS_ARG_FAMILY,		/* socket address family: "AF_ALG" */
	KS_ARG_SOCKTYPE,	/* socket(2) type: "SOCK_DGRAM|SOCK_CLOEXEC" */
	KS_ARG_SYSCALL,		/* native syscall number of this host's ABI: "splice" */
	KS_ARG_SYSCALL32,	/* 32-bit ABI (i386 on x86-64, AArch32 on arm64) */
	KS_ARG_DEV,		/* kernel dev_t (s_dev): "major:minor" */
	KS_ARG_STR8,		/* 8 bytes of a name, in memory order: "authence" */
	KS_ARG_ENUM,		/* one of ks_arg_def.vals, else decimal */
	KS_ARG_FLAGS,		/* bits of ks_arg_def.vals joined by '|', rest as hex */
};

/* A value (ENUM) or a bit (FLAGS) and its name. Lists end with a NULL name. */
struct ks_arg_val {
	__u64 v;
	const char *name;
};

struct ks_arg_def {
	const char *name;		/* key in detail.arg; NULL with KS_ARG_NONE */
	enum ks_arg_fmt fmt;
	const struct ks_arg_val *vals;	/* KS_ARG_ENUM, KS_ARG_FLAGS */
};

#define KS_SHIELD_ARGS	4
#define KS_ARG_ANY	(-1)

/* The arguments of one (shield, hook). */
struct ks_shield_args_def {
	const char *shield;
	const char *hook;
	/* KS_ARG_ANY, or: this entry holds only when args[when] == is (one
	 * hook name with two argument layouts in one shield). */
	int when;
	__u64 is;
	bool fallback;		/* "~": used only when nothing else names the hook */
	struct ks_arg_def arg[KS_SHIELD_ARGS];
};

/* arg0..arg3 as unsigned numbers: what an unknown pair gets. */
extern const struct ks_shield_args_def ks_shield_args_generic;

/* Learn @shield's tables from its metadata (@n pairs @keys[i]=@vals[i];
 * keys other than KS_ARGS_KEY and KS_VALS_KEY are passed over). They
 * replace what was known of @shield for the rest of the process. Returns
 * 0, or -EINVAL with a message naming the first entry not understood (the
 * others are kept), or -ENOMEM. */
int ks_shield_args_learn(const char *shield, char *const *keys, char *const *vals, int n);
/* Called with a shield's name the first time its tables are wanted and not
 * known: it finds the object and learns it (src/lib/shield/argsrc.c). */
void ks_shield_args_set_resolver(void (*fn)(const char *shield));
/* @shield's entries (*defs, in the object's order); their number. */
int ks_shield_args_of(const char *shield, const struct ks_shield_args_def **defs);
/* The entry for an event of @shield at @hook with argument words @a;
 * ks_shield_args_generic when its tables have none. Never NULL. */
const struct ks_shield_args_def *ks_shield_args_find(const char *shield, const char *hook,
						     const __u64 a[KS_SHIELD_ARGS]);
/* The named arguments as a JSON object ({"family": "AF_ALG", "fd": 3}). */
struct json_object *ks_shield_args_json(const struct ks_shield_args_def *d,
					const __u64 a[KS_SHIELD_ARGS]);
/* "family=AF_ALG fd=3" into @buf. */
void ks_shield_args_str(const struct ks_shield_args_def *d, const __u64 a[KS_SHIELD_ARGS],
			char *buf, size_t len);
/* @ev is one event as JSON (ks_row_json_obj's shape, or a store row's):
 * when it is a shield event whose detail has "hook" and "args", add
 * detail.arg, the arguments by name. Anything else is left alone. */
void ks_event_json_name_args(struct json_object *ev);

/* "exec", "connect", ... for KS_EV_*; NULL for unknown kinds. */
const char *ks_kind_name(unsigned kind);
/* "refused", "audited", "killed" (enum ks_verdict), else "unknown". */
const char *ks_verdict_name(__u32 verdict);
/* KS_EV_* for a name, or -EINVAL with a message recorded. */
int ks_kind_parse(const char *name);
/* The kind table entry of @name, or NULL. */
const struct ks_kind_def *ks_kind_find(const char *name);

static inline bool ks_row_has(const struct ks_row *r, enum ks_col c)
{
	return r->set & (1u << c);
}

static inline __s64 ks_row_num(const struct ks_row *r, enum ks_col c)
{
	return ks_row_has(r, c) ? r->num[c] : 0;
}

static inline const char *ks_row_str(const struct ks_row *r, enum ks_col c)
{
	return ks_row_has(r, c) && r->str[c] ? r->str[c] : "";
}

/* strlen(ks_row_str(r, c)), without counting. */
static inline size_t ks_row_str_len(const struct ks_row *r, enum ks_col c)
{
	return ks_row_has(r, c) && r->str[c] ? r->len[c] : 0;
}

/* An empty row. */
void ks_row_clear(struct ks_row *r);
void ks_row_set_num(struct ks_row *r, enum ks_col c, __s64 v);
/* Copy @s into the row (cut to what buf has left). */
void ks_row_set_str(struct ks_row *r, enum ks_col c, const char *s);
/* Point column @c at @s, which outlives the row. */
void ks_row_set_static(struct ks_row *r, enum ks_col c, const char *s);
/* Copy @src into @dst: its columns and the bytes of buf it uses. */
void ks_row_copy(struct ks_row *dst, const struct ks_row *src);

/* Decode a ring-buffer record into @r; strings are made printable.
 * @boot_to_real is added to its CLOCK_BOOTTIME timestamp. Returns 0, or
 * -EINVAL with a message recorded for a record shorter than its header or
 * of an unknown kind. */
int ks_row_decode(const void *rec, size_t len, __s64 boot_to_real, struct ks_row *r);

/* The JSON value of column @c (ts as RFC 3339, detail parsed, ids
 * unsigned) added to @o: ts also adds "ts_ns". */
void ks_col_json_add(struct json_object *o, enum ks_col c, __s64 num, const char *str);
/* @r as one JSON object, the shape `kshield events -j` shows. */
struct json_object *ks_row_json_obj(const struct ks_row *r);
/* One line of what the event says beyond who and when. */
void ks_row_summary(const struct ks_row *r, char *buf, size_t len);

#endif /* KSHIELD_EVENTS_H */
