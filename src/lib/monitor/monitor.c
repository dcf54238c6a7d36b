// SPDX-License-Identifier: MIT
/* monitor.c - start the BPF monitor or adopt the pinned one.
 *
 * The monitor must outlive the agent (events produced while the agent is
 * down wait in the pinned ring buffer) and must never be attached twice
 * (every event would be stored twice). So the agent first looks under
 * <bpffs>/monitor/: when a link pin exists for every program and the pinned
 * mon_config names this binary's object (FNV-1a hash of the skeleton's ELF
 * bytes), it adopts what is there and loads nothing. Otherwise it loads a
 * fresh instance, attaches it, and then swaps the link pins, so a stale or
 * partial monitor is replaced without a gap (records may be doubled for
 * that instant, never missing).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "btf_find.h"
#include "err.h"
#include "file.h"
#include "pins.h"
#include "sysinfo.h"
#include "fit.h"
#include "monitor.h"
#include "monitor.skel.h"

void ks_monitor_default_cfg(struct ks_monitor_cfg *cfg)
{
	/* Families exploits favour and servers rarely use: AF_AX25 3,
	 * AF_APPLETALK 5, AF_X25 9, AF_KEY 15, AF_NETLINK 16 (some protocols),
	 * AF_PACKET 17, AF_RDS 21, AF_PPPOX 24, AF_LLC 26, AF_CAN 29, AF_TIPC
	 * 30, AF_RXRPC 33, AF_ISDN 34, AF_PHONET 35, AF_IEEE802154 36,
	 * AF_CAIF 37, AF_ALG 38, AF_NFC 39, AF_VSOCK 40, AF_KCM 41,
	 * AF_QIPCRTR 42, AF_SMC 43, AF_XDP 44, AF_MCTP 45. */
	static const int fams[] = { 3, 5, 9, 15, 16, 17, 21, 24, 26, 29, 30, 33, 34,
				    35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45 };
	memset(cfg, 0, sizeof(*cfg));
	cfg->wakeup_every = 1024;
	for (size_t i = 0; i < ARRAY_SIZE(fams); i++)
		cfg->families |= 1ULL << fams[i];
	/* NETLINK_XFRM 6, NETLINK_NETFILTER 12, NETLINK_RDMA 20,
	 * NETLINK_CRYPTO 21 */
	cfg->netlink_protos = 1u << 6 | 1u << 12 | 1u << 20 | 1u << 21;
}

/* Flow accounting (the cgroup programs) attached? Off saves the per-packet
 * cost; the other programs do not depend on it. */
static bool flow_on = true;

void ks_monitor_set_flow(bool on)
{
	flow_on = on;
}

/* Per packet even where the kernel allows per call (testing the older
 * kernels' way on a newer one). */
static bool per_packet_forced;

void ks_monitor_set_flow_per_packet(bool on)
{
	per_packet_forced = on;
}

/* Per call needs the kernel's own BTF too: sock_send_length and
 * sock_recv_length are taken by tp_btf programs, which have no "__nobtf"
 * copies (no kernel without BTF of its own served is 6.5+). */
bool ks_monitor_flow_per_call(void)
{
	return !per_packet_forced && ks_kernel_flow_calls() && ks_btf_kernel_has();
}

static bool is_flow(const struct bpf_program *prog)
{
	return !strncmp(bpf_program__name(prog), "mon_flow_", 9);
}

/* Flow programs this kernel gets (bpf/monitor_flow.bpf.h): per call where every
 * send and receive passes the socket layer's tracepoints, per packet
 * (cgroup_skb) elsewhere; the UDP close hook on both. */
static bool flow_wanted(const struct bpf_program *prog)
{
	switch (bpf_program__type(prog)) {
	case BPF_PROG_TYPE_CGROUP_SKB:
		return flow_on && !ks_monitor_flow_per_call();
	case BPF_PROG_TYPE_CGROUP_SOCK:
		return flow_on;
	default:	/* tp_btf sock_*_length, cgroup sendmsg/recvmsg */
		return flow_on && ks_monitor_flow_per_call();
	}
}

