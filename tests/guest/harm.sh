#!/bin/sh
# SPDX-License-Identifier: MIT
# harm.sh - do no harm, on a guest kernel: matrix check `harm`
# (matrix/kernels.list), sourced by matrix/init (pid 1) after the shield
# tests. Syscalls that no shield cares about (getppid, read+write of
# /dev/zero -> /dev/null at 512 B, stat), timed by syscall_loop
# (bench/syscall_loop.c, least of 21 short runs), with nothing loaded
# ("none") and in these modes:
#   shields  every bundled shield loaded by hand (`kshield shield load`)
#   default  the agent as packaged (packaging/kshield.conf: monitor, flows,
#            the guard on, every bundled shield, userns-policy in audit),
#            with a scratch store, signed objects and a key to stop it;
#            started on the shields above, as after a restart
#   monitor  the agent with --no-shields
#   alone    HARM_ALONE (the shields with file_permission programs
#            before 6.5) each by itself where it loads an lsm, fmod_ret or
#            kprobe variant (every workload: a kprobe variant may bring the
#            dispatcher along for its tp programs), and the guard by itself
#            (`kshield guard load`; read+write and stat, for its
#            inode_permission program runs on every path component): which
#            program costs what
# HARM_ROUNDS rounds (/etc/kshield/harm.env: 5 on x86-64, 3 on arm64),
# each: none, shields, default, none, monitor, none, floor1, none, then each alone mode
# followed by none. A mode's ratio in a round is its time over the mean of
# the nones just before and after it (a steady drift cancels); the noise
# floor is every none over the none before it in the same round. Per
# workload and mode: the median ratio and the range (least-most of the
# rounds). On a shared 2-core machine under TCG a neighbour's burst moves
# one timing by 2-3x: the median does not follow one burst, and the range
# says that there was one.
#   floor1   an empty program on sys_enter (syscall_loop --floor1): the
#            floor of a kernel without kprobes or trampolines
# Prints one "KSHIELD-CHECK harm <json>" line, ok when a shield loaded,
# every workload ran in every round of shields, default and monitor, the
# monitor recorded a BPF load by another process and the default agent
# loaded shields and reported its guard. "above_noise" says that the
# least round of a mode is above the most of none against none. "judged"
# holds the agent as packaged over its floor per round, and "error" says
# when every round of getppid is over HARM_GOAL (1.05x): the row fails.
# Time: 30-75 s a round under TCG on x86-64 (loading every shield and
# starting the agent twice are most of it; the log gives each phase),
# about 4x that on arm64.
t0=$(up)
[ -f /etc/kshield/harm.env ] && . /etc/kshield/harm.env
N=${HARM_N:-2000}
RUNS=${HARM_RUNS:-21}
R=${HARM_ROUNDS:-5}
ALONE=${HARM_ALONE:-cve-2026-31431 cve-2026-43284}
W="getppid rw512 stat"
TOK=""
H=/tmp/harm
# lap NAME: seconds since the last lap, for the log
lap_at=$(up); laps=""
lap() {
	t=$(up)
	laps="$laps $1=$(awk -v a="$t" -v b="$lap_at" 'BEGIN {printf "%.1f", a - b}')"
	lap_at=$t
}
rm -rf $H && mkdir -p $H/shields.d $H/keys $H/r
# Many short runs, the least kept: a run of about 4 ms (x86-64 TCG) is
# often not interrupted by the host, a longer one seldom is. getppid is
# 5x cheaper than read+write and 20x cheaper than stat.
FL=""	# --floor1 while the floor1 mode is timed
loop() {
	case $1 in getppid) n=$((N * 5)) ;; stat) n=$((N / 4)) ;; *) n=$N ;; esac
	syscall_loop $FL "$1" "$n" "$RUNS" 2>/dev/null
}
unload_all() {
	for d in "$KSHIELD_BPFFS"/shields/*/; do
		[ -d "$d" ] && kshield shield unload "$(basename "$d")" $TOK >/dev/null 2>>$H/err
	done
}
# The agent's pins stay after it stops (it is meant to be restarted): the
# monitor's links are removed by hand, the guard by a guard-off token.
clear_all() {
	kshield guard off $TOK >/dev/null 2>&1
	kshield guard unload $TOK >/dev/null 2>&1
	unload_all
	rm -rf "$KSHIELD_BPFFS/monitor"
}
# what is pinned while none is timed (logged each round): directories and
# maps may stay, no shield, link or monitor may
leftover() {
	ls "$KSHIELD_BPFFS" 2>/dev/null | grep -v '^shields$' | tr '\n' ' '
	ls "$KSHIELD_BPFFS/shields" "$KSHIELD_BPFFS/dispatch" 2>/dev/null | grep -v '^ks_\|^$\|:$' | tr '\n' ' '
}

# The packaged configuration, in a scratch place; the shields signed, as
# keys_dir then demands, with a key whose token turns the guard off again.
kshield shield keygen $H/k >/dev/null 2>>$H/err && cp $H/k.pub $H/keys/
for f in /shields/*.bpf.o; do
	ln -s "$f" $H/shields.d/ && kshield shield sign $H/shields.d/"$(basename "$f")" --key $H/k.key >/dev/null 2>>$H/err
done
sed -e "s|^store = .*|store = $H/default.db|" -e "s|^shields_dir = .*|shields_dir = $H/shields.d|" \
	-e "s|^# keys_dir = .*|keys_dir = $H/keys|" -e "s|^# weaken_token = .*|weaken_token = $H/weaken.token|" \
	-e "s|^bpffs = .*|bpffs = $KSHIELD_BPFFS|" /etc/kshield/harm-default.conf >$H/kshield.conf

lap setup
clear_all
before=$(leftover)
nshields=$(ls /shields/*.bpf.o | wc -l)
echo "KSHIELD-LOG harm: setup$laps"

# none: one timing of WORKLOADS with nothing loaded; the ratio of it to the
# none before it in this round is a noise sample
prev_none=""
none() {
	for w in $W; do
		v=$(loop "$w")
		[ -n "$v" ] || { echo "none $w did not run" >>$H/err; continue; }
		eval "p=\$n_$w"
		[ -n "$prev_none" ] && [ -n "$p" ] && ratio "$v" "$p" >>$H/r/noise.$w
		eval "n_$w=$v"
	done
	prev_none=1
}
# put MODE LOADED BEFORE AFTER: one round's ratio
put() {
	if [ -n "$2" ] && [ -n "$3" ] && [ -n "$4" ]; then
		awk -v l="$2" -v b="$3" -v a="$4" 'BEGIN {printf "%.3f\n", 2 * l / (a + b)}' >>$H/r/$1.$w
	else
		echo "$1 $w did not run" >>$H/err
	fi
}
# mode NAME WORKLOADS: time them (loaded), then none, and record the
# ratio of each to the mean of the nones before and after
mode() {
	m=$1; shift
	for w in "$@"; do eval "b_$w=\$n_$w; l_$w=\$(loop $w)"; done
	unload_mode "$m"
	none
	for w in "$@"; do eval "put $m \"\$l_$w\" \"\$b_$w\" \"\$n_$w\""; done
}
# fp_links: the programs attached to file_permission, by name, as bpftool
# lists them where the guest has it (matrix/initramfs.sh): tracing links
# whose target is security_file_permission or bpf_lsm_file_permission,
# or, where the kernel reports no target (before 5.13), whose program is
# named so (the kernel keeps 15 characters: "lsm__file_permi",
# "fmod_ret__file_", "ks_fp_lsm", "ks_fp_fmod_ret")
fp_links() {
	command -v bpftool >/dev/null || { echo "no bpftool"; return; }
	ids=$(bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
		sed -n "s/^\[\([0-9]*\)\] FUNC '\(security_file_permission\|bpf_lsm_file_permission\)'.*/\1/p" | tr '\n' ' ')
	bpftool link show 2>/dev/null | awk '
		function out() { if (prog != "") print prog, (tgt == "" ? "-" : tgt) }
		/^[0-9]+:/ { out(); prog = ""; tgt = ""; if ($2 == "tracing") for (i = 1; i < NF; i++) if ($i == "prog") prog = $(i + 1) }
		/target_btf_id/ { for (i = 1; i < NF; i++) if ($i == "target_btf_id") tgt = $(i + 1) }
		END { out() }' |
	while read -r p t; do
		n=$(bpftool prog show id "$p" 2>/dev/null | sed -n 's/^[0-9]*: [a-z_]*  *name \([^ ]*\) .*/\1/p')
		case " $ids " in *" $t "*) echo "$n" ;; esac
		[ "$t" = - ] && case $n in ks_fp_*|*file_perm*|*__file_*) echo "$n" ;; esac
	done | awk '{n++; s = s " " $1} END {printf "%d:%s", n, s}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.3f\n", a / b}'; }
