// SPDX-License-Identifier: MIT
/* hunt.c - `kshield hunt`: look for signs of exploitation in the event
 * store. A hunt is one read-only SELECT; each hit that names an exec is
 * shown with its process ancestry.
 *
 *	kshield hunt list [--shields-dir DIR]
 *	kshield hunt NAME [--since T] [--until T] [--binary PATH] [--file FILE]
 *			  [--limit N] [--store PATH] [-j]
 *	kshield hunt --sql 'SELECT ...' [--since T] [--until T] [-j]
 *
 * Hunts come from two places: the built-in set below, and shields (their
 * metadata key `hunt`, read from each object in the shields directory and
 * each loaded shield's object). Queries may use the parameters :since,
 * :until (realtime ns) and :binary.
 *
 * Read-only is enforced three ways: the database is opened read-only, a
 * statement that sqlite3_stmt_readonly() says writes is refused, and an
 * authorizer refuses ATTACH/DETACH and PRAGMAs that change anything.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <dirent.h>
#include "array.h"
#include "cli.h"
#include "config.h"
#include "eventfmt.h"
#include "loader.h"
#include "meta.h"
#include "store.h"
#include "units.h"
#include "cidr.h"
#ifndef KSHIELD_STATIC
#include "hunt_pg.h"	/* --pg: fleet-wide over the collector's PostgreSQL */
#endif

struct hunt {
	const char *name;
	const char *summary;
	const char *sql;
	bool needs_file;	/* matched in C against --file's IPs/CIDRs */
};

/* exfil: loopback traffic is the machine talking to itself (databases,
 * proxies, backups to a local agent) and would drown the hunt, so it is left
 * out; --include-loopback puts it back (tests, labs on one machine). */
#define EXFIL_NOT_LOOPBACK \
	"AND raddr NOT LIKE '127.%' AND raddr <> '::1' AND raddr NOT LIKE '::ffff:127.%'"
#define EXFIL_SQL(FILTER) \
	"WITH big AS (SELECT * FROM events WHERE kind = 'flow' AND ts BETWEEN :since AND :until " \
	"AND CAST(json_extract(detail, '$.bytes_out') AS BIGINT) >= :bytes " FILTER "), " \
	"newest AS (SELECT json_extract(detail, '$.flow') AS flow, max(ts) AS ts FROM big GROUP BY 1) " \
	"SELECT b.* FROM big b JOIN newest n ON b.ts = n.ts AND json_extract(b.detail, '$.flow') = n.flow " \
	"ORDER BY CAST(json_extract(b.detail, '$.bytes_out') AS BIGINT) DESC"
static const char exfil_any_sql[] = EXFIL_SQL("");

