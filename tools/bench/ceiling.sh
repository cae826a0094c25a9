#!/bin/sh
# What a second core can give at most, for a given grain: the throughput
# of two independent copies of a 1-runner benchmark run at once, against
# one copy alone.  No runtime can make two runners beat this, since two
# runners share caches, memory and (on SMT or virtual machines) the core
# itself the way the two copies do; benchmarks.md compares runner
# speedups with it.
#
# Usage: tools/bench/ceiling.sh [ROUNDS] -- BENCH_COMMAND...
#   BENCH_COMMAND must print a last line with wall_1=SECONDS (bench/pipeline
#   and bench/random with --runners=1 do).  ROUNDS (default 5) alternate
#   alone and paired; medians are compared.
# Prints one line: ceiling: alone=... paired=... ceiling=...
set -eu
rounds=5
if [ "${1:-}" != "--" ]; then rounds=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 [ROUNDS] -- BENCH_COMMAND..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

wall() { sed -n 's/.* wall_1=\([0-9.]*\).*/\1/p' "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

i=0
while [ "$i" -lt "$rounds" ]; do
    i=$((i + 1))
    "$@" >"$tmp/a" 2>/dev/null
    wall "$tmp/a" >>"$tmp/alone"
    "$@" >"$tmp/p1" 2>/dev/null &
    p1=$!
    "$@" >"$tmp/p2" 2>/dev/null
    wait "$p1"
    # the pair's time is the slower copy's: both must finish
    printf '%s\n%s\n' "$(wall "$tmp/p1")" "$(wall "$tmp/p2")" | sort -n | tail -1 >>"$tmp/paired"
    echo "ceiling: round $i/$rounds" >&2
done
alone=$(median <"$tmp/alone")
paired=$(median <"$tmp/paired")
awk -v a="$alone" -v p="$paired" 'BEGIN { printf "ceiling: alone=%.3f paired=%.3f ceiling=%.3f\n", a, p, 2 * a / p }'
