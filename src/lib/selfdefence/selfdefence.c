// SPDX-License-Identifier: MIT
/* selfdefence.c - the agent's self-defence (see selfdefence.h). On kernels with
 * BPF LSM the guard refuses tampering outright; everywhere, the periodic
 * check below notices what was undone anyway (pins removed, links detached),
 * puts it back and records it, so the best-available defence on a kernel
 * without BPF LSM is "detect, repair within check_interval, and tell".
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "err.h"
#include "log.h"
#include "guard.h"
#include "selfdefence.h"
#include "monitor.h"
#include "pins.h"
#include "shieldset.h"
#include "store.h"
#include "weaken.h"

/* Set once this agent manages a shields directory: only then is a missing
 * owned-shields record a removal to repair rather than a fresh start. */
static bool managed;
/* Set once this agent holds a guard: its pins vanishing is tampering. */
static bool guarded;

void ks_selfdefence_synced(const struct ks_config *cfg, struct ks_store *store)
{
	struct ks_guard_state st;
	bool pinned = !ks_guard_get(&st), enable;
	int err;

	managed = true;
	/* guard = off turns a loaded guard off only with a signed token: the
	 * config file is something an attacker with root edits before
	 * sending SIGHUP. Otherwise off is `kshield guard off` with the
	 * agent stopped (docs/guard.md). */
	if (!cfg->guard && !pinned)
		return;
	enable = pinned ? st.enabled : true;
	if (!cfg->guard && enable) {
		if (!ks_weaken_check(cfg, "guard-off")) {
			enable = false;
			ks_log("guard: turned off (guard = off, with a signed token)");
		} else {
			ks_log("guard: guard = off not applied: %s", ks_errmsg());
			ks_selfdefence_refused(store, "", "guard-off");
		}
	}
	err = ks_guard_load(enable, cfg->keys_dir, &st);
	if (err) {
		ks_log("guard: %s", ks_errmsg());
		return;
	}
	guarded = true;
	if (st.lsm)
		ks_log("guard: %s (%s; tampering is refused)", st.enabled ? "on" : "off",
		       !strcmp(st.variant, "lsm") ? "BPF LSM" : "fmod_ret on security_* functions");
	else
		/* Loaded all the same (its tracepoint variant): say so, and
		 * what this kernel lacks for the variants that refuse. */
		ks_log("guard: %s (records only: %s): tampering is recorded and repaired every "
		    "%llus, not refused", st.enabled ? "on" : "off", st.why_no_lsm[0] ?
		    st.why_no_lsm : "no BPF LSM", (unsigned long long)cfg->check_interval_s);
}

static void record_op(struct ks_store *store, const char *shield, const char *what, __u32 op)
{
	struct timespec now;
	struct ks_row r;
	char detail[512];

	if (!store)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	ks_row_clear(&r);
	ks_row_set_num(&r, KS_COL_TS, now.tv_sec * 1000000000LL + now.tv_nsec);
	ks_row_set_static(&r, KS_COL_KIND, ks_kind_name(KS_EV_TAMPER));
	ks_row_set_num(&r, KS_COL_PID, getpid());
	ks_row_set_num(&r, KS_COL_TID, getpid());
	ks_row_set_num(&r, KS_COL_PPID, getppid());
	ks_row_set_num(&r, KS_COL_UID, 0);
	ks_row_set_num(&r, KS_COL_EUID, 0);
	ks_row_set_num(&r, KS_COL_CGROUP_ID, 0);
	ks_row_set_str(&r, KS_COL_COMM, "kshield");
	ks_row_set_str(&r, KS_COL_SHIELD, shield);
	ks_row_set_num(&r, KS_COL_RET, 0);
	snprintf(detail, sizeof(detail), "{\"op\":%u,\"target\":\"%s\",\"%s\":\"%s\"}",
		 op, shield, op == KS_TAMPER_REPAIRED ? "repaired" : "refused", what);
	ks_row_set_str(&r, KS_COL_DETAIL, detail);
	/* Part of the agent's open batch: committed with the next one. */
	ks_store_add_note(store, &r);
}

static void record(struct ks_store *store, const char *shield, const char *what)
{
	record_op(store, shield, what, KS_TAMPER_REPAIRED);
}

void ks_selfdefence_refused(struct ks_store *store, const char *shield, const char *what)
{
	record_op(store, shield, what, KS_TAMPER_CONFIG);
}

/* Put a shared map's pin back from the descriptor we hold. */
static bool repin(int fd, const char *name)
{
	char path[PATH_MAX];

	ks_pin_path(path, sizeof(path), "%s/%s", KS_PIN_MAPS, name);
	if (fd < 0 || !access(path, F_OK))
		return false;
	ks_pins_init();
	return !bpf_obj_pin(fd, path);
}

void ks_selfdefence_tick(const struct ks_config *cfg, struct ks_monitor *mon,
		       struct ks_store *store)
{
	static int64_t next;	/* seconds on the monotonic clock */
	int64_t now = ks_mono_ms() / 1000;
	struct ks_sync_result res;
	int n;

	if (now < next)
		return;
	next = now + (cfg->check_interval_s ? cfg->check_interval_s : 5);

	/* The ring buffer first: shields reloaded below must write into the
	 * buffer this agent reads, not a new one created by name. */
	if (mon && repin(mon->events_fd, "ks_events")) {
		ks_log("tamper: the ring buffer's pin was removed; pinned it again");
		record(store, "", "ring buffer pin");
	}
	if (mon && repin(mon->lost_fd, "ks_lost"))
		record(store, "", "loss counters pin");
	if (mon && ks_monitor_links() <= 0) {
		struct ks_monitor m2 = {};

		if (!ks_monitor_start(&m2, NULL)) {
			ks_log("tamper: the monitor's pins were removed; monitor reloaded");
			record(store, "", "monitor");
			ks_monitor_close(&m2);
		} else {
			ks_log("tamper: the monitor's pins were removed and it could not be "
			    "reloaded: %s", ks_errmsg());
		}
	}
	if (!managed)
		return;
	if (guarded && ks_guard_get(&(struct ks_guard_state){}) == -ENOENT) {
		struct ks_guard_state st;

		/* Only a kernel without BPF LSM lets this happen. */
		if (!ks_guard_load(true, cfg->keys_dir, &st)) {
			ks_log("tamper: the guard's pins were removed; guard reloaded");
			record(store, "", "guard");
		} else {
			ks_log("tamper: the guard's pins were removed and it could not be "
			    "reloaded: %s", ks_errmsg());
		}
	}
	n = ks_shieldset_verify(cfg, &res);
	for (int i = 0; i < res.n; i++) {
		const struct ks_sync_item *it = &res.items[i];

		if (it->action == KS_SYNC_REPAIRED) {
			ks_log("tamper: shield %s: %s; reloaded (%s, %s)", it->name, it->why,
			    it->variant, ks_mode_str(it->mode));
			record(store, it->name, it->why);
		} else if (it->action == KS_SYNC_FAILED) {
			ks_log("tamper: shield %s was undone and could not be reloaded: %s",
			    it->name, it->why);
			record(store, it->name, "reload failed");
		}
	}
	if (n > 0 || res.nfailed)
		ks_guard_protect();
	ks_sync_result_free(&res);
}
