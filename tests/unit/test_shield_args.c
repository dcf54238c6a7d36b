// SPDX-License-Identifier: MIT
/* test_shield_args.c - shield event arguments by name, from the tables the
 * shield objects carry (KSHIELD_ARGS, bpf/sdk/shield.bpf.h; read by
 * src/lib/events/argtab.c): every bundled object's tables parse and are
 * well formed, every (shield, hook) the bundled shields report is named
 * by its own object, decoding is byte for byte what the central table of
 * events.c made of the same words (tests/unit/data/shield-args.expected,
 * captured before it went), each format's text and JSON, the fallback for
 * pairs no object names, a shield found by its object when a reader first
 * needs it, and a record's arguments named after a trip through a real
 * store file. Needs the built objects (make; KS_TEST_BUILD/shields). */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/io_uring.h>
#include <json-c/json.h>
#include "err.h"
#include "events.h"
#include "argfmt.h"
#include "meta.h"
#include "store.h"

#ifndef KS_TEST_BUILD
#define KS_TEST_BUILD "build"
#endif
#define OBJS KS_TEST_BUILD "/shields"

/* Learn every bundled shield's object; how many. */
static int learn_all(void)
{
	glob_t g;
	int n = 0;

	cr_assert_eq(glob(OBJS "/*.bpf.o", 0, NULL, &g), 0, "no objects in " OBJS ": run make");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct ks_meta m;

		cr_assert_eq(ks_meta_read(g.gl_pathv[i], &m), 0, "%s", ks_errmsg());
		cr_expect_eq(ks_meta_args_learn(&m), 0, "%s", ks_errmsg());
		ks_meta_free(&m);
		n++;
	}
	globfree(&g);
	return n;
}

static void setup(void)
{
	cr_assert_geq(learn_all(), 16);
}

TestSuite(shield_args, .init = setup);

static const struct ks_shield_args_def *find(const char *shield, const char *hook, __u64 a0,
					     __u64 a1, __u64 a2, __u64 a3)
{
	const __u64 a[KS_SHIELD_ARGS] = { a0, a1, a2, a3 };

	return ks_shield_args_find(shield, hook, a);
}

/* The named arguments of (shield, hook, a0..a3) as compact JSON (static). */
static const char *named(const char *shield, const char *hook, __u64 a0, __u64 a1, __u64 a2,
			 __u64 a3)
{
	static char out[512];
	const __u64 a[KS_SHIELD_ARGS] = { a0, a1, a2, a3 };
	struct json_object *o = ks_shield_args_json(ks_shield_args_find(shield, hook, a), a);

	snprintf(out, sizeof(out), "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

/* The name in KSHIELD_NAME("...") of @path; "" when none. */
static void name_of(const char *path, char *name, size_t n, bool *walks)
{
	FILE *f = fopen(path, "r");
	char line[512];

	name[0] = '\0';
	*walks = false;
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "KSHIELD_NAME(\"");

		if (p && !*name)
			snprintf(name, n, "%.*s", (int)strcspn(p + 14, "\""), p + 14);
		*walks |= strstr(line, "#include \"nlwalk.bpf.h\"") != NULL;
	}
	if (f)
		fclose(f);
}

/* 1. Every bundled object's entries name what they show, once; values
 * only for enum and flags, which have them; one hook has at most one
 * plain entry (so the object's order never matters). */