static const struct hunt builtins[] = {
	{ "new-binaries", "binaries run for the first time in the window",
	  /* binaries(path, first) keeps each binary's first exec */
	  "SELECT * FROM events WHERE kind = 'exec' AND ts IN (SELECT first FROM binaries "
	  "WHERE first BETWEEN :since AND :until) ORDER BY ts", false },
	{ "binary", "runs of one binary (--binary PATH) in the window",
	  "SELECT * FROM events WHERE binary = :binary AND ts BETWEEN :since AND :until ORDER BY ts", false },
	{ "c2-connections", "connections to or from addresses in --file (IPs and CIDRs, one a line)",
	  "SELECT * FROM events WHERE kind IN ('connect', 'accept') AND ts BETWEEN :since AND :until "
	  "ORDER BY ts", true },
	{ "gained-root", "processes whose uid/euid/capabilities rose without a set-id exec",
	  "SELECT * FROM events WHERE kind = 'privilege' AND ts BETWEEN :since AND :until ORDER BY ts", false },
	{ "af-alg", "AF_ALG users: sockets and binds (algorithm type and name)",
	  "SELECT * FROM events WHERE ts BETWEEN :since AND :until AND (kind = 'alg_bind' OR "
	  "(kind = 'socket' AND json_extract(detail, '$.family') = 38)) ORDER BY ts", false },
	{ "userns", "user namespaces created by unprivileged processes",
	  "SELECT * FROM events WHERE kind = 'userns' AND ts BETWEEN :since AND :until ORDER BY ts", false },
	{ "odd-sockets", "sockets of families exploits favour (AF_PACKET, AF_VSOCK, netfilter netlink, ...)",
	  "SELECT * FROM events WHERE kind = 'socket' AND ts BETWEEN :since AND :until ORDER BY ts", false },
	{ "bpf-loads", "BPF programs loaded by anything but the kshield agent",
	  "SELECT * FROM events WHERE kind = 'bpf' AND ts BETWEEN :since AND :until ORDER BY ts", false },
	/* The newest record of each flow is its total (interim records are
	 * cumulative): the big ones first, then the newest of each (a
	 * correlated NOT EXISTS took minutes over 200k flows); bytes are
	 * payload. */
	{ "exfil", "connections that sent more than --bytes (50M) to a non-loopback address "
	  "(--include-loopback: any), biggest first", EXFIL_SQL(EXFIL_NOT_LOOPBACK), false },
	{ "shield-hits", "every shield hit",
	  "SELECT * FROM events WHERE kind = 'shield' AND ts BETWEEN :since AND :until ORDER BY ts", false },
	{ 0, 0, 0, false }
};

/* ---- shield hunts ---- */

struct shield_hunt {
	char name[KS_NAME_LEN + 8];
	char summary[256];
	char *sql;
};

static void add_shield_hunt(struct shield_hunt *out, int *n, int max, const char *path)
{
	struct ks_meta meta;
	const char *name;
	char *sql = NULL;

	if (*n >= max || ks_meta_read(path, &meta))
		return;
	name = ks_meta_get(&meta, "name");
	if (name && !ks_meta_hunt_sql(&meta, &sql)) {
		for (int i = 0; i < *n; i++)
			if (!strcmp(out[i].name, name))
				goto done;
		snprintf(out[*n].name, sizeof(out[*n].name), "%s", name);
		snprintf(out[*n].summary, sizeof(out[*n].summary), "shield %s: %s", name,
			 ks_meta_get(&meta, "summary") ?: "its hunt query");
		out[*n].sql = sql;
		sql = NULL;
		(*n)++;
	}
done:
	free(sql);
	ks_meta_free(&meta);
}

/* Hunts of every shield in @dir and of every loaded shield. */
static int shield_hunts(const char *dir, struct shield_hunt *out, int max)
{
	struct ks_shield_state *loaded = NULL;
	char path[PATH_MAX];
	int n = 0, nl = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 6 && !strcmp(de->d_name + len - 6, ".bpf.o")) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			add_shield_hunt(out, &n, max, path);
		}
	}
	if (d)
		closedir(d);
	if (!ks_shield_list(&loaded, &nl))
		for (int i = 0; i < nl; i++)
			add_shield_hunt(out, &n, max, loaded[i].cfg.object);
	free(loaded);
	return n;
}

/* ---- running a query read-only ---- */

static int deny_writes(void *ctx, int action, const char *a, const char *b, const char *c,
		       const char *d)
{
	(void)ctx; (void)b; (void)c; (void)d;
	if (action == SQLITE_ATTACH || action == SQLITE_DETACH)
		return SQLITE_DENY;
	/* DDL, refused here because on the events view SQLite would reject
	 * it with a message about views before saying it writes */
	if ((action >= SQLITE_CREATE_INDEX && action <= SQLITE_DROP_VIEW &&
	     action != SQLITE_DELETE) || action == SQLITE_ALTER_TABLE)
		return SQLITE_DENY;
	/* PRAGMA x is a read; PRAGMA x = v (b set) may change the connection */
	if (action == SQLITE_PRAGMA && b)
		return SQLITE_DENY;
	(void)a;
	return SQLITE_OK;
}