# agent_start LOG ARGS...: start it and wait until it has loaded (the
# default one says "guard:" after its shields)
agent_start() {
	lg=$1; shift
	kshield agent "$@" >$lg 2>&1 &
	HA=$!
	# (not on "error": the monitor's fallback to tracepoints says one)
	i=0; while ! grep -q "$READY" $lg && kill -0 $HA 2>/dev/null && [ $i -lt 900 ]; do sleep 0.2; i=$((i+1)); done
}
agent_stop() { kill -TERM $HA; wait $HA; }
unload_mode() {
	case $1 in
	shields) unload_all ;;
	monitor | default) agent_stop; clear_all ;;
	guard) kshield guard unload $TOK >/dev/null 2>>$H/err ;;
	floor1) FL="" ;;
	*) kshield shield unload "$1" $TOK >/dev/null 2>>$H/err ;;
	esac
}

mon_bpfev=0; def_shields=0; def_guard=""; loaded=0
for r in $(seq "$R"); do
	prev_none=""
	lap_at=$(up); laps=""
	none
	lap none
	# every shield, loaded by hand
	ld=0; rf=""
	for f in /shields/*.bpf.o; do
		if kshield shield load "$f" >/dev/null 2>>$H/load.err; then
			ld=$((ld + 1))
		else
			rf="$rf $(basename "$f" .bpf.o)"
		fi
	done
	if [ "$r" = 1 ]; then
		loaded=$ld refused=$rf
		variants=$(kshield -j shield list 2>/dev/null | tr '{' '\n' | sed -n 's/.*"name":"\([^"]*\)".*"variant":"\([^"]*\)".*/\1=\2/p' | tr '\n' ' ')
		dispatch=$(kshield status 2>/dev/null | sed -n 's/^syscalls: *//p')
		fpd=$(kshield status 2>/dev/null | sed -n 's/^file_permission: *//p')
		fpl=$(fp_links)
		echo "KSHIELD-LOG harm: every shield loaded: file_permission: $fpd; attached there (bpftool): $fpl"
		names=$(kshield -j shield list 2>/dev/null | tr '{' '\n' | sed -n 's/.*"name":"\([^"]*\)".*/unload:\1 audit:\1/p')
		kshield guard token --key $H/k.key --out $H/weaken.token guard-off $names 2>>$H/err &&
			TOK="--token $H/weaken.token"
		cat $H/load.err >>$H/err
	fi
	lap shields-load
	for w in $W; do eval "b_$w=\$n_$w; s_$w=\$(loop $w)"; done
	# The agent as packaged, started by pid 1 (this shell) on those
	# shields, as after a restart (it adopts them, sets userns-policy to
	# audit, adds the monitor, flows and the guard); stopped by pid 1,
	# then the guard turned off and unloaded by token.
	READY="guard:"
	rm -f $H/default.db*
	agent_start $H/default.log --config $H/kshield.conf
	lap default-start
	if [ "$r" = 1 ]; then
		def_shields=$(grep -c "shield [^ ]*: \(loaded\|adopted\|mode\|replaced\|ok\) (" $H/default.log)
		def_guard=$(sed -n 's/.*guard: \([a-z]*\) (\(.*\)).*/\1, \2/p' $H/default.log | head -1 | cut -c1-80)
		[ -n "$def_guard" ] || def_guard=$(sed -n 's/.*guard: //p' $H/default.log | head -1 | cut -c1-80)
		tag "KSHIELD-LOG harm default:" <$H/default.log
	fi
	for w in $W; do eval "d_$w=\$(loop $w)"; done
	[ "$r" = 1 ] && def_dispatch=$(kshield status 2>/dev/null | sed -n 's/^syscalls: *//p')
	agent_stop
	clear_all
	lap default-stop
	none
	for w in $W; do
		eval "put shields \"\$s_$w\" \"\$b_$w\" \"\$n_$w\"; put default \"\$d_$w\" \"\$b_$w\" \"\$n_$w\""
	done
	# The monitor, and that it still records: a BPF program loaded by
	# someone else is a 'bpf' event (a watched syscall, by fentry/fexit or
	# tracepoint). Its store is read once the agent has stopped.
	READY="storing events"
	rm -f $H/monitor.db*
	agent_start $H/monitor.log --no-shields --store $H/monitor.db
	lap monitor-start
	if [ "$r" = 1 ]; then
		kshield shield load /shields/cve-2024-0582.bpf.o >/dev/null 2>&1
		kshield shield unload cve-2024-0582 $TOK >/dev/null 2>&1
		sleep 1
	fi
	mode monitor $W
	# the floor: an empty program on sys_enter, nothing of kshield's
	FL=--floor1
	mode floor1 $W
	if [ "$r" = 1 ]; then
		monsys=$(sed -n 's/.*syscalls by \([a-z/]*\);.*/\1/p' $H/monitor.log | head -1)
		mon_bpfev=$(kshield -j hunt --store $H/monitor.db --sql "SELECT count(*) AS n FROM events WHERE kind = 'bpf'" 2>>$H/err | sed -n 's/.*"n":\([0-9]*\).*/\1/p')
		tag "KSHIELD-LOG harm monitor:" <$H/monitor.log
	fi
	lap monitor-rest
	# Attribution: the workloads with one program set loaded at a time.
	# (a shield on its tp variant runs behind the shared dispatcher: not
	# its own cost there, and not timed; its kprobe variant has kprobes
	# of its own on syscall entries)
	for s in $ALONE; do
		case " $variants " in *" $s=lsm "* | *" $s=fmod_ret "* | *" $s=kprobe "*) ;; *) continue ;; esac
		kshield shield load /shields/$s.bpf.o >/dev/null 2>>$H/err && mode "$s" $W
	done
	kshield guard load --off $TOK >/dev/null 2>>$H/err && mode guard rw512 stat
	lap alone
	echo "KSHIELD-LOG harm: round $r done at $(up) s ($laps); pinned in none: $(leftover)"
