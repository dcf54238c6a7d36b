// SPDX-License-Identifier: MIT
/* test_events.c - the event table (src/lib/events): every kind decodes,
 * round-trips through a real store file, and every flag bit reaches the
 * row. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <json-c/json.h>
#include "array.h"
#include "err.h"
#include "events.h"
#include "store.h"

#define BOOT_TO_REAL 1700000000000000000LL

static union rec {
	struct ks_hdr h;
	struct ks_exec_event exec;
	struct ks_exit_event exit;
	struct ks_conn_event conn;
	struct ks_flow_event flow;
	struct ks_socket_event sock;
	struct ks_userns_event userns;
	struct ks_priv_event priv;
	struct ks_bpf_event bpf;
	struct ks_shield_event shield;
	struct ks_alg_bind_event alg;
	struct ks_tamper_event tamper;
	char bytes[2048];
} rec;

/* A record of @kind whose every field says something. */
static size_t make(unsigned kind, long i)
{
	memset(&rec, 0, sizeof(rec));
	rec.h.kind = kind;
	rec.h.ts_ns = 1000000000ULL * (i + 1);
	rec.h.pid = 4001;	/* the thread */
	rec.h.tgid = 4000;	/* the process */
	rec.h.ppid = 1;
	rec.h.uid = 1000;
	rec.h.euid = 0;
	rec.h.cgroup_id = 0x8000000000000001ULL;	/* above INT64_MAX: ids stay unsigned */
	rec.h.exec_id = 0xfedcba9876543210ULL;
	snprintf(rec.h.comm, sizeof(rec.h.comm), "comm%u", kind);
	switch (kind) {
	case KS_EV_EXEC:
		rec.exec.parent_exec_id = 77;
		rec.exec.flags = KS_EXEC_SETUID | KS_EXEC_PATH_TRUNC;
		snprintf(rec.exec.path, sizeof(rec.exec.path), "/usr/bin/tool");
		memcpy(rec.exec.argv, "tool\0-x\0a\"b\0", 12);
		rec.exec.argv_len = 12;
		break;
	case KS_EV_EXIT:
		rec.exit.exit_code = (3 << 8) | 9;
		rec.exit.lifetime_ns = 12345;
		break;
	case KS_EV_CONNECT: case KS_EV_ACCEPT: case KS_EV_LISTEN:
		rec.conn.family = AF_INET6;
		rec.conn.lport = 40000;
		rec.conn.rport = 443;
		rec.conn.flags = KS_CONN_ESTABLISHED;
		rec.conn.laddr[15] = 1;			/* ::1 */
		rec.conn.raddr[0] = 0x20; rec.conn.raddr[1] = 0x01;
		rec.conn.raddr[2] = 0x0d; rec.conn.raddr[3] = 0xb8; rec.conn.raddr[15] = 0x99;
		break;
	case KS_EV_FLOW:
		rec.flow.family = AF_INET;
		rec.flow.proto = 17;
		rec.flow.lport = 5353;
		rec.flow.rport = 53;
		memcpy(rec.flow.laddr, "\x0a\x00\x00\x05", 4);
		memcpy(rec.flow.raddr, "\xc6\x33\x64\x02", 4);
		rec.flow.bytes_out = 100; rec.flow.bytes_in = 200;
		rec.flow.pkts_out = 3; rec.flow.pkts_in = 4;
		rec.flow.cookie = 99;
		rec.flow.start_ns = rec.h.ts_ns - 500;
		rec.flow.flags = KS_FLOW_FINAL | KS_FLOW_PEERS;
		break;
	case KS_EV_SOCKET:
		rec.sock.family = 38; rec.sock.type = 5; rec.sock.ret = -13;
		break;
	case KS_EV_USERNS:
		rec.userns.flags = 0x10000000; rec.userns.syscall = KS_USERNS_CLONE3; rec.userns.ret = -1;
		break;
	case KS_EV_PRIVILEGE:
		rec.priv.old_uid = 1000; rec.priv.new_euid = 0; rec.priv.new_caps = ~0ULL;
		rec.priv.where = KS_PRIV_AT_SYSCALL;
		break;
	case KS_EV_BPF:
		rec.bpf.cmd = 5; rec.bpf.prog_type = 2; rec.bpf.insn_cnt = 9; rec.bpf.ret = 7;
		snprintf(rec.bpf.prog_name, sizeof(rec.bpf.prog_name), "prog\x01");
		break;
	case KS_EV_SHIELD:
		snprintf(rec.shield.shield, sizeof(rec.shield.shield), "cve-2026-1");
		snprintf(rec.shield.hook, sizeof(rec.shield.hook), "socket_bind");
		snprintf(rec.shield.variant, sizeof(rec.shield.variant), "lsm");
		rec.shield.verdict = KS_VERDICT_KILLED;
		rec.shield.args[3] = 42;
		break;
	case KS_EV_ALG_BIND:
		snprintf(rec.alg.type, sizeof(rec.alg.type), "aead");
		snprintf(rec.alg.name, sizeof(rec.alg.name), "authencesn(hmac(sha256),cbc(aes))");
		rec.alg.ret = 0; rec.alg.feat = 1; rec.alg.mask = 2;
		break;
	case KS_EV_TAMPER:
		rec.tamper.op = KS_TAMPER_UNLINK; rec.tamper.ret = -1;
		snprintf(rec.tamper.target, sizeof(rec.tamper.target), "/sys/fs/bpf/kshield/x");
		break;
	}
	rec.h.size = ks_kinds[kind].size;
	return ks_kinds[kind].size;
}

