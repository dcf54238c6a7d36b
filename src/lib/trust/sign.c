// SPDX-License-Identifier: MIT
/* sign.c - Ed25519 signatures over shield objects, with libsodium, and the
 * file formats and the error contract are in sign.h (the commands are in
 * src/cmd/sign.c). No cryptography is done here by hand: libsodium
 * hashes (SHA-256, BLAKE2b for key ids), signs and verifies.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>
#include "err.h"
#include "file.h"
#include "hex.h"
#include "sign.h"

/* Domain separation: what a kshield signature covers, never anything else;
 * a shield's signature can never pass for a sites manifest's, or back. The
 * NUL is part of the signed message (as it always was for shields). */
static const char *const sign_tags[] = {
	[KS_SIGN_SHIELD] = "kshield-shield-object-v1",
	[KS_SIGN_SITES] = "kshield-sites-manifest-v1",
	[KS_SIGN_DESIRED] = "kshield-desired-state-v1",
	[KS_SIGN_KEYLIST] = "kshield-key-list-v1",
	[KS_SIGN_TOKEN] = "kshield-weaken-token-v1",
	[KS_SIGN_PROVEN] = "kshield-proven-summary-v1",
};
static const char *const sign_what[] = {
	[KS_SIGN_SHIELD] = "object",
	[KS_SIGN_SITES] = "manifest",
	[KS_SIGN_DESIRED] = "desired record",
	[KS_SIGN_KEYLIST] = "key list",
	[KS_SIGN_TOKEN] = "token",
	[KS_SIGN_PROVEN] = "proven summary",
};
#define SIGN_TAG_MAX 32

static int sodium_ready(void)
{
	if (sodium_init() < 0)
		return ks_err(-EIO, "libsodium failed to initialise");
	return 0;
}

static void key_id(const unsigned char pk[crypto_sign_PUBLICKEYBYTES], char id[KS_KEYID_LEN])
{
	unsigned char h[8];

	crypto_generichash(h, sizeof(h), pk, crypto_sign_PUBLICKEYBYTES, NULL, 0);
	ks_hex(h, sizeof(h), id, KS_KEYID_LEN);
}

/* The message actually signed: tag || NUL || SHA-256(object); its length. */
static size_t signed_message(enum ks_sign_kind kind, const void *obj, size_t len,
			     unsigned char msg[SIGN_TAG_MAX + crypto_hash_sha256_BYTES])
{
	size_t n = strlen(sign_tags[kind]) + 1;

	memcpy(msg, sign_tags[kind], n);
	crypto_hash_sha256(msg + n, obj, len);
	return n + crypto_hash_sha256_BYTES;
}

/* Parse "<word> <base64>" from a key file into @out (exactly @n bytes). */
static int read_key(const char *path, const char *word, unsigned char *out, size_t n)
{
	char *buf, *b64;
	size_t len, got;
	int err = ks_read_file(path, &buf, &len);

	if (err)
		return err;
	b64 = buf + strlen(word);
	if (strncmp(buf, word, strlen(word)) || *b64 != ' ' ||
	    sodium_base642bin(out, n, b64 + 1, strlen(b64 + 1), " \n", &got, NULL,
			      sodium_base64_VARIANT_ORIGINAL) || got != n)
		err = ks_err(-EINVAL, "%s is not a kshield %s key file", path, word);
	sodium_memzero(buf, len);
	free(buf);
	return err;
}

int ks_sign_pub_id(const char *publine, char keyid[KS_KEYID_LEN])
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	size_t got;
	int err = sodium_ready();

	if (err)
		return err;
	if (strncmp(publine, "ed25519 ", 8) ||
	    sodium_base642bin(pk, sizeof(pk), publine + 8, strlen(publine + 8), " \n", &got, NULL,
			      sodium_base64_VARIANT_ORIGINAL) || got != sizeof(pk))
		return ks_err(-EINVAL, "not a kshield public key: expected 'ed25519 BASE64'");
	key_id(pk, keyid);
	return 0;
}