Test(shield_args, u01_every_objects_tables_are_well_formed)
{
	glob_t g;
	int total = 0;

	cr_assert_eq(glob("shields/*/shield.bpf.c", 0, NULL, &g), 0, "run from the top directory");
	for (size_t s = 0; s < g.gl_pathc; s++) {
		const struct ks_shield_args_def *defs;
		char name[64];
		bool walks;
		int n;

		name_of(g.gl_pathv[s], name, sizeof(name), &walks);
		n = ks_shield_args_of(name, &defs);
		cr_expect_gt(n, 0, "%s names no arguments", name);
		total += n;
		for (int i = 0; i < n; i++) {
			const struct ks_shield_args_def *d = &defs[i];
			int shown = 0;

			cr_assert(d->hook && *d->hook, "%s entry %d has no hook", name, i);
			cr_expect_str_eq(d->shield, name);
			cr_expect(d->when == KS_ARG_ANY || (d->when >= 0 && d->when < KS_SHIELD_ARGS));
			for (int a = 0; a < KS_SHIELD_ARGS; a++) {
				const struct ks_arg_def *x = &d->arg[a];

				if (x->fmt == KS_ARG_NONE) {
					cr_expect_null(x->name);
					continue;
				}
				shown++;
				cr_expect(x->name && *x->name, "%s/%s arg %d has no name", name,
					  d->hook, a);
				cr_expect(strcmp(x->name, "args") && strcmp(x->name, "arg"));
				cr_expect((x->fmt == KS_ARG_ENUM || x->fmt == KS_ARG_FLAGS) ==
					  (x->vals != NULL), "%s/%s %s: values only for ENUM and FLAGS",
					  name, d->hook, x->name);
				for (int b = 0; b < a; b++)
					cr_expect(!d->arg[b].name || strcmp(d->arg[b].name, x->name),
						  "%s/%s: %s twice", name, d->hook, x->name);
			}
			cr_expect_gt(shown, 0, "%s/%s shows nothing", name, d->hook);
			for (int j = 0; j < i; j++)
				cr_expect(strcmp(defs[j].hook, d->hook) || d->when != KS_ARG_ANY ||
					  defs[j].when != KS_ARG_ANY || d->fallback != defs[j].fallback,
					  "%s/%s: two plain entries", name, d->hook);
		}
	}
	globfree(&g);
	cr_expect_gt(total, 90);
	for (int a = 0; a < KS_SHIELD_ARGS; a++)
		cr_expect_eq(ks_shield_args_generic.arg[a].fmt, KS_ARG_UINT);
}

/* The hook names of every ks_refuse("...") and ks_kill("...") in @path. */
static int hooks_of(const char *path, char hooks[][64], int max)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int n = 0;

	cr_assert(f, "cannot read %s", path);
	while (fgets(line, sizeof(line), f) && n < max) {
		char *p = strstr(line, "ks_refuse(\"");

		if (!p)
			p = strstr(line, "ks_kill(\"");
		if (!p || strstr(line, "#define"))
			continue;
		p = strchr(p, '"') + 1;
		snprintf(hooks[n], 64, "%.*s", (int)(strchr(p, '"') - p), p);
		n++;
	}
	fclose(f);
	return n;
}

/* 2. Every (shield, hook) a bundled shield reports, its own calls and the
 * netlink walker's when it includes bpf/sdk/nlwalk.bpf.h (and so its
 * nlwalk_uring.bpf.h), has an entry of its own in its object: nothing
 * the repository ships falls back to arg0..arg3 or to a header's
 * fallback. */
