/* SPDX-License-Identifier: MIT */
/* meta.h - a shield object's metadata, read from its ".kshield" ELF section
 * without loading anything into the kernel. */
#ifndef KSHIELD_META_H
#define KSHIELD_META_H

#include <stdbool.h>
#include <stddef.h>

#include <stddef.h>

#define KS_META_MAX 256

struct ks_meta {
	int n;
	char *key[KS_META_MAX];
	char *val[KS_META_MAX];
	unsigned char sha256[32];	/* of the whole object file */
	char *blob;			/* owns the strings */
};

/* Read @path. Returns 0, or a negative errno with a one-line message
 * recorded (not an ELF, not a BPF object, no kshield metadata, ...). */
int ks_meta_read(const char *path, struct ks_meta *meta);
/* The same for an object already in memory (@path names it in messages):
 * the bytes hashed and parsed are the bytes the caller goes on to load. */
int ks_meta_read_buf(const char *path, const void *obj, size_t len, struct ks_meta *meta);
void ks_meta_free(struct ks_meta *meta);
/* Value for @key, or NULL. */
const char *ks_meta_get(const struct ks_meta *meta, const char *key);

/* The shield's hunt (`kshield hunt NAME`): its own hits, and the metadata
 * key `signs` (an SQL condition on events: what the exploit leaves besides
 * a hit), over :since .. :until. A `hunt` key (a whole SELECT) is taken as
 * it is. *sql is malloc'ed; -ENOENT when there is no name. */
int ks_meta_hunt_sql(const struct ks_meta *meta, char **sql);

/* What variant @variant claims for trigger path @path (metadata
 * prevents_<variant> and detects_<variant>, comma lists of path names). */
enum ks_coverage {
	KS_COV_NONE,		/* not covered: in neither list */
	KS_COV_PREVENTS,	/* refused before the exploit's effect */
	KS_COV_DETECTS,		/* only seen: killed after, or reported */
};
/* fmod_ret with neither key takes lsm's (the same body, KS_SECURITY_HOOK).
 * A variant with neither key declares nothing: it is taken to prevent
 * every path (what a one-trigger test demanded), and *declared is false. */
/* The comma list @what ("prevents" or "detects") that variant @variant
 * declares, or NULL (fmod_ret's falls back to lsm's, as above). */
const char *ks_meta_coverage_list(const struct ks_meta *meta, const char *what,
				  const char *variant);
enum ks_coverage ks_meta_coverage(const struct ks_meta *meta, const char *variant,
				  const char *path, bool *declared);
/* "prevents native,splice; detects io-uring" (or "prevents every path
 * (not declared)") for @variant into @buf. */
void ks_meta_coverage_str(const struct ks_meta *meta, const char *variant,
			  char *buf, size_t len);
const char *ks_coverage_name(enum ks_coverage c);

/* Event arguments by name (events.h) from shield objects (argsrc.c). */
/* Learn the tables of @meta's shield (KSHIELD_ARGS, KSHIELD_VALS): 0, or
 * what ks_shield_args_learn() says. */
int ks_meta_args_learn(const struct ks_meta *meta);
/* Look for the objects of shields not learned yet in @dir too (NAME.bpf.o,
 * NAME-*.bpf.o), after the object of the shield's loaded instance. */
void ks_shield_args_add_dir(const char *dir);

#endif
