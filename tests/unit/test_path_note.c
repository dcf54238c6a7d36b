// SPDX-License-Identifier: MIT
/* test_path_note.c - every failed step of a trigger path carries a reason
 * (src/lib/shieldtest/shieldtest_run.c ks_path_note): the JSON of kshield test
 * writes "why": null for an empty one, which the matrix showed for "error"
 * results of audit and unload steps. */
#include <criterion/criterion.h>
#include <string.h>
#include "shieldtest_run.h"

Test(path_note, error_without_reason_gets_one)
{
	struct ks_path_result p = { 0 };

	ks_path_note(&p, "after unload", -5, "");
	cr_assert(p.why[0], "an error with no reason from the trigger left why empty");
	cr_assert(strstr(p.why, "after unload"), "%s", p.why);
	cr_assert(strstr(p.why, "error"), "%s", p.why);
	cr_assert(strstr(p.why, "gave no reason"), "%s", p.why);
}

Test(path_note, null_reason)
{
	struct ks_path_result p = { 0 };

	ks_path_note(&p, "audit mode", -1, NULL);
	cr_assert(p.why[0]);
}

Test(path_note, keeps_the_triggers_reason_and_the_first_one)
{
	struct ks_path_result p = { 0 };

	ks_path_note(&p, "could not run while enforcing", -2, "socket(AF_ALG): No such file");
	cr_assert(strstr(p.why, "socket(AF_ALG): No such file"), "%s", p.why);
	ks_path_note(&p, "after unload", -5, "later");
	cr_assert(!strstr(p.why, "later"), "%s", p.why);
}

Test(path_note, refused_says_so)
{
	struct ks_path_result p = { 0 };

	ks_path_note(&p, "after unload", KS_CASE_REFUSED, "");
	cr_assert(strstr(p.why, "refused"), "%s", p.why);
}
