/* SPDX-License-Identifier: MIT */
/* sign.h - Ed25519 signatures over shield objects and kernel sites
 * manifests (libsodium).
 *
 * A key pair is two one-line text files: PREFIX.key (secret, mode 0600,
 * "ed25519-secret <base64>") and PREFIX.pub ("ed25519 <base64>"). A signature
 * is a detached one-line text file FILE.sig: "ed25519 <keyid> <base64 sig>",
 * where keyid is the hex of the first 8 bytes of BLAKE2b(public key). What is
 * signed is a domain tag (one per kind of file) followed by the SHA-256 of
 * the whole file, so a signature can never be replayed over some other kind
 * of message: a signed shield's signature does not verify a manifest.
 *
 * An agent holds public keys in a directory (every *.pub in it) and refuses
 * an object that is unsigned (-ENODATA), signed by a key not in that
 * directory (-ENOKEY), or whose bytes do not match the signature (-EBADMSG).
 */
#ifndef KSHIELD_SIGN_H
#define KSHIELD_SIGN_H

#include <stddef.h>
#include "file.h"

#define KS_KEYID_LEN 17		/* 16 hex digits + NUL */
#define KS_SIG_TEXT_MAX 160	/* one signature line, with room to spare */
#define KS_PUBKEY_LEN 32	/* an Ed25519 public key, raw */

/* What a signature covers (its domain tag). */
enum ks_sign_kind {
	KS_SIGN_SHIELD,		/* a shield object (.bpf.o) */
	KS_SIGN_SITES,		/* a kernel sites manifest (kernel_sites.h) */
	KS_SIGN_DESIRED,	/* a fleet desired-state record (fleet_kv.h) */
	KS_SIGN_KEYLIST,	/* a fleet signing-key list, signed by a root key */
	KS_SIGN_TOKEN,		/* a weakening token (weaken.h) */
	KS_SIGN_PROVEN,		/* a shield's proven summary (proven.h) */
};

/* Write PREFIX.key and PREFIX.pub; refuses to overwrite (-EEXIST). */
int ks_sign_keygen(const char *prefix, char keyid[KS_KEYID_LEN]);
/* Sign @len bytes at @obj with the secret key in @keyfile; the signature
 * line (NUL-terminated, with a trailing newline) goes to @sig. */
int ks_sign_buf(const void *obj, size_t len, const char *keyfile,
		char sig[KS_SIG_TEXT_MAX], char keyid[KS_KEYID_LEN]);
/* Verify @obj against the signature line @sig (NULL or "" = unsigned) with
 * the public keys in @keys_dir. Returns 0 and the signer's key id, or a
 * negative errno (above) with a one-line message recorded. */
int ks_sign_verify(const void *obj, size_t len, const char *sig, const char *keys_dir,
		   char keyid[KS_KEYID_LEN]);
/* The same for a given kind of file (the two above are KS_SIGN_SHIELD). */
int ks_sign_buf_kind(enum ks_sign_kind kind, const void *obj, size_t len, const char *keyfile,
		     char sig[KS_SIG_TEXT_MAX], char keyid[KS_KEYID_LEN]);
int ks_sign_verify_kind(enum ks_sign_kind kind, const void *obj, size_t len, const char *sig,
			const char *keys_dir, char keyid[KS_KEYID_LEN]);
/* Sign file @path into @out (NULL: PATH.sig), replaced atomically. */

int ks_sign_file(enum ks_sign_kind kind, const char *path, const char *keyfile,
		 const char *out, char keyid[KS_KEYID_LEN]);
/* Verify file @path against @sigpath (NULL: PATH.sig; missing = unsigned). */
int ks_sign_verify_file(enum ks_sign_kind kind, const char *path, const char *sigpath,
			const char *keys_dir, char keyid[KS_KEYID_LEN]);
/* A short status word for a ks_sign_verify() result: "verified",
 * "unsigned", "unknown-key", "bad-signature", "malformed-signature". */
const char *ks_sign_status(int err);

/* Verify @obj against @sig with the public half of the secret key in
 * @keyfile (a signer checking what it signed before), else with the keys
 * in @keys_dir (NULL: none). Errors as ks_sign_verify(). */
int ks_sign_verify_signer(enum ks_sign_kind kind, const void *obj, size_t len, const char *sig,
			  const char *keyfile, const char *keys_dir, char keyid[KS_KEYID_LEN]);

/* The public keys of @dir's *.pub files (sorted by name), raw, at most
 * @max: their count, or a negative errno (the directory can't be read). */
int ks_sign_dir_keys(const char *dir, unsigned char (*pks)[KS_PUBKEY_LEN], int max);
/* ks_sign_verify_kind() against the @n raw public keys @pks instead of a
 * directory (the keys the tamper guard pinned). */
int ks_sign_verify_pks(enum ks_sign_kind kind, const void *obj, size_t len, const char *sig,
		       const unsigned char (*pks)[KS_PUBKEY_LEN], int n, char keyid[KS_KEYID_LEN]);

/* The key id of a public key line "ed25519 <base64>" (a .pub file's
 * text); -EINVAL when it is not one. */
int ks_sign_pub_id(const char *publine, char keyid[KS_KEYID_LEN]);

#endif
