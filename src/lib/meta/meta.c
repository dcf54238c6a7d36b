// SPDX-License-Identifier: MIT
/* meta.c - read a shield's metadata from its ".kshield" ELF section with
 * libelf, without loading anything, and hash the object (libsodium SHA-256)
 * so that a changed file on disk can be told from the loaded one. */
#define _GNU_SOURCE	/* asprintf */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/elf-em.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "file.h"
#include "meta.h"
#include <linux/types.h>
#include <kshield/shield.h>

#ifndef EM_BPF
#define EM_BPF 247
#endif

int ks_meta_read(const char *path, struct ks_meta *meta)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	memset(meta, 0, sizeof(*meta));
	err = ks_read_file(path, &buf, &len);
	if (err)
		return err;
	err = ks_meta_read_buf(path, buf, len, meta);
	free(buf);
	return err;
}

int ks_meta_read_buf(const char *path, const void *obj, size_t len, struct ks_meta *meta)
{
	const unsigned char *buf = obj;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	GElf_Ehdr ehdr;
	size_t shstrndx;
	int err;

	memset(meta, 0, sizeof(*meta));
	crypto_hash_sha256(meta->sha256, buf, len);

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)buf, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
		err = ks_err(-ENOEXEC, "%s is not an ELF file: build shields with 'make'", path);
		goto out;
	}
	if (ehdr.e_machine != EM_BPF) {
		err = ks_err(-ENOEXEC, "%s is an ELF file but not a BPF object (machine %u)",
			     path, ehdr.e_machine);
		goto out;
	}
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		err = ks_err(-ENOEXEC, "%s: malformed ELF section headers", path);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;
		char *p, *end;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, KS_META_SECTION))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_size)
			break;
		meta->blob = malloc(data->d_size + 1);
		if (!meta->blob) {
			err = ks_err(-ENOMEM, "out of memory");
			goto out;
		}
		memcpy(meta->blob, data->d_buf, data->d_size);
		meta->blob[data->d_size] = '\0';
		/* NUL-separated "key=value" strings, possibly padded. */
		for (p = meta->blob, end = p + data->d_size; p < end && meta->n < KS_META_MAX;
		     p += strlen(p) + 1) {
			char *eq = strchr(p, '=');

			if (!*p || !eq)
				continue;
			*eq = '\0';
			meta->key[meta->n] = p;
			meta->val[meta->n] = eq + 1;
			meta->n++;
			p = eq + 1;
		}
		break;
	}
	if (!ks_meta_get(meta, "name") || !ks_meta_get(meta, "variants")) {
		err = ks_err(-ENOEXEC, "%s is a BPF object but not a kshield shield "
			     "(no KSHIELD_NAME/KSHIELD_VARIANTS metadata)", path);
		goto out;
	}
	if (!isalnum((unsigned char)ks_meta_get(meta, "name")[0]) ||
	    strpbrk(ks_meta_get(meta, "name"), "./ ")) {
		err = ks_err(-EINVAL, "%s: shield name must start with a letter or digit "
			     "and hold no '.', '/' or space", path);
		goto out;
	}
	if (strlen(ks_meta_get(meta, "name")) >= KS_NAME_LEN) {
		err = ks_err(-EINVAL, "%s: shield name longer than %d characters", path,
			     KS_NAME_LEN - 1);
		goto out;
	}
	err = 0;
out:
	if (elf)
		elf_end(elf);
	if (err)
		ks_meta_free(meta);
	return err;
}

void ks_meta_free(struct ks_meta *meta)
{
	free(meta->blob);
	meta->blob = NULL;
	meta->n = 0;
}

const char *ks_meta_get(const struct ks_meta *meta, const char *key)
{
	int i;

	for (i = 0; i < meta->n; i++)
		if (!strcmp(meta->key[i], key))
			return meta->val[i];
	return NULL;
}

/* The coverage list @what ("prevents", "detects") of @variant. fmod_ret
 * runs the lsm body (KS_SECURITY_HOOK) on the security_ function that calls
 * the hook, so it covers what lsm covers unless it says otherwise. */
const char *ks_meta_coverage_list(const struct ks_meta *meta, const char *what,
				  const char *variant)
{
	char key[96];

	if (!strcmp(variant, "fmod_ret") && !ks_meta_get(meta, "prevents_fmod_ret") &&
	    !ks_meta_get(meta, "detects_fmod_ret"))
		variant = "lsm";
	snprintf(key, sizeof(key), "%s_%s", what, variant);
	return ks_meta_get(meta, key);
}

/* Is @name an item of the comma list @list (spaces around items allowed)? */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; ) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *e = p + strcspn(p, ", ");

		if ((size_t)(e - p) == n && !strncmp(p, name, n))
			return true;
		p = e;
	}
	return false;
}

enum ks_coverage ks_meta_coverage(const struct ks_meta *meta, const char *variant,
				  const char *path, bool *declared)
{
	const char *prev = ks_meta_coverage_list(meta, "prevents", variant);
	const char *det = ks_meta_coverage_list(meta, "detects", variant);
	bool d = prev || det;

	if (declared)
		*declared = d;
	if (!d || in_list(prev, path))
		return KS_COV_PREVENTS;
	return in_list(det, path) ? KS_COV_DETECTS : KS_COV_NONE;
}

void ks_meta_coverage_str(const struct ks_meta *meta, const char *variant,
			  char *buf, size_t len)
{
	const char *prev = ks_meta_coverage_list(meta, "prevents", variant);
	const char *det = ks_meta_coverage_list(meta, "detects", variant);

	if (!prev && !det)
		snprintf(buf, len, "prevents every path (coverage not declared)");
	else
		snprintf(buf, len, "%s%s%s%s%s", prev ? "prevents " : "", prev ? prev : "",
			 prev && det ? "; " : "", det ? "detects " : "", det ? det : "");
}

const char *ks_coverage_name(enum ks_coverage c)
{
	return c == KS_COV_PREVENTS ? "prevents" : c == KS_COV_DETECTS ? "detects" : "none";
}

int ks_meta_hunt_sql(const struct ks_meta *meta, char **sql)
{
	const char *hunt = ks_meta_get(meta, "hunt"), *name = ks_meta_get(meta, "name");
	const char *signs = ks_meta_get(meta, "signs");
	char quoted[2 * 64 + 1];
	size_t i, j;
	int n;

	*sql = NULL;
	if (hunt)
		return (*sql = strdup(hunt)) ? 0 : -ENOMEM;
	if (!name)
		return -ENOENT;
	for (i = j = 0; name[i] && j + 2 < sizeof(quoted); i++) {
		if (name[i] == '\'')
			quoted[j++] = '\'';
		quoted[j++] = name[i];
	}
	quoted[j] = '\0';
	n = asprintf(sql, "SELECT * FROM events WHERE ts BETWEEN :since AND :until AND "
		     "((kind = 'shield' AND shield = '%s')%s%s%s) ORDER BY ts", quoted,
		     signs ? " OR (" : "", signs ? signs : "", signs ? ")" : "");
	if (n < 0) {
		*sql = NULL;
		return -ENOMEM;
	}
	return 0;
}
