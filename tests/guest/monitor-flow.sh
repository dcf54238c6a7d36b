#!/bin/sh
# monitor-flow.sh - the monitor's flow accounting on a guest kernel: matrix
# check `flow` (matrix/kernels.list), sourced by matrix/init after its
# mounts. The agent with --flow-interval 1s, then busybox nc echo servers:
# 1000000 bytes each way over IPv4 and over IPv6, and 100000 + 1.5 s +
# 100000 (an interim record at the second burst). Prints one
# "KSHIELD-CHECK flow <json>" line: ok when both ends of each TCP
# connection have a final record of exactly what was echoed (the socket's
# own counters: a retransmission is not counted again), and the long
# one an interim record; with the kernel's retransmission counters and the
# long connection's final byte counts, so that a failure says why, and how
# the flows were seen ("per call" on 6.5+, "per packet" before: both ways
# of bpf/monitor_flow.bpf.h run on the matrix). No UDP: busybox nc has none;
# cgroup_skb programs on 6.1 may not ask for the current task, so UDP flows
# there have no owner. About 5.5 s of a boot under TCG (6.1.0-47, 6.12.111 cloud).
# Before flows, the monitor did not load on 6.1 at all (mon_sock_state
# passed ring buffer memory as a map value).
t0=$(up)
# a column of /proc/net/snmp or /proc/net/netstat by its name
tcpstat() {
	cat /proc/net/snmp /proc/net/netstat 2>/dev/null | awk -v k="$1" '
		{ if (h[$1]) { for (i = 2; i <= NF; i++) if (h[$1, i] == k) print $i; next }
		  h[$1] = 1; for (i = 2; i <= NF; i++) h[$1, i] = $i }'
}
rs0=$(tcpstat RetransSegs); lp0=$(tcpstat TCPLossProbes)
kshield ${KFLOW_V:-} agent --no-shields --store /tmp/ev.db --flow-interval 1s > /tmp/agent.log 2>&1 &
AG=$!
i=0; while ! grep -q "storing events\|error" /tmp/agent.log && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done
tag "KSHIELD-LOG flow agent:" </tmp/agent.log
head -c 1000000 /dev/zero > /tmp/z
# echo servers (busybox nc -l alone stops after its first read)
nc -l -p 5001 -e /bin/cat & sleep 0.3
r4=$(nc 127.0.0.1 5001 < /tmp/z | wc -c)
nc -l -p 5002 -e /bin/cat & sleep 0.3
r6=$(nc ::1 5002 < /tmp/z | wc -c)
# 100000 bytes, 1.5 s, 100000 more: the second burst finds the interval over
nc -l -p 5004 -e /bin/cat & sleep 0.3
rl=$( (head -c 100000 /dev/zero; sleep 1.5; head -c 100000 /dev/zero) | nc 127.0.0.1 5004 | wc -c)
# records on @port with @final and @bytes (a condition) both ways
n_flows() {
	kshield -j hunt --store /tmp/ev.db --sql "SELECT count(*) AS n FROM events WHERE
		kind = 'flow' AND $1 IN (lport, rport) AND json_extract(detail, '\$.final') = $2
		AND json_extract(detail, '\$.bytes_out') $3 AND json_extract(detail, '\$.bytes_in') $3" \
		2>>/tmp/hunt.err | sed -n 's/.*"n":\([0-9]*\).*/\1/p'
}
# the close records reach the store a drain period or more later (TCG is
# slow): wait for the long connection's two, at most 5 s, then stop
i=0; while [ "$(n_flows 5004 1 "> 0")" != 2 ] && [ $i -lt 25 ]; do sleep 0.2; i=$((i+1)); done
rs1=$(tcpstat RetransSegs); lp1=$(tcpstat TCPLossProbes)
kill -TERM $AG; wait $AG
# exact: bytes from the socket's own counters, each byte once
t4=$(n_flows 5001 1 "= 1000000"); t6=$(n_flows 5002 1 "= 1000000")
lf=$(n_flows 5004 1 "= 200000"); li=$(n_flows 5004 0 "> 0")
lb=$(kshield -j hunt --store /tmp/ev.db --sql "SELECT group_concat(json_extract(detail, '\$.bytes_out')
	|| '/' || json_extract(detail, '\$.bytes_in'), ' ') AS b FROM events WHERE kind = 'flow'
	AND 5004 IN (lport, rport) AND json_extract(detail, '\$.final') = 1" 2>>/tmp/hunt.err |
	sed -n 's/.*"b":"\([0-9/ ]*\)".*/\1/p')
rs=$(( ${rs1:-0} - ${rs0:-0} )); lp=$(( ${lp1:-0} - ${lp0:-0} ))
# how this kernel's flows were seen (bpf/monitor_flow.bpf.h): per call (6.5+) or per packet
mode=$(sed -n 's/.*flow on, \(per [a-z]*\).*/\1/p' /tmp/agent.log | head -1)
ok=false
[ "$r4.$r6.$rl" = 1000000.1000000.200000 ] && [ "${t4:-0}" = 2 ] && [ "${t6:-0}" = 2 ] &&
	[ "${lf:-0}" = 2 ] && [ "${li:-0}" -ge 1 ] && [ -n "$mode" ] && ok=true
echo "KSHIELD-CHECK flow {\"ok\": $ok, \"seen\": \"${mode:-?}\", \"echoed\": [${r4:-0}, ${r6:-0}, ${rl:-0}], \"final_tcp4\": ${t4:-0}, \"final_tcp6\": ${t6:-0}, \"long_final\": ${lf:-0}, \"long_interim\": ${li:-0}, \"long_bytes\": \"$lb\", \"retrans_segs\": $rs, \"loss_probes\": $lp, \"seconds\": $(awk "BEGIN {print $(up) - $t0}")}"
tag "KSHIELD-LOG flow hunt:" </tmp/hunt.err
