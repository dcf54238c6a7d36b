/* pins.h - kshield's bpffs layout (see include/kshield/shield.h). */
#ifndef KSHIELD_PINS_H
#define KSHIELD_PINS_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;

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
/* Call @fn with the fd of every map set aside as old_<name>_* (read-only
 * fds when @rdonly); returns how many. */
int ks_pins_old_maps(const char *name, bool rdonly, void (*fn)(int fd, void *ctx), void *ctx);
/* Open the map pinned at @path read-only: what every reader uses, since
 * the guard gives writable fds of kshield's maps to the agent alone.
 * Returns an fd, or -1 with errno set. */
int ks_pin_open_ro(const char *path);
/* The cgroup2 mount point from /proc/mounts, or NULL. */
const char *ks_cgroup2_path(void);

#endif