done
clear_all

# stats FILE: {"median": M, "range": [MIN, MAX], "n": N}
stats() {
	[ -s "$1" ] || { echo null; return; }
	sort -n "$1" | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "{\"median\": %.3f, \"range\": [%s, %s], \"n\": %d}", m, v[1], v[NR], NR}'
}
# above FILE: the least round of a mode above the most of none/none
above() {
	[ -s "$1" ] && [ -s "$2" ] || { echo null; return; }
	awk -v lo="$(sort -n "$1" | head -1)" -v hi="$(sort -n "$2" | tail -1)" 'BEGIN {print (lo > hi) ? "true" : "false"}'
}
json_mode() {	# json_mode MODE WORKLOADS
	m=$1; shift; sep=""
	printf '{'
	for w in "$@"; do
		printf '%s"%s": %s' "$sep" "$w" "$(stats $H/r/$m.$w)"
		[ "$m" = noise ] || printf ', "%s_above_noise": %s' "$w" "$(above $H/r/$m.$w $H/r/noise.$w)"
		sep=", "
	done
	printf '}'
}
med() { [ -s "$1" ] && sort -n "$1" | awk '{v[NR] = $1} END {printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}' || echo null; }
complete=true
for m in shields monitor default; do
	for w in $W; do [ "$(wc -l <$H/r/$m.$w 2>/dev/null)" = "$R" ] || complete=false; done
