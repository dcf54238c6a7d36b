/* SPDX-License-Identifier: MIT */
/* agent_harness.h - what the monitor, agent and store tests share: a bpffs
 * root and a store of their own, starting `kshield agent` in the
 * background, waiting for events to reach the store, and reading it.
 *
 * Every test run uses /sys/fs/bpf/ks-test-mon-<pid> and a fresh temporary
 * directory, so it never touches another engineer's pins or store. The
 * monitor sees the whole host, so tests find their own events by pid and
 * by marker arguments, never by counting everything.
 */
#ifndef KSHIELD_TEST_AGENT_HARNESS_H
#define KSHIELD_TEST_AGENT_HARNESS_H

#include <signal.h>
#include <sqlite3.h>
#include <time.h>
#include "harness.h"

struct ka_env {
	char root[128];		/* bpffs root */
	char dir[128];		/* scratch directory */
	char store[256];	/* store path in it */
	pid_t agent;
};

static inline void ka_setup(struct ka_env *e, const char *tag)
{
	snprintf(e->root, sizeof(e->root), "/sys/fs/bpf/ks-test-mon-%d-%s", getpid(), tag);
	snprintf(e->dir, sizeof(e->dir), "/tmp/ks-test-mon-%d-%s", getpid(), tag);
	snprintf(e->store, sizeof(e->store), "%s/events.db", e->dir);
	ks_runf(NULL, NULL, "rm -rf %s %s; mkdir -p %s", e->root, e->dir, e->dir);
	setenv("KSHIELD_BPFFS", e->root, 1);
	e->agent = 0;
}

static inline double ka_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Start `kshield agent --store <store> <args>` with stdout and stderr in
 * <dir>/agent.out and <dir>/agent.err; wait until it says it is storing (or
 * failing to store) events. Returns its pid. */
static inline pid_t ka_start_args(struct ka_env *e, const char *args)
{
	char out[300], err[300], *text;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/agent.out", e->dir);
	snprintf(err, sizeof(err), "%s/agent.err", e->dir);
	unlink(err);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
		int r = open(err, O_WRONLY | O_CREAT | O_APPEND, 0600);

		dup2(o, 1);
		dup2(r, 2);
		setsid();
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "exec %s agent --store %s %s", ks_bin(), e->store, args);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (double t0 = ka_now(); ka_now() - t0 < 20; usleep(20000)) {
		text = ks_read_file(err);
		if (text && (strstr(text, "storing events") || strstr(text, "store:") ||
			     strstr(text, "error:"))) {
			free(text);
			break;
		}
		free(text);
	}
	e->agent = pid;
	return pid;
}

/* The same with --no-shields <extra>: the monitor alone. */
static inline pid_t ka_start(struct ka_env *e, const char *extra)
{
	char args[900];

	snprintf(args, sizeof(args), "--no-shields %s", extra ? extra : "");
	return ka_start_args(e, args);
}

/* The agent's stderr so far (free() it). */
static inline char *ka_agent_err(struct ka_env *e)
{
	char err[300];

	snprintf(err, sizeof(err), "%s/agent.err", e->dir);
	return ks_read_file(err);
}

/* Stop the agent with @sig and reap it; returns its wait status. */
static inline int ka_stop(struct ka_env *e, int sig)
{
	int status = -1;

	if (e->agent > 0) {
		kill(e->agent, sig);
		waitpid(e->agent, &status, 0);
		e->agent = 0;
	}
	return status;
}

static inline void ka_teardown(struct ka_env *e)
{
	ka_stop(e, SIGTERM);
	ks_runf(NULL, NULL, "rm -rf %s %s", e->root, e->dir);
}

/* Run `kshield events -j --store <store> <args>` until it returns at least
 * @min events or @timeout_s passes; returns the array (put it) or NULL. */
static inline json_object *ka_events(struct ka_env *e, const char *args, size_t min,
				     double timeout_s)
{
	char cmd[1024];
	json_object *arr = NULL;

	snprintf(cmd, sizeof(cmd), "%s -j events --store %s --limit 0 %s", ks_bin(), e->store, args);
	for (double t0 = ka_now();; usleep(100000)) {
		json_object_put(arr);
		arr = ks_run_json(cmd, NULL, NULL);
		if (arr && json_object_is_type(arr, json_type_array) &&
		    json_object_array_length(arr) >= min)
			return arr;
		if (ka_now() - t0 > timeout_s)
			return arr;
	}
}

static inline long long ka_int(json_object *o, const char *path)
{
	json_object *v = ks_json_get(o, path);

	return v ? json_object_get_int64(v) : -1;
}

static inline const char *ka_str(json_object *o, const char *path)
{
	json_object *v = ks_json_get(o, path);

	return v ? json_object_get_string(v) : "";
}

/* One integer from an SQL query on the store (-1 on error). */
static inline long long ka_sql_int(const char *db_path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	sqlite3_busy_timeout(db, 2000);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

#endif
