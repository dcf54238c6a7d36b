// SPDX-License-Identifier: MIT
/* test_monitor.c - the BPF monitor on this host's kernel, end to end: real
 * processes, sockets and syscalls, then exactly those events, with the
 * right fields, found in the store through `kshield events -j`. Each test
 * starts its own agent on its own bpffs root and store. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <linux/bpf.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <linux/types.h>
#include <kshield/event.h>
#include "agent_harness.h"

static struct ka_env env;

static void setup(void)
{
	ka_setup(&env, "m");
	ka_start(&env, NULL);
	char *err = ka_agent_err(&env);
	cr_assert(err && strstr(err, "storing events"), "agent did not start: %s", err);
	free(err);
}

static void teardown(void)
{
	ka_teardown(&env);
}

TestSuite(monitor, .init = setup, .fini = teardown, .timeout = 60);

static int wait_child(pid_t pid)
{
	int status;

	waitpid(pid, &status, 0);
	return status;
}

Test(monitor, t01_exec_and_exit_of_a_known_program)
{
	char marker[64], args[128];
	json_object *arr;
	pid_t pid;

	snprintf(marker, sizeof(marker), "ks-exec-%d", getpid());
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 7", marker, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 7);

	snprintf(args, sizeof(args), "--pid %d --kind exec,exit", pid);
	arr = ka_events(&env, args, 2, 10);
	cr_assert(arr, "no events for pid %d", pid);
	cr_assert_eq(json_object_array_length(arr), 2, "want exactly exec+exit for pid %d, got %zu",
		     pid, json_object_array_length(arr));
	json_object *ex = json_object_array_get_idx(arr, 0), *xt = json_object_array_get_idx(arr, 1);

	cr_expect_str_eq(ka_str(ex, "kind"), "exec");
	cr_expect_str_eq(ka_str(ex, "binary"), "/bin/sh");
	cr_expect(strstr(ka_str(ex, "args"), "sh -c exit 7"), "args: %s", ka_str(ex, "args"));
	cr_expect(strstr(ka_str(ex, "args"), marker), "args: %s", ka_str(ex, "args"));
	cr_expect_eq(ka_int(ex, "pid"), pid);
	cr_expect_eq(ka_int(ex, "ppid"), getpid());
	cr_expect_eq(ka_int(ex, "uid"), getuid());
	cr_expect_str_eq(ka_str(ex, "comm"), "sh");
	cr_expect(ka_int(ex, "exec_id") > 0);
	cr_expect_eq(ka_int(ex, "detail.setuid"), 0);

	cr_expect_str_eq(ka_str(xt, "kind"), "exit");
	cr_expect_eq(ka_int(xt, "detail.exit_code"), 7);
	cr_expect_eq(ka_int(xt, "detail.signal"), 0);
	cr_expect(ka_int(xt, "detail.lifetime_ns") > 0);
	/* the exit belongs to the image that ran */
	cr_expect_eq(ka_int(xt, "exec_id"), ka_int(ex, "exec_id"));
	json_object_put(arr);
}

Test(monitor, t02_ancestry_links_images_through_fork_and_exec)
{
	char cmd[256], marker[64], args[128];
	json_object *arr, *tree;
	long long pid;

	snprintf(marker, sizeof(marker), "ks-tree-%d", getpid());
	/* sh forks and execs true (the trailing ':' keeps sh from exec'ing
	 * directly); true's parent image is that sh. */
	snprintf(cmd, sizeof(cmd), "/bin/sh -c '/bin/true %s; :'", marker);
	cr_assert_eq(ks_run(cmd, NULL, NULL), 0);
	snprintf(args, sizeof(args), "--binary /bin/true --since 1m");
	arr = ka_events(&env, args, 1, 10);
	pid = -1;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
		if (strstr(ka_str(json_object_array_get_idx(arr, i), "args"), marker))
			pid = ka_int(json_object_array_get_idx(arr, i), "pid");
	json_object_put(arr);
	cr_assert(pid > 0, "exec of /bin/true %s not stored", marker);

	snprintf(cmd, sizeof(cmd), "%s -j events --store %s --tree %lld", ks_bin(), env.store, pid);
	tree = ks_run_json(cmd, NULL, NULL);
	cr_assert(tree, "events --tree gave no JSON");
	json_object *chain = ks_json_get(tree, "ancestry");
	cr_assert(chain && json_object_array_length(chain) >= 2, "ancestry too short");
	cr_expect_str_eq(ka_str(json_object_array_get_idx(chain, 0), "binary"), "/bin/true");
	cr_expect_str_eq(ka_str(json_object_array_get_idx(chain, 1), "binary"), "/bin/sh");
	cr_expect(strstr(ka_str(json_object_array_get_idx(chain, 1), "args"), marker));
	json_object_put(tree);
}

static void tcp_roundtrip(int family, int *lport, int *cport)
{
	struct sockaddr_storage ss = {};
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int l = socket(family, SOCK_STREAM, 0), c, a;

	cr_assert(l >= 0);
	ss.ss_family = family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	cr_assert_eq(bind(l, (void *)&ss, len), 0);
	cr_assert_eq(listen(l, 4), 0);
	cr_assert_eq(getsockname(l, (void *)&ss, &len), 0);
	*lport = ntohs(((struct sockaddr_in *)&ss)->sin_port);	/* same offset in _in6 */
	c = socket(family, SOCK_STREAM, 0);
	cr_assert_eq(connect(c, (void *)&ss, len), 0, "connect: %s", strerror(errno));
	a = accept(l, NULL, NULL);
	cr_assert(a >= 0);
	cr_assert_eq(getsockname(c, (void *)&ss, &len), 0);
	*cport = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	close(a);
	close(c);
	close(l);
}

