// SPDX-License-Identifier: MIT
/* hookrank.c - the order of `kshield hooks` rows (hookrank.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "hookrank.h"

bool ks_hook_rare(const char *name)
{
	static const char *const rare[] = {
		"kernel_module_request", "kernel_load_data", "kernel_read_file",
		"kernel_post_load_data", "kernel_post_read_file", "uring_sqpoll",
	};

	for (size_t i = 0; i < ARRAY_SIZE(rare); i++)
		if (!strcmp(rare[i], name))
			return true;
	return false;
}

int ks_hook_tier(const struct ks_hook_row *r)
{
	switch (r->kind) {
	case KS_HOOK_LSM:
		return r->after || r->no_verdict || r->rare ? 4 : r->guessed ? 2 : 0;
	case KS_HOOK_TRACEPOINT:
	case KS_HOOK_SYSCALL:
		return r->guessed ? 2 : 1;
	default:
		return 3;
	}
}

int ks_hook_row_cmp(const void *a, const void *b)
{
	const struct ks_hook_row *x = a, *y = b;
	int tx = ks_hook_tier(x), ty = ks_hook_tier(y);

	if (tx != ty)
		return tx - ty;
	if (x->distance != y->distance)
		return x->distance - y->distance;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return strcmp(x->name, y->name);
}

void ks_hook_rows_rank(struct ks_hook_row *rows, size_t n)
{
	if (n)
		qsort(rows, n, sizeof(*rows), ks_hook_row_cmp);
}

const char *ks_hook_kind_name(enum ks_hook_kind k)
{
	switch (k) {
	case KS_HOOK_LSM: return "lsm";
	case KS_HOOK_TRACEPOINT: return "tracepoint";
	case KS_HOOK_SYSCALL: return "syscall";
	case KS_HOOK_NETLINK: return "netlink";
	case KS_HOOK_URING: return "io_uring";
	}
	return "?";
}

void ks_hook_variants_str(unsigned v, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s",
		 v & KS_VARIANT_LSM ? "lsm," : "",
		 v & KS_VARIANT_FMOD_RET ? "fmod_ret," : "",
		 v & KS_VARIANT_TP ? "tp," : "",
		 v ? "" : "-");
	if (v && strlen(buf))
		buf[strlen(buf) - 1] = 0;
}

bool ks_hook_of_section(const char *sec, enum ks_hook_kind *kind, char *name, size_t len)
{
	static const char *const lsm[] = { "lsm/", "lsm.s/", "fmod_ret/security_", "fentry/security_" };
	static const char *const sys[] = { "tp/syscalls/sys_enter_", "tracepoint/syscalls/sys_enter_",
					   "tp/syscalls/sys_exit_" };

	for (size_t i = 0; i < ARRAY_SIZE(lsm); i++)
		if (!strncmp(sec, lsm[i], strlen(lsm[i])) && sec[strlen(lsm[i])]) {
			*kind = KS_HOOK_LSM;
			snprintf(name, len, "%s", sec + strlen(lsm[i]));
			return true;
		}
	for (size_t i = 0; i < ARRAY_SIZE(sys); i++)
		if (!strncmp(sec, sys[i], strlen(sys[i])) && sec[strlen(sys[i])]) {
			*kind = KS_HOOK_SYSCALL;
			snprintf(name, len, "%s", sec + strlen(sys[i]));
			return true;
		}
	if (!strncmp(sec, "tp_btf/", 7) && sec[7]) {
		*kind = KS_HOOK_TRACEPOINT;
		snprintf(name, len, "%s", sec + 7);
		return true;
	}
	return false;
}
