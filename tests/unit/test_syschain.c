// SPDX-License-Identifier: MIT
/* test_syschain.c - the syscall dispatcher's tables as built from its
 * registry (src/lib/dispatch/syschain.c): a chain of any length up to
 * KS_SYS_SEGS segments of 32 runs in registry order, its further segments
 * in pool entries that no syscall number reaches, each with the chain's
 * filter; the bitmap the dispatcher reads first says, per direction and
 * segment, which numbers have that segment in either ABI, and the built
 * dispatcher carries one immediate per word of it for user space to
 * overwrite. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syschain.h"
#include "sysdispatch.h"

static struct ks_sys_slot *slots;
static struct ks_sys_table *t;
static char why[256];

static void setup(void)
{
	slots = calloc(KS_SYS_SLOTS, sizeof(*slots));
	t = malloc(sizeof(*t));
	cr_assert(slots && t);
}

static void teardown(void)
{
	free(slots);
	free(t);
}

TestSuite(syschain, .init = setup, .fini = teardown);

/* Slot @i: program @i + 1 on (@hook, @nr), with a socket filter on
 * argument @arg (-1: none) for @families. */
static void reg(int i, int hook, int nr, int arg, __u64 families)
{
	struct ks_sys_slot *s = &slots[i];
	int k = s->nregs++;

	s->prog_id = i + 1;
	s->sock_arg = arg;
	s->families = families;
	snprintf(s->prog, sizeof(s->prog), "p%d", i);
	s->reg[k].hook = hook;
	s->reg[k].nr = nr;
}

static bool bit(int dir, int seg, int nr)
{
	return t->bits.w[dir][seg][nr / 64] & (1ULL << (nr % 64));
}

/* The members of the chain at @head, in order, segment by segment. */
static int walk(__u32 head, __u16 *out, int max, int *segs)
{
	int n = 0;

	*segs = 0;
	for (__u32 k = head; ; k = t->ch[k].next) {
		const struct ks_sys_chain *c = &t->ch[k];

		cr_assert_leq(c->n, KS_SYS_CHAIN_LEN);
		if (k != head)	/* a pool entry: above every syscall number */
			cr_assert_geq(k % KS_SYS_NR_MAX, KS_SYS_NR_HOOKED, "segment at %u", k);
		for (int j = 0; j < c->n && n < max; j++)
			out[n++] = c->slot[j];
		(*segs)++;
		if (!c->next)
			break;
		cr_assert_eq(c->n, KS_SYS_CHAIN_LEN, "a segment before the last is not full");
	}
	return n;
}

Test(syschain, short_chain_is_one_segment)
{
	for (int i = 0; i < 5; i++)
		reg(i, KS_SYS_ENTER, 1, 0, 1ULL << 16);
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(t->ch[KS_SYS_CHAIN(KS_SYS_ENTER, 1)].n, 5);
	cr_expect_eq(t->ch[KS_SYS_CHAIN(KS_SYS_ENTER, 1)].segs, 1);
	cr_expect_eq(t->ch[KS_SYS_CHAIN(KS_SYS_ENTER, 1)].next, 0);
	cr_expect_eq(t->ch[KS_SYS_CHAIN(KS_SYS_ENTER, 1)].sock_arg, 0);
	cr_expect_eq(t->segs[0], 1);
	cr_expect_eq(t->segs[1], 0, "an exit program for no exit hook");
	cr_expect(bit(0, 0, 1));
	cr_expect(!bit(0, 1, 1));
	cr_expect(!bit(0, 0, 0) && !bit(0, 0, 110) && !bit(1, 0, 1), "a bit for an unhooked call");
}

/* 40 programs on one syscall: 32 in the head, 8 in one further segment,
 * in registry order; the dispatcher's second program is wanted for the
 * entry direction only, and only syscall 121 has its bit. */
Test(syschain, forty_members_in_two_segments)
{
	__u16 got[300];
	int segs, n;

	for (int i = 0; i < 40; i++)
		reg(i, KS_SYS_ENTER, 121, -1, 0);
	reg(40, KS_SYS_ENTER, 1, -1, 0);
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	n = walk(KS_SYS_CHAIN(KS_SYS_ENTER, 121), got, 300, &segs);
	cr_expect_eq(n, 40);
	cr_expect_eq(segs, 2);
	cr_expect_eq(t->ch[KS_SYS_CHAIN(KS_SYS_ENTER, 121)].segs, 2);
	for (int i = 0; i < n; i++)
		cr_expect_eq(got[i], i, "member %d is slot %u", i, got[i]);
	cr_expect_eq(t->segs[0], 2);
	cr_expect_eq(t->segs[1], 0);
	cr_expect(bit(0, 0, 121) && bit(0, 1, 121) && !bit(0, 2, 121));
	cr_expect(bit(0, 0, 1) && !bit(0, 1, 1), "syscall 1 has one segment");
	for (int nr = 0; nr < KS_SYS_NR_HOOKED; nr++)
		if (nr != 121)
			cr_expect(!bit(0, 1, nr), "second-segment bit for %d", nr);
}

/* Exactly 32: one full segment, no second. 33: a second of one. */
Test(syschain, segment_boundary)
{
	__u16 got[64];
	int segs;

	for (int i = 0; i < 32; i++)
		reg(i, KS_SYS_ENTER, 7, -1, 0);
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(walk(KS_SYS_CHAIN(KS_SYS_ENTER, 7), got, 64, &segs), 32);
	cr_expect_eq(segs, 1);
	cr_expect_eq(t->segs[0], 1);
	reg(32, KS_SYS_ENTER, 7, -1, 0);
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(walk(KS_SYS_CHAIN(KS_SYS_ENTER, 7), got, 64, &segs), 33);
	cr_expect_eq(segs, 2);
	cr_expect_eq(got[32], 32);
	cr_expect_eq(t->segs[0], 2);
}

