// SPDX-License-Identifier: MIT
/* sysdispatch.c - see sysdispatch.h and bpf/sdk/syscalls.bpf.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <kshield/syscalls.h>
#include "btf_find.h"
#include "err.h"
#include "file.h"
#include "fit.h"
#include "meta.h"
#include "pins.h"
#include "sysdispatch.h"
#include "slot_keep.h"
#include "syschain.h"
#include "sysdispatch.skel.h"
#include "sysdispatch_nobtf.skel.h"

#define KS_PIN_DISPATCH "dispatch"
#define NOLOOP "__noloop"
#define COMPAT32 "__compat32"

/* The metadata value of @prefix<prog>, else of @prefix<prog without
 * @suffix> for each suffix given. */
static const char *prog_key(const struct ks_meta *meta, const char *prefix, const char *prog,
			    bool strip_compat32)
{
	char key[160], base[128];
	const char *v;
	size_t n;

	snprintf(key, sizeof(key), "%s%s", prefix, prog);
	if ((v = ks_meta_get(meta, key)))
		return v;
	snprintf(base, sizeof(base), "%s", prog);
	n = strlen(base);
	if (n > strlen(NOLOOP) && !strcmp(base + n - strlen(NOLOOP), NOLOOP)) {
		base[n - strlen(NOLOOP)] = '\0';
		snprintf(key, sizeof(key), "%s%s", prefix, base);
		if ((v = ks_meta_get(meta, key)))
			return v;
	}
	n = strlen(base);
	if (strip_compat32 && n > strlen(COMPAT32) && !strcmp(base + n - strlen(COMPAT32), COMPAT32)) {
		base[n - strlen(COMPAT32)] = '\0';
		snprintf(key, sizeof(key), "%s%s", prefix, base);
		return ks_meta_get(meta, key);
	}
	return NULL;
}

bool ks_sysd_is_dispatched(const struct bpf_program *prog, const struct ks_meta *meta)
{
	return meta && prog_key(meta, "sys.", bpf_program__name(prog), false);
}

/* "enter32 187, 239" into @s's registrations; numbers of -1 (a call the
 * ABI lacks) are skipped. */
