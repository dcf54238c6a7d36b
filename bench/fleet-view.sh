#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/fleet-view.sh - the fleet page at fleet size, on a loopback 3-node
# NATS cluster and PostgreSQL 15 started for the run (tests/fleet/cluster.sh):
#
#  1. deploy to N control-plane agents (`fleet agent --control-plane
#     --instances N`, hosts cp-0..: the agent loop with the kernel load
#     replaced by object verification) until all enforce; then a second
#     version with --audit-first AF until all enforce again.
#  2. PostgreSQL loaded with VIEW_EVENTS events of VIEW_HOSTS hosts (the same
#     cp-N names) over the last 7 days (generate_series, into the
#     collector's own ks_events and day partitions; 1% shield hits, each
#     16,384 events' hits after the rest as the collector writes a batch,
#     rolled up by ks_events' trigger as the collector's are): the load
#     time and rows/s.
#  3. `kshield fleet view` over both: each API's time (curl), the first
#     call and the median of VIEW_RUNS (the view keeps the buckets in
#     memory through KV watchers: no call reads them whole).
#
# Env: KSHIELD, KSHIELD_SHIELDS, FLEET_CP (10000), FLEET_CP_PER (1000 agents a
# process), VIEW_HOSTS (= FLEET_CP),
# VIEW_EVENTS (10000000), VIEW_RUNS (3), FLEET_AF (30s), PARTS ("deploy
# load view"), FLEET_KEEP (DIR: keep the run's files).
# Run it alone: it takes both cores for minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
K=${KSHIELD:-$PWD/build/kshield}
SH=${KSHIELD_SHIELDS:-$PWD/build/shields}
CP=${FLEET_CP:-10000}
H=${VIEW_HOSTS:-$CP}
M=${VIEW_EVENTS:-10000000}
RUNS=${VIEW_RUNS:-3}
PER=${FLEET_CP_PER:-1000}
# Each agent's watcher is an ordered consumer, made again every --resync
# seconds (30 by default): 10,000 of them remade every 30 s is 333 consumer
# creations a second, which the 3 nodes never catch up with here.
CP_ARGS=${FLEET_CP_ARGS:---resync 3600}
REG_S=${FLEET_REG_S:-900}	# how long the agents may take to register
AF=${FLEET_AF:-30s}
PARTS=${PARTS:-deploy load view}
SHIELD=cve-2026-43500
D=$(mktemp -d /tmp/ks-bench-view.XXXXXX)
chmod 755 "$D"
pids=()

