/* meta.h - a shield object's metadata, read from its ".kshield" ELF section
 * without loading anything into the kernel. */
#ifndef KSHIELD_META_H
#define KSHIELD_META_H

#include <stddef.h>

#define KS_META_MAX 32

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

#endif
