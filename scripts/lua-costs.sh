#!/usr/bin/env bash
# Measures what the Redis store's script spends its time on, from Redis's
# own count of script time (INFO commandstats), with redis-benchmark
# pipelining 16 calls so that the network does not enter the figure:
#   - each Redis command the algorithms call, reading a number from an
#     argument, splitting GCRA's state and defining a function (which makes
#     a closure), in a loop of 10 inside one script, less the cost of a
#     script that only returns;
#   - the fixed part of a call of the store's script: its function
#     definitions alone, then with the argument layout checked, then one
#     whole fixed-window check.
# Figures are microseconds of script time. Not part of CI.
#
#   bash scripts/redis-test-env.sh start     # the Redis on 127.0.0.1:16379
#   bash scripts/lua-costs.sh                # RATELIMIT_REDIS_ADDR=host:port for another (loopback only)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
addr=${RATELIMIT_REDIS_ADDR:-127.0.0.1:16379}
host=${addr%:*} port=${addr##*:}
case $host in 127.* | localhost | ::1) ;; *) echo "lua-costs: $host is not a loopback address" >&2; exit 2 ;; esac
r() { redis-cli -h "$host" -p "$port" "$@"; }
key="luacosts:{k}:x"
work=$(mktemp -d)
trap 'rm -rf "$work"; r del "$key" >/dev/null' EXIT

# usec SHA ARGS...: script time per call of SHA over 50,000 calls.
usec() {
  local sha=$1
  shift
  r config resetstat >/dev/null
  redis-benchmark -h "$host" -p "$port" -n 50000 -P 16 -c 4 -q evalsha "$sha" 1 "$key" "$@" >/dev/null 2>&1
  r info commandstats | awk -F'usec_per_call=' '/^cmdstat_evalsha:/ {split($2, f, ","); print f[1]}'
}

base=$(usec "$(r script load 'return 1')")
printf '%-44s %6s us per call\n' "a script that only returns" "$base"
loop() { # label setup command [ARGV...]
  local label=$1 setup=$2 body=$3 sha t
  shift 3
  r del "$key" >/dev/null
  [[ -n $setup ]] && r $setup >/dev/null
  sha=$(r script load "for i = 1, 10 do $body end return 1")
  t=$(usec "$sha" "$@")
  awk -v l="$label" -v t="$t" -v b="$base" 'BEGIN {printf "%-44s %6.2f us per command\n", l, (t - b) / 10}'
}
loop "GET" "set $key 5" "redis.call('GET', KEYS[1])"
loop "HMGET of two fields" "hset $key s 1 n 2" "redis.call('HMGET', KEYS[1], 's', 'n')"
loop "HSET of one small field" "hset $key s 1 n 2" "redis.call('HSET', KEYS[1], 'n', '5')"
loop "HSET of two fields, Lua numbers" "hset $key s 1 n 2" "redis.call('HSET', KEYS[1], 's', 1796173440000000, 'n', 5)"
loop "PEXPIRE" "hset $key s 1 n 2" "redis.call('PEXPIRE', KEYS[1], 1000)"
loop "SET with PX, Lua numbers (%.17g by Redis)" "" "redis.call('SET', KEYS[1], 1796173440000000, 'PX', 1000)"
loop "SET with PX, formatted with %d in Lua" "" "redis.call('SET', KEYS[1], string.format('%d', 1796173440000000), 'PX', string.format('%d', 1000))"
loop "tonumber of a 10-digit argument" "" "local x = tonumber(ARGV[1])" 3600000000
loop "splitting a GCRA state into two numbers" "" "local v = '1796173440000000 6000000'; local sp = string.find(v, ' ', 1, true); local t, n = tonumber(string.sub(v, 1, sp - 1)), tonumber(string.sub(v, sp + 1))"
loop "a function definition (a closure)" "" "local function f(a) return a + i end"

# The store's script, concatenated as script.go does, and two truncations.
for f in $(ls "$root"/core/redisstore/lua/*.lua | sort); do cat "$f"; echo; done >"$work/full.lua"
awk '/^-- The layout is checked whole/ {exit} {print} END {print "return 1"}' "$work/full.lua" >"$work/defs.lua"
awk '/^if checks == 1 then/ {exit} {print} END {print "return 1"}' "$work/full.lua" >"$work/layout.lua"
now=$(($(date +%s) * 1000000))
# One fixed-window check of cost 1 under 1e9 per hour: TTL margin 0, one
# check, one policy (code 1, limit, window, interval, tolerance, max delay),
# then the check (now, cost, one key of policy 1).
args=(0 1 1 1 1000000000 3600000000 3 3 0 "$now" 1 1 1)
for part in defs layout full; do
  sha=$(r script load "$(cat "$work/$part.lua")")
  r del "$key" >/dev/null
  t=$(usec "$sha" "${args[@]}")
  case $part in
    defs) label="store script: its definitions alone" ;;
    layout) label="  ... and the argument layout checked" ;;
    full) label="  ... and one fixed-window check" ;;
  esac
  printf '%-44s %6s us per call\n' "$label" "$t"
done