/* How the watched syscalls are seen (bpf/monitor.bpf.c MON_SYSCALL): by
 * fentry/fexit on the syscall's own function where the kernel has BPF
 * trampolines, so that no other syscall pays; by the syscall tracepoints
 * elsewhere, which take every syscall of every task off the fast path.
 * -1 until known: the first load tries fentry and falls back. */
static int sys_fentry = -1;

static bool is_sys_fentry(const struct bpf_program *prog)
{
	enum bpf_attach_type at = bpf_program__expected_attach_type(prog);

	return bpf_program__type(prog) == BPF_PROG_TYPE_TRACING &&
	       (at == BPF_TRACE_FENTRY || at == BPF_TRACE_FEXIT);
}

static bool is_sys_tp(const struct bpf_program *prog)
{
	return bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT &&
	       !strncmp(bpf_program__section_name(prog), "tracepoint/syscalls/", 20);
}

/* Is @prog one this kernel and configuration get? */
static bool wanted(const struct bpf_program *prog)
{
	if (!ks_fit_kernel_btf(prog))
		return false;
	if (is_flow(prog))
		return flow_wanted(prog);
	/* mon_cookie4/6__nobtf: without a cgroup2 mount the connects go
	 * without their owner (as before 5.12) rather than no monitor at all */
	if (bpf_program__type(prog) == BPF_PROG_TYPE_CGROUP_SOCK_ADDR)
		return ks_cgroup2_path() != NULL;
	if (is_sys_fentry(prog))
		return sys_fentry == 1;
	if (is_sys_tp(prog))
		return sys_fentry != 1;
	return true;
}

bool ks_monitor_sys_fentry(void)
{
	return sys_fentry == 1;
}

static __u64 object_hash(void)
{
	size_t sz;
	const unsigned char *p = monitor_bpf__elf_bytes(&sz);
	__u64 h = 14695981039346656037ULL;

	for (size_t i = 0; i < sz; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void mon_path(char *buf, size_t len, const char *name)
{
	ks_pin_path(buf, len, KS_PIN_MONITOR "/%s", name);
}

/* Number of programs whose link pin exists; *all says whether every one. */
static int count_link_pins(struct bpf_object *obj, bool *all)
{
	struct bpf_program *prog;
	char path[PATH_MAX], name[128];
	int n = 0;

	*all = true;
	/* Not known yet in this process: the pins say how the pinned monitor
	 * watches syscalls. */
	if (sys_fentry < 0) {
		mon_path(path, sizeof(path), KS_PIN_LINK "mon_socket_fentry");
		if (!access(path, F_OK))
			sys_fentry = 1;
		mon_path(path, sizeof(path), KS_PIN_LINK "mon_socket_enter");
		if (!access(path, F_OK))
			sys_fentry = 0;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!wanted(prog))
			continue;
		snprintf(name, sizeof(name), KS_PIN_LINK "%s", bpf_program__name(prog));
		mon_path(path, sizeof(path), name);
		if (access(path, F_OK) == 0)
			n++;
		else
			*all = false;
	}
	return n;
}

static int open_pinned_as(const char *rel, int *fd, bool rdonly)
{
	char path[PATH_MAX];

	ks_pin_path(path, sizeof(path), "%s", rel);
	*fd = rdonly ? ks_pin_open_ro(path) : bpf_obj_get(path);
	if (*fd < 0)
		return ks_err(-errno, "can't open pinned %s: %s", path, strerror(errno));
	return 0;
}

static int open_pinned(const char *rel, int *fd)
{
	return open_pinned_as(rel, fd, false);
}

static int write_cfg(int fd, const struct ks_monitor_cfg *cfg)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(fd, &zero, cfg, BPF_ANY))
		return ks_err(-errno, "can't configure the monitor: %s", strerror(errno));
	return 0;
}

/* Flow off: drop the flow programs' link pins (that detaches them);
 * returns how many there were. */
static int unpin_flow_links(struct bpf_object *obj)
{
	struct bpf_program *prog;
	char path[PATH_MAX], name[128];
	int n = 0;

	bpf_object__for_each_program(prog, obj) {
		if (!is_flow(prog))
			continue;
		snprintf(name, sizeof(name), KS_PIN_LINK "%s", bpf_program__name(prog));
		mon_path(path, sizeof(path), name);
		n += !unlink(path);
	}
	return n;
}