static int write_new(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	size_t n = strlen(text);

	if (fd < 0)
		return ks_err(-errno, "can't create %s: %s", path, strerror(errno));
	if (write(fd, text, n) != (ssize_t)n || fsync(fd)) {
		int e = -errno;

		close(fd);
		unlink(path);
		return ks_err(e ? e : -EIO, "can't write %s", path);
	}
	close(fd);
	return 0;
}

int ks_sign_keygen(const char *prefix, char keyid[KS_KEYID_LEN])
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	char path[4096], line[256], b64[sodium_base64_ENCODED_LEN(crypto_sign_SECRETKEYBYTES,
								      sodium_base64_VARIANT_ORIGINAL)];
	int err = sodium_ready();

	if (err)
		return err;
	crypto_sign_keypair(pk, sk);
	key_id(pk, keyid);

	snprintf(path, sizeof(path), "%s.key", prefix);
	sodium_bin2base64(b64, sizeof(b64), sk, sizeof(sk), sodium_base64_VARIANT_ORIGINAL);
	snprintf(line, sizeof(line), "ed25519-secret %s\n", b64);
	err = write_new(path, line, 0600);
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(line, sizeof(line));
	if (err)
		return err;

	snprintf(path, sizeof(path), "%s.pub", prefix);
	sodium_bin2base64(b64, sizeof(b64), pk, sizeof(pk), sodium_base64_VARIANT_ORIGINAL);
	snprintf(line, sizeof(line), "ed25519 %s\n", b64);
	err = write_new(path, line, 0644);
	if (err) {
		snprintf(path, sizeof(path), "%s.key", prefix);
		unlink(path);
	}
	return err;
}

int ks_sign_buf_kind(enum ks_sign_kind kind, const void *obj, size_t len, const char *keyfile,
		     char sig[KS_SIG_TEXT_MAX], char keyid[KS_KEYID_LEN])
{
	unsigned char sk[crypto_sign_SECRETKEYBYTES], s[crypto_sign_BYTES];
	unsigned char msg[SIGN_TAG_MAX + crypto_hash_sha256_BYTES];
	size_t mlen;
	char b64[sodium_base64_ENCODED_LEN(crypto_sign_BYTES, sodium_base64_VARIANT_ORIGINAL)];
	int err = sodium_ready();

	if (!err)
		err = read_key(keyfile, "ed25519-secret", sk, sizeof(sk));
	if (err)
		return err;
	/* The public half is the second 32 bytes of a libsodium secret key. */
	key_id(sk + crypto_sign_SEEDBYTES, keyid);
	mlen = signed_message(kind, obj, len, msg);
	crypto_sign_detached(s, NULL, msg, mlen, sk);
	sodium_memzero(sk, sizeof(sk));
	sodium_bin2base64(b64, sizeof(b64), s, sizeof(s), sodium_base64_VARIANT_ORIGINAL);
	snprintf(sig, KS_SIG_TEXT_MAX, "ed25519 %s %s\n", keyid, b64);
	return 0;
}

int ks_sign_buf(const void *obj, size_t len, const char *keyfile,
		char sig[KS_SIG_TEXT_MAX], char keyid[KS_KEYID_LEN])
{
	return ks_sign_buf_kind(KS_SIGN_SHIELD, obj, len, keyfile, sig, keyid);
}

