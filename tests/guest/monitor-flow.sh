#!/bin/sh
# monitor-flow.sh - the monitor's flow accounting on a guest kernel, as a
# guest's /init payload (sourced after matrix/init's mounts): the agent with
# --flow-interval 1s, then with busybox nc (echo servers) 1000000 bytes each
# way over IPv4 and over IPv6, and 100000 + 2 s + 100000 (an interim record
# at the second burst); prints the flow records. No UDP: busybox nc has none.
# How: make static; matrix/initramfs.sh KDIR STAGE OUT - (as matrix/run.sh
# calls it); replace STAGE/init by the first 49 lines of matrix/init (its
# mounts) + this file + KSHIELD-DONE/poweroff; cpio it; matrix/boot.sh.
# Last run: Debian 6.1.0-47-cloud and 6.12.111-cloud amd64 under QEMU TCG:
# the monitor loads with its flow programs, IPv4 and IPv6 TCP flows say
# 1000000 out and in, the long one has an interim record. cgroup_skb programs on
# 6.1 and 6.12 may not ask for the current task (6.18 may), so UDP flows
# there have no owner. Before this, the monitor did not load on 6.1 at all
# (mon_sock_state passed ring buffer memory as a map value).
kshield ${KFLOW_V:-} agent --no-shields --store /tmp/ev.db --flow-interval 1s > /tmp/agent.log 2>&1 &
AG=$!
i=0; while ! grep -q "storing events\|error" /tmp/agent.log && [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done
echo "== agent log"; grep -B4 -E "failed to load:|storing|stopped|links pinned" /tmp/agent.log | head -30
head -c 1000000 /dev/zero > /tmp/z
# echo servers (busybox nc -l alone stops after its first read)
nc -l -p 5001 -e /bin/cat & sleep 1
r4=$(nc 127.0.0.1 5001 < /tmp/z | wc -c)
nc -l -p 5002 -e /bin/cat & sleep 1
r6=$(nc ::1 5002 < /tmp/z | wc -c)
# 100000 bytes, 2 s, 100000 more: the second burst finds the interval over
nc -l -p 5004 -e /bin/cat & sleep 1
rl=$( (head -c 100000 /dev/zero; sleep 2; head -c 100000 /dev/zero) | nc 127.0.0.1 5004 | wc -c)
echo "echoed back: $r4 $r6 $rl"
sleep 2
kill -TERM $AG; wait $AG
echo "== flows"
kshield events --store /tmp/ev.db --kind flow --port 5001
kshield -j events --store /tmp/ev.db --kind flow --port 5001 | grep -o '"pid":[0-9]*\|"bytes_[a-z]*":[0-9]*\|"final":[0-9]' | tr '\n' ' '; echo
kshield events --store /tmp/ev.db --kind flow --port 5002
kshield -j events --store /tmp/ev.db --kind flow --port 5002 | grep -o '"pid":[0-9]*\|"bytes_[a-z]*":[0-9]*\|"final":[0-9]' | tr '\n' ' '; echo
kshield events --store /tmp/ev.db --kind flow --port 5004
kshield -j events --store /tmp/ev.db --kind flow --port 5004 | grep -o '"pid":[0-9]*\|"bytes_[a-z]*":[0-9]*\|"final":[0-9]' | tr '\n' ' '; echo
kshield stats --store /tmp/ev.db | grep -i "flow\|lost"