static struct json_object *detail(const struct ks_row *r)
{
	struct json_object *d = json_tokener_parse(ks_row_str(r, KS_COL_DETAIL));

	cr_assert(d, "detail is not JSON: %s", ks_row_str(r, KS_COL_DETAIL));
	return d;
}

static long long dnum(struct json_object *d, const char *key)
{
	struct json_object *v;

	cr_assert(json_object_object_get_ex(d, key, &v), "no %s in detail", key);
	return json_object_get_int64(v);
}

Test(events, every_kind_is_in_the_table)
{
	int kinds = 0;

	for (unsigned k = 1; k < KS_EV_KIND_MAX; k++) {
		const struct ks_kind_def *d = &ks_kinds[k];

		cr_assert(d->name, "kind %u has no entry", k);
		cr_expect_geq(d->size, sizeof(struct ks_hdr), "%s", d->name);
		cr_expect(d->decode, "%s has no decoder", d->name);
		cr_expect_eq(d->cols & KS_COLS_HDR, KS_COLS_HDR, "%s lacks header columns", d->name);
		cr_expect_eq(ks_kind_parse(d->name), (int)k);
		cr_expect_eq(ks_kind_find(d->name), d);
		kinds++;
	}
	cr_expect_eq(kinds, KS_EV_KIND_MAX - 1);
	cr_expect_eq(ks_kind_parse("nope"), -EINVAL);
	cr_expect_null(ks_kind_name(KS_EV_KIND_MAX));
	for (int c = 0; c < KS_COL_MAX; c++)
		cr_expect_eq(ks_col_find(ks_cols[c].name), c);
	cr_expect_eq(ks_col_find("tgid"), -1, "tgid is no column: pid is the process");
}

/* pid is the process (hdr.tgid), tid the thread (hdr.pid). */
Test(events, pid_is_the_process_tid_the_thread)
{
	struct ks_row r;

	for (unsigned k = 1; k < KS_EV_KIND_MAX; k++) {
		size_t len = make(k, 0);

		cr_assert_eq(ks_row_decode(&rec, len, BOOT_TO_REAL, &r), 0, "%s", ks_kind_name(k));
		cr_expect_eq(ks_row_num(&r, KS_COL_PID), 4000, "%s", ks_kind_name(k));
		cr_expect_eq(ks_row_num(&r, KS_COL_TID), 4001, "%s", ks_kind_name(k));
		cr_expect_eq(ks_row_num(&r, KS_COL_TS), BOOT_TO_REAL + 1000000000LL);
		cr_expect_eq((unsigned long long)ks_row_num(&r, KS_COL_EXEC_ID), 0xfedcba9876543210ULL);
		cr_expect_str_eq(ks_row_str(&r, KS_COL_KIND), ks_kind_name(k));
		/* a row has only the columns its kind may have */
		cr_expect_eq(r.set & ~ks_kinds[k].cols, 0u, "%s: columns outside its kind's",
			     ks_kind_name(k));
		cr_expect(ks_row_has(&r, KS_COL_DETAIL), "%s without detail", ks_kind_name(k));
	}
}

