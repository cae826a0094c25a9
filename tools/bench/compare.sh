#!/bin/sh
# The fine-grain figures of docs/benchmarks.md for an earlier commit and
# for the working tree, measured in the same invocation.
#
# Builds BASE's benchmarks in a scratch worktree (build/compare/), builds
# the working tree's, then runs every figure ROUNDS times, alternating
# the two builds, so that drift of a shared machine falls on both alike.
# Prints a Markdown table of medians (with the range) on stdout; progress
# on stderr.  The working tree's runs also try --policy=auto (kpn_place),
# work stealing that never learns a placement (--learn=0), the other wake
# rule (--wake=last) and two independent pipelines, one per runner
# (--copies=2 --policy=static), and AES with 16 384 workers on 2 MiB
# pages (the others run it on ordinary pages, as BASE's does).  Where
# taskset is there, each single-threaded figure (the rings on one
# runner, the 1-runner pipeline of the target row, the floors) is run
# bound to CPU 0 and bound to CPU 1, and the faster of the two kept: a
# host may give one CPU of a virtual machine to a neighbour for minutes
# at a time, and left to the scheduler a run of one thread moves between
# CPUs whose caches hold different lines.  Each round also times the
# working tree's 1-runner pipeline, random networks and AES (1 024
# workers) bound to CPU 0 and to CPU 1: two CPUs of a virtual machine
# need not be equally fast, and a 2-runner speedup is bounded by what
# an even split over them can give (tools/bench/ceiling.sh), or for
# AES, whose runners share the work out by speed, a split matched to
# the two speeds.  Each round also
# times a hand-off between two runners (a ring of two processes, one on
# each) and what the machine takes to pass one cache line between the
# two CPUs and back (bench/pingpong), which the two-runner rows depend
# on and which a virtual machine's host may change from minute to minute.
# It times that round trip at the start of each round as well as at its
# end, and the table gives the targets' 2-runner rows again for the
# rounds where the two CPUs were near throughout (both round trips under
# TRIP_NS, below) and for those where they were far (both at or over it).
# It also times the working tree's bench/coro_ring at the ring's two
# sizes: coroutines on the port's switch and nothing else, the floor
# under a ring hop on the machine, and how that floor grows with the
# ring's size, asking for the lines two hops ahead as kpn's wake does
# and 16 hops ahead as a large net's does, and touching the 7 lines a kpn
# hop touches, asking for them 16 hops ahead; and bench/coro_pipeline, the
# no-work pipeline's stages on bare coroutines joined by bare rings, the
# floor under its 1-runner figure.
# The instruction and line counts are valgrind's: a ring hop's in both
# builds and the bare ring's (tools/bench/hop_cost.sh), and a pipeline
# message-stage's in both builds and the bare pipeline's
# (tools/bench/stage_cost.sh).
#
# Usage: tools/bench/compare.sh BASE [ROUNDS]     (ROUNDS default 5)
#        tools/bench/compare.sh --report BASE [RUNS...]
# --report prints the table again from the runs the last invocation left
# in build/compare/runs, counting the instructions and lines again from
# the builds it left (valgrind's counts do not drift).  Given RUNS,
# copies of build/compare/runs that invocations of the same BASE left,
# it prints one table from all their rounds: a host that changes state
# for minutes at a time is better read from rounds made at different
# times than from one invocation alone.
set -eu
report=
if [ "${1:-}" = --report ]; then
    report=1
    shift
