/* pins.h - kshield's bpffs layout (see include/kshield/shield.h). */
#ifndef KSHIELD_PINS_H
#define KSHIELD_PINS_H

#include <stddef.h>

/* Check that the bpffs root's file system is bpffs and create the kshield
 * directories. Returns 0 or a negative errno with an actionable message. */
int ks_pins_init(void);
/* Format a path under the kshield bpffs root into @buf. */
int ks_pin_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Remove a directory of pins (and the links they hold). */
int ks_pins_remove_dir(const char *dir);
/* The cgroup2 mount point from /proc/mounts, or NULL. */
const char *ks_cgroup2_path(void);

#endif
