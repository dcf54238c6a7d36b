// SPDX-License-Identifier: MIT
/* kmodtree.c - a kernel build's modules by their symbol tables (kmodtree.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include "err.h"
#include "debugfile.h"
#include "kmodtree.h"

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void norm(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

static int push(char ***arr, size_t *n, const char *s)
{
	char **p;

	if (!(*n & (*n + 1)) || !*arr) {
		p = realloc(*arr, (2 * *n + 2) * sizeof(char *));
		if (!p)
			return -ENOMEM;
		*arr = p;
	}
	(*arr)[*n] = strdup(s);
	return (*arr)[(*n)++] ? 0 : -ENOMEM;
}

/* .modinfo's name= and depends= of @elf into @m. */
static int read_modinfo(Elf *elf, struct ks_kmod *m)
{
	Elf_Scn *scn = ks_elf_find_section(elf, ".modinfo");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t off = 0;

	if (!d || !d->d_buf)
		return 0;
	while (off < d->d_size) {
		const char *s = (const char *)d->d_buf + off;
		size_t len = strnlen(s, d->d_size - off);

		if (!strncmp(s, "depends=", 8) && len > 8) {
			char *list = strndup(s + 8, len - 8), *save = NULL, *tok;
			size_t n = 0;

			if (!list)
				return -ENOMEM;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				norm(tok);
				if (push(&m->deps, &n, tok)) {
					free(list);
					return -ENOMEM;
				}
			}
			m->ndeps = n;
			free(list);
		}
		off += len + 1;
	}
	return 0;
}

static int read_syms(Elf *elf, struct ks_kmod *m)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		cnt = d ? sh.sh_size / sizeof(Elf64_Sym) : 0;
		for (i = 1; i < cnt; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, i, &sym) || !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) ||
			    !*name)
				continue;
			if (sym.st_shndx == SHN_UNDEF) {
				if (push(&m->undefs, &m->nundefs, name))
					return -ENOMEM;
			} else if (GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				if (push(&m->defs, &m->ndefs, name))
					return -ENOMEM;
			}
		}
		break;
	}
	if (m->defs)
		qsort(m->defs, m->ndefs, sizeof(char *), str_cmp);
	if (m->undefs)
		qsort(m->undefs, m->nundefs, sizeof(char *), str_cmp);
	return 0;
}

static struct ks_kmodtree *scan_tree;
static int scan_err;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct ks_kmodtree *t = scan_tree;
	struct ks_elf_file f;
	struct ks_kmod *m;
	const char *base = path + ftw->base;
	size_t len = strlen(base);

	(void)st;
	if (type != FTW_F || len < 4 || strcmp(base + len - 3, ".ko"))
		return 0;
	if (!(t->n & (t->n + 1)) || !t->mod) {
		struct ks_kmod *p = realloc(t->mod, (2 * t->n + 2) * sizeof(*p));

		if (!p)
			return scan_err = -ENOMEM;
		t->mod = p;
	}
	m = &t->mod[t->n];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->name = strndup(base, len - 3);
	if (!m->path || !m->name)
		return scan_err = -ENOMEM;
	norm(m->name);
	t->n++;
	if (ks_elf_open(path, &f))
		return 0;	/* not ELF: not a module we can read */
	scan_err = read_modinfo(f.elf, m);
	if (!scan_err)
		scan_err = read_syms(f.elf, m);
	ks_elf_close(&f);
	return scan_err;
}

int ks_kmodtree_scan(const char *dir, struct ks_kmodtree *t)
{
	memset(t, 0, sizeof(*t));
	scan_tree = t;
	scan_err = 0;
	if (nftw(dir, visit, 32, FTW_PHYS) && !scan_err)
		return ks_err(-errno, "can't read the modules under %s: %s", dir, strerror(errno));
	if (scan_err)
		return ks_err(scan_err, "out of memory reading the modules under %s", dir);
	return 0;
}

static void free_list(char **l, size_t n)
{
	while (n)
		free(l[--n]);
	free(l);
}

void ks_kmodtree_free(struct ks_kmodtree *t)
{
	for (int i = 0; i < t->n; i++) {
		free(t->mod[i].name);
		free(t->mod[i].path);
		free_list(t->mod[i].deps, t->mod[i].ndeps);
		free_list(t->mod[i].defs, t->mod[i].ndefs);
		free_list(t->mod[i].undefs, t->mod[i].nundefs);
	}
	free(t->mod);
	memset(t, 0, sizeof(*t));
}

int ks_kmodtree_find(const struct ks_kmodtree *t, const char *name)
{
	char n[256];

	snprintf(n, sizeof(n), "%s", name);
	norm(n);
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->mod[i].name, n))
			return i;
	return -1;
}

static int has(char **l, size_t n, const char *s)
{
	return l && bsearch(&s, l, n, sizeof(char *), str_cmp) != NULL;
}

int ks_kmodtree_defining(const struct ks_kmodtree *t, const char *func)
{
	for (int i = 0; i < t->n; i++)
		if (has(t->mod[i].defs, t->mod[i].ndefs, func))
			return i;
	return -1;
}

int ks_kmodtree_imports(const struct ks_kmodtree *t, int i, const char *sym)
{
	return has(t->mod[i].undefs, t->mod[i].nundefs, sym);
}

int ks_kmodtree_mentioning(const struct ks_kmodtree *t, const char *name, int *idx, int max)
{
	size_t len = strlen(name) + 2;
	char *needle = malloc(len + 1);
	int n = 0;

	if (!needle)
		return 0;
	needle[0] = 0;
	memcpy(needle + 1, name, len - 2);
	needle[len - 1] = 0;
	for (int i = 0; i < t->n && n < max; i++) {
		struct ks_elf_file f;
		Elf_Scn *scn;
		Elf_Data *d;

		if (ks_elf_open(t->mod[i].path, &f))
			continue;
		scn = ks_elf_find_section(f.elf, ".debug_str");
		d = scn ? elf_getdata(scn, NULL) : NULL;
		if (d && d->d_buf && memmem(d->d_buf, d->d_size, needle, len))
			idx[n++] = i;
		ks_elf_close(&f);
	}
	free(needle);
	return n;
}
