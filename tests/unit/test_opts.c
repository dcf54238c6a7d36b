// SPDX-License-Identifier: MIT
/* test_opts.c - command option tables (src/cmd/cli.c, ks_opts_parse): the
 * one parser every command's arguments go through. Usage errors return 2
 * with a one-line message (kept by ks_err, also printed to stderr). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>
#include "array.h"
#include "cli.h"

static int helped;

static int help(void)
{
	helped++;
	return 0;
}

/* A command with each kind of option; the values of the last parse. */
static const char *store, *sites[3];
static bool force;
static int count, nsites;

static const struct ks_opt opts[] = {
	OPT_VAL("--store", &store), OPT_FLAG("--force", &force), OPT_INT("--count", &count),
	OPT_LIST("--sites", sites, &nsites, 3), OPT_END
};

/* Parse @words (NULL-terminated) as "demo"'s arguments, at most @maxpos
 * positional; returns ks_opts_parse's verdict, *rc and *npos. */
static bool parse(int maxpos, int *npos, int *rc, char **words)
{
	int argc = 0;

	store = NULL;
	force = false;
	count = -1;
	nsites = 0;
	helped = 0;
	ks_err_clear();
	*rc = -100;
	while (words[argc])
		argc++;
	return ks_opts_parse("demo", opts, argc, words, maxpos, npos, help, rc);
}

#define WORDS(...) ((char *[]){ __VA_ARGS__, NULL })

TestSuite(opts, .init = cr_redirect_stderr);

Test(opts, values_flags_numbers_and_positionals_in_order)
{
	char **w = WORDS("a.o", "--store", "/tmp/x.db", "--force", "--count", "-3", "b.o");
	int rc, npos;

	cr_assert(parse(2, &npos, &rc, w));
	cr_expect_str_eq(store, "/tmp/x.db");
	cr_expect(force);
	cr_expect_eq(count, -3);
	cr_expect_eq(npos, 2);
	cr_expect_str_eq(w[0], "a.o");
	cr_expect_str_eq(w[1], "b.o");
}

Test(opts, unknown_option_is_a_usage_error_naming_it)
{
	int rc, npos;

	cr_assert_not(parse(1, &npos, &rc, WORDS("--stor", "x")));
	cr_expect_eq(rc, 2);
	cr_expect(strstr(ks_errmsg(), "demo: unknown option '--stor'"), "%s", ks_errmsg());
	cr_assert_not(parse(1, &npos, &rc, WORDS("-x")));
	cr_expect(strstr(ks_errmsg(), "unknown option '-x'"), "%s", ks_errmsg());
}

Test(opts, missing_value_is_a_usage_error)
{
	int rc, npos;

	cr_assert_not(parse(1, &npos, &rc, WORDS("a.o", "--store")));
	cr_expect_eq(rc, 2);
	cr_expect(strstr(ks_errmsg(), "demo: --store needs a value"), "%s", ks_errmsg());
	/* The next word is the value even when it starts with a dash. */
	cr_assert(parse(1, &npos, &rc, WORDS("--store", "--force")));
	cr_expect_str_eq(store, "--force");
	cr_expect_not(force);
}

Test(opts, bad_number)
{
	static const char *const bad[] = { "", "12x", "x", "99999999999" };
	int rc, npos;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_not(parse(1, &npos, &rc, WORDS("--count", (char *)bad[i])), "'%s'", bad[i]);
		cr_expect_eq(rc, 2);
		cr_expect(strstr(ks_errmsg(), "--count takes a whole number"), "%s", ks_errmsg());
	}
}

Test(opts, repeatable_option_keeps_every_value_up_to_its_limit)
{
	int rc, npos;

	cr_assert(parse(0, &npos, &rc, WORDS("--sites", "a.json", "--force", "--sites", "b.json")));
	cr_expect_eq(nsites, 2);
	cr_expect_str_eq(sites[0], "a.json");
	cr_expect_str_eq(sites[1], "b.json");
	cr_assert_not(parse(0, &npos, &rc, WORDS("--sites", "1", "--sites", "2", "--sites", "3",
						  "--sites", "4")));
	cr_expect_eq(rc, 2);
	cr_expect(strstr(ks_errmsg(), "at most 3 --sites"), "%s", ks_errmsg());
}

Test(opts, equals_form)
{
	int rc, npos;

	cr_assert(parse(0, &npos, &rc, WORDS("--store=/a=b", "--count=7", "--sites=s1")));
	cr_expect_str_eq(store, "/a=b");
	cr_expect_eq(count, 7);
	cr_expect_eq(nsites, 1);
	cr_expect_str_eq(sites[0], "s1");
	cr_assert(parse(0, &npos, &rc, WORDS("--store=")));
	cr_expect_str_eq(store, "");
	/* A flag takes no value; an unknown name before '=' is still unknown. */
	cr_assert_not(parse(0, &npos, &rc, WORDS("--force=yes")));
	cr_expect(strstr(ks_errmsg(), "--force takes no value"), "%s", ks_errmsg());
	cr_assert_not(parse(0, &npos, &rc, WORDS("--nope=1")));
	cr_expect(strstr(ks_errmsg(), "unknown option '--nope=1'"), "%s", ks_errmsg());
}

Test(opts, too_many_positionals)
{
	int rc, npos;

	cr_assert_not(parse(1, &npos, &rc, WORDS("a", "b")));
	cr_expect_eq(rc, 2);
	cr_expect(strstr(ks_errmsg(), "demo: unexpected argument 'b'"), "%s", ks_errmsg());
}

Test(opts, help_anywhere_and_double_dash)
{
	int rc, npos;

	cr_assert_not(parse(1, &npos, &rc, WORDS("--force", "-h")));
	cr_expect_eq(rc, 0);
	cr_expect_eq(helped, 1);
	cr_assert_not(parse(1, &npos, &rc, WORDS("help")));
	cr_expect_eq(helped, 1);
	/* After "--" every word is positional, "help" and dashes included. */
	cr_assert(parse(3, &npos, &rc, WORDS("--", "--force", "help", "-")));
	cr_expect_not(force);
	cr_expect_eq(helped, 0);
	cr_expect_eq(npos, 3);
}
