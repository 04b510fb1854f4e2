#!/usr/bin/env bash
# A bounded soak of ratelimitd, loopback only, not part of CI: 64 clients
# for SOAK_DURATION (5m by default) over SOAK_KEYS (1,000,000) distinct keys,
# first on the memory store, then on one Redis. Every SOAK_EVERY seconds
# (10) it prints the service's resident memory (VmRSS), its goroutines and
# the states the store holds; at the end, the answers by status (any
# "error" fails the run). On Redis it then checks that every key the run
# left has a TTL, and prints Redis's memory per key (MEMORY USAGE) for each
# algorithm after 10 hits, beside envoyproxy/ratelimit's counter for the
# same rule when its binary is present (RATELIMIT_PEER, as for
# scripts/bench-service.sh).
#
#   bash scripts/redis-test-env.sh start   # the Redis on 127.0.0.1:16379
#   bash scripts/soak.sh                   # about 11 minutes
#   SOAK_DURATION=30s bash scripts/soak.sh # a short run
#   SOAK_STORES=redis bash scripts/soak.sh # the Redis half alone
#
# Every process it starts is stopped by its PID on exit.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/service-env.sh"
dur=${SOAK_DURATION:-5m} keys=${SOAK_KEYS:-1000000} every=${SOAK_EVERY:-10} stores=${SOAK_STORES:-memory redis}
rcli() { redis-cli -h "${redis%:*}" -p "${redis##*:}" "$@"; }

# 100 requests a minute per key: at about 50,000 requests/s over 1,000,000
# keys, each key is hit every 20 s or so and stays admitted, and its state
# lives for the run.
cat >"$work/ratelimitd.yaml" <<YAML
policies:
  api: "100/1m;algorithm=fixed_window"
YAML

# sample PID: one line of the service's figures.
sample() {
  local rss gor keys
  rss=$(awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/$1/status")
  gor=$(curl -s 127.0.0.1:18280/metrics | awk '/^go_goroutines / {print $2}')
  keys=$(curl -s 127.0.0.1:18280/metrics | awk '/^ratelimit_memstore_keys\{store="(memory|fallback)"\}/ {s += $2} END {print s + 0}')
  printf '%8s  RSS %6s MiB  goroutines %5s  memory-store states %9s\n' "$(($(date +%s) - t0))s" "$rss" "$gor" "$keys"
}

soak() { # label, ratelimitd args...
  local label=$1
  shift
  echo "== $label: 64 clients, $keys keys, $dur"
  "$work/ratelimitd" -config "$work/ratelimitd.yaml" -http 127.0.0.1:18280 -grpc "" "$@" 2>"$work/ratelimitd.log" &
  local pid=$!
  pids+=("$pid")
  wait_port 127.0.0.1:18280
  t0=$(date +%s)
  "$work/load" -mode http -target 127.0.0.1:18280 -c 64 -keys "$keys" -n 100000000 -duration "$dur" -label "$label" >"$work/load.out" &
  local lp=$!
  pids+=("$lp")
  sample "$pid"
  while kill -0 "$lp" 2>/dev/null; do
    sleep "$every"
    kill -0 "$lp" 2>/dev/null && sample "$pid"
  done
  wait "$lp"
  sample "$pid"
  cat "$work/load.out"
  if grep -q "error" "$work/load.out"; then
    echo "soak: errors in the run" >&2
    exit 1
  fi
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

[[ $stores == *memory* ]] && soak "memory store"
[[ $stores == *redis* ]] || exit 0

if ! rcli ping >/dev/null 2>&1; then
  echo "(no Redis at $redis: bash scripts/redis-test-env.sh start, for the Redis half)"
  exit 0
fi
rcli -n 3 flushdb >/dev/null
soak "one Redis" -redis "redis://$redis/3"
echo "== every key on Redis has a TTL"
# One key in a thousand, at most 200 (awk reads the scan to its end: a
# pipe cut short would fail the script under pipefail).
rcli -n 3 --scan | awk 'NR % 1000 == 1 && n++ < 200' >"$work/sampled"
total=$(rcli -n 3 dbsize)
nottl=0
while read -r k; do
  [[ $(rcli -n 3 pttl "$k") -lt 0 ]] && nottl=$((nottl + 1))
done <"$work/sampled"
echo "$total keys; of $(wc -l <"$work/sampled") sampled across the keyspace, $nottl without a TTL"
[[ $nottl == 0 ]] || exit 1

echo "== Redis memory per key after 10 hits (MEMORY USAGE, bytes)"
rcli -n 4 flushdb >/dev/null
"$work/ratelimitd" -http 127.0.0.1:18280 -grpc "" -redis "redis://$redis/4" 2>"$work/ratelimitd.log" &
pid=$!
pids+=("$pid")
wait_port 127.0.0.1:18280
for alg in gcra token_bucket leaky_bucket fixed_window sliding_window sliding_log; do
  rcli -n 4 flushdb >/dev/null
  for _ in $(seq 1 10); do
    curl -s -o /dev/null -XPOST 127.0.0.1:18280/v1/check -H 'Content-Type: application/json' \
      -d "{\"key\":\"user-42\",\"policies\":[\"1000/1m;algorithm=$alg\"]}"
  done
  for k in $(rcli -n 4 --scan); do
    printf '%-21s %5s  (%s, %s)\n' "$alg" "$(rcli -n 4 memory usage "$k")" "$(rcli -n 4 type "$k")" "$k"
  done
done
kill "$pid"
wait "$pid" 2>/dev/null || true
if [[ -n $peer ]]; then
  mkdir -p "$work/runtime/ratelimit/config"
  cat >"$work/runtime/ratelimit/config/soak.yaml" <<YAML
domain: soak
descriptors:
  - key: user
    rate_limit:
      unit: minute
      requests_per_unit: 1000
YAML
  rcli -n 0 --scan --pattern 'soak_*' | xargs -r rcli -n 0 del >/dev/null
  env -i PATH="$PATH" USE_STATSD=false LOG_LEVEL=error BACKEND_TYPE=redis REDIS_SOCKET_TYPE=tcp REDIS_URL="$redis" \
    RUNTIME_ROOT="$work/runtime" RUNTIME_SUBDIRECTORY=ratelimit RUNTIME_WATCH_ROOT=false \
    HOST=127.0.0.1 PORT=18290 GRPC_HOST=127.0.0.1 GRPC_PORT=18291 DEBUG_HOST=127.0.0.1 DEBUG_PORT=18292 \
    "$peer" >"$work/peer.log" 2>&1 &
  pp=$!
  pids+=("$pp")
  wait_port 127.0.0.1:18290
  for _ in $(seq 1 10); do
    curl -s -o /dev/null -XPOST 127.0.0.1:18290/json -d '{"domain":"soak","descriptors":[{"entries":[{"key":"user","value":"user-42"}]}]}'
  done
  k=$(rcli -n 0 --scan --pattern 'soak_*' | head -1)
  printf '%-15s %5s  (%s, %s)\n' "envoyproxy/ratelimit" "$(rcli -n 0 memory usage "$k")" "$(rcli -n 0 type "$k")" "$k"
  rcli -n 0 del "$k" >/dev/null
else
  echo "(envoyproxy/ratelimit not found: set RATELIMIT_PEER to add its counter)"
fi