struct hunt_args {
	__s64 since, until;
	const char *binary;
	long long bytes;
	struct ks_cidr *cidrs;
	int ncidrs;
	long long limit;
};

static int run_query(sqlite3 *db, const char *name, const char *sql, const struct hunt_args *h)
{
	struct json_object *hits = json_output ? json_object_new_array() : NULL;
	const char *tail;
	sqlite3_stmt *st;
	long long n = 0;
	int rc, i, err = 0;

	sqlite3_set_authorizer(db, deny_writes, NULL);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
	if (rc != SQLITE_OK) {
		json_object_put(hits);
		if (rc == SQLITE_AUTH)
			return ks_err(-EPERM, "hunt %s: refused: %s (hunts are read-only)", name,
				      sqlite3_errmsg(db));
		return ks_err(-EINVAL, "hunt %s: %s", name, sqlite3_errmsg(db));
	}
	while (tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == ';'))
		tail++;
	if (!st || (tail && *tail)) {
		sqlite3_finalize(st);
		json_object_put(hits);
		return ks_err(-EINVAL, "hunt %s: exactly one SQL statement, please", name);
	}
	if (!sqlite3_stmt_readonly(st)) {
		sqlite3_finalize(st);
		json_object_put(hits);
		return ks_err(-EPERM, "hunt %s: refused: the statement would write to the store "
			      "(hunts are read-only)", name);
	}
	if ((i = sqlite3_bind_parameter_index(st, ":since")))
		sqlite3_bind_int64(st, i, h->since);
	if ((i = sqlite3_bind_parameter_index(st, ":until")))
		sqlite3_bind_int64(st, i, h->until);
	if ((i = sqlite3_bind_parameter_index(st, ":binary"))) {
		if (!h->binary) {
			sqlite3_finalize(st);
			json_object_put(hits);
			return ks_err(-EINVAL, "hunt %s needs --binary PATH", name);
		}
		sqlite3_bind_text(st, i, h->binary, -1, SQLITE_STATIC);
	}
	if ((i = sqlite3_bind_parameter_index(st, ":bytes")))
		sqlite3_bind_int64(st, i, h->bytes);
	int exec_col = -1, raddr_col = -1, laddr_col = -1;
	for (i = 0; i < sqlite3_column_count(st); i++) {
		const char *c = sqlite3_column_name(st, i);

		if (!strcmp(c, "exec_id"))
			exec_col = i;
		else if (!strcmp(c, "raddr"))
			raddr_col = i;
		else if (!strcmp(c, "laddr"))
			laddr_col = i;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && (h->limit <= 0 || n < h->limit)) {
		struct json_object *chain = NULL;

		if (h->cidrs && !ks_cidr_match((const char *)sqlite3_column_text(st, raddr_col), h->cidrs,
					  h->ncidrs) &&
		    !ks_cidr_match((const char *)sqlite3_column_text(st, laddr_col), h->cidrs, h->ncidrs))
			continue;
		if (exec_col >= 0 && sqlite3_column_type(st, exec_col) != SQLITE_NULL)
			chain = ks_ancestry(db, (__u64)sqlite3_column_int64(st, exec_col));
		if (hits) {
			struct json_object *o = ks_row_json(st);

			json_object_object_add(o, "ancestry", chain ? chain : json_object_new_array());
			json_object_array_add(hits, o);
		} else {
			ks_row_print(st, n == 0);
			if (exec_col >= 0)
				ks_ancestry_print(chain, "      ");
			json_object_put(chain);
		}
		n++;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		err = ks_err(-EIO, "hunt %s: %s", name, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (err) {
		json_object_put(hits);
		return err;
	}
	if (hits) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "hunt", json_object_new_string(name));
		json_object_object_add(o, "count", json_object_new_int64(n));
		json_object_object_add(o, "hits", hits);
		ks_json_print(o);
	} else {
		printf("%s: %lld hit%s\n", name, n, n == 1 ? "" : "s");
	}
	return 0;
}

