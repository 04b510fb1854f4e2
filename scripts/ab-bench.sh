#!/usr/bin/env bash
# Compares two commits on one package's benchmarks, as docs/benchmarks.md's
# before-and-after tables do: builds the package's test binary at each
# commit (in a temporary git worktree), runs the two alternately ROUNDS
# times, so that a noisy host weighs on both alike, and prints the median
# and the least ns/op of each benchmark at each commit (METRIC names another
# figure the benchmarks report, such as checks/s).
#
#   bash scripts/ab-bench.sh BEFORE AFTER PACKAGE REGEX [ROUNDS] [BENCHTIME]
#   bash scripts/ab-bench.sh d4ea492 HEAD ./scripts/peers '^BenchmarkMem' 9 5000000x
#   METRIC=redis-us/check bash scripts/ab-bench.sh 7cdab34 HEAD ./core/redisstore 'Check/gcra/g64$' 5 150000x
#
# PACKAGE is a path from the repository's root; ./scripts/peers, a module
# outside go.work, is built on its own. ROUNDS defaults to 7, BENCHTIME to
# 1000000x. Give a benchmark that uses RunParallel a time (1s): given a
# count, RunParallel hands out one iteration at a time from a shared
# counter, and that contended counter becomes most of the figure.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,19s/^# \{0,1\}//p' "$0" >&2
  exit 2
fi
pkg=$3 re=$4 rounds=${5:-7} benchtime=${6:-1000000x} metric=${METRIC:-ns/op}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
cleanup() {
  for side in before after; do git -C "$root" worktree remove --force "$work/$side" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
declare -A rev=([before]=$1 [after]=$2)
for side in before after; do
  git -C "$root" worktree add -q --detach "$work/$side" "${rev[$side]}"
  if [ "${pkg%/}" = ./scripts/peers ]; then
    (cd "$work/$side/scripts/peers" && GOWORK=off go test -c -o "$work/$side.test" .)
  else
    (cd "$work/$side" && go test -c -o "$work/$side.test" "$pkg")
  fi
done
for _ in $(seq 1 "$rounds"); do
  for side in before after; do
    "$work/$side.test" -test.run '^$' -test.bench "$re" -test.benchtime "$benchtime" |
      awk -v s="$side" -v m="$metric" '/^Benchmark/ {for (i = 3; i < NF; i++) if ($(i + 1) == m) print $1, s, $i}'
  done
done >"$work/out"
printf '%-48s %-7s %10s %10s\n' benchmark commit median least
sort -k1,1 -k2,2r -k3,3g "$work/out" | awk '
  function flush() { if (n) printf "%-48s %-7s %10s %10s\n", key, side, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), v[1] }
  $1 " " $2 != cur { flush(); cur = $1 " " $2; key = $1; side = $2; n = 0 }
  { v[++n] = $3 }
  END { flush() }'