static void check_tcp(int family, const char *loop)
{
	int lport, cport;
	char args[128];
	json_object *arr;

	tcp_roundtrip(family, &lport, &cport);
	snprintf(args, sizeof(args), "--port %d --kind listen,connect,accept", lport);
	arr = ka_events(&env, args, 3, 10);
	cr_assert(arr);
	cr_assert_eq(json_object_array_length(arr), 3, "want listen+connect+accept on port %d, got %zu",
		     lport, json_object_array_length(arr));
	int seen = 0;
	for (size_t i = 0; i < 3; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *k = ka_str(e, "kind");

		cr_expect_eq(ka_int(e, "pid"), getpid(), "%s pid", k);
		cr_expect_str_eq(ka_str(e, "laddr"), loop, "%s laddr", k);
		if (!strcmp(k, "listen")) {
			seen |= 1;
			cr_expect_eq(ka_int(e, "lport"), lport);
		} else if (!strcmp(k, "connect")) {
			seen |= 2;
			cr_expect_eq(ka_int(e, "lport"), cport);
			cr_expect_eq(ka_int(e, "rport"), lport);
			cr_expect_str_eq(ka_str(e, "raddr"), loop);
			cr_expect_eq(ka_int(e, "detail.established"), 1);
		} else if (!strcmp(k, "accept")) {
			seen |= 4;
			cr_expect_eq(ka_int(e, "lport"), lport);
			cr_expect_eq(ka_int(e, "rport"), cport);
			cr_expect_str_eq(ka_str(e, "raddr"), loop);
			cr_expect_eq(ka_int(e, "detail.owner_unknown"), 0);
		}
	}
	cr_expect_eq(seen, 7, "kinds seen: %d", seen);
	json_object_put(arr);
}

Test(monitor, t03_tcp_connect_accept_listen_ipv4)
{
	check_tcp(AF_INET, "127.0.0.1");
}

Test(monitor, t04_tcp_connect_accept_listen_ipv6)
{
	check_tcp(AF_INET6, "::1");
}

struct alg_addr {
	unsigned short family;
	unsigned char type[14];
	unsigned int feat, mask;
	unsigned char name[64];
};

Test(monitor, t05_watched_socket_families_and_af_alg_binds_only)
{
	struct alg_addr sa = { .family = 38 };
	char args[128], name[64];
	int fd, sock_errno, bind_ret, bind_errno, u, ok, nl;
	json_object *arr;

	/* ordinary sockets: not reported */
	ok = socket(AF_INET, SOCK_DGRAM, 0);
	nl = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	/* watched: AF_ALG (absent on this host: EAFNOSUPPORT) and netfilter netlink */
	fd = socket(38, SOCK_SEQPACKET, 0);
	sock_errno = errno;
	int nf = socket(AF_NETLINK, SOCK_RAW, 12 /* NETLINK_NETFILTER */);
	/* AF_ALG bind: the algorithm is read at sys_enter, whatever the fd */
	snprintf(name, sizeof(name), "authencesn(hmac(sha256),cbc(aes))-%d", getpid() % 1000);
	memcpy(sa.type, "aead", 5);
	memcpy(sa.name, name, strlen(name) + 1);
	u = fd >= 0 ? fd : ok;
	bind_ret = bind(u, (void *)&sa, sizeof(sa));
	bind_errno = errno;
	close(ok);
	close(nl);
	if (nf >= 0)
		close(nf);
	if (fd >= 0)
		close(fd);

	snprintf(args, sizeof(args), "--pid %d --kind socket", getpid());
	arr = ka_events(&env, args, 2, 10);
	cr_assert(arr);
	cr_assert_eq(json_object_array_length(arr), 2, "want AF_ALG + NETLINK_NETFILTER sockets only, got %zu",
		     json_object_array_length(arr));
	json_object *s0 = json_object_array_get_idx(arr, 0), *s1 = json_object_array_get_idx(arr, 1);
	cr_expect_eq(ka_int(s0, "detail.family"), 38);
	cr_expect_eq(ka_int(s0, "ret"), fd >= 0 ? fd : -sock_errno);
	cr_expect_eq(ka_int(s1, "detail.family"), AF_NETLINK);
	cr_expect_eq(ka_int(s1, "detail.protocol"), 12);
	cr_expect_eq(ka_int(s1, "ret"), nf);
	json_object_put(arr);

	snprintf(args, sizeof(args), "--pid %d --kind alg_bind", getpid());
	arr = ka_events(&env, args, 1, 10);
	cr_assert(arr);
	cr_assert_eq(json_object_array_length(arr), 1);
	json_object *b = json_object_array_get_idx(arr, 0);
	cr_expect_str_eq(ka_str(b, "alg_type"), "aead");
	cr_expect_str_eq(ka_str(b, "alg_name"), name);
	cr_expect_eq(ka_int(b, "ret"), bind_ret < 0 ? -bind_errno : 0);
	json_object_put(arr);

	/* the Copy Fail shield's hunt query finds it, with ancestry */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s -j hunt af-alg --store %s --since 1m", ks_bin(), env.store);
	json_object *h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h, "hunt af-alg gave no JSON");
	cr_expect(ka_int(h, "count") >= 2);
	json_object_put(h);
}

Test(monitor, t06_user_namespace_by_unprivileged_process_only)
{
	pid_t user, root;
	char args[128];
	json_object *arr;

	user = fork();
	if (user == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(unshare(CLONE_NEWUSER) ? 3 : 0);
	}
	cr_assert_eq(WEXITSTATUS(wait_child(user)), 0, "unprivileged unshare failed");
	root = fork();
	if (root == 0)
		_exit(unshare(CLONE_NEWUSER) ? 3 : 0);
	cr_assert_eq(WEXITSTATUS(wait_child(root)), 0);

	snprintf(args, sizeof(args), "--pid %d --kind userns", user);
	arr = ka_events(&env, args, 1, 10);
	cr_assert(arr);
	cr_assert_eq(json_object_array_length(arr), 1);
	json_object *e = json_object_array_get_idx(arr, 0);
	cr_expect_eq(ka_int(e, "uid"), 65534);
	cr_expect_eq(ka_int(e, "ret"), 0);
	cr_expect_str_eq(ka_str(e, "detail.syscall"), "unshare");
	json_object_put(arr);

	snprintf(args, sizeof(args), "--pid %d --kind userns", root);
	arr = ka_events(&env, args, 1, 1.5);
	cr_expect(arr && json_object_array_length(arr) == 0, "root's user namespace reported");
	json_object_put(arr);
}

