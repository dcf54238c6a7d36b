/* SPDX-License-Identifier: MIT */
/* err.h - the library's error discipline. A failing function records one
 * line saying what went wrong and what to do (ks_err), returns a negative
 * errno, and its callers may prepend context (ks_err_ctx). Only the command
 * layer reports it (src/cmd/cli.h: ks_report). The message is per thread:
 * the fleet agent loads shields from its own threads.
 */
#ifndef KSHIELD_ERR_H
#define KSHIELD_ERR_H

/* Record the error message for the current failure; returns @err so that
 * `return ks_err(-ENOENT, "...")` reads naturally. */
int ks_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepend context to the recorded message ("loading x: <old message>"). */
int ks_err_ctx(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The recorded message, "" when none. */
const char *ks_errmsg(void);
/* Forget the recorded message: the next failure starts a fresh one. */
void ks_err_clear(void);

#endif /* KSHIELD_ERR_H */
