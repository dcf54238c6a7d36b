#!/bin/sh
# SPDX-License-Identifier: MIT
# monitor-flow.sh - the monitor's flow accounting on a guest kernel: matrix
# check `flow` (matrix/kernels.list), sourced by matrix/init after its
# mounts. The agent with --flow-interval 1s, then:
#  - busybox nc echo servers: 1000000 bytes each way over IPv4 and over
#    IPv6, and 100000 + 1.5 s + 100000 (an interim record at the second
#    burst): large transfers, many segments;
#  - flowgen (tests/guest/flowgen.c): 250 connections of 3000 bytes each
#    way in each of four cases (IPv4 and IPv6; the client or the server
#    closing first, so that each end reaches TCP_CLOSE both through
#    TIME_WAIT and through LAST_ACK), and 20 long ones per family at once
#    (3000, 1.5 s, 3000): 2080 connection ends, so that a monitor losing 1
#    close record in 1000 fails here (2 expected misses) and not only in
#    one run out of many.
# The same run holds the records around the flows: each single connection
# of flowgen one connect record (established) and one accept record that
# name each other's client port, with flowgen as their owner (the
# connecting end only where the kernel gives tracing programs the socket's
# cookie at connect), a listen per server, flowgen's exec and kshield
# probe's BPF program loads; and it logs
# the monitor's programs (its link pins) as "flow programs: ...".
# Prints one "KSHIELD-CHECK flow <json>" line: ok when every end of every
# connection has exactly one final record of exactly what was echoed (the
# socket's own counters: a retransmission is not counted again), none of
# them flagged untracked (the monitor saw each from its start), each long
# end an interim record, and the agent lost nothing in its ring buffer and
# stored all it received. The kernel skips a program's run that would
# overlap another run of it on the same CPU (bpf/monitor.bpf.c MON_TWIN,
# which does most of those runs in a twin); the agent counts the rest
# ('missed' in the losses table), and a record missing for that reason is
# counted, not silent: each such defect must be matched by a counted skip
# of the programs that make flow records, or the check fails. With the
# kernel's retransmission counters, the agent's received/stored counts, the
# skips and a one-line reason naming the case that failed, and how the
# flows were seen ("per call" on 6.5+, "per packet" before: both ways of
# bpf/monitor_flow.bpf.h run on the matrix). No UDP: cgroup_skb programs
# on 6.1 may not ask for the current task, so UDP flows there have no
# owner. Before flows, the monitor did not load on 6.1 at all
# (mon_sock_state passed ring buffer memory as a map value).
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
# the programs this kernel got: the monitor's link pins, by program name
log "flow programs: $(ls "$KSHIELD_BPFFS/monitor" 2>/dev/null | sed -n 's/^link_//p' | sort | tr '\n' ' ')"
head -c 1000000 /dev/zero > /tmp/z
# echo servers (busybox nc -l alone stops after its first read)
nc -l -p 5001 -e /bin/cat & sleep 0.3
r4=$(nc 127.0.0.1 5001 < /tmp/z | wc -c)
nc -l -p 5002 -e /bin/cat & sleep 0.3
r6=$(nc ::1 5002 < /tmp/z | wc -c)
# 100000 bytes, 1.5 s, 100000 more: the second burst finds the interval over
nc -l -p 5004 -e /bin/cat & sleep 0.3
rl=$( (head -c 100000 /dev/zero; sleep 1.5; head -c 100000 /dev/zero) | nc 127.0.0.1 5004 | wc -c)
# many connections of known size (tests/guest/flowgen.c), ports 5100-5105
FG_N=250; FG_BYTES=3000; FG_LONG=20
flowgen 5100 $FG_N $FG_BYTES $FG_LONG 1500 > /tmp/flowgen.out 2>&1; fg_rc=$?
tag "KSHIELD-LOG flow flowgen:" </tmp/flowgen.out
# BPF program loads by another process than the agent: kshield probe's
kshield probe -j >/dev/null 2>&1
# records on @port with @final and @bytes (a condition) both ways
n_flows() {
	kshield -j hunt --store /tmp/ev.db --sql "SELECT count(*) AS n FROM events WHERE
		kind = 'flow' AND $1 IN (lport, rport) AND json_extract(detail, '\$.final') = $2
		AND json_extract(detail, '\$.bytes_out') $3 AND json_extract(detail, '\$.bytes_in') $3" \
		2>>/tmp/hunt.err | sed -n 's/.*"n":\([0-9]*\).*/\1/p'
}
# the close records reach the store a drain period or more later (TCG is
# slow): wait for the nc long one's two (at most 5 s) and for flowgen's
# 2080 (at most 15 s), then stop
fg_final() {
	kshield -j hunt --store /tmp/ev.db --sql "SELECT count(*) AS n FROM events WHERE kind = 'flow'
		AND (lport BETWEEN 5100 AND 5105 OR rport BETWEEN 5100 AND 5105)
		AND json_extract(detail, '\$.final') = 1" 2>>/tmp/hunt.err | sed -n 's/.*"n":\([0-9]*\).*/\1/p'
}
i=0; while [ "$(n_flows 5004 1 "> 0")" != 2 ] && [ $i -lt 25 ]; do sleep 0.2; i=$((i+1)); done
i=0; while [ "$(fg_final)" != $((8 * FG_N + 4 * FG_LONG)) ] && [ $i -lt 30 ]; do sleep 0.5; i=$((i+1)); done
rs1=$(tcpstat RetransSegs); lp1=$(tcpstat TCPLossProbes)
kill -TERM $AG; wait $AG
# exact: bytes from the socket's own counters, each byte once
t4=$(n_flows 5001 1 "= 1000000"); t6=$(n_flows 5002 1 "= 1000000")
lf=$(n_flows 5004 1 "= 200000"); li=$(n_flows 5004 0 "> 0")
lb=$(kshield -j hunt --store /tmp/ev.db --sql "SELECT group_concat(json_extract(detail, '\$.bytes_out')
	|| '/' || json_extract(detail, '\$.bytes_in'), ' ') AS b FROM events WHERE kind = 'flow'
	AND 5004 IN (lport, rport) AND json_extract(detail, '\$.final') = 1" 2>>/tmp/hunt.err |
	sed -n 's/.*"b":"\([0-9/ ]*\)".*/\1/p')
