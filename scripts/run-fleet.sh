#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-fleet.sh - a local fleet and its page by one command (make run-fleet):
# a 3-node NATS JetStream cluster and PostgreSQL 15 on loopback
# (tests/fleet/cluster.sh), a fleet signing key, `kshield collect`,
# FLEET_CP control-plane agents (hosts cp-0..), one real agent on this host
# (the monitor, its store, fleet shields loaded into this kernel under its
# own bpffs root, events shipped), a shield deployed with --audit-first,
# and `kshield fleet view` on VIEW_LISTEN.
#
#   run-fleet.sh [DIR]          start, print the page's address, stop on Ctrl-C
#   run-fleet.sh start DIR      start and return; DIR/fleet.env says where
#   run-fleet.sh stop DIR       stop what start started
#
# Env: KSHIELD (build/kshield), KSHIELD_SHIELDS (build/shields), FLEET_CP
# (20), FLEET_REAL (1: the real agent; 0: none), FLEET_SHIELD
# (cve-2026-43500), FLEET_AUDIT_FIRST (10m), VIEW_LISTEN (127.0.0.1:9480).
# The real agent loads BPF: where others share the machine, run this under
# flock /tmp/ks/host.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
K=${KSHIELD:-$PWD/build/kshield}
SH=${KSHIELD_SHIELDS:-$PWD/build/shields}
CP=${FLEET_CP:-20}
REAL=${FLEET_REAL:-1}
SHIELD=${FLEET_SHIELD:-cve-2026-43500}
AF=${FLEET_AUDIT_FIRST:-10m}
LISTEN=${VIEW_LISTEN:-127.0.0.1:9480}

say() { echo "run-fleet: $*" >&2; }
die() { say "$*"; exit 1; }

stop() {
  local d=$1 p
  for f in view collect cp real; do
    [ -f "$d/$f.pid" ] || continue
    p=$(cat "$d/$f.pid")
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    rm -f "$d/$f.pid"
  done
  if [ -f "$d/bpffs" ]; then
    local root
    root=$(cat "$d/bpffs")
    KSHIELD_BPFFS=$root "$K" shield unload "$SHIELD" >/dev/null 2>&1 || true
    rm -rf "$root" "$d/bpffs"
  fi
  tests/fleet/cluster.sh stop "$d/c" >/dev/null 2>&1 || true
}

# bg NAME CMD...: start in its own session, pid in DIR/NAME.pid, log in DIR/NAME.log
bg() {
  local name=$1
  shift
  setsid "$@" >"$D/$name.log" 2>&1 </dev/null &
  echo $! >"$D/$name.pid"
}

start() {
  [ -x "$K" ] || die "no $K: run make first"
  [ -f "$SH/$SHIELD.bpf.o" ] || die "no $SH/$SHIELD.bpf.o: run make first"
  mkdir -p "$D"
  chmod 755 "$D"
  tests/fleet/cluster.sh start "$D/c" >/dev/null || die "the NATS/PostgreSQL cluster did not start ($D/c)"
  # shellcheck disable=SC1091
  . "$D/c/env"
  mkdir -p "$D/trust"
  "$K" shield keygen "$D/signer" >/dev/null
  cp "$D/signer.pub" "$D/trust/"
  cp "$SH/$SHIELD.bpf.o" "$D/$SHIELD.bpf.o"
  "$K" shield sign "$D/$SHIELD.bpf.o" --key "$D/signer.key" >/dev/null
  "$K" fleet status --nats "$NATS_URLS" >/dev/null	# the operator makes the buckets
  "$K" collect --pg "$PG_CONNINFO" --drain --nats "$NATS_URLS" >/dev/null	# ks_events
  bg collect "$K" collect --pg "$PG_CONNINFO" --nats "$NATS_URLS"
  if [ "$CP" -gt 0 ]; then
    bg cp "$K" fleet agent --control-plane --instances "$CP" --host cp --nats "$HOST_URLS" --keys "$D/trust"
  fi
  if [ "$REAL" = 1 ]; then
    local root=/sys/fs/bpf/ks-run-fleet-$$
    echo "$root" >"$D/bpffs"
    mkdir -p "$D/shields.d"	# fleet shields only: nothing from a shields directory
    bg real env KSHIELD_BPFFS="$root" "$K" agent --store "$D/events.db" --shields-dir "$D/shields.d" \
      --fleet "$HOST_URLS" --keys "$D/trust" --state "$D/state" --host "$(hostname)"
  fi
  # Every agent registered before the deploy counts as targeted at once.
  local want=$((CP + (REAL == 1 ? 1 : 0))) n=0
  for _ in $(seq 300); do
    n=$("$K" -j fleet hosts --nats "$NATS_URLS" 2>/dev/null | jq length 2>/dev/null || echo 0)
    [ "$n" -ge "$want" ] && break
    sleep 0.2
  done
  [ "$n" -ge "$want" ] || die "$n of $want agents registered in 60 s (logs in $D)"
  if [ -n "$SHIELD" ] && [ "$AF" != none ]; then
    "$K" fleet deploy "$D/$SHIELD.bpf.o" --key "$D/signer.key" --audit-first "$AF" \
      --nats "$NATS_URLS" >"$D/deploy.log" 2>&1 || die "deploy failed: $(tail -1 "$D/deploy.log")"
  fi
  bg view "$K" fleet view --pg "$PG_CONNINFO" --listen "$LISTEN" --nats "$NATS_URLS"
  for _ in $(seq 100); do grep -q "fleet view:" "$D/view.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "fleet view:" "$D/view.log" || die "fleet view did not start: $(tail -1 "$D/view.log")"
  {
    cat "$D/c/env"
    echo "VIEW_URL=http://$LISTEN/"
    echo "SIGNER_KEY=$D/signer.key"
    echo "SHIELD=$SHIELD"
    echo "SHIELD_OBJ=$D/$SHIELD.bpf.o"
    echo "STORE=$D/events.db"
    echo "HOSTNAME=$(hostname)"
  } >"$D/fleet.env"
}

case "${1:-}" in
start) D=${2:?usage: run-fleet.sh start DIR}; start ;;
stop) D=${2:?usage: run-fleet.sh stop DIR}; stop "$D" ;;
*)
  D=${1:-/tmp/ks-run-fleet}
  trap 'stop "$D"' EXIT
  start
  say "the fleet page: http://$LISTEN/  ($CP control-plane agents, real agent: $REAL, $SHIELD audit-first $AF)"
  say "NATS and PostgreSQL: $D/fleet.env; Ctrl-C stops everything"
  while sleep 3600; do :; done
  ;;
esac
