// SPDX-License-Identifier: MIT
/* argtab.c - the names of shield event arguments, as each shield's object
 * declares them (see events.h and bpf/sdk/shield.bpf.h, KSHIELD_ARGS): the
 * metadata strings parsed into tables, one per shield, kept for the life
 * of the process and found by the shield's name.
 *
 * Tables are never freed or changed once made: a reader may hold an entry
 * while another thread learns a newer object of the same shield (the
 * agent's fleet loop), which only puts a new table in front.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "events.h"

struct vals {
	const char *name;
	struct ks_arg_val *v;	/* ends with a NULL name */
};

struct argtab {
	struct argtab *next;
	char *shield;
	char *blob;		/* owns every string below */
	struct vals *vals;
	int nvals;
	struct ks_shield_args_def *defs;
	int ndefs;
};

static struct argtab *tabs;	/* newest first */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void (*resolver)(const char *shield);

const struct ks_shield_args_def ks_shield_args_generic = {
	NULL, NULL, KS_ARG_ANY, 0, false,
	{ { "arg0", KS_ARG_UINT, NULL }, { "arg1", KS_ARG_UINT, NULL },
	  { "arg2", KS_ARG_UINT, NULL }, { "arg3", KS_ARG_UINT, NULL } },
};

static const struct {
	const char *name;
	enum ks_arg_fmt fmt;
} fmts[] = {
	{ "int", KS_ARG_INT }, { "uint", KS_ARG_UINT }, { "hex", KS_ARG_HEX },
	{ "bool", KS_ARG_BOOL }, { "fd", KS_ARG_FD }, { "errno", KS_ARG_ERRNO },
	{ "family", KS_ARG_FAMILY }, { "socktype", KS_ARG_SOCKTYPE },
	{ "syscall", KS_ARG_SYSCALL }, { "syscall32", KS_ARG_SYSCALL32 }, { "dev", KS_ARG_DEV },
	{ "str8", KS_ARG_STR8 }, { "enum", KS_ARG_ENUM }, { "flags", KS_ARG_FLAGS },
};

static int count_tokens(const char *s)
{
	int n = 0;

	while (*s) {
		s += strspn(s, " ");
		if (!*s)
			break;
		n++;
		s += strcspn(s, " ");
	}
	return n;
}

/* A number in decimal or 0x hex, the whole of @s. */
static bool parse_u64(const char *s, __u64 *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	return !errno && !*end;
}

/* "<table> <n>=<name> ..." into @t; false when malformed. */
static bool parse_vals(char *spec, struct vals *t)
{
	char *save, *tok = strtok_r(spec, " ", &save);
	int n = 0;

	if (!tok)
		return false;
	t->name = tok;
	t->v = calloc(count_tokens(save ? save : "") + 1, sizeof(*t->v));
	if (!t->v)
		return false;
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || !eq[1])
			return false;
		*eq = '\0';
		if (!parse_u64(tok, &t->v[n].v))
			return false;
		t->v[n++].name = eq + 1;
	}
	return true;
}

static const struct ks_arg_val *find_vals(const struct argtab *t, const char *name)
{
	for (int i = 0; i < t->nvals; i++)
		if (!strcmp(t->vals[i].name, name))
			return t->vals[i].v;
	return NULL;
}

/* One slot: "-" or "name:fmt" or "name:enum:table" / "name:flags:table". */
static bool parse_slot(const struct argtab *t, char *tok, struct ks_arg_def *a)
{
	char *fmt = strchr(tok, ':'), *table;
	size_t i;

	memset(a, 0, sizeof(*a));
	if (!strcmp(tok, "-"))
		return true;
	if (!fmt || fmt == tok)
		return false;
	*fmt++ = '\0';
	table = strchr(fmt, ':');
	if (table)
		*table++ = '\0';
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]) && strcmp(fmts[i].name, fmt); i++)
		;
	a->name = tok;
	/* a format this reader does not know (a later SDK's): the number */
	a->fmt = i < sizeof(fmts) / sizeof(fmts[0]) ? fmts[i].fmt : KS_ARG_UINT;
	if (i == sizeof(fmts) / sizeof(fmts[0]))
		return true;
	if (a->fmt == KS_ARG_ENUM || a->fmt == KS_ARG_FLAGS) {
		a->vals = table ? find_vals(t, table) : NULL;
		if (!a->vals) {
			a->fmt = KS_ARG_UINT;
			return false;
		}
	}
	return !table || a->fmt == KS_ARG_ENUM || a->fmt == KS_ARG_FLAGS;
}

