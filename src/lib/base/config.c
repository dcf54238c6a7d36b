// SPDX-License-Identifier: MIT
/* config.c - parse the agent's `key = value` configuration file (see
 * config.h for the keys). Every error names the file and line, in one line,
 * because `kshield agent --check` is what an operator runs before
 * `systemctl reload kshield`. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "config.h"

void ks_config_defaults(struct ks_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->store, sizeof(cfg->store), "%s", KS_STORE_DEFAULT);
	snprintf(cfg->shields_dir, sizeof(cfg->shields_dir), "%s", KS_SHIELDS_DIR_DEFAULT);
	snprintf(cfg->weaken_token, sizeof(cfg->weaken_token), "%s", KS_WEAKEN_TOKEN_DEFAULT);
	cfg->default_mode = KS_MODE_ENFORCE;
	cfg->check_interval_s = 5;
	cfg->flow_interval_s = 60;
	cfg->flow = true;
}

int ks_mode_parse(const char *s, enum ks_mode *mode)
{
	if (!strcmp(s, "enforce"))
		*mode = KS_MODE_ENFORCE;
	else if (!strcmp(s, "audit"))
		*mode = KS_MODE_AUDIT;
	else
		return -EINVAL;
	return 0;
}

const char *ks_mode_str(enum ks_mode mode)
{
	return mode == KS_MODE_AUDIT ? "audit" : "enforce";
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* "30d", "90m", "10" (seconds) or "512M", "2G", "100" (bytes): @units maps
 * suffix letters to multipliers. */
static int parse_scaled(const char *v, const char *units, const __u64 *mult, __u64 *out)
{
	char *end;
	unsigned long long n;
	const char *u;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	if (!*end) {
		*out = n;
		return 0;
	}
	u = strchr(units, toupper((unsigned char)*end));
	if (!u || end[1])
		return -EINVAL;
	*out = n * mult[u - units];
	return 0;
}

static int parse_duration(const char *v, __u64 *out)
{
	static const __u64 m[] = { 1, 60, 3600, 86400 };

	return parse_scaled(v, "SMHD", m, out);
}

static int parse_size(const char *v, __u64 *out)
{
	static const __u64 m[] = { 1ull << 10, 1ull << 20, 1ull << 30 };

	return parse_scaled(v, "KMG", m, out);
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int set_path(char *dst, size_t len, const char *v)
{
	if (v[0] != '/')
		return -EINVAL;
	if (strlen(v) >= len)
		return -ENAMETOOLONG;
	snprintf(dst, len, "%s", v);
	return 0;
}

static bool valid_shield_name(const char *n, size_t len)
{
	if (!len || len >= KS_NAME_LEN || n[0] == '_' || n[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)n[i]) && n[i] != '-' && n[i] != '_')
			return false;
	return true;
}

/* shield.<name>.mode, shield.<name>.promote */
static int set_shield_mode(struct ks_config *cfg, const char *key, const char *v,
			   const char *file, int line)
{
	const char *name = key + strlen("shield.");
	const char *dot = strrchr(name, '.');
	struct ks_shield_mode *s = NULL;
	enum ks_mode mode = KS_MODE_ENFORCE;
	bool promote = false, is_promote = dot && !strcmp(dot, ".promote");
	size_t n;

	if (!dot || dot == name || (strcmp(dot, ".mode") && !is_promote))
		return ks_err(-EINVAL, "%s:%d: unknown key '%s' (per-shield keys are "
			      "shield.<name>.mode and shield.<name>.promote)", file, line, key);
	n = dot - name;
	if (!valid_shield_name(name, n))
		return ks_err(-EINVAL, "%s:%d: invalid shield name '%.*s'", file, line, (int)n, name);
	if (is_promote ? parse_bool(v, &promote) : ks_mode_parse(v, &mode))
		return ks_err(-EINVAL, "%s:%d: %s: %s '%s' (use %s)", file, line, key,
			      is_promote ? "invalid value" : "unknown mode", v,
			      is_promote ? "on or off" : "enforce or audit");
	for (int i = 0; i < cfg->nshields; i++)
		if (strlen(cfg->shields[i].name) == n && !strncmp(cfg->shields[i].name, name, n))
			s = &cfg->shields[i];
	if (!s) {
		if (cfg->nshields == KS_CONFIG_MAX_SHIELDS)
			return ks_err(-E2BIG, "%s:%d: more than %d shield.<name>.mode lines",
				      file, line, KS_CONFIG_MAX_SHIELDS);
		s = &cfg->shields[cfg->nshields++];
		s->mode = cfg->default_mode;	/* until a .mode line says otherwise */
	}
	snprintf(s->name, sizeof(s->name), "%.*s", (int)n, name);
	if (is_promote) {
		s->promote = promote;
	} else {
		s->mode = mode;
		s->has_mode = true;
	}
	s->line = line;
	return 0;
}

