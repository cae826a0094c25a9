#!/bin/sh
# Instructions and D1 cache lines one ring hop costs, on one runner.
#
# Runs bench/ring under callgrind and under cachegrind at two trip
# counts and divides the difference by the difference in hops, so the
# set-up (spawning, filling stacks, the first pass through cold memory)
# cancels.  "D1 lines" are cachegrind's simulated L1 data misses (reads
# and writes): a 1000-process ring's working set does not fit in L1, so
# every line a hop needs is, to a good approximation, a miss.  Valgrind
# drops prefetch instructions, and with them a load whose value only
# gives a prefetch its address, so a line a hop reads only for that is
# not counted.
#
# Usage: tools/bench/hop_cost.sh [RING_BINARY] [PROCS] [TRIPS_LO] [TRIPS_HI]
# defaults: build/amd64/bench/ring 1000 100 600
# Prints one line: procs=... instr_per_hop=... d1_lines_per_hop=...
# functions=NAME:N,... (the functions a hop spends at least half an
# instruction in, by cachegrind, most first)
set -eu
ring=${1:-build/amd64/bench/ring}
procs=${2:-1000}
lo=${3:-100}
hi=${4:-600}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# total TOOL TRIPS EVENTS: the summed events of one run, from the tool's
# own summary line; the run's file stays as $tmp/TOOL.TRIPS.
total() {
    tool=$1 trips=$2 events=$3
    valgrind --tool="$tool" --"$tool"-out-file="$tmp/$tool.$trips" ${events:+--cache-sim=yes} \
        "$ring" --procs="$procs" --trips="$trips" --runs=1 >/dev/null 2>"$tmp/err" || {
        cat "$tmp/err" >&2
        exit 1
    }
    # cg_annotate/callgrind_annotate print the totals on a line of numbers
    # under the "Ir ..." header; the file's own "summary:" line is simpler.
    sed -n 's/^summary: *//p' "$tmp/$tool.$trips"
}

# by_fn FILE: "function instructions" for each function of a cachegrind
# run, each instruction counted in the function it lies in (cachegrind's
# fn=; callgrind's call tracking, which the switch confuses, counts the
# code a process resumes in as the caller of the process it left)
by_fn() {
    awk '/^fn=/ { fn = substr($0, 4); next }
        /^[0-9]/ && NF >= 2 { ir[fn] += $2 }
        END { for (f in ir) print f, ir[f] }' "$1" | sort
}

# summary fields: callgrind "Ir", cachegrind "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"
ci_lo=$(total callgrind "$lo" "")
ci_hi=$(total callgrind "$hi" "")
cg_lo=$(total cachegrind "$lo" sim)
cg_hi=$(total cachegrind "$hi" sim)
hops=$((procs * (hi - lo)))
by_fn "$tmp/cachegrind.$lo" >"$tmp/f.lo"
by_fn "$tmp/cachegrind.$hi" >"$tmp/f.hi"

# the functions a hop spends at least half an instruction in, most first
fns=$(join -a 2 -e 0 -o 0,1.2,2.2 "$tmp/f.lo" "$tmp/f.hi" 2>/dev/null | awk -v h="$hops" '{
        v = ($3 - $2) / h; if (v >= 0.5) printf "%.1f %s:%.1f\n", v, $1, v }' | sort -rn | cut -d' ' -f2 | paste -sd, -)

echo "$ci_lo|$ci_hi|$cg_lo|$cg_hi|$hops|$fns" | awk -F'|' -v procs="$procs" '{
    split($1, a, " "); split($2, b, " "); split($3, c, " "); split($4, d, " ");
    ir = (b[1] - a[1]) / $5;
    d1 = ((d[5] + d[8]) - (c[5] + c[8])) / $5;
    printf "hop_cost: procs=%d hops=%d instr_per_hop=%.1f d1_lines_per_hop=%.2f functions=%s\n", procs, $5, ir, d1, $6
}'
