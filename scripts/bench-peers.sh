#!/usr/bin/env bash
# Runs the side-by-side benchmarks against other libraries (scripts/peers, a
# module of its own that no module of the project requires): the HTTP allow
# and deny paths against go-chi/httprate in the README's harness, the memory
# store's serial GCRA (admitting and denying) against sethvargo/go-limiter,
# and the Fiber and Echo adapters against the limiters those frameworks
# ship. Each benchmark runs RUNS times (7 by default), interleaved with the
# others, and the script prints the median ns/op and allocations of each.
# Not part of CI: it takes about five minutes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${RUNS:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root/scripts/peers" && GOWORK=off go test -c -o "$work/peers.test" .)
# The memory-store rows take 80 ns a check: 300,000 of them would be a
# 25 ms sample, which one scheduling hiccup of a shared host can double;
# 5,000,000 make it about 0.4 s, as long as an HTTP row's.
for _ in $(seq 1 "$runs"); do
  "$work/peers.test" -test.run '^$' -test.bench '^Benchmark[^M]' -test.benchtime 300000x | grep '^Benchmark'
  "$work/peers.test" -test.run '^$' -test.bench '^BenchmarkMem' -test.benchtime 5000000x | grep '^Benchmark'
done >"$work/out"
# name ns/op B/op allocs/op, one line per run -> median ns/op and allocs/op per name
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
awk '{ns[$1] = ns[$1] " " $3; al[$1] = al[$1] " " $7}
     END {for (k in ns) print k, ns[k], "|", al[k]}' "$work/out" | sort |
while read -r name rest; do
  printf '%-28s %10s ns/op  %3s allocs/op\n' "${name%-*}" "$(median <<<"${rest%%|*}")" "$(median <<<"${rest##*|}")"
done
# The ratios the targets are about, taken within each run (the two rows of
# a ratio run seconds apart), then their median over the runs.
ratio() { # ours peer
  awk -v a="$1" -v b="$2" '$1 ~ "^"a"-" {x[++i] = $3} $1 ~ "^"b"-" {y[++j] = $3}
       END {for (k = 1; k <= i && k <= j; k++) printf "%.3f ", x[k] / y[k]}' "$work/out"
}
# The floor rows' ratios show how much of httprate's request the recorder
# alone takes for our header fields, with no limiter at all; ReturnDecision
# over ReturnScalars what returning a core.Decision costs its caller.
for pair in "OursAllow HttprateAllow" "OursDeny HttprateDeny" "FloorAllow HttprateAllow" "FloorDeny HttprateDeny" "MemOursGCRA MemSethvargo" "MemOursGCRADeny MemSethvargoDeny" "ReturnDecision ReturnScalars" \
  "FiberOursAllow FiberTheirsAllow" "FiberOursDeny FiberTheirsDeny" "FiberOursSlidingDeny FiberTheirsSlidingDeny" "FiberFloorDeny FiberTheirsDeny" \
  "EchoOursAllow EchoTheirsAllow" "EchoOursDeny EchoTheirsDeny" "EchoOursAllowServer EchoTheirsAllowServer" "EchoFloorAllowServer EchoTheirsAllowServer" "EchoOursDenyServer EchoTheirsDenyServer"; do
  set -- $pair
  r=$(ratio "Benchmark$1" "Benchmark$2")
  printf '%-28s median %s   (runs: %s)\n' "$1 / $2" "$(median <<<"$r")" "$r"
done
# Allocations per request counted exactly (allocs/op above is a whole
# number, and the deny row's moves between runs).
echo "exact allocations per request (TestAllocsPerRequest):"
"$work/peers.test" -test.run '^TestAllocsPerRequest$' -test.v | sed -n 's/^ *peer_test.go:[0-9]*: /  /p'
