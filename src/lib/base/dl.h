/* SPDX-License-Identifier: MIT */
/* dl.h - optional shared libraries, loaded when a feature first needs
 * them. The fleet (libnats, libpq), the metrics server (libmicrohttpd) and
 * debuginfod bring OpenSSL, GnuTLS, Kerberos, LDAP and curl with them:
 * linked, they cost every agent about 6 MB resident whether it uses them or
 * not. Each owning subsystem declares the functions it calls in an X-list
 * and calls them through a table of pointers typed from the library's own
 * header: mhd.MHD_run(d), nats.natsConnection_Connect(&nc, o).
 */
#ifndef KSHIELD_DL_H
#define KSHIELD_DL_H

#include <pthread.h>
#include <stdbool.h>

/* One optional library and what to tell the user when it is absent. */
struct ks_dl {
	const char *soname;	/* "libnats.so.3.4" */
	const char *package;	/* Debian package: "libnats3.4" */
	const char *feature;	/* what needs it: "the fleet (NATS)" */
	pthread_mutex_t lock;
	bool tried;
	int err;		/* result of the first attempt */
	char why[256];		/* its message, repeated on every later call */
	void *handle;
};
#define KS_DL_INIT(so, pkg, feat) \
	{ .soname = so, .package = pkg, .feature = feat, .lock = PTHREAD_MUTEX_INITIALIZER }

/* A member of a function table: a pointer of @f's own type (from the
 * library's header), so every call is type-checked as if linked. */
#define KS_DL_PTR(f) __typeof__(f) *f;

/* Load @d once (thread-safe) and resolve its functions through @bind,
 * which calls ks_dl_sym() for each. Returns 0, or -ENOPKG (package not installed) with one line
 * recorded ("the fleet (NATS) needs libnats.so.3.4: apt-get install
 * libnats3.4"), the same on every later call. */
int ks_dl_load(struct ks_dl *d, int (*bind)(struct ks_dl *d));
/* Resolve @name into *@fn; -ENOPKG with a line recorded when absent. */
int ks_dl_sym(struct ks_dl *d, const char *name, void **fn);
/* Whether @d is loaded (its functions callable). */
bool ks_dl_loaded(struct ks_dl *d);

/* In an owner's bind function: KS_DL_BIND(d, table, name) per X-list entry. */
#define KS_DL_BIND(d, table, f) \
	if (ks_dl_sym(d, #f, (void **)&(table).f)) return -ENOPKG;

#endif /* KSHIELD_DL_H */