Test(monitor, t07_privilege_rise_without_setuid_exec)
{
	char *out = NULL, args[128];
	json_object *arr;
	long long pid, drop;
	int rc;

	/* A process running as nobody with CAP_SETUID (ambient) makes itself
	 * root: euid rose with no set-id exec. */
	rc = ks_runf(&out, NULL, "setpriv --reuid=65534 --regid=65534 --clear-groups "
		     "--inh-caps=+setuid --ambient-caps=+setuid /usr/bin/python3 -c "
		     "'import os; os.setresuid(0,0,0); print(os.getpid())'");
	cr_assert_eq(rc, 0);
	pid = atoll(out);
	free(out);
	/* Root dropping to nobody is not a rise. */
	rc = ks_runf(&out, NULL, "/usr/bin/python3 -c 'import os; os.setresgid(65534,65534,65534); "
		     "os.setresuid(65534,65534,65534); print(os.getpid())'");
	cr_assert_eq(rc, 0);
	drop = atoll(out);
	free(out);

	snprintf(args, sizeof(args), "--pid %lld --kind privilege", pid);
	arr = ka_events(&env, args, 1, 10);
	cr_assert(arr);
	cr_assert_eq(json_object_array_length(arr), 1, "privilege events for %lld: %zu", pid,
		     json_object_array_length(arr));
	json_object *e = json_object_array_get_idx(arr, 0);
	cr_expect_eq(ka_int(e, "detail.old_euid"), 65534);
	cr_expect_eq(ka_int(e, "detail.new_euid"), 0);
	json_object_put(arr);

	snprintf(args, sizeof(args), "--pid %lld --kind privilege", drop);
	arr = ka_events(&env, args, 1, 1.5);
	cr_expect(arr && json_object_array_length(arr) == 0, "a drop was reported as a rise");
	json_object_put(arr);

	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s -j hunt gained-root --store %s --since 1m", ks_bin(), env.store);
	json_object *h = ks_run_json(cmd, NULL, NULL);
	bool found = false;
	for (size_t i = 0; h && i < json_object_array_length(ks_json_get(h, "hits")); i++) {
		json_object *hit = json_object_array_get_idx(ks_json_get(h, "hits"), i);

		if (ka_int(hit, "pid") == pid) {
			found = true;
			json_object *anc = ks_json_get(hit, "ancestry");
			cr_expect(anc && json_object_array_length(anc) >= 1, "hit without ancestry");
			cr_expect_str_eq(ka_str(json_object_array_get_idx(anc, 0), "binary"),
					 "/usr/bin/python3");
		}
	}
	cr_expect(found, "hunt gained-root misses pid %lld", pid);
	json_object_put(h);
}

Test(monitor, t08_bpf_loads_by_others_but_not_the_agent)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	char args[128];
	json_object *arr;
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ks_test_prog", "GPL", prog, 2, &opts);

	cr_assert(fd >= 0, "bpf_prog_load: %s", strerror(errno));
	close(fd);
	snprintf(args, sizeof(args), "--pid %d --kind bpf", getpid());
	arr = ka_events(&env, args, 1, 10);
	cr_assert(arr);
	/* libbpf may probe the kernel with a load of its own first */
	json_object *e = NULL;
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		if (!strcmp(ka_str(json_object_array_get_idx(arr, i), "detail.prog_name"), "ks_test_prog"))
			e = json_object_array_get_idx(arr, i);
	cr_assert(e, "no bpf event named ks_test_prog among %zu", json_object_array_length(arr));
	cr_expect_eq(ka_int(e, "detail.prog_type"), BPF_PROG_TYPE_SOCKET_FILTER);
	cr_expect_eq(ka_int(e, "detail.insn_cnt"), 2);
	cr_expect_eq(ka_int(e, "ret"), fd);
	json_object_put(arr);

	/* A restarted agent adopts the monitor and loads nothing itself;
	 * with shields it loads them after naming itself: never reported. */
	snprintf(args, sizeof(args), "--pid %d --kind bpf", env.agent);
	arr = ka_events(&env, args, 1, 0.5);
	cr_expect(arr && json_object_array_length(arr) == 0, "the agent's own loads were reported");
	json_object_put(arr);
}

/* ---- flow: bytes per connection (bpf/monitor_flow.bpf.h) ----
 * Bytes are payload (no headers), so a sender of exactly K bytes must
 * have bytes_out == K. TCP totals are the socket's own counters, each byte
 * once: a loaded machine resends a segment now and then even on loopback
 * (a CI run saw 3130966 for 3000000 when packets were counted), and that
 * must not show. Interim records every second, so a test sees one. */
#define tcp_bytes_ok(got, k) ((got) == (k))

#include <ifaddrs.h>
#include <net/if.h>

static void flow_setup(void)
{
	ka_setup(&env, "f");
	ka_start(&env, "--flow-interval 1s");
	char *err = ka_agent_err(&env);
	cr_assert(err && strstr(err, "storing events"), "agent did not start: %s", err);
	free(err);
}

TestSuite(flow, .init = flow_setup, .fini = teardown, .timeout = 90);

/* A listener on @addr (IPv4 text, or IPv6 with a ':'); its port in *port. */
static int flow_listen(const char *addr, int type, int *port)
{
	struct sockaddr_storage ss = {};
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int fd = socket(family, type, 0);

	cr_assert(fd >= 0);
	ss.ss_family = family;
	if (family == AF_INET)
		inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr);
	else
		inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	cr_assert_eq(bind(fd, (void *)&ss, len), 0, "bind %s: %s", addr, strerror(errno));
	if (type == SOCK_STREAM)
		cr_assert_eq(listen(fd, 8), 0);
	cr_assert_eq(getsockname(fd, (void *)&ss, &len), 0);
	*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);	/* same offset in _in6 */
	return fd;
}

static int flow_connect(const char *addr, int port, int type)
{
	struct sockaddr_storage ss = {};
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int fd = socket(family, type, 0);

	ss.ss_family = family;
	((struct sockaddr_in *)&ss)->sin_port = htons(port);
	if (family == AF_INET)
		inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr);
	else
		inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	if (fd < 0 || connect(fd, (void *)&ss, len))
		return -1;
	return fd;
}

static int send_all(int fd, long n)
{
	static char buf[65536];

	while (n > 0) {
		ssize_t w = write(fd, buf, n < (long)sizeof(buf) ? n : (long)sizeof(buf));

		if (w <= 0)
			return -1;
		n -= w;
	}
	return 0;
}

/* Accept one connection on @l and read it to EOF; bytes read. */
static long drain_one(int l)
{
	static char buf[65536];
	int a = accept(l, NULL, NULL);
	long n = 0;
	ssize_t r;

	if (a < 0)
		return -1;
	while ((r = read(a, buf, sizeof(buf))) > 0)
		n += r;
	close(a);
	return n;
}

