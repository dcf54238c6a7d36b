// SPDX-License-Identifier: MIT
/* fpdispatch.c - see fpdispatch.h and bpf/sdk/fpchain.bpf.h. */
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
#include <kshield/fpdispatch.h>
#include "btf_find.h"
#include "err.h"
#include "file.h"
#include "fit.h"
#include "log.h"
#include "meta.h"
#include "pins.h"
#include "fpdispatch.h"
#include "slot_keep.h"
#include "fpdispatch.skel.h"

#define KS_PIN_DISPATCH "dispatch"
#define NOLOOP "__noloop"

static const char *const variant_prefix[KS_FP_VARIANTS] = { "lsm__", "fmod_ret__" };
static const char *const disp_prog[KS_FP_VARIANTS] = { "ks_fp_lsm", "ks_fp_fmod_ret" };
static const char *const progs_map[KS_FP_VARIANTS] = { "ks_fp_progs_lsm", "ks_fp_progs_fmod_ret" };

/* The variant of chain member @name ("lsm__X", "fmod_ret__X__noloop")
 * and X, or -1. */
static int prog_base(const char *name, char *base, size_t len)
{
	for (int v = 0; v < KS_FP_VARIANTS; v++) {
		size_t p = strlen(variant_prefix[v]), n;

		if (strncmp(name, variant_prefix[v], p))
			continue;
		snprintf(base, len, "%s", name + p);
		n = strlen(base);
		if (n > strlen(NOLOOP) && !strcmp(base + n - strlen(NOLOOP), NOLOOP))
			base[n - strlen(NOLOOP)] = '\0';
		return v;
	}
	return -1;
}

static const char *member_key(const struct ks_meta *meta, const char *prefix, const char *prog,
			      int *variant)
{
	char base[128], key[160];
	int v = prog_base(prog, base, sizeof(base));

	if (variant)
		*variant = v;
	if (v < 0)
		return NULL;
	snprintf(key, sizeof(key), "%s%s", prefix, base);
	return ks_meta_get(meta, key);
}

bool ks_fpd_is_chained(const struct bpf_program *prog, const struct ks_meta *meta)
{
	return meta && member_key(meta, "fp.", bpf_program__name(prog), NULL);
}

/* "0x2 0140000" or "0x2 0140000, 010000": the call's mask bits, then the
 * S_IF* types. NULL: no filter. */
static int parse_filter(const char *v, struct ks_fp_slot *s, char *why, size_t len)
{
	char buf[128], *tok, *save, *end;

	s->all = 1;
	if (!v)
		return 0;
	snprintf(buf, sizeof(buf), "%s", v);
	tok = strtok_r(buf, " ", &save);
	if (!tok)
		goto bad;
	s->mask = strtoul(tok, &end, 0);
	if (*end || !s->mask)
		goto bad;
	while ((tok = strtok_r(NULL, ", ", &save))) {
		unsigned long t = strtoul(tok, &end, 0);

		if (*end || !t || (t & ~0170000ul))
			goto bad;
		s->modes |= 1u << (t >> 12);
	}
	if (!s->modes)
		goto bad;
	s->all = 0;
	return 0;
bad:
	snprintf(why, len, "%s: bad file_permission filter \"%s\" (want \"MASK S_IFxxx,...\")",
		 s->prog, v);
	return -EINVAL;
}

int ks_fpd_filter(const struct ks_meta *meta, const char *prog, struct ks_fp_slot *s,
		  char *why, size_t len)
{
	int v;
	const char *f = member_key(meta, "fpf.", prog, &v);

	memset(s, 0, sizeof(*s));
	snprintf(s->prog, sizeof(s->prog), "%s", prog);
	if (v < 0 || !member_key(meta, "fp.", prog, NULL)) {
		snprintf(why, len, "%s: not a chained file_permission program", prog);
		return -ENOENT;
	}
	return parse_filter(f, s, why, len) ?: v;
}

