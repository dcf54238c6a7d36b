// SPDX-License-Identifier: MIT
/* dl.c - optional shared libraries (see dl.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "dl.h"
#include "err.h"

int ks_dl_sym(struct ks_dl *d, const char *name, void **fn)
{
	*fn = dlsym(d->handle, name);
	if (!*fn)
		return ks_err(-ENOPKG, "%s: %s has no %s: install the %s this kshield was built with",
			      d->feature, d->soname, name, d->package);
	return 0;
}

int ks_dl_load(struct ks_dl *d, int (*bind)(struct ks_dl *d))
{
	int err;

	pthread_mutex_lock(&d->lock);
	if (!d->tried) {
		d->tried = true;
		d->handle = dlopen(d->soname, RTLD_NOW | RTLD_LOCAL);
		if (!d->handle)
			d->err = ks_err(-ENOPKG, "%s needs %s, which is not installed: apt-get install %s",
					d->feature, d->soname, d->package);
		else if ((d->err = bind(d))) {
			dlclose(d->handle);
			d->handle = NULL;
		}
		snprintf(d->why, sizeof(d->why), "%s", d->err ? ks_errmsg() : "");
	}
	err = d->err;
	pthread_mutex_unlock(&d->lock);
	if (err)
		ks_err(err, "%s", d->why);
	return err;
}

bool ks_dl_loaded(struct ks_dl *d)
{
	bool ok;

	pthread_mutex_lock(&d->lock);
	ok = d->handle != NULL;
	pthread_mutex_unlock(&d->lock);
	return ok;
}
