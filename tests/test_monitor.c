/* test_monitor.c - the BPF monitor on this host's kernel, end to end: real
 * processes, sockets and syscalls, then exactly those events, with the
 * right fields, found in the store through `kshield events -j`. Each test
 * starts its own agent on its own bpffs root and store. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
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

		if (ka_int(hit, "tgid") == pid) {
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