static int parse_reg(const char *v, struct ks_sys_slot *s, char *why, size_t len)
{
	char buf[256], *p, *tok, *save;
	int hook;

	snprintf(buf, sizeof(buf), "%s", v);
	p = strchr(buf, ' ');
	if (!p)
		goto bad;
	*p++ = '\0';
	for (hook = 0; hook < KS_SYS_HOOKS && strcmp(buf, ks_sys_hook_name(hook)); hook++)
		;
	if (hook == KS_SYS_HOOKS)
		goto bad;
	for (tok = strtok_r(p, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		char *end;
		long nr = strtol(tok[0] == '(' ? tok + 1 : tok, &end, 0);

		if (nr < 0)
			continue;
		if (end == tok || nr >= KS_SYS_NR_HOOKED || s->nregs >= KS_SYS_REGS)
			goto bad;
		s->reg[s->nregs].hook = hook;
		s->reg[s->nregs++].nr = nr;
	}
	return 0;
bad:
	snprintf(why, len, "%s: bad syscall registration \"%s\" (want \"enter|exit|enter32|exit32 "
		 "NR,...\", at most %d numbers below %d)", s->prog, v, KS_SYS_REGS, KS_SYS_NR_HOOKED);
	return -EINVAL;
}

/* "0 16" or "2 2, 10, 16": the socket filter of @s. */
static int parse_filter(const char *v, struct ks_sys_slot *s, char *why, size_t len)
{
	char buf[128], *tok, *save, *end;
	long arg;

	s->sock_arg = -1;
	if (!v)
		return 0;
	snprintf(buf, sizeof(buf), "%s", v);
	tok = strtok_r(buf, " ", &save);
	arg = tok ? strtol(tok, &end, 0) : -1;
	if (arg < 0 || arg > 5 || *end)
		goto bad;
	while ((tok = strtok_r(NULL, ", ", &save))) {
		long f = strtol(tok, &end, 0);

		if (f < 0 || f > 63 || *end)
			goto bad;
		s->families |= 1ULL << f;
	}
	if (!s->families)
		goto bad;
	s->sock_arg = arg;
	return 0;
bad:
	snprintf(why, len, "%s: bad socket filter \"%s\" (want \"ARG FAMILY,...\", ARG 0-5, "
		 "families 0-63)", s->prog, v);
	return -EINVAL;
}

static int open_map(const char *name)
{
	char path[PATH_MAX];

	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/%s", name);
	return bpf_obj_get(path);
}

struct maps {
	int progs, chains, slots, bits;
};

static void maps_close(struct maps *m)
{
	ks_zclose(&m->progs);
	ks_zclose(&m->chains);
	ks_zclose(&m->slots);
	ks_zclose(&m->bits);
}

/* Write @bits into the instructions of @obj's programs (opened, not yet
 * loaded): every ld_imm64 of KS_SYS_BITS_MAGIC(dir, seg, word) gets that
 * word. Returns how many were written, or -errno. The magic's high half
 * ("KSBI") names no kernel address nor any constant of the dispatcher. */
static int patch_bits(struct bpf_object *obj, const struct ks_sys_bits *bits)
{
	const __u32 hi = KS_SYS_BITS_MAGIC(0, 0, 0) >> 32;
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, obj) {
		size_t cnt = bpf_program__insn_cnt(prog);
		struct bpf_insn *insns = malloc(cnt * sizeof(*insns));
		int here = 0, err = 0;

		if (!insns)
			return -ENOMEM;
		memcpy(insns, bpf_program__insns(prog), cnt * sizeof(*insns));
		for (size_t i = 0; i + 1 < cnt; i++) {
			__u32 lo = insns[i].imm;

			if (insns[i].code != (BPF_LD | BPF_IMM | BPF_DW) || (__u32)insns[i + 1].imm != hi ||
			    (lo & 0xff000000) || ((lo >> 16) & 0xff) > 1 ||
			    ((lo >> 8) & 0xff) >= KS_SYS_SEGS || (lo & 0xff) >= KS_SYS_NR_HOOKED / 64)
				continue;
			__u64 w = bits->w[(lo >> 16) & 0xff][(lo >> 8) & 0xff][lo & 0xff];

			insns[i].imm = (__u32)w;
			insns[++i].imm = w >> 32;
			here++;
		}
		if (here)
			err = bpf_program__set_insns(prog, insns, cnt);
		free(insns);
		if (err)
			return err;
		n += here;
	}
	return n;
}

/* The dispatcher's object, opened and fitted (ks_fit_nobtf): on a kernel
 * without BTF of its own the twin whose ksyms need none
 * (sysdispatch_nobtf.bpf.c); with @bits (NULL: none) written into its
 * programs. */
