#!/usr/bin/env bash
# Counts the instructions one iteration of each named benchmark executes,
# under valgrind's callgrind: a count, not a time, so it repeats exactly
# on a busy host. Each benchmark runs at N and at 3N iterations; the
# difference, divided by 2N, leaves out setup. Then the functions that
# spent the most of them, per iteration.
#
#   bash scripts/instructions.sh PACKAGE BENCHMARK... [-- N]
#   bash scripts/instructions.sh ./scripts/peers MemOursGCRA MemSethvargo
#
# PACKAGE is a path from the repository's root (./scripts/peers, outside
# go.work, is built on its own); BENCHMARK a name without its "Benchmark".
# N defaults to 100000.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,13s/^# \{0,1\}//p' "$0" >&2
  exit 2
fi
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
pkg=$1
shift
names=() n=100000
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then n=$2; break; fi
  names+=("$1")
  shift
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${pkg%/}" = ./scripts/peers ]; then
  (cd "$root/scripts/peers" && GOWORK=off go test -c -o "$work/b.test" .)
else
  (cd "$root" && go test -c -o "$work/b.test" "$pkg")
fi
for name in "${names[@]}"; do
  for k in 1 3; do
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.$k" "$work/b.test" -test.run '^$' \
      -test.bench "^Benchmark$name\$" -test.benchtime "$((k * n))x" -test.cpu 1 >/dev/null 2>"$work/$name.$k.log"
  done
  total() { sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/$name.$1.log"; }
  echo "Benchmark$name: $((($(total 3) - $(total 1)) / (2 * n))) instructions per iteration"
  callgrind_annotate --auto=no --inclusive=no "$work/$name.3" 2>/dev/null |
    awk '/^ *[0-9,]+ .*:/ { gsub(",", "", $1); f = $0; sub(/^[^:]*:/, "", f); sub(/ \[.*/, "", f); c[f] += $1 }
      END { for (f in c) print c[f], f }' |
    sort -rn | head -12 | awk -v per=$((3 * n)) '{ c = $1; $1 = ""; printf "  %6.0f %s\n", c / per, $0 }'
done