/* Adopt: the pinned monitor is complete and ours. */
static int adopt(struct ks_monitor *m, __u64 hash, const struct ks_monitor_cfg *cfg)
{
	struct ks_monitor_cfg cur = {};
	__u32 zero = 0;
	int err;

	if ((err = open_pinned(KS_PIN_MONITOR "/mon_config", &m->config_fd)))
		return err;
	if (bpf_map_lookup_elem(m->config_fd, &zero, &cur) || cur.object_hash != hash)
		return -ESTALE;
	if ((err = open_pinned(KS_PIN_MONITOR "/mon_agent", &m->agent_fd)) ||
	    (err = open_pinned(KS_PIN_MAPS "/ks_events", &m->events_fd)) ||
	    (err = open_pinned(KS_PIN_MAPS "/ks_lost", &m->lost_fd)))
		return err;
	if (cfg) {
		struct ks_monitor_cfg c = *cfg;

		c.object_hash = hash;
		c.flags = flow_on ? c.flags & ~KS_MON_NO_FLOW : c.flags | KS_MON_NO_FLOW;
		if ((err = write_cfg(m->config_fd, &c)))
			return err;
	}
	m->adopted = true;
	return 0;
}

static void close_fds(struct ks_monitor *m)
{
	int *fds[] = { &m->events_fd, &m->lost_fd, &m->config_fd, &m->agent_fd };

	for (size_t i = 0; i < 4; i++)
		ks_zclose(fds[i]);
}

/* Remove the pins of the monitor's own maps (not links). */
static void unpin_maps(struct bpf_object *obj)
{
	struct bpf_map *map;
	char path[PATH_MAX];

	bpf_object__for_each_map(map, obj) {
		if (strncmp(bpf_map__name(map), "mon_", 4))
			continue;
		mon_path(path, sizeof(path), bpf_map__name(map));
		unlink(path);
	}
}

/* Link pins of programs an older monitor had and this one has not: their
 * programs would keep recording beside the new ones. */
static void unpin_stale_links(struct bpf_object *obj)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	mon_path(dir, sizeof(dir), "");
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (!ks_pin_is_link(de->d_name) ||
		    bpf_object__find_program_by_name(obj, de->d_name + 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

/* The skeleton does not attach cgroup programs (they need a cgroup): the
 * flow accounting goes on the cgroup2 root, so it sees every socket. */
static int attach_cgroup(struct monitor_bpf *skel)
{
	const char *cg = ks_cgroup2_path();
	int fd, err = 0;

	for (int i = 0; i < skel->skeleton->prog_cnt; i++) {
		struct bpf_program *prog = *skel->skeleton->progs[i].prog;
		struct bpf_link **link = skel->skeleton->progs[i].link;
		enum bpf_prog_type t = bpf_program__type(prog);

		if (*link || !bpf_program__autoload(prog) ||
		    (t != BPF_PROG_TYPE_CGROUP_SKB && t != BPF_PROG_TYPE_CGROUP_SOCK &&
		     t != BPF_PROG_TYPE_CGROUP_SOCK_ADDR))
			continue;
		if (!cg)
			return ks_err(-ENOENT, "no cgroup2 mount found in /proc/mounts "
				      "(mount -t cgroup2 none /sys/fs/cgroup)");
		fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return ks_err(-errno, "can't open %s: %s", cg, strerror(errno));
		*link = bpf_program__attach_cgroup(prog, fd);
		err = *link ? 0 : -errno;
		close(fd);
		if (err) {
			*link = NULL;
			return ks_err(err, "can't attach %s to %s: %s", bpf_program__name(prog), cg,
				      strerror(-err));
		}
	}
	return 0;
}

/* Whether a program of @type attached at @at may call helper @id: a tiny
 * program calling it is refused with "unknown func" / "invalid func" (older
 * kernels) or "cannot use helper" (newer ones, which libbpf 1.1's
 * libbpf_probe_bpf_helper() takes for a yes) when it may not; other
 * complaints are about the arguments, so the helper exists. */
static bool helper_ok(enum bpf_prog_type type, enum bpf_attach_type at, enum bpf_func_id id)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = id },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = at);
	char log[4096] = "";
	int fd;

	opts.log_buf = log;
	opts.log_size = sizeof(log);
	opts.log_level = 1;
	fd = bpf_prog_load(type, NULL, "GPL", insns, 3, &opts);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return !strstr(log, "unknown func") && !strstr(log, "invalid func") &&
	       !strstr(log, "cannot use helper");
}

