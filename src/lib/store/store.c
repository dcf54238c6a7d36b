// SPDX-License-Identifier: MIT
/* store.c - the SQLite event store (see store.h for the schema).
 *
 * Written by the agent alone, read by `events`, `hunt` and `stats`. The
 * write path is built for a sustained stream: WAL with synchronous=FULL
 * (a commit is a WAL append and one fsync: a row counted as stored is on
 * disk, even when the filesystem fails next, as ext4 going read-only after
 * an error does; with NORMAL the commits since the last checkpoint were
 * lost then, bench/faults.sh readonly. At a commit per 8192 rows or 500 ms
 * bench/store_ingest reads the same, 1.05-1.08M events per CPU second
 * against 1.10-1.13M), one prepared
 * INSERT per table taking KS_STORE_MULTI queued rows at once, rows
 * batched into transactions of at most
 * KS_STORE_BATCH rows or KS_STORE_BATCH_MS, and no secondary index on the
 * frequent kinds' tables (store_schema.c says why and how hunts stay fast).
 *
 * A crash (SIGKILL, power loss) loses at most the open transaction; WAL
 * keeps the database consistent. Errors are returned, never fatal: the
 * agent decides what to count and when to retry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include "array.h"
#include "clock.h"
#include "err.h"
#include "config.h"
#include "store.h"
#include "store_int.h"
#include "store_schema.h"

/* Map an SQLite failure to a negative errno and a one-line message. */
int ks_store_sql_err(sqlite3 *db, int rc, const char *what)
{
	int err;

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:	err = -EBUSY; break;
	case SQLITE_FULL:	err = -ENOSPC; break;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:	err = -EACCES; break;
	case SQLITE_CANTOPEN:	err = -ENOENT; break;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:	err = -EBADMSG; break;
	case SQLITE_IOERR:	err = -EIO; break;
	case SQLITE_NOMEM:	err = -ENOMEM; break;
	default:		err = -EIO; break;
	}
	return ks_err(err, "%s: %s", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

int ks_store_pragma_int(sqlite3 *db, const char *sql, long long *v)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		*v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The main file as this connection left it: only checkpoints write it
 * (WAL), so any other change is someone else's (ks_store_touched()). */
static void seen_mark(struct ks_store *s)
{
	if (stat(sqlite3_db_filename(s->db, "main"), &s->seen))
		memset(&s->seen, 0, sizeof(s->seen));
}

/* After every commit of ours: SQLite's autocheckpoint, then note the main
 * file as the checkpoint left it. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct ks_store *s = arg;

	if (frames >= s->wal_frames)
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	seen_mark(s);
	return SQLITE_OK;
}

/* Check (or, for a new file, stamp) that this is a kshield store. */
static int check_identity(sqlite3 *db, const char *path, bool create)
{
	long long app = 0, ver = 0, ntables = 0;
	char sql[128];
	int rc;

	rc = ks_store_pragma_int(db, "PRAGMA application_id", &app);
	if (rc == SQLITE_OK)
		rc = ks_store_pragma_int(db, "PRAGMA user_version", &ver);
	if (rc == SQLITE_OK)
		rc = ks_store_pragma_int(db, "SELECT count(*) FROM sqlite_master", &ntables);
	if (rc != SQLITE_OK)
		return ks_store_sql_err(db, rc, path);
	if (app == 0 && ntables == 0) {
		if (!create)
			return ks_err(-EMEDIUMTYPE, "%s is an empty database, not a kshield store", path);
		snprintf(sql, sizeof(sql), "PRAGMA page_size=%d; PRAGMA application_id=%d; "
			 "PRAGMA user_version=%d;", KS_STORE_PAGE_SIZE, KS_STORE_APP_ID, KS_STORE_VERSION);
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		return rc == SQLITE_OK ? 0 : ks_store_sql_err(db, rc, path);
	}
	if (app != KS_STORE_APP_ID)
		return ks_err(-EMEDIUMTYPE, "%s is not a kshield store (an SQLite database of "
			      "something else)", path);
	if (ver > KS_STORE_VERSION)
		return ks_err(-EPROTO, "%s has store schema %lld; this kshield knows up to %d "
			      "(run a newer kshield, or use another --store)", path, ver, KS_STORE_VERSION);
	return 0;
}

/* Run @fn (schema changes) in a transaction of its own, and stamp the
 * version. */
int ks_store_schema_tx(sqlite3 *db, int (*fn)(sqlite3 *db))
{
	char sql[64];
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return rc;
	rc = fn(db);
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", KS_STORE_VERSION);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK && !sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

#define DAY_NS 86400000000000LL

/* The INSERT into the current exec chunk, and how full that chunk is. */
/* The INSERTs of table @t, of one row and of KS_STORE_MULTI rows. */
static int ins_prepare(struct ks_store *s, enum ks_tab t)
{
	char q[8192];
	int rc = SQLITE_OK;

	for (int multi = 0; multi < 2 && rc == SQLITE_OK; multi++) {
		sqlite3_stmt **st = multi ? &s->multi[t] : &s->ins[t];

		sqlite3_finalize(*st);
		*st = NULL;
		rc = ks_schema_insert_sql(s->db, t, multi ? KS_STORE_MULTI : 1, q, sizeof(q));
		if (rc == SQLITE_OK)
			rc = sqlite3_prepare_v3(s->db, q, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
	}
	return rc;
}

int ks_store_exec_prepare(struct ks_store *s)
{
	long long newest = 0;
	int rc = ins_prepare(s, KS_TAB_EXEC);

	if (rc == SQLITE_OK)
		rc = ks_schema_exec_current(s->db, &s->exec_rows, &newest);
	s->exec_day = newest / DAY_NS;
	return rc;
}

/* Seal the current exec chunk and start the next, between two batches. */
static int exec_roll(struct ks_store *s)
{
	int rc = ks_store_commit(s);

	if (rc < 0)
		return rc;
	rc = ks_store_schema_tx(s->db, ks_schema_exec_roll);
	if (rc == SQLITE_FULL) {
		s->exec_full = true;
		return 0;
	}
	if (rc == SQLITE_OK)
		rc = ks_store_exec_prepare(s);
	return rc == SQLITE_OK ? 0 : ks_store_sql_err(s->db, rc, "can't start a new exec chunk");
}

void ks_store_bins_forget(struct ks_store *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(s->bins); i++) {
		free(s->bins[i].path);
		s->bins[i].path = NULL;
	}
}

static void ks_store_close_db(struct ks_store *s)
{
	for (int t = 0; t < KS_TAB_MAX; t++) {
		sqlite3_finalize(s->ins[t]);
		sqlite3_finalize(s->multi[t]);
		free(s->q[t].rows);
	}
	sqlite3_finalize(s->bin_get);
	sqlite3_finalize(s->bin_add);
	sqlite3_finalize(s->probe);
	sqlite3_finalize(s->late_add);
	ks_store_bins_forget(s);
	sqlite3_close_v2(s->db);
	free(s);
}

/* The store holds command lines and connections: root's eyes only, as
 * auditd keeps its logs. A missing directory is made (one level, 0700); a
 * new store is created 0600 before SQLite opens it (SQLite would make it
 * 0644, and gives its -wal and -shm files the database's mode); an
 * existing one, and its -wal/-shm, lose any group and other bits. */
static int store_private(const char *path, bool create)
{
	char dir[PATH_MAX], side[PATH_MAX + 8];
	struct stat st;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	if (create && mkdir(dirname(dir), 0700) == 0)
		chmod(dir, 0700);	/* whatever the umask */
	fd = create ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	if (fd >= 0) {
		fchmod(fd, 0600);
		close(fd);
		return 0;
	}
	if (create && errno != EEXIST)
		return 0;	/* SQLite's open says what is wrong */
	for (int i = 0; i < 3; i++) {
		snprintf(side, sizeof(side), "%s%s", path, (const char *[]){ "", "-wal", "-shm" }[i]);
		if (!lstat(side, &st) && S_ISREG(st.st_mode) && (st.st_mode & 077) &&
		    chmod(side, st.st_mode & 0700))
			return ks_err(-errno, "can't make %s private (mode %o): %s", side,
				      st.st_mode & 0777, strerror(errno));
	}
	return 0;
}

int ks_store_open(struct ks_store **out, const char *path, int flags)
{
	bool rdonly = flags & KS_STORE_RDONLY;
	int oflags = rdonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	struct ks_store *s;
	long long last = 0;
	int rc, err;

	*out = NULL;
	if (rdonly && access(path, F_OK))
		return ks_err(-ENOENT, "no event store at %s (is the agent running? "
			      "--store PATH)", path);
	if (flags & KS_STORE_CREATE) {
		oflags |= SQLITE_OPEN_CREATE;
		if ((err = store_private(path, true)))
			return err;
	} else if (!rdonly && (err = store_private(path, false))) {
		return err;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return ks_err(-ENOMEM, "out of memory");
	s->ring_next = -1;
	/* No allocation statistics: they take a global mutex on every
	 * malloc (a few per row). Refused, harmlessly, once SQLite is up. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = sqlite3_open_v2(path, &s->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		err = ks_store_sql_err(s->db, rc, path);
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 0);
	/* Never block the agent (or a reader) for long on a lock; the agent
	 * waits out another writer's commit (the fleet shipper's mark, with
	 * an fsync on a loaded disk) while the ring buffer holds its records,
	 * rather than drop a batch and stop storing for the retry period. */
	sqlite3_busy_timeout(s->db, rdonly ? 2000 : 1000);
	if ((err = check_identity(s->db, path, flags & KS_STORE_CREATE)))
		goto fail;
	if (rdonly) {
		/* an older store, not migrated yet: today's columns */
		if ((rc = ks_schema_compat_view(s->db)) != SQLITE_OK) {
			err = ks_store_sql_err(s->db, rc, path);
			goto fail;
		}
		/* Hunts scan time ranges: map the file rather than copy every
		 * page through read() (the agent, a long-lived writer, does not) */
		sqlite3_exec(s->db, "PRAGMA mmap_size=1073741824", NULL, NULL, NULL);
		*out = s;
		return 0;
	}
	long long page = 0;
	char pragmas[192];

	ks_store_pragma_int(s->db, "PRAGMA page_size", &page);
	snprintf(pragmas, sizeof(pragmas), "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
		 "PRAGMA cache_size=-%d;", KS_STORE_CACHE_KB);
	rc = sqlite3_exec(s->db, pragmas, NULL, NULL, NULL);
	/* our own autocheckpoint, which also notes the file (replaces SQLite's) */
	s->wal_frames = KS_STORE_WAL_BYTES / (page > 0 ? page : 4096);
	sqlite3_wal_hook(s->db, wal_hook, s);
	if (rc == SQLITE_OK)
		rc = ks_store_schema_tx(s->db, ks_schema_apply);
	/* ts is unique across tables: the newest of any of them */
	const char *tabs[KS_SCHEMA_TABLES_MAX];
	for (int i = 0, n = ks_schema_tables(s->db, tabs, KS_SCHEMA_TABLES_MAX); rc == SQLITE_OK && i < n; i++) {
		char q[96];

		snprintf(q, sizeof(q), "SELECT coalesce(max(ts), 0) FROM %s", tabs[i]);
		rc = ks_store_pragma_int(s->db, q, &last);
		s->last_ts = last > s->last_ts ? last : s->last_ts;
	}
	for (int t = 0; rc == SQLITE_OK && t < KS_TAB_MAX; t++)
		rc = t == KS_TAB_EXEC ? ks_store_exec_prepare(s) : ins_prepare(s, t);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v3(s->db, "SELECT id FROM binaries WHERE path = ?1", -1,
					SQLITE_PREPARE_PERSISTENT, &s->bin_get, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v3(s->db, "INSERT INTO binaries(path, first) VALUES(?1, ?2)", -1,
					SQLITE_PREPARE_PERSISTENT, &s->bin_add, NULL);
	if (rc != SQLITE_OK) {
		err = ks_store_sql_err(s->db, rc, path);
		goto fail;
	}
	seen_mark(s);
	*out = s;
	return 0;
fail:
	ks_store_close_db(s);
	return err;
}

void ks_store_close(struct ks_store *s)
{
	if (!s)
		return;
	if (s->in_tx)
		ks_store_commit(s);
	ks_store_close_db(s);
}

__u64 ks_store_committed(const struct ks_store *s)
{
	return s ? s->committed : 0;
}

sqlite3 *ks_store_db(struct ks_store *s)
{
	return s->db;
}

/* ---- rows ---- */

void ks_store_row_read(sqlite3_stmt *st, struct ks_row *r)
{
	int n = sqlite3_column_count(st);

	ks_row_clear(r);
	for (int i = 0; i < n; i++) {
		int c = ks_col_find(sqlite3_column_name(st, i));

		if (c < 0 || sqlite3_column_type(st, i) == SQLITE_NULL)
			continue;
		if (ks_cols[c].type == KS_COL_TEXT)
			ks_row_set_str(r, c, (const char *)sqlite3_column_text(st, i));
		else
			ks_row_set_num(r, c, sqlite3_column_int64(st, i));
	}
}

/* Rows queued are in the open transaction's counts, not yet in SQLite. */
static void queues_forget(struct ks_store *s)
{
	for (int t = 0; t < KS_TAB_MAX; t++)
		s->q[t].n = 0;
}

/* SQLite rolls a transaction back by itself on some errors (SQLITE_FULL,
 * IOERR, NOMEM): its rows are gone, and what follows would autocommit row
 * by row. Notice it, count the rows lost, and start over. */
static bool rolled_back(struct ks_store *s)
{
	if (!s->in_tx || !sqlite3_get_autocommit(s->db))
		return false;
	s->dropped += s->pending;
	s->in_tx = false;
	s->pending = s->pending_notes = 0;
	queues_forget(s);
	ks_store_bins_forget(s);
	return true;
}

static int begin(struct ks_store *s)
{
	int rc;

	rolled_back(s);
	if (s->in_tx)
		return 0;
	/* IMMEDIATE: the write lock first. A deferred batch that read
	 * (binaries) before its first write fails at once with SQLITE_BUSY,
	 * which no wait cures, when another writer committed in between. */
	rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return ks_store_sql_err(s->db, rc, "can't begin a transaction");
	s->in_tx = true;
	s->pending = s->pending_notes = 0;
	s->first_ns = ks_mono_ns();
	return 0;
}

/* The id of binary @path in table binaries, added (first seen at @ts) in
 * the open transaction when new; 0 when it can't be. Ids are cached; the
 * cache is forgotten when a transaction is rolled back. */
static sqlite3_int64 bin_id(struct ks_store *s, const char *path, sqlite3_int64 ts)
{
	__u64 h = 1469598103934665603ULL;
	struct bin_slot *b;
	sqlite3_int64 id = 0;

	for (const char *p = path; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	b = &s->bins[h % ARRAY_SIZE(s->bins)];
	if (b->path && b->hash == h && !strcmp(b->path, path))
		return b->id;
	sqlite3_bind_text(s->bin_get, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(s->bin_get) == SQLITE_ROW)
		id = sqlite3_column_int64(s->bin_get, 0);
	sqlite3_reset(s->bin_get);
	if (!id) {
		sqlite3_bind_text(s->bin_add, 1, path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s->bin_add, 2, ts);
		if (sqlite3_step(s->bin_add) == SQLITE_DONE)
			id = sqlite3_last_insert_rowid(s->db);
		sqlite3_reset(s->bin_add);
		if (!id)
			return 0;
	}
	free(b->path);
	b->path = strdup(path);
	b->hash = h;
	b->id = id;
	return id;
}

/* Insert table @tab's queued rows: KS_STORE_MULTI of them in one
 * statement, fewer (at a commit) one by one. Rows a failed statement did
 * not insert leave the open batch's counts, as dropped. */
static int flush(struct ks_store *s, enum ks_tab tab)
{
	struct queue *q = &s->q[tab];
	bool multi = q->n == KS_STORE_MULTI;
	sqlite3_stmt *st = multi ? s->multi[tab] : s->ins[tab];
	int rc = SQLITE_DONE, i, done = 0;

	for (i = 0; i < q->n && rc == SQLITE_DONE; i++) {
		ks_schema_bind(st, tab, multi ? i : 0, &q->rows[i], q->ts[i], q->bin[i]);
		if (multi && i < q->n - 1)
			continue;
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc == SQLITE_DONE)
			done = i + 1;
	}
	for (i = done; i < q->n; i++) {
		if (q->note[i]) {
			s->pending_notes--;
		} else {
			s->pending--;
			s->dropped++;
		}
	}
	q->n = 0;
	return rc == SQLITE_DONE ? 0 : ks_store_sql_err(s->db, rc, "can't store an event");
}

static int flush_all(struct ks_store *s)
{
	int err = 0;

	for (int t = 0; t < KS_TAB_MAX; t++)
		if (s->q[t].n && !err)
			err = flush(s, t);
	queues_forget(s);
	return err;
}

/* The wall clock was stepped back: rows are stored at the clock's time
 * again, not piled up after the newest row until the clock catches up (an
 * hour, after a one-hour step). Below the newest row stored before the
 * step (high_ts) a ts may be taken: ts_free() probes each. Queued rows go
 * into their tables first, so the probe sees them. */
static int stepped_back(struct ks_store *s)
{
	int rc, err;

	if ((err = flush_all(s)))
		return err;
	if (s->last_ts > s->high_ts)
		s->high_ts = s->last_ts;
	s->last_ts = 0;		/* the next row takes its own ts */
	if (!s->probe) {
		rc = sqlite3_prepare_v3(s->db, "SELECT 1 FROM events WHERE ts = ?1", -1,
					SQLITE_PREPARE_PERSISTENT, &s->probe, NULL);
		if (rc != SQLITE_OK)
			return ks_store_sql_err(s->db, rc, "can't store events after the clock stepped back");
	}
	if (!s->late_add) {
		rc = sqlite3_prepare_v3(s->db, "INSERT INTO late(ts) VALUES(?1)", -1,
					SQLITE_PREPARE_PERSISTENT, &s->late_add, NULL);
		if (rc != SQLITE_OK)
			return ks_store_sql_err(s->db, rc, "can't store events after the clock stepped back");
	}
	return 0;
}

/* A row stored below high_ts: readers that follow the store by ts (the
 * fleet shipper's mark) have passed its place; table late lists it for
 * them, in the row's own transaction. */
static int late_note(struct ks_store *s, sqlite3_int64 ts)
{
	int rc;

	sqlite3_bind_int64(s->late_add, 1, ts);
	rc = sqlite3_step(s->late_add);
	sqlite3_reset(s->late_add);
	return rc == SQLITE_DONE ? 0 : ks_store_sql_err(s->db, rc, "can't store an event");
}

/* Move last_ts past rows stored before the clock stepped back (one lookup
 * per table; only while below high_ts). */
static int ts_free(struct ks_store *s)
{
	int rc;

	for (;;) {
		sqlite3_bind_int64(s->probe, 1, s->last_ts);
		rc = sqlite3_step(s->probe);
		sqlite3_reset(s->probe);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return ks_store_sql_err(s->db, rc, "can't store an event");
		s->last_ts++;
	}
}

static int add_row(struct ks_store *s, const struct ks_row *r, bool note, bool *queued)
{
	enum ks_tab tab = ks_schema_tab(ks_row_str(r, KS_COL_KIND));
	sqlite3_int64 bin = 0;
	int rc, err;

	if ((err = begin(s)))
		return err;
	/* ts is the row key, so each table is in time order and time ranges
	 * need no index; it is unique across tables: a record that ties or
	 * predates the newest row by less than KS_STORE_STEP_NS (ring buffer
	 * order across CPUs) is stored 1 ns after it. */
	__s64 ts = ks_row_num(r, KS_COL_TS);

	if (ts + KS_STORE_STEP_NS < s->last_ts && (err = stepped_back(s)))
		return err;
	s->last_ts = ts > s->last_ts ? ts : s->last_ts + 1;
	if (s->last_ts <= s->high_ts && (err = ts_free(s)))
		return err;
	if (tab == KS_TAB_EXEC) {
		__s64 day = s->last_ts / DAY_NS;

		if (s->exec_rows && !s->exec_full &&
		    (day != s->exec_day || s->exec_rows >= KS_EXEC_CHUNK_ROWS)) {
			if ((err = exec_roll(s)) || (err = begin(s)))
				return err;
		}
		if (!s->exec_rows)
			s->exec_day = day;
		const char *binary = ks_row_str(r, KS_COL_BINARY);

		if (*binary && !(bin = bin_id(s, binary, s->last_ts)))
			return ks_store_sql_err(s->db, sqlite3_errcode(s->db), "can't store an event's binary");
	}
	/* before the row is queued: a row not listed is not stored */
	if (s->last_ts <= s->high_ts && (err = late_note(s, s->last_ts)))
		return err;
	struct queue *q = &s->q[tab];

	if (!q->rows && !(q->rows = malloc(KS_STORE_MULTI * sizeof(*q->rows))))
		return ks_err(-ENOMEM, "out of memory");
	ks_row_copy(&q->rows[q->n], r);
	if (!note && s->ring_next >= 0) {
		s->rings[s->ring_next].queued = s->rings[s->ring_next].next;
		s->rings[s->ring_next].dirty = true;
	}
	q->ts[q->n] = s->last_ts;
	q->bin[q->n] = bin;
	q->note[q->n++] = note;
	s->exec_rows += tab == KS_TAB_EXEC;
	*queued = true;
	if (note)
		s->pending_notes++;
	else
		s->pending++;
	if (q->n == KS_STORE_MULTI && (err = flush(s, tab)))
		return err;
	if (s->pending + s->pending_notes >= KS_STORE_BATCH) {
		rc = ks_store_commit(s);
		return rc < 0 ? rc : 0;
	}
	return 0;
}

int ks_store_add_row(struct ks_store *s, const struct ks_row *r)
{
	bool queued = false;
	int err = add_row(s, r, false, &queued);

	s->ring_next = -1;

	/* Every event handed in is committed, dropped or pending: never lost
	 * between the counts. */
	if (err && !queued)
		s->dropped++;
	if (err)
		rolled_back(s);
	return err;
}

int ks_store_add_note(struct ks_store *s, const struct ks_row *r)
{
	bool queued = false;
	int err = add_row(s, r, true, &queued);

	if (err)
		rolled_back(s);
	return err;
}

__u64 ks_store_dropped(const struct ks_store *s)
{
	return s ? s->dropped : 0;
}

int ks_store_add(struct ks_store *s, const void *rec, size_t len, __s64 boot_to_real)
{
	struct ks_row r;
	int err = ks_row_decode(rec, len, boot_to_real, &r);

	return err ? err : ks_store_add_row(s, &r);
}

int ks_store_abort(struct ks_store *s)
{
	int n = s->pending;

	if (rolled_back(s))
		return n;
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	queues_forget(s);
	ks_store_bins_forget(s);		/* ids added in the transaction are gone */
	s->dropped += s->in_tx ? n : 0;
	s->in_tx = false;
	s->pending = s->pending_notes = 0;
	return n;
}

/* The ring positions of the last rows queued, into the batch's own
 * transaction: committed with them, or not at all. */
static int ring_marks(struct ks_store *s)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_OK;

	for (int i = 0; i < KS_STORE_RINGS && rc == SQLITE_OK; i++) {
		if (!s->rings[i].dirty)
			continue;
		if (!st && (rc = sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO ring_mark(ring, pos) "
						    "VALUES(?1, ?2)", -1, &st, NULL)) != SQLITE_OK)
			break;
		sqlite3_bind_text(st, 1, s->rings[i].ring, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)s->rings[i].queued);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(s->db);
		sqlite3_reset(st);
		s->rings[i].dirty = rc != SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 :
	       ks_store_sql_err(s->db, rc, "can't record the ring buffer's position");
}

void ks_store_ring_next(struct ks_store *s, int slot, const char *ring, __u64 pos)
{
	if (slot < 0 || slot >= KS_STORE_RINGS)
		return;
	s->rings[slot].ring = ring;
	s->rings[slot].next = pos;
	s->ring_next = slot;
}

int ks_store_ring_pos(struct ks_store *s, const char *ring, __u64 *pos)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT pos FROM ring_mark WHERE ring = ?1", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return ks_store_sql_err(s->db, rc, "can't read the ring buffer's position");
	sqlite3_bind_text(st, 1, ring, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*pos = (__u64)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT :
	       ks_store_sql_err(s->db, rc, "can't read the ring buffer's position");
}

int ks_store_ring_forget(struct ks_store *s, const char *boot)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "DELETE FROM ring_mark "
				    "WHERE substr(ring, 1, length(?1) + 1) <> ?1 || ':'", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return ks_store_sql_err(s->db, rc, "can't forget old ring buffer positions");
	sqlite3_bind_text(st, 1, boot, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? sqlite3_changes(s->db) :
	       ks_store_sql_err(s->db, rc, "can't forget old ring buffer positions");
}

int ks_store_commit(struct ks_store *s)
{
	int rc, n, err;

	if (rolled_back(s))
		return ks_store_sql_err(s->db, SQLITE_FULL, "a batch was rolled back by SQLite");
	if (!s->in_tx)
		return 0;
	err = flush_all(s);
	if (rolled_back(s))
		return err ? err : ks_store_sql_err(s->db, SQLITE_FULL, "a batch was rolled back by SQLite");
	if (!err)
		err = ring_marks(s);
	n = s->pending;
	s->in_tx = false;
	s->pending = s->pending_notes = 0;
	rc = err ? SQLITE_ABORT : sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
		s->committed += n;
		return n;
	}
	s->dropped += n;
	/* The batch is gone either way; leave no transaction open. */
	char what[64];
	snprintf(what, sizeof(what), "can't commit %d events", n);
	if (!err)
		err = ks_store_sql_err(s->db, rc, what);
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	ks_store_bins_forget(s);
	return err;
}

int ks_store_pending(struct ks_store *s, long *age_ms)
{
	*age_ms = 0;
	if (!s->in_tx)
		return 0;
	*age_ms = (ks_mono_ns() - s->first_ns) / 1000000;
	return s->pending;
}

const char *ks_store_path(const char *opt)
{
	static struct ks_config cfg;
	const char *env = getenv("KSHIELD_STORE");

	if (opt)
		return opt;
	if (env && *env)
		return env;
	ks_config_defaults(&cfg);
	if (ks_config_load(&cfg, KS_CONFIG_DEFAULT, false))
		ks_config_defaults(&cfg);	/* a broken config is the agent's to report */
	return cfg.store;
}