Test(shield_args, u02_every_bundled_shield_and_hook_is_named)
{
	char nlw[16][64], own[32][64];
	int nnlw = hooks_of("bpf/sdk/nlwalk.bpf.h", nlw, 16), checked = 0;
	glob_t g;

	nnlw += hooks_of("bpf/sdk/nlwalk_uring.bpf.h", nlw + nnlw, 16 - nnlw);
	cr_assert_geq(nnlw, 5, "run from the repository's top directory");
	cr_assert_eq(glob("shields/*/shield.bpf.c", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char name[64];
		bool walks;
		int n;

		name_of(g.gl_pathv[i], name, sizeof(name), &walks);
		cr_assert(*name, "%s: no KSHIELD_NAME", g.gl_pathv[i]);
		n = hooks_of(g.gl_pathv[i], own, 32);
		for (int h = 0; walks && h < nnlw && n < 32; h++)
			snprintf(own[n++], 64, "%s", nlw[h]);
		for (int h = 0; h < n; h++, checked++) {
			const struct ks_shield_args_def *d = find(name, own[h], 0, 0, 0, 0);

			cr_expect(d != &ks_shield_args_generic && !d->fallback &&
				  !strcmp(d->shield, name), "%s: %s/%s has no entry", g.gl_pathv[i],
				  name, own[h]);
		}
	}
	globfree(&g);
	cr_expect_gt(checked, 40);
}

/* 2b. Byte for byte what the central table made of the same words: the
 * JSON of detail.arg and the summary's name=value text, for each line of
 * the data captured before the table went (865 lines, 75 pairs, the 16
 * bundled shields; unknown values, every named value and bit, a hook the
 * shield does not name). */
Test(shield_args, u02b_objects_decode_as_the_old_table_did)
{
	FILE *f = fopen("tests/unit/data/shield-args.expected", "r");
	char line[4096];
	int n = 0, same = 0;

	cr_assert(f, "run from the repository's top directory");
	while (fgets(line, sizeof(line), f)) {
		char *save, *shield = strtok_r(line, "\t", &save), *hook = strtok_r(NULL, "\t", &save);
		char *words = strtok_r(NULL, "\t", &save), *json = strtok_r(NULL, "\t", &save);
		char *str = strtok_r(NULL, "\n", &save), got[1024];
		unsigned long long w[4];
		const struct ks_shield_args_def *d;
		struct json_object *o;
		__u64 a[KS_SHIELD_ARGS];

		cr_assert(shield && hook && words && json, "line %d malformed", n + 1);
		cr_assert_eq(sscanf(words, "%llu,%llu,%llu,%llu", &w[0], &w[1], &w[2], &w[3]), 4);
		for (int i = 0; i < KS_SHIELD_ARGS; i++)
			a[i] = w[i];
		d = ks_shield_args_find(shield, hook, a);
		o = ks_shield_args_json(d, a);
		ks_shield_args_str(d, a, got, sizeof(got));
		n++;
		if (!strcmp(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), json) &&
		    !strcmp(got, str ? str : ""))
			same++;
		else
			cr_expect_fail("%s %s %s: %s / %s, the table gave %s / %s", shield, hook, words,
				       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), got,
				       json, str ? str : "");
		json_object_put(o);
	}
	fclose(f);
	cr_log_info("%d of %d sample hits decoded as before", same, n);
	cr_expect_eq(n, 865);
	cr_expect_eq(same, n);
}

