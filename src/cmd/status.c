// SPDX-License-Identifier: MIT
/* status.c - `kshield status`: everything an operator checks at a glance,
 * read without changing anything: is the agent running, which shields are
 * pinned (mode, variant, hits), the monitor, ring buffer losses, the event
 * store (path, size, newest event; opened read-only), and the tamper guard.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "config.h"
#include "guard.h"
#include "loader.h"
#include "monitor.h"
#include "pins.h"
#include "store.h"
#include "sysdispatch.h"
#include "fpdispatch.h"

#define KS_PIDFILE "/run/kshield.pid"

struct status {
	__u32 agent_pid;
	const char *agent_how;		/* where the pid came from */
	__u64 lost[KS_EV_KIND_MAX], lost_total;
	bool maps_pinned;
	int monitor_links;
	bool monitor_pinned;
	const char *store;
	long long store_bytes;		/* -1: no store */
	long long newest_ns;		/* 0: empty / unknown */
	long long events;
	char store_err[256];
	struct ks_guard_state guard;
	int guard_err;
	struct ks_shield_state *sh;	/* the pinned shields */
	int nsh;
	int nsys, nfp;			/* programs behind each dispatcher */
	bool sys_enter, sys_exit;
	unsigned fp_attached;		/* 1: lsm, 2: fmod_ret */
};

static bool alive(__u32 pid)
{
	char path[64];

	if (!pid)
		return false;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	return !access(path, F_OK);
}

/* The agent: who the guard has registered, else what the agent publishes
 * in the monitor's mon_agent map, else a pid file. A pid that is no longer
 * alive does not count (kill -9 leaves mon_agent and pid files behind). */
static void find_agent(struct status *s)
{
	struct ks_agent_stats mon;
	unsigned int pid = 0;
	FILE *f;

	if (s->guard.loaded && alive(s->guard.agent_tgid)) {
		s->agent_pid = s->guard.agent_tgid;
		s->agent_how = "guard";
		return;
	}
	if (!ks_monitor_read_agent(&mon) && alive(mon.tgid)) {
		s->agent_pid = mon.tgid;
		s->agent_how = "monitor";
		return;
	}
	f = fopen(KS_PIDFILE, "re");
	if (f) {
		if (fscanf(f, "%u", &pid) == 1 && alive(pid)) {
			s->agent_pid = pid;
			s->agent_how = KS_PIDFILE;
		}
		fclose(f);
	}
}

/* The store a running agent writes: its --store, else its --config's
 * store. Returns false when its command line names neither. */
static bool agent_store(__u32 pid, char *out, size_t len)
{
	char path[64], buf[8192], cwd[PATH_MAX] = "";
	const char *store = NULL, *conf = NULL;
	struct ks_config cfg;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	if (!(f = fopen(path, "re")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n > 0 ? n : 0] = '\0';
	for (char *a = buf; a < buf + n; a += strlen(a) + 1) {
		char *next = a + strlen(a) + 1;

		if (next >= buf + n)
			break;
		if (!strcmp(a, "--store"))
			store = next;
		else if (!strcmp(a, "--config"))
			conf = next;
	}
	if (!store && conf) {
		ks_config_defaults(&cfg);
		if (ks_config_load(&cfg, conf, true))
			return false;
		snprintf(out, len, "%s", cfg.store);
		return true;
	}
	if (!store)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/cwd", pid);
	n = store[0] == '/' ? -1 : readlink(path, cwd, sizeof(cwd) - 1);
	cwd[n > 0 ? n : 0] = '\0';
	snprintf(out, len, "%s%s%s", cwd, cwd[0] ? "/" : "", store);
	return true;
}

static void read_lost(struct status *s)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 vals[ncpu > 0 ? ncpu : 1];
	char path[PATH_MAX];
	int fd;

	ks_pin_path(path, sizeof(path), "%s/ks_lost", KS_PIN_MAPS);
	fd = ks_pin_open_ro(path);
	if (fd < 0)
		return;
	s->maps_pinned = true;
	for (__u32 k = 0; k < KS_EV_KIND_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			s->lost[k] += vals[c];
		s->lost_total += s->lost[k];
	}
	close(fd);
}

/* Monitor links: pins named link_* under <root>/monitor. */
static void read_monitor(struct status *s)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	ks_pin_path(dir, sizeof(dir), "%s", KS_PIN_MONITOR);
	d = opendir(dir);
	if (!d)
		return;
	s->monitor_pinned = true;
	while ((de = readdir(d)))
		s->monitor_links += ks_pin_is_link(de->d_name);
	closedir(d);
}

static void add_count(void *arg, const char *kind, long long n)
{
	(void)kind;
	*(long long *)arg += n;
}

/* Newest event and row count of the store, opened read-only as `events`
 * and `hunt` open it (a file that is not a kshield store says so). */
