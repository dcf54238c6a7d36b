/* SPDX-License-Identifier: MIT */
/* argfmt.h - what one argument word of a shield event says, as text and as
 * JSON, by its format (enum ks_arg_fmt in events.h): address family and
 * syscall names, errno names, device numbers, named values and bits. The
 * format of each (shield, hook, argument) comes from the shield's object
 * (argtab.c). */
#ifndef KSHIELD_ARGFMT_H
#define KSHIELD_ARGFMT_H

#include <stdbool.h>
#include <stddef.h>
#include "events.h"

/* "AF_ALG" for 38; NULL for a family this table does not name. */
const char *ks_af_name(__u64 family);
/* "splice" for this host's syscall number @nr, of the native ABI or (abi32)
 * the 32-bit one (i386 on x86-64, AArch32 EABI on arm64); NULL when not
 * named. Only the calls shields watch are named. */
const char *ks_syscall_name(__u64 nr, bool abi32);
/* @v shown as @d says, into @buf (cut to @len); returns @buf. */
const char *ks_arg_fmt_str(const struct ks_arg_def *d, __u64 v, char *buf, size_t len);
/* @v as a JSON value: numbers for INT, UINT and FD, a boolean for BOOL,
 * strings for HEX, FLAGS, DEV and STR8; the named formats give the name,
 * or the number when they have none for @v. NULL for KS_ARG_NONE. */
struct json_object *ks_arg_fmt_json(const struct ks_arg_def *d, __u64 v);

#endif /* KSHIELD_ARGFMT_H */