/* The final flow record of @pid on local or remote port @port (get()'d). */
static json_object *final_flow(pid_t pid, int port)
{
	char args[128];
	json_object *arr, *hit = NULL;

	snprintf(args, sizeof(args), "--pid %d --port %d --kind flow", pid, port);
	for (double t0 = ka_now(); !hit && ka_now() - t0 < 10; usleep(100000)) {
		arr = ka_events(&env, args, 1, 0.1);
		for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
			if (ka_int(json_object_array_get_idx(arr, i), "detail.final") == 1)
				hit = json_object_get(json_object_array_get_idx(arr, i));
		json_object_put(arr);
	}
	return hit;
}

Test(flow, t01_tcp_ipv4_exact_payload_owner_and_binary)
{
	const long K = 3000000;
	char cmd[256];
	int port, l = flow_listen("127.0.0.1", SOCK_STREAM, &port);
	pid_t pid;

	/* bash opens the connection (its /dev/tcp redirect), head writes K */
	snprintf(cmd, sizeof(cmd), "exec head -c %ld /dev/zero > /dev/tcp/127.0.0.1/%d", K, port);
	pid = fork();
	if (pid == 0) {
		execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(drain_one(l), K);
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	close(l);

	json_object *f = final_flow(pid, port);
	cr_assert(f, "no final flow record of pid %d to port %d", pid, port);
	cr_expect_str_eq(ka_str(f, "detail.proto"), "tcp");
	cr_expect_eq(ka_int(f, "detail.family"), AF_INET);
	cr_expect(tcp_bytes_ok(ka_int(f, "detail.bytes_out"), K), "bytes_out %lld, sent %ld",
		  ka_int(f, "detail.bytes_out"), K);
	cr_expect_eq(ka_int(f, "detail.bytes_in"), 0);
	cr_expect(ka_int(f, "detail.pkts_out") >= K / 65536);
	cr_expect_eq(ka_int(f, "detail.owner_unknown"), 0);
	cr_expect_str_eq(ka_str(f, "raddr"), "127.0.0.1");
	cr_expect_eq(ka_int(f, "rport"), port);
	cr_expect_eq(ka_int(f, "uid"), getuid());
	cr_expect(ka_int(f, "detail.duration_ns") > 0);
	/* the image that connected: bash, found through the exec id */
	snprintf(cmd, sizeof(cmd), "%s -j events --store %s --tree %lld", ks_bin(), env.store,
		 ka_int(f, "exec_id"));
	json_object *tree = ks_run_json(cmd, NULL, NULL);
	cr_assert(tree, "events --tree %lld gave no JSON", ka_int(f, "exec_id"));
	const char *bin = ka_str(json_object_array_get_idx(ks_json_get(tree, "ancestry"), 0), "binary");
	cr_expect(strstr(bin, "bash"), "owner binary %s, want bash", bin);
	json_object_put(tree);
	json_object_put(f);

	/* the accepting end: the listener (this process) owns it, bytes in */
	f = final_flow(getpid(), port);
	cr_assert(f, "no final flow record of the accepted connection");
	cr_expect(tcp_bytes_ok(ka_int(f, "detail.bytes_in"), K), "bytes_in %lld, sent %ld",
		  ka_int(f, "detail.bytes_in"), K);
	cr_expect_eq(ka_int(f, "detail.bytes_out"), 0);
	cr_expect_eq(ka_int(f, "lport"), port);
	json_object_put(f);
}

static void udp_connected_both_ends(void)
{
	const int N = 40, S = 1000;
	char buf[2000];
	int port, u = flow_listen("::1", SOCK_DGRAM, &port), got = 0;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		int c = flow_connect("::1", port, SOCK_DGRAM);

		for (int i = 0; c >= 0 && i < N; i++)
			if (write(c, buf, S) != S)
				_exit(1);
		_exit(c >= 0 ? 0 : 2);
	}
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	while (got < N && recv(u, buf, sizeof(buf), MSG_DONTWAIT) == S)
		got++;
	cr_assert_eq(got, N, "received %d of %d datagrams", got, N);
	close(u);

	json_object *f = final_flow(pid, port);
	cr_assert(f, "no final flow record of the UDP sender %d", pid);
	cr_expect_str_eq(ka_str(f, "detail.proto"), "udp");
	cr_expect_eq(ka_int(f, "detail.family"), AF_INET6);
	cr_expect_eq(ka_int(f, "detail.bytes_out"), (long long)N * S);
	cr_expect_eq(ka_int(f, "detail.pkts_out"), N);
	cr_expect_eq(ka_int(f, "detail.peers"), 0);
	cr_expect_str_eq(ka_str(f, "raddr"), "::1");
	cr_expect_eq(ka_int(f, "rport"), port);
	json_object_put(f);
	/* the receiver never sent: the process that received (per call) or
	 * closed it (per packet) owns it; here both are this one */
	f = final_flow(getpid(), port);
	cr_assert(f, "no final flow record of the UDP receiver");
	cr_expect_eq(ka_int(f, "detail.bytes_in"), (long long)N * S);
	cr_expect_eq(ka_int(f, "lport"), port);
	json_object_put(f);
}

Test(flow, t02_udp_ipv6_exact_payload_both_ends)
{
	udp_connected_both_ends();
}

Test(flow, t03_long_connection_gets_an_interim_record_before_it_closes)
{
	const long K = 200000;
	int port, l = flow_listen("::1", SOCK_STREAM, &port), go[2];
	pid_t rx, tx;
	char args[128], c = 0;

	cr_assert_eq(pipe(go), 0);
	rx = fork();
	if (rx == 0)
		_exit(drain_one(l) == 2 * K ? 0 : 1);
	tx = fork();
	if (tx == 0) {
		int s = flow_connect("::1", port, SOCK_STREAM);

		/* K, a pause longer than the interval, K: the second send
		 * finds the interval elapsed; then stay open until told */
		if (s < 0 || send_all(s, K) || (usleep(1500000), send_all(s, K)))
			_exit(1);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		close(s);
		_exit(0);
	}
	close(l);

	json_object *open_rec = NULL;
	snprintf(args, sizeof(args), "--pid %d --port %d --kind flow", tx, port);
	for (double t0 = ka_now(); !open_rec && ka_now() - t0 < 15; usleep(200000)) {
		json_object *arr = ka_events(&env, args, 1, 0.1);

		for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
			if (ka_int(json_object_array_get_idx(arr, i), "detail.final") == 0)
				open_rec = json_object_get(json_object_array_get_idx(arr, i));
		json_object_put(arr);
	}
	/* the sender is still connected: this record came before the close */
	cr_expect_eq(waitpid(tx, NULL, WNOHANG), 0, "the sender exited early");
	if (write(go[1], &c, 1) != 1)
		cr_log_warn("pipe write failed");
	cr_assert_eq(WEXITSTATUS(wait_child(tx)), 0);
	cr_assert_eq(WEXITSTATUS(wait_child(rx)), 0);
	cr_assert(open_rec, "no interim flow record of pid %d while it was connected", tx);
	cr_expect(ka_int(open_rec, "detail.bytes_out") >= K && ka_int(open_rec, "detail.bytes_out") <= 2 * K,
		  "interim bytes_out %lld", ka_int(open_rec, "detail.bytes_out"));

	json_object *f = final_flow(tx, port);
	cr_assert(f, "no final flow record after the close");
	cr_expect(tcp_bytes_ok(ka_int(f, "detail.bytes_out"), 2 * K), "final bytes_out %lld, sent %ld",
		  ka_int(f, "detail.bytes_out"), 2 * K);
	cr_expect_str_eq(ka_str(f, "detail.flow"), ka_str(open_rec, "detail.flow"),
			 "interim and final records name different flows");
	cr_expect(ka_int(f, "ts_ns") > ka_int(open_rec, "ts_ns"));
	json_object_put(open_rec);
	json_object_put(f);
}