/* The 32-bit chain of a number sets the same bits as the native one (the
 * dispatcher asks the ABI only after the bit), and the native head says
 * that the 32-bit chain is not empty. Further segments keep the filter. */
Test(syschain, abi32_and_filters_in_every_segment)
{
	int segs;
	__u16 got[128];

	for (int i = 0; i < 70; i++)
		reg(i, KS_SYS_ENTER32, 102, 0, 1ULL << 16);
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(walk(KS_SYS_CHAIN(KS_SYS_ENTER32, 102), got, 128, &segs), 70);
	cr_expect_eq(segs, 3);
	cr_expect(bit(0, 0, 102) && bit(0, 1, 102) && bit(0, 2, 102) && !bit(0, 3, 102));
	cr_expect(t->ch[KS_SYS_CHAIN(KS_SYS_ENTER, 102)].abi32);
	cr_expect_eq(t->ch[KS_SYS_CHAIN(KS_SYS_ENTER, 102)].n, 0);
	for (__u32 k = KS_SYS_CHAIN(KS_SYS_ENTER32, 102); k; k = t->ch[k].next) {
		cr_expect_eq(t->ch[k].sock_arg, 0, "segment %u filter", k);
		cr_expect_eq(t->ch[k].families, 1ULL << 16, "segment %u families", k);
	}
}

/* Paused owners' exit hooks stay out; an exit chain of 33 wants the
 * second exit program. */
Test(syschain, exit_segments_and_paused)
{
	for (int i = 0; i < 33; i++)
		reg(i, KS_SYS_EXIT, 56, -1, 0);
	slots[0].paused = 1;
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(t->ch[KS_SYS_CHAIN(KS_SYS_EXIT, 56)].segs, 1, "the paused one counted");
	cr_expect_eq(t->segs[1], 1);
	slots[0].paused = 0;
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(t->segs[1], 2);
	cr_expect(bit(1, 1, 56) && !bit(0, 0, 56));
}

/* Past KS_SYS_SEGS segments a load is refused with a message naming the
 * call, and nothing is half-built that the caller would write. */
Test(syschain, too_long_is_refused)
{
	int max = KS_SYS_SEGS * KS_SYS_CHAIN_LEN;

	for (int i = 0; i < max; i++)
		reg(i, KS_SYS_ENTER, 1, -1, 0);
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(t->segs[0], KS_SYS_SEGS);
	reg(max, KS_SYS_ENTER, 1, -1, 0);
	cr_expect_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), -E2BIG);
	cr_expect(strstr(why, "more than 256 programs at enter of syscall 1"), "why: %s", why);
}

/* Many long chains at once share the pool: 110 shields of 11 programs on
 * the same 11 calls, 10 each, as bench/harm.sh's s110 does. */
Test(syschain, many_long_chains)
{
	int i = 0, segs;
	__u16 got[128];

	for (int copy = 0; copy < 100; copy++)
		for (int nr = 40; nr < 50; nr++)
			reg(i++, KS_SYS_ENTER, nr, -1, 0);
	cr_assert_eq(ks_sys_table_build(slots, KS_SYS_SLOTS, t, why, sizeof(why)), 0, "%s", why);
	for (int nr = 40; nr < 50; nr++) {
		cr_expect_eq(walk(KS_SYS_CHAIN(KS_SYS_ENTER, nr), got, 128, &segs), 100);
		cr_expect_eq(segs, 4);
		for (int k = 0; k < 100; k++)
			cr_expect_eq(got[k], k * 10 + (nr - 40));
	}
	cr_expect_eq(t->segs[0], 4);
}

/* Every word of every (direction, segment) bitmap is an ld_imm64 of
 * KS_SYS_BITS_MAGIC in the built dispatcher (sysdispatch.c writes the
 * bits there before loading): none folded away by the compiler. */
Test(syschain, dispatcher_carries_every_bitmap_word)
{
	int seen[2][KS_SYS_SEGS][KS_SYS_NR_HOOKED / 64] = {};
	const __u32 hi = KS_SYS_BITS_MAGIC(0, 0, 0) >> 32;
	size_t len;
	const unsigned char *elf = ks_sysd_elf(&len);

	cr_assert(elf && len);
	for (size_t off = 0; off + 16 <= len; off += 8) {
		__u32 lo, h;

		memcpy(&lo, elf + off + 4, 4);
		memcpy(&h, elf + off + 12, 4);
		if (elf[off] != 0x18 || h != hi)
			continue;
		cr_assert_leq((lo >> 16) & 0xff, 1);
		cr_assert_lt((lo >> 8) & 0xff, KS_SYS_SEGS);
		cr_assert_lt(lo & 0xff, KS_SYS_NR_HOOKED / 64);
		seen[(lo >> 16) & 0xff][(lo >> 8) & 0xff][lo & 0xff]++;
	}
	for (int d = 0; d < 2; d++)
		for (int seg = 0; seg < KS_SYS_SEGS; seg++)
			for (int w = 0; w < KS_SYS_NR_HOOKED / 64; w++)
				cr_expect_geq(seen[d][seg][w], 1, "no immediate for dir %d segment %d word %d",
					      d, seg, w);
}