# flowgen's cases, each: "case srv cli exact untracked interim_ends", and
# why one is short of what it wants
fg_case() { # port name bytes long
	kshield -j hunt --store /tmp/ev.db --sql "SELECT sum(lport = $1) AS s, sum(rport = $1) AS c,
		sum(json_extract(detail, '\$.bytes_out') = $3 AND json_extract(detail, '\$.bytes_in') = $3) AS x,
		sum(json_extract(detail, '\$.untracked') AND (lport = $1 OR $FG_CLIENT_OWNER)) AS u,
		(SELECT count(DISTINCT json_extract(detail, '\$.flow')) FROM events WHERE kind = 'flow'
		 AND $1 IN (lport, rport) AND json_extract(detail, '\$.final') = 0) AS i
		FROM events WHERE kind = 'flow' AND $1 IN (lport, rport) AND json_extract(detail, '\$.final') = 1" \
		2>>/tmp/hunt.err | sed -n 's/.*"s":\([0-9]*\),"c":\([0-9]*\),"x":\([0-9]*\),"u":\([0-9]*\),"i":\([0-9]*\).*/\1 \2 \3 \4 \5/p'
}
# one case (port name bytes conns long) against what it wants: appends to
# fg_json; a record with other bytes than were echoed is wrong (fg_why);
# an end without its final record, flagged untracked, or (long) without an
# interim record is a defect (fg_defects, described in fg_detail)
fg_check() {
	set -- "$@" $(fg_case $1 $2 $3)
	# $6 server ends, $7 client ends, $8 exact, $9 untracked, ${10} ends with an interim
	s_=${6:-0}; c_=${7:-0}; x_=${8:-0}; u_=${9:-0}; i_=${10:-0}
	fg_json="$fg_json${fg_json:+, }{\"case\": \"$2\", \"conns\": $4, \"server_ends\": $s_, \"client_ends\": $c_, \"exact\": $x_, \"untracked\": $u_, \"interim_ends\": $i_}"
	w=""
	[ "$s_" = "$4" ] && [ "$c_" = "$4" ] || w="$w final records of $s_ server and $c_ client ends of $4 connections;"
	[ "$u_" = 0 ] || w="$w $u_ flagged untracked;"
	d=$((2 * $4 - s_ - c_ + u_))
	if [ "$5" != 0 ] && [ "$i_" != "$((2 * $4))" ]; then
		w="$w $i_ of $((2 * $4)) ends with an interim record;"; d=$((d + 2 * $4 - i_))
	fi
	[ "$x_" = "$((s_ + c_))" ] || fg_why="$fg_why $2: $((s_ + c_ - x_)) final records not of exactly $3 bytes each way;"
	fg_defects=$((fg_defects + d))
	[ -z "$w" ] || fg_detail="$fg_detail $2:$w"
}
fg_json=""; fg_why=""; fg_detail=""; fg_defects=0
# Before 5.12 a tracing program gets no socket cookie at connect (fit.bpf.h
# ks_sock_cookie), so the connecting end's flow has no owner and is made
# late, by design: only the accepting ends count as untracked there.
FG_CLIENT_OWNER=1
case $(uname -r) in 5.[0-9].*|5.1[01].*) FG_CLIENT_OWNER=0 ;; esac
fg_check 5100 v4-client-first $FG_BYTES $FG_N 0
fg_check 5101 v6-client-first $FG_BYTES $FG_N 0
fg_check 5102 v4-server-first $FG_BYTES $FG_N 0
fg_check 5103 v6-server-first $FG_BYTES $FG_N 0
fg_check 5104 v4-long $((2 * FG_BYTES)) $FG_LONG 1
fg_check 5105 v6-long $((2 * FG_BYTES)) $FG_LONG 1
[ "$fg_rc" = 0 ] || fg_why="$fg_why flowgen: not every connection echoed (exit $fg_rc);"
# The records around the flows, for the four cases of single connections
# (ports 5100-5103): each connection one connect record (established) to
# the server's address and port from its own, one accept record at the
# server naming the same client port, and the listen; and flowgen's own
# exec with its arguments. Columns per case: connect, accept, listen,
# connects whose client port an accept names, connects and accepts whose
# owner is flowgen (the connecting process; the listening one).
fg_conns() { # port addr
	kshield -j hunt --store /tmp/ev.db --sql "SELECT
		(SELECT count(*) FROM events WHERE kind = 'connect' AND rport = $1 AND raddr = '$2'
		 AND laddr = '$2' AND json_extract(detail, '\$.established') = 1) AS c,
		(SELECT count(*) FROM events WHERE kind = 'accept' AND lport = $1 AND laddr = '$2'
		 AND raddr = '$2') AS a,
		(SELECT count(*) FROM events WHERE kind = 'listen' AND lport = $1 AND laddr = '$2') AS l,
		(SELECT count(*) FROM events WHERE kind = 'connect' AND rport = $1 AND lport IN
		 (SELECT rport FROM events WHERE kind = 'accept' AND lport = $1)) AS p,
		(SELECT count(*) FROM events WHERE kind = 'connect' AND rport = $1 AND comm = 'flowgen'
		 AND json_extract(detail, '\$.owner_unknown') = 0) AS co,
		(SELECT count(*) FROM events WHERE kind = 'accept' AND lport = $1 AND comm = 'flowgen'
		 AND json_extract(detail, '\$.owner_unknown') = 0) AS ao" \
		2>>/tmp/hunt.err | sed -n 's/.*"c":\([0-9]*\),"a":\([0-9]*\),"l":\([0-9]*\),"p":\([0-9]*\),"co":\([0-9]*\),"ao":\([0-9]*\).*/\1 \2 \3 \4 \5 \6/p'
}
fg_conn_check() { # port addr name
	set -- "$@" $(fg_conns $1 $2)
	c_=${4:-0}; a_=${5:-0}; l_=${6:-0}; p_=${7:-0}; co_=${8:-0}; ao_=${9:-0}
	rec_json="$rec_json${rec_json:+, }{\"case\": \"$3\", \"connect\": $c_, \"accept\": $a_, \"listen\": $l_, \"paired\": $p_, \"connect_owned\": $co_, \"accept_owned\": $ao_}"
	[ "$l_" -ge 1 ] || fg_why="$fg_why $3: no listen record;"
	# the connecting end's owner only where a tracing program gets the
	# socket's cookie at connect (FG_CLIENT_OWNER)
	[ "$ao_" = "$a_" ] && { [ "$co_" = "$c_" ] || [ $FG_CLIENT_OWNER = 0 ]; } ||
		fg_why="$fg_why $3: owner not flowgen: $((c_ - co_)) of $c_ connects, $((a_ - ao_)) of $a_ accepts;"
	# one skip of mon_sock_state loses one record: a defect, as above
	fg_defects=$((fg_defects + (FG_N - c_) + (FG_N - a_)))
	[ "$c_" = $FG_N ] && [ "$a_" = $FG_N ] && [ "$p_" = $FG_N ] ||
		fg_detail="$fg_detail $3: connect $c_, accept $a_, paired $p_ of $FG_N;"
	# an end whose record names no record of the other end: only where
	# that other record is missing
	[ "$c_" -le $FG_N ] && [ "$a_" -le $FG_N ] && [ $((c_ + a_ - p_)) -le $FG_N ] ||
		fg_why="$fg_why $3: connect/accept records of other addresses or ports (connect $c_, accept $a_, paired $p_);"
}
rec_json=""
fg_conn_check 5100 127.0.0.1 v4
fg_conn_check 5101 ::1 v6
fg_conn_check 5102 127.0.0.1 v4-server-first
fg_conn_check 5103 ::1 v6-server-first
execs=$(kshield -j hunt --store /tmp/ev.db --sql "SELECT count(*) AS n FROM events WHERE kind = 'exec'
	AND binary LIKE '%flowgen' AND args LIKE '%flowgen 5100 $FG_N $FG_BYTES $FG_LONG 1500'" \
	2>>/tmp/hunt.err | sed -n 's/.*"n":\([0-9]*\).*/\1/p')
[ "${execs:-0}" = 1 ] || fg_why="$fg_why ${execs:-0} exec records of flowgen (want 1);"
bpfs=$(kshield -j hunt --store /tmp/ev.db --sql "SELECT count(*) AS n FROM events WHERE kind = 'bpf'
	AND comm = 'kshield' AND json_extract(detail, '\$.cmd') = 5" 2>>/tmp/hunt.err | sed -n 's/.*"n":\([0-9]*\).*/\1/p')
[ "${bpfs:-0}" -ge 1 ] || fg_why="$fg_why no bpf record of kshield probe's program loads;"
# the agent's own account: received = stored + not stored; records lost
# in the ring buffer; runs of the monitor's programs the kernel skipped
# (each a record never made: counted, in the losses table as 'missed')
acct=$(sed -n 's/.*stopped: \([0-9]*\) events received, \([0-9]*\) stored, \([0-9]*\) not stored.*/\1 \2 \3/p' /tmp/agent.log)
lost=$(kshield -j hunt --store /tmp/ev.db --sql "SELECT coalesce(sum(lost), 0) AS n FROM (SELECT max(lost)
	AS lost FROM losses WHERE kind != 'missed' GROUP BY kind)" 2>>/tmp/hunt.err | sed -n 's/.*"n":\([0-9]*\).*/\1/p')
missed=$(sed -n 's/.*skipped [0-9]* runs of the monitor.s programs (\(.*\)): .*/\1/p' /tmp/agent.log |
	tr ',' '\n' | awk '/mon_sock_state|mon_flow_/ { n += $2 } END { print n + 0 }')
fg_acct() { [ "${1:-x}" = "${2:-y}" ] || fg_why="$fg_why agent: received ${1:-?}, stored ${2:-?}, not stored ${3:-?};"; }
fg_acct $acct
[ "${lost:-0}" = 0 ] || fg_why="$fg_why $lost records lost in the ring buffer;"
rs=$(( ${rs1:-0} - ${rs0:-0} )); lp=$(( ${lp1:-0} - ${lp0:-0} ))
# how this kernel's flows were seen (bpf/monitor_flow.bpf.h): per call (6.5+) or per packet
mode=$(sed -n 's/.*flow on, \(per [a-z]*\).*/\1/p' /tmp/agent.log | head -1)
[ "$r4.$r6.$rl" = 1000000.1000000.200000 ] || fg_why="$fg_why nc: echoed $r4, $r6, $rl;"
if [ "${t4:-0}.${t6:-0}.${lf:-0}" != 2.2.2 ] || [ "${li:-0}" -lt 1 ]; then
	fg_detail="$fg_detail nc: final records tcp4 ${t4:-0} tcp6 ${t6:-0} long ${lf:-0} ($lb), interim ${li:-0} (want 2, 2, 2, >= 1);"
	fg_defects=$((fg_defects + 6 - ${t4:-0} - ${t6:-0} - ${lf:-0} + (${li:-0} < 1)))
fi
[ -n "$mode" ] || fg_why="$fg_why the agent did not say how it sees flows;"
# A defect is explained only by a counted skip of the programs that make
# flow records (mon_sock_state, mon_flow_*: one skip, at most one defect);
# any other is a record lost silently.
[ "$fg_defects" -le "$missed" ] ||
	fg_why="$fg_why $fg_defects defects, $missed explained by counted kernel skips:$fg_detail"
ok=false; [ -z "$fg_why" ] && ok=true
echo "KSHIELD-CHECK flow {\"ok\": $ok, \"why\": \"${fg_why# }\", \"seen\": \"${mode:-?}\", \"echoed\": [${r4:-0}, ${r6:-0}, ${rl:-0}], \"final_tcp4\": ${t4:-0}, \"final_tcp6\": ${t6:-0}, \"long_final\": ${lf:-0}, \"long_interim\": ${li:-0}, \"long_bytes\": \"$lb\", \"cases\": [$fg_json], \"records\": [$rec_json], \"exec\": ${execs:-0}, \"bpf_loads\": ${bpfs:-0}, \"agent\": \"${acct:-?}\", \"lost\": ${lost:-0}, \"skipped\": ${missed:-0}, \"defects\": $fg_defects, \"defects_why\": \"${fg_detail# }\", \"retrans_segs\": $rs, \"loss_probes\": $lp, \"seconds\": $(awk "BEGIN {print $(up) - $t0}")}"
tag "KSHIELD-LOG flow hunt:" </tmp/hunt.err
# on failure, the records that say why: ends without exactly one final
# record (by the client's port) with every record of theirs, and the
# untracked ones
if [ $ok = false ] || [ "$fg_defects" != 0 ]; then
	kshield -j hunt --store /tmp/ev.db --sql "WITH e AS (SELECT CASE WHEN lport BETWEEN 5100 AND 5105
		THEN lport ELSE rport END AS sp, CASE WHEN lport BETWEEN 5100 AND 5105 THEN rport ELSE lport END
		AS cp, lport, kind, detail, ts FROM events WHERE kind IN ('flow', 'connect', 'accept')
		AND (lport BETWEEN 5100 AND 5105 OR rport BETWEEN 5100 AND 5105)),
		bad AS (SELECT sp, cp FROM e WHERE kind = 'flow' GROUP BY sp, cp
		HAVING sum(json_extract(detail, '\$.final') = 1) != 2 OR sum(json_extract(detail, '\$.untracked')) > 0
		LIMIT 8)
		SELECT e.sp, e.cp, e.lport, e.kind, e.ts, e.detail FROM e JOIN bad USING (sp, cp) ORDER BY e.sp, e.cp, e.ts" \
		2>&1 | sed 's/},{"sp"/}\n{"sp"/g' | tag "KSHIELD-LOG flow bad:"
	kshield -j hunt --store /tmp/ev.db --sql "SELECT kind, max(lost) AS lost, max(unstored) AS unstored
		FROM losses GROUP BY kind" 2>&1 | tag "KSHIELD-LOG flow losses:"
	tail -n 3 /tmp/agent.log | tag "KSHIELD-LOG flow agent:"
fi
