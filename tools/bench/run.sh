#!/bin/sh
# make bench: the papers' sweeps, scaled to this machine.  Runs the
# examples, keeps each one's last line as a CSV row under build/bench/,
# then draws the plots into docs/bench/ (gnuplot, PNG).
# Usage: tools/bench/run.sh   (from the top of the tree, after make examples
# for both ports)
set -eu
out=build/bench
mkdir -p "$out" docs/bench
machine="$(uname -m), $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"
printf '%s\n' "$machine" > "$out/machine.txt"
echo "bench: $machine" >&2

# csv FILE KEY...: append the last line's KEY values as one CSV row (the
# header is written when the file is new).
csv() {
    name=$1
    file=$out/$1; shift
    line=$(cat)
    [ -f "$file" ] || (IFS=,; echo "$*") > "$file"
    row=""
    for k in "$@"; do
        v=$(printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$k=//p" | head -n 1)
        row="${row:+$row,}$v"
    done
    echo "$row" >> "$file"
    echo "  $name: $row" >&2
}
last() { "$@" 2>/dev/null | tail -n 1; }

rm -f "$out"/*.csv

echo "bench: ring (ns per hop against ring size, both ports)" >&2
for port in amd64 posix; do
    for procs in 10 100 1000 10000; do
        last build/$port/examples/ring --procs=$procs --trips=$((1000000 / procs)) --runs=5 |
            csv ring.csv port procs ns_per_hop
    done
done

echo "bench: pipeline (speedup on 2 runners against work division d)" >&2
for d in 100 1000 10000 100000; do
    last build/amd64/examples/pipeline --d=$d --runners=2 --runs=3 |
        csv pipeline.csv d wall_1 wall_R speedup msgs_per_s
done

if [ -x build/amd64/examples/aes ]; then
    echo "bench: aes (throughput against workers n, 64 MiB, 4 passes)" >&2
    for k in 26 24 22 20 18 16 15; do
        for r in 1 2; do
            last build/amd64/examples/aes --b=26 --k=$k --passes=4 --runners=$r --runs=3 |
                csv aes.csv n runners mbps seq_mbps ratio verified
        done
    done
fi

if [ -x build/amd64/examples/h264 ]; then
    echo "bench: h264 (fps and 2-runner speedup against workers w)" >&2
    for w in 1 8 64 512; do
        last build/amd64/examples/h264 --w=$w --runners=2 |
            csv h264.csv w runners fps speedup checksum
    done
fi

if [ -x build/amd64/examples/random ]; then
    echo "bench: random (speedup and detections per second against d)" >&2
    for preset in RND-A RND-B; do
        for d in 100 1000 10000 100000; do
            last build/amd64/examples/random --preset=$preset --d=$d --runners=2 --runs=3 |
                csv random.csv preset d speedup detections_per_s work_ok
        done
    done
fi

echo "bench: soak (10 000 processes, 20 000 channels, 10^8 messages, 2 runners)" >&2
build/amd64/examples/soak --runners=2 2>/dev/null | tail -n 1 |
    csv soak.csv procs chans runners sends messages received wall msgs_per_s exact

if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "dir='$out'; outdir='docs/bench'; machine='$machine'" tools/bench/plots.gp
    echo "bench: plots in docs/bench/, data in $out/" >&2
else
    echo "bench: gnuplot missing (apt-get install gnuplot-nox): data in $out/, no plots" >&2
fi