fi
[ $# -ge 1 ] || { echo "usage: $0 BASE [ROUNDS] | $0 --report BASE [RUNS...]" >&2; exit 2; }
base=$1
rounds=${2:-5}
top=$(pwd)
scratch=$top/build/compare
out=$scratch/runs
old=$scratch/base/build/amd64/bench
new=$top/build/amd64/bench
# a round trip (ns) that parts the host's two states: about 50 to 155 ns
# near, 320 to 530 far (docs/benchmarks.md, "The two CPUs")
TRIP_NS=300

# report: the table, from the runs in $out and the builds $old and $new
report() {
    echo "compare: instruction and cache counts (valgrind)" >&2
    hop_old=$(tools/bench/hop_cost.sh "$old/ring")
    hop_new=$(tools/bench/hop_cost.sh "$new/ring")
    hop_coro=$(tools/bench/hop_cost.sh "$new/coro_ring")
    stage_old=$(tools/bench/stage_cost.sh "$old/pipeline")
    stage_new=$(tools/bench/stage_cost.sh "$new/pipeline")
    stage_coro=$(tools/bench/stage_cost.sh "$new/coro_pipeline")

    # field FILE KEY: every value of KEY=, one a line
    field() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$1" 2>/dev/null; }
    # stats: "median (min-max)" of the numbers on stdin, scaled by $1, $2 decimals
    stats() {
        sort -n | awk -v k="$1" -v p="$2" '{ v[NR] = $1 * k }
            END { if (NR == 0) { print "-"; exit }
                  m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                  fmt = "%." p "f (%." p "f-%." p "f)"; printf fmt "\n", m, v[1], v[NR] }'
    }
    row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
    # per FILE_A KEY_A FILE_B KEY_B: per round, A's KEY_A over B's KEY_B
    per() {
        field "$out/$1" "$2" >"$out/per.a"
        field "$out/$3" "$4" >"$out/per.b"
        paste "$out/per.a" "$out/per.b" | awk 'NF == 2 && $2 > 0 { print $1 / $2 }'
    }
    # over A B: per round, the ns per hop of file B over that of file A
    over() { per "$2" ns_per_hop "$1" ns_per_hop; }
    # ring_ratio V [OTHER]: per round, OTHER's ns per hop over the 1 000-process
    # ring's on 1 runner (OTHER: ring10k, the default, or ring2r)
    ring_ratio() { over "ring1k.$1" "${2:-ring10k}.$1"; }
    hop() { echo "$1" | sed -n "s/.* $2=\([0-9.]*\).*/\1/p"; }
    # state near|far: per round, 1 where the CPUs were in that state at the
    # round's start and at its end, else 0
    state() {
        field "$out/pingpong.start" ns_per_round_trip >"$out/state.a"
        field "$out/pingpong" ns_per_round_trip >"$out/state.b"
        paste "$out/state.a" "$out/state.b" | awk -v lim="$TRIP_NS" -v w="$1" 'NF == 2 {
            n = $1 < lim && $2 < lim; f = $1 >= lim && $2 >= lim
            print (w == "near" ? n : f) }'
    }
    # in_state near|far FILE KEY: KEY's values from the rounds in that state
    in_state() {
        state "$1" >"$out/state.s"
        field "$out/$2" "$3" >"$out/state.v"
        paste "$out/state.s" "$out/state.v" | awk 'NF == 2 && $1 == 1 { print $2 }'
    }
    nstate() { state "$1" | grep -c 1 || true; }
    # by_state LABEL FILE KEY: LABEL's row again for each state, before and after
    by_state() {
        for w in near far; do
            row "$1, rounds with the CPUs $w ($(nstate $w) of $rounds)" "-" \
                "$(in_state $w "$2.before" "$3" | stats 1 2)" "$(in_state $w "$2.after" "$3" | stats 1 2)"
        done
    }
    # even FILE: per round, 2 * faster / slower of the two bound runs
    even() { awk 'NF == 2 && $1 > 0 && $2 > 0 { f = $1 < $2 ? $1 : $2; s = $1 < $2 ? $2 : $1; print 2 * f / s }' "$out/$1" 2>/dev/null; }
    # matched FILE: per round, 1 + faster / slower of the two bound runs
    matched() { awk 'NF == 2 && $1 > 0 && $2 > 0 { f = $1 < $2 ? $1 : $2; s = $1 < $2 ? $2 : $1; print 1 + f / s }' "$out/$1" 2>/dev/null; }
    # slow FILE: per round, how much longer the slower CPU took than the faster
    slow() { awk 'NF == 2 && $1 > 0 && $2 > 0 { f = $1 < $2 ? $1 : $2; s = $1 < $2 ? $2 : $1; print s / f }' "$out/$1" 2>/dev/null; }

    # the commit the runs measured (an invocation before this file was kept: HEAD)
    after=$(sed -n 1p "$out/commit" 2>/dev/null || git rev-parse --short HEAD)
    grep -q modified "$out/commit" 2>/dev/null && after="$after, modified"
    # where each single-threaded figure is the faster CPU's
    b=
    grep -q bound "$out/commit" 2>/dev/null && b=", the faster CPU"
    echo "Before: $base; after: the working tree ($after). Medians of $rounds rounds, range in brackets."
    echo
    row "figure" "target" "before" "after"
    row "---" "---" "---" "---"
    row "ring, 1 000 processes, 1 runner$b: ns per hop" "<= 20" "$(field "$out/ring1k.before" ns_per_hop | stats 1 1)" "$(field "$out/ring1k.after" ns_per_hop | stats 1 1)"
    row "ring: instructions per hop (callgrind)" "<= 160" "$(hop "$hop_old" instr_per_hop)" "$(hop "$hop_new" instr_per_hop)"
    row "ring: D1 lines per hop (cachegrind)" "<= 7" "$(hop "$hop_old" d1_lines_per_hop)" "$(hop "$hop_new" d1_lines_per_hop)"
    row "ring, 10 000 processes / 1 000" "<= 1.3" "$(ring_ratio before | stats 1 2)" "$(ring_ratio after | stats 1 2)"
    row "ring, 10 000 processes, 1 runner$b: ns per hop" "-" "$(field "$out/ring10k.before" ns_per_hop | stats 1 1)" "$(field "$out/ring10k.after" ns_per_hop | stats 1 1)"
    row "bare coroutines on the port's switch, with kpn's prefetch (bench/coro_ring), 1 000 in a ring: ns per hop" "-" "-" "$(field "$out/coro1k" ns_per_hop | stats 1 1)"
    row "the same: instructions and D1 lines per hop" "-" "-" "$(hop "$hop_coro" instr_per_hop), $(hop "$hop_coro" d1_lines_per_hop)"
    row "the same, 10 000 / 1 000" "-" "-" "$(over coro1k coro10k | stats 1 2)"
    row "bare coroutines asking for the lines of the one 16 hops on (--ahead=16), 1 000 in a ring: ns per hop" "-" "-" "$(field "$out/coro1k.ahead" ns_per_hop | stats 1 1)"
    row "the same, 10 000 / 1 000" "-" "-" "$(over coro1k.ahead coro10k.ahead | stats 1 2)"
    row "bare coroutines touching the 7 lines a kpn hop touches, asking 16 hops on (--kpn_lines=4 --ahead=16), 1 000 in a ring: ns per hop" "-" "-" "$(field "$out/coro1k.lines" ns_per_hop | stats 1 1)"
    row "the same, 10 000 / 1 000" "-" "-" "$(over coro1k.lines coro10k.lines | stats 1 2)"
    row "ring / bare coroutines, 1 000 processes" "-" "-" "$(over coro1k ring1k.after | stats 1 2)"
    row "ring / bare coroutines, 10 000 processes" "-" "-" "$(over coro10k ring10k.after | stats 1 2)"
    row "ring, 1 000 processes: 2 runners (work stealing) / 1, time per hop" "-" "$(ring_ratio before ring2r | stats 1 2)" "$(ring_ratio after ring2r | stats 1 2)"
    row "ring of 2 processes, one on each runner (--policy=static): ns per hop" "-" "$(field "$out/handoff.before" ns_per_hop | stats 1 0)" "$(field "$out/handoff.after" ns_per_hop | stats 1 0)"
    row "two threads passing one cache line between CPU 0 and CPU 1 (bench/pingpong): ns a round trip, at each round's end" "-" "-" "$(field "$out/pingpong" ns_per_round_trip | stats 1 0)"
    row "the same, at each round's start" "-" "-" "$(field "$out/pingpong.start" ns_per_round_trip | stats 1 0)"
    row "pipeline, 50 stages, no work, 1 runner$b: ns per message-stage" "<= 5" "$(field "$out/pipe1.before" wall_1 | stats 20 2)" "$(field "$out/pipe1.after" wall_1 | stats 20 2)"
    row "the same, the 1-runner runs of the 2-runner rows below" "-" "$(field "$out/pipe.before" wall_1 | stats 20 2)" "$(field "$out/pipe.after" wall_1 | stats 20 2)"
    row "bare coroutines joined by bare rings (bench/coro_pipeline), the same pipeline: ns per message-stage" "-" "-" "$(field "$out/coro.pipe" ns_per_stage | stats 1 2)"
    row "pipeline, 1 runner / bare coroutines" "-" "-" "$(per pipe1.after wall_1 coro.pipe wall | stats 1 2)"
    row "pipeline, 1 runner: instructions per message-stage, the busy loop left out (cachegrind)" "-" "$(hop "$stage_old" instr_per_stage)" "$(hop "$stage_new" instr_per_stage)"
    row "the same: in the send, the receive, the rest of kpn" "-" "$(hop "$stage_old" send), $(hop "$stage_old" recv), $(hop "$stage_old" sched)" "$(hop "$stage_new" send), $(hop "$stage_new" recv), $(hop "$stage_new" sched)"
    row "bare coroutines joined by bare rings: instructions per message-stage, the busy loop left out" "-" "-" "$(hop "$stage_coro" instr_per_stage)"
    row "pipeline, no work: 2 runners / 1 (work stealing)" ">= 1.5" "$(field "$out/pipe.before" speedup | stats 1 2)" "$(field "$out/pipe.after" speedup | stats 1 2)"
    by_state "pipeline, no work: 2 runners / 1 (work stealing)" pipe speedup
    row "pipeline, no work: 2 runners / 1 (work stealing, never learning: --learn=0)" "-" "-" "$(field "$out/pipe.nolearn" speedup | stats 1 2)"
    row "pipeline, no work: 2 runners / 1 (work stealing, --wake=last)" "-" "-" "$(field "$out/pipe.last" speedup | stats 1 2)"
    row "pipeline, no work: 2 runners / 1 (kpn_place)" ">= 1.5" "-" "$(field "$out/pipe.auto" speedup | stats 1 2)"
    row "pipeline, 1 runner bound to one CPU: slower CPU / faster" "-" "-" "$(slow pipe1.after.cpus | stats 1 2)"
    row "pipeline: what an even split over the two CPUs can give (2 x faster / slower)" "-" "-" "$(even pipe1.after.cpus | stats 1 2)"
    row "two independent 25-stage pipelines, one per runner: 2 runners / 1" "-" "-" "$(field "$out/copies.after" speedup | stats 1 2)"
    for net in A B; do
        f=rnd$(printf %s "$net" | tr AB ab)
        row "RND-$net, d = 50 000: 2 runners / 1 (work stealing)" ">= 1.3" "$(field "$out/$f.before" speedup | stats 1 2)" "$(field "$out/$f.after" speedup | stats 1 2)"
        by_state "RND-$net, d = 50 000: 2 runners / 1 (work stealing)" "$f" speedup
        row "RND-$net, d = 50 000: 2 runners / 1 (work stealing, --learn=0)" "-" "-" "$(field "$out/$f.nolearn" speedup | stats 1 2)"
        row "RND-$net, d = 50 000: 2 runners / 1 (work stealing, --wake=last)" "-" "-" "$(field "$out/$f.last" speedup | stats 1 2)"
        row "RND-$net, d = 50 000: 2 runners / 1 (kpn_place)" ">= 1.3" "-" "$(field "$out/$f.auto" speedup | stats 1 2)"
        row "RND-$net: what an even split over the two CPUs can give" "-" "-" "$(even pin.$f.cpus | stats 1 2)"
    done
    row "AES, 1 024 workers, 2 runners: kpn / sequential" ">= 1.85 every time" "$(field "$out/aes2.before" ratio | stats 1 2)" "$(field "$out/aes2.after" ratio | stats 1 2)"
    by_state "AES, 1 024 workers, 2 runners: kpn / sequential" aes2 ratio
    row "AES: what a split matched to the two CPUs' speeds can give (1 + faster / slower)" "-" "-" "$(matched pin.aes.cpus | stats 1 2)"
    row "AES, 16 384 workers, 1 runner: kpn / sequential" ">= 0.95" "$(field "$out/aes16k.before" ratio | stats 1 2)" "$(field "$out/aes16k.after" ratio | stats 1 2)"
    row "AES, 16 384 workers, 1 runner, stacks not filled (--stack_fill=0): kpn / sequential" ">= 0.95" "-" "$(field "$out/aes16k.nofill" ratio | stats 1 2)"
    row "AES, 16 384 workers, 1 runner, arena on 2 MiB pages (bench/aes's default): kpn / sequential" ">= 0.95" "-" "$(field "$out/aes16k.huge" ratio | stats 1 2)"
    row "AES, 16 384 workers, 1 runner, arena on 2 MiB pages, stacks not filled: kpn / sequential" ">= 0.95" "-" "$(field "$out/aes16k.nofill.huge" ratio | stats 1 2)"
}