/* Whether such programs may call everything ks_fill_hdr() calls. */
static bool knows_current(enum bpf_prog_type type, enum bpf_attach_type at)
{
	static const enum bpf_func_id ids[] = {
		BPF_FUNC_get_current_pid_tgid, BPF_FUNC_get_current_uid_gid,
		BPF_FUNC_get_current_comm, BPF_FUNC_get_current_cgroup_id,
		BPF_FUNC_get_current_task, BPF_FUNC_probe_read_kernel,
	};

	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		if (!helper_ok(type, at, ids[i]))
			return false;
	return true;
}

static int load(struct ks_monitor *m, __u64 hash, const struct ks_monitor_cfg *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct ks_monitor_cfg c;
	struct bpf_program *prog;
	struct bpf_map *map;
	char maps[PATH_MAX], path[PATH_MAX], name[128];
	int err, tries;

	ks_pin_path(maps, sizeof(maps), "%s", KS_PIN_MAPS);
	opts.pin_root_path = maps;
	if ((err = ks_btf_open_opts(&opts)))
		return err;
	for (tries = 0; tries < 2; tries++) {
		m->skel = monitor_bpf__open_opts(&opts);
		if (!m->skel)
			return ks_err(-errno, "can't open the monitor object: %s", strerror(errno));
		bpf_object__for_each_map(map, m->skel->obj) {
			if (strncmp(bpf_map__name(map), "mon_", 4) ||
			    !strcmp(bpf_map__name(map), "mon_wake"))
				continue;
			mon_path(path, sizeof(path), bpf_map__name(map));
			bpf_map__set_pin_path(map, path);
		}
		if (!tries && (err = ks_pins_migrate(m->skel->obj, m->migrated,
						     sizeof(m->migrated))) < 0)
			return err;
		if (sys_fentry < 0)
			/* try (none without the kernel's own BTF); load_or_fallback()
			 * says otherwise */
			sys_fentry = ks_btf_kernel_has();
		bpf_object__for_each_program(prog, m->skel->obj)
			bpf_program__set_autoload(prog, wanted(prog));
		if ((err = ks_fit_prepare(m->skel->obj)))
			return ks_err(err, "can't fit the monitor's maps to this kernel: %s",
				      strerror(-err));
		m->skel->rodata->skb_knows_current =
			knows_current(BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS);
		m->skel->rodata->sock_knows_current =
			knows_current(BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_RELEASE);
		err = monitor_bpf__load(m->skel);
		if (!err)
			break;
		/* A pinned map of an older, incompatible layout: drop the
		 * pins (the old programs keep their maps) and load fresh. */
		unpin_maps(m->skel->obj);
		monitor_bpf__destroy(m->skel);
		m->skel = NULL;
	}
	if (err == -ESRCH && !ks_btf_kernel_has())
		return ks_err(err, "can't load the monitor: its tp_btf programs (exec, fork, TCP "
			      "state) need the kernel's own BTF, which this kernel does not have");
	if (err)
		return ks_err(err, "can't load the monitor: %s (run with -v for the verifier log)",
			      strerror(-err));
	c = *cfg;
	c.object_hash = hash;
	c.flags = flow_on ? c.flags & ~KS_MON_NO_FLOW : c.flags | KS_MON_NO_FLOW;
	if ((err = write_cfg(bpf_map__fd(m->skel->maps.mon_config), &c)))
		return err;
	if ((err = ks_tracefs_ensure()))
		return err;
	if ((err = monitor_bpf__attach(m->skel)))
		return ks_err(err, "can't attach the monitor: %s", strerror(-err));
	if ((err = attach_cgroup(m->skel)))
		return err;
	/* New links are live: now swap the pins (dropping a stale link's
	 * last reference detaches it). */
	bpf_object__for_each_program(prog, m->skel->obj) {
		struct bpf_link **link = NULL;

		snprintf(name, sizeof(name), KS_PIN_LINK "%s", bpf_program__name(prog));
		mon_path(path, sizeof(path), name);
		unlink(path);
		if (!bpf_program__autoload(prog))
			continue;	/* flow off */
		/* the skeleton keeps links in the same order as programs */
		for (int i = 0; i < m->skel->skeleton->prog_cnt; i++)
			if (*m->skel->skeleton->progs[i].prog == prog)
				link = m->skel->skeleton->progs[i].link;
		if (!link || !*link)
			return ks_err(-ENOENT, "program %s has no link", bpf_program__name(prog));
		/* Before 5.15 tracepoint links cannot be pinned: they live as
		 * long as this process (the agent), and say so. */
		if (ks_fit_link_unpinnable(prog)) {
			m->unpinned++;
			continue;
		}
		if ((err = bpf_link__pin(*link, path)))
			return ks_err(err, "can't pin %s: %s", path, strerror(-err));
		m->nlinks++;
	}
	unpin_stale_links(m->skel->obj);
	m->events_fd = dup(bpf_map__fd(m->skel->maps.ks_events));
	m->lost_fd = dup(bpf_map__fd(m->skel->maps.ks_lost));
	m->config_fd = dup(bpf_map__fd(m->skel->maps.mon_config));
	m->agent_fd = dup(bpf_map__fd(m->skel->maps.mon_agent));
	return 0;
}

