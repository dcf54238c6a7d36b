#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rated.sh - the rated load (issue 28): the highest sustained event rate the
# agent takes in its default configuration with nothing lost in the ring
# buffer, on this machine. The load (bench/load.sh) is half execs, half
# loopback connections; the rate steps up (x STEP, from START) for SECS
# seconds each until the pinned loss counters (ks_lost, `kshield stats`)
# move or the load itself can no longer keep its pace (the machine is
# then the limit, not the agent: said so). Each step prints the target, the
# events the agent received a second (the host's background included),
# stored, lost, and whether the load kept its pace; the last line is the
# rated figure. Run it as root under `flock /tmp/kshield-host.lock`.
#
# Knobs: START (2000), STEP (1.5), SECS (20), MAX (200000), EXEC_PROCS (2),
# EXEC_SHARE (0.5: the share of events from execs),
# KSHIELD_BPFFS (/sys/fs/bpf/ks-bench-rated-<pid>).
set -uo pipefail
cd "$(dirname "$0")/.."
export KSHIELD_BPFFS=${KSHIELD_BPFFS:-/sys/fs/bpf/ks-bench-rated-$$}
START=${START:-2000}
STEP=${STEP:-1.5}
SECS=${SECS:-20}
MAX=${MAX:-200000}
DIR=$(mktemp -d /var/tmp/ks-bench-rated.XXXXXX)
STORE=$DIR/events.db
. bench/load.sh

cleanup() { load_kill; agent_stop; rm -rf "$KSHIELD_BPFFS" "$DIR"; }
trap cleanup EXIT

rm -rf "$KSHIELD_BPFFS"
agent_start
echo "rated load: $SECS s a step, ${EXEC_SHARE:-0.5} of the events from execs (exec+exit), the rest from connects (connect+accept), default config"
printf "%8s %10s %10s %10s %8s %8s %6s %s\n" target recv/s stored/s unstored lost wall agent paced
best=0 best_recv=0 rate=$START why="reached MAX=$MAX"
while awk -v r="$rate" -v m="$MAX" 'BEGIN {exit !(r <= m)}'; do
	read -r r0 s0 u0 l0 <<< "$(stats)"
	c0=$(cpu_ticks "$AGENT")
	load_start "$rate" "$SECS"
	load_wait
	wall=$WALL
	sleep 2		# the agent reads what is left (the losses are counted at write)
	read -r r1 s1 u1 l1 <<< "$(stats)"
	# the agent's CPU over the step (and its 2 s tail), % of one core
	cpu=$(awk -v a="$c0" -v b="$(cpu_ticks "$AGENT")" -v hz="$(getconf CLK_TCK)" -v s="$SECS" \
		'BEGIN {printf "%.1f%%", (b - a) * 100 / hz / (s + 2)}')
	# the load kept its pace when it took at most 5% longer than SECS
	paced=$(awk -v w="$wall" -v s="$SECS" 'BEGIN {print (w <= s * 1.05) ? "yes" : "no"}')
	recv=$(( (r1 - r0) / SECS ))
	printf "%8d %10d %10d %10d %8d %8.1f %6s %s\n" "$rate" "$recv" $(( (s1 - s0) / SECS )) \
		$((u1 - u0)) $((l1 - l0)) "$wall" "$cpu" "$paced"
	if [ $((l1 - l0)) -gt 0 ]; then why="losses at $rate"; break; fi
	if [ "$paced" = no ]; then why="the load could not keep $rate/s (the machine's limit, not the agent's)"; break; fi
	best=$rate best_recv=$recv
	rate=$(awk -v r="$rate" -v s="$STEP" 'BEGIN {printf "%d", r * s}')
done
agent_stop
echo "stopped at: $why"
echo "rated: $best events/s target ($best_recv/s received with the host's background), 0 lost"