cleanup() {
  [ -n "${FLEET_KEEP:-}" ] && cp -r "$D" "$FLEET_KEEP"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  tests/fleet/cluster.sh stop "$D/c" >/dev/null 2>&1 || true
  rm -rf "$D"
}
trap cleanup EXIT
ms() { date +%s%3N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

tests/fleet/cluster.sh start "$D/c" >/dev/null
# shellcheck disable=SC1091
. "$D/c/env"
mkdir -p "$D/trust"
"$K" shield keygen "$D/signer" >/dev/null
export KSHIELD_FLEET_KEY="$D/signer.key"
cp "$D/signer.pub" "$D/trust/"
cp "$SH/$SHIELD.bpf.o" "$D/s.bpf.o"
"$K" shield sign "$D/s.bpf.o" --key "$D/signer.key" >/dev/null
"$K" fleet status --nats "$NATS_URLS" >/dev/null
"$K" collect --pg "$PG_CONNINFO" --drain --nats "$NATS_URLS" >/dev/null	# ks_events and its indexes
echo "== $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB, load average $(load) at the start"

if [[ " $PARTS " == *" deploy "* ]]; then
  t0=$(ms)
  # PER agents a process (hosts cpK-0..): one process of 10,000 threads
  # corrupts libnats 3.4.1's heap (concurrent js_AddConsumer, about 2,900
  # watchers in: "malloc(): unaligned fastbin chunk"); 1,000 a process work.
  for ((k = 0; k * PER < CP; k++)); do
    n=$((CP - k * PER < PER ? CP - k * PER : PER))
    setsid "$K" fleet agent --control-plane --instances "$n" --nats "$HOST_URLS" --keys "$D/trust" \
      --host "cp$k" $CP_ARGS >"$D/cp$k.log" 2>&1 &
    pids+=($!)
  done
  n=0
  while [ $(($(ms) - t0)) -lt $((REG_S * 1000)) ]; do
    n=$("$K" -j fleet hosts --nats "$NATS_URLS" 2>/dev/null | jq 'length? // 0' 2>/dev/null || echo 0)
    [ "$n" -ge "$CP" ] && break
    sleep 5
  done
  printf 'agents: %d of %d control-plane agents registered in %d ms (load %s)\n' "$n" "$CP" $(($(ms) - t0)) "$(load)"
  [ "$n" -ge "$CP" ] || { echo "not every agent registered: the limit is below $CP"; exit 1; }
  t0=$(ms)
  "$K" fleet deploy "$D/s.bpf.o" --nats "$NATS_URLS" >/dev/null
  r=$("$K" -j fleet wait $SHIELD --count "$CP" --timeout 1200 --nats "$NATS_URLS") || { echo "deploy: $r"; exit 1; }
  printf 'deploy: %d control-plane agents enforcing %d ms after deploy (wall %d ms; load %s)\n' "$CP" \
    "$(echo "$r" | jq .deploy_to_last_report_ms)" $(($(ms) - t0)) "$(load)"
  # a new version, audit first: audit everywhere, then enforce after AF
  cp "$D/s.bpf.o" "$D/s2.bpf.o"
  printf 'v2' >>"$D/s2.bpf.o"	# another sha256: a new object to fetch and verify
  "$K" shield sign "$D/s2.bpf.o" --key "$D/signer.key" >/dev/null
  t0=$(ms)
  "$K" fleet deploy "$D/s2.bpf.o" --audit-first "$AF" --nats "$NATS_URLS" >/dev/null
  # (no wait for "all auditing": the first hosts may enforce before the last audits)
  r=$("$K" -j fleet wait $SHIELD --count "$CP" --timeout 1200 --nats "$NATS_URLS") || { echo "audit-first: $r"; exit 1; }
  printf 'audit-first: %d enforcing %d ms after deploy (wall %d ms, the quiet period %s included; load %s)\n' \
    "$CP" "$(echo "$r" | jq .deploy_to_last_report_ms)" $(($(ms) - t0)) "$AF" "$(load)"
  echo "nats: $(du -sh "$D/c" | cut -f1) on disk; agents' RSS $(ps -o rss= -p "${pids[@]}" | awk '{s += $1} END {printf "%.0f MB", s/1024}') in ${#pids[@]} processes"
fi

# More hosts for the page than agents ran: the rest written into the
# status bucket as agents write them (_host.<host>, <shield>.<host>:
# enforcing the current deployment; agent "synthetic"), by raw NATS
# publishes on one connection (tests/fleet/kv-put-raw.sh's way).
if [ "$H" -gt "$CP" ] && [[ " $PARTS " == *" view "* ]]; then
  t0=$(ms)
  sum=$("$K" -j fleet status $SHIELD --nats "$NATS_URLS" | jq -c '.[0] | {sha256, deployed_at}')
  url=${NATS_URLS%%,*}; hp=${url#nats://}; cr=${hp%@*}; hp=${hp#*@}
  awk -v from="$CP" -v to="$H" -v per="$PER" -v now="$(ms)" -v shield=$SHIELD \
      -v sha="$(echo "$sum" | jq -r .sha256)" -v dep="$(echo "$sum" | jq -r .deployed_at)" 'BEGIN {
    for (i = from; i < to; i++) {
      h = "cp" int(i / per) "-" (i % per)
      v = "{\"host\":\"" h "\",\"groups\":\"\",\"kernel\":false,\"release\":\"6.1.0-47-cloud-amd64\",\"arch\":\"x86_64\",\"agent\":\"synthetic\",\"at\":" now "}"
      printf "PUB $KV.kshield_status._host.%s %d\r\n%s\r\n", h, length(v), v
      v = "{\"host\":\"" h "\",\"shield\":\"" shield "\",\"sha256\":\"" sha "\",\"status\":\"enforcing\",\"mode\":\"enforce\",\"variant\":\"verified-only\",\"hits\":0,\"refused\":0,\"audited\":0,\"killed\":0,\"error\":\"\",\"kernel\":false,\"groups\":\"\",\"deployed_at\":" dep ",\"gate\":\"\",\"gate_why\":\"\",\"promoted\":false,\"at\":" now "}"
      printf "PUB $KV.kshield_status.%s.%s %d\r\n%s\r\n", shield, h, length(v), v
    } }' > "$D/pad.txt"
  exec 3<>"/dev/tcp/${hp%:*}/${hp#*:}"
  IFS= read -r _ <&3
  printf 'CONNECT {"verbose":false,"pedantic":false,"user":"%s","pass":"%s"}\r\n' "${cr%%:*}" "${cr#*:}" >&3
  cat "$D/pad.txt" >&3
  printf 'PING\r\n' >&3
  while IFS= read -r line <&3; do case "$line" in PONG*) break ;; -ERR*) echo "nats: $line"; break ;; esac; done
  exec 3<&-
  printf 'pad: %d more hosts written into kshield_status (%d entries) in %d ms\n' $((H - CP)) $((2 * (H - CP))) $(($(ms) - t0))
