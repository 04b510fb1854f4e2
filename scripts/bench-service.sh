#!/usr/bin/env bash
# Load-tests ratelimitd, and envoyproxy/ratelimit beside it when its binary
# is present, on loopback, with the same rule and the same Redis, and prints
# throughput and p50/p99 per run, then a flood of denied requests on one key
# with and without each service's cache of denials. Not part of CI: it takes
# about three minutes.
#
#   bash scripts/redis-test-env.sh start      # the Redis on 127.0.0.1:16379
#   bash scripts/bench-service.sh             # RATELIMIT_PEER=/path/to/service_cmd for the comparison
#                                             # ROUNDS=5: five interleaved pairs per protocol on Redis (2)
#                                             # LOAD_CLIENT=std: net/http's and grpc-go's clients
#
# envoyproxy/ratelimit builds with:
#   GOBIN=/tmp/peers go install github.com/envoyproxy/ratelimit/src/service_cmd@v1.4.1-0.20260122083618-3fb702589d36
# Every process this script starts is stopped by its PID on exit. Each load
# run is bounded (LOAD_N requests or LOAD_DURATION, 64 clients by default;
# LOAD_RATE, 25,000 by default, is the pace of the paced runs).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/service-env.sh"
conc=${LOAD_C:-64} n=${LOAD_N:-200000} dur=${LOAD_DURATION:-10s}

# The same rule everywhere: 1,000 requests per second per user, 1,000 users,
# so that the load is checked, mostly admitted, and denied now and then.
cat >"$work/ratelimitd.yaml" <<YAML
policies:
  api: "1000/1s;algorithm=fixed_window"
forward_auth:
  edge: # what Caddy's forward_auth asks; the load tool's -mode forward
    trusted_proxies: ["127.0.0.1"]
    rules:
      "/": {policies: [api]}
envoy:
  files: ["load.yaml"]
YAML
cat >"$work/load.yaml" <<YAML
domain: load
descriptors:
  - key: user
    rate_limit:
      unit: second
      requests_per_unit: 1000
YAML
mkdir -p "$work/runtime/ratelimit/config"
cp "$work/load.yaml" "$work/runtime/ratelimit/config/load.yaml"

load() { "$work/load" -c "$conc" -n "$n" -duration "$dur" -client "${LOAD_CLIENT:-raw}" "$@"; }

# The CPU time, in clock ticks, a process has used so far.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The CPU time, in clock ticks, the finished children of the shell PID (the
# load generator among them) have used so far.
child_ticks() { awk '{print $16 + $17}' "/proc/$1/stat"; }
# The CPU seconds the Redis server has used so far.
redis_cpu() { redis-cli -h "${redis%:*}" -p "${redis##*:}" info cpu 2>/dev/null | awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {printf "%.3f", s}'; }
# The script calls (EVALSHA and EVAL) the Redis server has run so far.
redis_scripts() { redis-cli -h "${redis%:*}" -p "${redis##*:}" info commandstats 2>/dev/null | awk -F'[:=,]' '/^cmdstat_eval(sha)?:/ {s += $3} END {print s + 0}'; }
hz=$(getconf CLK_TCK)
# measured PID args...: one load run, with the CPU the server (PID), the
# Redis and the load generator spent per request, and the requests per
# script call when the server sent any. On a shared, noisy host throughput
# moves from one run to the next; the CPU per request moves much less. On
# two cores the three processes share the CPU, so when the run is CPU-bound
# the throughput of two services compares as the inverse of their sums.
measured() {
  local pid=$1 self=$BASHPID t0 c0 r0 s0 out
  shift
  t0=$(ticks "$pid") c0=$(child_ticks "$self") r0=$(redis_cpu) s0=$(redis_scripts)
  out=$(load "$@")
  awk -v line="$out" -v t="$(( $(ticks "$pid") - t0 ))" -v c="$(( $(child_ticks "$self") - c0 ))" -v hz="$hz" \
    -v r0="$r0" -v r1="$(redis_cpu)" -v s="$(( $(redis_scripts) - s0 ))" 'BEGIN {
    split(line, f, " +"); for (i in f) if (f[i] == "req") { n = f[i - 1]; break }
    printf "%s   server CPU %5.1f us/req", line, t / hz * 1e6 / n
    if (r1 != "" && r0 != "") printf ", redis %4.1f us/req", (r1 - r0) * 1e6 / n
    printf ", load %4.1f us/req", c / hz * 1e6 / n
    if (s > n / 1000) printf ", %4.1f req/script call", n / s
    printf "\n" }'
}

