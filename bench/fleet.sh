#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/fleet.sh - the fleet's two numbers, on a loopback 3-node NATS
# JetStream cluster and PostgreSQL 15 started for the run
# (tests/fleet/cluster.sh):
#
#  1. deploy -> "enforcing" reported by every agent:
#     N=10 real agents (each loads the shield into the kernel under its own
#     bpffs root) and N=1000 control-plane agents (the same agent loop with
#     the kernel load replaced by object verification: sha256 + Ed25519;
#     LABELLED as such), against a baseline measured in the same run: one
#     local `kshield shield load` of the same object. Goal: < 60 s for 1000.
#  2. events/s end to end: a store of M events shipped by the agent's
#     shipper into JetStream while `kshield collect` COPYs them into
#     PostgreSQL, zero loss checked (count and distinct (host, seq) = M);
#     baseline: psql \copy of the same rows (host, seq, ts, kind, JSON)
#     into a table shaped like ks_events, the ceiling. CPU seconds of the
#     agent, NATS, collect and PostgreSQL give CPU per event, which a busy
#     shared machine inflates far less than wall time.
#
#     Events are also measured with FLEET_OLD (an earlier kshield binary:
#     its shipper and collector, same stream and database) for a new/old
#     ratio from the same run.
#
# Env: KSHIELD (binary), KSHIELD_SHIELDS, FLEET_CP (1000), FLEET_REAL (10),
# FLEET_EVENTS (200000), FLEET_OLD (binary), FLEET_PARTS ("deploy events"),
# FLEET_COLLECT_ARGS (for the new collector, e.g. "--workers 1").
set -euo pipefail
cd "$(dirname "$0")/.."
K=${KSHIELD:-$PWD/build/kshield}
SH=${KSHIELD_SHIELDS:-$PWD/build/shields}
CP=${FLEET_CP:-1000}
REAL=${FLEET_REAL:-10}
M=${FLEET_EVENTS:-200000}
OLD=${FLEET_OLD:-}
PARTS=${FLEET_PARTS:-deploy events}
SHIELD=fixture-sockopt   # tests/fixtures: refuses with EPERM on any kernel with cgroup BPF
D=$(mktemp -d /tmp/ks-bench-fleet.XXXXXX)
chmod 755 "$D"
pids=()

cleanup() {
  [ -n "${FLEET_KEEP:-}" ] && cp -r "$D" "$FLEET_KEEP"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for i in $(seq 0 $((REAL - 1))); do
    "$K" --bpffs "/sys/fs/bpf/ks-bfleet-$i" shield unload $SHIELD >/dev/null 2>&1 || true
    rm -rf "/sys/fs/bpf/ks-bfleet-$i"
  done
  "$K" --bpffs /sys/fs/bpf/ks-bfleet-base shield unload $SHIELD >/dev/null 2>&1 || true
  rm -rf /sys/fs/bpf/ks-bfleet-base
  tests/fleet/cluster.sh stop "$D/c" >/dev/null 2>&1 || true
  rm -rf "$D"
}
trap cleanup EXIT

ms() { date +%s%3N; }
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }

tests/fleet/cluster.sh start "$D/c" >/dev/null
# shellcheck disable=SC1091
. "$D/c/env"
mkdir -p "$D/trust"
"$K" shield keygen "$D/signer" >/dev/null
export KSHIELD_FLEET_KEY="$D/signer.key"	# signs the desired records
cp "$D/signer.pub" "$D/trust/"
cp "${KSHIELD_FIXTURES:-$PWD/build/tests/fixtures}/sockopt-shield.bpf.o" "$D/s.bpf.o"
"$K" shield sign "$D/s.bpf.o" --key "$D/signer.key" >/dev/null
"$K" fleet status --nats "$NATS_URLS" >/dev/null	# creates the buckets

if [[ " $PARTS " == *" deploy "* ]]; then
echo "== deploy -> enforcing ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
base=$("$K" --bpffs /sys/fs/bpf/ks-bfleet-base -j shield load "$D/s.bpf.o" | jget '["load_ms"]')
"$K" --bpffs /sys/fs/bpf/ks-bfleet-base shield unload $SHIELD
printf 'baseline: one local shield load                      %8.1f ms\n' "$base"

for i in $(seq 0 $((REAL - 1))); do
  setsid "$K" --bpffs "/sys/fs/bpf/ks-bfleet-$i" fleet agent --nats "$HOST_URLS" --keys "$D/trust" \
    --host "real-$i" --state "$D/state-$i" >"$D/agent-$i.log" 2>&1 &
  pids+=($!)
done
sleep 2
t0=$(ms)
"$K" fleet deploy "$D/s.bpf.o" --hosts 'real-*' --nats "$NATS_URLS" >/dev/null
r=$("$K" -j fleet wait $SHIELD --count "$REAL" --timeout 120 --nats "$NATS_URLS")
t1=$(ms)
real_ms=$(echo "$r" | jget '["deploy_to_last_report_ms"]')
printf 'fleet: %4d real agents enforcing (kernel load)      %8d ms after deploy (wall %d ms), %.1fx one local load\n' \
  "$REAL" "$real_ms" $((t1 - t0)) "$(echo "$real_ms / $base" | bc -l)"