/* This host's first non-loopback IPv4 address, or "" */
static void outside_addr(char *buf, size_t len)
{
	struct ifaddrs *ifa, *i;

	buf[0] = '\0';
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i && !buf[0]; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
		    !(i->ifa_flags & IFF_LOOPBACK))
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf, len);
	freeifaddrs(ifa);
}

static pid_t sender(const char *addr, int port, long n)
{
	pid_t pid = fork();

	if (pid == 0) {
		int s = flow_connect(addr, port, SOCK_STREAM);

		_exit(s < 0 || send_all(s, n) ? 1 : 0);
	}
	return pid;
}

static int exfil_hits_opt(const char *bytes, const char *opt, pid_t pid, long long *out)
{
	char cmd[512];
	json_object *h, *hits;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "%s -j hunt exfil --store %s --since 2m --bytes %s %s", ks_bin(),
		 env.store, bytes, opt);
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h, "hunt exfil gave no JSON");
	hits = ks_json_get(h, "hits");
	for (size_t i = 0; hits && i < json_object_array_length(hits); i++) {
		json_object *e = json_object_array_get_idx(hits, i);

		if (ka_int(e, "pid") == pid) {
			n++;
			*out = ka_int(e, "detail.bytes_out");
			/* forked from a process older than the agent: no exec row */
			cr_expect(ks_json_get(e, "ancestry"), "hit without an ancestry key");
		}
	}
	json_object_put(h);
	return n;
}

static int exfil_hits(const char *bytes, pid_t pid, long long *out)
{
	return exfil_hits_opt(bytes, "", pid, out);
}

Test(flow, t04_exfil_hunt_finds_the_big_sender_not_the_small_one)
{
	const long BIG = 6000000, SMALL = 1000000;
	char addr[64];
	long long bytes = 0;
	int port, l;
	pid_t big, small;

	/* a non-loopback address of this host: the hunt ignores loopback */
	outside_addr(addr, sizeof(addr));
	if (!addr[0])
		cr_skip_test("no non-loopback IPv4 address on this host");
	l = flow_listen(addr, SOCK_STREAM, &port);
	big = sender(addr, port, BIG);
	cr_assert_eq(drain_one(l), BIG);
	small = sender(addr, port, SMALL);
	cr_assert_eq(drain_one(l), SMALL);
	cr_assert_eq(WEXITSTATUS(wait_child(big)), 0);
	cr_assert_eq(WEXITSTATUS(wait_child(small)), 0);
	close(l);
	json_object_put(final_flow(small, port));	/* both stored by now */
	json_object *f = final_flow(big, port);
	cr_assert(f, "no final flow record of the big sender");
	json_object_put(f);

	cr_expect_eq(exfil_hits("5M", big, &bytes), 1, "hunt exfil --bytes 5M misses the big sender");
	cr_expect(tcp_bytes_ok(bytes, BIG), "big sender: bytes_out %lld, sent %ld", bytes, BIG);
	cr_expect_eq(exfil_hits("5M", small, &bytes), 0, "hunt exfil --bytes 5M lists the small sender");
	/* the threshold is the parameter's */
	cr_expect_eq(exfil_hits("500K", small, &bytes), 1, "hunt exfil --bytes 500K misses the small sender");
	cr_expect(tcp_bytes_ok(bytes, SMALL), "small sender: bytes_out %lld, sent %ld", bytes, SMALL);
}

Test(flow, t04b_exfil_hunt_leaves_out_loopback_unless_asked)
{
	const long BIG = 3000000;
	long long bytes = 0;
	int port, l = flow_listen("127.0.0.1", SOCK_STREAM, &port);
	pid_t big = sender("127.0.0.1", port, BIG);

	cr_assert_eq(drain_one(l), BIG);
	cr_assert_eq(WEXITSTATUS(wait_child(big)), 0);
	close(l);
	json_object *f = final_flow(big, port);
	cr_assert(f, "no final flow record of the loopback sender");
	json_object_put(f);

	cr_expect_eq(exfil_hits("1M", big, &bytes), 0, "hunt exfil lists a loopback sender");
	cr_expect_eq(exfil_hits_opt("1M", "--include-loopback", big, &bytes), 1,
		     "hunt exfil --include-loopback misses the loopback sender");
	cr_expect(tcp_bytes_ok(bytes, BIG), "loopback sender: bytes_out %lld, sent %ld", bytes, BIG);

	char *out = NULL, *err = NULL;
	int rc = ks_runf(&out, &err, "%s hunt af-alg --store %s --include-loopback", ks_bin(), env.store);
	cr_expect_eq(rc, 2, "--include-loopback on another hunt: rc %d", rc);
	cr_expect(err && strstr(err, "exfil"), "stderr: %s", err);
	free(out);
	free(err);
}

Test(flow, t05_counted_while_no_agent_runs)
{
	const long K = 500000;
	int port, l = flow_listen("127.0.0.1", SOCK_STREAM, &port);
	pid_t pid;

	/* the monitor is pinned: killing the agent stops nothing */
	ka_stop(&env, SIGKILL);
	pid = sender("127.0.0.1", port, K);
	cr_assert_eq(drain_one(l), K);
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	close(l);
	ka_start(&env, "--flow-interval 1s");
	json_object *f = final_flow(pid, port);
	cr_assert(f, "the flow made while no agent ran was not stored after its restart");
	cr_expect(tcp_bytes_ok(ka_int(f, "detail.bytes_out"), K), "bytes_out %lld, sent %ld",
		  ka_int(f, "detail.bytes_out"), K);
	cr_expect_eq(ka_int(f, "detail.owner_unknown"), 0);
	json_object_put(f);
}

