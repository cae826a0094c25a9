#!/bin/sh
# make fuzz: build the libFuzzer target tools/fuzz/fuzz_net.c with the
# library's sources under ASan and UBSan, and fuzz for SECONDS.
#
# Usage (from anywhere; paths are the tree's):
#   sh tools/fuzz/run.sh [--target=net|api] [SECONDS]
#                                       fuzz (default 60 s); non-zero on a crash.
#                                       net (default): fuzz_net.c, whole networks;
#                                       api: fuzz_api.c, hostile API call
#                                       sequences (seeds tools/fuzz/corpus-api/)
#   sh tools/fuzz/run.sh --merge [SECONDS]
#                                       fuzz, then merge what grew coverage
#                                       into the seed corpus tools/fuzz/corpus/
#   sh tools/fuzz/run.sh --seeds        rewrite the seed corpus (and the
#                                       hand-made files in tools/fuzz/crashes/)
#                                       from the generator in fuzz_net.c
#   sh tools/fuzz/run.sh --replay FILE...
#                                       describe each input and run it 200 times
#                                       (REPLAY_RUNS=N): races need several tries;
#                                       tools/fuzz/crashes/ holds the inputs of
#                                       bugs found and fixed
#   sh tools/fuzz/run.sh --tsan --replay FILE...
#                                       the same under ThreadSanitizer instead
#                                       of ASan and UBSan, without libFuzzer's
#                                       coverage counters (their increments
#                                       race); any race reported fails
#   sh tools/fuzz/run.sh --yield [SECONDS | --replay FILE...]
#                                       the net target in a build whose library
#                                       gives up the CPU at random at its shared
#                                       loads, stores, fences and locks
#                                       (KPN_FUZZ_YIELD), so that interleavings
#                                       a loaded machine makes rarely come more
#                                       often
#
# Everything built or found goes under build/fuzz/: the binary, a working
# corpus (build/fuzz/corpus, kept between runs, read with the seed corpus
# but never written into it), crash inputs (build/fuzz/artifacts/) and the
# log of the last run (build/fuzz/fuzz.log).
# FUZZ_CC picks the compiler (default clang); PORT=amd64|posix the port
# (default: amd64 on x86-64, posix elsewhere).
# Flag lists and source lists are split on purpose:
# shellcheck disable=SC2086
set -eu
cd "$(dirname "$0")/../.."

seconds=60
which=net
merge=0
seeds=0
replay=0
tsan=0
yield=0
while [ $# -gt 0 ]; do
    case $1 in
    --merge) merge=1 ;;
    --target=net|--target=api) which=${1#--target=} ;;
    --seeds) seeds=1 ;;
    --tsan) tsan=1 ;;
    --yield) yield=1 ;;
    --replay) replay=1; shift; break ;;
    -h|--help) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *[!0-9]*|'') echo "fuzz: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    *) seconds=$1 ;;
    esac
    shift
done

cc=${FUZZ_CC:-clang}
command -v "$cc" >/dev/null 2>&1 || {
    echo "fuzz: needs clang with libFuzzer (Debian: apt-get install clang)" >&2; exit 1; }

# The amd64 port is the default build on x86-64 and its hand-written
# switch is the code most worth fuzzing; ASan copes with it (the library
# unpoisons its arena on kpn_net_init).  Elsewhere, ucontext.
case ${PORT:-} in
amd64|posix) port=$PORT ;;
*) if [ "$(uname -m)" = x86_64 ]; then port=amd64; else port=posix; fi ;;
esac
if [ "$port" = amd64 ]; then
    port_c="port/amd64/port_amd64.c"; port_s="port/amd64/switch_amd64.S"
else
    port_c="port/posix/port_posix.c"; port_s=""
fi
port_c="$port_c port/pthread/thread_pthread.c"

out=build/fuzz
bin=$out/fuzz_$which
[ $tsan = 0 ] || [ $replay = 1 ] || { echo "fuzz: --tsan goes with --replay" >&2; exit 2; }
[ $tsan = 0 ] || bin=$out/fuzz_${which}_tsan
[ $yield = 0 ] || [ "$which" = net ] || { echo "fuzz: --yield is for the net target" >&2; exit 2; }
[ $yield = 0 ] || bin=${bin}_yield
if [ "$which" = net ]; then seeds_dir=tools/fuzz/corpus; work=$out/corpus
else seeds_dir=tools/fuzz/corpus-api; work=$out/corpus-api; fi
mkdir -p "$out/obj" "$work" "$out/artifacts"

# The library and the target, with the same flags.  Stack-depth tracing
# is left out: processes run on arena stacks, far from the thread's, and
# would look to libFuzzer like ever-deeper recursion.
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
fuzzflags="-fsanitize=fuzzer-no-link -fno-sanitize-coverage=stack-depth"
if [ $tsan = 1 ]; then
    san="-fsanitize=thread -fno-omit-frame-pointer"
    fuzzflags=""
fi
flags="-std=c99 -pedantic -Wall -Wextra -Werror -O1 -g $san -Iinclude -Iport -Ibench"
if [ $yield = 1 ]; then
    flags="$flags -DKPN_FUZZ_YIELD"
    port_c="$port_c port/pthread/fuzz_yield.c"
fi