/* 3. The examples the issue asked about, one per format. */
Test(shield_args, u03_real_events_read_by_name)
{
	/* Copy Fail's bind refused because the mark could not be stored */
	cr_expect_str_eq(named("cve-2026-31431", "socket_bind", 38, 88,
			       0x65636e6568747561ULL /* "authence" */, 1),
			 "{\"family\":\"AF_ALG\",\"addrlen\":88,\"name\":\"authence\","
			 "\"fail_closed\":\"mark_not_stored\"}");
	cr_expect_str_eq(named("cve-2026-31431", "sys_enter_splice", 38, 7, 1, 2),
			 "{\"family\":\"AF_ALG\",\"fd\":7,\"call\":\"sendfile\",\"step\":\"splice\"}");
	cr_expect_str_eq(named("cve-2026-31431", "io_uring_submit", 38, 30, 0, 2),
			 "{\"family\":\"AF_ALG\",\"opcode\":\"IORING_OP_SPLICE\",\"step\":\"splice\"}");
	cr_expect_str_eq(named("cve-2021-3156", "sched_process_exec", 3, 1, 1, 0),
			 "{\"argv_index\":3,\"shell\":true,\"odd_backslashes\":true}");
	cr_expect_str_eq(named("cve-2026-43500", "socket_create", 33, 2 | 02000000, 0, 0),
			 "{\"family\":\"AF_RXRPC\",\"type\":\"SOCK_DGRAM|SOCK_CLOEXEC\",\"protocol\":0,"
			 "\"kern\":false}");
	cr_expect_str_eq(named("cve-2022-0185", "sys_enter_fsconfig", 4000, 120, 1, 0),
			 "{\"data_size\":4000,\"param_len\":120,\"cmd\":\"FSCONFIG_SET_STRING\"}");
	cr_expect_str_eq(named("cve-2024-0582", "sys_enter_mmap", SYS_mmap, 0x80000000, 3, 0),
			 "{\"syscall\":\"mmap\",\"offset\":\"0x80000000\","
			 "\"prot\":\"PROT_READ|PROT_WRITE\"}");
	/* the kernel's dev_t: major 8, minor 1 */
	cr_expect_str_eq(named("userns-policy", "sys_enter_unshare", (8 << 20) | 1, 1234,
			       0x10000000 | 0x40000000, 0),
			 "{\"exe_dev\":\"8:1\",\"exe_ino\":1234,"
			 "\"flags\":\"CLONE_NEWUSER|CLONE_NEWNET\"}");
	/* netlink shields: the walker's words, named by each shield */
	cr_expect_str_eq(named("cve-2023-32233", "netlink_send", (10 << 8) | 9, 0x1, 1, 1),
			 "{\"msg_type\":\"NFT_MSG_NEWSET\",\"set_flags\":\"NFT_SET_ANONYMOUS\","
			 "\"hit\":\"modifiable_anonymous_set\",\"walk\":\"hit\"}");
	cr_expect_str_eq(named("cve-2022-2588", "sys_enter_send", 44, 2 | 4 | 1, 1, 1),
			 "{\"msg_type\":\"RTM_NEWTFILTER\",\"seen\":\"kind_route|to_0|from_0\","
			 "\"hit\":true,\"walk\":\"hit\"}");
	cr_expect_str_eq(named("cve-2024-1086", "netlink_send", 0, 0, 0, 2),
			 "{\"msg_type\":0,\"verdict\":\"0x0\",\"hit\":false,\"walk\":\"unparsed\"}");
}

/* 4. One hook, two layouts: cve-2026-43284's sys_enter_compat32 is its own
 * splice check (IPPROTO_UDP first) or the netlink walker's unparsed 32-bit
 * send; its file_permission names the syscall in the ABI the call used. */
Test(shield_args, u04_a_condition_tells_two_layouts_of_one_hook_apart)
{
	cr_expect_str_eq(named("cve-2026-43284", "sys_enter_compat32", 17, 5, 0, 10),
			 "{\"proto\":\"IPPROTO_UDP\",\"fd\":5,\"call\":\"splice\",\"family\":\"AF_INET6\"}");
	cr_expect_str_eq(named("cve-2026-43284", "sys_enter_compat32", 4, 5, 0, 2),
			 "{\"syscall\":\"write\",\"fd\":5,\"walk\":\"unparsed\"}");
	cr_expect_str_eq(named("cve-2026-43284", "file_permission", 17, 239, 1, 2),
			 "{\"proto\":\"IPPROTO_UDP\",\"syscall\":\"sendfile64\",\"compat\":true,"
			 "\"family\":\"AF_INET\"}");
	cr_expect_str_eq(named("cve-2026-43284", "file_permission", 17, SYS_splice, 0, 2),
			 "{\"proto\":\"IPPROTO_UDP\",\"syscall\":\"splice\",\"compat\":false,"
			 "\"family\":\"AF_INET\"}");
	/* the kprobe variant's splice entry: the UDP check or nlwalk's refusal */
	cr_expect_str_eq(named("cve-2026-43284", "sys_splice", 17, 5, 0, 10),
			 "{\"proto\":\"IPPROTO_UDP\",\"fd\":5,\"call\":\"splice\",\"family\":\"AF_INET6\"}");
	cr_expect_str_eq(named("cve-2026-43284", "sys_splice", 0, 0, 0, 2),
			 "{\"msg_type\":0,\"sa_flags\":\"0x0\",\"hit\":false,\"walk\":\"unparsed\"}");
	cr_expect_str_eq(named("cve-2026-43284", "sys_io_uring_enter", 0, 5, 0, 2),
			 "{\"fd\":5,\"walk\":\"unparsed\"}");
	cr_expect_str_eq(named("cve-2026-31431", "sys_sendfile64", 38, 7, 1, 2),
			 "{\"family\":\"AF_ALG\",\"fd\":7,\"call\":\"sendfile\",\"step\":\"splice\"}");
}

