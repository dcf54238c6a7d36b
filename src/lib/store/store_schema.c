// SPDX-License-Identifier: MIT
/* store_schema.c - the event store's tables, the `events` view that hunts
 * read, and the statements that write them (see store_schema.h).
 *
 * Why not one table: every secondary index costs about a microsecond per
 * row on the agent's write path (measured: two of them halved ingest), and
 * hunts need only two kinds of selectivity, by kind and by binary. Rows
 * are therefore split by kind into rowid (= ts) tables without indexes: a
 * kind filter drops whole tables (the view gives them a constant kind), a
 * time range is a rowid range. Exec rows go to day chunks whose (bin)
 * index is built in one sort when the day is over; binaries are integers
 * (table binaries). Only the rare kinds share a table with a (kind) index,
 * at a cost paid by rare rows alone.
 *
 * `events` is a UNION ALL view with the columns of the version 1 table and
 * `rowid` (= ts) last, for readers that walked the table by rowid.
 * INSTEAD OF triggers make INSERT and DELETE on it work as on a table.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "events.h"
#include "store_schema.h"

/* The columns of `events` are the event table's (events.h), in its order.
 * A table of one kind stores the columns its kind has (events.h's
 * ks_kinds[].cols) but kind, which the view gives as a constant; ev_other
 * stores every column. Exec rows store binary as `bin`, an id in table
 * binaries. */
#define C_TS		KS_COL_TS
#define C_KIND		KS_COL_KIND
#define C_BINARY	KS_COL_BINARY
#define C_DETAIL	KS_COL_DETAIL
#define C_MAX		KS_COL_MAX

static bool exists(sqlite3 *db, const char *type, const char *name);

static const char *col_type(int c)
{
	return c == C_TS ? "INTEGER PRIMARY KEY" : c == C_KIND ? "TEXT NOT NULL" :
	       ks_cols[c].type == KS_COL_TEXT ? "TEXT" : "INTEGER";
}

/* Each table: its name, its kind (NULL: a kind column), and the detail
 * most of its rows have, stored as NULL and given back by the view (a third
 * of the bytes of an exec or a connection): "" here, the decoder's detail
 * of a record with the family and flags given once tabs_init() ran; NULL:
 * none. A changed default reads the rows stored as NULL under the new one
 * (so execs stored before path_truncated existed read it as 0). */
static struct tab_def {
	const char *name, *kind;
	__u16 family, flags;		/* of the typical record */
	const char *detail;
	size_t detail_len;
	__u32 cols;			/* KS_COL(x) it stores */
} tabs[KS_TAB_MAX] = {
	[KS_TAB_EXEC]		= { "ev_exec", "exec", 0, 0, "" },
	[KS_TAB_EXIT]		= { "ev_exit", "exit" },
	[KS_TAB_CONNECT]	= { "ev_connect", "connect", AF_INET, KS_CONN_ESTABLISHED, "" },
	/* accepts never carry established (a connect's flag); until schema
	 * version 4 the default said they did, and every accept stored its
	 * detail in full */
	[KS_TAB_ACCEPT]		= { "ev_accept", "accept", AF_INET, 0, "" },
	[KS_TAB_LISTEN]		= { "ev_listen", "listen", AF_INET, 0, "" },
	[KS_TAB_FLOW]		= { "ev_flow", "flow" },
	[KS_TAB_OTHER]		= { "ev_other", NULL },
};
#define V1_TABLE "ev_v1"

/* The decoder's detail of a record of kind @k with @family and @flags
 * into @buf; false when it can't be made. */
static bool typical_detail(const struct ks_kind_def *k, __u16 family, __u16 flags, char *buf,
			   size_t len)
{
	union {
		struct ks_hdr h;
		struct ks_exec_event exec;
		struct ks_conn_event conn;
	} rec = {};
	struct ks_row r;

	rec.h.kind = k - ks_kinds;
	if (rec.h.kind == KS_EV_EXEC) {
		rec.exec.flags = flags;
	} else {
		rec.conn.family = family;
		rec.conn.flags = flags;
	}
	if (ks_row_decode(&rec, sizeof(rec), 0, &r))
		return false;
	snprintf(buf, len, "%s", ks_row_str(&r, C_DETAIL));
	return true;
}