static int hunt_help(void)
{
	fprintf(stderr,
		"Usage: kshield hunt list [--shields-dir DIR]\n"
		"       kshield hunt NAME [--since T] [--until T] [--binary PATH] [--file FILE]\n"
		"                         [--bytes SIZE] [--include-loopback] [--limit N] [--store PATH] [-j]\n"
		"       kshield hunt --sql 'SELECT ...' [--since T] [--until T] [-j]\n"
		"       kshield hunt --pg CONNINFO NAME|--sql SQL   fleet-wide, grouped by host\n"
		"Queries run read-only over table events (see kshield(8)); :since, :until,\n"
		":binary and :bytes (default 50M) are bound from the options. Hits that name an exec show\n"
		"their process ancestry. exfil leaves out loopback peers (127/8, ::1) unless\n"
		"--include-loopback is given.\n");
	return 0;
}

#ifndef KSHIELD_STATIC
void ks_pg_host_row(const char *host, long long hits, long long first_ts, long long last_ts,
		    void *ctx)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "hits", json_object_new_int64(hits));
	json_object_object_add(o, "first_ts", json_object_new_int64(first_ts));
	json_object_object_add(o, "last_ts", json_object_new_int64(last_ts));
	json_object_array_add(ctx, o);
}

/* Per-host hit counts of a fleet-wide hunt; drops @hosts. */
static void print_pg_hosts(const char *name, struct json_object *hosts)
{
	size_t n = json_object_array_length(hosts);

	if (json_output) {
		ks_json_print(hosts);
		return;
	}
	ks_pg_hosts_print(hosts);
	printf("hunt %s: %zu hosts\n", name, n);
	json_object_put(hosts);
}

void ks_pg_hosts_print(struct json_object *hosts)
{
	printf("%-32s %10s\n", "HOST", "HITS");
	for (size_t i = 0; i < json_object_array_length(hosts); i++) {
		struct json_object *o = json_object_array_get_idx(hosts, i);

		printf("%-32s %10lld\n", json_object_get_string(json_object_object_get(o, "host")),
		       (long long)json_object_get_int64(json_object_object_get(o, "hits")));
	}
}
#endif