done
alone_json=""; sep=""
for m in $ALONE guard; do
	[ -s $H/r/$m.rw512 ] || continue
	ws=$W; [ "$m" = guard ] && ws="rw512 stat"
	alone_json="$alone_json$sep\"$m\": $(json_mode "$m" $ws)"; sep=", "
done
# The judgement (issue 38): the agent as packaged over its floor, per
# round. The floor is an empty sys_enter program where the agent runs
# anything on every syscall's entry (the dispatcher attached, or the
# monitor's syscall tracepoints, which send every task through the same
# slow path), else nothing. A row fails only when every round of getppid
# is over the goal: one neighbour's burst under TCG moves one round, not
# all of them. read+write is reported beside it, not judged: it also
# crosses file_permission and the guard's hooks, whose floor (an empty
# program on each) this check does not time.
GOAL=${HARM_GOAL:-1.05}
base=none
case "$def_dispatch" in *"sys_enter attached"*) base=floor1 ;; esac
[ "$monsys" = tracepoints ] && base=floor1
over=""; unjudged=""
for w in getppid rw512; do
	if [ $base = floor1 ]; then
		awk 'NR == FNR {f[FNR] = $1; next} f[FNR] > 0 {printf "%.3f\n", $1 / f[FNR]}' \
			$H/r/floor1.$w $H/r/default.$w
	else
		cat $H/r/default.$w
	fi >$H/r/judged.$w 2>/dev/null
	# a floor that did not run (an empty raw_tp refused: the log says
	# "floor1 ... did not run") leaves the row unjudged, said in the JSON
	if [ "$(wc -l <$H/r/judged.$w)" != "$R" ]; then
		unjudged="$unjudged $w"
		continue
	fi
	least=$(sort -n $H/r/judged.$w | head -1)
	[ $w = getppid ] && awk -v l="${least:-0}" -v g="$GOAL" 'BEGIN {exit !(l > g)}' &&
		over="$over $w $(sort -n $H/r/judged.$w | awk 'NR == 1 {a = $1} {b = $1} END {print a "-" b}')x"
