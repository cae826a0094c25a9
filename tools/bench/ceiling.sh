#!/bin/sh
# What a second core can give at most, for a given grain: the throughput
# of two independent copies of a 1-runner benchmark run at once, against
# one copy alone.  No runtime can make two runners beat this, since two
# runners share caches, memory and (on SMT or virtual machines) the core
# itself the way the two copies do; benchmarks.md compares runner
# speedups with it.
#
# Two CPUs need not be equally fast: on a virtual machine one may share
# its core with a neighbour for minutes at a time.  Where taskset is
# there, each round also runs one copy bound to CPU 0 and one bound to
# CPU 1, and the line reports, against one copy alone on the faster CPU,
# what an even split of the work over the two can give (each CPU does
# half, the slower one finishes last: 2 * fast / slow) and what a split
# matched to their speeds can give (1 + fast / slow).
#
# Usage: [CEILING_FIELD=NAME] tools/bench/ceiling.sh [ROUNDS] -- BENCH_COMMAND...
#   BENCH_COMMAND must print a last line with wall_1=SECONDS (bench/pipeline
#   and bench/random with --runners=1 do), or with NAME=SECONDS where
#   CEILING_FIELD names another field (bench/aes's sequential loop:
#   CEILING_FIELD=seq_wall).  ROUNDS (default 5) alternate alone and
#   paired; medians are compared.
# Prints one line: ceiling: alone=... paired=... ceiling=...
#   and with taskset: cpu0=... cpu1=... even_split=... matched_split=...
set -eu
rounds=5
if [ "${1:-}" != "--" ]; then rounds=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 [ROUNDS] -- BENCH_COMMAND..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field=${CEILING_FIELD:-wall_1}
wall() { sed -n "s/.* $field=\\([0-9.]*\\).*/\\1/p" "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bound runs only where two CPUs are there to bind to
pin=
if command -v taskset >/dev/null 2>&1 && taskset -c 1 true 2>/dev/null; then
    pin=1
fi

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
    if [ -n "$pin" ]; then
        for cpu in 0 1; do
            taskset -c "$cpu" "$@" >"$tmp/c" 2>/dev/null
            wall "$tmp/c" >>"$tmp/cpu$cpu"
        done
    fi
    echo "ceiling: round $i/$rounds" >&2
done
alone=$(median <"$tmp/alone")
paired=$(median <"$tmp/paired")
if [ -n "$pin" ]; then
    c0=$(median <"$tmp/cpu0")
    c1=$(median <"$tmp/cpu1")
else
    c0= c1=
fi
awk -v a="$alone" -v p="$paired" -v c0="$c0" -v c1="$c1" 'BEGIN {
    printf "ceiling: alone=%.3f paired=%.3f ceiling=%.3f", a, p, 2 * a / p
    if (c0 != "" && c1 != "") {
        fast = c0 < c1 ? c0 : c1; slow = c0 < c1 ? c1 : c0
        printf " cpu0=%.3f cpu1=%.3f even_split=%.3f matched_split=%.3f", c0, c1,
            2 * fast / slow, 1 + fast / slow
    }
    printf "\n" }'