Test(flow, t06_connection_older_than_the_monitor_gets_the_sockets_own_totals)
{
	const long K = 300000;
	int port, l = flow_listen("127.0.0.1", SOCK_STREAM, &port), c, a;
	json_object *st;
	long long lost0;
	char cmd[512];

	/* the connection and its data come before any monitor runs */
	ka_stop(&env, SIGTERM);
	ks_runf(NULL, NULL, "rm -rf %s", env.root);
	c = flow_connect("127.0.0.1", port, SOCK_STREAM);
	a = accept(l, NULL, NULL);
	cr_assert(c >= 0 && a >= 0);
	/* or the agent started below inherits them, and close() closes nothing */
	fcntl(c, F_SETFD, FD_CLOEXEC);
	fcntl(a, F_SETFD, FD_CLOEXEC);
	cr_assert_eq(send_all(c, K), 0);
	for (long got = 0, r; got < K; got += r)
		cr_assert((r = read(a, cmd, sizeof(cmd))) > 0);
	ka_start(&env, "--flow-interval 1s");
	snprintf(cmd, sizeof(cmd), "%s -j stats --store %s", ks_bin(), env.store);
	st = ks_run_json(cmd, NULL, NULL);
	lost0 = ka_int(st, "lost.flow");
	json_object_put(st);
	/* closed with no payload since: no per-packet state exists */
	close(c);
	close(a);
	close(l);
	/* no owner is known: found by port */
	json_object *f = NULL, *g = NULL;
	snprintf(cmd, sizeof(cmd), "--kind flow --port %d", port);
	for (double t0 = ka_now(); !(f && g) && ka_now() - t0 < 10; usleep(200000)) {
		json_object *arr = ka_events(&env, cmd, 2, 0.1);

		for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
			json_object *e = json_object_array_get_idx(arr, i);

			if (ka_int(e, "detail.final") != 1)
				continue;
			if (!f && ka_int(e, "rport") == port)
				f = json_object_get(e);
			else if (!g && ka_int(e, "lport") == port)
				g = json_object_get(e);
		}
		json_object_put(arr);
	}
	cr_assert(g, "no final flow record of the accepted end");
	/* the socket's bytes_received counts the FIN it got as 1 more: not here */
	cr_expect(tcp_bytes_ok(ka_int(g, "detail.bytes_in"), K),
		  "accepted end: bytes_in %lld, sent %ld", ka_int(g, "detail.bytes_in"), K);
	cr_expect_eq(ka_int(g, "detail.untracked"), 1);
	json_object_put(g);
	cr_assert(f, "no final flow record of the connecting end");
	cr_expect(tcp_bytes_ok(ka_int(f, "detail.bytes_out"), K), "bytes_out %lld, sent %ld",
		  ka_int(f, "detail.bytes_out"), K);
	cr_expect_eq(ka_int(f, "detail.untracked"), 1);
	cr_expect_eq(ka_int(f, "detail.owner_unknown"), 1);
	json_object_put(f);
	snprintf(cmd, sizeof(cmd), "%s -j stats --store %s", ks_bin(), env.store);
	st = ks_run_json(cmd, NULL, NULL);
	cr_expect(ka_int(st, "lost.flow") > lost0, "lost.flow %lld, was %lld",
		  ka_int(st, "lost.flow"), lost0);
	json_object_put(st);
}

static void udp_sender_two_peers(void)
{
	const int N = 10, S = 500;
	char buf[1000] = "";
	int p1, p2, r1 = flow_listen("127.0.0.1", SOCK_DGRAM, &p1), r2 = flow_listen("127.0.0.1", SOCK_DGRAM, &p2);
	pid_t pid = fork();

	if (pid == 0) {
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		for (int i = 0; s >= 0 && i < 2 * N; i++) {
			to.sin_port = htons(i < N ? p1 : p2);
			if (sendto(s, buf, S, 0, (void *)&to, sizeof(to)) != S)
				_exit(1);
		}
		_exit(s >= 0 ? 0 : 2);
	}
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	close(r1);
	close(r2);
	/* one socket, one record: the first peer's address, and a flag */
	json_object *f = final_flow(pid, p1);
	cr_assert(f, "no final flow record of the UDP sender %d", pid);
	cr_expect_str_eq(ka_str(f, "detail.proto"), "udp");
	cr_expect_eq(ka_int(f, "detail.family"), AF_INET);
	cr_expect_eq(ka_int(f, "detail.bytes_out"), 2LL * N * S);
	cr_expect_eq(ka_int(f, "detail.pkts_out"), 2 * N);
	cr_expect_eq(ka_int(f, "rport"), p1);
	cr_expect_eq(ka_int(f, "detail.peers"), 1, "a second peer was not noticed");
	json_object_put(f);
}

Test(flow, t07_udp_ipv4_unconnected_sender_to_two_peers)
{
	udp_sender_two_peers();
}

/* The receiving end of unconnected UDP: recvfrom() from two senders. The
 * receiver's record names the first sender and flags the second, whichever
 * way this kernel's flows are seen (per call: the cgroup recvmsg4 hook;
 * per packet: the ingress program). */
