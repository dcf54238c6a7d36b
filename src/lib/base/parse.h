/* SPDX-License-Identifier: MIT */
/* parse.h - parsing what users type: numbers (durations and sizes are in
 * config.h). Each returns 0 or -EINVAL with a one-line message recorded. */
#ifndef KSHIELD_PARSE_H
#define KSHIELD_PARSE_H

/* Parse helpers: return 0 or a negative errno with a message recorded. */
int ks_parse_u64(const char *s, const char *what, unsigned long long *out);

#endif /* KSHIELD_PARSE_H */