fi

if [[ " $PARTS " == *" load "* ]]; then
  t0=$(ms)
  psql "$PG_CONNINFO" -q -v ON_ERROR_STOP=1 <<SQL
DO \$\$ DECLARE d date; BEGIN
  FOR d IN SELECT generate_series((now() - interval '8 days')::date, now()::date, '1 day')::date LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS ks_events_%s PARTITION OF ks_events FOR VALUES FROM (%L) TO (%L)',
                   to_char(d, 'YYYYMMDD'), d || ' 00:00:00+00', (d + 1) || ' 00:00:00+00');
  END LOOP; END \$\$;
SQL
  chunk=1000000
  for ((c0 = 0; c0 < M; c0 += chunk)); do
    c1=$((c0 + chunk < M ? c0 + chunk : M))
    psql "$PG_CONNINFO" -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO ks_events (host, seq, ts, kind, data)
SELECT 'cp' || ((i % $H) / $PER) || '-' || ((i % $H) % $PER), i / $H, t, k,
  CASE k
  WHEN 'exec' THEN jsonb_build_object('ts', ns, 'pid', 1000 + i % 30000, 'ppid', 1000 + (i / 7) % 30000, 'uid', 1000,
    'comm', 'proc' || (i % 97), 'exec_id', i, 'binary', '/usr/bin/proc' || (i % 97), 'args', 'proc' || (i % 97) || ' --run ' || i)
  WHEN 'shield' THEN jsonb_build_object('ts', ns, 'pid', 1000 + i % 30000, 'comm', 'exploit' || (i % 7), 'exec_id', i - 100,
    'shield', (ARRAY['$SHIELD', 'cve-2026-31431', 'cve-2022-0847', 'userns-policy'])[1 + (i / 100) % 4],
    'verdict', (ARRAY['refused', 'audited', 'killed'])[1 + (i / 400) % 3],
    'detail', '{"hook":"sys_enter_socket","variant":"tp","mode":"enforce","args":[33,524290,0,0]}')
  ELSE jsonb_build_object('ts', ns, 'pid', 1000 + i % 30000, 'comm', 'proc' || (i % 97), 'laddr', '10.0.0.1',
    'lport', 40000 + i % 20000, 'raddr', '10.1.' || (i % 250) || '.' || (i % 199), 'rport', 443) END
