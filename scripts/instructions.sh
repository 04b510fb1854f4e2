#!/usr/bin/env bash
# Counts the instructions one iteration of each named benchmark executes,
# under valgrind's callgrind: a count, not a time, so a busy host does not
# move it. Each benchmark runs at N and at 3N iterations; the difference,
# divided by 2N, leaves out setup and warm-up, and so do the counts of the
# functions that spend the most (TOP of them, 12 by default) listed after
# it. The collector is off (GOGC=off): valgrind runs one thread at a time,
# so marking would last longer than natively and vary from run to run;
# read allocations from the benchmark's allocs/op. A pure computation
# counts the same on every run; a framework's timers (Fiber's) move it by
# about 1%.
#
#   bash scripts/instructions.sh PACKAGE BENCHMARK... [-- N]
#   bash scripts/instructions.sh ./scripts/peers MemOursGCRA MemSethvargo
#
# PACKAGE is a path from the repository's root (./scripts/peers, outside
# go.work, is built on its own); BENCHMARK a name without its "Benchmark".
# N defaults to 100000. Under valgrind a benchmark runs some 50 times
# slower: one that reads the system clock may see a rate-limit window end
# mid-run and fail its own check; run it again, or with a smaller N.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,20s/^# \{0,1\}//p' "$0" >&2
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
    GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$work/$name.$k" "$work/b.test" -test.run '^$' \
      -test.bench "^Benchmark$name\$" -test.benchtime "$((k * n))x" -test.cpu 1 >"$work/out" 2>"$work/$name.$k.log" ||
      { cat "$work/out" >&2; exit 1; }
  done
  total() { sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/$name.$1.log"; }
  echo "Benchmark$name: $((($(total 3) - $(total 1)) / (2 * n))) instructions per iteration"
  # Per function, the difference of the two runs too: warm-up and setup cancel out.
  for k in 1 3; do
    callgrind_annotate --auto=no --inclusive=no "$work/$name.$k" 2>/dev/null |
      awk -v k=$k -v q="'" '/^ *[0-9,]+ .*:/ {
        gsub(",", "", $1); f = $0; sub(/^[^:]*:/, "", f); sub(/ \[.*/, "", f); sub(q "[0-9]+$", "", f); print k, $1, f }'
  done | awk -v n="$n" '{ k = $1; c = $2; $1 = $2 = ""; sub(/^ +/, ""); d[$0] += (k == 3 ? c : -c) }
    END { for (f in d) if (d[f] > 0) printf "%d %s\n", d[f] / (2 * n), f }' |
    sort -rn | awk -v top="${TOP:-12}" 'NR <= top { c = $1; $1 = ""; printf "  %6d%s\n", c, $0 }'
done