static int open_map(const char *name)
{
	char path[PATH_MAX];

	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/%s", name);
	return bpf_obj_get(path);
}

struct maps {
	int progs[KS_FP_VARIANTS], chains, slots;
};

static void maps_close(struct maps *m)
{
	for (int v = 0; v < KS_FP_VARIANTS; v++)
		ks_zclose(&m->progs[v]);
	ks_zclose(&m->chains);
	ks_zclose(&m->slots);
}

/* The dispatcher's object with only @variant's program (-1: none: the
 * maps alone), loaded: its maps pinned by name, or reused. */
static struct bpf_object *disp_load(int variant, int *errp)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct bpf_program *prog;
	struct bpf_object *obj;
	char maps[PATH_MAX];
	size_t len;
	const void *buf = fpdispatch_bpf__elf_bytes(&len);
	int err;

	ks_pin_path(maps, sizeof(maps), "%s", KS_PIN_MAPS);
	opts.pin_root_path = maps;
	opts.object_name = "fpdispatch_bpf";
	if ((err = ks_btf_open_opts(&opts))) {
		*errp = err;
		return NULL;
	}
	obj = bpf_object__open_mem(buf, len, &opts);
	if (!obj) {
		*errp = ks_err(-errno, "can't open the file_permission dispatcher: %s",
			       strerror(errno));
		return NULL;
	}
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, variant >= 0 &&
					  !strcmp(bpf_program__name(prog), disp_prog[variant]));
	if ((err = ks_fit_prepare(obj)) || (err = bpf_object__load(obj))) {
		*errp = ks_err(err, "can't load the file_permission dispatcher%s%s: %s",
			       variant >= 0 ? " " : "", variant >= 0 ? disp_prog[variant] : "",
			       strerror(-err));
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/* Attach @variant's dispatcher program and pin its link, or unpin it. */
static int attach(int variant, bool want)
{
	char dir[PATH_MAX], pin[PATH_MAX];
	struct bpf_object *obj;
	struct bpf_link *l;
	int err = 0;

	ks_pin_path(dir, sizeof(dir), KS_PIN_DISPATCH);
	ks_pin_path(pin, sizeof(pin), KS_PIN_DISPATCH "/" KS_PIN_LINK "%s", disp_prog[variant]);
	if (!access(pin, F_OK)) {
		if (!want)
			unlink(pin);
		return 0;
	}
	if (!want)
		return 0;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return ks_err(-errno, "can't create %s: %s", dir, strerror(errno));
	obj = disp_load(variant, &err);
	if (!obj)
		return err;
	l = bpf_program__attach(bpf_object__find_program_by_name(obj, disp_prog[variant]));
	err = l ? bpf_link__pin(l, pin) : -errno;
	bpf_link__destroy(l);
	if (err)
		err = ks_err(err, "can't attach the file_permission dispatcher %s: %s",
			     disp_prog[variant], ks_attach_strerror(err));
	bpf_object__close(obj);
	return err;
}

/* The maps, created by loading the dispatcher's object if no one has. */
static int maps_open(struct maps *m)
{
	int err;

	m->chains = -1;
	for (int v = 0; v < KS_FP_VARIANTS; v++)
		m->progs[v] = -1;
	m->slots = open_map("ks_fp_slots");
	if (m->slots < 0) {
		struct bpf_object *obj = disp_load(-1, &err);

		if (!obj)
			return err;
		bpf_object__close(obj);
		m->slots = open_map("ks_fp_slots");
	}
	for (int v = 0; v < KS_FP_VARIANTS; v++)
		m->progs[v] = open_map(progs_map[v]);
	m->chains = open_map("ks_fp_chains");
	if (m->slots < 0 || m->chains < 0 || m->progs[0] < 0 || m->progs[1] < 0) {
		err = -errno;
		maps_close(m);
		return ks_err(err, "can't open the file_permission dispatcher's maps under %s/"
			      KS_PIN_MAPS ": %s", ks_bpffs_root, strerror(-err));
	}
	return 0;
}

#define NSLOTS (KS_FP_VARIANTS * KS_FP_SLOTS)

static struct ks_fp_slot *slots_read(int fd)
{
	struct ks_fp_slot *s = calloc(NSLOTS, sizeof(*s));

	for (__u32 i = 0; s && i < NSLOTS; i++)
		if (bpf_map_lookup_elem(fd, &i, &s[i]))
			memset(&s[i], 0, sizeof(s[i]));
	return s;
}

/* Write @variant's chain from the registry @s (slot order), and attach
 * or detach its dispatcher program. */
static int rebuild(struct maps *m, const struct ks_fp_slot *s, int variant)
{
	const struct ks_fp_slot *vs = s + variant * KS_FP_SLOTS;
	struct ks_fp_chain ch = { .first = KS_FP_NONE };
	__u32 key = variant, prev = KS_FP_NONE;

	for (int i = 0; i < KS_FP_SLOTS; i++)
		ch.next[i] = KS_FP_NONE;
	for (__u32 i = 0; i < KS_FP_SLOTS; i++) {
		if (!vs[i].prog_id)
			continue;
		if (prev == KS_FP_NONE)
			ch.first = i;
		else
			ch.next[prev] = i;
		prev = i;
		ch.n++;
		ch.all |= vs[i].all;
		ch.mask |= vs[i].mask;
		ch.modes |= vs[i].modes;
	}
	/* Attached before the chain says to run anything, detached after. */
	if (ch.n) {
		int err = attach(variant, true);

		if (err)
			return err;
	}
	if (bpf_map_update_elem(m->chains, &key, &ch, 0))
		return ks_err(-errno, "can't write the file_permission chain: %s", strerror(errno));
	return ch.n ? 0 : attach(variant, false);
}

/* The object's ks_fp_self (its .data.ks_fp map): @slot. */
static int set_self(struct bpf_object *obj, __u32 slot)
{
	struct bpf_map *map;
	__u32 zero = 0;

	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);
		size_t l = strlen(n);

		if (l >= 5 && !strcmp(n + l - 5, "ks_fp"))
			return bpf_map__update_elem(map, &zero, sizeof(zero), &slot,
						    sizeof(slot), 0);
	}
	return -ENOENT;
}