Test(events, each_kind_decodes_its_payload)
{
	struct ks_row r;
	struct json_object *d;

	ks_row_decode(&rec, make(KS_EV_EXEC, 0), 0, &r);
	cr_expect_str_eq(ks_row_str(&r, KS_COL_BINARY), "/usr/bin/tool");
	cr_expect_str_eq(ks_row_str(&r, KS_COL_ARGS), "tool -x a\"b");
	cr_expect_eq(ks_row_num(&r, KS_COL_PARENT_EXEC_ID), 77);
	d = detail(&r);
	cr_expect_eq(dnum(d, "setuid"), 1);
	cr_expect_eq(dnum(d, "setgid"), 0);
	cr_expect_eq(dnum(d, "path_truncated"), 1, "KS_EXEC_PATH_TRUNC must reach the row");
	cr_expect_eq(dnum(d, "argv_truncated"), 0);
	json_object_put(d);

	ks_row_decode(&rec, make(KS_EV_EXIT, 0), 0, &r);
	d = detail(&r);
	cr_expect_eq(dnum(d, "exit_code"), 3);
	cr_expect_eq(dnum(d, "signal"), 9);
	cr_expect_eq(dnum(d, "lifetime_ns"), 12345);
	json_object_put(d);

	ks_row_decode(&rec, make(KS_EV_CONNECT, 0), 0, &r);
	cr_expect_str_eq(ks_row_str(&r, KS_COL_LADDR), "::1");
	cr_expect_str_eq(ks_row_str(&r, KS_COL_RADDR), "2001:db8::99");
	cr_expect_eq(ks_row_num(&r, KS_COL_RPORT), 443);
	ks_row_decode(&rec, make(KS_EV_LISTEN, 0), 0, &r);
	cr_expect(!ks_row_has(&r, KS_COL_RADDR) && !ks_row_has(&r, KS_COL_RPORT));
	cr_expect_eq(ks_row_num(&r, KS_COL_LPORT), 40000);

	ks_row_decode(&rec, make(KS_EV_FLOW, 0), 0, &r);
	cr_expect_str_eq(ks_row_str(&r, KS_COL_LADDR), "10.0.0.5");
	cr_expect_str_eq(ks_row_str(&r, KS_COL_RADDR), "198.51.100.2");
	cr_expect_str_eq(ks_row_str(&r, KS_COL_DETAIL),
			 "{\"proto\":\"udp\",\"family\":2,\"bytes_out\":100,\"bytes_in\":200,"
			 "\"pkts_out\":3,\"pkts_in\":4,\"duration_ns\":500,\"final\":1,"
			 "\"owner_unknown\":0,\"peers\":1,\"untracked\":0,\"flow\":\"99-999999500\"}");

	ks_row_decode(&rec, make(KS_EV_SOCKET, 0), 0, &r);
	cr_expect_eq(ks_row_num(&r, KS_COL_RET), -13);
	ks_row_decode(&rec, make(KS_EV_USERNS, 0), 0, &r);
	cr_expect(strstr(ks_row_str(&r, KS_COL_DETAIL), "\"syscall\":\"clone3\""));
	ks_row_decode(&rec, make(KS_EV_PRIVILEGE, 0), 0, &r);
	cr_expect(strstr(ks_row_str(&r, KS_COL_DETAIL), "\"seen_at\":\"syscall\""));
	cr_expect(strstr(ks_row_str(&r, KS_COL_DETAIL), "\"new_caps\":18446744073709551615"));
	ks_row_decode(&rec, make(KS_EV_BPF, 0), 0, &r);
	cr_expect(strstr(ks_row_str(&r, KS_COL_DETAIL), "\"prog_name\":\"prog?\""));
	ks_row_decode(&rec, make(KS_EV_SHIELD, 0), 0, &r);
	cr_expect_str_eq(ks_row_str(&r, KS_COL_SHIELD), "cve-2026-1");
	cr_expect_str_eq(ks_row_str(&r, KS_COL_VERDICT), "killed");
	cr_expect(strstr(ks_row_str(&r, KS_COL_DETAIL), "\"args\":[0,0,0,42]"));
	ks_row_decode(&rec, make(KS_EV_ALG_BIND, 0), 0, &r);
	cr_expect_str_eq(ks_row_str(&r, KS_COL_ALG_NAME), "authencesn(hmac(sha256),cbc(aes))");
	ks_row_decode(&rec, make(KS_EV_TAMPER, 0), 0, &r);
	cr_expect(strstr(ks_row_str(&r, KS_COL_DETAIL), "\"target\":\"/sys/fs/bpf/kshield/x\""));
}

/* Every bit of a flags word the BPF side sets reaches the row: named, or
 * as other_flags. */
