#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cluster.sh - the fleet tests' own servers, on loopback only: a 3-node NATS
# JetStream cluster (unique server_name, one cluster.name, routes on
# 127.0.0.1, separate ports and store dirs) and a PostgreSQL 15 instance
# (initdb into DIR as the postgres user, pg_ctl on a loopback port).
#
#   cluster.sh start DIR [BASEPORT]   start everything; writes DIR/env
#   cluster.sh stop DIR               stop everything (DIR stays)
#   cluster.sh nats-stop DIR N...     kill nodes (1..3) / nats-start DIR N...
#   cluster.sh pg-stop DIR            stop PostgreSQL   / pg-start DIR
#
# NATS runs with one account and two users (roles), as a fleet should:
#   admin  the operator's commands (deploy, promote, rollback, keys, collect):
#          everything;
#   host   the agents: read the desired-state and objects buckets, write
#          their status and audit hits, publish events. Writing desired
#          state, objects, or any stream's configuration is refused by the
#          server ("Permissions Violation").
# DIR/env holds NATS_URLS (all three nodes, admin credentials), HOST_URLS
# (the same nodes, host credentials) and PG_CONNINFO.
set -euo pipefail

cmd=${1:?usage: cluster.sh start|stop|nats-stop|nats-start|pg-stop|pg-start DIR}
dir=${2:?DIR}
PGBIN=/usr/lib/postgresql/15/bin

nats_start() {
  local i=$1
  # shellcheck disable=SC1091
  . "$dir/env"
  setsid nats-server -c "$dir/n$i.conf" >"$dir/n$i.log" 2>&1 < /dev/null &
  echo $! > "$dir/n$i.pid"
}

nats_stop() {
  local i=$1 pid
  [ -f "$dir/n$i.pid" ] || return 0
  pid=$(cat "$dir/n$i.pid")
  kill -KILL "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -f "$dir/n$i.pid"
}

# JetStream is usable once a node's /healthz says ok (meta leader known).
wait_healthy() {
  local port=$1 reply
  for _ in $(seq 200); do
    reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3 && cat <&3) 2>/dev/null || true)
    case "$reply" in *'"ok"'*) return 0 ;; esac
    sleep 0.1
  done
  echo "cluster.sh: node on http port $port never became healthy" >&2
  return 1
}

wait_port() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "cluster.sh: port $1 did not open" >&2
  return 1
}

pg() { su postgres -s /bin/sh -c "$*"; }

case "$cmd" in
start)
  base=${3:-$(( 20000 + ($$ % 2500) * 16 ))}
  mkdir -p "$dir"
  chmod 755 "$dir"
  routes=""
  for i in 1 2 3; do routes="$routes nats-route://127.0.0.1:$((base + 3 + i))"; done
  admin_pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  host_pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  # What an agent may do, subject by subject (nats-server 2.9, libnats 3.4):
  # bind buckets (STREAM.INFO), read desired/objects (DIRECT.GET or
  # MSG.GET), watch desired and audit (ordered consumers: CONSUMER.CREATE,
  # flow control replies on \$JS.FC), put status/audit values, publish
  # events (and create the events stream when missing).
  cat > "$dir/accounts.conf" <<CONF