/* Find the public key with id @want among @dir's *.pub files. */
static int find_key(const char *dir, const char *want, unsigned char pk[crypto_sign_PUBLICKEYBYTES])
{
	struct dirent *de;
	char path[4096], id[KS_KEYID_LEN];
	DIR *d;
	int found = -ENOKEY;

	if (!dir || !*dir)
		return ks_err(-ENOKEY, "signed by unknown key %s: no trusted keys configured", want);
	d = opendir(dir);
	if (!d)
		return ks_err(-ENOKEY, "signed by unknown key %s: can't open keys dir %s: %s", want,
			      dir, strerror(errno));
	while (found && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 5 || strcmp(de->d_name + n - 4, ".pub"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (read_key(path, "ed25519", pk, crypto_sign_PUBLICKEYBYTES))
			continue;	/* a stray file is not a trusted key */
		key_id(pk, id);
		if (!strcmp(id, want))
			found = 0;
	}
	closedir(d);
	if (found)
		return ks_err(-ENOKEY, "signed by unknown key %s (not in %s)", want, dir);
	return 0;
}

/* Signature text @sig of a @kind ("ed25519 KEYID BASE64") into its key id
 * and signature bytes; *@keyid is cleared first. 0 or -errno. */
static int sig_parse(enum ks_sign_kind kind, const char *sig, char *keyid,
		     char id[KS_KEYID_LEN + 8], unsigned char s[crypto_sign_BYTES])
{
	char b64[128];
	size_t got;
	int err = sodium_ready();

	if (err)
		return err;
	keyid[0] = '\0';
	if (!sig || !*sig)
		return ks_err(-ENODATA, "unsigned: the %s has no signature", sign_what[kind]);
	if (sscanf(sig, "ed25519 %23s %127s", id, b64) != 2 || strlen(id) != KS_KEYID_LEN - 1 ||
	    sodium_base642bin(s, crypto_sign_BYTES, b64, strlen(b64), NULL, &got, NULL,
			      sodium_base64_VARIANT_ORIGINAL) || got != crypto_sign_BYTES)
		return ks_err(-EINVAL, "malformed signature: expected 'ed25519 KEYID BASE64'");
	return 0;
}

/* Does @s sign @kind @obj under public key @pk (id @id)? 0 or -EBADMSG. */
static int sig_check(enum ks_sign_kind kind, const void *obj, size_t len,
		     const unsigned char *s, const unsigned char *pk, const char *id)
{
	unsigned char msg[SIGN_TAG_MAX + crypto_hash_sha256_BYTES];
	size_t mlen = signed_message(kind, obj, len, msg);

	if (crypto_sign_verify_detached(s, msg, mlen, pk))
		return ks_err(-EBADMSG, "bad signature: the %s was altered after key %s signed it",
			      sign_what[kind], id);
	return 0;
}

int ks_sign_verify_kind(enum ks_sign_kind kind, const void *obj, size_t len, const char *sig,
			const char *keys_dir, char keyid[KS_KEYID_LEN])
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], s[crypto_sign_BYTES];
	char id[KS_KEYID_LEN + 8];
	int err;

	if ((err = sig_parse(kind, sig, keyid, id, s)))
		return err;
	snprintf(keyid, KS_KEYID_LEN, "%s", id);
	if ((err = find_key(keys_dir, id, pk)))
		return err;
	return sig_check(kind, obj, len, s, pk, id);
}

int ks_sign_dir_keys(const char *dir, unsigned char (*pks)[KS_PUBKEY_LEN], int max)
{
	char path[4096];
	struct dirent **names = NULL;
	int n, got = 0, err = sodium_ready();

	if (err)
		return err;
	if (!dir || !*dir)
		return 0;
	/* Sorted: the same directory gives the same list on every load. */
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return ks_err(-errno, "can't read keys dir %s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (len >= 5 && !strcmp(names[i]->d_name + len - 4, ".pub") && got < max &&
		    !read_key(path, "ed25519", pks[got], KS_PUBKEY_LEN))
			got++;
		free(names[i]);
	}
	free(names);
	return got;
}

