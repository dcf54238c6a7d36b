// SPDX-License-Identifier: MIT
/* kernel_sites.c - kernel function copies from vmlinux DWARF or a sites
 * manifest, and one kprobe per copy (see kernel_sites.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <json-c/json.h>
#include "array.h"
#include "debugfile.h"
#include "err.h"
#include "hex.h"
#include "kernel_sites.h"
#include "sign.h"
#include "uprobe_sites.h"

/* ---- manifests ---------------------------------------------------------- */

/* Set once by the agent before any load (its threads start after). */
static char policy_dir[PATH_MAX], policy_keys[PATH_MAX];

void ks_kernel_sites_policy(const char *dir, const char *keys_dir)
{
	if (dir)
		snprintf(policy_dir, sizeof(policy_dir), "%s", dir);
	if (keys_dir)
		snprintf(policy_keys, sizeof(policy_keys), "%s", keys_dir);
}

const char *ks_kernel_sites_dir(void)
{
	const char *d = getenv("KSHIELD_SITES_DIR");

	if (policy_dir[0])
		return policy_dir;
	return d && *d ? d : KS_SITES_DIR_DEFAULT;
}

const char *ks_kernel_sites_keys(void)
{
	const char *k = getenv("KSHIELD_SITES_KEYS");

	if (policy_keys[0])
		return policy_keys;
	return k && *k ? k : NULL;
}

static const char *sites_dir(void)
{
	return ks_kernel_sites_dir();
}

/* Under a signing policy, manifest @path (its bytes @buf) must carry a
 * signature PATH.sig by one of the trusted keys: a forged manifest would
 * put kprobes at offsets of its choosing. */
static int manifest_verify(const char *path, const char *buf, size_t len)
{
	const char *keys = ks_kernel_sites_keys();
	char sigpath[PATH_MAX + 8], id[KS_KEYID_LEN], msg[512], *sig = NULL;
	size_t slen;
	int err;

	if (!keys)
		return 0;
	snprintf(sigpath, sizeof(sigpath), "%s.sig", path);
	if (!access(sigpath, F_OK) && (err = ks_read_file(sigpath, &sig, &slen)))
		return err;
	err = ks_sign_verify_kind(KS_SIGN_SITES, buf, len, sig, keys, id);
	free(sig);
	if (!err)
		return 0;
	snprintf(msg, sizeof(msg), "%s", ks_errmsg());
	if (err == -ENODATA)
		return ks_err(err, "sites manifest %s: unsigned (no %s) and signed manifests are "
			      "required (trusted keys in %s); sign it with a trusted key: kshield "
			      "sites sign %s --key KEYFILE", path, sigpath, keys, path);
	return ks_err(err, "sites manifest %s: %s; re-export and sign it with a trusted key "
		      "(kshield sites export ... --key KEYFILE, or kshield sites sign)", path, msg);
}

static struct json_object *hex_u64(__u64 v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_object_new_string(buf);
}

static struct json_object *site_manifest(const struct ks_site *site, int id)
{
	struct json_object *o = json_object_new_object(), *args = json_object_new_array();
	int i;

	json_object_object_add(o, "id", json_object_new_int(id));
	json_object_object_add(o, "addr", hex_u64(site->addr));
	json_object_object_add(o, "kind", json_object_new_string(ks_site_kind_name(site->kind)));
	json_object_object_add(o, "caller", json_object_new_string(site->caller));
	json_object_object_add(o, "symbol", json_object_new_string(site->symbol));
	json_object_object_add(o, "symbol_offset", json_object_new_int64(site->symbol_offset));
	if (site->kind == KS_SITE_INLINED) {
		json_object_object_add(o, "call_file", json_object_new_string(site->call_file));
		json_object_object_add(o, "call_line", json_object_new_int(site->call_line));
	}
	json_object_object_add(o, "probeable", json_object_new_boolean(site->probeable));
	json_object_object_add(o, "covered", json_object_new_boolean(site->covered));
	if (site->why[0])
		json_object_object_add(o, "why", json_object_new_string(site->why));
	for (i = 0; i < site->nargs; i++) {
		const struct ks_site_arg *a = &site->args[i];
		struct json_object *j = json_object_new_object();

		json_object_object_add(j, "name", json_object_new_string(a->name));
		json_object_object_add(j, "loc", json_object_new_string(a->loc));
		json_object_object_add(j, "kind", json_object_new_int(a->where.kind));
		json_object_object_add(j, "reg", json_object_new_int(a->where.reg));
		json_object_object_add(j, "value", json_object_new_int64(a->where.value));
		json_object_object_add(j, "size", json_object_new_int(a->where.size));
		json_object_array_add(args, j);
	}
	json_object_object_add(o, "args", args);
	return o;
}