# build OUTPUT EXTRA_FLAGS LINK_FLAGS: rebuild when a source, this script
# or the flags changed.
build() {
    target=$1 extra=$2 link=$3
    stamp="$target.flags"
    sources="src/*.c src/*.h include/*.h port/port.h $port_c $port_s bench/randnet.c bench/randnet.h tools/fuzz/fuzz_$which.c tools/fuzz/run.sh"
    if [ -x "$target" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$cc $flags $extra $link $port" ] &&
       [ -z "$(find $sources -newer "$target" 2>/dev/null)" ]; then
        return 0
    fi
    echo "fuzz: building $target (port $port)"
    objdir="$out/obj/$(basename "$target")"
    rm -rf "$objdir"; mkdir -p "$objdir"
    objs=""
    # bench/randnet.c: the random-network generator behind fuzz_net's byte 3, bit 6
    for f in src/*.c $port_c bench/randnet.c tools/fuzz/fuzz_$which.c; do
        o="$objdir/$(echo "$f" | tr / _ | sed 's/\.c$/.o/')"
        $cc $flags $extra -c "$f" -o "$o"
        objs="$objs $o"
    done
    if [ -n "$port_s" ]; then
        $cc -c "$port_s" -o "$objdir/switch.o"
        objs="$objs $objdir/switch.o"
    fi
    $cc $san $link $objs -lpthread -o "$target"
    echo "$cc $flags $extra $link $port" > "$stamp"
}

if [ $seeds = 1 ] && [ "$which" = api ]; then
    build "$out/make_seeds_api" "-DKPN_FUZZ_SEEDS" ""
    rm -f tools/fuzz/corpus-api/*
    mkdir -p tools/fuzz/corpus-api tools/fuzz/crashes
    "$out/make_seeds_api" tools/fuzz/corpus-api tools/fuzz/crashes 2> "$out/seeds.log" ||
        { tail -40 "$out/seeds.log"; echo "fuzz: a seed fails its own checks" >&2; exit 1; }
    grep -c '^tools/fuzz/corpus-api/' "$out/seeds.log" | sed 's/$/ seeds written to tools\/fuzz\/corpus-api/'
    exit 0
fi
if [ $seeds = 1 ]; then
    build "$out/make_seeds" "-DKPN_FUZZ_SEEDS" ""
    rm -f tools/fuzz/corpus/*
    mkdir -p tools/fuzz/corpus
    mkdir -p tools/fuzz/crashes
    "$out/make_seeds" tools/fuzz/corpus tools/fuzz/crashes 2> "$out/seeds.log" ||
        { tail -40 "$out/seeds.log"; echo "fuzz: a seed fails its own checks" >&2; exit 1; }
    grep -c '^tools/fuzz/corpus/' "$out/seeds.log" | sed 's/$/ seeds written to tools\/fuzz\/corpus/'
    exit 0
fi

build "$bin" "$fuzzflags" "-fsanitize=fuzzer"

# clang 14's sanitizers cannot map their shadow memory on kernels with
# high mmap randomisation; then run with address randomisation off.
run=""
if ! "$bin" -runs=0 >/dev/null 2>&1; then
    if "$bin" -runs=0 2>&1 | grep -q -i "unexpected memory mapping\|shadow memory range"; then
        run="setarch $(uname -m) -R"
    fi
fi

if [ $replay = 1 ]; then
    [ $# -gt 0 ] || { echo "fuzz: --replay needs input files" >&2; exit 2; }
    status=0
    for f in "$@"; do
        echo "== $f"
        # the network and what each side made of it, up to any failure
        KPN_FUZZ_VERBOSE=1 $run "$bin" -runs=1 "$f" 2>&1 |
            awk '/^fuzz_net:|^==|^p[0-9]+, observation/ { exit } /^network:|^  / { print }' || true
        # races need more than one try: run it ${REPLAY_RUNS:-200} times
        if ! KPN_FUZZ_VERBOSE=0 $run "$bin" -runs="${REPLAY_RUNS:-200}" -timeout=30 "$f" > "$out/replay.log" 2>&1; then
            sed -n '/observation\|check failed/,/during:/p' "$out/replay.log" | head -n 12
            grep -m 1 '^SUMMARY' "$out/replay.log" || true
            echo "fuzz: $f FAILS (full output: $out/replay.log)"
            status=1
        else
            echo "fuzz: $f passes (${REPLAY_RUNS:-200} runs)"
        fi
    done
    exit $status
fi

# One fuzzing process (no -jobs/-workers): the machine is shared.
log=$out/fuzz_$which.log
ls "$out/artifacts" > "$out/artifacts.before" 2>/dev/null || true
echo "fuzz: $bin for ${seconds}s, working corpus $work, seeds $seeds_dir ($(ls $seeds_dir | wc -l) files)"
start=$(date +%s)
set +e
$run "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$work" $seeds_dir > "$log" 2>&1
rc=$?
set -e
elapsed=$(( $(date +%s) - start ))

# libFuzzer's own summary lines: the last status line and the stats.
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
[ -n "$runs" ] || runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
echo "fuzz: libFuzzer: ${last:-no status line}"
echo "fuzz: ${runs:-?} executions in ${elapsed}s (${rate:-?}/s); working corpus $(ls "$work" | wc -l) files"

if [ $rc -ne 0 ]; then
    echo "fuzz: FAILED (libFuzzer exit $rc); the end of $log:" >&2
    grep -v '^#[0-9]' "$log" | tail -n 60 >&2
    new=$(ls "$out/artifacts" | grep -vxF -f "$out/artifacts.before" || true)
    for a in $new; do
        echo "fuzz: input kept: $out/artifacts/$a; replay: sh tools/fuzz/run.sh --replay $out/artifacts/$a" >&2
    done
    exit 1
fi

if [ $merge = 1 ]; then
    before=$(ls $seeds_dir | wc -l)
    $run "$bin" -merge=1 $seeds_dir "$work" > "$out/merge.log" 2>&1 ||
        { tail -20 "$out/merge.log"; exit 1; }
    echo "fuzz: merged: $seeds_dir has $(ls $seeds_dir | wc -l) files (was $before)"
fi
echo "fuzz: no crash"
