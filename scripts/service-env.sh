# Sourced by bench-service.sh and soak.sh: a work directory, a list of the
# PIDs the script starts (each stopped on exit, with the directory removed),
# the Redis to use, envoyproxy/ratelimit's binary when present (peer), and
# ratelimitd and its load tool built into the work directory, and wait_port.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
redis=${RATELIMIT_REDIS_ADDR:-127.0.0.1:16379}
peer=${RATELIMIT_PEER:-$(command -v service_cmd || { [[ -x /tmp/peers/service_cmd ]] && echo /tmp/peers/service_cmd; } || true)}
(cd "$root" && go build -o "$work/ratelimitd" ./cmd/ratelimitd && go build -o "$work/load" ./cmd/ratelimitd/load)

# wait_port HOST:PORT waits up to 10 s for something to listen there.
wait_port() {
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$(basename "$0"): nothing listens on $1" >&2
  return 1
}