/* 5. A pair no object names (a shield from elsewhere) keeps its four
 * words as arg0..arg3; a shield on the netlink walker that names none of
 * its hooks gets the walker's own fallback names (bpf/sdk/nlwalk.bpf.h,
 * in every such object). */
Test(shield_args, u05_unknown_pairs_fall_back_to_numbered_words)
{
	struct ks_meta m;
	char *keys[KS_META_MAX], *vals[KS_META_MAX];
	int n = 0;

	cr_expect_eq(find("fixture-sockopt", "cgroup_setsockopt", 0, 64, 0, 0),
		     &ks_shield_args_generic);
	cr_expect_str_eq(named("fixture-sockopt", "cgroup_setsockopt", 0, 64, 0, 0),
			 "{\"arg0\":0,\"arg1\":64,\"arg2\":0,\"arg3\":0}");
	/* a bundled shield's name on a hook it does not use */
	cr_expect_eq(find("cve-2026-31431", "socket_create", 1, 2, 3, 4), &ks_shield_args_generic);
	cr_expect_str_eq(named("other", "x", ~0ULL, 1, 2, 3),
			 "{\"arg0\":18446744073709551615,\"arg1\":1,\"arg2\":2,\"arg3\":3}");
	/* "elsewhere-nl": what nlwalk.bpf.h alone puts in an object */
	cr_assert_eq(ks_meta_read(OBJS "/cve-2024-1086.bpf.o", &m), 0, "%s", ks_errmsg());
	for (int i = 0; i < m.n; i++)
		if (!strcmp(m.key[i], KS_VALS_KEY) ||
		    (!strcmp(m.key[i], KS_ARGS_KEY) && strchr(m.val[i], '~'))) {
			keys[n] = m.key[i];
			vals[n++] = m.val[i];
		}
	cr_assert_eq(ks_shield_args_learn("elsewhere-nl", keys, vals, n), 0, "%s", ks_errmsg());
	ks_meta_free(&m);
	cr_expect_str_eq(named("elsewhere-nl", "netlink_send", 16, 0xff, 1, 1),
			 "{\"msg_type\":16,\"detail\":\"0xff\",\"hit\":1,\"walk\":\"hit\"}");
	cr_expect_str_eq(named("elsewhere-nl", "sys_enter_io_uring_enter", 0, 4, 0, 2),
			 "{\"fd\":4,\"walk\":\"unparsed\"}");
	/* io_uring_submit is a shield's own name too: not guessed */
	cr_expect_eq(find("elsewhere-nl", "io_uring_submit", 9, 3, 0, 2), &ks_shield_args_generic);
	/* a shield's own entry beats the header's fallback */
	cr_expect(strstr(named("cve-2024-1086", "netlink_send", (10 << 8) | 6, 1, 1, 1),
			 "\"msg_type\":\"NFT_MSG_NEWRULE\""));
}

/* 5b. Lines a reader does not understand: the entry is left out, the
 * others kept, and the first one is said; a format from a later SDK
 * shows the number. */
Test(shield_args, u05b_malformed_entries_are_said_and_left_out)
{
	char *keys[] = { KS_ARGS_KEY, KS_ARGS_KEY, KS_ARGS_KEY, KS_VALS_KEY, KS_ARGS_KEY, "name" };
	char *vals[] = { "good a:int b:enum:t", "bad?a9=1 x:int", "later v:ipv9", "t 1=one 0x2=two",
			 "x a", "x" };

	cr_expect_eq(ks_shield_args_learn("odd", keys, vals, 6), -EINVAL);
	cr_expect(strstr(ks_errmsg(), "bad?a9=1 x:int"), "%s", ks_errmsg());
	cr_expect_str_eq(named("odd", "good", 5, 2, 0, 0), "{\"a\":5,\"b\":\"two\"}");
	cr_expect_eq(find("odd", "bad", 0, 0, 0, 0), &ks_shield_args_generic);
	cr_expect_str_eq(named("odd", "later", 7, 0, 0, 0), "{\"v\":7}");
}