/* load(), and where fentry on the syscalls was tried and the kernel has no
 * BPF trampolines (the load refused, or the attach: arm64 before 6.0),
 * load() again with the syscall tracepoints. */
static int load_or_fallback(struct ks_monitor *m, __u64 hash, const struct ks_monitor_cfg *cfg)
{
	bool tried = sys_fentry < 0;
	int err = load(m, hash, cfg);

	if (!err || !tried || sys_fentry != 1)
		return err;
	char migrated[sizeof(m->migrated)];

	snprintf(m->sys_fentry_why, sizeof(m->sys_fentry_why), "%s", ks_errmsg());
	/* the first try already set aside the old-shape maps: say so still */
	memcpy(migrated, m->migrated, sizeof(migrated));
	close_fds(m);
	monitor_bpf__destroy(m->skel);
	m->skel = NULL;
	m->nlinks = m->unpinned = 0;
	sys_fentry = 0;
	err = load(m, hash, cfg);
	if (!m->migrated[0])
		memcpy(m->migrated, migrated, sizeof(migrated));
	return err;
}

int ks_monitor_start(struct ks_monitor *m, const struct ks_monitor_cfg *cfg)
{
	struct ks_monitor_cfg defcfg;
	struct monitor_bpf *probe;
	char dir[PATH_MAX];
	__u64 hash = object_hash();
	bool all;
	int err, n;

	memset(m, 0, sizeof(*m));
	m->events_fd = m->lost_fd = m->config_fd = m->agent_fd = -1;
	if ((err = ks_pins_init()))
		return err;
	mon_path(dir, sizeof(dir), "");
	if (mkdir(dir, 0700) && errno != EEXIST)
		return ks_err(-errno, "can't create %s: %s", dir, strerror(errno));

	probe = monitor_bpf__open();
	if (!probe)
		return ks_err(-errno, "can't open the monitor object: %s", strerror(errno));
	n = count_link_pins(probe->obj, &all);
	if (all) {
		err = adopt(m, hash, cfg);
		if (!err) {
			/* flow on with its links missing is not `all`: reloaded */
			if (!flow_on)
				m->flow_detached = unpin_flow_links(probe->obj);
			monitor_bpf__destroy(probe);
			m->nlinks = n;
			m->sys_fentry = sys_fentry == 1;
			return 0;
		}
		monitor_bpf__destroy(probe);
		close_fds(m);
		if (err != -ESTALE)
			return err;
	} else {
		monitor_bpf__destroy(probe);
	}
	m->replaced = n > 0;
	if (!cfg) {
		ks_monitor_default_cfg(&defcfg);
		cfg = &defcfg;
	}
	err = load_or_fallback(m, hash, cfg);
	m->sys_fentry = sys_fentry == 1;
	if (err || !m->unpinned) {
		/* Every link pinned: the pins hold the programs, the fds above
		 * the maps; the parsed object (BTF, programs: ~200 KB) goes. */
		if (err)
			close_fds(m);
		monitor_bpf__destroy(m->skel);
		m->skel = NULL;
	}
	return err;
}

