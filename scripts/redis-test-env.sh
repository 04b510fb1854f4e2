#!/usr/bin/env bash
# Starts, describes or stops the Redis servers the tests use, on private
# loopback ports in a temporary directory:
#   a standalone redis-server on 127.0.0.1:${RATELIMIT_REDIS_PORT:-16379}
#   a 3-node Redis Cluster (no replicas) on 127.0.0.1:17001-17003
#     (base port ${RATELIMIT_REDIS_CLUSTER_BASE:-17000}); each node also listens
#     on its cluster bus port, its port + 10000 (27001-27003), which must be free
#
#   bash scripts/redis-test-env.sh start   # start (or reuse running) servers, wait until ready
#   eval "$(bash scripts/redis-test-env.sh env)"   # export the addresses the tests read
#   bash scripts/redis-test-env.sh stop    # kill exactly the servers started here
#   bash scripts/redis-test-env.sh status  # exit 0 if all four servers are running
#
# State (pidfiles, cluster configs, logs) lives in ${RATELIMIT_REDIS_DIR}, by
# default /tmp/ratelimit-redis-test-$UID. Nothing is persisted to disk.
set -euo pipefail

dir=${RATELIMIT_REDIS_DIR:-${TMPDIR:-/tmp}/ratelimit-redis-test-$(id -u)}
port=${RATELIMIT_REDIS_PORT:-16379}
base=${RATELIMIT_REDIS_CLUSTER_BASE:-17000}
cluster_ports=("$((base + 1))" "$((base + 2))" "$((base + 3))")

die() { echo "redis-test-env: $*" >&2; exit 1; }

# alive NAME: the server whose pidfile is $dir/NAME.pid is running.
alive() {
  local f="$dir/$1.pid"
  [[ -s $f ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

# start_server NAME PORT [extra redis-server arguments...]
start_server() {
  local name=$1 p=$2
  shift 2
  mkdir -p "$dir/$name"
  redis-server --port "$p" --bind 127.0.0.1 --daemonize yes \
    --pidfile "$dir/$name.pid" --logfile "$dir/$name.log" --dir "$dir/$name" \
    --save '' --appendonly no "$@" ||
    die "could not start $name on port $p (see $dir/$name.log)"
}

# wait_for PORT: until the server answers PING, at most 10 s.
wait_for() {
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(redis-cli -p "$1" ping 2>/dev/null) == PONG ]] && return 0
    sleep 0.1
  done
  die "redis on port $1 did not answer PING within 10 s"
}

cluster_ok() {
  local p
  for p in "${cluster_ports[@]}"; do
    redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
  done
}

start() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
    die "redis-server and redis-cli are required (Debian: apt-get install redis-server)"
  mkdir -p "$dir"
  if alive standalone; then
    echo "redis-test-env: standalone Redis already running on $port"
  else
    start_server standalone "$port"
  fi
  local p fresh=0
  for p in "${cluster_ports[@]}"; do
    if alive "node-$p"; then continue; fi
    rm -f "$dir/node-$p/nodes.conf"
    start_server "node-$p" "$p" --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout 5000
    fresh=1
  done
  wait_for "$port"
  for p in "${cluster_ports[@]}"; do wait_for "$p"; done
  if ((fresh)) && ! cluster_ok; then
    local addrs=()
    for p in "${cluster_ports[@]}"; do addrs+=("127.0.0.1:$p"); done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$dir/cluster-create.log" 2>&1 ||
      die "redis-cli --cluster create failed: $(tail -5 "$dir/cluster-create.log")"
  fi
  local i
  for ((i = 0; i < 300; i++)); do
    cluster_ok && break
    sleep 0.1
  done
  cluster_ok || die "cluster on ports ${cluster_ports[*]} did not reach cluster_state:ok within 30 s"
  echo "redis-test-env: standalone 127.0.0.1:$port, cluster $(IFS=,; echo "${cluster_ports[*]}"), state in $dir"
}

stop() {
  local name pid f i
  for name in standalone "${cluster_ports[@]/#/node-}"; do
    f="$dir/$name.pid"
    [[ -s $f ]] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    fi
    rm -f "$f"
  done
  [[ -d $dir ]] && rm -rf "$dir"
  echo "redis-test-env: stopped"
}

env_vars() {
  local addrs=() p
  for p in "${cluster_ports[@]}"; do addrs+=("127.0.0.1:$p"); done
  echo "export RATELIMIT_REDIS_ADDR=127.0.0.1:$port"
  echo "export RATELIMIT_REDIS_CLUSTER_ADDRS=$(IFS=,; echo "${addrs[*]}")"
}

status() {
  local p
  alive standalone || return 1
  for p in "${cluster_ports[@]}"; do alive "node-$p" || return 1; done
}

case ${1:-} in
  start) start ;;
  status) status ;;
  stop) stop ;;
  env) env_vars ;;
  *) die "usage: $0 start|stop|env|status" ;;
esac
