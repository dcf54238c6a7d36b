// SPDX-License-Identifier: MIT
/* bpf_runtime.c - run a command with the kernel's BPF run-time statistics
 * on (BPF_ENABLE_STATS, held only for the command's lifetime) and print,
 * for each pinned link (or program) given, the program's runs and nanoseconds during
 * the command:
 *	bpf_runtime LINK_PIN... -- CMD ARGS...
 * prints "name runs ns" per link, then the command's own stdout. The time
 * is measured by the kernel around each run, so it is the programs' cost
 * alone, without the neighbours' noise that workload timings carry. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

/* Raw bpf(2): the generic bench rule links no libbpf. */
static int sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static int bpf_obj_get(const char *path)
{
	union bpf_attr a = { .pathname = (uintptr_t)path };

	return sys_bpf(BPF_OBJ_GET, &a);
}

static int bpf_obj_get_info_by_fd(int fd, void *info, __u32 *len)
{
	union bpf_attr a = { .info = { .bpf_fd = fd, .info_len = *len, .info = (uintptr_t)info } };
	int err = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);

	*len = a.info.info_len;
	return err;
}

static int bpf_prog_get_fd_by_id(__u32 id)
{
	union bpf_attr a = { .prog_id = id };

	return sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
}

static int bpf_enable_stats(int type)
{
	union bpf_attr a = { .enable_stats = { .type = type } };

	return sys_bpf(BPF_ENABLE_STATS, &a);
}

struct prog {
	char name[BPF_OBJ_NAME_LEN];
	int fd;
	__u64 cnt, ns;
};

/* The program behind pin @pin: a link's (link_*), or a program pinned
 * itself (prog_*: one the syscall dispatcher runs). */
static int prog_of_link(const char *pin, struct prog *p)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	const char *base = strrchr(pin, '/');
	__u32 len = sizeof(li);
	int lfd = bpf_obj_get(pin);

	base = base ? base + 1 : pin;
	if (lfd >= 0 && !strncmp(base, "prog_", 5)) {
		p->fd = lfd;
	} else {
		if (lfd < 0 || bpf_obj_get_info_by_fd(lfd, &li, &len))
			return -errno;
		close(lfd);
		p->fd = bpf_prog_get_fd_by_id(li.prog_id);
	}
	len = sizeof(pi);
	if (p->fd < 0 || bpf_obj_get_info_by_fd(p->fd, &pi, &len))
		return -errno;
	snprintf(p->name, sizeof(p->name), "%s", pi.name);
	p->cnt = pi.run_cnt;
	p->ns = pi.run_time_ns;
	return 0;
}

int main(int argc, char **argv)
{
	struct prog progs[256];
	int n = 0, i, stats, status;
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (n == 256) {
			fprintf(stderr, "bpf_runtime: more than 256 links\n");
			return 1;
		}
		if (prog_of_link(argv[i], &progs[n])) {
			fprintf(stderr, "bpf_runtime: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		n++;
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: bpf_runtime LINK_PIN... -- CMD ARGS...\n");
		return 2;
	}
	stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats < 0) {
		fprintf(stderr, "bpf_runtime: can't enable BPF statistics: %s\n", strerror(errno));
		return 1;
	}
	for (int k = 0; k < n; k++) {	/* baseline with statistics on */
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);

		bpf_obj_get_info_by_fd(progs[k].fd, &pi, &len);
		progs[k].cnt = pi.run_cnt;
		progs[k].ns = pi.run_time_ns;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execvp(argv[i + 1], argv + i + 1);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	for (int k = 0; k < n; k++) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);

		bpf_obj_get_info_by_fd(progs[k].fd, &pi, &len);
		fprintf(stderr, "%s %llu %llu\n", progs[k].name,
			(unsigned long long)(pi.run_cnt - progs[k].cnt),
			(unsigned long long)(pi.run_time_ns - progs[k].ns));
	}
	close(stats);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
