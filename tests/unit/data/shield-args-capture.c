// SPDX-License-Identifier: MIT
/* shield-args-capture.c - run once, against the library of commit a24fe5f
 * (the central ks_shield_args[] table in src/lib/events/events.c), to
 * write shield-args.expected: sample argument words of every (shield,
 * hook) the bundled shields report and what that table made of them, as
 * JSON (detail.arg) and as a line (the summary's "name=value ...").
 * tests/unit/test_shield_args.c decodes the same words with the tables the
 * shield objects now carry and compares, byte for byte. Not built by the
 * Makefile:
 *	gcc -Iinclude -Isrc/lib/base -Isrc/lib/events tests/unit/data/shield-args-capture.c \
 *	    build/libkshield.a -ljson-c -o /tmp/capture && /tmp/capture >tests/unit/data/shield-args.expected
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <json-c/json.h>
#include "events.h"

/* Sample words for one argument of format @d: each named value and more. */
static int samples(const struct ks_arg_def *d, __u64 *out)
{
	int n = 0;
	__u64 all = 0;

	switch (d->fmt) {
	case KS_ARG_NONE:
		out[n++] = 0;
		out[n++] = 9;
		break;
	case KS_ARG_INT:
	case KS_ARG_FD:
	case KS_ARG_ERRNO:
		out[n++] = 0; out[n++] = 5; out[n++] = (__u64)-1; out[n++] = 4000;
		out[n++] = (__u64)-22;
		break;
	case KS_ARG_UINT:
		out[n++] = 0; out[n++] = 7; out[n++] = 1ULL << 40; out[n++] = ~0ULL;
		break;
	case KS_ARG_HEX:
		out[n++] = 0; out[n++] = 0x80000000; out[n++] = 0x1234;
		break;
	case KS_ARG_BOOL:
		out[n++] = 0; out[n++] = 1; out[n++] = 2;
		break;
	case KS_ARG_FAMILY:
		out[n++] = 38; out[n++] = 2; out[n++] = 10; out[n++] = 16; out[n++] = 33;
		out[n++] = 999;
		break;
	case KS_ARG_SOCKTYPE:
		out[n++] = 2 | 02000000; out[n++] = 5 | 04000; out[n++] = 1; out[n++] = 0x1000;
		out[n++] = 3;
		break;
	case KS_ARG_SYSCALL:
		out[n++] = SYS_splice; out[n++] = SYS_write; out[n++] = SYS_mmap;
		out[n++] = SYS_sendfile; out[n++] = 100000;
		break;
	case KS_ARG_SYSCALL32:
		out[n++] = 239; out[n++] = 4; out[n++] = 17; out[n++] = 313; out[n++] = 100000;
		break;
	case KS_ARG_DEV:
		out[n++] = (8 << 20) | 1; out[n++] = 0; out[n++] = (259ULL << 20) | 65539;
		break;
	case KS_ARG_STR8:
		out[n++] = 0x65636e6568747561ULL; out[n++] = 0x0000000a0d636261ULL; out[n++] = 0;
		break;
	case KS_ARG_ENUM:
		for (const struct ks_arg_val *v = d->vals; v->name && n < 60; v++)
			out[n++] = v->v;
		out[n++] = 12345;
		break;
	case KS_ARG_FLAGS:
		for (const struct ks_arg_val *v = d->vals; v->name && n < 60; v++) {
			out[n++] = v->v;
			all |= v->v;
		}
		out[n++] = 0;
		out[n++] = all;
		out[n++] = all | (1ULL << 50);
		out[n++] = 0x3;
		break;
	}
	return n;
}

static void line(const char *shield, const char *hook, const __u64 a[KS_SHIELD_ARGS])
{
	const struct ks_shield_args_def *d = ks_shield_args_find(shield, hook, a);
	struct json_object *o = ks_shield_args_json(d, a);
	char str[1024];

	ks_shield_args_str(d, a, str, sizeof(str));
	printf("%s\t%s\t%llu,%llu,%llu,%llu\t%s\t%s\n", shield, hook, (unsigned long long)a[0],
	       (unsigned long long)a[1], (unsigned long long)a[2], (unsigned long long)a[3],
	       json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), str);
	json_object_put(o);
}

int main(void)
{
	for (size_t i = 0; i < ks_shield_args_n; i++) {
		const struct ks_shield_args_def *d = &ks_shield_args[i];
		__u64 s[KS_SHIELD_ARGS][64];
		int n[KS_SHIELD_ARGS], most = 0;

		if (!d->shield)
			continue;	/* the walker's fallbacks: no bundled shield's */
		for (int k = 0; k < KS_SHIELD_ARGS; k++) {
			n[k] = samples(&d->arg[k], s[k]);
			if (n[k] > most)
				most = n[k];
		}
		/* every sample of every slot at least once, the slots' lists
		 * run side by side */
		for (int j = 0; j < most; j++) {
			__u64 a[KS_SHIELD_ARGS];

			for (int k = 0; k < KS_SHIELD_ARGS; k++)
				a[k] = s[k][j % n[k]];
			if (d->when != KS_ARG_ANY)
				a[d->when] = d->is;
			line(d->shield, d->hook, a);
		}
		/* and the words all zero, and all ones */
		line(d->shield, d->hook, (const __u64[]){ 0, 0, 0, 0 });
		line(d->shield, d->hook, (const __u64[]){ ~0ULL, ~0ULL, ~0ULL, ~0ULL });
		/* a hook the shield does not name: the numbered words */
		if (i + 1 == ks_shield_args_n || !ks_shield_args[i + 1].shield ||
		    strcmp(ks_shield_args[i + 1].shield, d->shield))
			line(d->shield, "no_such_hook", (const __u64[]){ 1, 2, 3, ~0ULL });
	}
	return 0;
}
