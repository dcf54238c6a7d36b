#!/bin/sh
# guard-agent.sh - the agent with `guard = on` on a kernel with BPF LSM, run
# as a guest's /init payload (sourced by pid 1, so that pid 1 plays the
# service manager): a non-pid-1 shell tries kill -9/-STOP of the agent,
# rm -rf of the bpffs root, umount, `kshield shield unload/mode`, `kshield
# guard off` (all must fail with EPERM); pid 1 stops the agent; a restarted
# agent adopts and re-registers; with the agent stopped, `kshield guard off`
# and unloading work; the tamper events are listed from the store.
# Needs /shields/cve-2021-22555.bpf.o and kshield in the guest image.
# Last run: Debian 6.12.111-cloud under QEMU TCG, every attempt refused.
mkdir -p /etc/ks/shields.d; cp /shields/cve-2021-22555.bpf.o /etc/ks/shields.d/
printf 'store = /tmp/ev.db\nshields_dir = /etc/ks/shields.d\nbpffs = /sys/fs/bpf/kshield\nguard = on\ncheck_interval = 1s\n' > /etc/ks/k.conf
kshield agent --config /etc/ks/k.conf > /tmp/agent.log 2>&1 &
AG=$!
i=0; while ! grep -q "guard:\|error" /tmp/agent.log && [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done
echo "== agent log"; cat /tmp/agent.log
kshield status --config /etc/ks/k.conf
echo "== attacker (not pid 1)"
sh -c "kill -9 $AG"; echo "kill -9 agent rc=$?"
sh -c "kill -STOP $AG"; echo "kill -STOP agent rc=$?"
sh -c "rm -rf /sys/fs/bpf/kshield 2>/dev/null"; echo "rm -rf root rc=$?"; ls /sys/fs/bpf/kshield/shields
sh -c "umount /sys/fs/bpf"; echo "umount rc=$?"
kshield shield unload cve-2021-22555; echo "shield unload rc=$?"
kshield shield mode cve-2021-22555 audit; echo "shield mode audit rc=$?"
kshield guard off; echo "guard off rc=$?"
kshield status --config /etc/ks/k.conf | grep -E "agent|guard|cve"
echo "== service manager (pid 1) stops the agent"
kill -TERM $AG; wait $AG; echo "agent exit=$?"
kshield status --config /etc/ks/k.conf | grep -E "agent|guard|cve"
echo "== restart: adopt and re-register"
kshield agent --config /etc/ks/k.conf > /tmp/agent2.log 2>&1 &
AG=$!
i=0; while ! grep -q "guard:\|error" /tmp/agent2.log && [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done
cat /tmp/agent2.log
kshield -j guard status
kill -TERM $AG; wait $AG
echo "== deliberate off: agent stopped, kshield guard off, unload"
kshield guard off; echo "guard off rc=$?"
kshield shield unload cve-2021-22555; echo "unload rc=$?"
kshield guard unload; echo "guard unload rc=$?"
echo "== tamper events in the store"
kshield -j events --store /tmp/ev.db --kind tamper --limit 0 2>&1 | head -c 3000; echo
