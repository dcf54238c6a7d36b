/* SPDX-License-Identifier: MIT */
/* harness.h - what every kshield test needs to drive the real binary: run a
 * command line, capture its stdout, stderr and exit status, and parse JSON
 * output with json-c. Header-only (static inline) so every test file includes
 * it without a separate object; nothing here is Criterion-specific.
 *
 * Typical use:
 *
 *	char *out, *err;
 *	int rc = ks_runf(&out, &err, "%s probe -j", ks_bin());
 *	cr_assert_eq(rc, 0, "stderr: %s", err);
 *	json_object *o = ks_json_parse(out);
 *	...
 *	json_object_put(o); free(out); free(err);
 *
 * The binary under test is $KSHIELD (set by `make test-host`), else
 * build/kshield relative to the current directory.
 */
#ifndef KSHIELD_TEST_HARNESS_H
#define KSHIELD_TEST_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <json-c/json.h>

/* Path of the kshield binary under test. */
/* A loopback TCP port nobody listens on now, chosen by the kernel (a
 * port derived from the pid can be some connection's ephemeral port);
 * -1 when none. */
static inline int ks_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (s >= 0 && !bind(s, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(s, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

static inline const char *ks_bin(void)
{
	const char *b = getenv("KSHIELD");

	return b && *b ? b : "build/kshield";
}

/* Directory of built shield objects ($KSHIELD_SHIELDS, else build/shields). */
static inline const char *ks_shields_dir(void)
{
	const char *d = getenv("KSHIELD_SHIELDS");

	return d && *d ? d : "build/shields";
}

/* Directory of test fixture objects ($KSHIELD_FIXTURES, else
 * build/tests/fixtures). */
static inline const char *ks_fixtures_dir(void)
{
	const char *d = getenv("KSHIELD_FIXTURES");

	return d && *d ? d : "build/tests/fixtures";
}

/* A shield that refuses with EPERM on this host (cgroup/setsockopt): the
 * 64-bit IPT_SO_SET_REPLACE of KS_SOCKOPT_TRIGGER from a user namespace. */
#define KS_SOCKOPT_SHIELD	"fixture-sockopt"
#define KS_SOCKOPT_OBJ		"sockopt-shield.bpf.o"
#define KS_SOCKOPT_TRIGGER	"unshare -Urn iptables-legacy -w -A INPUT -j ACCEPT"

/* Append what is readable on @fd to the growing buffer *@buf (size *@len).
 * Returns bytes read, 0 at EOF, -1 on error. */
static inline ssize_t ks__drain(int fd, char **buf, size_t *len)
{
	char chunk[4096];
	ssize_t n = read(fd, chunk, sizeof(chunk));
	char *nb;

	if (n <= 0)
		return n < 0 && errno == EINTR ? 1 : n;
	nb = realloc(*buf, *len + n + 1);
	if (!nb)
		return -1;
	memcpy(nb + *len, chunk, n);
	*len += n;
	nb[*len] = '\0';
	*buf = nb;
	return n;
}

/* Run @cmdline with /bin/sh -c. When @out / @err are not NULL they receive
 * malloc'ed, NUL-terminated copies of stdout / stderr (never NULL on return;
 * free() them). Returns the exit status, 128+N when killed by signal N, or
 * -1 when the command could not be started. */
static inline int ks_run(const char *cmdline, char **out, char **err)
{
	int po[2], pe[2], status;
	char *bo = calloc(1, 1), *be = calloc(1, 1);
	size_t lo = 0, le = 0;
	pid_t pid;

	if (!bo || !be || pipe(po) || pipe(pe)) {
		free(bo);
		free(be);
		return -1;
	}
	/* Close-on-exec: the command sees the pipes only as its stdout and
	 * stderr. Note that a daemon the command leaves running keeps them open
	 * and makes ks_run() wait for it; redirect such a daemon's output. */
	for (int i = 0; i < 2; i++) {
		fcntl(po[i], F_SETFD, FD_CLOEXEC);
		fcntl(pe[i], F_SETFD, FD_CLOEXEC);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		free(bo);
		free(be);
		return -1;
	}
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execl("/bin/sh", "sh", "-c", cmdline, (char *)NULL);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* Read both pipes together so a chatty stderr cannot block stdout. */
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			if (ks__drain(fds[i].fd, i ? &be : &bo, i ? &le : &lo) <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
			}
		}
	}
	if (fds[0].fd >= 0)
		close(fds[0].fd);
	if (fds[1].fd >= 0)
		close(fds[1].fd);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (out)
		*out = bo;
	else
		free(bo);
	if (err)
		*err = be;
	else
		free(be);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/* ks_run() with a printf-style command line. */
static inline int ks_runf(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int ks_runf(char **out, char **err, const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (rc < 0 || !(cmd = malloc(rc + 1)))
		return -1;
	va_start(ap, fmt);
	vsnprintf(cmd, rc + 1, fmt, ap);
	va_end(ap);
	rc = ks_run(cmd, out, err);
	free(cmd);
	return rc;
}

/* Parse @text as one JSON value; NULL when it is not JSON. Put the result
 * with json_object_put(). */
static inline json_object *ks_json_parse(const char *text)
{
	enum json_tokener_error jerr;
	json_object *o;

	if (!text)
		return NULL;
	o = json_tokener_parse_verbose(text, &jerr);
	return jerr == json_tokener_success ? o : NULL;
}

/* Run @cmdline and parse its stdout as JSON. *@status (if not NULL) gets the
 * exit status, *@err (if not NULL) the captured stderr (free() it). Returns
 * NULL when stdout is not JSON. */
static inline json_object *ks_run_json(const char *cmdline, int *status, char **err)
{
	char *out = NULL;
	int rc = ks_run(cmdline, &out, err);
	json_object *o = ks_json_parse(out);

	if (status)
		*status = rc;
	free(out);
	return o;
}

/* Member at dotted @path ("hooks.lsm"; a number steps into an array:
 * "paths.0.name"); NULL when any step is missing. The result is borrowed
 * from @o. */
static inline json_object *ks_json_get(json_object *o, const char *path)
{
	char key[256];
	const char *p = path;

	while (o && *p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		if (json_object_is_type(o, json_type_array) && n && strspn(key, "0123456789") == n) {
			o = json_object_array_get_idx(o, atoi(key));
		} else if (!json_object_is_type(o, json_type_object) ||
			   !json_object_object_get_ex(o, key, &o)) {
			return NULL;
		}
		p += n + (p[n] == '.');
	}
	return o;
}

/* Read a whole small file into a malloc'ed string; NULL on error. */
static inline char *ks_read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (ks__drain(fileno(f), &buf, &len) >= 0)
		while (ks__drain(fileno(f), &buf, &len) > 0)
			;
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	return buf;
}

#endif /* KSHIELD_TEST_HARNESS_H */