/* Fill in tabs[]'s columns and typical details from the event table. */
static void tabs_init(void)
{
	static bool done;
	static char details[KS_TAB_MAX][256];

	if (done)
		return;
	done = true;
	for (int t = 0; t < KS_TAB_MAX; t++) {
		const struct ks_kind_def *k = tabs[t].kind ? ks_kind_find(tabs[t].kind) : NULL;

		tabs[t].cols = k ? k->cols & ~KS_COL(KIND) : (1u << C_MAX) - 1;
		if (!k || !tabs[t].detail)
			continue;
		if (typical_detail(k, tabs[t].family, tabs[t].flags, details[t], sizeof(details[t]))) {
			tabs[t].detail = details[t];
			tabs[t].detail_len = strlen(details[t]);
		}
	}
}

/* Schema version 3 and older read an ev_accept row without detail as an
 * established connection's (the default was wrong, so none was written;
 * a NULL there would be a hand-made row): write that detail into such
 * rows before the new default gives NULL its new meaning. */
static int migrate_v3_accept_detail(sqlite3 *db)
{
	char old[256], sql[512];
	long long ver = 0;
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return sqlite3_errcode(db);
	if (sqlite3_step(st) == SQLITE_ROW)
		ver = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (ver >= 4 || !exists(db, "table", "ev_accept") ||
	    !typical_detail(ks_kind_find("accept"), AF_INET, KS_CONN_ESTABLISHED, old, sizeof(old)))
		return SQLITE_OK;
	snprintf(sql, sizeof(sql), "UPDATE ev_accept SET detail = '%s' WHERE detail IS NULL", old);
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Exec rows go to chunks, ev_exec then ev_exec_1, ev_exec_2, ...: the
 * newest takes the rows without an index; when the UTC day changes or it
 * holds KS_EXEC_CHUNK_ROWS, it is sealed by building its (bin) index in
 * one sort (a fraction of what the index costs row by row) and a new one
 * starts. A hunt for one binary thus reads an index for every day but
 * the current one, and retention drops emptied chunks whole. */
static struct {
	int count;
	char name[KS_EXEC_CHUNKS_MAX][24];	/* oldest first; the last is current */
} ex;

static int chunk_no(const char *name)
{
	return name[7] == '_' ? atoi(name + 8) : 0;
}

/* Read the chunk list from the schema (an empty list: none yet). */
static void load_chunks(sqlite3 *db)
{
	sqlite3_stmt *st;

	tabs_init();
	ex.count = 0;
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND "
			       "(name = 'ev_exec' OR name GLOB 'ev_exec_[0-9]*')", -1, &st, NULL))
		return;
	while (ex.count < KS_EXEC_CHUNKS_MAX && sqlite3_step(st) == SQLITE_ROW)
		snprintf(ex.name[ex.count++], sizeof(ex.name[0]), "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (!ex.count)		/* a new store: the first chunk is to be made */
		snprintf(ex.name[ex.count++], sizeof(ex.name[0]), "ev_exec");
	/* by number: ev_exec_10 after ev_exec_9 */
	for (int i = 1; i < ex.count; i++)
		for (int j = i; j > 0 && chunk_no(ex.name[j]) < chunk_no(ex.name[j - 1]); j--) {
			char tmp[24];

			memcpy(tmp, ex.name[j], sizeof(tmp));
			memcpy(ex.name[j], ex.name[j - 1], sizeof(tmp));
			memcpy(ex.name[j - 1], tmp, sizeof(tmp));
		}
}

static const char *current_chunk(void)
{
	return ex.name[ex.count - 1];
}

/* Table name of @t (the current chunk for execs). */
static const char *tab_name(int t)
{
	return t == KS_TAB_EXEC ? current_chunk() : tabs[t].name;
}

enum ks_tab ks_schema_tab(const char *kind)
{
	for (int t = 0; t < KS_TAB_OTHER; t++)
		if (!strcmp(kind, tabs[t].kind))
			return t;
	return KS_TAB_OTHER;
}

/* Whether table @t stores column @c, and under which name. */
static bool stores(int t, int c)
{
	return tabs[t].cols & (1u << c);
}

/* Column @i of table @t's rows in their order: exec rows keep bin right
 * after ts, so that a scan for one binary decodes two columns a row. */
static int col_at(int t, int i)
{
	if (t != KS_TAB_EXEC || i == C_TS)
		return i;
	if (i == 1)
		return C_BINARY;
	return i <= C_BINARY ? i - 1 : i;
}

