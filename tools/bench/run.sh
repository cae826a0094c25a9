#!/bin/sh
# make bench: the papers' sweeps, scaled to this machine.  Runs the
# drivers in build/PORT/bench/, keeps each one's last line as a CSV row
# under build/bench/, draws the plots into docs/bench/ (gnuplot, PNG) and
# writes the one table of headline figures, docs/figures.md.
# Usage: tools/bench/run.sh   (from the top of the tree, after
# make bench-bins for both ports); tools/bench/run.sh --table writes
# docs/figures.md again from the last sweep's data, running nothing.
set -eu
out=build/bench
mkdir -p "$out" docs/bench
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
compiler=$(${CC:-cc} --version 2>/dev/null | head -n 1)
machine="$(uname -m), $(nproc) cores, ${cpu:-unknown CPU}"
echo "bench: $machine; $compiler" >&2
[ "${1:-}" = --table ] || { printf '%s\n' "$machine" > "$out/machine.txt"
    cut -d ' ' -f 1-3 /proc/loadavg > "$out/load" 2>/dev/null || echo unknown > "$out/load"; }
started=$(date +%s)
table_only=0
[ "${1:-}" = --table ] && table_only=1

# value KEY: KEY's value in the line on stdin.
value() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }

# csv FILE KEY...: append the line's KEY values as one CSV row (the
# header is written when the file is new), and keep the line itself in
# FILE.lines for the figures table.
csv() {
    file=$out/$1; shift
    line=$(cat)
    [ -n "$line" ] || { echo "bench: no result line for $file" >&2; exit 1; }
    [ -f "$file" ] || (IFS=,; echo "$*") > "$file"
    row=""
    for k in "$@"; do
        row="${row:+$row,}$(printf '%s\n' "$line" | value "$k")"
    done
    echo "$row" >> "$file"
    printf '%s\n' "$line" >> "$file.lines"
    echo "  $(basename "$file"): $row" >&2
}

# last DRIVER ARGS...: the driver's result line (its progress on stderr
# goes to build/bench/log); a failing driver stops the sweep.
last() {
    "$@" 2>>"$out/log" | tail -n 1 || { echo "bench: $* failed (see $out/log)" >&2; exit 1; }
}

if [ $table_only = 0 ]; then
for port in amd64 posix; do
    for d in ring pipeline random soak aes; do
        [ -x "build/$port/bench/$d" ] || { echo "bench: build/$port/bench/$d missing (make bench-bins PORT=$port)" >&2; exit 1; }
    done
done
[ -x build/amd64/bench/coro_ring ] || { echo "bench: build/amd64/bench/coro_ring missing (make bench-bins)" >&2; exit 1; }