start_ours() { # backend args...
  "$work/ratelimitd" -config "$work/ratelimitd.yaml" -http 127.0.0.1:18080 -grpc 127.0.0.1:18081 "$@" 2>"$work/ours.log" &
  ours=$!
  pids+=("$ours")
  wait_port 127.0.0.1:18080 && wait_port 127.0.0.1:18081
}
stop_ours() { kill "$ours"; wait "$ours" 2>/dev/null || true; }

start_peer() {
  env -i PATH="$PATH" LOCAL_CACHE_SIZE_IN_BYTES="${LOCAL_CACHE_SIZE_IN_BYTES:-0}" USE_STATSD=false LOG_LEVEL=error BACKEND_TYPE=redis REDIS_SOCKET_TYPE=tcp REDIS_URL="$redis" \
    RUNTIME_ROOT="$work/runtime" RUNTIME_SUBDIRECTORY=ratelimit RUNTIME_WATCH_ROOT=false \
    HOST=127.0.0.1 PORT=18090 GRPC_HOST=127.0.0.1 GRPC_PORT=18091 DEBUG_HOST=127.0.0.1 DEBUG_PORT=18092 \
    "$peer" >"$work/peer.log" 2>&1 &
  peerpid=$!
  pids+=("$peerpid")
  wait_port 127.0.0.1:18090 && wait_port 127.0.0.1:18091
}

echo "== ratelimitd, memory store ($conc clients, at most $n requests or $dur per run)"
echo "   (floor: a server that does no work, in a process of its own as the service is, for scale)"
floor() { # mode port
  "$work/load" -mode "$1" -serve "127.0.0.1:$2" 2>/dev/null &
  floorpid=$!
  pids+=("$floorpid")
  wait_port "127.0.0.1:$2"
  measured "$floorpid" -mode "$1" -target "127.0.0.1:$2" -label "floor: $1, a fixed answer"
  measured "$floorpid" -mode "$1" -target "127.0.0.1:$2" -rate "$rate" -label "floor: $1, at $rate/s"
  kill "$floorpid"; wait "$floorpid" 2>/dev/null || true
}
# Each protocol twice: as fast as the clients go (each sends its next call
# when the last returns), and paced at $rate requests/s in all, where the
# latency is the server's own and not the queue of the other clients.
rate=${LOAD_RATE:-25000}
start_ours
floor http 18070
measured "$ours" -mode http -target 127.0.0.1:18080 -label "ratelimitd /v1/check, memory"
measured "$ours" -mode http -target 127.0.0.1:18080 -rate "$rate" -label "ratelimitd /v1/check, memory, $rate/s"
measured "$ours" -mode forward -target 127.0.0.1:18080 -label "ratelimitd forward-auth, memory"
measured "$ours" -mode http -target 127.0.0.1:18080 -label "ratelimitd /v1/check, memory (again)"
floor grpc 18071
measured "$ours" -mode grpc -target 127.0.0.1:18081 -label "ratelimitd ShouldRateLimit, memory"
measured "$ours" -mode grpc -target 127.0.0.1:18081 -rate "$rate" -label "ratelimitd ShouldRateLimit, memory, $rate/s"
stop_ours

# TLS beside plaintext, keep-alive, memory store: the same configuration
# served by a second instance with a tls section (a certificate openssl
# makes here), the two loaded in turn, and the ratio of each pair.
if command -v openssl >/dev/null; then
  echo "== TLS and plaintext, memory store (keep-alive: one connection per client, or one for gRPC)"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=ratelimitd \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null
  { printf 'tls:\n  cert_file: %s\n  key_file: %s\n' "$work/tls.crt" "$work/tls.key"; cat "$work/ratelimitd.yaml"; } >"$work/ratelimitd-tls.yaml"
  start_ours
  "$work/ratelimitd" -config "$work/ratelimitd-tls.yaml" -http 127.0.0.1:18180 -grpc 127.0.0.1:18181 2>"$work/tls.log" &
  tlspid=$!
  pids+=("$tlspid")
  wait_port 127.0.0.1:18180 && wait_port 127.0.0.1:18181
  for round in $(seq 1 "${ROUNDS:-2}"); do
    measured "$ours" -mode http -target 127.0.0.1:18080 -label "/v1/check, plaintext" | tee -a "$work/tlspairs"
    measured "$tlspid" -mode http -target 127.0.0.1:18180 -tls -ca "$work/tls.crt" -label "/v1/check, TLS" | tee -a "$work/tlspairs"
    measured "$ours" -mode grpc -target 127.0.0.1:18081 -label "ShouldRateLimit, plaintext" | tee -a "$work/tlspairs"
    measured "$tlspid" -mode grpc -target 127.0.0.1:18181 -tls -ca "$work/tls.crt" -label "ShouldRateLimit, TLS" | tee -a "$work/tlspairs"
  done
  awk 'function field(unit,  i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1) }
       /plaintext/ { plain = field("req/s"); next }
       { printf "TLS/plaintext, %-16s %.2f\n", $1, field("req/s") / plain }' "$work/tlspairs"
  kill "$tlspid"; wait "$tlspid" 2>/dev/null || true
  stop_ours
