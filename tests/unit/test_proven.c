// SPDX-License-Identifier: MIT
/* test_proven.c - proven summaries from matrix rows and the gate they give
 * (src/lib/trust/proven.c). The rows are a small hand-made fixture of the
 * shapes matrix/rows.jq writes; the end-to-end proof uses a real matrix run
 * (tests/test_fleet.c, fleet/gated_*). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include "err.h"
#include "proven.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define BID1 "4f61d8f6405b1c6eed15a7a3e2e27067394202d3"
#define BID2 "97fa9079df79554b820835bc2f9ba45988ac2999"

static const char *rows =
	"["
	/* proven: lsm on 6.1 build 1 */
	"{\"kernel\":\"6.1.0-47-cloud-amd64\",\"release\":\"6.1.0-47-cloud-amd64\",\"build_id\":\"" BID1 "\","
	" \"arch\":\"x86_64\",\"shield\":\"s\",\"variant\":\"lsm\",\"sha256\":\"" SHA_A "\",\"status\":\"pass\",\"check\":null},"
	/* the same again (a second row of that kernel): listed once */
	"{\"kernel\":\"6.1.0-47-cloud-amd64\",\"release\":\"6.1.0-47-cloud-amd64\",\"build_id\":\"" BID1 "\","
	" \"arch\":\"x86_64\",\"shield\":\"s\",\"variant\":\"lsm\",\"sha256\":\"" SHA_A "\",\"status\":\"pass\",\"check\":null},"
	/* fmod_ret failed on the same build (a nobpf boot): refused */
	"{\"kernel\":\"6.1.0-47-cloud-amd64+nobpf\",\"release\":\"6.1.0-47-cloud-amd64\",\"build_id\":\"" BID1 "\","
	" \"arch\":\"x86_64\",\"shield\":\"s\",\"variant\":\"fmod_ret\",\"sha256\":\"" SHA_A "\",\"status\":\"fail\","
	" \"error\":\"native went through\",\"check\":null},"
	/* partial: proves, with its uncovered path; unprotected, n/a: prove nothing */
	"{\"release\":\"6.12.111+deb12-cloud-amd64\",\"build_id\":\"" BID2 "\",\"shield\":\"s\",\"variant\":\"cgroup\","
	" \"sha256\":\"" SHA_A "\",\"status\":\"partial\",\"not_covered\":[\"pre-existing\"]},"
	"{\"release\":\"6.12.111+deb12-cloud-amd64\",\"build_id\":\"" BID2 "\",\"shield\":\"t\",\"variant\":null,"
	" \"sha256\":\"" SHA_B "\",\"status\":\"unprotected\"},"
	"{\"release\":\"6.12.111+deb12-cloud-amd64\",\"build_id\":\"" BID2 "\",\"shield\":\"t\",\"variant\":null,"
	" \"sha256\":\"" SHA_B "\",\"status\":\"n/a\"},"
	/* a pass from a matrix without build IDs: not bound, proves nothing */
	"{\"release\":\"6.12.111+deb12-cloud-amd64\",\"shield\":\"t\",\"variant\":\"lsm\","
	" \"sha256\":\"" SHA_B "\",\"status\":\"pass\"},"
	/* a matrix check and a boot error: no shield */
	"{\"release\":null,\"build_id\":\"" BID2 "\",\"shield\":null,\"check\":\"guard\",\"status\":\"pass\"},"
	"{\"kernel\":\"x\",\"shield\":null,\"status\":\"fail\",\"error\":\"package not available\"}"
	"]";

static json_object *summaries(void)
{
	json_object *res = json_tokener_parse(rows), *all;

	cr_assert(res);
	cr_assert_eq(ks_proven_from_results(res, 1000, &all), 0, "%s", ks_errmsg());
	json_object_put(res);
	return all;
}

static size_t len_of(json_object *s, const char *key)
{
	return json_object_array_length(json_object_object_get(s, key));
}