static int set_key(struct ks_config *cfg, const char *k, const char *v, const char *file, int line)
{
	int err = 0;
	const char *want = NULL;

	if (!strncmp(k, "shield.", 7))
		return set_shield_mode(cfg, k, v, file, line);
	if (!strcmp(k, "store")) {
		err = set_path(cfg->store, sizeof(cfg->store), v);
		want = "an absolute path";
	} else if (!strcmp(k, "shields_dir")) {
		err = set_path(cfg->shields_dir, sizeof(cfg->shields_dir), v);
		want = "an absolute path";
	} else if (!strcmp(k, "btf_dir")) {
		err = set_path(cfg->btf_dir, sizeof(cfg->btf_dir), v);
		want = "an absolute path";
	} else if (!strcmp(k, "sites_dir")) {
		err = set_path(cfg->sites_dir, sizeof(cfg->sites_dir), v);
		want = "an absolute path";
	} else if (!strcmp(k, "weaken_token")) {
		err = set_path(cfg->weaken_token, sizeof(cfg->weaken_token), v);
		want = "an absolute path";
	} else if (!strcmp(k, "keys_dir")) {
		err = set_path(cfg->keys_dir, sizeof(cfg->keys_dir), v);
		want = "an absolute path";
	} else if (!strcmp(k, "metrics")) {
		err = !strcmp(v, "off") ? (cfg->metrics[0] = '\0', 0) :
		      !strrchr(v, ':') || strlen(v) >= sizeof(cfg->metrics) ? -EINVAL :
		      (snprintf(cfg->metrics, sizeof(cfg->metrics), "%s", v), 0);
		want = "ADDR:PORT like 127.0.0.1:9477 or [::1]:9477, or off";
	} else if (!strcmp(k, "metrics_textfile")) {
		err = set_path(cfg->metrics_textfile, sizeof(cfg->metrics_textfile), v);
		want = "an absolute path";
	} else if (!strcmp(k, "bpffs")) {
		err = set_path(cfg->bpffs, sizeof(cfg->bpffs), v);
		want = "an absolute path";
	} else if (!strcmp(k, "retention") || !strcmp(k, "keep")) {
		err = parse_duration(v, &cfg->retention_s);
		want = "a duration like 30d, 12h, 90m or 600 (seconds)";
	} else if (!strcmp(k, "check_interval")) {
		err = parse_duration(v, &cfg->check_interval_s);
		if (!err && !cfg->check_interval_s)
			err = -EINVAL;
		want = "a duration of at least 1s, like 5s or 1m";
	} else if (!strcmp(k, "flow_interval")) {
		err = parse_duration(v, &cfg->flow_interval_s);
		if (!err && !cfg->flow_interval_s)
			err = -EINVAL;
		want = "a duration of at least 1s, like 60s or 5m";
	} else if (!strcmp(k, "max_size")) {
		err = parse_size(v, &cfg->max_size);
		want = "a size like 512M, 2G or 1048576 (bytes)";
	} else if (!strcmp(k, "default_mode")) {
		err = ks_mode_parse(v, &cfg->default_mode);
		want = "enforce or audit";
	} else if (!strcmp(k, "flow")) {
		err = parse_bool(v, &cfg->flow);
		want = "on or off";
	} else if (!strcmp(k, "guard")) {
		err = parse_bool(v, &cfg->guard);
		want = "on or off";
	} else if (!strcmp(k, "gated")) {
		err = parse_bool(v, &cfg->gated);
		want = "on or off";
	} else {
		return ks_err(-EINVAL, "%s:%d: unknown key '%s'", file, line, k);
	}
	if (err)
		return ks_err(-EINVAL, "%s:%d: %s: invalid value '%s' (want %s)",
			      file, line, k, v, want);
	return 0;
}

int ks_config_load(struct ks_config *cfg, const char *path, bool must_exist)
{
	char buf[8192];
	FILE *f = fopen(path, "re");
	int line = 0, err = 0;

	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return ks_err(-errno, "can't read config %s: %s", path, strerror(errno));
	}
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	while (!err && fgets(buf, sizeof(buf), f)) {
		char *s, *eq, *k, *v;

		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			err = ks_err(-EINVAL, "%s:%d: line too long", path, line);
			break;
		}
		s = trim(buf);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			err = ks_err(-EINVAL, "%s:%d: expected 'key = value', got '%s'", path, line, s);
			break;
		}
		*eq = '\0';
		k = trim(s);
		v = trim(eq + 1);
		if (!*k)
			err = ks_err(-EINVAL, "%s:%d: missing key before '='", path, line);
		else if (!*v)
			err = ks_err(-EINVAL, "%s:%d: %s: missing value", path, line, k);
		else
			err = set_key(cfg, k, v, path, line);
	}
	fclose(f);
	return err;
}

enum ks_mode ks_config_mode(const struct ks_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nshields; i++)
		if (!strcmp(cfg->shields[i].name, name) && cfg->shields[i].has_mode)
			return cfg->shields[i].mode;
	return cfg->default_mode;
}

bool ks_config_promoted(const struct ks_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nshields; i++)
		if (!strcmp(cfg->shields[i].name, name))
			return cfg->shields[i].promote;
	return false;
}

int ks_config_reload(struct ks_config *cfg)
{
	static struct ks_config n;	/* large; the agent is single-threaded */
	int err;

	if (!cfg->path[0])
		return 0;
	ks_config_defaults(&n);
	err = ks_config_load(&n, cfg->path, true);
	if (err)
		return err;
	cfg->default_mode = n.default_mode;
	cfg->guard = n.guard;
	cfg->check_interval_s = n.check_interval_s;
	cfg->nshields = n.nshields;
	memcpy(cfg->shields, n.shields, sizeof(n.shields));
	return 0;
}