fi

echo "== one Redis at $redis"
start_ours -redis "redis://$redis/0"
if [[ -n $peer ]]; then start_peer; fi
# paired PID args...: a measured run whose line also goes to the pairs file.
paired() { measured "$@" | tee -a "$work/pairs"; }
for round in $(seq 1 "${ROUNDS:-2}"); do
  paired "$ours" -mode grpc -target 127.0.0.1:18081 -label "ratelimitd ShouldRateLimit, redis"
  if [[ -n $peer ]]; then paired "$peerpid" -mode grpc -target 127.0.0.1:18091 -label "envoyproxy/ratelimit gRPC, redis"; fi
  paired "$ours" -mode http -target 127.0.0.1:18080 -label "ratelimitd /v1/check, redis"
  if [[ -n $peer ]]; then paired "$peerpid" -mode json -target 127.0.0.1:18090 -label "envoyproxy/ratelimit /json, redis"; fi
done
# Each pair's throughput ratio and p99s, taken from the two runs of one
# round (seconds apart), and the median ratio per protocol.
if [[ -n $peer ]]; then
  awk 'function field(unit,  i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1) }
       function p99(  i) { for (i = 1; i < NF; i++) if ($i == "p99") return $(i + 1) }
       function median(a, n,  i, j, t) {
         for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
         return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
       /^ratelimitd/ { ours = field("req/s"); op99 = p99(); next }
       { proto = /gRPC/ ? "gRPC" : "HTTP"; r = ours / field("req/s"); n[proto]++; ratio[proto, n[proto]] = r
         printf "pair %d, %-4s  ratio %.2fx   p99 %s ours, %s envoyproxy/ratelimit\n", n[proto], proto, r, op99, p99() }
       END { for (p in n) { for (i = 1; i <= n[p]; i++) a[i] = ratio[p, i]
               printf "median ratio, %-4s %.2fx over %d pairs\n", p, median(a, n[p]), n[p] } }' "$work/pairs"
fi

# The flood: every client on one key, so that nearly every request is
# denied, without and then with each service's cache of denials
# (backend.deny_cache; envoyproxy/ratelimit's LOCAL_CACHE_SIZE_IN_BYTES).
echo "== one hot key on one Redis, nearly every request denied (-keys 1)"
flood() { # label suffix
  measured "$ours" -mode http -keys 1 -target 127.0.0.1:18080 -label "ratelimitd /v1/check, flood$1"
  measured "$ours" -mode grpc -keys 1 -target 127.0.0.1:18081 -label "ratelimitd ShouldRateLimit, flood$1"
  if [[ -n $peer ]]; then
    measured "$peerpid" -mode json -keys 1 -target 127.0.0.1:18090 -label "envoyproxy/ratelimit /json, flood$1"
    measured "$peerpid" -mode grpc -keys 1 -target 127.0.0.1:18091 -label "envoyproxy/ratelimit gRPC, flood$1"
  fi
}
flood ""
stop_ours
sed 's/^policies:/backend:\n  deny_cache: 100000\npolicies:/' "$work/ratelimitd.yaml" >"$work/ratelimitd-dc.yaml"
cp "$work/ratelimitd-dc.yaml" "$work/ratelimitd.yaml"
start_ours -redis "redis://$redis/0"
if [[ -n $peer ]]; then
  kill "$peerpid"; wait "$peerpid" 2>/dev/null || true
  LOCAL_CACHE_SIZE_IN_BYTES=104857600 start_peer
fi
flood ", cache of denials on"

if [[ -z $peer ]]; then
  echo "(envoyproxy/ratelimit not found: set RATELIMIT_PEER to compare)"
fi