static void udp_receiver_two_peers(void)
{
	const int N = 8, S = 300;
	char buf[1000] = "";
	int port, u = flow_listen("127.0.0.1", SOCK_DGRAM, &port), got = 0, ports[2];
	struct sockaddr_in from;
	socklen_t fl;
	pid_t pid;
	int pp[2];

	/* two senders in a child (their records are the child's), one after
	 * the other: the first one's datagrams are queued, and read, first */
	cr_assert_eq(pipe(pp), 0);
	pid = fork();
	if (pid == 0) {
		for (int k = 0; k < 2; k++) {
			int c = flow_connect("127.0.0.1", port, SOCK_DGRAM);
			struct sockaddr_in me;
			socklen_t ml = sizeof(me);

			if (c < 0 || getsockname(c, (void *)&me, &ml))
				_exit(1);
			ports[k] = ntohs(me.sin_port);
			for (int i = 0; i < N; i++)
				if (write(c, buf, S) != S)
					_exit(2);
		}
		_exit(write(pp[1], ports, sizeof(ports)) == sizeof(ports) ? 0 : 3);
	}
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	cr_assert_eq(read(pp[0], ports, sizeof(ports)), (ssize_t)sizeof(ports));
	close(pp[0]);
	close(pp[1]);
	for (int i = 0; i < 2 * N; i++) {
		fl = sizeof(from);
		if (recvfrom(u, buf, sizeof(buf), MSG_DONTWAIT, (void *)&from, &fl) == S)
			got++;
	}
	cr_assert_eq(got, 2 * N, "received %d of %d datagrams", got, 2 * N);
	close(u);

	json_object *f = final_flow(getpid(), port);
	cr_assert(f, "no final flow record of the UDP receiver on port %d", port);
	cr_expect_eq(ka_int(f, "lport"), port);
	cr_expect_eq(ka_int(f, "rport"), ports[0], "peer %lld, want the first sender %d",
		     ka_int(f, "rport"), ports[0]);
	cr_expect_eq(ka_int(f, "detail.bytes_in"), 2LL * N * S);
	cr_expect_eq(ka_int(f, "detail.pkts_in"), 2 * N);
	cr_expect_eq(ka_int(f, "detail.peers"), 1, "the second sender %d was not noticed", ports[1]);
	cr_expect_eq(ka_int(f, "detail.owner_unknown"), 0);
	json_object_put(f);
}

Test(flow, t11_udp_ipv4_unconnected_receiver_from_two_peers)
{
	udp_receiver_two_peers();
}

/* Payload that never passes write() or send(): sendfile() into a TCP
 * socket, and a UDP sendmmsg() of several datagrams. Each is counted
 * exactly, and the TCP flow is the connecting process's from its start. */