# join_runs DIR...: the rounds of several invocations as one set, in
# $out: of each file that every DIR has, the lines of all in turn (a
# round a line; a file some older invocation did not write is left out,
# so that no row mixes rounds that others lack), and the commits they
# measured
join_runs() {
    for f in "$1"/*; do
        name=${f##*/}
        [ "$name" != commit ] || continue
        all=1
        for d in "$@"; do
            [ -f "$d/$name" ] || all=
        done
        [ -n "$all" ] || continue
        for d in "$@"; do
            cat "$d/$name"
        done >"$out/$name"
    done
    commits='' modified='' bound=1
    for d in "$@"; do
        commits="${commits:+$commits, }$(sed -n 1p "$d/commit")"
        grep -q modified "$d/commit" && modified=1
        grep -q bound "$d/commit" || bound=
    done
    {
        echo "$commits"
        [ -z "$modified" ] || echo modified
        [ -z "$bound" ] || echo bound
    } >"$out/commit"
}

if [ -n "$report" ]; then
    if [ $# -gt 1 ]; then
        shift
        for d in "$@"; do
            if [ ! -f "$d/ring1k.after" ] || [ ! -f "$d/commit" ]; then
                echo "compare: $d holds no runs of an invocation" >&2
                exit 1
            fi
        done
        out=$(mktemp -d)
        trap 'rm -rf "$out"' EXIT
        join_runs "$@"
    fi
    [ -x "$old/ring" ] && [ -x "$new/ring" ] && [ -f "$out/ring1k.after" ] ||
        { echo "compare: no runs or builds in $scratch to report" >&2; exit 1; }
    rounds=$(wc -l <"$out/ring1k.after")
    report
    exit 0
fi

rm -rf "$out"
mkdir -p "$out"
git rev-parse --short HEAD >"$out/commit"
git diff --quiet || echo modified >>"$out/commit"

echo "compare: building $base in $scratch/base" >&2
if [ ! -d "$scratch/base" ]; then
    git worktree add --detach "$scratch/base" "$base" >/dev/null
else
    git -C "$scratch/base" checkout -q --detach "$base"
fi
make -C "$scratch/base" -j2 >/dev/null
echo "compare: building the working tree" >&2
make -j2 >/dev/null

# one round of one build: D is the binary folder, V the label, AES the
# options that make its AES runs like the other build's (the working
# tree's bench/aes asks for 2 MiB pages unless told --huge_pages=0, which
# BASE's does not know), RND the options for its random networks (the
# working tree's bench/random plays the net out in time after its runs
# unless told --replay=0, which nothing here reads)
round() {
    d=$1 v=$2 aes=$3 rnd=$4
    single ring1k.$v ns_per_hop "$d/ring" --procs=1000 --trips=2000 --runs=5
    single ring10k.$v ns_per_hop "$d/ring" --procs=10000 --trips=200 --runs=5
    single pipe1.$v wall_1 "$d/pipeline" --stages=50 --d=1000000 --t_ms=1 --capacity=64 --runners=1 --runs=1
    "$d/ring" --procs=1000 --trips=2000 --runs=5 --runners=2 2>/dev/null | tail -1 >>"$out/ring2r.$v"
    "$d/ring" --procs=2 --trips=100000 --runs=3 --runners=2 --policy=static 2>/dev/null |
        tail -1 >>"$out/handoff.$v"
    "$d/pipeline" --stages=50 --d=1000000 --t_ms=1 --capacity=64 --runs=1 2>/dev/null |
        tail -1 >>"$out/pipe.$v"
    "$d/random" --preset=RND-A --d=50000 --runs=1 $rnd 2>/dev/null | tail -1 >>"$out/rnda.$v"
    "$d/random" --preset=RND-B --d=50000 --runs=1 $rnd 2>/dev/null | tail -1 >>"$out/rndb.$v"
    "$d/aes" --b=26 --k=16 --passes=4 --runners=2 --runs=3 $aes 2>/dev/null | tail -1 >>"$out/aes2.$v"
    "$d/aes" --b=26 --k=12 --passes=4 --runners=1 --runs=3 $aes 2>/dev/null | tail -1 >>"$out/aes16k.$v"
}

# value KEY: KEY's value in the result line on stdin
value() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
pin=
if command -v taskset >/dev/null 2>&1 && taskset -c 1 true 2>/dev/null; then
    pin=1
fi
[ -n "$pin" ] && echo bound >>"$out/commit"
# single OUT KEY COMMAND...: the last line of COMMAND bound to CPU 0 or
# of COMMAND bound to CPU 1, whichever has the smaller KEY, onto OUT,
# and the two KEYs, as "k0 k1", onto OUT.cpus (where there is no
# taskset, the last line of COMMAND as it comes onto OUT)
single() {
    f=$1 k=$2
    shift 2
    if [ -z "$pin" ]; then
        "$@" 2>/dev/null | tail -1 >>"$out/$f"
        return 0
    fi
    l0=$(taskset -c 0 "$@" 2>/dev/null | tail -1)
    l1=$(taskset -c 1 "$@" 2>/dev/null | tail -1)
    v0=$(echo "$l0" | value "$k")
    v1=$(echo "$l1" | value "$k")
    echo "$v0 $v1" >>"$out/$f.cpus"
    if awk -v a="$v0" -v b="$v1" 'BEGIN { exit !(b != "" && (a == "" || b + 0 < a + 0)) }'; then
        echo "$l1" >>"$out/$f"
    else
        echo "$l0" >>"$out/$f"
    fi
}

i=0
while [ "$i" -lt "$rounds" ]; do
    i=$((i + 1))
    "$new/pingpong" --runs=3 2>/dev/null | tail -1 >>"$out/pingpong.start"
    round "$old" before "" ""
    round "$new" after --huge_pages=0 --replay=0
    single coro1k ns_per_hop "$new/coro_ring" --procs=1000 --trips=2000 --runs=5
    single coro10k ns_per_hop "$new/coro_ring" --procs=10000 --trips=200 --runs=5
    single coro1k.ahead ns_per_hop "$new/coro_ring" --procs=1000 --trips=2000 --runs=5 --ahead=16
    single coro10k.ahead ns_per_hop "$new/coro_ring" --procs=10000 --trips=200 --runs=5 --ahead=16
    single coro1k.lines ns_per_hop "$new/coro_ring" --procs=1000 --trips=2000 --runs=5 --ahead=16 --kpn_lines=4
    single coro10k.lines ns_per_hop "$new/coro_ring" --procs=10000 --trips=200 --runs=5 --ahead=16 --kpn_lines=4
    single coro.pipe wall "$new/coro_pipeline" --stages=50 --d=1000000 --t_ms=1 --capacity=64 --runs=1
    "$new/pipeline" --stages=50 --d=1000000 --t_ms=1 --capacity=64 --runs=1 --policy=auto \
        2>/dev/null | tail -1 >>"$out/pipe.auto"
    "$new/random" --preset=RND-A --d=50000 --runs=1 --replay=0 --policy=auto 2>/dev/null | tail -1 >>"$out/rnda.auto"
    "$new/random" --preset=RND-B --d=50000 --runs=1 --replay=0 --policy=auto 2>/dev/null | tail -1 >>"$out/rndb.auto"
    "$new/pipeline" --stages=50 --d=1000000 --t_ms=1 --capacity=64 --runs=1 --learn=0 \
        2>/dev/null | tail -1 >>"$out/pipe.nolearn"
    "$new/random" --preset=RND-A --d=50000 --runs=1 --replay=0 --learn=0 2>/dev/null | tail -1 >>"$out/rnda.nolearn"
    "$new/random" --preset=RND-B --d=50000 --runs=1 --replay=0 --learn=0 2>/dev/null | tail -1 >>"$out/rndb.nolearn"
    "$new/pipeline" --stages=25 --copies=2 --policy=static --d=1000000 --t_ms=1 --capacity=64 \
        --runs=1 2>/dev/null | tail -1 >>"$out/copies.after"
    "$new/pipeline" --stages=50 --d=1000000 --t_ms=1 --capacity=64 --runs=1 --wake=last \
        2>/dev/null | tail -1 >>"$out/pipe.last"
    "$new/random" --preset=RND-A --d=50000 --runs=1 --replay=0 --wake=last 2>/dev/null | tail -1 >>"$out/rnda.last"
    "$new/random" --preset=RND-B --d=50000 --runs=1 --replay=0 --wake=last 2>/dev/null | tail -1 >>"$out/rndb.last"
    "$new/aes" --b=26 --k=12 --passes=4 --runners=1 --runs=3 --stack_fill=0 --huge_pages=0 \
        2>/dev/null | tail -1 >>"$out/aes16k.nofill"
    "$new/aes" --b=26 --k=12 --passes=4 --runners=1 --runs=3 2>/dev/null | tail -1 >>"$out/aes16k.huge"
    "$new/aes" --b=26 --k=12 --passes=4 --runners=1 --runs=3 --stack_fill=0 2>/dev/null |
        tail -1 >>"$out/aes16k.nofill.huge"
    if [ -n "$pin" ]; then
        # the 1-runner wall times bound to each CPU, for the split rows (pin.*.cpus)
        single pin.rnda wall_1 "$new/random" --preset=RND-A --d=50000 --replay=0 --runners=1 --runs=1
        single pin.rndb wall_1 "$new/random" --preset=RND-B --d=50000 --replay=0 --runners=1 --runs=1
        single pin.aes wall "$new/aes" --b=26 --k=16 --passes=4 --huge_pages=0 --runners=1 --runs=1
    fi
    "$new/pingpong" --runs=3 2>/dev/null | tail -1 >>"$out/pingpong"
    echo "compare: round $i/$rounds" >&2
done

report