/* Put @prog into its chain: its slot in the object, the prog array, the
 * chain, the registry. Undone on failure. */
static int register_one(struct maps *m, struct ks_fp_slot *s, const char *owner,
			struct bpf_object *obj, struct bpf_program *prog,
			const struct ks_meta *meta, __u32 *id, char *why, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info), slot, key;
	struct ks_fp_slot e = {};
	int fd = bpf_program__fd(prog), v, n = 0, err;
	struct ks_fp_slot *vs;

	if ((v = ks_fpd_filter(meta, bpf_program__name(prog), &e, why, len)) < 0)
		return v;
	snprintf(e.owner, sizeof(e.owner), "%s", owner);
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		err = -errno;
		snprintf(why, len, "can't read its id: %s", strerror(-err));
		return err;
	}
	e.prog_id = info.id;
	vs = s + v * KS_FP_SLOTS;
	slot = KS_FP_SLOTS;
	for (__u32 i = 0; i < KS_FP_SLOTS; i++) {
		if (vs[i].prog_id)
			n++;
		else if (slot == KS_FP_SLOTS)
			slot = i;
	}
	if (n >= KS_FP_CHAIN_LEN || slot == KS_FP_SLOTS) {
		snprintf(why, len, "%d programs in the chain already (the kernel runs at most 33 "
			 "tail calls in a row)", n);
		return -E2BIG;
	}
	if ((err = set_self(obj, slot))) {
		snprintf(why, len, "can't write its slot (ks_fp_self): %s", strerror(-err));
		return err;
	}
	if (bpf_map_update_elem(m->progs[v], &slot, &fd, 0)) {
		err = -errno;
		snprintf(why, len, "the prog array refuses it: %s", strerror(-err));
		goto undo_self;
	}
	vs[slot] = e;
	if ((err = rebuild(m, s, v))) {
		snprintf(why, len, "%s", ks_errmsg());
		goto undo;
	}
	key = v * KS_FP_SLOTS + slot;
	if (bpf_map_update_elem(m->slots, &key, &e, 0)) {
		err = -errno;
		snprintf(why, len, "can't write the registry: %s", strerror(-err));
		goto undo;
	}
	*id = e.prog_id;
	return 0;
