/* SPDX-License-Identifier: MIT */
/* fleet_harness.h - what the fleet tests share: a shell step that must
 * succeed, and the loopback NATS + PostgreSQL cluster (tests/fleet/cluster.sh),
 * one per test runner, started by the first test that needs it and stopped
 * by test_fleet.c's POST_ALL hook. Header-only, as harness.h. */
#ifndef KS_TESTS_FLEET_HARNESS_H
#define KS_TESTS_FLEET_HARNESS_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"

/* Run a shell command line (printf-style); the test fails unless it exits 0. */
static inline void ks_sh_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void ks_sh_ok(const char *fmt, ...)
{
	char cmd[4096], *out = NULL, *err = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = ks_run(cmd, &out, &err);
	cr_assert_eq(rc, 0, "'%s' failed (%d): %s%s", cmd, rc, out, err);
	free(out);
	free(err);
}

/* The runner's cluster (its dir in @cdir): started if not yet, its NATS
 * URLs (admin and host credentials) read from its env file, and the
 * buckets made (the operator creates them: agents' credentials can't). */
static inline void ks_fleet_cluster_up(char *cdir, size_t cn, char *urls, size_t un,
				       char *host_urls, size_t hn)
{
	const char *h = getenv("KSHIELD_FLEET_HARNESS");
	char path[300], fmt[32], *env, *p, *err = NULL;
	struct stat st;

	snprintf(cdir, cn, "/tmp/ks-fleet-cluster-%d", (int)getppid());
	snprintf(path, sizeof(path), "%s/env", cdir);
	if (stat(path, &st)) {
		int rc = ks_runf(NULL, &err, "%s start %s", h && *h ? h : "tests/fleet/cluster.sh",
				 cdir);

		cr_assert_eq(rc, 0, "cluster start failed: %s", err);
		free(err);
	}
	env = ks_read_file(path);
	cr_assert(env, "no %s", path);
	p = strstr(env, "NATS_URLS=");
	cr_assert(p);
	snprintf(fmt, sizeof(fmt), "NATS_URLS=%%%zus", un - 1);
	sscanf(p, fmt, urls);
	p = strstr(env, "HOST_URLS=");
	cr_assert(p);
	snprintf(fmt, sizeof(fmt), "HOST_URLS=%%%zus", hn - 1);
	sscanf(p, fmt, host_urls);
	free(env);
	ks_sh_ok("%s fleet status --nats %s >/dev/null", ks_bin(), urls);
}

/* @dir/notes: a /sys/kernel/notes whose GNU build ID is @id (40 hex
 * digits), for a "kernel" the fleet tests pretend to run. */
static inline void ks_fake_notes(const char *dir, const char *id)
{
	unsigned char buf[64] = { 4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0 };
	char path[512];
	FILE *f;

	for (int i = 0; i < 20; i++)
		sscanf(id + 2 * i, "%2hhx", &buf[16 + i]);
	snprintf(path, sizeof(path), "%s/notes", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fwrite(buf, 1, 36, f);
	fclose(f);
}

#endif