/* 5c. A reader that learned nothing finds a shield's object when it
 * first needs its names: in a directory added (here the build's), as
 * `kshield events` finds the bundled and fleet-fetched objects. */
Test(shield_args_found, u05c_a_shield_is_found_by_its_object_when_first_needed)
{
	cr_expect_eq(find("cve-2026-43500", "socket_create", 33, 2, 0, 0), &ks_shield_args_generic,
		     "named without its object");
	ks_shield_args_add_dir("/nonexistent");
	ks_shield_args_add_dir(OBJS);
	/* what was found missing stays so; a shield not asked for yet is found */
	cr_expect_str_eq(named("cve-2026-31431", "sys_enter_splice", 38, 7, 1, 2),
			 "{\"family\":\"AF_ALG\",\"fd\":7,\"call\":\"sendfile\",\"step\":\"splice\"}");
	cr_expect_str_eq(named("no-such-shield", "x", 1, 0, 0, 0),
			 "{\"arg0\":1,\"arg1\":0,\"arg2\":0,\"arg3\":0}");
}

/* 6. Formats: what an unnamed value becomes, and the names' sources. */
Test(shield_args, u06_formats_name_what_they_know_and_number_the_rest)
{
	struct ks_arg_def d = { "x", KS_ARG_ERRNO, NULL };
	static const struct ks_arg_val bits[] = { { 1, "A" }, { 4, "C" }, { 0, NULL } };
	struct json_object *o;
	char buf[64];

	cr_expect_str_eq(ks_arg_fmt_str(&d, (__u64)-1, buf, sizeof(buf)), "EPERM");
	cr_expect_str_eq(ks_arg_fmt_str(&d, 13, buf, sizeof(buf)), "EACCES");
	cr_expect_str_eq(ks_arg_fmt_str(&d, 0, buf, sizeof(buf)), "0");
	d.fmt = KS_ARG_FAMILY;
	cr_expect_str_eq(ks_arg_fmt_str(&d, 16, buf, sizeof(buf)), "AF_NETLINK");
	cr_expect_str_eq(ks_arg_fmt_str(&d, 999, buf, sizeof(buf)), "999");
	o = ks_arg_fmt_json(&d, 999);
	cr_expect(json_object_is_type(o, json_type_int), "an unnamed family stays a number");
	json_object_put(o);
	d.fmt = KS_ARG_ERRNO;
	o = ks_arg_fmt_json(&d, (__u64)-5000);
	cr_expect_eq(json_object_get_int64(o), -5000, "an unnamed errno stays a number");
	json_object_put(o);
	d.fmt = KS_ARG_INT;
	o = ks_arg_fmt_json(&d, (__u64)-22);
	cr_expect_eq(json_object_get_int64(o), -22);
	json_object_put(o);
	d.fmt = KS_ARG_FLAGS;
	d.vals = bits;
	cr_expect_str_eq(ks_arg_fmt_str(&d, 1 | 4 | 0x40, buf, sizeof(buf)), "A|C|0x40");
	cr_expect_str_eq(ks_arg_fmt_str(&d, 0, buf, sizeof(buf)), "0x0");
	d.fmt = KS_ARG_STR8;
	d.vals = NULL;
	cr_expect_str_eq(ks_arg_fmt_str(&d, 0x0000000a0d636261ULL, buf, sizeof(buf)), "abc??");
	cr_expect_str_eq(ks_arg_fmt_str(&d, 0x65636e6568747561ULL, buf, 4), "aut");
	d.fmt = KS_ARG_SOCKTYPE;
	cr_expect_str_eq(ks_arg_fmt_str(&d, 5 | 04000, buf, sizeof(buf)), "SOCK_SEQPACKET|SOCK_NONBLOCK");
	cr_expect_str_eq(ks_arg_fmt_str(&d, 0x1000, buf, sizeof(buf)), "4096");
	/* syscall names are the host's own numbers */
	cr_expect_str_eq(ks_syscall_name(SYS_splice, false), "splice");
	cr_expect_str_eq(ks_syscall_name(SYS_io_uring_enter, false), "io_uring_enter");
	cr_expect_null(ks_syscall_name(100000, false));
	cr_expect_str_eq(ks_syscall_name(426, true), "io_uring_enter");
	cr_expect_str_eq(ks_af_name(38), "AF_ALG");
	cr_expect_str_eq(ks_af_name(40), "AF_VSOCK");
	cr_expect_null(ks_af_name(200));
	/* the io_uring opcode names hold to the kernel header's numbers */
	cr_expect_str_eq(named("cve-2026-31431", "io_uring_submit", 38, IORING_OP_ACCEPT, 0, 1),
			 "{\"family\":\"AF_ALG\",\"opcode\":\"IORING_OP_ACCEPT\",\"step\":\"accept\"}");
	cr_expect(strstr(named("cve-2024-1086", "io_uring_submit", IORING_OP_SENDMSG, 3, 0, 2),
			 "\"IORING_OP_SENDMSG\""));
	cr_expect(strstr(named("cve-2024-1086", "io_uring_submit", IORING_OP_SEND_ZC, 3, 0, 2),
			 "\"IORING_OP_SEND_ZC\""));
	cr_expect(strstr(named("cve-2024-1086", "io_uring_submit", IORING_OP_WRITE, 3, 0, 2),
			 "\"IORING_OP_WRITE\""));
}