FROM (SELECT i, ts0 + (i::float8 / $M) * interval '7 days' - interval '1 minute' AS t,
        (extract(epoch FROM ts0 + (i::float8 / $M) * interval '7 days') * 1e9)::bigint AS ns,
        CASE WHEN i % 100 < 40 THEN 'exec' WHEN i % 100 < 70 THEN 'exit' WHEN i % 100 < 85 THEN 'connect'
             WHEN i % 100 < 99 THEN 'flow' ELSE 'shield' END AS k
      FROM generate_series($c0, $c1 - 1) i, (SELECT now() - interval '7 days' AS ts0) z
      ORDER BY i / 16384, i % 100 = 99, i) g;
SQL
    printf '  %d of %d events (%d s)\r' "$c1" "$M" $((($(ms) - t0) / 1000))
  done
  psql "$PG_CONNINFO" -qc "ANALYZE ks_events" -c "ANALYZE ks_hits_day" -c "ANALYZE ks_hits_hour"
  t1=$(ms)
  printf 'load: %d events of %d hosts in %d ms, %d rows/s (load %s); %s on disk\n' "$M" "$H" $((t1 - t0)) \
    $((M * 1000 / (t1 - t0))) "$(load)" "$(psql "$PG_CONNINFO" -Atc "SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'ks_events'::regclass")"
fi

if [[ " $PARTS " == *" view "* ]]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  setsid "$K" fleet view --pg "$PG_CONNINFO" --listen "127.0.0.1:$port" --nats "$NATS_URLS" >"$D/view.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q "fleet view:" "$D/view.log" && break; sleep 0.1; done
  echo "== the page's API, $H hosts in NATS and PostgreSQL, $M events (load $(load))"
  for api in coverage "shield?name=$SHIELD" "host?name=cp4-242" rollouts hosts "hosts?name=cp4-24*" "hunt?name=$SHIELD"; do
    times=()
    for _ in $(seq "$RUNS"); do
      sleep 1
      times+=("$(curl -s -o "$D/out.json" -w '%{time_total}' "http://127.0.0.1:$port/api/$api")")
    done
    sorted=$(printf '%s\n' "${times[@]}" | sort -n)
    printf '  /api/%-28s first %6.0f ms, median %6.0f ms, max %6.0f ms  (%s bytes; %s)\n' "$api" \
      "$(echo "${times[0]} * 1000" | bc)" "$(echo "$(echo "$sorted" | sed -n "$(((RUNS + 1) / 2))p") * 1000" | bc)" \
      "$(echo "$(echo "$sorted" | tail -1) * 1000" | bc)" "$(stat -c %s "$D/out.json")" \
      "$(jq -c 'if .error then "error: " + .error else {took_ms} end' "$D/out.json")"
  done
  # the plans of the PostgreSQL queries, for the record
  psql "$PG_CONNINFO" -At <<SQL > "$D/plans.txt"
EXPLAIN (ANALYZE, COSTS OFF) SELECT shield, verdict, sum(hits), count(DISTINCT host), max(last_ts) FROM ks_hits_day GROUP BY GROUPING SETS ((shield, verdict), (shield));
EXPLAIN (ANALYZE, COSTS OFF) SELECT host, verdict, sum(hits) FROM ks_hits_day WHERE shield = '$SHIELD' GROUP BY 1, 2;
EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM ks_events WHERE host = 'cp4-242' AND kind = 'exec' ORDER BY seq DESC LIMIT 100;
SQL
  grep -E "Execution Time|Index|Seq Scan" "$D/plans.txt" | sort | uniq -c | sort -rn | head -12
  # the rollups the page counts against the rows (after the timings: this
  # reads every hit row)
  psql "$PG_CONNINFO" -At <<SQL
SELECT 'rollups: ' || (SELECT count(*) FROM ks_hits_day) || ' day rows, ' || (SELECT count(*) FROM ks_hits_hour)
  || ' hour rows; hits ' || (SELECT sum(hits) FROM ks_hits_day) || ' rolled up, '
  || (SELECT count(*) FROM ks_events WHERE kind = 'shield') || ' rows';
SQL
fi
echo "== load average $(load) at the end"