Test(events, every_flag_bit_reaches_the_row)
{
	static const struct { unsigned kind; int bits; } k[] = {
		{ KS_EV_EXEC, 32 }, { KS_EV_CONNECT, 16 }, { KS_EV_FLOW, 8 },
	};
	struct ks_row r;
	char none[512];

	for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
		make(k[i].kind, 0);
		if (k[i].kind == KS_EV_EXEC)
			rec.exec.flags = 0;
		else if (k[i].kind == KS_EV_FLOW)
			rec.flow.flags = 0;
		else
			rec.conn.flags = 0;
		ks_row_decode(&rec, ks_kinds[k[i].kind].size, 0, &r);
		snprintf(none, sizeof(none), "%s", ks_row_str(&r, KS_COL_DETAIL));
		for (int b = 0; b < k[i].bits; b++) {
			if (k[i].kind == KS_EV_EXEC)
				rec.exec.flags = 1u << b;
			else if (k[i].kind == KS_EV_FLOW)
				rec.flow.flags = 1u << b;
			else
				rec.conn.flags = 1u << b;
			ks_row_decode(&rec, ks_kinds[k[i].kind].size, 0, &r);
			cr_expect_str_neq(ks_row_str(&r, KS_COL_DETAIL), none, "%s: flag bit %d is lost",
					  ks_kind_name(k[i].kind), b);
			json_object_put(detail(&r));
		}
	}
}

Test(events, malformed_records_are_refused_short_ones_keep_their_header)
{
	struct ks_row r;

	make(KS_EV_EXEC, 0);
	cr_expect_eq(ks_row_decode(&rec, sizeof(struct ks_hdr) - 1, 0, &r), -EINVAL);
	rec.h.kind = KS_EV_KIND_MAX;
	cr_expect_eq(ks_row_decode(&rec, sizeof(rec.exec), 0, &r), -EINVAL);
	rec.h.kind = 0;
	cr_expect_eq(ks_row_decode(&rec, sizeof(rec.exec), 0, &r), -EINVAL);
	make(KS_EV_EXEC, 0);
	cr_assert_eq(ks_row_decode(&rec, sizeof(struct ks_hdr), 0, &r), 0);
	cr_expect(!ks_row_has(&r, KS_COL_BINARY) && ks_row_has(&r, KS_COL_PID));
	/* no process known: no process columns */
	rec.h.pid = rec.h.tgid = 0;
	cr_assert_eq(ks_row_decode(&rec, sizeof(rec.exec), 0, &r), 0);
	cr_expect(!ks_row_has(&r, KS_COL_PID) && !ks_row_has(&r, KS_COL_COMM));
}

/* Decode every kind, store it in a real store, read it back through the
 * `events` view: the same columns and values, and the same JSON. */
Test(events, every_kind_round_trips_through_the_store)
{
	char dir[] = "/tmp/ks-unit-XXXXXX", path[64], cols[512], sql[640];
	struct ks_row want[KS_EV_KIND_MAX], got;
	struct ks_store *s;
	sqlite3_stmt *st;
	int n = 0;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	for (unsigned k = 1; k < KS_EV_KIND_MAX; k++) {
		size_t len = make(k, k);

		cr_assert_eq(ks_row_decode(&rec, len, BOOT_TO_REAL, &want[k]), 0);
		cr_assert_eq(ks_store_add_row(s, &want[k]), 0, "%s: %s", ks_kind_name(k), ks_errmsg());
	}
	cr_assert_eq(ks_store_commit(s), KS_EV_KIND_MAX - 1);
	ks_store_close(s);

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_RDONLY), 0, "%s", ks_errmsg());
	ks_col_list(cols, sizeof(cols));
	snprintf(sql, sizeof(sql), "SELECT %s FROM events ORDER BY ts", cols);
	cr_assert_eq(sqlite3_prepare_v2(ks_store_db(s), sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		unsigned k = ks_kind_parse((const char *)sqlite3_column_text(st, KS_COL_KIND));
		const struct ks_row *w = &want[k];
		struct json_object *a, *b;

		ks_store_row_read(st, &got);
		n++;
		for (int c = 0; c < KS_COL_MAX; c++) {
			bool has = ks_row_has(w, c) && (ks_cols[c].type != KS_COL_TEXT || *ks_row_str(w, c));

			cr_expect_eq(ks_row_has(&got, c), has, "%s.%s: stored %d, decoded %d",
				     ks_kind_name(k), ks_cols[c].name, ks_row_has(&got, c), has);
			if (!has)
				continue;
			if (ks_cols[c].type == KS_COL_TEXT)
				cr_expect_str_eq(ks_row_str(&got, c), ks_row_str(w, c), "%s.%s",
						 ks_kind_name(k), ks_cols[c].name);
			else
				cr_expect_eq(got.num[c], w->num[c], "%s.%s", ks_kind_name(k),
					     ks_cols[c].name);
		}
		a = ks_row_json_obj(w);
		b = ks_row_json_obj(&got);
		cr_expect(json_object_equal(a, b), "%s: JSON differs:\n %s\n %s", ks_kind_name(k),
			  json_object_to_json_string(a), json_object_to_json_string(b));
		json_object_put(a);
		json_object_put(b);
	}
	sqlite3_finalize(st);
	ks_store_close(s);
	cr_expect_eq(n, KS_EV_KIND_MAX - 1);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	cr_expect_eq(system(rm), 0);
}