undo:
	memset(&vs[slot], 0, sizeof(vs[slot]));
	rebuild(m, s, v);
	bpf_map_delete_elem(m->progs[v], &slot);
undo_self:
	set_self(obj, KS_FP_NONE);
	return err;
}

/* Where the chain is refused: attach @prog on its own, as before, and
 * pin its link in @dir in place of its prog_ pin. */
static int attach_direct(const char *dir, struct bpf_program *prog, char *why, size_t len)
{
	char lpath[PATH_MAX], ppath[PATH_MAX];
	struct bpf_link *l = bpf_program__attach(prog);
	int err;

	if (!l) {
		err = -errno;
		snprintf(why, len, "%s: attach: %s", bpf_program__name(prog),
			 ks_attach_strerror(err));
		return err;
	}
	snprintf(lpath, sizeof(lpath), "%s/" KS_PIN_LINK "%s", dir, bpf_program__name(prog));
	err = bpf_link__pin(l, lpath);
	bpf_link__destroy(l);
	if (err) {
		snprintf(why, len, "can't pin %s: %s", lpath, strerror(-err));
		return err;
	}
	snprintf(ppath, sizeof(ppath), "%s/" KS_PIN_PROG "%s", dir, bpf_program__name(prog));
	unlink(ppath);
	return 0;
}

static void drop_ids(struct maps *m, struct ks_fp_slot *s, const __u32 *ids, int n);

int ks_fpd_add(const char *owner, const char *dir, struct bpf_object *obj,
	       const struct ks_meta *meta, const struct ks_fpd_add_opts *o)
{
	__u32 *ids = o->ids;
	int max = o->max, *n = o->n;
	char *why = o->why;
	size_t len = o->whylen;
	struct bpf_program *prog;
	struct ks_fp_slot *s = NULL;
	struct maps m = { .progs = { -1, -1 }, .chains = -1, .slots = -1 };
	char reason[256] = "";
	bool open = false;
	int err = 0;

	*n = 0;
	bpf_object__for_each_program(prog, obj) {
		__u32 id = 0;

		if (!bpf_program__autoload(prog) || !ks_fpd_is_chained(prog, meta))
			continue;
		if (!open) {
			open = true;
			if (maps_open(&m))
				snprintf(reason, sizeof(reason), "%s", ks_errmsg());
			else if (!(s = slots_read(m.slots)))
				snprintf(reason, sizeof(reason), "out of memory");
		}
		if (s && !register_one(&m, s, owner, obj, prog, meta, &id, reason, sizeof(reason))) {
			if (*n < max)
				ids[(*n)++] = id;
			continue;
		}
		ks_log("%s: the file_permission dispatcher is refused here (%s): attached on its own",
		       bpf_program__name(prog), reason);
		if ((err = attach_direct(dir, prog, why, len))) {
			if (s)
				drop_ids(&m, s, ids, *n);
			*n = 0;
			break;
		}
	}
	free(s);
	if (open)
		maps_close(&m);
	return err;
}

/* Remove the registrations for which @gone(slot) is true from every
 * chain, then from the prog arrays and the registry. */
