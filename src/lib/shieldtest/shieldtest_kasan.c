// SPDX-License-Identifier: MIT
/* shieldtest_kasan.c - a kernel memory-safety report read from /dev/kmsg,
 * the effect a use-after-free or out-of-bounds bug leaves on a KASAN
 * kernel (see shieldtest_effect.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "shieldtest.h"
#include "shieldtest_effect.h"

int ks_fx_kasan_mark(char *why, size_t len)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		snprintf(why, len, "open /dev/kmsg: %s", strerror(errno));
		return -errno;
	}
	/* Only what the kernel logs from now on. */
	if (lseek(fd, 0, SEEK_END) < 0) {
		snprintf(why, len, "seek to the end of /dev/kmsg: %s", strerror(errno));
		close(fd);
		return -errno;
	}
	return fd;
}

struct report {
	int in;			/* inside a report */
	int named;		/* a report naming func seen */
	char first[200];	/* that report's first line */
	char other[200];	/* the first report not naming func */
	char cur[200];		/* the current report's first line */
};

static const char *const starts[] = {
	"BUG: KASAN:", "general protection fault", "BUG: unable to handle",
	"kernel BUG at", "Oops:", "UBSAN:",
};

/* @func in @msg as a symbol: "func+0x", "func.isra.0+0x", " func " ... */
static int names(const char *msg, const char *func)
{
	size_t n = strlen(func);
	const char *p;

	for (p = strstr(msg, func); p; p = strstr(p + 1, func)) {
		char before = p == msg ? ' ' : p[-1], after = p[n];

		if ((before == ' ' || before == '\t' || before == '(') &&
		    (after == '+' || after == '.' || after == ' ' || after == '\0'))
			return 1;
	}
	return 0;
}

static void end_report(struct report *r)
{
	if (r->in && !r->named && !r->other[0])
		snprintf(r->other, sizeof(r->other), "%s", r->cur);
	r->in = 0;
}

static void record(struct report *r, const char *msg, const char *func)
{
	size_t i;

	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		if (strncmp(msg, starts[i], strlen(starts[i])))
			continue;
		end_report(r);
		r->in = 1;
		snprintf(r->cur, sizeof(r->cur), "%s", msg);
		break;
	}
	if (!r->in || r->named)
		return;
	if (!func || names(msg, func)) {
		r->named = 1;
		snprintf(r->first, sizeof(r->first), "%s", r->cur);
		r->in = 0;
		return;
	}
	/* KASAN closes its report with a line of '='; an Oops with its end
	 * marker. */
	if (!strncmp(msg, "==========", 10) || strstr(msg, "---[ end trace"))
		end_report(r);
}

/* Every record now readable from @fd into @r. 0 or -errno. */
static int scan(int fd, struct report *r, const char *func)
{
	char buf[8192];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		char *msg, *nl;

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten before read: go on */
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		buf[n] = '\0';
		/* "prio,seq,usec,flags;text\n" then " KEY=value" lines. */
		msg = strchr(buf, ';');
		if (!msg)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		while (*msg == ' ')
			msg++;
		record(r, msg, func);
	}
}

static int verdict(const struct report *r, const char *func, char *why, size_t len)
{
	if (r->named) {
		snprintf(why, len, "%s", r->first);
		return KS_CASE_EFFECT;
	}
	if (r->in && !r->other[0])
		snprintf(why, len, "a report not naming %s: %s", func, r->cur);
	else if (r->other[0])
		snprintf(why, len, "a report not naming %s: %s", func, r->other);
	else if (len)
		why[0] = '\0';
	return KS_CASE_NOEFFECT;
}

int ks_fx_kasan_since(int mark, const char *func, char *why, size_t len)
{
	struct report r = { 0 };
	int err = scan(mark, &r, func);

	if (err) {
		snprintf(why, len, "read /dev/kmsg: %s", strerror(-err));
		return err;
	}
	return verdict(&r, func, why, len);
}

int ks_fx_kasan_wait(int mark, const char *func, int ms, char *why, size_t len)
{
	struct report r = { 0 };
	struct timespec t0, t;
	int err, left = ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = mark, .events = POLLIN };

		err = scan(mark, &r, func);
		if (err) {
			snprintf(why, len, "read /dev/kmsg: %s", strerror(-err));
			return err;
		}
		if (r.named || left <= 0)
			break;
		poll(&p, 1, left);
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
	}
	return verdict(&r, func, why, len);
}
