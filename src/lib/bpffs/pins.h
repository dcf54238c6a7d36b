/* pins.h - kshield's bpffs layout (see include/kshield/shield.h). */
#ifndef KSHIELD_PINS_H
#define KSHIELD_PINS_H

#include <stddef.h>

struct bpf_object;

/* The kshield bpffs root: --bpffs DIR, $KSHIELD_BPFFS, default
 * /sys/fs/bpf/kshield. Set once by the command layer before any pin is made. */
extern const char *ks_bpffs_root;

/* Check that the bpffs root's file system is bpffs and create the kshield
 * directories. Returns 0 or a negative errno with an actionable message. */
int ks_pins_init(void);
/* Format a path under the kshield bpffs root into @buf. */
int ks_pin_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Remove a directory of pins (and the links they hold). */
int ks_pins_remove_dir(const char *dir);
/* Before loading @obj: a shared map pinned under maps/ by an older kshield
 * with another shape (ks_lost had 13 slots before flows) cannot be reused
 * by name, and the load would fail. Its pin is moved aside to
 * maps/old_<name>_<id>, so the load pins a fresh map; programs loaded
 * before keep the old map (their own reference) and keep running. @what
 * gets "name (was ..., now ...)" per map moved, or "". */
int ks_pins_migrate(struct bpf_object *obj, char *what, size_t len);
/* Call @fn with the fd of every map set aside as old_<name>_*; returns how
 * many. */
int ks_pins_old_maps(const char *name, void (*fn)(int fd, void *ctx), void *ctx);

#endif