"$K" fleet rollback $SHIELD --nats "$NATS_URLS" >/dev/null
"$K" fleet wait $SHIELD --status unloaded --count "$REAL" --timeout 60 --nats "$NATS_URLS" >/dev/null
for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
pids=()

setsid "$K" fleet agent --control-plane --instances "$CP" --nats "$HOST_URLS" --keys "$D/trust" \
  --host cp >"$D/cp.log" 2>&1 &
pids+=($!)
# Wait until every control-plane agent registered (its watcher is up).
for _ in $(seq 600); do
  n=$("$K" -j fleet hosts --nats "$NATS_URLS" 2>/dev/null | jget '.__len__()' 2>/dev/null || echo 0)
  [ "$n" -ge $((CP + REAL)) ] && break
  sleep 0.2
done
t0=$(ms)
"$K" fleet deploy "$D/s.bpf.o" --hosts 'cp-*' --nats "$NATS_URLS" >/dev/null
r=$("$K" -j fleet wait $SHIELD --count "$CP" --timeout 180 --nats "$NATS_URLS")
t1=$(ms)
cp_ms=$(echo "$r" | jget '["deploy_to_last_report_ms"]')
printf 'fleet: %4d CONTROL-PLANE agents (verify, no kernel load) %8d ms after deploy (wall %d ms), goal < 60000 ms\n' \
  "$CP" "$cp_ms" $((t1 - t0))
printf 'ratio: %d control-plane / %d real agents: %.2fx the time for %dx the agents\n' \
  "$CP" "$REAL" "$(echo "$cp_ms / $real_ms" | bc -l)" $((CP / REAL))
for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
pids=()
fi
[[ " $PARTS " == *" events "* ]] || exit 0

echo "== events end to end into PostgreSQL ($M events, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
sqlite3 "$D/ev.db" "PRAGMA journal_mode=WAL; CREATE TABLE events(ts INTEGER PRIMARY KEY,
  kind TEXT NOT NULL, pid INTEGER, comm TEXT, binary TEXT, args TEXT, detail TEXT);
  WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < $M)
  INSERT INTO events SELECT CAST(strftime('%s','now') AS INTEGER) * 1000000000 + x, 'exec', x,
  'comm' || x, '/usr/bin/true', 'true --flag ' || x, '{\"n\":' || x || '}' FROM c;" >/dev/null
# Baselines: the same events, as the rows the collector writes (host, seq,
# ts, kind, the event as JSON), COPYed by psql from a file: into a plain
# table of text, and into a table shaped like ks_events (jsonb, partitioned,
# the same two indexes): the ceiling for what the collector writes.
sqlite3 -csv "$D/ev.db" "SELECT 'bench', ts, strftime('%Y-%m-%d %H:%M:%f', ts / 1e9, 'unixepoch') || '+00',
  kind, json_object('ts', ts, 'pid', pid, 'comm', comm, 'binary', binary, 'args', args, 'detail', detail)
  FROM events" > "$D/ev.csv"
psql "$PG_CONNINFO" -q <<'SQL'
CREATE TABLE copy_text (host text, seq bigint, ts text, kind text, data text);
CREATE TABLE copy_events (host text NOT NULL, seq bigint NOT NULL, ts timestamptz NOT NULL,
  kind text NOT NULL DEFAULT '', data jsonb NOT NULL, collected_at timestamptz NOT NULL DEFAULT now())
  PARTITION BY RANGE (ts);
CREATE TABLE copy_events_all PARTITION OF copy_events DEFAULT;
CREATE UNIQUE INDEX ON copy_events (host, seq, ts);
CREATE INDEX ON copy_events (kind, ts) WHERE kind NOT IN ('exec', 'exit', 'connect', 'accept', 'listen', 'flow');
SQL
copy_rate() {
  local t0 t1
  t0=$(ms)
  psql "$PG_CONNINFO" -qc "\\copy $1 (host, seq, ts, kind, data) FROM '$D/ev.csv' CSV"
  t1=$(ms)
  echo "$M * 1000 / ($t1 - $t0)" | bc
}
text_rate=$(copy_rate copy_text)
copy_rate=$(copy_rate copy_events)
printf 'baseline: psql \\copy of the same rows, text table   %8d rows/s\n' "$text_rate"
printf 'baseline: psql \\copy into a ks_events-like table   %8d rows/s (the ceiling)\n' "$copy_rate"

# CPU seconds (user + system) used so far by the processes PIDS and their
# children: what a busy shared machine cannot inflate, unlike wall time.
cpu_s() {
  local tick sum=0 p
  tick=$(getconf CLK_TCK)
  for p in "$@"; do
    for q in $p $(pgrep -P "$p" || true); do
      [ -r "/proc/$q/stat" ] || continue
      sum=$((sum + $(awk '{print $14 + $15}' "/proc/$q/stat" 2>/dev/null || echo 0)))
    done
  done
  echo "scale=3; $sum / $tick" | bc
}
nats_pids() { cat "$D"/c/n[123].pid; }
pg_pid() { head -1 "$D/c/pg/data/postmaster.pid"; }