static struct bpf_object *disp_open(struct bpf_object_open_opts *opts,
				    const struct ks_sys_bits *bits)
{
	static const struct ks_sys_bits none;
	size_t len;
	const void *elf = ks_btf_kernel_has() ? sysdispatch_bpf__elf_bytes(&len)
					      : sysdispatch_nobtf_bpf__elf_bytes(&len);
	struct bpf_object *obj;
	int err;

	opts->object_name = "sysdispatch_bpf";
	obj = bpf_object__open_mem(elf, len, opts);
	if (!obj)
		return NULL;
	/* two directions, KS_SYS_SEGS programs each, a word per 64 numbers */
	err = patch_bits(obj, bits ? bits : &none);
	if (err >= 0 && err < 2 * KS_SYS_SEGS * (KS_SYS_NR_HOOKED / 64))
		err = -ENOEXEC;	/* a build whose bitmap immediates are not found */
	if (err >= 0)
		err = ks_fit_prepare(obj);
	if (err < 0) {
		bpf_object__close(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* The dispatcher's program for (@dir, @seg): ks_sys_enter, ks_sys_exit
 * for a chain's first segment, ks_sys_enter_<seg> for the further ones;
 * its link is pinned as <bpffs>/dispatch/link_<name>. */
static void prog_name(char *buf, size_t len, int dir, int seg)
{
	if (seg)
		snprintf(buf, len, "ks_sys_%s_%d", dir ? "exit" : "enter", seg);
	else
		snprintf(buf, len, "ks_sys_%s", dir ? "exit" : "enter");
}

static void link_pin(char *buf, size_t len, int dir, int seg)
{
	char name[32];

	prog_name(name, sizeof(name), dir, seg);
	ks_pin_path(buf, len, KS_PIN_DISPATCH "/" KS_PIN_LINK "%s", name);
}

/* Attach the dispatcher's programs for the first @t->segs[dir] segments
 * of each direction, carrying @t->bits, and pin them; unpin those not
 * wanted. A program attached with other bits (ks_sys_bits[0] records
 * them) is replaced: the new one is attached before the old one's pin is
 * renamed over, so that no call goes unchecked in between (one may run a
 * chain twice). */
static int attach(int bits_fd, const struct ks_sys_table *t)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	char maps[PATH_MAX], dir[PATH_MAX], pin[PATH_MAX], tmp[PATH_MAX + 8], name[32];
	bool need[2][KS_SYS_SEGS] = {}, any = false, stale;
	struct ks_sys_bits cur;
	struct bpf_object *obj;
	__u32 zero = 0;
	int err = 0;

	stale = bpf_map_lookup_elem(bits_fd, &zero, &cur) || memcmp(&cur, &t->bits, sizeof(cur));
	for (int d = 0; d < 2; d++) {
		for (int seg = 0; seg < KS_SYS_SEGS; seg++) {
			link_pin(pin, sizeof(pin), d, seg);
			if (seg >= t->segs[d])
				unlink(pin);
			else if (stale || access(pin, F_OK))
				any = need[d][seg] = true;
		}
	}
	if (!any)
		goto record;
	ks_pin_path(dir, sizeof(dir), KS_PIN_DISPATCH);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return ks_err(-errno, "can't create %s: %s", dir, strerror(errno));
	ks_pin_path(maps, sizeof(maps), "%s", KS_PIN_MAPS);
	opts.pin_root_path = maps;
	if ((err = ks_btf_open_opts(&opts)))
		return err;
	obj = disp_open(&opts, &t->bits);
	if (!obj)
		return ks_err(-errno, "can't open the syscall dispatcher: %s", strerror(errno));
	/* only the programs to attach: each one loaded is one more to verify */
	for (int d = 0; d < 2; d++) {
		for (int seg = 0; seg < KS_SYS_SEGS; seg++) {
			prog_name(name, sizeof(name), d, seg);
			bpf_program__set_autoload(bpf_object__find_program_by_name(obj, name),
						  need[d][seg]);
		}
	}
	err = bpf_object__load(obj);
	if (err) {
		err = ks_err(err, "can't load the syscall dispatcher: %s", strerror(-err));
		goto out;
	}
	for (int d = 0; d < 2 && !err; d++) {
		for (int seg = 0; seg < KS_SYS_SEGS && !err; seg++) {
			struct bpf_link *l;

			if (!need[d][seg])
				continue;
			link_pin(pin, sizeof(pin), d, seg);
			prog_name(name, sizeof(name), d, seg);
			/* bpffs names have no dots */
			ks_pin_path(tmp, sizeof(tmp), KS_PIN_DISPATCH "/new_" KS_PIN_LINK "%s", name);
			unlink(tmp);
			l = bpf_program__attach(bpf_object__find_program_by_name(obj, name));
			err = l ? bpf_link__pin(l, tmp) : -errno;
			if (!err && rename(tmp, pin))
				err = -errno;
			bpf_link__destroy(l);
			if (err) {
				unlink(tmp);
				err = ks_err(err, "can't attach the dispatcher's %s to raw_tp/sys_%s: %s",
					     name, d ? "exit" : "enter", strerror(-err));
			}
		}
	}
out:
	bpf_object__close(obj);
	if (err)
		return err;
record:
	if (stale && bpf_map_update_elem(bits_fd, &zero, &t->bits, 0))
		return ks_err(-errno, "can't write the dispatcher's bits: %s", strerror(errno));
	return 0;
}

/* The maps, the registry created by loading the dispatcher's object if no
 * one has yet. */
static int maps_open(struct maps *m)
{
	int err;

	m->progs = m->chains = m->bits = -1;
	m->slots = open_map("ks_sys_slots");
	m->bits = open_map("ks_sys_bits");
	if (m->slots < 0 || m->bits < 0) {
		/* none yet, or an older kshield's set without ks_sys_bits:
		 * loading the dispatcher makes what is missing */
		LIBBPF_OPTS(bpf_object_open_opts, opts);
		struct bpf_program *prog;
		char maps[PATH_MAX];
		struct bpf_object *obj;

		maps_close(m);
		m->slots = m->bits = -1;
		ks_pin_path(maps, sizeof(maps), "%s", KS_PIN_MAPS);
		opts.pin_root_path = maps;
		if ((err = ks_btf_open_opts(&opts)))
			return err;
		obj = disp_open(&opts, NULL);
		if (obj)	/* the maps alone */
			bpf_object__for_each_program(prog, obj)
				bpf_program__set_autoload(prog, false);
		err = obj ? bpf_object__load(obj) : -errno;
		bpf_object__close(obj);
		if (err)
			return ks_err(err, "can't load the syscall dispatcher: %s", strerror(-err));
		m->slots = open_map("ks_sys_slots");
		m->bits = open_map("ks_sys_bits");
	}
	m->progs = open_map("ks_sys_progs");
	m->chains = open_map("ks_sys_chains");
	if (m->slots < 0 || m->bits < 0 || m->progs < 0 || m->chains < 0) {
		err = -errno;
		maps_close(m);
		return ks_err(err, "can't open the syscall dispatcher's maps under %s/" KS_PIN_MAPS
			      ": %s", ks_bpffs_root, strerror(-err));
	}
	return 0;
}

static struct ks_sys_slot *slots_read(int fd)
{
	struct ks_sys_slot *s = calloc(KS_SYS_SLOTS, sizeof(*s));

	for (__u32 i = 0; s && i < KS_SYS_SLOTS; i++)
		if (bpf_map_lookup_elem(fd, &i, &s[i]))
			memset(&s[i], 0, sizeof(s[i]));
	return s;
}

/* Write every chain from the registry @s, and attach what they need.
 * Fails, writing nothing, when a chain would be longer than the
 * dispatcher's segments hold (syschain.c). */
static int rebuild(struct maps *m, const struct ks_sys_slot *s, char *why, size_t len)
{
	struct ks_sys_table *t = malloc(sizeof(*t));
	__u32 n = KS_SYS_HOOKS * KS_SYS_NR_MAX;
	__u32 *keys = calloc(n, sizeof(*keys));
	int err;

	if (!t || !keys) {
		err = -ENOMEM;
		snprintf(why, len, "out of memory");
		goto out;
	}
	err = ks_sys_table_build(s, KS_SYS_SLOTS, t, why, len);
	if (err)
		goto out;
	for (__u32 i = 0; i < n; i++)
		keys[i] = i;
	/* Chains before the programs whose bits send calls to them. */
	if (bpf_map_update_batch(m->chains, keys, t->ch, &n, NULL)) {
		err = -errno;
		snprintf(why, len, "can't write the dispatcher's chains: %s", strerror(-err));
		goto out;
	}
	err = attach(m->bits, t);
	if (err)
		snprintf(why, len, "%s", ks_errmsg());
out:
	free(t);
	free(keys);
	return err;
}

/* Remove the registrations for which @gone(slot) is true. */
static int drop_if(bool (*gone)(const struct ks_sys_slot *, const void *), const void *arg)
{
	struct ks_sys_slot *s;
	struct maps m;
	char why[256];
	int err, n = 0;

	err = maps_open(&m);
	if (err)
		return err;
	s = slots_read(m.slots);
	if (!s) {
		maps_close(&m);
		return ks_err(-ENOMEM, "out of memory");
	}
	for (__u32 i = 0; i < KS_SYS_SLOTS; i++) {
		if (s[i].prog_id && gone(&s[i], arg)) {
			memset(&s[i], 0, sizeof(s[i]));
			n++;
		}
	}
	if (!n)
		goto out;
	/* Chains first, so that no chain names a slot about to be emptied. */
	err = rebuild(&m, s, why, sizeof(why));
	if (err) {
		err = ks_err(err, "%s", why);
		goto out;
	}
	for (__u32 i = 0; i < KS_SYS_SLOTS; i++) {
		struct ks_sys_slot cur;

		if (s[i].prog_id || bpf_map_lookup_elem(m.slots, &i, &cur) || !cur.prog_id)
			continue;
		bpf_map_update_elem(m.slots, &i, &s[i], 0);
		bpf_map_delete_elem(m.progs, &i);
	}
out:
	free(s);
	maps_close(&m);
	return err < 0 ? err : n;
}

static bool owned_not_kept(const struct ks_sys_slot *s, const void *arg)
{
	return ks_slot_dropped(s->owner, sizeof(s->owner), s->prog_id, arg);
}

int ks_sysd_drop(const char *owner, const __u32 *keep, int nkeep)
{
	struct ks_slot_keep k = { owner, keep, nkeep };
	char path[PATH_MAX];
	int err;

	/* Nothing was ever registered: nothing to open or create. */
	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/ks_sys_slots");
	if (access(path, F_OK))
		return 0;
	err = drop_if(owned_not_kept, &k);
	return err < 0 ? err : 0;
}

static bool owner_gone(const struct ks_sys_slot *s, const void *arg)
{
	char path[PATH_MAX];

	(void)arg;
	ks_pin_path(path, sizeof(path), "%.*s", (int)sizeof(s->owner), s->owner);
	return access(path, F_OK) != 0;
}

int ks_sysd_sweep(void)
{
	char path[PATH_MAX];

	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/ks_sys_slots");
	if (access(path, F_OK))
		return 0;
	return drop_if(owner_gone, NULL);
}

int ks_sysd_add(const char *owner, struct bpf_object *obj, const struct ks_meta *meta,
		const struct ks_sysd_add_opts *o)
{
	bool audit = o->audit;
	__u32 *ids = o->ids;
	int max = o->max, *n = o->n;
	char *why = o->why;
	size_t len = o->whylen;
	struct bpf_program *prog;
	struct ks_sys_slot *s;
	struct maps m;
	__u32 added[KS_SYS_SLOTS];
	int err = 0, nadded = 0;
	__u32 next = 0;

	*n = 0;
	bpf_object__for_each_program(prog, obj)
		if (bpf_program__autoload(prog) && ks_sysd_is_dispatched(prog, meta))
			break;
	if (!prog)
		return 0;
	err = maps_open(&m);
	if (err) {
		snprintf(why, len, "%s", ks_errmsg());
		return err;
	}
	s = slots_read(m.slots);
	if (!s) {
		maps_close(&m);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 ilen = sizeof(info);
		struct ks_sys_slot slot = {};
		int fd = bpf_program__fd(prog);

		if (!bpf_program__autoload(prog) || !ks_sysd_is_dispatched(prog, meta))
			continue;
		snprintf(slot.owner, sizeof(slot.owner), "%s", owner);
		snprintf(slot.prog, sizeof(slot.prog), "%s", bpf_program__name(prog));
		slot.paused = audit;
		err = parse_reg(prog_key(meta, "sys.", slot.prog, false), &slot, why, len);
		if (!err)
			err = parse_filter(prog_key(meta, "sysf.", slot.prog, true), &slot, why, len);
		if (err)
			goto fail;
		if (!slot.nregs)
			continue;	/* only calls this ABI lacks */
		if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
			err = -errno;
			snprintf(why, len, "%s: can't read its id: %s", slot.prog, strerror(-err));
			goto fail;
		}
		slot.prog_id = info.id;
		while (next < KS_SYS_SLOTS && s[next].prog_id)
			next++;
		if (next == KS_SYS_SLOTS) {
			err = -ENOSPC;
			snprintf(why, len, "%s: the syscall dispatcher's %d slots are all taken",
				 slot.prog, KS_SYS_SLOTS);
			goto fail;
		}
		if (bpf_map_update_elem(m.progs, &next, &fd, 0)) {
			err = -errno;
			snprintf(why, len, "%s: can't put it into the dispatcher: %s", slot.prog,
				 strerror(-err));
			goto fail;
		}
		s[next] = slot;
		added[nadded++] = next;
		if (*n < max)
			ids[(*n)++] = slot.prog_id;
	}
	err = rebuild(&m, s, why, len);
	if (err)
		goto fail;
	for (int i = 0; i < nadded; i++) {
		if (bpf_map_update_elem(m.slots, &added[i], &s[added[i]], 0)) {
			err = -errno;
			snprintf(why, len, "can't write the dispatcher's registry: %s", strerror(-err));
			goto fail;
		}
	}
	goto out;
fail:
	/* Nothing of @obj stays: its slots emptied, the chains rebuilt
	 * from what was registered before. */
	for (int i = 0; i < nadded; i++) {
		memset(&s[added[i]], 0, sizeof(s[added[i]]));
		bpf_map_update_elem(m.slots, &added[i], &s[added[i]], 0);
	}
	if (nadded) {
		char ignore[256];

		rebuild(&m, s, ignore, sizeof(ignore));
		for (int i = 0; i < nadded; i++)
			bpf_map_delete_elem(m.progs, &added[i]);
	}
	*n = 0;
out:
	free(s);
	maps_close(&m);
	return err;
}

int ks_sysd_count(int *nprogs, bool *enter, bool *exit)
{
	char path[PATH_MAX];
	struct ks_sys_slot slot;
	int fd;

	*nprogs = 0;
	ks_pin_path(path, sizeof(path), KS_PIN_DISPATCH "/" KS_PIN_LINK "ks_sys_enter");
	*enter = !access(path, F_OK);
	ks_pin_path(path, sizeof(path), KS_PIN_DISPATCH "/" KS_PIN_LINK "ks_sys_exit");
	*exit = !access(path, F_OK);
	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/ks_sys_slots");
	fd = ks_pin_open_ro(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : ks_err(-errno, "can't open %s: %s", path, strerror(errno));
	for (__u32 i = 0; i < KS_SYS_SLOTS; i++)
		if (!bpf_map_lookup_elem(fd, &i, &slot) && slot.prog_id)
			(*nprogs)++;
	close(fd);
	return 0;
}

struct ids {
	const __u32 *ids;
	int n;
};

static bool in_ids(const struct ks_sys_slot *s, const void *arg)
{
	const struct ids *k = arg;

	for (int i = 0; i < k->n; i++)
		if (k->ids[i] == s->prog_id)
			return true;
	return false;
}

int ks_sysd_drop_ids(const __u32 *ids, int n)
{
	struct ids k = { ids, n };
	int err;

	if (!n)
		return 0;
	err = drop_if(in_ids, &k);
	return err < 0 ? err : 0;
}

int ks_sysd_set_audit(const char *owner, bool audit)
{
	struct ks_sys_slot *s;
	char path[PATH_MAX], why[256];
	struct maps m;
	int err, n = 0;

	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/ks_sys_slots");
	if (access(path, F_OK))
		return 0;	/* nothing was ever registered */
	err = maps_open(&m);
	if (err)
		return err;
	s = slots_read(m.slots);
	if (!s) {
		maps_close(&m);
		return ks_err(-ENOMEM, "out of memory");
	}
	for (__u32 i = 0; i < KS_SYS_SLOTS; i++) {
		if (s[i].prog_id && !strncmp(s[i].owner, owner, sizeof(s[i].owner)) &&
		    s[i].paused != audit) {
			s[i].paused = audit;
			n++;
		}
	}
	if (!n)
		goto out;
	/* The registry first: a rebuild by anyone after this point (a load,
	 * a sweep) must agree with the chains written here. */
	for (__u32 i = 0; i < KS_SYS_SLOTS; i++)
		if (s[i].prog_id && !strncmp(s[i].owner, owner, sizeof(s[i].owner)))
			bpf_map_update_elem(m.slots, &i, &s[i], 0);
	err = rebuild(&m, s, why, sizeof(why));
	if (err)
		err = ks_err(err, "%s", why);
out:
	free(s);
	maps_close(&m);
	return err;
}

const void *ks_sysd_elf(size_t *len)
{
	return ks_btf_kernel_has() ? sysdispatch_bpf__elf_bytes(len)
				   : sysdispatch_nobtf_bpf__elf_bytes(len);
}