static int drop_if(struct maps *m, struct ks_fp_slot *s,
		   bool (*gone)(const struct ks_fp_slot *, const void *), const void *arg)
{
	bool changed[KS_FP_VARIANTS] = {}, doomed[NSLOTS] = {};
	int err = 0, n = 0;

	for (__u32 i = 0; i < NSLOTS; i++) {
		if (s[i].prog_id && gone(&s[i], arg)) {
			memset(&s[i], 0, sizeof(s[i]));
			changed[i / KS_FP_SLOTS] = doomed[i] = true;
			n++;
		}
	}
	for (int v = 0; v < KS_FP_VARIANTS; v++)
		if (changed[v] && (err = rebuild(m, s, v)))
			return err;
	for (__u32 i = 0; i < NSLOTS; i++) {
		__u32 slot = i % KS_FP_SLOTS;

		if (!doomed[i])
			continue;
		bpf_map_update_elem(m->slots, &i, &s[i], 0);
		bpf_map_delete_elem(m->progs[i / KS_FP_SLOTS], &slot);
	}
	return n;
}

struct ids {
	const __u32 *ids;
	int n;
};

static bool in_ids(const struct ks_fp_slot *s, const void *arg)
{
	const struct ids *k = arg;

	for (int i = 0; i < k->n; i++)
		if (k->ids[i] == s->prog_id)
			return true;
	return false;
}

static void drop_ids(struct maps *m, struct ks_fp_slot *s, const __u32 *ids, int n)
{
	struct ids k = { ids, n };

	if (n)
		drop_if(m, s, in_ids, &k);
}

/* drop_if on the pinned registry, if there is one. */
static int drop_pinned(bool (*gone)(const struct ks_fp_slot *, const void *), const void *arg)
{
	char path[PATH_MAX];
	struct ks_fp_slot *s;
	struct maps m;
	int err;

	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/ks_fp_slots");
	if (access(path, F_OK))
		return 0;	/* nothing was ever registered */
	if ((err = maps_open(&m)))
		return err;
	s = slots_read(m.slots);
	err = s ? drop_if(&m, s, gone, arg) : ks_err(-ENOMEM, "out of memory");
	free(s);
	maps_close(&m);
	return err;
}

static bool owned_not_kept(const struct ks_fp_slot *s, const void *arg)
{
	return ks_slot_dropped(s->owner, sizeof(s->owner), s->prog_id, arg);
}

int ks_fpd_drop(const char *owner, const __u32 *keep, int nkeep)
{
	struct ks_slot_keep k = { owner, keep, nkeep };
	int err = drop_pinned(owned_not_kept, &k);

	return err < 0 ? err : 0;
}

int ks_fpd_drop_ids(const __u32 *ids, int n)
{
	struct ids k = { ids, n };
	int err = n ? drop_pinned(in_ids, &k) : 0;

	return err < 0 ? err : 0;
}

static bool owner_gone(const struct ks_fp_slot *s, const void *arg)
{
	char path[PATH_MAX];

	(void)arg;
	ks_pin_path(path, sizeof(path), "%.*s", (int)sizeof(s->owner), s->owner);
	return access(path, F_OK) != 0;
}

int ks_fpd_sweep(void)
{
	return drop_pinned(owner_gone, NULL);
}

int ks_fpd_count(int *nprogs, unsigned *attached)
{
	char path[PATH_MAX];
	struct ks_fp_slot slot;
	int fd;

	*nprogs = 0;
	*attached = 0;
	for (int v = 0; v < KS_FP_VARIANTS; v++) {
		ks_pin_path(path, sizeof(path), KS_PIN_DISPATCH "/" KS_PIN_LINK "%s", disp_prog[v]);
		if (!access(path, F_OK))
			*attached |= 1u << v;
	}
	ks_pin_path(path, sizeof(path), KS_PIN_MAPS "/ks_fp_slots");
	fd = ks_pin_open_ro(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : ks_err(-errno, "can't open %s: %s", path, strerror(errno));
	for (__u32 i = 0; i < NSLOTS; i++)
		if (!bpf_map_lookup_elem(fd, &i, &slot) && slot.prog_id)
			(*nprogs)++;
	close(fd);
	return 0;
}

const void *ks_fpd_elf(size_t *len)
{
	return fpdispatch_bpf__elf_bytes(len);
}