# events_e2e BINARY HOST [COLLECT_ARGS]: a copy of the store shipped by BINARY's agent
# (host HOST) while BINARY's collector writes PostgreSQL; from the agent's
# start to the last row in PostgreSQL. Sets e2e (events/s); fails on loss.
events_e2e() {
  local bin=$1 host=$2 db="$D/ev-$2.db" cpid apid shipped_at=0 n rows distinct t0 t1 pgc last
  cp "$D/ev.db" "$db"
  # Each run its own database, so that neither writes into the other's
  # tables and indexes.
  psql "$PG_CONNINFO" -qc "CREATE DATABASE ev_$host"
  pgc=${PG_CONNINFO/dbname=postgres/dbname=ev_$host}
  # shellcheck disable=SC2086
  "$bin" collect --pg "$pgc" --nats "$NATS_URLS" ${3:-} >"$D/collect-$host.log" 2>&1 &
  cpid=$!
  pids+=($cpid)
  sleep 1
  nats0=$(cpu_s $(nats_pids))
  pg0=$(cpu_s $(pg_pid))
  t0=$(ms)
  setsid "$bin" fleet agent --nats "$NATS_URLS" --keys "$D/trust" --host "$host" --control-plane \
    --store "$db" >"$D/ship-$host.log" 2>&1 &
  apid=$!
  pids+=($apid)
  # Polled cheaply (counting the rows each time would take a share of the
  # CPU being measured): the last event's row, by the unique index, and
  # only then the count (batches may commit out of order).
  last=$(sqlite3 "$db" "SELECT max(ts) FROM events")
  for _ in $(seq 2400); do
    if [ "$shipped_at" = 0 ] && [ "$(sqlite3 "$db" "SELECT upto FROM fleet_shipped" 2>/dev/null || true)" = "$last" ]; then
      shipped_at=$(ms)
    fi
    n=$(psql "$pgc" -Atc "SELECT count(*) FROM ks_events WHERE host = '$host' AND seq = $last" 2>/dev/null || echo 0)
    if [ "$n" -ge 1 ]; then
      n=$(psql "$pgc" -Atc "SELECT count(*) FROM ks_events WHERE host = '$host'")
      [ "$n" -ge "$M" ] && break
    fi
    sleep 0.05
  done
  t1=$(ms)
  nats=$(echo "$(cpu_s $(nats_pids)) - $nats0" | bc)
  pg=$(echo "$(cpu_s $(pg_pid)) - $pg0" | bc)
  ship_cpu=$(cpu_s "$apid")
  coll_cpu=$(cpu_s "$cpid")
  kill "$apid" "$cpid"
  wait "$apid" "$cpid" 2>/dev/null || true
  read -r rows distinct < <(psql "$pgc" -AtF' ' -c \
    "SELECT count(*), count(DISTINCT seq) FROM ks_events WHERE host = '$host'")
  e2e=$(echo "$M * 1000 / ($t1 - $t0)" | bc)
  [ "$shipped_at" != 0 ] && printf '%-8s shipped into JetStream (R3, acked)          %8d events/s\n' "$host" \
    "$(echo "$M * 1000 / ($shipped_at - $t0)" | bc)"
  printf '%-8s end to end store -> JetStream -> PostgreSQL %8d events/s (%.2fx the COPY ceiling)\n' "$host" \
    "$e2e" "$(echo "$e2e / $copy_rate" | bc -l)"
  cpu_us=$(echo "($nats + $pg + $ship_cpu + $coll_cpu) * 1000000 / $M" | bc)
  printf '%-8s CPU per event: %d us (agent %.2f s, NATS %.2f s, collect %.2f s, PostgreSQL %.2f s): %d events/s on %d idle cores\n' \
    "$host" "$cpu_us" "$ship_cpu" "$nats" "$coll_cpu" "$pg" "$(echo "$(nproc) * 1000000 / $cpu_us" | bc)" "$(nproc)"
  printf '%-8s loss check: %d rows, %d distinct of %d events: %s\n' "$host" "$rows" "$distinct" "$M" \
    "$([ "$rows" = "$M" ] && [ "$distinct" = "$M" ] && echo 'none lost, none twice' || echo MISMATCH)"
  [ "$rows" = "$M" ] && [ "$distinct" = "$M" ]
}

# The old collector first: it makes the durable it knows (ack-all), which
# the new one replaces; bound to the new one, it would ack message by message.
if [ -n "$OLD" ]; then
  events_e2e "$OLD" old
  old_e2e=$e2e
  sleep 2
fi
events_e2e "$K" new "${FLEET_COLLECT_ARGS:-}"
[ -n "$OLD" ] && printf 'ratio: new / old end to end: %.2fx\n' "$(echo "$e2e / $old_e2e" | bc -l)"
exit 0
