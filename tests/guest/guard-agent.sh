#!/bin/sh
# SPDX-License-Identifier: MIT
# guard-agent.sh - issue 28: the agent with `guard = on` and a shield key on
# a kernel with BPF LSM or fmod_ret (trampolines), run as a guest's /init payload (sourced by pid 1,
# so that pid 1 plays the service manager). A root shell that is not pid 1
# and holds no token tries, while the agent runs: kill -9, `kshield guard
# off`, `shield unload`, `shield mode audit`, rm -rf of the pins, umount,
# cgroup.kill of the agent's cgroup, its oom_score_adj, an edited config
# plus SIGHUP. Then pid 1 stops the agent, and the same shell tries the
# kshield commands and rm again with no token, an expired token and another
# host's token, also through a --bpffs root whose shields/ is a symlink or
# a bind mount of the real one. Every step must fail and the shield stay loaded and
# enforcing; then, with a valid token, `guard off`, `shield mode audit`,
# `shield unload` and `guard unload` work. The tamper events are read from
# the store (a restarted agent drains what was recorded while none ran).
# (Link detach and map writes by id, O_ASYNC SIGKILL and ptrace are in
# `kshield guard selftest`, which the matrix runs on every boot.)
# Prints "KSHIELD-LOG guard-agent: <step> ok|FAIL <detail>" lines and one
# "KSHIELD-CHECK guardagent <json>" line: ok when every step went as it
# must (matrix/rows.jq).
# Needs /shields/cve-2021-22555.bpf.o and kshield in the guest image.
# Last run: Debian 6.12.111-cloud and 6.1.0-47-cloud (lsm), 6.1.0-47-cloud
# without bpf in lsm= (fmod_ret), x86_64: 41 passed, 0 failed on each.
S=cve-2021-22555
E=/etc/ks
pass=0 fail=0 failures=""
say() {	# say STEP OK(0|1) DETAIL
	if [ "$2" = 0 ]; then pass=$((pass + 1)); r=ok
	else fail=$((fail + 1)); r=FAIL; failures="$failures $1"; fi
	echo "KSHIELD-LOG guard-agent: $1 $r $(echo "$3" | tr '\n' ' ' | cut -c1-300)"
}
# refused STEP CMD...: a non-pid-1 shell runs CMD; it must fail
refused() {
	st=$1; shift
	out=$(sh -c "$*" 2>&1); rc=$?
	[ $rc != 0 ]; say "$st" $? "rc=$rc $(echo "$out" | head -c 200)"
}
enforcing() {	# the shield is still loaded and enforcing
	m=$(kshield -j shield list 2>/dev/null | tr '{' '\n' | grep "\"$S\"" | grep -o '"mode":"[a-z]*"')
	[ "$m" = '"mode":"enforce"' ]; say "$1" $? "$S ${m:-not loaded}"
}
wait_log() {	# wait_log FILE: the agent reported its guard (or an error)
	i=0; while ! grep -q "guard:\|error" "$1" && [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done
}

mkdir -p $E/shields.d $E/keys /tmp/gt
cp /shields/$S.bpf.o $E/shields.d/
kshield shield keygen $E/k >/dev/null && cp $E/k.pub $E/keys/
printf 'store = /tmp/ev.db\nshields_dir = %s/shields.d\nbpffs = /sys/fs/bpf/kshield\nguard = on\ncheck_interval = 1s\nkeys_dir = %s/keys\nweaken_token = %s/weaken.token\n' $E $E $E >$E/k.conf
cp $E/k.conf $E/k.conf.orig
kshield shield sign $E/shields.d/$S.bpf.o --key $E/k.key >/dev/null
kshield agent --config $E/k.conf >/tmp/agent.log 2>&1 &
AG=$!
wait_log /tmp/agent.log
grep -q "tampering is refused" /tmp/agent.log; say agent-refusing-guard $? "$(grep guard: /tmp/agent.log | head -1)"
enforcing start

# -- while the agent runs: a root shell, not pid 1, no token
refused kill-9 "kill -9 $AG"
refused guard-off "kshield guard off"
refused shield-unload "kshield shield unload $S"
refused shield-mode-audit "kshield shield mode $S audit"
refused rm-pins "rm -rf /sys/fs/bpf/kshield/shields"
refused umount "umount /sys/fs/bpf"
refused oom_score_adj "echo 1000 >/proc/$AG/oom_score_adj"
refused oom_adj "echo 15 >/proc/$AG/oom_adj"
mkdir -p /sys/fs/cgroup/ks-ga && echo $AG >/sys/fs/cgroup/ks-ga/cgroup.procs
refused cgroup.kill "echo 1 >/sys/fs/cgroup/ks-ga/cgroup.kill"
printf 'shield.%s.mode = audit\nguard = off\n' $S >>$E/k.conf
sh -c "kill -HUP $AG"; sleep 3
grep -q "weakening refused" /tmp/agent.log; say config-sighup-refused $? "$(grep -c 'weakening refused\|not applied' /tmp/agent.log) refusal line(s)"
cp $E/k.conf.orig $E/k.conf
kill -0 $AG 2>/dev/null; say agent-alive $? "pid $AG"
enforcing while-agent-runs

# -- pid 1 stops the agent (systemctl stop); the shell tries again
kill -TERM $AG; wait $AG
echo $$ >/sys/fs/cgroup/cgroup.procs 2>/dev/null
rmdir /sys/fs/cgroup/ks-ga 2>/dev/null
kshield guard token --key $E/k.key --expires 0s --out /tmp/gt/expired guard-off audit:$S unload:$S
kshield guard token --key $E/k.key --host other-host --out /tmp/gt/other guard-off audit:$S unload:$S
for tok in none expired other; do
	refused "stopped-guard-off-$tok" "kshield guard off --token /tmp/gt/$tok"
	refused "stopped-shield-unload-$tok" "kshield shield unload $S --token /tmp/gt/$tok"
	refused "stopped-shield-mode-audit-$tok" "kshield shield mode $S audit --token /tmp/gt/$tok"
	refused "stopped-guard-unload-$tok" "kshield guard unload --token /tmp/gt/$tok"
done
refused stopped-rm-pins "rm -rf /sys/fs/bpf/kshield/shields"
# another --bpffs root whose shields/ is the real one: a symlink, a bind mount
mkdir -p /tmp/gt/sl /tmp/gt/bm/shields
ln -s /sys/fs/bpf/kshield/shields /tmp/gt/sl/shields
mount --bind /sys/fs/bpf/kshield/shields /tmp/gt/bm/shields
refused stopped-unload-via-symlink "kshield --bpffs /tmp/gt/sl shield unload $S"
refused stopped-unload-via-bind-mount "kshield --bpffs /tmp/gt/bm shield unload $S"
umount /tmp/gt/bm/shields
line=$(kshield guard off 2>&1)
[ "$(echo "$line" | wc -l)" = 1 ] && echo "$line" | grep -q "systemctl disable kshield"
say refusal-one-line $? "$line"
enforcing after-every-attempt

# -- a restarted agent drains what was recorded while none ran, then stops
kshield agent --config $E/k.conf >/tmp/agent2.log 2>&1 &
AG=$!
wait_log /tmp/agent2.log
sleep 2
kill -TERM $AG; wait $AG
kshield -j events --store /tmp/ev.db --kind tamper --limit 0 2>/dev/null >/tmp/gt/tamper.json
n=$(grep -o 'op[\\"]*:[0-9]*' /tmp/gt/tamper.json | tr -d '\\"' | sort | uniq -c | tr '\n' ' ')
for pair in 3:signal 1:unlink 5:umount 9:cgroup 11:oom_adj 10:config; do
	op=${pair%%:*}
	c=$(grep -o 'op[\\"]*:'"$op"'[,}]' /tmp/gt/tamper.json | wc -l)
	[ "$c" -gt 0 ]; say "stored-${pair#*:}" $? "$c event(s)"
done
echo "KSHIELD-LOG guard-agent: stored tamper events by op: $n"

# -- with a valid token, each weakening works
kshield guard token --key $E/k.key --out /tmp/gt/valid guard-off audit:$S unload:$S
out=$(sh -c "kshield shield mode $S audit --token /tmp/gt/valid" 2>&1); say token-mode-audit $? "$out"
out=$(sh -c "kshield shield unload $S --token /tmp/gt/valid" 2>&1); say token-unload $? "$out"
out=$(sh -c "kshield guard off --token /tmp/gt/valid" 2>&1); say token-guard-off $? "$out"
out=$(sh -c "kshield guard unload --token /tmp/gt/valid" 2>&1); say token-guard-unload $? "$out"
ok=false; [ $fail = 0 ] && [ $pass -gt 0 ] && ok=true
echo "KSHIELD-CHECK guardagent {\"ok\": $ok, \"passed\": $pass, \"failed\": $fail, \"failures\": \"${failures# }\"}"