done
goal_json="{\"base\": \"$base\", \"goal\": $GOAL, \"unjudged\": \"${unjudged# }\", \"getppid\": $(stats $H/r/judged.getppid), \"rw512\": $(stats $H/r/judged.rw512)}"
err_json=""
msg="the agent as packaged costs more than ${GOAL}x $base in every round:$over"
# HARM_GAP (kernels.list harmgap): a known gap, reported, not failed
if [ -n "$over" ] && [ -n "${HARM_GAP:-}" ]; then
	err_json=", \"known_gap\": \"$msg\""
elif [ -n "$over" ]; then
	err_json=", \"error\": \"$msg\""
fi
ok=false
[ "$loaded" -gt 0 ] && [ "$complete" = true ] && [ -n "$monsys" ] && [ "${mon_bpfev:-0}" -ge 1 ] &&
	[ "$def_shields" -gt 0 ] && [ -n "$def_guard" ] && ok=true
echo "KSHIELD-CHECK harm {\"ok\": $ok, \"rounds\": $R, \"shields\": $nshields, \"loaded\": $loaded, \"refused\": \"${refused# }\", \"variants\": \"${variants% }\", \"dispatcher\": \"$dispatch\", \"fp_dispatcher\": \"$fpd\", \"fp_links\": \"$fpl\", \"pinned_before\": \"${before% }\", \"getppid\": $(med $H/r/shields.getppid), \"rw512\": $(med $H/r/shields.rw512), \"stat\": $(med $H/r/shields.stat), \"noise\": $(json_mode noise $W), \"modes\": {\"shields\": $(json_mode shields $W), \"monitor\": $(json_mode monitor $W), \"default\": $(json_mode default $W), \"floor1\": $(json_mode floor1 $W)}, \"judged\": $goal_json$err_json, \"default_dispatcher\": \"$def_dispatch\", \"alone\": {$alone_json}, \"monitor\": {\"syscalls_by\": \"${monsys:-?}\", \"bpf_events\": ${mon_bpfev:-0}}, \"default\": {\"shields_loaded\": $def_shields, \"guard\": \"$def_guard\"}, \"seconds\": $(awk "BEGIN {print $(up) - $t0}")}"
tag "KSHIELD-LOG harm:" <$H/err