int do_hunt(int argc, char **argv)
{
	const char *name = NULL, *sql = NULL, *store = NULL, *since = NULL, *until = NULL,
		   *file = NULL, *dir = NULL, *limit = NULL, *pg = NULL, *bytes = NULL;
	bool loopback = false;
	struct shield_hunt sh[64];
	struct hunt_args h = { .since = 0, .until = INT64_MAX, .limit = 1000, .bytes = 50 << 20 };
	struct ks_config cfg;
	struct ks_store *s;
	const struct hunt *b;
	int nsh, err, npos;
	const struct ks_opt opts[] = {
		OPT_VAL("--sql", &sql), OPT_VAL("--store", &store), OPT_VAL("--since", &since),
		OPT_VAL("--until", &until), OPT_VAL("--file", &file), OPT_VAL("--binary", &h.binary),
		OPT_VAL("--shields-dir", &dir), OPT_VAL("--limit", &limit), OPT_VAL("--pg", &pg),
		OPT_VAL("--bytes", &bytes), OPT_FLAG("--include-loopback", &loopback), OPT_END,
	};

	if (!ks_opts_parse("hunt", opts, argc, argv, 1, &npos, hunt_help, &err))
		return err;
	name = npos ? argv[0] : NULL;
	if (!name && !sql)
		return hunt_help(), 2;
	if (loopback && (!name || strcmp(name, "exfil")))
		return ks_usage("--include-loopback is an option of 'hunt exfil' only");
	if (since && (err = ks_time_parse(since, "--since", &h.since)))
		return ks_report(err);
	if (until && (err = ks_time_parse(until, "--until", &h.until)))
		return ks_report(err);
	if (bytes) {
		__u64 v;

		if ((err = ks_size_parse(bytes, "--bytes", &v)))
			return ks_report(err);
		h.bytes = v;
	}
	if (limit) {
		unsigned long long v;

		if ((err = ks_parse_u64(limit, "--limit", &v)))
			return ks_report(err);
		h.limit = v;
	}
	for (b = builtins; name && b->name && strcmp(b->name, name); b++)
		;
	if (dir)	/* the hits of its shields are named by their objects too */
		ks_shield_args_add_dir(dir);
	/* Shields' hunts are read from their objects only when needed. */
	nsh = 0;
	if (!sql && !b->name) {
		ks_config_defaults(&cfg);
		if (ks_config_load(&cfg, KS_CONFIG_DEFAULT, false))
			ks_config_defaults(&cfg);
		nsh = shield_hunts(dir ? dir : cfg.shields_dir, sh, 64);
	}

	if (name && !strcmp(name, "list") && !sql) {
		struct json_object *arr = json_output ? json_object_new_array() : NULL;

		for (int pass = 0; pass < 2; pass++) {
			int n = pass ? nsh : (int)ARRAY_SIZE(builtins) - 1;

			for (int i = 0; i < n; i++) {
				const char *hn = pass ? sh[i].name : builtins[i].name;
				const char *hs = pass ? sh[i].summary : builtins[i].summary;

				if (arr) {
					struct json_object *o = json_object_new_object();

					json_object_object_add(o, "name", json_object_new_string(hn));
					json_object_object_add(o, "source", json_object_new_string(
						pass ? "shield" : "builtin"));
					json_object_object_add(o, "summary", json_object_new_string(hs));
					json_object_object_add(o, "sql", json_object_new_string(
						pass ? sh[i].sql : builtins[i].sql));
					json_object_array_add(arr, o);
				} else {
					printf("%-18s %s\n", hn, hs);
				}
			}
		}
		if (arr)
			ks_json_print(arr);
		for (int i = 0; i < nsh; i++)
			free(sh[i].sql);
		return 0;
	}

	if (!sql) {
		for (b = builtins; b->name && strcmp(b->name, name); b++)
			;
		if (b->name) {
			sql = b->sql;
			if (loopback && !strcmp(b->name, "exfil"))
				sql = exfil_any_sql;
			if (b->needs_file && !file)
				return ks_usage("hunt %s needs --file FILE (IPs and CIDRs, one a line)", name);
		} else {
			for (int i = 0; i < nsh && !sql; i++)
				if (!strcmp(sh[i].name, name))
					sql = sh[i].sql;
			if (!sql)
				return ks_usage("no hunt named '%s' (see 'kshield hunt list')", name);
		}
	}
	if (file && (err = ks_cidrs_load(file, &h.cidrs, &h.ncidrs)))
		return ks_report(err);
#ifndef KSHIELD_STATIC
	if (pg) {
		char *arr = file ? ks_cidrs_pg_array(h.cidrs, h.ncidrs) : NULL;

		struct json_object *hosts = json_object_new_array();
		const struct ks_hunt_pg_opts ho = { .since = h.since, .until = h.until,
						    .binary = h.binary, .bytes = h.bytes,
						    .cidrs = arr, .limit = h.limit };

		err = ks_hunt_pg(pg, name ? name : "sql", sql, ks_pg_host_row, hosts, &ho);
		free(arr);
		if (!err)
			print_pg_hosts(name ? name : "sql", hosts);
		else
			json_object_put(hosts);
		s = NULL;
	} else
#endif
	err = ks_store_open(&s, ks_store_path(store), KS_STORE_RDONLY);
	if (!err && s) {
		err = run_query(ks_store_db(s), name ? name : "sql", sql, &h);
		ks_store_close(s);
	}
	for (int i = 0; i < nsh; i++)
		free(sh[i].sql);
	free(h.cidrs);
	return err ? ks_report(err) : 0;
}