int ks_sign_verify_pks(enum ks_sign_kind kind, const void *obj, size_t len, const char *sig,
		       const unsigned char (*pks)[KS_PUBKEY_LEN], int n, char keyid[KS_KEYID_LEN])
{
	unsigned char s[crypto_sign_BYTES];
	char id[KS_KEYID_LEN + 8], kid[KS_KEYID_LEN];
	int err;

	if ((err = sig_parse(kind, sig, keyid, id, s)))
		return err;
	snprintf(keyid, KS_KEYID_LEN, "%s", id);
	for (int i = 0; i < n; i++) {
		key_id(pks[i], kid);
		if (!strcmp(kid, id))
			return sig_check(kind, obj, len, s, pks[i], id);
	}
	return ks_err(-ENOKEY, "signed by unknown key %s (not one of the %d key(s) the guard "
		      "recorded when it loaded)", id, n);
}

int ks_sign_verify_signer(enum ks_sign_kind kind, const void *obj, size_t len, const char *sig,
			  const char *keyfile, const char *keys_dir, char keyid[KS_KEYID_LEN])
{
	unsigned char sk[crypto_sign_SECRETKEYBYTES], s[crypto_sign_BYTES];
	char id[KS_KEYID_LEN + 8], own[KS_KEYID_LEN];
	int err;

	if ((err = sig_parse(kind, sig, keyid, id, s)))
		return err;
	if ((err = read_key(keyfile, "ed25519-secret", sk, sizeof(sk))))
		return err;
	key_id(sk + crypto_sign_SEEDBYTES, own);
	if (strcmp(own, id)) {
		sodium_memzero(sk, sizeof(sk));
		if (keys_dir)
			return ks_sign_verify_kind(kind, obj, len, sig, keys_dir, keyid);
		return ks_err(-ENOKEY, "signed by key %s, not by %s's key %s (name other trusted "
			      "keys with --keys DIR)", id, keyfile, own);
	}
	snprintf(keyid, KS_KEYID_LEN, "%s", id);
	err = sig_check(kind, obj, len, s, sk + crypto_sign_SEEDBYTES, id);
	sodium_memzero(sk, sizeof(sk));
	return err;
}

int ks_sign_verify(const void *obj, size_t len, const char *sig, const char *keys_dir,
		   char keyid[KS_KEYID_LEN])
{
	return ks_sign_verify_kind(KS_SIGN_SHIELD, obj, len, sig, keys_dir, keyid);
}

int ks_sign_file(enum ks_sign_kind kind, const char *path, const char *keyfile,
		 const char *out, char keyid[KS_KEYID_LEN])
{
	char sigpath[4096], sig[KS_SIG_TEXT_MAX], *obj;
	size_t len;
	int err;

	snprintf(sigpath, sizeof(sigpath), "%s.sig", path);
	if (!out)
		out = sigpath;
	err = ks_read_file(path, &obj, &len);
	if (err)
		return err;
	err = ks_sign_buf_kind(kind, obj, len, keyfile, sig, keyid);
	free(obj);
	if (err)
		return err;
	/* Replace the signature atomically: a reader sees the old or the new. */
	return ks_write_file_atomic(out, sig, strlen(sig), 0644);
}

int ks_sign_verify_file(enum ks_sign_kind kind, const char *path, const char *sigpath,
			const char *keys_dir, char keyid[KS_KEYID_LEN])
{
	char def[4096], *obj, *sig = NULL;
	size_t len, slen;
	int err;

	keyid[0] = '\0';
	snprintf(def, sizeof(def), "%s.sig", path);
	if (!sigpath)
		sigpath = def;
	err = ks_read_file(path, &obj, &len);
	if (err)
		return err;
	/* A missing signature file is "unsigned", not an I/O error. */
	if (access(sigpath, F_OK) == 0 && (err = ks_read_file(sigpath, &sig, &slen))) {
		free(obj);
		return err;
	}
	err = ks_sign_verify_kind(kind, obj, len, sig, keys_dir, keyid);
	free(obj);
	free(sig);
	return err;
}

const char *ks_sign_status(int err)
{
	switch (err) {
	case 0: return "verified";
	case -ENODATA: return "unsigned";
	case -ENOKEY: return "unknown-key";
	case -EBADMSG: return "bad-signature";
	case -EINVAL: return "malformed-signature";
	default: return "error";
	}
}