int ks_sites_manifest_write(FILE *f, const struct ks_sites *fns, int n)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	int i, j, err = 0;

	if (n < 1)
		return ks_err(-EINVAL, "no functions to write");
	json_object_object_add(o, "kshield_sites", json_object_new_int(1));
	json_object_object_add(o, "build_id", json_object_new_string(fns[0].build_id));
	json_object_object_add(o, "release", json_object_new_string(fns[0].release));
	json_object_object_add(o, "arch", json_object_new_string(fns[0].arch));
	json_object_object_add(o, "vmlinux", json_object_new_string(fns[0].debug_file));
	for (i = 0; i < n; i++) {
		struct json_object *fn = json_object_new_object(), *sites = json_object_new_array();

		json_object_object_add(fn, "function", json_object_new_string(fns[i].function));
		for (j = 0; j < fns[i].nsites; j++)
			json_object_array_add(sites, site_manifest(&fns[i].site[j], j));
		json_object_object_add(fn, "sites", sites);
		json_object_array_add(arr, fn);
	}
	json_object_object_add(o, "functions", arr);
	if (fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 ||
	    fflush(f))
		err = ks_err(-EIO, "can't write the manifest: %s", strerror(errno));
	json_object_put(o);
	return err;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v) : NULL;
}

static __s64 jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static int site_from_json(struct json_object *o, struct ks_site *site)
{
	const char *kind = jstr(o, "kind"), *addr = jstr(o, "addr"), *v;
	struct json_object *args, *b;
	size_t i;

	memset(site, 0, sizeof(*site));
	if (!kind || !addr || !jstr(o, "symbol") || !json_object_object_get_ex(o, "probeable", &b))
		return -EINVAL;
	site->addr = strtoull(addr, NULL, 0);
	site->kind = !strcmp(kind, "inlined") ? KS_SITE_INLINED
		     : !strcmp(kind, "clone") ? KS_SITE_CLONE : KS_SITE_OUTLINE;
	snprintf(site->caller, sizeof(site->caller), "%s", jstr(o, "caller") ?: "?");
	snprintf(site->symbol, sizeof(site->symbol), "%s", jstr(o, "symbol"));
	site->symbol_offset = site->offset = jint(o, "symbol_offset");
	if ((v = jstr(o, "call_file")))
		snprintf(site->call_file, sizeof(site->call_file), "%s", v);
	site->call_line = jint(o, "call_line");
	site->probeable = json_object_get_boolean(b);
	if (json_object_object_get_ex(o, "covered", &b))
		site->covered = json_object_get_boolean(b);
	if ((v = jstr(o, "why")))
		snprintf(site->why, sizeof(site->why), "%s", v);
	/* A probeable site needs a symbol to hang on. */
	if (site->probeable && !site->symbol[0])
		return -EINVAL;
	if (!json_object_object_get_ex(o, "args", &args) || !json_object_is_type(args, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(args) && i < KS_SITE_MAX_ARGS; i++) {
		struct json_object *a = json_object_array_get_idx(args, i);
		struct ks_site_arg *sa = &site->args[site->nargs++];

		snprintf(sa->name, sizeof(sa->name), "%s", jstr(a, "name") ?: "?");
		snprintf(sa->loc, sizeof(sa->loc), "%s", jstr(a, "loc") ?: "?");
		sa->where.kind = jint(a, "kind");
		sa->where.reg = jint(a, "reg");
		sa->where.value = jint(a, "value");
		sa->where.size = jint(a, "size");
		if (sa->where.kind > KS_ARGLOC_MEM)	/* ADDR: no fixed address in a kernel */
			return -EINVAL;
	}
	return 0;
}

int ks_sites_manifest_read(const char *path, const char *function,
			   const char *want_build_id, struct ks_sites *s)
{
	struct json_object *o, *fns, *sites = NULL, *v;
	const char *id;
	char *buf;
	size_t i, len;
	int err = 0;

	memset(s, 0, sizeof(*s));
	if (access(path, R_OK))
		return ks_err(-ENOENT, "sites manifest %s: %s", path, strerror(errno));
	/* Parse the very bytes whose signature was checked. */
	if ((err = ks_read_file(path, &buf, &len)))
		return err;
	if ((err = manifest_verify(path, buf, len))) {
		free(buf);
		return err;
	}
	o = json_tokener_parse(buf);
	free(buf);
	if (!o)
		return ks_err(-EINVAL, "sites manifest %s: not valid JSON", path);
	id = jstr(o, "build_id");
	if (!json_object_object_get_ex(o, "kshield_sites", &v) || json_object_get_int(v) != 1 ||
	    !id || !id[0] || !json_object_object_get_ex(o, "functions", &fns) ||
	    !json_object_is_type(fns, json_type_array)) {
		err = ks_err(-EINVAL, "%s is not a kshield sites manifest (version 1)", path);
		goto out;
	}
	if (want_build_id && strcmp(id, want_build_id)) {
		err = ks_err(-EILSEQ, "sites manifest %s is for kernel build ID %s (%s), this "
			     "kernel is %s: refusing it (offsets from another build would "
			     "probe the wrong code)", path, id, jstr(o, "release") ?: "?",
			     want_build_id);
		goto out;
	}
	snprintf(s->binary, sizeof(s->binary), "vmlinux");
	snprintf(s->function, sizeof(s->function), "%s", function);
	snprintf(s->build_id, sizeof(s->build_id), "%s", id);
	snprintf(s->release, sizeof(s->release), "%s", jstr(o, "release") ?: "");
	snprintf(s->arch, sizeof(s->arch), "%s", jstr(o, "arch") ?: "");
	snprintf(s->debug_file, sizeof(s->debug_file), "%s", path);
	s->debug_source = "manifest";
	s->kernel = true;
	for (i = 0; i < json_object_array_length(fns); i++) {
		struct json_object *f = json_object_array_get_idx(fns, i);

		if (jstr(f, "function") && !strcmp(jstr(f, "function"), function) &&
		    json_object_object_get_ex(f, "sites", &sites))
			break;
		sites = NULL;
	}
	if (!sites || !json_object_is_type(sites, json_type_array) ||
	    !json_object_array_length(sites)) {
		err = ks_err(-ENOENT, "sites manifest %s does not list %s", path, function);
		goto out;
	}
	s->nsites = json_object_array_length(sites);
	s->site = calloc(s->nsites, sizeof(*s->site));
	if (!s->site) {
		err = ks_err(-ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < (size_t)s->nsites; i++)
		if (site_from_json(json_object_array_get_idx(sites, i), &s->site[i])) {
			err = ks_err(-EINVAL, "sites manifest %s: site %zu of %s is malformed",
				     path, i, function);
			goto out;
		}
out:
	json_object_put(o);
	if (err)
		ks_sites_free(s);
	return err;
}

int ks_sites_manifest_check(const char *path)
{
	struct json_object *o = json_object_from_file(path), *v;
	int err = 0;

	if (!o)
		return ks_err(access(path, R_OK) ? -ENOENT : -EINVAL, "sites manifest %s: %s",
			      path, access(path, R_OK) ? strerror(errno) : "not valid JSON");
	if (!json_object_object_get_ex(o, "kshield_sites", &v) || json_object_get_int(v) != 1 ||
	    !jstr(o, "build_id") || !jstr(o, "build_id")[0])
		err = ks_err(-EINVAL, "%s is not a kshield sites manifest (version 1)", path);
	json_object_put(o);
	return err;
}

/* Build IDs of the other manifests in @dir, for the refusal message. */
static void other_manifests(const char *dir, char *out, size_t len)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t off = 0;

	out[0] = 0;
	while (d && (de = readdir(d)) && off + 16 < len) {
		size_t n = strlen(de->d_name);

		if (n > 5 && !strcmp(de->d_name + n - 5, ".json"))
			off += snprintf(out + off, len - off, "%s%.*s", off ? ", " : "",
					(int)(n - 5), de->d_name);
	}
	if (d)
		closedir(d);
}

int ks_kernel_sites(const char *function, const struct ks_kernel_src *src, struct ks_sites *s)
{
	char id[KS_BUILD_ID_HEX], path[PATH_MAX], others[512];
	const char *source;
	struct utsname u;
	int err, merr;

	memset(s, 0, sizeof(*s));
	if (src && src->vmlinux)
		return ks_sites_find_vmlinux(src->vmlinux, function, s);
	if ((err = ks_kernel_build_id(id, sizeof(id))))
		return err;
	if (src && src->manifest)
		return ks_sites_manifest_read(src->manifest, function, id, s);

	snprintf(path, sizeof(path), "%s/%s.json", sites_dir(), id);
	merr = ks_sites_manifest_read(path, function, id, s);
	if (!merr || merr != -ENOENT || !access(path, F_OK))
		return merr;	/* found, refused, or listed without FUNCTION */

	uname(&u);
	err = ks_kernel_vmlinux_find(id, u.release, KS_DEBUG_LOCAL, path, sizeof(path), &source);
	if (!err) {
		err = ks_sites_find_vmlinux(path, function, s);
		if (!err)
			s->debug_source = source;
		return err;
	}
	if (err == -EILSEQ)
		return err;
	other_manifests(sites_dir(), others, sizeof(others));
	return ks_err(-ENOENT, "no sites for kernel %s %s (build ID %s): no %s/%s.json%s%s%s and "
		      "no vmlinux with that build ID here; make the manifest where the kernel's "
		      "-dbg package is: kshield sites export kernel:%s --vmlinux FILE -o %s.json",
		      u.release, function, id, sites_dir(), id,
		      others[0] ? " (there: " : "", others, others[0] ? ")" : "", function, id);
}

/* ---- kprobes ------------------------------------------------------------ */

bool ks_kprobes_available(char *why, size_t len)
{
	/* libbpf attaches kprobes through this perf event source (or the
	 * legacy tracefs kprobe_events): both exist only with CONFIG_KPROBES. */
	if (!access("/sys/bus/event_source/devices/kprobe", F_OK) ||
	    !access("/sys/kernel/tracing/kprobe_events", F_OK) ||
	    !access("/sys/kernel/debug/tracing/kprobe_events", F_OK))
		return true;
	snprintf(why, len, "no kprobes on this kernel (CONFIG_KPROBES off)");
	return false;
}

/* ks_site_attach_fn of kprobes (at the copy's symbol + offset). */
static int attach_kprobe(struct bpf_program *prog, const struct ks_sites *s, int i, void *ctx,
			 struct bpf_link **link)
{
	const struct ks_site *site = &s->site[i];
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .bpf_cookie = i, .offset = site->symbol_offset);
	int err;

	(void)ctx;
	*link = bpf_program__attach_kprobe_opts(prog, site->symbol, &opts);
	if (*link)
		return 0;
	err = -errno;
	return ks_err(err, "%s: kprobe at %s+0x%llx (copy #%d of %s in %s): %s%s",
		      bpf_program__name(prog), site->symbol, (unsigned long long)site->symbol_offset,
		      i, s->function, site->caller, strerror(-err),
		      err == -EILSEQ ? " (not an instruction boundary in this kernel)" : "");
}