void ks_monitor_close(struct ks_monitor *m)
{
	close_fds(m);
	if (m->skel) {
		/* Links are pinned: destroying the skeleton drops only our
		 * references, the pins keep the programs attached. */
		monitor_bpf__destroy(m->skel);
		m->skel = NULL;
	}
}

int ks_monitor_remove(void)
{
	char dir[PATH_MAX];

	mon_path(dir, sizeof(dir), "");
	ks_pins_remove_dir(dir);
	if (rmdir(dir) && errno != ENOENT)
		return ks_err(-errno, "can't remove %s: %s", dir, strerror(errno));
	return 0;
}

/* Add @fd's per-kind counts to the array in @ctx (slots it lacks: 0). */
static void add_lost(int fd, void *ctx)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *lost = ctx, *vals = ncpu > 0 ? calloc(ncpu, sizeof(*vals)) : NULL;

	for (__u32 k = 0; vals && k < KS_EV_KIND_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			lost[k] += vals[c];
	}
	free(vals);
}

int ks_monitor_read_lost(__u64 lost[KS_EV_KIND_MAX])
{
	int fd, err;

	memset(lost, 0, sizeof(__u64) * KS_EV_KIND_MAX);
	if (libbpf_num_possible_cpus() <= 0)
		return ks_err(-EINVAL, "can't count CPUs");
	if ((err = open_pinned_as(KS_PIN_MAPS "/ks_lost", &fd, true)))
		return err;
	add_lost(fd, lost);
	close(fd);
	ks_pins_old_maps("ks_lost", true, add_lost, lost);
	return 0;
}

/* The runs of @link's program that the kernel skipped: one program runs
 * once per CPU at a time, and a run that would overlap (a softirq
 * interrupting it; where tracepoints are preemptible, a task preempted
 * inside it) is dropped and counted in recursion_misses (5.12+; 0 before). */
static __u64 link_misses(int link)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	__u32 llen = sizeof(li), plen = sizeof(pi);
	int prog;

	if (bpf_obj_get_info_by_fd(link, &li, &llen) || (prog = bpf_prog_get_fd_by_id(li.prog_id)) < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(prog, &pi, &plen))
		pi.recursion_misses = 0;
	close(prog);
	return pi.recursion_misses;
}

/* The programs with a twin (bpf/monitor.bpf.c MON_TWIN), by slot. */
static const char *const twinned[KS_TWINS] = {
	[KS_TWIN_EXEC] = "mon_exec",
	[KS_TWIN_FORK] = "mon_fork",
	[KS_TWIN_SOCK] = "mon_sock_state",
};

/* Runs the twins did in their first's place, per slot, over CPUs. */
static void read_rescued(__u64 rescued[KS_TWINS])
{
	int ncpu = libbpf_num_possible_cpus(), fd;
	struct ks_mon_busy *v;

	memset(rescued, 0, sizeof(__u64) * KS_TWINS);
	if (ncpu <= 0 || open_pinned_as(KS_PIN_MONITOR "/mon_busy", &fd, true))
		return;
	if ((v = calloc(ncpu, sizeof(*v)))) {
		for (__u32 k = 0; k < KS_TWINS; k++)
			if (!bpf_map_lookup_elem(fd, &k, v))
				for (int c = 0; c < ncpu; c++)
					rescued[k] += v[c].rescued;
		free(v);
	}
	close(fd);
}