static struct json_object *ks_json_path(struct json_object *o, const char *a, const char *b,
				       const char *c)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, a, &v) && json_object_object_get_ex(v, b, &v) &&
	       json_object_object_get_ex(v, c, &v) ? v : NULL;
}

/* A Copy Fail tp kill at sendfile64, as the ring buffer brings it. */
static size_t copy_fail_record(struct ks_shield_event *e)
{
	memset(e, 0, sizeof(*e));
	e->hdr.kind = KS_EV_SHIELD;
	e->hdr.size = sizeof(*e);
	e->hdr.ts_ns = 1000000000ULL;
	e->hdr.pid = e->hdr.tgid = 4242;
	e->hdr.uid = 1000;
	snprintf(e->hdr.comm, sizeof(e->hdr.comm), "exploit");
	snprintf(e->shield, sizeof(e->shield), "cve-2026-31431");
	snprintf(e->hook, sizeof(e->hook), "sys_enter_splice");
	snprintf(e->variant, sizeof(e->variant), "tp");
	e->verdict = KS_VERDICT_KILLED;
	e->args[0] = 38;
	e->args[1] = 5;
	e->args[2] = 1;
	e->args[3] = 2;
	return sizeof(*e);
}

/* 7. A decoded record keeps its raw words in the detail (what the store
 * keeps); JSON adds detail.arg beside them, the line shows names. */