/* The store queues a table's rows and inserts them many to a statement:
 * rows of three tables interleaved, more than one statement's worth each
 * plus a remainder, and ties in time, come back all, in order, each once;
 * an aborted batch leaves nothing, queued or inserted, and is counted. */
Test(events, rows_inserted_many_to_a_statement_come_back_in_order_and_counted)
{
	static const unsigned kinds[] = { KS_EV_CONNECT, KS_EV_ACCEPT, KS_EV_EXEC };
	char dir[] = "/tmp/ks-unit-XXXXXX", path[64], rm[128];
	struct ks_store *s;
	sqlite3_stmt *st;
	struct ks_row r;
	long n = 3 * 100 + 7, i = 0;
	long long prev = 0;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	for (i = 0; i < n; i++) {
		size_t len = make(kinds[i % 3], i / 2);	/* pairs share a time */

		rec.h.tgid = 5000 + i;
		cr_assert_eq(ks_row_decode(&rec, len, BOOT_TO_REAL, &r), 0);
		cr_assert_eq(ks_store_add_row(s, &r), 0, "%s", ks_errmsg());
	}
	cr_assert_eq(ks_store_commit(s), n);
	/* a batch given up: 40 connections (one statement's worth inserted,
	 * the rest queued) */
	for (i = 0; i < 40; i++) {
		size_t len = make(KS_EV_CONNECT, 1000 + i);

		cr_assert_eq(ks_row_decode(&rec, len, BOOT_TO_REAL, &r), 0);
		cr_assert_eq(ks_store_add_row(s, &r), 0, "%s", ks_errmsg());
	}
	cr_expect_eq(ks_store_abort(s), 40);
	cr_expect_eq(ks_store_commit(s), 0);
	cr_expect_eq(ks_store_committed(s), (__u64)n);
	cr_expect_eq(ks_store_dropped(s), 40);
	ks_store_close(s);

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_RDONLY), 0, "%s", ks_errmsg());
	cr_assert_eq(sqlite3_prepare_v2(ks_store_db(s), "SELECT ts, kind, pid, comm FROM events "
					"ORDER BY ts", -1, &st, NULL), SQLITE_OK);
	for (i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
		long long ts = sqlite3_column_int64(st, 0);
		char comm[16];

		snprintf(comm, sizeof(comm), "comm%u", kinds[i % 3]);
		cr_expect_gt(ts, prev, "row %ld: ts %lld after %lld", i, ts, prev);
		cr_expect_str_eq((const char *)sqlite3_column_text(st, 1), ks_kind_name(kinds[i % 3]),
				 "row %ld", i);
		cr_expect_eq(sqlite3_column_int64(st, 2), 5000 + i, "row %ld", i);
		cr_expect_str_eq((const char *)sqlite3_column_text(st, 3), comm, "row %ld", i);
		prev = ts;
	}
	cr_expect_eq(i, n);
	sqlite3_finalize(st);
	ks_store_close(s);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	cr_expect_eq(system(rm), 0);
}

/* An accept is stored without its usual detail (flags 0); a store of
 * schema version 3, where a row without detail read as established, gets
 * that detail written into such rows when opened for writing. */
