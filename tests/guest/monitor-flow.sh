#!/bin/sh
# monitor-flow.sh - the monitor's flow accounting on a guest kernel, as a
# guest's /init payload (sourced after matrix/init's mounts): the agent with
# --flow-interval 1s, then with busybox nc a TCP transfer of exactly 1000000
# bytes over IPv4 and one over IPv6 (busybox nc stops after 1 KiB: the
# records must match what arrived) and one sending a chunk a second
# (interim records); prints the flow records. No UDP: busybox nc has none.
# How: make static; matrix/initramfs.sh KDIR STAGE OUT - (as matrix/run.sh
# calls it); replace STAGE/init by the first 49 lines of matrix/init (its
# mounts) + this file + KSHIELD-DONE/poweroff; cpio it; matrix/boot.sh.
# Last run: Debian 6.1.0-47-cloud and 6.12.111-cloud amd64 under QEMU TCG:
# the monitor loads with its flow programs, IPv4 and IPv6 TCP flows match
# what arrived, interim records appear after 1 s. cgroup_skb programs on
# 6.1 and 6.12 may not ask for the current task (6.18 may), so UDP flows
# there have no owner. Before this, the monitor did not load on 6.1 at all
# (mon_sock_state passed ring buffer memory as a map value).
kshield ${KFLOW_V:-} agent --no-shields --store /tmp/ev.db --flow-interval 1s > /tmp/agent.log 2>&1 &
AG=$!
i=0; while ! grep -q "storing events\|error" /tmp/agent.log && [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done
echo "== agent log"; grep -B4 -E "failed to load:|storing|stopped|links pinned" /tmp/agent.log | head -30
head -c 1000000 /dev/zero > /tmp/z
nc -l -p 5001 > /tmp/rx4 & L=$!; sleep 1
nc 127.0.0.1 5001 < /tmp/z; wait $L
nc -l -p 5002 > /tmp/rx6 & L=$!; sleep 1
nc ::1 5002 < /tmp/z; wait $L
# -i 1: a chunk a second, the second after the flow interval
nc -l -p 5004 > /tmp/rxl & L=$!; sleep 1
nc -i 1 127.0.0.1 5004 < /tmp/z; wait $L
echo "received (busybox nc stops early; the flows must say the same): $(wc -c < /tmp/rx4) $(wc -c < /tmp/rx6) $(wc -c < /tmp/rxl)"
sleep 2
kill -TERM $AG; wait $AG
echo "== flows"
kshield events --store /tmp/ev.db --kind flow --port 5001
kshield events --store /tmp/ev.db --kind flow --port 5002
kshield events --store /tmp/ev.db --kind flow --port 5004
kshield stats --store /tmp/ev.db | grep -i "flow\|lost"