rm -f "$out"/*.csv "$out"/*.lines "$out/log"

echo "bench: ring (ns per hop against ring size, both ports; bare coroutines on the amd64 switch)" >&2
for port in amd64 posix; do
    for procs in 10 30 100 300 1000 3000 10000; do
        last build/$port/bench/ring --procs=$procs --trips=$((1000000 / procs)) --runs=5 |
            csv ring.csv port procs ns_per_hop
    done
done
# the floor under the amd64 curve, and the machine's step from the core's
# own caches to what lies beyond them (benchmarks.md, "Large nets")
for procs in 10 30 100 300 1000 3000 10000; do
    last build/amd64/bench/coro_ring --procs=$procs --trips=$((1000000 / procs)) --runs=5 |
        csv coro_ring.csv procs ns_per_hop
done

echo "bench: ring at 1000 processes: resolver off and on, 1 and 500 tokens; 2 runners" >&2
for tokens in 1 500; do
    for resolve in 0 1; do
        last build/amd64/bench/ring --tokens=$tokens --trips=$((1000 / tokens + 1)) --resolve=$resolve --runs=5 |
            csv ring_resolve.csv tokens resolve ns_per_hop detections
    done
done
last build/amd64/bench/ring --runners=2 --trips=200 --runs=3 | csv ring_runners.csv runners ns_per_hop

echo "bench: pipeline (speedup on 2 runners against work division d)" >&2
for d in 100 1000 10000 100000; do
    last build/amd64/bench/pipeline --d=$d --runners=2 --runs=3 |
        csv pipeline.csv d wall_1 wall_R speedup msgs_per_s port
done
last build/posix/bench/pipeline --d=1000 --runners=2 --runs=3 |
    csv pipeline_posix.csv d wall_1 wall_R speedup msgs_per_s port

echo "bench: aes (throughput against workers n, 64 MiB, 4 passes)" >&2
for k in 26 24 22 20 18 16 15; do
    for r in 1 2; do
        last build/amd64/bench/aes --b=26 --k=$k --passes=4 --runners=$r --runs=3 |
            csv aes.csv n runners mbps seq_mbps ratio verified
    done
done

# The H.264 example reports fps= and speedup= in its last line.  It is
# timed only where it is built and reads its source from --input: a CIF
# test clip made with ffmpeg, or the file H264_INPUT names.  Not fatal.
h264=build/amd64/examples/h264
if [ -x $h264 ] && $h264 --help 2>/dev/null | grep -q -- '--input'; then
    clip=${H264_INPUT:-$out/clip.y4m}
    [ -f "$clip" ] || ffmpeg -v error -y -f lavfi -i "testsrc=size=352x288:rate=25" -frames:v 100 \
        -pix_fmt yuv420p "$clip" 2>>"$out/log" || true
    if [ -f "$clip" ]; then
        echo "bench: h264 (fps and 2-runner speedup)" >&2
        line=$($h264 --input="$clip" --runners=2 2>>"$out/log" | tail -n 1) || line=""
        case $line in *fps=*) printf '%s\n' "$line" | csv h264.csv w runners fps speedup ;;
        *) echo "bench: h264 gave no result line; its row is left out" >&2 ;; esac
    fi
fi

echo "bench: random (speedup and detections per second against d)" >&2
for preset in RND-A RND-B; do
    for d in 100 1000 10000 100000; do
        last build/amd64/bench/random --preset=$preset --d=$d --runners=2 --runs=3 --replay=0 |
            csv random.csv preset d speedup detections_per_s work_ok
    done
done

echo "bench: soak (10 000 processes, 20 000 channels, 10^8 messages, 2 runners)" >&2
last build/amd64/bench/soak --runners=2 |
    csv soak.csv procs chans runners sends messages received wall msgs_per_s exact

if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "dir='$out'; outdir='docs/bench'; machine='$machine'" tools/bench/plots.gp
    echo "bench: plots in docs/bench/, data in $out/" >&2
else
    echo "bench: gnuplot missing (apt-get install gnuplot-nox): data in $out/, no plots" >&2
fi
echo $(( $(date +%s) - started )) > "$out/elapsed"
fi

# ------------------------------------------------------------ figures.md
# pick FILE KEY=VALUE... : the first kept line of FILE whose pairs include
# every KEY=VALUE given.
pick() {
    file=$out/$1.csv.lines; shift
    [ -f "$file" ] || return 0
    while IFS= read -r line; do
        ok=1
        for kv in "$@"; do
            case " $line " in *" $kv "*) ;; *) ok=0 ;; esac
        done
        [ $ok = 1 ] && { printf '%s\n' "$line"; return 0; }
    done < "$file"
}
get() { pick "$@" | value "$key"; }   # with $key set: that key of the picked line
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'; }

elapsed=$(cat "$out/elapsed")
{
    echo "<!-- Generated by \`make bench\` (tools/bench/run.sh); do not edit: run it again. -->"
    echo "# Figures"
    echo
    echo "Measured by \`make bench\` on $(date -u +%Y-%m-%d): $machine; $compiler, -O2; the sweeps took $((elapsed / 60)) min $((elapsed % 60)) s, starting at a load average of $(cat "$out/load" 2>/dev/null) (1, 5, 15 min; a load above the core count means other work shared the machine and the speedups understate kpn). Each figure is the median of the driver's own runs; comparisons (1 runner against 2, resolver on against off, kpn against sequential) come from runs on the same machine in the same sweep. The drivers are in \`bench/\`, the plots in [benchmarks.md](benchmarks.md)."
    echo
    echo "| benchmark | settings | figure | value |"
    echo "| --- | --- | --- | --- |"
    key=ns_per_hop
    a=$(get ring port=amd64 procs=1000); p=$(get ring port=posix procs=1000)
    echo "| ring | 1000 processes, 1 token, capacity 1, 1 runner, amd64 port | ns per hop | $a |"
    echo "| ring | the same, posix port (ucontext) | ns per hop | $p |"
    echo "| ring | posix / amd64 | ratio | $(ratio "$p" "$a") |"
    b=$(get coro_ring procs=1000)
    echo "| ring | bare coroutines on the amd64 switch (bench/coro_ring), 1000 in a ring | ns per hop | $b |"
    echo "| ring | 10000 processes / 1000: amd64 port; bare coroutines | ratio | $(ratio "$(get ring port=amd64 procs=10000)" "$a"); $(ratio "$(get coro_ring procs=10000)" "$b") |"
    for tokens in 1 500; do
        off=$(get ring_resolve tokens=$tokens resolve=0); on=$(get ring_resolve tokens=$tokens resolve=1)
        echo "| ring | 1000 processes, $tokens token(s), resolver off / on | ns per hop | $off / $on (on/off $(ratio "$on" "$off")) |"
    done
    echo "| ring | 1000 processes, 1 token, 2 runners | ns per hop | $(get ring_runners runners=2) |"
    key=speedup
    for d in 100 1000 10000 100000; do
        line=$(pick pipeline d=$d)
        echo "| pipeline | 50 stages, 2.5 CPU-s, d = $d, 2 runners against 1, amd64 | speedup | $(printf '%s\n' "$line" | value speedup) ($(printf '%s\n' "$line" | value msgs_per_s) messages/s) |"
    done
    echo "| pipeline | d = 1000, posix port | speedup | $(get pipeline_posix d=1000) |"
    for sel in "1 1" "2048 1" "4 2" "1024 2" "2048 2"; do
        set -- $sel
        line=$(pick aes n=$1 runners=$2)
        [ -n "$line" ] || continue
        echo "| AES-128-CTR | 64 MiB, 4 passes, n = $1 workers, $2 runner(s) | MB/s (sequential; ratio) | $(printf '%s\n' "$line" | value mbps) ($(printf '%s\n' "$line" | value seq_mbps); $(printf '%s\n' "$line" | value ratio)) |"
    done
    if [ -f "$out/h264.csv.lines" ]; then
        line=$(pick h264)
        if [ -n "${H264_INPUT:-}" ]; then what="$(basename "$H264_INPUT")"; else what="100 CIF frames of ffmpeg's testsrc"; fi
        echo "| H.264 encoder | $what, QP 26, 2 runners against 1 | fps (speedup) | $(printf '%s\n' "$line" | value fps) ($(printf '%s\n' "$line" | value speedup)) |"
    fi
    for preset in RND-A RND-B; do
        for d in 100 1000 10000 100000; do
            line=$(pick random preset=$preset d=$d)
            echo "| random network | $preset, d = $d, 2 runners against 1 | speedup (detections/s) | $(printf '%s\n' "$line" | value speedup) ($(printf '%s\n' "$line" | value detections_per_s)) |"
        done
    done
    line=$(pick soak)
    echo "| soak | $(printf '%s\n' "$line" | value procs) processes, $(printf '%s\n' "$line" | value chans) channels, $(printf '%s\n' "$line" | value messages) messages, 2 runners, books exact = $(printf '%s\n' "$line" | value exact) | messages/s | $(printf '%s\n' "$line" | value msgs_per_s) |"
} > docs/figures.md
echo "bench: docs/figures.md written; $elapsed s in all" >&2