Test(shield_args, u07_a_record_keeps_its_words_and_is_shown_by_name)
{
	struct ks_shield_event e;
	struct ks_row r;
	struct json_object *o, *d, *v;
	char line[512];

	cr_assert_eq(ks_row_decode(&e, copy_fail_record(&e), 0, &r), 0);
	cr_expect_str_eq(ks_row_str(&r, KS_COL_DETAIL),
			 "{\"hook\":\"sys_enter_splice\",\"variant\":\"tp\",\"mode\":\"enforce\","
			 "\"args\":[38,5,1,2]}");
	o = ks_row_json_obj(&r);
	cr_assert(json_object_object_get_ex(o, "detail", &d));
	cr_expect(json_object_object_get_ex(d, "args", &v) && json_object_array_length(v) == 4);
	cr_assert(json_object_object_get_ex(d, "arg", &v));
	cr_expect_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			 "{\"family\":\"AF_ALG\",\"fd\":5,\"call\":\"sendfile\",\"step\":\"splice\"}");
	json_object_put(o);
	ks_row_summary(&r, line, sizeof(line));
	cr_expect_str_eq(line, "cve-2026-31431 killed sys_enter_splice(family=AF_ALG fd=5 "
			 "call=sendfile step=splice) tp enforce");

	/* other kinds, and a shield row whose detail is not the decoder's */
	o = json_tokener_parse("{\"kind\":\"exec\",\"detail\":{\"hook\":\"h\",\"args\":[1,2,3,4]}}");
	ks_event_json_name_args(o);
	cr_expect(!json_object_object_get_ex(json_object_object_get(o, "detail"), "arg", NULL));
	json_object_put(o);
	/* words above INT64_MAX come back whole from the stored text */
	o = json_tokener_parse("{\"kind\":\"shield\",\"shield\":\"x\",\"detail\":{\"hook\":\"h\","
			       "\"args\":[18446744073709551615,0,0,1]}}");
	ks_event_json_name_args(o);
	cr_expect_eq(json_object_get_uint64(ks_json_path(o, "detail", "arg", "arg0")), ~0ULL);
	cr_expect_eq(json_object_get_uint64(ks_json_path(o, "detail", "arg", "arg3")), 1);
	json_object_put(o);
	o = json_tokener_parse("{\"kind\":\"shield\",\"shield\":\"x\",\"detail\":{\"args\":[1,2]}}");
	ks_event_json_name_args(o);
	cr_expect(!json_object_object_get_ex(json_object_object_get(o, "detail"), "arg", NULL));
	json_object_put(o);
	ks_row_clear(&r);
	ks_row_set_static(&r, KS_COL_KIND, "shield");
	ks_row_set_static(&r, KS_COL_SHIELD, "cve-x");
	ks_row_set_static(&r, KS_COL_VERDICT, "refused");
	ks_row_summary(&r, line, sizeof(line));
	cr_expect_str_eq(line, "cve-x refused ");
}

/* 8. Through a real store file: the stored detail is the decoder's, word
 * for word, and the row read back is named. */
Test(shield_args, u08_a_stored_shield_event_reads_back_named)
{
	char dir[] = "/tmp/ks-unit-XXXXXX", path[64], rm[96];
	struct ks_shield_event e;
	struct ks_store *s;
	struct ks_row r;
	sqlite3_stmt *st;
	struct json_object *o, *v;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_CREATE), 0, "%s", ks_errmsg());
	cr_assert_eq(ks_store_add(s, &e, copy_fail_record(&e), 0), 0, "%s", ks_errmsg());
	cr_assert_eq(ks_store_commit(s), 1);
	ks_store_close(s);
	cr_assert_eq(ks_store_open(&s, path, KS_STORE_RDONLY), 0, "%s", ks_errmsg());
	cr_assert_eq(sqlite3_prepare_v2(ks_store_db(s), "SELECT * FROM events WHERE kind = 'shield'",
					-1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	ks_store_row_read(st, &r);
	cr_expect_str_eq(ks_row_str(&r, KS_COL_DETAIL),
			 "{\"hook\":\"sys_enter_splice\",\"variant\":\"tp\",\"mode\":\"enforce\","
			 "\"args\":[38,5,1,2]}");
	o = ks_row_json_obj(&r);
	cr_assert(json_object_object_get_ex(json_object_object_get(o, "detail"), "arg", &v));
	cr_expect_str_eq(json_object_get_string(json_object_object_get(v, "family")), "AF_ALG");
	json_object_put(o);
	sqlite3_finalize(st);
	ks_store_close(s);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	cr_expect_eq(system(rm), 0);
}