Test(proven, only_pass_and_partial_rows_bound_to_a_build_prove)
{
	json_object *all = summaries(), *s, *t;

	cr_assert_eq(json_object_object_length(all), 2, "shields s and t only (no check rows)");
	s = json_object_object_get(all, "s");
	t = json_object_object_get(all, "t");
	cr_expect_eq(len_of(s, "proven"), 2, "the duplicate pass row listed once, the partial row too");
	cr_expect_eq(len_of(s, "refused"), 1);
	cr_expect_eq(len_of(t, "proven"), 0, "n/a, unprotected and unbound rows prove nothing");
	cr_expect_eq(len_of(t, "refused"), 0);
	cr_expect(ks_proven_covers(s, SHA_A));
	cr_expect(!ks_proven_covers(s, SHA_B));
	cr_expect_eq(json_object_get_int(json_object_object_get(
		json_object_object_get(t, "rows"), "pass_unbound")), 1);
	json_object_put(all);
}

Test(proven, judge)
{
	json_object *all = summaries(), *s = json_object_object_get(all, "s");
	char why[512];

	cr_expect_eq(ks_proven_judge(s, SHA_A, "6.1.0-47-cloud-amd64", BID1, "lsm", why, sizeof(why)),
		     KS_GATE_PROVEN, "%s", why);
	/* the same release, another build of it: unproven */
	cr_expect_eq(ks_proven_judge(s, SHA_A, "6.1.0-47-cloud-amd64", BID2, "lsm", why, sizeof(why)),
		     KS_GATE_UNPROVEN, "%s", why);
	cr_expect(strstr(why, "unproven kernel"), "%s", why);
	/* another object than the one the matrix ran */
	cr_expect_eq(ks_proven_judge(s, SHA_B, "6.1.0-47-cloud-amd64", BID1, "lsm", why, sizeof(why)),
		     KS_GATE_UNPROVEN, "%s", why);
	/* a variant that failed there */
	cr_expect_eq(ks_proven_judge(s, SHA_A, "6.1.0-47-cloud-amd64", BID1, "fmod_ret", why,
				     sizeof(why)), KS_GATE_REFUSED, "%s", why);
	cr_expect(strstr(why, "refused kernel") && strstr(why, "native went through"), "%s", why);
	/* partial there: proven (enforcing refuses more than auditing), and
	 * the path it does not cover is named */
	cr_expect_eq(ks_proven_judge(s, SHA_A, "6.12.111+deb12-cloud-amd64", BID2, "cgroup", why,
				     sizeof(why)), KS_GATE_PROVEN, "%s", why);
	cr_expect(strstr(why, "not covered: pre-existing"), "%s", why);
	/* no summary, no build ID */
	cr_expect_eq(ks_proven_judge(NULL, SHA_A, "6.1.0-47-cloud-amd64", BID1, "lsm", why, sizeof(why)),
		     KS_GATE_UNPROVEN);
	cr_expect_eq(ks_proven_judge(s, SHA_A, "6.1.0-47-cloud-amd64", "", "lsm", why, sizeof(why)),
		     KS_GATE_UNPROVEN);
	json_object_put(all);
}

Test(proven, refused_without_a_variant_refuses_every_variant)
{
	const char *r = "[{\"release\":\"r\",\"build_id\":\"" BID1 "\",\"shield\":\"u\",\"variant\":null,"
			"\"status\":\"fail\",\"error\":\"baseline broken\"}]";
	json_object *res = json_tokener_parse(r), *all;
	char why[512];

	cr_assert_eq(ks_proven_from_results(res, 0, &all), 0);
	cr_expect_eq(ks_proven_judge(json_object_object_get(all, "u"), SHA_A, "r", BID1, "tp", why,
				     sizeof(why)), KS_GATE_REFUSED, "%s", why);
	json_object_put(res);
	json_object_put(all);
}