/* "<hook>[?a<i>=<n>][~] <slot> <slot> <slot> <slot>" into @d. */
static bool parse_args(const struct argtab *t, char *spec, struct ks_shield_args_def *d)
{
	char *save, *hook = strtok_r(spec, " ", &save), *tok, *q;
	bool ok = true;
	int n = 0;

	if (!hook)
		return false;
	d->shield = t->shield;
	d->when = KS_ARG_ANY;
	d->fallback = false;
	d->is = 0;
	q = hook + strlen(hook);
	if (q > hook && q[-1] == '~') {
		d->fallback = true;
		*--q = '\0';
	}
	if ((q = strchr(hook, '?'))) {
		*q++ = '\0';
		if (q[0] != 'a' || q[1] < '0' || q[1] >= '0' + KS_SHIELD_ARGS || q[2] != '=' ||
		    !parse_u64(q + 3, &d->is))
			return false;
		d->when = q[1] - '0';
	}
	if (!*hook)
		return false;
	d->hook = hook;
	while ((tok = strtok_r(NULL, " ", &save))) {
		if (n == KS_SHIELD_ARGS)
			return false;
		ok &= parse_slot(t, tok, &d->arg[n++]);
	}
	for (; n < KS_SHIELD_ARGS; n++)
		memset(&d->arg[n], 0, sizeof(d->arg[n]));
	return ok;
}

int ks_shield_args_learn(const char *shield, char *const *keys, char *const *vals, int n)
{
	struct argtab *t = calloc(1, sizeof(*t));
	size_t size = strlen(shield) + 1;
	const char *bad = NULL;
	int nargs = 0, nv = 0;
	char *p;

	if (!t)
		return ks_err(-ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		bool a = !strcmp(keys[i], KS_ARGS_KEY), v = !strcmp(keys[i], KS_VALS_KEY);

		if (a || v)
			size += strlen(vals[i]) + 1;
		nargs += a;
		nv += v;
	}
	t->blob = p = malloc(size);
	t->defs = calloc(nargs + 1, sizeof(*t->defs));
	t->vals = calloc(nv + 1, sizeof(*t->vals));
	if (!t->blob || !t->defs || !t->vals) {
		free(t->blob);
		free(t->defs);
		free(t->vals);
		free(t);
		return ks_err(-ENOMEM, "out of memory");
	}
	t->shield = strcpy(p, shield);
	p += strlen(p) + 1;
	/* tables first: an entry may name one declared after it */
	for (int i = 0; i < n; i++) {
		if (strcmp(keys[i], KS_VALS_KEY))
			continue;
		strcpy(p, vals[i]);
		if (parse_vals(p, &t->vals[t->nvals])) {
			t->nvals++;
		} else {
			free(t->vals[t->nvals].v);
			t->vals[t->nvals].v = NULL;
			bad = bad ? bad : vals[i];
		}
		p += strlen(vals[i]) + 1;
	}
	for (int i = 0; i < n; i++) {
		if (strcmp(keys[i], KS_ARGS_KEY))
			continue;
		strcpy(p, vals[i]);
		if (parse_args(t, p, &t->defs[t->ndefs]))
			t->ndefs++;
		else if (!bad)
			bad = vals[i];
		p += strlen(vals[i]) + 1;
	}
	pthread_mutex_lock(&lock);
	t->next = tabs;
	tabs = t;
	pthread_mutex_unlock(&lock);
	if (bad)
		return ks_err(-EINVAL, "shield %s: event arguments '%s' not understood (kept the "
			      "%d other entries)", shield, bad, t->ndefs);
	return 0;
}

void ks_shield_args_set_resolver(void (*fn)(const char *shield))
{
	resolver = fn;
}

static struct argtab *tab_of(const char *shield)
{
	struct argtab *t;

	pthread_mutex_lock(&lock);
	for (t = tabs; t && strcmp(t->shield, shield); t = t->next)
		;
	pthread_mutex_unlock(&lock);
	return t;
}

int ks_shield_args_of(const char *shield, const struct ks_shield_args_def **defs)
{
	struct argtab *t = tab_of(shield);

	if (!t && resolver) {
		resolver(shield);
		t = tab_of(shield);
	}
	if (!t) {
		/* none anywhere: remembered, so that every row of it does
		 * not look again */
		ks_shield_args_learn(shield, NULL, NULL, 0);
		t = tab_of(shield);
	}
	*defs = t ? t->defs : NULL;
	return t ? t->ndefs : 0;
}

const struct ks_shield_args_def *ks_shield_args_find(const char *shield, const char *hook,
						     const __u64 a[KS_SHIELD_ARGS])
{
	const struct ks_shield_args_def *d, *plain = NULL, *fallback = NULL;
	int n = ks_shield_args_of(shield, &d);

	/* an entry whose condition holds, else the hook's plain one, else
	 * a header's fallback (bpf/sdk/nlwalk.bpf.h's) */
	for (int i = 0; i < n; i++) {
		if (strcmp(d[i].hook, hook))
			continue;
		if (d[i].when != KS_ARG_ANY) {
			if (a[d[i].when] == d[i].is)
				return &d[i];
		} else if (d[i].fallback) {
			fallback = fallback ? fallback : &d[i];
		} else {
			plain = plain ? plain : &d[i];
		}
	}
	return plain ? plain : fallback ? fallback : &ks_shield_args_generic;
}
