// SPDX-License-Identifier: MIT
/* test_hunt_pg_sql.c - hunts rewritten for the fleet's PostgreSQL
 * (src/lib/fleet/hunt_pg.c), and the view they run over. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "events.h"
#include "hunt_pg.h"

static void rewrites(const char *in, const char *want, int want_params)
{
	int n = -1;
	char *out = ks_hunt_pg_translate(in, &n);

	cr_assert(out);
	cr_expect_str_eq(out, want, "from: %s", in);
	cr_expect_eq(n, want_params, "parameters of: %s", in);
	free(out);
}

Test(hunt_pg_sql, parameters_become_numbered)
{
	rewrites("SELECT * FROM events WHERE ts BETWEEN :since AND :until",
		 "SELECT * FROM events WHERE ts BETWEEN $1 AND $2", 2);
	rewrites("SELECT 1 WHERE x > :bytes", "SELECT 1 WHERE x > $4", 4);
	rewrites("SELECT 1", "SELECT 1", 0);
	/* inside a string literal, nothing changes */
	rewrites("SELECT ':since', 'binary' WHERE a = :until", "SELECT ':since', 'binary' WHERE a = $2", 2);
}

Test(hunt_pg_sql, binary_is_quoted_as_a_word_only)
{
	rewrites("SELECT binary FROM events WHERE binary = :binary",
		 "SELECT \"binary\" FROM events WHERE \"binary\" = $3", 3);
	rewrites("SELECT binary_x, xbinary, b.binary FROM t",
		 "SELECT binary_x, xbinary, b.\"binary\" FROM t", 0);
	rewrites("SELECT \"binary\" FROM t", "SELECT \"binary\" FROM t", 0);
}

Test(hunt_pg_sql, json_extract_compared_with_a_number_becomes_numeric)
{
	rewrites("WHERE json_extract(detail, '$.family') = 38",
		 "WHERE pg_temp.ks_json_num(detail, '$.family') = 38", 0);
	rewrites("WHERE json_extract(detail, '$.ret') <> -1 AND json_extract(detail, '$.x') >= 5",
		 "WHERE pg_temp.ks_json_num(detail, '$.ret') <> -1 AND pg_temp.ks_json_num(detail, '$.x') >= 5", 0);
	/* compared with text, or inside another name: untouched */
	rewrites("WHERE json_extract(detail, '$.proto') = 'tcp'",
		 "WHERE pg_temp.json_extract(detail, '$.proto') = 'tcp'", 0);
	rewrites("WHERE my_json_extract(d, '$.a') = 1", "WHERE my_json_extract(d, '$.a') = 1", 0);
	rewrites("WHERE json_extract(detail, '$.bytes_out') >= :bytes",
		 "WHERE pg_temp.json_extract(detail, '$.bytes_out') >= $4", 4);
}

/* The view has every event column, pid/tid read under the version 2
 * names for rows that carry tgid. */
Test(hunt_pg_sql, the_view_has_every_event_column)
{
	char *v = ks_hunt_pg_view_sql(), want[128];

	cr_assert(v);
	for (int c = 0; c < KS_COL_MAX; c++) {
		snprintf(want, sizeof(want), c == KS_COL_KIND ? ", kind" : "AS \"%s\"", ks_cols[c].name);
		cr_expect(strstr(v, want), "no column %s in the view", ks_cols[c].name);
	}
	cr_expect(strstr(v, "(CASE WHEN data ? 'tgid' THEN data->>'tgid' ELSE data->>'pid' END)::bigint AS \"pid\""),
		  "%s", v);
	cr_expect(strstr(v, "(CASE WHEN data ? 'tgid' THEN data->>'pid' ELSE data->>'tid' END)::bigint AS \"tid\""),
		  "%s", v);
	cr_expect(strstr(v, "(data->>'exec_id')::numeric AS \"exec_id\""), "%s", v);
	cr_expect(strstr(v, "CREATE OR REPLACE TEMP VIEW binaries"));
	free(v);
}

Test(hunt_pg_sql, instr_becomes_strpos)
{
	rewrites("WHERE instr(args, ' ') > 0 AND my_instr(x) = 1",
		 "WHERE strpos(args, ' ') > 0 AND my_instr(x) = 1", 0);
}
