// SPDX-License-Identifier: MIT
/* test_fleet_oot.c - a shield made out of the tree reaches an agent built
 * without it, and that agent shows its hits by name (issue 36, part 2).
 *
 * tests/fixtures/oot-iptos is built with `make shield-extra` (its own
 * object and a kshield with its test linked in); the matrix's host row
 * proves it on this kernel (matrix/run.sh --shield, the extra kshield),
 * `kshield shield proven` turns that row into its signed summary, and
 * `fleet deploy --gated --proven` sends object and summary through the
 * loopback NATS cluster to a running `kshield agent --fleet`: the binary
 * under test, which has no line of that shield (checked). The agent
 * enforces (proven here), the trigger is refused, and the hit reaches the
 * agent's JSON mirror, `kshield events` and the shield's hunt with its
 * arguments named by the object's own tables: SOL_IP, IP_TOS, the
 * IPTOS_* bits of 0xac, AF_INET.
 * Loads BPF: run under flock /tmp/ks/host.lock (make test-host is). */
#include <criterion/criterion.h>
#include <libgen.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "fleet_harness.h"
#include "agent_harness.h"

#define OOT "oot-iptos"
#define OOT_SRC "tests/fixtures/" OOT
#define WANT_ARG "{\"level\":\"SOL_IP\",\"optname\":\"IP_TOS\"," \
	"\"tos\":\"IPTOS_THROUGHPUT|IPTOS_RELIABILITY|0xa0\",\"family\":\"AF_INET\"}"
#define WANT_LINE OOT " refused cgroup_setsockopt(level=SOL_IP optname=IP_TOS " \
	"tos=IPTOS_THROUGHPUT|IPTOS_RELIABILITY|0xa0 family=AF_INET) cgroup enforce"

static struct ka_env env;
static char cdir[256], urls[512], host_urls[512], build[512], dir[256];

static void setup(void)
{
	char bin[512];

	ka_setup(&env, "oot");
	snprintf(dir, sizeof(dir), "%s", env.dir);
	snprintf(bin, sizeof(bin), "%s", ks_bin());
	snprintf(build, sizeof(build), "%s", dirname(bin));
}

static void teardown(void)
{
	ks_runf(NULL, NULL, "%s fleet rollback " OOT " --nats %s >/dev/null 2>&1", ks_bin(), urls);
	ka_stop(&env, SIGTERM);
	ks_runf(NULL, NULL, "%s shield unload " OOT " >/dev/null 2>&1", ks_bin());
	ka_teardown(&env);
}

TestSuite(fleet_oot, .init = setup, .fini = teardown, .timeout = 300);

/* setsockopt(SOL_IP, IP_TOS, @tos) on a fresh UDP socket: 0 or errno. */
static int set_tos(int tos)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), rc, err;

	cr_assert(s >= 0);
	rc = setsockopt(s, SOL_IP, IP_TOS, &tos, sizeof(tos));
	err = errno;
	close(s);
	return rc ? err : 0;
}

/* The detail.arg of event @e, an oot-iptos hit, as compact JSON; NULL
 * for any other event or one without names. */
static const char *hit_arg(json_object *e, char *buf, size_t n)
{
	json_object *a;

	if (strcmp(ka_str(e, "kind"), "shield") || strcmp(ka_str(e, "shield"), OOT) ||
	    !(a = ks_json_get(e, "detail.arg")))
		return NULL;
	snprintf(buf, n, "%s", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
	return buf;
}

/* The same for the first oot-iptos hit of the array @arr. */
static const char *oot_arg(json_object *arr, char *buf, size_t n)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
		if (hit_arg(json_object_array_get_idx(arr, i), buf, n))
			return buf;
	return NULL;
}