accounts {
  KSHIELD {
    jetstream: enabled
    users: [
      { user: admin, password: "$admin_pw" }
      { user: host, password: "$host_pw", permissions: {
          publish: { allow: [
            "\$JS.API.INFO", "\$JS.API.STREAM.NAMES",
            "\$JS.API.STREAM.INFO.KV_kshield_desired", "\$JS.API.STREAM.INFO.KV_kshield_objects",
            "\$JS.API.STREAM.INFO.KV_kshield_status", "\$JS.API.STREAM.INFO.KV_kshield_audit",
            "\$JS.API.STREAM.INFO.KSHIELD_EVENTS", "\$JS.API.STREAM.CREATE.KSHIELD_EVENTS",
            "\$JS.API.DIRECT.GET.KV_kshield_desired.>", "\$JS.API.DIRECT.GET.KV_kshield_objects.>",
            "\$JS.API.DIRECT.GET.KV_kshield_desired", "\$JS.API.DIRECT.GET.KV_kshield_objects",
            "\$JS.API.STREAM.MSG.GET.KV_kshield_desired", "\$JS.API.STREAM.MSG.GET.KV_kshield_objects",
            "\$JS.API.CONSUMER.CREATE.KV_kshield_desired", "\$JS.API.CONSUMER.CREATE.KV_kshield_desired.>",
            "\$JS.API.CONSUMER.CREATE.KV_kshield_audit", "\$JS.API.CONSUMER.CREATE.KV_kshield_audit.>",
            "\$JS.API.CONSUMER.DELETE.KV_kshield_desired.>", "\$JS.API.CONSUMER.DELETE.KV_kshield_audit.>",
            "\$JS.API.CONSUMER.INFO.KV_kshield_desired.>", "\$JS.API.CONSUMER.INFO.KV_kshield_audit.>",
            "\$JS.FC.KV_kshield_desired.>", "\$JS.FC.KV_kshield_audit.>",
            "\$KV.kshield_status.>", "\$KV.kshield_audit.>",
            "kshield.events.>"
          ] }
          subscribe: { allow: [ "_INBOX.>" ] }
      } }
    ]
  }
}
CONF
  for i in 1 2 3; do
    mkdir -p "$dir/js$i"
    cat > "$dir/n$i.conf" <<CONF
server_name: ks-n$i
listen: 127.0.0.1:$((base + i))
http: 127.0.0.1:$((base + 7 + i))
include ./accounts.conf
jetstream { store_dir: "$dir/js$i", max_memory_store: 256MB, max_file_store: 4GB }
cluster {
  name: kshield-test
  listen: 127.0.0.1:$((base + 3 + i))
  routes: [$(echo $routes | sed 's/ /, /g')]
}
CONF
  done
  nodes() { local u=$1 p=$2; echo "nats://$u:$p@127.0.0.1:$((base + 1)),nats://$u:$p@127.0.0.1:$((base + 2)),nats://$u:$p@127.0.0.1:$((base + 3))"; }
  pgport=$((base + 7))
  printf 'NATS_URLS=%s\nHOST_URLS=%s\nPG_PORT=%s\nPG_CONNINFO="host=127.0.0.1 port=%s user=postgres dbname=postgres"\nBASE=%s\n' \
    "$(nodes admin "$admin_pw")" "$(nodes host "$host_pw")" "$pgport" "$pgport" "$base" > "$dir/env"
  chmod 600 "$dir/env"
  for i in 1 2 3; do nats_start $i; done
  for i in 1 2 3; do wait_port $((base + i)); done
  for i in 1 2 3; do wait_healthy $((base + 7 + i)); done

  mkdir -p "$dir/pg"
  chown postgres "$dir/pg"
  pg "$PGBIN/initdb -D '$dir/pg/data' -A trust -U postgres --no-sync >'$dir/pg/initdb.log' 2>&1"
  pg "$PGBIN/pg_ctl -D '$dir/pg/data' -l '$dir/pg/log' -w -o \"-p $pgport -k '$dir/pg' -c listen_addresses=127.0.0.1 -c fsync=off\" start >/dev/null"
  echo "$dir/env"
  ;;
stop)
  for i in 1 2 3; do nats_stop $i; done
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    pg "$PGBIN/pg_ctl -D '$dir/pg/data' -m immediate -w stop >/dev/null 2>&1" || true
  fi
  ;;
nats-stop)
  shift 2
  for i in "${@:?N}"; do nats_stop "$i"; done
  ;;
nats-start)
  # Several nodes at once: a node alone is never healthy without quorum.
  shift 2
  for i in "${@:?N}"; do nats_start "$i"; done
  . "$dir/env"
  for i in "$@"; do wait_port $((BASE + i)); done
  for i in "$@"; do wait_healthy $((BASE + 7 + i)); done
  ;;
pg-stop)
  pg "$PGBIN/pg_ctl -D '$dir/pg/data' -m fast -w stop >/dev/null"
  ;;
pg-start)
  . "$dir/env"
  pg "$PGBIN/pg_ctl -D '$dir/pg/data' -l '$dir/pg/log' -w -o \"-p $PG_PORT -k '$dir/pg' -c listen_addresses=127.0.0.1 -c fsync=off\" start >/dev/null"
  ;;
*) echo "cluster.sh: unknown command $cmd" >&2; exit 2 ;;
esac
