// SPDX-License-Identifier: MIT
/* syschain.c - see syschain.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syschain.h"

static const char *const hook_name[KS_SYS_HOOKS] = { "enter", "exit", "enter32", "exit32" };

const char *ks_sys_hook_name(int hook)
{
	return hook >= 0 && hook < KS_SYS_HOOKS ? hook_name[hook] : "?";
}

/* Pool entry @k: the chain indices above KS_SYS_NR_HOOKED of each hook,
 * which no syscall number reaches. */
static __u32 pool_entry(__u32 k)
{
	const __u32 per = KS_SYS_NR_MAX - KS_SYS_NR_HOOKED;

	return KS_SYS_CHAIN(k / per, KS_SYS_NR_HOOKED + k % per);
}

/* The direction (0 entry, 1 exit) of a hook. */
static int dir_of(int hook)
{
	return hook == KS_SYS_EXIT || hook == KS_SYS_EXIT32;
}

int ks_sys_table_build(const struct ks_sys_slot *s, __u32 n, struct ks_sys_table *t,
		       char *why, size_t len)
{
	const __u32 nch = KS_SYS_HOOKS * KS_SYS_NR_MAX;
	__u16 *tail = calloc(nch, sizeof(*tail));	/* a head's last segment */
	__u32 pool = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!tail) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (__u32 i = 0; i < nch; i++)
		t->ch[i].sock_arg = -2;	/* no program yet */
	for (__u32 i = 0; i < n; i++) {
		if (!s[i].prog_id)
			continue;
		for (int r = 0; r < s[i].nregs && r < KS_SYS_REGS; r++) {
			int hook = s[i].reg[r].hook, nr = s[i].reg[r].nr;
			__u32 head = KS_SYS_CHAIN(hook, nr);
			struct ks_sys_chain *h = &t->ch[head], *c;

			if (hook >= KS_SYS_HOOKS || nr >= KS_SYS_NR_HOOKED) {
				snprintf(why, len, "%s: bad registration %d of syscall %d",
					 s[i].prog, hook, nr);
				err = -EINVAL;
				goto out;
			}
			if (s[i].paused && dir_of(hook))
				continue;	/* ks_sysd_set_audit */
			if (h->sock_arg == -2 || (h->sock_arg >= 0 && h->sock_arg == s[i].sock_arg)) {
				h->sock_arg = s[i].sock_arg;
				h->families |= s[i].families;
			} else {
				h->sock_arg = -1;	/* some program wants every call */
			}
			if (!h->segs) {
				h->segs = 1;
				tail[head] = head;
			}
			c = &t->ch[tail[head]];
			if (c->n == KS_SYS_CHAIN_LEN) {
				if (h->segs == KS_SYS_SEGS) {
					snprintf(why, len, "%s: more than %d programs at %s of syscall %d",
						 s[i].prog, KS_SYS_SEGS * KS_SYS_CHAIN_LEN,
						 hook_name[hook], nr);
					err = -E2BIG;
					goto out;
				}
				if (pool == KS_SYS_XSEGS) {
					snprintf(why, len, "%s: the syscall dispatcher's %d further "
						 "segments of 32 programs are all taken", s[i].prog,
						 KS_SYS_XSEGS);
					err = -ENOSPC;
					goto out;
				}
				c->next = pool_entry(pool++);
				tail[head] = c->next;
				h->segs++;
				c = &t->ch[c->next];
			}
			c->slot[c->n++] = i;
			if (h->segs > t->segs[dir_of(hook)])
				t->segs[dir_of(hook)] = h->segs;
		}
	}
	for (__u32 i = 0; i < nch; i++) {
		struct ks_sys_chain *h = &t->ch[i];

		if (h->sock_arg < 0) {
			h->sock_arg = -1;
			h->families = 0;
		}
		/* a chain's further segments take its filter */
		for (__u32 k = h->segs ? h->next : 0; k; k = t->ch[k].next) {
			t->ch[k].sock_arg = h->sock_arg;
			t->ch[k].families = h->families;
		}
	}
	for (__u32 nr = 0; nr < KS_SYS_NR_HOOKED; nr++) {
		for (int dir = 0; dir < 2; dir++) {
			const struct ks_sys_chain *nat = &t->ch[KS_SYS_CHAIN(dir, nr)];
			const struct ks_sys_chain *c32 = &t->ch[KS_SYS_CHAIN(dir + KS_SYS_ENTER32, nr)];
			int segs = nat->segs > c32->segs ? nat->segs : c32->segs;

			t->ch[KS_SYS_CHAIN(dir, nr)].abi32 = c32->n > 0;
			for (int k = 0; k < segs; k++)
				t->bits.w[dir][k][nr / 64] |= 1ULL << (nr % 64);
		}
	}
out:
	free(tail);
	return err;
}