Test(events, accepts_store_no_usual_detail_and_a_version_3_store_keeps_its_meaning)
{
	char dir[] = "/tmp/ks-unit-XXXXXX", path[64], rm[128], sql[256];
	struct ks_store *s;
	sqlite3_stmt *st;
	struct ks_row r;
	sqlite3 *db;
	long long t[3];

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	for (int i = 0; i < 2; i++) {
		size_t len = make(KS_EV_ACCEPT, i);

		rec.conn.family = AF_INET;
		rec.conn.flags = 0;
		cr_assert_eq(ks_row_decode(&rec, len, BOOT_TO_REAL, &r), 0);
		t[i] = ks_row_num(&r, KS_COL_TS);
		cr_assert_eq(ks_store_add_row(s, &r), 0, "%s", ks_errmsg());
	}
	cr_assert_eq(ks_store_commit(s), 2);
	ks_store_close(s);
	/* as version 3 wrote it: row 0 with its detail in full, row 1 hand-made
	 * without (established, to version 3) */
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "UPDATE ev_accept SET detail = '{\"family\":2,\"established\":0,"
		 "\"owner_unknown\":0}' WHERE ts = %lld; PRAGMA user_version = 3", t[0]);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	size_t len = make(KS_EV_ACCEPT, 2);
	rec.conn.family = AF_INET;
	rec.conn.flags = 0;
	cr_assert_eq(ks_row_decode(&rec, len, BOOT_TO_REAL, &r), 0);
	t[2] = ks_row_num(&r, KS_COL_TS);
	cr_assert_eq(ks_store_add_row(s, &r), 0, "%s", ks_errmsg());
	cr_assert_eq(ks_store_commit(s), 1);
	st = NULL;
	cr_assert_eq(sqlite3_prepare_v2(ks_store_db(s), "SELECT ts, detail, (SELECT detail IS NULL FROM "
					"ev_accept a WHERE a.ts = e.ts), (SELECT user_version FROM "
					"pragma_user_version) FROM events e WHERE kind = 'accept' ORDER BY ts",
					-1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(ks_store_db(s)));
	for (int i = 0; i < 3; i++) {
		struct json_object *d;

		cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "row %d", i);
		cr_expect_eq(sqlite3_column_int64(st, 0), t[i]);
		d = json_tokener_parse((const char *)sqlite3_column_text(st, 1));
		cr_assert(d, "row %d: %s", i, sqlite3_column_text(st, 1));
		cr_expect_eq(dnum(d, "established"), i == 1, "row %d: %s", i, sqlite3_column_text(st, 1));
		cr_expect_eq(dnum(d, "family"), 2);
		json_object_put(d);
		/* stored in full: the old rows; the new one without */
		cr_expect_eq(sqlite3_column_int(st, 2), i == 2, "row %d", i);
		cr_expect_eq(sqlite3_column_int(st, 3), KS_STORE_VERSION);
	}
	cr_expect_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	ks_store_close(s);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	cr_expect_eq(system(rm), 0);
}

Test(events, json_and_summary_shapes)
{
	struct ks_row r;
	struct json_object *o, *v;
	char line[512];

	ks_row_decode(&rec, make(KS_EV_EXEC, 0), BOOT_TO_REAL, &r);
	o = ks_row_json_obj(&r);
	cr_expect_str_eq(json_object_get_string(json_object_object_get(o, "ts")),
			 "2023-11-14T22:13:21.000000Z");
	cr_expect_eq(json_object_get_int64(json_object_object_get(o, "ts_ns")),
		     BOOT_TO_REAL + 1000000000LL);
	cr_expect_eq(json_object_get_uint64(json_object_object_get(o, "cgroup_id")),
		     0x8000000000000001ULL);
	cr_expect(json_object_object_get_ex(o, "detail", &v) && json_object_is_type(v, json_type_object));
	cr_expect_eq(json_object_get_int(json_object_object_get(o, "pid")), 4000);
	cr_expect_eq(json_object_get_int(json_object_object_get(o, "tid")), 4001);
	json_object_put(o);
	ks_row_summary(&r, line, sizeof(line));
	cr_expect_str_eq(line, "/usr/bin/tool  [tool -x a\"b]");
	ks_row_decode(&rec, make(KS_EV_FLOW, 0), 0, &r);
	ks_row_summary(&r, line, sizeof(line));
	cr_expect_str_eq(line, "udp 10.0.0.5:5353 -> 198.51.100.2:53 out 100 in 200 0.000s final");
	ks_row_decode(&rec, make(KS_EV_SOCKET, 0), 0, &r);
	ks_row_summary(&r, line, sizeof(line));
	cr_expect_str_eq(line, "ret=-13 {\"family\":38,\"type\":5,\"protocol\":0}");
}