/* Each table's bound columns in INSERT order (stores() and col_at()
 * worked out once, not per row). */
static signed char plan[KS_TAB_MAX][C_MAX];
static int plan_n[KS_TAB_MAX];

static void plan_init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	tabs_init();
	for (int t = 0; t < KS_TAB_MAX; t++)
		for (int i = 0, c; i < C_MAX; i++)
			if (stores(t, c = col_at(t, i)))
				plan[t][plan_n[t]++] = c;
}

static const char *phys(int t, int c)
{
	return t == KS_TAB_EXEC && c == C_BINARY ? "bin" : ks_cols[c].name;
}

/* SQL type of column @c's values, for the view's NULLs and constants:
 * every arm of a compound SELECT must have the same affinities, or
 * SQLite will not flatten the view (and ORDER BY ts LIMIT n would sort
 * every row instead of merging the tables' rowid orders). */
static const char *affinity(int c)
{
	return ks_cols[c].type == KS_COL_TEXT ? "TEXT" : "INTEGER";
}

struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (b->len < b->cap)
		b->len += vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
}

int ks_schema_insert_sql(sqlite3 *db, enum ks_tab tab, int rows, char *out, size_t len)
{
	struct buf b = { out, 0, len };
	int n = 0;

	load_chunks(db);
	put(&b, "INSERT INTO %s(", tab_name(tab));
	for (int i = 0, c; i < C_MAX; i++)
		if (stores(tab, c = col_at(tab, i)))
			put(&b, "%s%s", n++ ? "," : "", phys(tab, c));
	put(&b, ") VALUES");
	for (int r = 0; r < rows; r++) {
		put(&b, r ? ",(" : "(");
		for (int i = 0; i < n; i++)
			put(&b, i ? ",?" : "?");
		put(&b, ")");
	}
	return b.len < b.cap ? SQLITE_OK : SQLITE_TOOBIG;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s, size_t len)
{
	if (len)
		sqlite3_bind_text(st, i, s, len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

void ks_schema_bind(sqlite3_stmt *st, enum ks_tab tab, int row, const struct ks_row *r,
		    sqlite3_int64 ts, sqlite3_int64 bin)
{
	plan_init();
	for (int j = 0, i = row * plan_n[tab] + 1; j < plan_n[tab]; j++, i++) {
		int c = plan[tab][j];

		if (c == C_TS)
			sqlite3_bind_int64(st, i, ts);
		else if (tab == KS_TAB_EXEC && c == C_BINARY)
			bin ? sqlite3_bind_int64(st, i, bin) : sqlite3_bind_null(st, i);
		else if (!ks_row_has(r, c))
			sqlite3_bind_null(st, i);
		else if (ks_cols[c].type != KS_COL_TEXT)
			sqlite3_bind_int64(st, i, r->num[c]);
		else if (c == C_DETAIL && tabs[tab].detail && ks_row_str_len(r, c) == tabs[tab].detail_len &&
			 !memcmp(r->str[c], tabs[tab].detail, tabs[tab].detail_len))
			sqlite3_bind_null(st, i);
		else
			bind_text(st, i, r->str[c], ks_row_str_len(r, c));
	}
}

/* ---- DDL ---- */

static bool exists(sqlite3 *db, const char *type, const char *name)
{
	sqlite3_stmt *st;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = ?1 AND name = ?2",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static bool has_column(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *st;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static void kinds_of(struct buf *b, int tab)
{
	int n = 0;

	put(b, "(");
	for (unsigned k = 1; ks_kind_name(k); k++)
		if ((int)ks_schema_tab(ks_kind_name(k)) == tab)
			put(b, "%s'%s'", n++ ? "," : "", ks_kind_name(k));
	put(b, ")");
}

/* The view and its triggers: CREATE statements, one per buffer. */
static void view_sql(sqlite3 *db, struct buf *view, struct buf *ins, struct buf *del,
		     struct buf *upd, bool v1)
{
	struct buf *b = view;

	put(b, "CREATE VIEW events AS");
	for (int t = 0, k = 0; t < KS_TAB_MAX + v1; t += t != KS_TAB_EXEC || ++k >= ex.count) {
		put(b, "%s SELECT", t || k ? " UNION ALL" : "");
		for (int c = 0; c < C_MAX; c++) {
			bool has = t == KS_TAB_MAX ? has_column(db, V1_TABLE, ks_cols[c].name) :
				   stores(t, c);

			if (t < KS_TAB_MAX && c == C_KIND && tabs[t].kind)
				put(b, " CAST('%s' AS TEXT) AS kind,", tabs[t].kind);
			else if (t == KS_TAB_EXEC && c == C_BINARY)
				put(b, " b.path AS binary,");
			else if (t < KS_TAB_MAX && c == C_DETAIL && tabs[t].detail)
				put(b, " CAST(coalesce(e.detail, '%s') AS TEXT) AS detail,", tabs[t].detail);
			else if (has)
				put(b, " e.%s AS %s,", ks_cols[c].name, ks_cols[c].name);
			else
				put(b, " CAST(NULL AS %s) AS %s,", affinity(c), ks_cols[c].name);
		}
		put(b, " e.ts AS rowid FROM %s e", t == KS_TAB_MAX ? V1_TABLE :
		    t == KS_TAB_EXEC ? ex.name[k] : tabs[t].name);
		if (t == KS_TAB_EXEC)
			put(b, " LEFT JOIN binaries b ON b.id = e.bin");
	}

	/* INSERT INTO events: each row to its kind's table. */
	b = ins;
	put(b, "CREATE TRIGGER events_insert INSTEAD OF INSERT ON events BEGIN "
	    "INSERT INTO binaries(path, first) SELECT NEW.binary, NEW.ts WHERE NEW.kind = 'exec' "
	    "AND NEW.binary IS NOT NULL ON CONFLICT(path) DO UPDATE SET "
	    "first = min(first, excluded.first);");
	for (int t = 0; t < KS_TAB_MAX; t++) {
		int n = 0;

		put(b, " INSERT INTO %s(", tab_name(t));
		for (int i = 0, c; i < C_MAX; i++)
			if (stores(t, c = col_at(t, i)))
				put(b, "%s%s", n++ ? "," : "", phys(t, c));
		put(b, ") SELECT ");
		n = 0;
		for (int i = 0, c; i < C_MAX; i++) {
			if (!stores(t, c = col_at(t, i)))
				continue;
			if (t == KS_TAB_EXEC && c == C_BINARY)
				put(b, "%s(SELECT id FROM binaries WHERE path = NEW.binary)", n++ ? "," : "");
			else
				put(b, "%sNEW.%s", n++ ? "," : "", ks_cols[c].name);
		}
		if (t == KS_TAB_OTHER) {
			put(b, " WHERE NEW.kind NOT IN (");
			for (int o = 0, m = 0; o < KS_TAB_OTHER; o++)
				for (unsigned k = 1; ks_kind_name(k); k++)
					if ((int)ks_schema_tab(ks_kind_name(k)) == o)
						put(b, "%s'%s'", m++ ? "," : "", ks_kind_name(k));
			put(b, ");");
		} else {
			put(b, " WHERE NEW.kind IN ");
			kinds_of(b, t);
			put(b, ";");
		}
	}
	put(b, " END");

	b = del;
	put(b, "CREATE TRIGGER events_delete INSTEAD OF DELETE ON events BEGIN");
	for (int t = 0; t < KS_TAB_MAX + v1; t++)
		if (t != KS_TAB_EXEC)
			put(b, " DELETE FROM %s WHERE ts = OLD.ts;", t == KS_TAB_MAX ? V1_TABLE : tabs[t].name);
	for (int k = 0; k < ex.count; k++)
		put(b, " DELETE FROM %s WHERE ts = OLD.ts;", ex.name[k]);
	put(b, " END");

	/* Records are facts: UPDATE is refused when it runs (and, having a
	 * trigger, is an ordinary write statement to the hunts' checks). */
	b = upd;
	put(b, "CREATE TRIGGER events_update INSTEAD OF UPDATE ON events BEGIN "
	    "SELECT RAISE(ABORT, 'stored events are not updated'); END");
}

static void create_sql(struct buf *b, int t, const char *name)
{
	int n = 0;

	put(b, "CREATE TABLE IF NOT EXISTS %s(", name);
	for (int i = 0, c; i < C_MAX; i++)
		if (stores(t, c = col_at(t, i)))
			put(b, "%s%s %s", n++ ? ", " : "", phys(t, c),
			    t == KS_TAB_EXEC && c == C_BINARY ? "INTEGER" : col_type(c));
	put(b, ");");
}

static int view_apply(sqlite3 *db, bool v1);

/* The columns of @table under their version 2 names (bit per column), in
 * one query; *v2 tells whether it uses them (a column under a version 2
 * name that no column has now: tgid). */
static __u32 v2_columns(sqlite3 *db, const char *table, bool *v2)
{
	sqlite3_stmt *st;
	__u32 mask = 0;

	*v2 = false;
	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		for (int c = 0; name && c < C_MAX; c++)
			if (!strcmp(ks_cols[c].v2, name)) {
				mask |= 1u << c;
				*v2 |= ks_col_find(name) < 0;
			}
	}
	sqlite3_finalize(st);
	return mask;
}

static bool v2_names(sqlite3 *db, const char *table)
{
	bool v2;

	v2_columns(db, table, &v2);
	return v2;
}

/* Schema version 2 named the process tgid and the thread pid (events.h):
 * rename the columns of every table that still does, through temporary
 * names (pid -> tid, tgid -> pid). The view names them: it is dropped
 * first and written anew by view_apply(). A rename rewrites the schema
 * only, not the rows. */
static int migrate_v2_names(sqlite3 *db)
{
	const char *names[KS_SCHEMA_TABLES_MAX];
	int n = ks_schema_tables(db, names, KS_SCHEMA_TABLES_MAX), rc = SQLITE_OK;
	bool dropped = false;
	char sql[256];

	for (int t = 0; t < n && rc == SQLITE_OK; t++) {
		if (!v2_names(db, names[t]))
			continue;
		if (!dropped && (rc = sqlite3_exec(db, "DROP VIEW IF EXISTS events", NULL, NULL, NULL)))
			break;
		dropped = true;
		for (int pass = 0; pass < 2 && rc == SQLITE_OK; pass++)
			for (int c = 0; c < C_MAX && rc == SQLITE_OK; c++) {
				char tmp[64];

				if (!strcmp(ks_cols[c].v2, ks_cols[c].name))
					continue;
				snprintf(tmp, sizeof(tmp), "ks_v2_%s", ks_cols[c].name);
				if (!has_column(db, names[t], pass ? tmp : ks_cols[c].v2))
					continue;
				snprintf(sql, sizeof(sql), "ALTER TABLE %s RENAME COLUMN %s TO %s", names[t],
					 pass ? tmp : ks_cols[c].v2, pass ? ks_cols[c].name : tmp);
				rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
			}
	}
	return rc;
}

int ks_schema_compat_view(sqlite3 *db)
{
	static char sql[4096];
	struct buf b = { sql, 0, sizeof(sql) };
	bool v2;
	__u32 has = v2_columns(db, "events", &v2);

	if (!v2)
		return SQLITE_OK;
	put(&b, "CREATE TEMP VIEW events AS SELECT");
	for (int c = 0; c < C_MAX; c++) {
		if (has & (1u << c))
			put(&b, " %s AS %s,", ks_cols[c].v2, ks_cols[c].name);
		else
			put(&b, " CAST(NULL AS %s) AS %s,", affinity(c), ks_cols[c].name);
	}
	put(&b, " rowid AS rowid FROM main.events");
	return b.len < b.cap ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_TOOBIG;
}


/* Whether sqlite_master holds exactly @sql for @name. */
static bool same_sql(sqlite3 *db, const char *name, const char *sql)
{
	sqlite3_stmt *st;
	bool same = false;

	if (sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE name = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		same = !strcmp((const char *)sqlite3_column_text(st, 0), sql);
	sqlite3_finalize(st);
	return same;
}

int ks_schema_apply(sqlite3 *db)
{
	static char sql[8192];
	struct buf b = { sql, 0, sizeof(sql) };
	bool v1;
	int rc;

	/* Version 1 kept every row in table events: it becomes one arm of
	 * the view, emptied by retention and then dropped. Its binaries are
	 * interned so that first-seen times stay right. */
	if (exists(db, "table", "events")) {
		rc = sqlite3_exec(db, "ALTER TABLE events RENAME TO " V1_TABLE, NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	v1 = exists(db, "table", V1_TABLE);
	if ((rc = migrate_v3_accept_detail(db)) != SQLITE_OK)
		return rc;
	load_chunks(db);
	put(&b, "CREATE TABLE IF NOT EXISTS binaries(id INTEGER PRIMARY KEY, path TEXT NOT NULL "
	    "UNIQUE, first INTEGER);");
	for (int t = 0; t < KS_TAB_MAX; t++) {
		int n = 0;

		(void)n;
		create_sql(&b, t, tab_name(t));
	}
	put(&b, "CREATE INDEX IF NOT EXISTS ev_other_kind ON ev_other(kind);"
	    "CREATE TABLE IF NOT EXISTS clock(since INTEGER NOT NULL, boot_to_real INTEGER NOT NULL);"
	    "CREATE TABLE IF NOT EXISTS losses(ts INTEGER NOT NULL, kind TEXT NOT NULL,"
	    " lost INTEGER NOT NULL, unstored INTEGER NOT NULL);"
	    /* ids never reused: a reader deletes the ids it has read */
	    "CREATE TABLE IF NOT EXISTS late(id INTEGER PRIMARY KEY AUTOINCREMENT,"
	    " ts INTEGER NOT NULL);"
	    "CREATE TABLE IF NOT EXISTS ring_mark(ring TEXT PRIMARY KEY, pos INTEGER NOT NULL);");
	if (v1)
		put(&b, "INSERT OR IGNORE INTO binaries(path, first) SELECT binary, min(ts) FROM "
		    V1_TABLE " WHERE binary IS NOT NULL GROUP BY binary;");
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	load_chunks(db);
	if ((rc = migrate_v2_names(db)) != SQLITE_OK)
		return rc;

	/* Columns added since a table was created. */
	for (int t = 0, k = 0; t < KS_TAB_MAX; t += t != KS_TAB_EXEC || ++k >= ex.count) {
		const char *name = t == KS_TAB_EXEC ? ex.name[k] : tabs[t].name;

		for (int c = 0; c < C_MAX; c++) {
			if (!(stores(t, c)) || has_column(db, name, phys(t, c)))
				continue;
			snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", name,
				 phys(t, c), col_type(c));
			if ((rc = sqlite3_exec(db, sql, NULL, NULL, NULL)) != SQLITE_OK)
				return rc;
		}
	}
	return view_apply(db, v1);
}

/* Write the view and triggers for the tables there are now. */
static int view_apply(sqlite3 *db, bool v1)
{
	int rc;

	/* The view and triggers, rewritten only when they changed (a schema
	 * change makes every reader re-prepare). */
	static char vs[16384], is[16384], ds[1024], us[256];
	struct buf view = { vs, 0, sizeof(vs) }, ins = { is, 0, sizeof(is) },
		   del = { ds, 0, sizeof(ds) }, upd = { us, 0, sizeof(us) };

	view_sql(db, &view, &ins, &del, &upd, v1);
	if (view.len >= view.cap || ins.len >= ins.cap || del.len >= del.cap || upd.len >= upd.cap)
		return SQLITE_TOOBIG;
	if (same_sql(db, "events", vs) && same_sql(db, "events_insert", is) &&
	    same_sql(db, "events_delete", ds) && same_sql(db, "events_update", us))
		return SQLITE_OK;
	rc = sqlite3_exec(db, "DROP VIEW IF EXISTS events;", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, vs, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, is, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, ds, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, us, NULL, NULL, NULL);
	return rc;
}

int ks_schema_tables(sqlite3 *db, const char *names[], int max)
{
	int n = 0;

	/* a version 1 store not migrated yet (opened read-only) */
	if (exists(db, "table", "events")) {
		names[n++] = "events";
		return n;
	}
	load_chunks(db);
	for (int t = 0; t < KS_TAB_MAX && n < max; t++)
		if (t != KS_TAB_EXEC)
			names[n++] = tabs[t].name;
	for (int k = 0; k < ex.count && n < max; k++)
		names[n++] = ex.name[k];
	if (n < max && exists(db, "table", V1_TABLE))
		names[n++] = V1_TABLE;
	return n;
}

int ks_schema_exec_roll(sqlite3 *db)
{
	char sql[256];
	int rc;

	load_chunks(db);
	if (ex.count >= KS_EXEC_CHUNKS_MAX - 1)
		return SQLITE_FULL;	/* the view's UNION ALL has a limit: keep on */
	snprintf(sql, sizeof(sql), "CREATE INDEX IF NOT EXISTS %s_bin ON %s(bin)", current_chunk(),
		 current_chunk());
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	char name[24], create[2048];
	struct buf b = { create, 0, sizeof(create) };

	snprintf(name, sizeof(name), "ev_exec_%d", chunk_no(current_chunk()) + 1);
	create_sql(&b, KS_TAB_EXEC, name);
	rc = sqlite3_exec(db, create, NULL, NULL, NULL);
	return rc == SQLITE_OK ? ks_schema_apply(db) : rc;
}

/* Forget the binaries no exec row refers to any more: each of them was
 * interned with an exec since deleted (it is new again when it next
 * runs). Without this, table binaries kept every path the machine ever ran,
 * past retention and max_size (bench/soak.sh: temporary build and test
 * binaries of a busy host). One pass over the chunks' bin column (the
 * closed chunks' from their index), run when a chunk goes. */
static int prune_binaries(sqlite3 *db)
{
	static char sql[KS_EXEC_CHUNKS_MAX * 64 + 128];
	struct buf b = { sql, 0, sizeof(sql) };
	int arms = 0;

	load_chunks(db);
	put(&b, "DELETE FROM binaries WHERE id NOT IN (");
	for (int k = 0; k < ex.count; k++)
		if (exists(db, "table", ex.name[k]))
			put(&b, "%sSELECT bin FROM %s WHERE bin IS NOT NULL", arms++ ? " UNION ALL " : "",
			    ex.name[k]);
	put(&b, ")");
	if (!arms)
		return SQLITE_OK;	/* no chunk left: the next exec makes one */
	return b.len < b.cap ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_TOOBIG;
}

int ks_schema_prune(sqlite3 *db)
{
	char sql[128];
	int rc = SQLITE_OK, dropped = 0, chunks = 0;
	long long n;

	load_chunks(db);
	for (int k = 0; k + 1 < ex.count && rc == SQLITE_OK; k++) {
		sqlite3_stmt *st;

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM (SELECT 1 FROM %s LIMIT 1)", ex.name[k]);
		if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
			break;
		n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 1;
		sqlite3_finalize(st);
		if (n)
			continue;
		snprintf(sql, sizeof(sql), "DROP TABLE %s", ex.name[k]);
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		dropped++;
		chunks++;
	}
	/* a version 1 table names its binaries by path: keep them all */
	if (rc == SQLITE_OK && chunks && !exists(db, "table", V1_TABLE))
		rc = prune_binaries(db);
	if (rc == SQLITE_OK && exists(db, "table", V1_TABLE)) {
		sqlite3_stmt *st;

		if ((rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM (SELECT 1 FROM " V1_TABLE
					     " LIMIT 1)", -1, &st, NULL)) == SQLITE_OK) {
			n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 1;
			sqlite3_finalize(st);
			if (!n && (rc = sqlite3_exec(db, "DROP TABLE " V1_TABLE, NULL, NULL, NULL)) == SQLITE_OK)
				dropped++;
		}
	}
	return rc == SQLITE_OK && dropped ? ks_schema_apply(db) : rc;
}

int ks_schema_count(sqlite3 *db, void (*fn)(void *arg, const char *kind, long long n), void *arg)
{
	const char *names[KS_SCHEMA_TABLES_MAX];
	int n = ks_schema_tables(db, names, KS_SCHEMA_TABLES_MAX), rc = SQLITE_OK;
	char sql[160];

	for (int t = 0; t < n && rc == SQLITE_OK; t++) {
		const char *kind = NULL;

		for (int k = 0; k < KS_TAB_MAX; k++)
			if (!strncmp(names[t], tabs[k].name, strlen(tabs[k].name)) &&
			    strcmp(names[t], "ev_v1"))
				kind = tabs[k].kind;
		sqlite3_stmt *st;

		if (kind)
			snprintf(sql, sizeof(sql), "SELECT '%s', count(*) FROM %s", kind, names[t]);
		else
			snprintf(sql, sizeof(sql), "SELECT kind, count(*) FROM %s GROUP BY kind", names[t]);
		rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
			if (sqlite3_column_int64(st, 1))
				fn(arg, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
		sqlite3_finalize(st);
	}
	return rc;
}

int ks_schema_exec_current(sqlite3 *db, long long *rows, long long *newest)
{
	sqlite3_stmt *st;
	char sql[128];
	int rc;

	load_chunks(db);
	snprintf(sql, sizeof(sql), "SELECT count(*), coalesce(max(ts), 0) FROM %s", current_chunk());
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*rows = sqlite3_column_int64(st, 0);
		*newest = sqlite3_column_int64(st, 1);
	}
	return sqlite3_finalize(st);
}