static void sendfile_and_sendmmsg(void)
{
	const long K = 500000;
	const int N = 6, S = 700;
	char path[] = "/tmp/ks-flow-sendfile.XXXXXX", buf[1000] = "";
	int fd = mkstemp(path), port, uport, l, u, got = 0;
	pid_t pid;

	cr_assert(fd >= 0);
	unlink(path);
	cr_assert_eq(ftruncate(fd, K), 0);
	l = flow_listen("127.0.0.1", SOCK_STREAM, &port);
	u = flow_listen("127.0.0.1", SOCK_DGRAM, &uport);
	pid = fork();
	if (pid == 0) {
		int s = flow_connect("127.0.0.1", port, SOCK_STREAM);
		int d = flow_connect("127.0.0.1", uport, SOCK_DGRAM);
		struct iovec iov[6];
		struct mmsghdr mm[6] = {};
		off_t off = 0;
		long left = K;

		while (s >= 0 && left > 0) {
			ssize_t w = sendfile(s, fd, &off, left);

			if (w <= 0)
				_exit(1);
			left -= w;
		}
		for (int i = 0; i < N; i++) {
			iov[i].iov_base = buf;
			iov[i].iov_len = S;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		_exit(s < 0 || d < 0 || sendmmsg(d, mm, N, 0) != N ? 2 : 0);
	}
	cr_assert_eq(drain_one(l), K);
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	while (got < N && recv(u, buf, sizeof(buf), MSG_DONTWAIT) == S)
		got++;
	cr_assert_eq(got, N);
	close(l);
	close(u);
	close(fd);

	json_object *f = final_flow(pid, port);
	cr_assert(f, "no final flow record of the sendfile() sender %d", pid);
	cr_expect_eq(ka_int(f, "detail.bytes_out"), K);
	cr_expect_eq(ka_int(f, "detail.untracked"), 0, "the sendfile() flow was not seen from its start");
	cr_expect_eq(ka_int(f, "detail.owner_unknown"), 0);
	json_object_put(f);
	f = final_flow(pid, uport);
	cr_assert(f, "no final flow record of the sendmmsg() sender %d", pid);
	cr_expect_eq(ka_int(f, "detail.bytes_out"), (long long)N * S);
	cr_expect_eq(ka_int(f, "detail.pkts_out"), N);
	json_object_put(f);
}

Test(flow, t12_sendfile_into_tcp_and_sendmmsg_udp_are_counted)
{
	sendfile_and_sendmmsg();
}

/* The older kernels' way (per packet, 5.10-6.4) on this one: the same
 * UDP and sendfile checks with the agent forced to it, so both ways of
 * bpf/monitor_flow.bpf.h are tested on the host (the matrix runs TCP through
 * both on real kernels). On a kernel older than 6.5 both runs are this. */
Test(flow, t13_per_packet_way_counts_the_same)
{
	char *err;

	ka_stop(&env, SIGTERM);
	ka_start(&env, "--flow-interval 1s --flow-per-packet");
	err = ka_agent_err(&env);
	cr_assert(err && strstr(err, "flow on, per packet"), "%s", err);
	free(err);
	udp_connected_both_ends();
	udp_sender_two_peers();
	udp_receiver_two_peers();
	sendfile_and_sendmmsg();
}

/* Pinned links of flow programs (link_mon_flow_*). */
static int flow_link_pins(void)
{
	char path[256];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/monitor", env.root);
	d = opendir(path);
	while (d && (de = readdir(d)))
		n += !strncmp(de->d_name, "link_mon_flow_", 14);
	if (d)
		closedir(d);
	return n;
}

/* How many flow links the agent's log says this kernel gets: per call
 * (6.5+: send, recv, sendmsg4/6, recvmsg4/6, release) or per packet
 * (egress, ingress, release); 0 when it names neither. */
static int flow_links_want(const char *log)
{
	return strstr(log, "flow on, per call") ? 7 : strstr(log, "flow on, per packet") ? 3 : 0;
}

/* A TCP transfer of @k bytes from a child; returns its pid once drained. */
static pid_t transfer(long k, int *port)
{
	int l = flow_listen("127.0.0.1", SOCK_STREAM, port);
	pid_t pid = sender("127.0.0.1", *port, k);

	cr_assert_eq(drain_one(l), k);
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	close(l);
	return pid;
}

/* flow off (--no-flow, or `flow = off`) detaches the flow programs of the
 * pinned monitor the agent adopts, and no flow record is made, not even
 * from a socket's own counters at close; connects are still recorded.
 * Turned on again, the monitor is reloaded with them. */
Test(flow, t08_flow_off_detaches_and_records_none_on_again_reattaches)
{
	char args[128], conf[300], *err;
	json_object *arr;
	int port, want;
	pid_t pid;

	err = ka_agent_err(&env);
	want = flow_links_want(err);
	cr_assert(want, "the agent does not say how flows are seen: %s", err);
	free(err);
	cr_assert_eq(flow_link_pins(), want, "flow on: its links are not pinned");
	ka_stop(&env, SIGTERM);
	ka_start(&env, "--flow-interval 1s --no-flow");
	err = ka_agent_err(&env);
	cr_expect(strstr(err, "monitor adopted") && strstr(err, "flow off, its links detached"),
		  "%s", err);
	free(err);
	cr_expect_eq(flow_link_pins(), 0, "flow off: flow links still pinned");
	pid = transfer(400000, &port);
	snprintf(args, sizeof(args), "--pid %d --kind connect", pid);
	arr = ka_events(&env, args, 1, 10);
	cr_expect(arr && json_object_array_length(arr) == 1, "flow off: the connect is not stored");
	json_object_put(arr);
	snprintf(args, sizeof(args), "--port %d --kind flow", port);
	arr = ka_events(&env, args, 1, 2);
	cr_expect(arr && json_object_array_length(arr) == 0, "flow off: %zu flow records stored",
		  arr ? json_object_array_length(arr) : 0);
	json_object_put(arr);

	/* on again, from the config file this time */
	ka_stop(&env, SIGTERM);
	snprintf(conf, sizeof(conf), "%s/on.conf", env.dir);
	FILE *f = fopen(conf, "w");
	cr_assert(f);
	fprintf(f, "flow = on\nflow_interval = 1s\n");
	fclose(f);
	snprintf(args, sizeof(args), "--config %s", conf);
	ka_start(&env, args);
	err = ka_agent_err(&env);
	cr_expect(strstr(err, "monitor replaced") && flow_links_want(err) == want, "%s", err);
	free(err);
	cr_expect_eq(flow_link_pins(), want, "flow on again: its links are not pinned");
	pid = transfer(300000, &port);
	json_object *fl = final_flow(pid, port);
	cr_expect(fl && tcp_bytes_ok(ka_int(fl, "detail.bytes_out"), 300000),
		  "flow on again: no record of the 300000 bytes");
	json_object_put(fl);

	/* and off from the config file: adopted, detached */
	ka_stop(&env, SIGTERM);
	f = fopen(conf, "w");
	cr_assert(f);
	fprintf(f, "flow = off\n");
	fclose(f);
	ka_start(&env, args);
	err = ka_agent_err(&env);
	cr_expect(strstr(err, "flow off, its links detached"), "%s", err);
	free(err);
	cr_expect_eq(flow_link_pins(), 0);
}

/* A thread of a process: pid is the process and tid the thread in
 * `events -j` and `hunt -j` alike. */
static void *thread_socket(void *arg)
{
	*(pid_t *)arg = syscall(SYS_gettid);
	int fd = socket(38, SOCK_SEQPACKET, 0);	/* AF_ALG: watched */

	if (fd >= 0)
		close(fd);
	return NULL;
}

Test(monitor, t09_pid_is_the_process_tid_the_thread_in_every_output)
{
	char args[128], cmd[512];
	pthread_t th;
	pid_t tid = 0;
	json_object *arr, *h;

	cr_assert_eq(pthread_create(&th, NULL, thread_socket, &tid), 0);
	pthread_join(th, NULL);
	cr_assert(tid > 0 && tid != getpid());

	snprintf(args, sizeof(args), "--pid %d --kind socket", getpid());
	arr = ka_events(&env, args, 1, 10);
	cr_assert(arr && json_object_array_length(arr) == 1, "want the thread's AF_ALG socket");
	cr_expect_eq(ka_int(json_object_array_get_idx(arr, 0), "pid"), getpid());
	cr_expect_eq(ka_int(json_object_array_get_idx(arr, 0), "tid"), tid);
	json_object_put(arr);

	snprintf(cmd, sizeof(cmd), "%s -j hunt --store %s --sql \"SELECT * FROM events WHERE "
		 "kind = 'socket' AND pid = %d\"", ks_bin(), env.store, getpid());
	h = ks_run_json(cmd, NULL, NULL);
	cr_assert(h, "%s", cmd);
	cr_expect_eq(ka_int(h, "count"), 1);
	cr_expect_eq(ka_int(json_object_array_get_idx(ks_json_get(h, "hits"), 0), "tid"), tid);
	json_object_put(h);
}

/* An exec through a path longer than the record holds: the monitor's
 * truncated-path flag reaches the row. */
Test(monitor, t10_a_truncated_exec_path_is_flagged)
{
	char dir[512], path[600], args[128];
	json_object *arr;
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/ks-longpath-%d", getpid());
	cr_assert_eq(mkdir(dir, 0755), 0);
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(dir);

		dir[n++] = '/';
		memset(dir + n, 'a' + i, 100);
		dir[n + 100] = '\0';
		cr_assert_eq(mkdir(dir, 0755), 0, "%s", dir);
	}
	snprintf(path, sizeof(path), "%s/true", dir);
	cr_assert_eq(symlink("/bin/true", path), 0);
	cr_assert_gt(strlen(path), KS_PATH_LEN);
	pid = fork();
	if (pid == 0) {
		execl(path, "true", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(WEXITSTATUS(wait_child(pid)), 0);
	snprintf(args, sizeof(args), "--pid %d --kind exec", pid);
	arr = ka_events(&env, args, 1, 10);
	cr_assert(arr && json_object_array_length(arr) == 1, "no exec of pid %d", pid);
	json_object *ex = json_object_array_get_idx(arr, 0);
	cr_expect_eq(ka_int(ex, "detail.path_truncated"), 1, "detail: %s",
		     json_object_to_json_string(ks_json_get(ex, "detail")));
	cr_expect_eq(strlen(ka_str(ex, "binary")), KS_PATH_LEN - 1);
	cr_expect(!strncmp(ka_str(ex, "binary"), path, KS_PATH_LEN - 1));
	json_object_put(arr);

	/* an ordinary exec says 0 */
	pid = fork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	wait_child(pid);
	snprintf(args, sizeof(args), "--pid %d --kind exec", pid);
	arr = ka_events(&env, args, 1, 10);
	cr_assert(arr && json_object_array_length(arr) == 1);
	cr_expect_eq(ka_int(json_object_array_get_idx(arr, 0), "detail.path_truncated"), 0);
	json_object_put(arr);
	char rm[600];
	snprintf(rm, sizeof(rm), "rm -rf /tmp/ks-longpath-%d", getpid());
	cr_expect_eq(system(rm), 0);
}
