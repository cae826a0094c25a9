#!/bin/sh
# Instructions one message-stage of the no-work pipeline costs on one
# runner, by where they lie.
#
# Runs bench/pipeline (or bench/coro_pipeline, its floor on bare
# coroutines) under cachegrind at two message counts and divides the
# difference by the difference in message-stages, so the set-up
# (spawning, calibrating, the first pass through cold memory) cancels.
# Cachegrind names each instruction by the function it lies in and the
# source line it came from, inlined or not, so the parts are:
#   send   the library's kpn_send / kpn_send_sized and the put_ paths
#          they lead to (checks, copy, counters, a wake);
#   recv   kpn_recv / kpn_recv_sized and their get_ and take paths;
#   sched  the rest of the library and the port: blocks, wakes, the
#          switch, the resolver;
#   work   the stage's own work on the message (bench/pipeline.h), the
#          same in both programs;
#   loop   the rest of the program's own code: its stage loop and calls
#          (bench/pipeline.c), or on bare coroutines the loop with its
#          rings and turns (bench/coro_pipeline.c).
# The busy loop (bench/bench.c) is left out, call and all: it is
# calibrated by time, and under valgrind, which runs it far more slowly,
# it makes a different number of iterations a message at each count,
# and fewer than natively.
#
# Usage: tools/bench/stage_cost.sh [PIPELINE_BINARY] [STAGES] [CAPACITY] [D_LO] [D_HI]
# defaults: build/amd64/bench/pipeline 50 64 100000 300000
# Prints one line: stage_cost: stages=... instr_per_stage=... send=... ...
set -eu
prog=${1:-build/amd64/bench/pipeline}
stages=${2:-50}
capacity=${3:-64}
lo=${4:-100000}
hi=${5:-300000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# runs: bench/pipeline times a 1-runner run and an R-runner one, and
# --runners=1 makes both one runner's; the floor times --runs of its own
case $(basename "$prog") in
coro_pipeline*) extra='' runs=1 ;;
*) extra=--runners=1 runs=2 ;;
esac

# parts D: the five parts' instructions over a run of D messages
parts() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/out" \
        "$prog" --stages="$stages" --d="$1" --t_ms=1 --capacity="$capacity" --runs=1 $extra \
        >/dev/null 2>"$tmp/err" || {
        cat "$tmp/err" >&2
        exit 1
    }
    # a cost line is "LINE Ir" under the last fl= (file) and fn= (function)
    awk '/^fl=/ { fl = substr($0, 4); next }
        /^fn=/ { fn = substr($0, 4); next }
        /^[0-9]/ && NF == 2 {
            if (fl ~ /bench\/bench\.c$/) next
            if (fl ~ /bench\/pipeline\.h$/) p = "work"
            else if (fl ~ /bench\//) p = "loop"
            else if (fn ~ /^(kpn_send|put_|send_)/) p = "send"
            else if (fn ~ /^(kpn_recv|get_|take|recv_)/) p = "recv"
            else p = "sched"
            ir[p] += $2
        }
        END { printf "%.0f %.0f %.0f %.0f %.0f\n", ir["send"], ir["recv"], ir["sched"], ir["work"], ir["loop"] }' "$tmp/out"
}

a=$(parts "$lo")
b=$(parts "$hi")
n=$((runs * stages * (hi - lo)))
echo "$a $b" | awk -v n="$n" -v stages="$stages" -v cap="$capacity" '{
    for (i = 1; i <= 5; ++i) { d[i] = ($(i + 5) - $i) / n; t += d[i] }
    printf "stage_cost: stages=%d capacity=%d msg_stages=%d instr_per_stage=%.1f send=%.1f recv=%.1f sched=%.1f work=%.1f loop=%.1f\n",
        stages, cap, n, t, d[1], d[2], d[3], d[4], d[5]
}'