static void read_store(struct status *s)
{
	char path[PATH_MAX + 8];
	struct ks_store *st;
	sqlite3_stmt *q;
	struct stat sb;

	s->store_bytes = -1;
	if (stat(s->store, &sb))
		return;
	s->store_bytes = sb.st_size;
	snprintf(path, sizeof(path), "%s-wal", s->store);
	if (!stat(path, &sb))
		s->store_bytes += sb.st_size;
	if (ks_store_open(&st, s->store, KS_STORE_RDONLY) ||
	    ks_store_count_kinds(st, add_count, &s->events)) {
		snprintf(s->store_err, sizeof(s->store_err), "%s", ks_errmsg());
		ks_store_close(st);
		return;
	}
	/* not max(ts): an aggregate over the events view reads every row */
	if (sqlite3_prepare_v2(ks_store_db(st), "SELECT ts FROM events ORDER BY ts DESC LIMIT 1",
			       -1, &q, NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			s->newest_ns = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	ks_store_close(st);
}

static const char *guard_word(const struct status *s)
{
	if (!s->guard.loaded)
		return "off (not loaded)";
	if (!s->guard.lsm)
		return s->guard.enabled ? "unavailable: no BPF LSM, recording tampering only"
					: "off (recording variant)";
	return s->guard.enabled ? "on" : "off";
}

static void fmt_time(long long ns, char *buf, size_t len)
{
	time_t t = ns / 1000000000ll;
	struct tm tm;

	if (!ns) {
		snprintf(buf, len, "-");
		return;
	}
	/* Stored times are realtime ns; older rows in boottime would print
	 * as 1970 and be obviously so. */
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static int do_status_help(void)
{
	fprintf(stderr, "Usage: kshield status [--config FILE] [--store FILE] [-j]\n");
	return 0;
}

static void print_status_json(const struct status *s)
{
	struct json_object *o = json_object_new_object(), *a, *x;

	x = json_object_new_object();
	json_object_object_add(x, "running", json_object_new_boolean(s->agent_pid != 0));
	if (s->agent_pid) {
		json_object_object_add(x, "pid", json_object_new_int64(s->agent_pid));
		json_object_object_add(x, "from", json_object_new_string(s->agent_how));
	}
	json_object_object_add(o, "agent", x);
	json_object_object_add(o, "bpffs", json_object_new_string(ks_bpffs_root));
	a = json_object_new_array();
	for (int i = 0; i < s->nsh; i++) {
		x = json_object_new_object();
		json_object_object_add(x, "name", json_object_new_string(s->sh[i].name));
		json_object_object_add(x, "mode", json_object_new_string(ks_mode_str(s->sh[i].cfg.mode)));
		json_object_object_add(x, "variant", json_object_new_string(s->sh[i].cfg.variant));
		json_object_object_add(x, "links", json_object_new_int(s->sh[i].nlinks));
		json_object_object_add(x, "syscall_programs", json_object_new_int(s->sh[i].nsys));
		json_object_object_add(x, "hits", json_object_new_uint64(
			s->sh[i].hits[0] + s->sh[i].hits[1] + s->sh[i].hits[2]));
		json_object_object_add(x, "refused", json_object_new_uint64(s->sh[i].hits[KS_VERDICT_REFUSED]));
		json_object_object_add(x, "audited", json_object_new_uint64(s->sh[i].hits[KS_VERDICT_AUDITED]));
		json_object_object_add(x, "killed", json_object_new_uint64(s->sh[i].hits[KS_VERDICT_KILLED]));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "shields", a);
	x = json_object_new_object();
	json_object_object_add(x, "programs", json_object_new_int(s->nsys));
	json_object_object_add(x, "sys_enter", json_object_new_boolean(s->sys_enter));
	json_object_object_add(x, "sys_exit", json_object_new_boolean(s->sys_exit));
	json_object_object_add(o, "syscall_dispatcher", x);
	x = json_object_new_object();
	json_object_object_add(x, "programs", json_object_new_int(s->nfp));
	json_object_object_add(x, "lsm", json_object_new_boolean(s->fp_attached & 1));
	json_object_object_add(x, "fmod_ret", json_object_new_boolean(s->fp_attached & 2));
	json_object_object_add(o, "file_permission_dispatcher", x);
	x = json_object_new_object();
	json_object_object_add(x, "pinned", json_object_new_boolean(s->monitor_pinned));
	json_object_object_add(x, "links", json_object_new_int(s->monitor_links));
	json_object_object_add(o, "monitor", x);
	x = json_object_new_object();
	json_object_object_add(x, "pinned", json_object_new_boolean(s->maps_pinned));
	json_object_object_add(x, "lost", json_object_new_uint64(s->lost_total));
	json_object_object_add(o, "ringbuf", x);
	x = json_object_new_object();
	json_object_object_add(x, "path", json_object_new_string(s->store));
	json_object_object_add(x, "exists", json_object_new_boolean(s->store_bytes >= 0));
	if (s->store_bytes >= 0) {
		json_object_object_add(x, "bytes", json_object_new_int64(s->store_bytes));
		json_object_object_add(x, "events", json_object_new_int64(s->events));
		json_object_object_add(x, "newest_ns", json_object_new_int64(s->newest_ns));
	}
	if (s->store_err[0])
		json_object_object_add(x, "error", json_object_new_string(s->store_err));
	json_object_object_add(o, "store", x);
	x = json_object_new_object();
	json_object_object_add(x, "loaded", json_object_new_boolean(s->guard.loaded));
	json_object_object_add(x, "state", json_object_new_string(
		!s->guard.loaded ? "off" : !s->guard.lsm ? (s->guard.enabled ? "unavailable" : "off")
		: s->guard.enabled ? "on" : "off"));
	json_object_object_add(x, "lsm", json_object_new_boolean(s->guard.lsm));
	if (s->guard.loaded) {
		__u64 t = 0;

		for (int i = 1; i < KS_TAMPER_OP_MAX; i++)
			t += s->guard.attempts[i];
		json_object_object_add(x, "attempts", json_object_new_uint64(t));
	}
	json_object_object_add(o, "guard", x);
	ks_json_print(o);
}

/* @when: the newest event's time, already formatted. */
static void print_status_plain(const struct status *s, const char *when)
{
	printf("agent:     %s", s->agent_pid ? "running" : "not running\n");
	if (s->agent_pid)
		printf(" (pid %u)\n", s->agent_pid);
	printf("bpffs:     %s\n", ks_bpffs_root);
	printf("shields:   %d pinned\n", s->nsh);
	for (int i = 0; i < s->nsh; i++)
		printf("  %-24s %-8s %-10s links %d  syscall programs %d  refused %llu audited %llu killed %llu\n",
		       s->sh[i].name, ks_mode_str(s->sh[i].cfg.mode), s->sh[i].cfg.variant, s->sh[i].nlinks, s->sh[i].nsys,
		       (unsigned long long)s->sh[i].hits[KS_VERDICT_REFUSED],
		       (unsigned long long)s->sh[i].hits[KS_VERDICT_AUDITED],
		       (unsigned long long)s->sh[i].hits[KS_VERDICT_KILLED]);
	printf("syscalls:  %d programs behind one dispatcher (sys_enter %s, sys_exit %s)\n",
	       s->nsys, s->sys_enter ? "attached" : "off", s->sys_exit ? "attached" : "off");
	printf("file_permission: %d programs behind one dispatcher (%s)\n", s->nfp,
	       s->fp_attached == 3 ? "lsm and fmod_ret attached" : s->fp_attached == 1 ? "lsm attached" :
	       s->fp_attached == 2 ? "fmod_ret attached" : "off");
	printf("monitor:   %s", s->monitor_pinned ? "" : "not pinned\n");
	if (s->monitor_pinned)
		printf("pinned, %d links\n", s->monitor_links);
	printf("ringbuf:   %s, %llu events lost\n", s->maps_pinned ? "pinned" : "not pinned",
	       (unsigned long long)s->lost_total);
	if (s->store_bytes < 0)
		printf("store:     %s (does not exist)\n", s->store);
	else
		printf("store:     %s, %.1f MiB, %lld events, newest %s%s%s\n", s->store,
		       s->store_bytes / 1048576.0, s->events, when,
		       s->store_err[0] ? "; error: " : "", s->store_err);
	printf("guard:     %s\n", guard_word(s));
}

int do_status(int argc, char **argv)
{
	const char *cfgpath = KS_CONFIG_DEFAULT, *store = NULL;
	struct status s = {};
	struct ks_config cfg;
	int err;
	char when[64];
	const struct ks_opt opts[] = { OPT_VAL("--config", &cfgpath), OPT_VAL("--store", &store), OPT_END };

	if (!ks_opts_parse("status", opts, argc, argv, 0, NULL, do_status_help, &err))
		return err;
	ks_config_defaults(&cfg);
	err = ks_config_load(&cfg, cfgpath, cfgpath != (const char *)KS_CONFIG_DEFAULT);
	if (err)
		return ks_report(err);
	if (cfg.bpffs[0] && !getenv("KSHIELD_BPFFS") && !strcmp(ks_bpffs_root, KS_PIN_ROOT_DEFAULT))
		ks_bpffs_root = strdup(cfg.bpffs);
	s.guard_err = ks_guard_get(&s.guard);
	find_agent(&s);
	/* the store asked for, else the running agent's, else the config's */
	static char running[PATH_MAX];
	if (!store && getenv("KSHIELD_STORE") && *getenv("KSHIELD_STORE"))
		store = getenv("KSHIELD_STORE");
	if (!store && s.agent_pid && agent_store(s.agent_pid, running, sizeof(running)))
		store = running;
	s.store = store ? store : cfg.store;
	read_lost(&s);
	read_monitor(&s);
	read_store(&s);
	err = ks_shield_list(&s.sh, &s.nsh);
	if (err)
		return ks_report(err);
	fmt_time(s.newest_ns, when, sizeof(when));
	ks_sysd_count(&s.nsys, &s.sys_enter, &s.sys_exit);
	ks_fpd_count(&s.nfp, &s.fp_attached);

	if (json_output)
		print_status_json(&s);
	else
		print_status_plain(&s, when);
	free(s.sh);
	return 0;
}