/* A program's runs lost: its skips, less those its twin did (a twin's own
 * skips lose nothing: it has work only while its first is busy, and that
 * run then shows as the first's skip). A "__nobtf" pair counts as the
 * pair it stands in for (same slot). */
static __u64 runs_lost(const char *prog, __u64 misses, const __u64 rescued[KS_TWINS])
{
	size_t n = strlen(prog), sfx = strlen(KS_NOBTF_SUFFIX);

	if (n > sfx && !strcmp(prog + n - sfx, KS_NOBTF_SUFFIX))
		n -= sfx;

	if (n > 5 && !strncmp(prog + n - 5, "_twin", 5))
		return 0;
	for (int k = 0; k < KS_TWINS; k++)
		if (strlen(twinned[k]) == n && !strncmp(prog, twinned[k], n))
			return misses > rescued[k] ? misses - rescued[k] : 0;
	return misses;
}

int ks_monitor_read_missed(__u64 *missed, char *which, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	__u64 rescued[KS_TWINS];
	struct dirent *d;
	size_t at = 0;
	DIR *dp;

	*missed = 0;
	if (which && len)
		*which = 0;
	mon_path(dir, sizeof(dir), "");
	if (!(dp = opendir(dir)))
		return ks_err(-errno, "can't read %s: %s", dir, strerror(errno));
	read_rescued(rescued);
	while ((d = readdir(dp))) {
		const char *prog = d->d_name + sizeof(KS_PIN_LINK) - 1;
		__u64 n;
		int fd;

		if (!ks_pin_is_link(d->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if ((fd = bpf_obj_get(path)) < 0)
			continue;
		n = runs_lost(prog, link_misses(fd), rescued);
		close(fd);
		*missed += n;
		if (n && which && at < len)
			at += snprintf(which + at, len - at, "%s%s %llu", at ? ", " : "", prog,
				       (unsigned long long)n);
	}
	closedir(dp);
	return 0;
}

int ks_monitor_flow_fill(__u32 *used, __u32 *max)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	__u64 key, next, *prev = NULL;
	int fd, err;

	*used = *max = 0;
	if ((err = open_pinned(KS_PIN_MONITOR "/mon_flows", &fd)))
		return err;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen))
		*max = info.max_entries;
	while (!bpf_map_get_next_key(fd, prev, &next) && *used < *max) {
		key = next;
		prev = &key;
		(*used)++;
	}
	close(fd);
	return 0;
}

int ks_monitor_read_agent(struct ks_agent_stats *st)
{
	__u32 zero = 0;
	int fd, err;

	memset(st, 0, sizeof(*st));
	if ((err = open_pinned_as(KS_PIN_MONITOR "/mon_agent", &fd, true)))
		return err;
	err = bpf_map_lookup_elem(fd, &zero, st) ? -errno : 0;
	close(fd);
	return err;
}

int ks_monitor_links(void)
{
	/* The object's programs, read once: opening it parses its BTF, which
	 * the agent's tamper check would do every few seconds. */
	static struct { char name[128]; bool flow; } progs[128];
	static int nprogs = -1;
	char path[PATH_MAX], name[160];
	int n = 0;

	if (nprogs < 0) {
		struct monitor_bpf *probe = monitor_bpf__open();
		struct bpf_program *prog;
		int i = 0;

		if (!probe)
			return -errno;
		bpf_object__for_each_program(prog, probe->obj) {
			if (i == (int)ARRAY_SIZE(progs)) {
				i = -1;		/* never: the monitor has fewer */
				break;
			}
			snprintf(progs[i].name, sizeof(progs[i].name), "%s", bpf_program__name(prog));
			progs[i++].flow = is_flow(prog);
		}
		monitor_bpf__destroy(probe);
		if (i < 0)
			return -E2BIG;
		nprogs = i;
	}
	for (int i = 0; i < nprogs; i++) {
		if (!flow_on && progs[i].flow)
			continue;
		snprintf(name, sizeof(name), KS_PIN_LINK "%s", progs[i].name);
		mon_path(path, sizeof(path), name);
		n += access(path, F_OK) == 0;
	}
	return n;
}

const void *ks_monitor_elf(size_t *len)
{
	return monitor_bpf__elf_bytes(len);
}
