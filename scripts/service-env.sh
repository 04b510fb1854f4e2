# Sourced by bench-service.sh and soak.sh: a work directory, a list of the
# PIDs the script starts (each stopped on exit, with the directory removed),
# the Redis to use, envoyproxy/ratelimit's binary when present (peer), and
# ratelimitd and its load tool built into the work directory.
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