Test(fleet_oot, an_agent_built_without_a_shield_reads_its_hits_by_name)
{
	char *out = NULL, *err = NULL, obj[400], proven[400], got[512], *text;
	json_object *arr, *e;
	int rc;

	ks_fleet_cluster_up(cdir, sizeof(cdir), urls, sizeof(urls), host_urls, sizeof(host_urls));

	/* 1. Built out of the tree; the agent's binary and bundled shields
	 * know nothing of it. */
	ks_sh_ok("make -s --no-print-directory BUILD=%s shield-extra EXTRA=" OOT_SRC, build);
	cr_assert_neq(ks_runf(NULL, NULL, "grep -q " OOT " %s", ks_bin()), 0,
		      "the agent's binary names " OOT);
	cr_assert_neq(ks_runf(NULL, NULL, "test -e %s/" OOT ".bpf.o", ks_shields_dir()), 0);

	/* 2. Proven on this kernel by the matrix's host row (its own BUILD:
	 * the extra kshield and object), its summary made and signed. */
	ks_sh_ok("mkdir -p %s/mx/shields %s/obj && ln -s %s/extra/" OOT "/kshield %s/mx/kshield && "
		 "cp %s/extra/" OOT "/" OOT ".bpf.o %s/mx/shields/ && "
		 "cp %s/extra/" OOT "/" OOT ".bpf.o %s/obj/", dir, dir, build, dir, build, dir, build,
		 dir);
	ks_sh_ok("BUILD=%s/mx matrix/run.sh --only '^host$' --shield " OOT " --jobs 1 --out %s/m "
		 ">%s/m.log 2>&1; test -s %s/m/results.json", dir, dir, dir, dir);
	ks_sh_ok("jq -e '[.[] | select(.shield == \"" OOT "\" and .status == \"pass\" and "
		 ".variant == \"cgroup\" and (.build_id | length) == 40 and (.sha256 | length) == 64)] "
		 "| length == 1' %s/m/results.json >/dev/null", dir);
	ks_sh_ok("mkdir -p %s/trust && %s shield keygen %s/signer >/dev/null && "
		 "cp %s/signer.pub %s/trust/ && %s shield sign %s/obj/" OOT ".bpf.o "
		 "--key %s/signer.key >/dev/null", dir, ks_bin(), dir, dir, dir, ks_bin(), dir, dir);
	rc = ks_runf(&out, &err, "%s shield proven %s/m/results.json --out %s/obj --key %s/signer.key "
		     "--shield " OOT, ks_bin(), dir, dir, dir);
	cr_assert_eq(rc, 0, "shield proven: %s", err);
	cr_expect(strstr(out, OOT) && strstr(out, "proven on 1 kernel build"), "%s", out);
	free(out);
	free(err);
	snprintf(obj, sizeof(obj), "%s/obj/" OOT ".bpf.o", dir);
	snprintf(proven, sizeof(proven), "%s/obj/" OOT ".proven.json", dir);

	/* 3. A running agent (monitor, store, JSON mirror) on the fleet. */
	{
		char args[1400];

		snprintf(args, sizeof(args), "--no-shields --json %s/mirror.json --fleet %s "
			 "--keys %s/trust --host oot-0 --state %s/state --resync 5", dir, host_urls,
			 dir, dir);
		ka_start_args(&env, args);
		text = ka_agent_err(&env);
		cr_assert(text && strstr(text, "storing events"), "the agent did not start: %s", text);
		free(text);
	}
	ks_sh_ok("%s fleet deploy %s --key %s/signer.key --hosts 'oot-*' --gated --proven %s "
		 "--nats %s >/dev/null", ks_bin(), obj, dir, proven, urls);
	ks_sh_ok("%s fleet wait " OOT " --status enforcing --count 1 --timeout 60 --nats %s >/dev/null",
		 ks_bin(), urls);
	{
		char cmd[1024];
		json_object *ph;

		snprintf(cmd, sizeof(cmd), "%s -j fleet status " OOT " --nats %s", ks_bin(), urls);
		arr = ks_run_json(cmd, &rc, NULL);
		cr_assert(arr && rc == 0);
		ph = ks_json_get(json_object_array_get_idx(arr, 0), "per_host");
		cr_assert(ph && json_object_array_length(ph) == 1, "%s",
			  json_object_to_json_string(arr));
		e = json_object_array_get_idx(ph, 0);
		cr_expect_str_eq(ka_str(e, "gate"), "proven", "gate_why: %s", ka_str(e, "gate_why"));
		cr_expect_str_eq(ka_str(e, "mode"), "enforce");
		json_object_put(arr);
	}

	/* 4. The exploit's shape is refused, the ordinary values are not;
	 * a marker exec for the hunt's signs. */
	cr_expect_eq(set_tos(0x10), 0, "IP_TOS 0x10 refused");
	cr_assert_eq(set_tos(0xac), EPERM, "IP_TOS 0xac not refused with EPERM");
	ks_sh_ok("/bin/sh -c ': oot-iptos-marker'");

	/* 5. The hit, named by the object's tables: in the agent's own JSON
	 * mirror (decoded by the agent), in the store as `kshield events`
	 * shows it, JSON and line. */
	arr = ka_events(&env, "--kind shield", 1, 20);
	for (double t0 = ka_now(); !oot_arg(arr, got, sizeof(got)) && ka_now() - t0 < 20;
	     usleep(200000)) {
		json_object_put(arr);
		arr = ka_events(&env, "--kind shield", 1, 5);
	}
	cr_assert(oot_arg(arr, got, sizeof(got)), "no named " OOT " hit in the store: %s",
		  json_object_to_json_string(arr));
	cr_expect_str_eq(got, WANT_ARG);
	json_object_put(arr);
	rc = ks_runf(&out, NULL, "%s events --store %s --kind shield --limit 0", ks_bin(), env.store);
	cr_expect(rc == 0 && strstr(out, WANT_LINE), "no '%s' in:\n%s", WANT_LINE, out);
	free(out);
	{
		char path[300], *mirror, *line;
		bool seen = false;

		snprintf(path, sizeof(path), "%s/mirror.json", dir);
		mirror = ks_read_file(path);
		cr_assert(mirror, "no %s", path);
		for (line = strtok(mirror, "\n"); line && !seen; line = strtok(NULL, "\n")) {
			e = strstr(line, "\"shield\":\"" OOT "\"") ? ks_json_parse(line) : NULL;
			seen = e && hit_arg(e, got, sizeof(got)) && !strcmp(got, WANT_ARG);
			json_object_put(e);
		}
		cr_expect(seen, "the agent's JSON mirror has no " OOT " hit named " WANT_ARG);
		free(mirror);
	}

	/* 6. Its hunt (from the object the agent loaded): the hit, named, and
	 * the marker exec its signs look for. */
	rc = ks_runf(&out, &err, "%s -j hunt " OOT " --store %s --since 1h --limit 0", ks_bin(),
		     env.store);
	cr_assert_eq(rc, 0, "hunt: %s", err);
	e = ks_json_parse(out);
	cr_assert(e, "hunt: %s", out);
	cr_expect_str_eq(ka_str(e, "hunt"), OOT);
	cr_expect(oot_arg(ks_json_get(e, "hits"), got, sizeof(got)) && !strcmp(got, WANT_ARG),
		  "hunt: %s", out);
	cr_expect(strstr(out, "oot-iptos-marker"), "the hunt's signs found no marker exec: %s", out);
	json_object_put(e);
	free(out);
	free(err);
}
