// SPDX-License-Identifier: MIT
/* view_assets.h - the fleet page's files (src/lib/fleet/view/), compiled
 * into the binary by scripts/embed-assets.sh at build time: nothing is
 * fetched when the page runs. */
#ifndef KSHIELD_VIEW_ASSETS_H
#define KSHIELD_VIEW_ASSETS_H

#include <stddef.h>

struct ks_view_asset {
	const char *name;	/* file name: "index.html", "view.js" */
	const char *type;	/* Content-Type */
	const unsigned char *data;
	size_t len;
};

extern const struct ks_view_asset ks_view_assets[];
extern const size_t ks_view_nassets;

#endif /* KSHIELD_VIEW_ASSETS_H */