Test(proven, parse_round_trip_and_errors)
{
	json_object *all = summaries(), *back;
	const char *txt = json_object_to_json_string(json_object_object_get(all, "s"));

	cr_expect_eq(ks_proven_parse(txt, strlen(txt), "s.proven.json", &back), 0, "%s", ks_errmsg());
	json_object_put(back);
	cr_expect_eq(ks_proven_parse("{}", 2, "x.json", &back), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "x.json is not a proven summary") &&
		  strstr(ks_errmsg(), "kshield shield proven"), "%s", ks_errmsg());
	cr_expect_eq(ks_proven_parse("{\"kind\":\"kshield-proven\",\"shield\":\"s\",\"proven\":[]}",
				     52, "y.json", &back), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "\"refused\""), "%s", ks_errmsg());
	cr_expect_eq(ks_proven_parse("not json", 8, "z", &back), -EINVAL);
	{
		json_object *notarr = json_tokener_parse("{\"a\":1}");

		cr_expect_eq(ks_proven_from_results(notarr, 0, &back), -EINVAL);
		json_object_put(notarr);
	}
	json_object_put(all);
}

Test(proven, summary_path)
{
	char p[256];

	ks_proven_path("/x/cve-1.bpf.o", p, sizeof(p));
	cr_expect_str_eq(p, "/x/cve-1.proven.json");
	ks_proven_path("obj", p, sizeof(p));
	cr_expect_str_eq(p, "obj.proven.json");
}

/* Before a load the variant is unknown: "*" is proven where some variant
 * passed on this build and none failed, so the agent may load enforcing. */
Test(proven, any_variant_before_a_load)
{
	json_object *all = summaries(), *res, *mine;
	const char *ok =
		"[{\"release\":\"r\",\"build_id\":\"" BID2 "\",\"shield\":\"u\",\"variant\":\"tp\","
		" \"sha256\":\"" SHA_A "\",\"status\":\"pass\"}]";
	char why[256];

	/* lsm passed on BID1 but fmod_ret failed there: not before the load */
	cr_expect_eq(ks_proven_judge(json_object_object_get(all, "s"), SHA_A, "6.1.0-47-cloud-amd64",
				     BID1, KS_PROVEN_ANY_VARIANT, why, sizeof(why)),
		     KS_GATE_REFUSED, "%s", why);
	/* only a partial row on BID2: proven (cgroup) */
	cr_expect_eq(ks_proven_judge(json_object_object_get(all, "s"), SHA_A, "6.12.111+deb12-cloud-amd64",
				     BID2, KS_PROVEN_ANY_VARIANT, why, sizeof(why)),
		     KS_GATE_PROVEN, "%s", why);
	/* nothing on another build of that release */
	cr_expect_eq(ks_proven_judge(json_object_object_get(all, "s"), SHA_A, "6.12.111+deb12-cloud-amd64",
				     BID1, KS_PROVEN_ANY_VARIANT, why, sizeof(why)),
		     KS_GATE_UNPROVEN, "%s", why);
	res = json_tokener_parse(ok);
	cr_assert_eq(ks_proven_from_results(res, 1000, &mine), 0, "%s", ks_errmsg());
	cr_expect_eq(ks_proven_judge(json_object_object_get(mine, "u"), SHA_A, "r", BID2,
				     KS_PROVEN_ANY_VARIANT, why, sizeof(why)),
		     KS_GATE_PROVEN, "%s", why);
	cr_expect(strstr(why, "(tp)"), "%s", why);
	/* another object on that build: unproven */
	cr_expect_eq(ks_proven_judge(json_object_object_get(mine, "u"), SHA_B, "r", BID2,
				     KS_PROVEN_ANY_VARIANT, why, sizeof(why)),
		     KS_GATE_UNPROVEN, "%s", why);
	json_object_put(res);
	json_object_put(mine);
	json_object_put(all);
}