int ks_kprobe_attach_resolved(struct bpf_program *prog, const struct ks_sites *s,
			      struct bpf_map *sites_map, unsigned flags,
			      struct bpf_link ***links, int *nlinks)
{
	char why[128];
	int i;

	*links = NULL;
	*nlinks = 0;
	if (!ks_kprobes_available(why, sizeof(why)))
		return ks_err(-EOPNOTSUPP, "%s", why);
	if (sites_map && s->nsites > (int)bpf_map__max_entries(sites_map))
		return ks_err(-E2BIG, "%s has %d copies in the kernel, more than the %u entries "
			      "of %s (size it before the load)", s->function, s->nsites,
			      bpf_map__max_entries(sites_map), bpf_map__name(sites_map));
	if (!(flags & KS_SITES_PARTIAL))
		for (i = 0; i < s->nsites; i++)
			if (!s->site[i].probeable && !s->site[i].covered)
				return ks_err(-EOPNOTSUPP, "copy #%d of kernel %s in %s at 0x%llx "
					      "cannot carry a kprobe: %s", i, s->function,
					      s->site[i].caller, (unsigned long long)s->site[i].addr,
					      s->site[i].why);
	return ks_sites_attach_each(prog, s, sites_map, true, attach_kprobe, NULL, links, nlinks);
}
