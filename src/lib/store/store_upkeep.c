// SPDX-License-Identifier: MIT
/* store_upkeep.c - the store besides taking rows (store.h): retention by
 * age and under a size cap (in chunks, exec chunks and emptied tables
 * dropped), the WAL's size under that cap, whether another process
 * changed or damaged the file, the counts per kind, and the notes the
 * agent writes (clock offsets, losses). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "err.h"
#include "store_int.h"

/* Delete by @sql (one int64 parameter) in chunks, each its own
 * transaction, so that readers and the writer are never held up long. */
static long delete_chunks(struct ks_store *s, const char *sql, sqlite3_int64 arg, long max)
{
	sqlite3_stmt *st;
	long total = 0;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return ks_store_sql_err(s->db, rc, "can't apply retention");
	for (;;) {
		sqlite3_bind_int64(st, 1, arg);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			break;
		int n = sqlite3_changes(s->db);
		total += n;
		if (n == 0 || (max && total >= max))
			break;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return ks_store_sql_err(s->db, rc, "can't apply retention");
	return total;
}

/* Delete the rows older than @cut from every table, in chunks. Exec
 * chunks and a version 1 table left empty are dropped. */
static long delete_before(struct ks_store *s, sqlite3_int64 cut)
{
	const char *tabs[KS_SCHEMA_TABLES_MAX];
	int n = ks_schema_tables(s->db, tabs, KS_SCHEMA_TABLES_MAX), rc;
	long total = 0, d;
	char sql[160];

	for (int i = 0; i < n; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE ts IN (SELECT ts FROM %s "
			 "WHERE ts < ?1 ORDER BY ts LIMIT 20000)", tabs[i], tabs[i]);
		if ((d = delete_chunks(s, sql, cut, 0)) < 0)
			return d;
		total += d;
	}
	/* the deleted rows' entries in table late (no index on ts: it only
	 * has rows stored while the clock was behind) */
	if (total && (d = delete_chunks(s, "DELETE FROM late WHERE ts < ?1", cut, 0)) < 0)
		return d;
	if (total && (rc = ks_store_schema_tx(s->db, ks_schema_prune)) != SQLITE_OK)
		return ks_store_sql_err(s->db, rc, "can't drop emptied tables");
	if (total && ks_schema_tables(s->db, tabs, KS_SCHEMA_TABLES_MAX) < n)
		ks_store_bins_forget(s);		/* a chunk went, and binaries with it */
	if (total && (rc = ks_store_exec_prepare(s)) != SQLITE_OK)
		return ks_store_sql_err(s->db, rc, "can't drop emptied tables");
	return total;
}

static void add_rows(void *arg, const char *kind, long long n)
{
	(void)kind;
	*(long long *)arg += n;
}

/* The WAL is part of the store on disk: under a cap, checkpoint at a
 * quarter of it (KS_STORE_WAL_BYTES at most) and truncate the -wal file
 * back to that after each checkpoint. Without this a 4M store kept a 16M
 * WAL beside it (bench/soak.sh). */
static void wal_limits(struct ks_store *s, __u64 max_bytes)
{
	long long psize = 4096, wal = KS_STORE_WAL_BYTES, limit = -1;
	char sql[128];

	if (max_bytes == s->wal_cap_for)
		return;
	if (max_bytes && (long long)(max_bytes / 4) < wal)
		wal = limit = max_bytes / 4;
	ks_store_pragma_int(s->db, "PRAGMA page_size", &psize);
	/* the checkpoint is wal_hook's (PRAGMA wal_autocheckpoint would put
	 * SQLite's own hook back in its place) */
	snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit=%lld;", limit);
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK) {
		s->wal_frames = wal / (psize > 0 ? psize : 4096);
		s->wal_cap_for = max_bytes;
	}
}

