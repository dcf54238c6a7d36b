/* SPDX-License-Identifier: MIT */
/* pins.h - kshield's bpffs tree, the one place it is written down.
 *
 * Under the root (--bpffs, $KSHIELD_BPFFS, default KS_PIN_ROOT_DEFAULT):
 *   maps/<map>                  maps shared by the monitor and every shield
 *                               (ks_events, ks_lost, ks_exec_ids, mon_*)
 *   maps/old_<map>_<id>         a shared map of an older shape, set aside
 *                               by ks_pins_migrate()
 *   monitor/link_<prog>         the monitor's links
 *   shields/<name>/cfg          struct ks_shield_cfg (include/kshield/shield.h)
 *   shields/<name>/stats        hits per verdict (per-CPU)
 *   shields/<name>/link_<prog>  one link per attached program;
 *                               link_<prog>__site<N> per copy of an inlined target
 *   shields/<name>/prog_<prog>  a program the syscall dispatcher runs
 *                               (registered in maps/ks_sys_slots)
 *   dispatch/link_ks_sys_enter, dispatch/link_ks_sys_exit   the syscall
 *                               dispatcher, attached while a chain needs it
 *   maps/ks_sys_progs, ks_sys_chains, ks_sys_cur, ks_sys_slots   its tables
 *   shields/_new_<name>         a load being staged; renamed into place
 *   shields/_old_<name>         the instance being replaced, until the new
 *                               one is in place (bpffs refuses '.' in names)
 *   guard/cfg, guard/ids, guard/stats, guard/link_<prog>   the tamper guard;
 *   guard/keys (token keys, frozen), guard/refused (its refusal recorder)
 */
#ifndef KSHIELD_PINS_H
#define KSHIELD_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define KS_PIN_ROOT_DEFAULT	"/sys/fs/bpf/kshield"
#define KS_PIN_MAPS		"maps"
#define KS_PIN_MONITOR		"monitor"
#define KS_PIN_SHIELDS		"shields"
#define KS_PIN_GUARD		"guard"
#define KS_PIN_CFG		"cfg"
#define KS_PIN_STATS		"stats"
#define KS_PIN_IDS		"ids"
#define KS_PIN_KEYS		"keys"		/* guard/keys: trusted token keys */
#define KS_PIN_REFUSED		"refused"	/* guard/refused: records token refusals */
#define KS_PIN_LINK		"link_"		/* prefix of every pinned link */
#define KS_PIN_PROG		"prog_"		/* a program the syscall dispatcher runs */
#define KS_PIN_SITE		"__site"	/* link_<prog>__site<N> */
#define KS_PIN_STAGED		"_new_"
#define KS_PIN_RETIRED		"_old_"
#define KS_PIN_OLD_MAP		"old_"		/* maps/old_<map>_<id> */

static inline bool ks_pin_is_link(const char *name)
{
	return !strncmp(name, KS_PIN_LINK, sizeof(KS_PIN_LINK) - 1);
}

static inline bool ks_pin_is_prog(const char *name)
{
	return !strncmp(name, KS_PIN_PROG, sizeof(KS_PIN_PROG) - 1);
}

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
/* Call @fn with the fd of every map set aside as old_<name>_* (read-only
 * fds when @rdonly); returns how many. */
int ks_pins_old_maps(const char *name, bool rdonly, void (*fn)(int fd, void *ctx), void *ctx);
/* Open the map pinned at @path read-only: what every reader uses, since
 * the guard gives writable fds of kshield's maps to the agent alone.
 * Returns an fd, or -1 with errno set. */
int ks_pin_open_ro(const char *path);

#endif
