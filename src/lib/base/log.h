/* SPDX-License-Identifier: MIT */
/* log.h - the one way library code says something while it runs (the
 * agent's "migrated ...", "shield X reloaded" lines). The command layer
 * chooses where it goes: by default one line on stderr with the prefix
 * set by ks_log_set_prefix(). Errors are not logged here: they are
 * returned (err.h).
 */
#ifndef KSHIELD_LOG_H
#define KSHIELD_LOG_H

typedef void (*ks_log_fn)(const char *line);

void ks_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "kshield agent" makes lines "kshield agent: ...". */
void ks_log_set_prefix(const char *prefix);
/* Send lines to @fn instead (NULL: back to stderr). */
void ks_log_set_sink(ks_log_fn fn);

#endif /* KSHIELD_LOG_H */