long ks_store_retain(struct ks_store *s, __u64 keep_ns, __u64 max_bytes)
{
	long long pages = 0, freep = 0, psize = 4096, nrows = 0, cut = 0, drop;
	long total = 0, n;
	struct timespec now;
	int rc;

	if (s->in_tx && (rc = ks_store_commit(s)) < 0)
		return rc;
	wal_limits(s, max_bytes);
	if (keep_ns) {
		clock_gettime(CLOCK_REALTIME, &now);
		cut = (sqlite3_int64)now.tv_sec * 1000000000LL + now.tv_nsec - keep_ns;
		if ((n = delete_before(s, cut)) < 0)
			return n;
		total += n;
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s->db, "DELETE FROM losses WHERE ts < ?1", -1, &st, NULL) == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, cut);
			sqlite3_step(st);
			sqlite3_finalize(st);
		}
	}
	if (max_bytes) {
		if (ks_store_pragma_int(s->db, "PRAGMA page_count", &pages) != SQLITE_OK ||
		    ks_store_pragma_int(s->db, "PRAGMA freelist_count", &freep) != SQLITE_OK ||
		    ks_store_pragma_int(s->db, "PRAGMA page_size", &psize) != SQLITE_OK)
			return ks_store_sql_err(s->db, SQLITE_ERROR, "can't measure the store");
		long long used = (pages - freep) * psize;
		if ((__u64)used > max_bytes * 9 / 10) {
			/* Free the oldest rows (across the tables) down to 8/10
			 * of the cap, a fifth of them at least: freed pages are
			 * reused, so the file stops growing near the cap. A
			 * fixed fifth settled at five times what comes in
			 * between two calls, above the cap when that is more
			 * than a fifth of it (bench/soak.sh, 4M at 1000/s). */
			ks_schema_count(s->db, add_rows, &nrows);
			drop = (long long)((double)nrows * (used - (long long)(max_bytes * 8 / 10)) / used);
			sqlite3_stmt *st;
			rc = sqlite3_prepare_v2(s->db, "SELECT ts FROM events ORDER BY ts LIMIT 1 OFFSET ?1",
						-1, &st, NULL);
			if (rc != SQLITE_OK)
				return ks_store_sql_err(s->db, rc, "can't apply retention");
			sqlite3_bind_int64(st, 1, drop > nrows / 5 ? drop : nrows / 5);
			cut = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) + 1 : 0;
			sqlite3_finalize(st);
			if (cut && (n = delete_before(s, cut)) < 0)
				return n;
			total += cut ? n : 0;
		}
	}
	return total;
}

bool ks_store_touched(struct ks_store *s)
{
	struct stat now;
	bool same;

	if (stat(sqlite3_db_filename(s->db, "main"), &now))
		memset(&now, 0, sizeof(now));
	same = now.st_dev == s->seen.st_dev && now.st_ino == s->seen.st_ino &&
	       now.st_size == s->seen.st_size && now.st_mtim.tv_sec == s->seen.st_mtim.tv_sec &&
	       now.st_mtim.tv_nsec == s->seen.st_mtim.tv_nsec;
	s->seen = now;
	return !same;
}

int ks_store_check(struct ks_store *s)
{
	const char *path = sqlite3_db_filename(s->db, "main");
	char first[160] = "";
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int rc;

	/* A connection of its own: the writer's page cache still holds the
	 * pages as they were, and would hide the damage. */
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 2000);
		rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL);
	}
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0), *nl;

		/* its first finding, on one line */
		if (t && !strncmp(t, "*** in database main ***\n", 25))
			t += 25;
		nl = t ? strchr(t, '\n') : NULL;
		snprintf(first, sizeof(first), "%.*s", nl ? (int)(nl - t) : (int)strlen(t ? t : ""),
			 t ? t : "");
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	sqlite3_close_v2(db);
	if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT || (rc == SQLITE_OK && strcmp(first, "ok")))
		return ks_err(-EBADMSG, "%s was changed by another process and is corrupt (%s)", path,
			      rc == SQLITE_OK ? first : sqlite3_errstr(rc));
	return rc == SQLITE_OK ? 0 : ks_store_sql_err(NULL, rc, "can't check the store");
}

int ks_store_count_kinds(struct ks_store *s, void (*fn)(void *arg, const char *kind, long long n),
			 void *arg)
{
	int rc = ks_schema_count(s->db, fn, arg);

	return rc == SQLITE_OK ? 0 : ks_store_sql_err(s->db, rc, "can't count the events");
}

int ks_store_note_clock(struct ks_store *s, __s64 boot_to_real)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "INSERT INTO clock(since, boot_to_real) VALUES(?, ?)",
				-1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, s->last_ts);
		sqlite3_bind_int64(st, 2, boot_to_real);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(s->db);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : ks_store_sql_err(s->db, rc, "can't record the clock");
}

int ks_store_note_losses(struct ks_store *s, const __u64 lost[KS_EV_KIND_MAX], __u64 unstored,
			 __u64 missed)
{
	struct timespec now;
	sqlite3_stmt *st;
	int rc;

	clock_gettime(CLOCK_REALTIME, &now);
	rc = sqlite3_prepare_v2(s->db, "INSERT INTO losses(ts, kind, lost, unstored) VALUES(?,?,?,?)",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return ks_store_sql_err(s->db, rc, "can't record losses");
	for (int k = 0; k < KS_EV_KIND_MAX; k++) {
		const char *name = k ? ks_kind_name(k) : "all";

		if (!name || (k && !lost[k]))
			continue;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)now.tv_sec * 1000000000LL + now.tv_nsec);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, k ? lost[k] : 0);
		sqlite3_bind_int64(st, 4, k ? 0 : unstored);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			break;
	}
	/* runs of the monitor's programs the kernel skipped: records of any
	 * kind never made */
	if (rc == SQLITE_DONE && missed) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)now.tv_sec * 1000000000LL + now.tv_nsec);
		sqlite3_bind_text(st, 2, "missed", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, missed);
		sqlite3_bind_int64(st, 4, 0);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : ks_store_sql_err(s->db, rc, "can't record losses");
}
