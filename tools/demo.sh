#!/bin/sh
# make demo: run the AES and H.264 examples with sensible defaults, show
# what ran, what was checked and how fast.  Usage: tools/demo.sh BUILD_DIR
set -eu
build=${1:-build/amd64}
bin=$build/examples
runners=$(nproc 2>/dev/null || echo 2)
[ "$runners" -gt 4 ] && runners=4
[ "$runners" -lt 2 ] && runners=2

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

run() {
    name=$1; shift
    echo "== $name: $*" >&2
    line=$("$name" "$@" | tail -n 1) || { echo "demo: $name failed" >&2; exit 1; }
    echo "   $line" >&2
    printf '%s\n' "$line"
}

aes=$(run $build/bench/aes --b=24 --k=14 --passes=2 --runners="$runners" --runs=3)
h264=$(run $bin/h264 --runners="$runners" --w=8)

echo
echo "summary ($runners runners)"
printf '  %-6s %-55s %s\n' aes "AES-128-CTR, 16 MiB in 1024 chunks, checked against one sequential encryption" \
    "$(field "$aes" mbps) MB/s, $(field "$aes" ratio)x sequential, verified=$(field "$aes" verified)"
printf '  %-6s %-55s %s\n' h264 "encoder network with feedback, same checksum on 1 and $runners runners" \
    "$(field "$h264" fps) fps, speedup $(field "$h264" speedup), checksum $(field "$h264" checksum)"
[ "$(field "$aes" verified)" = 1 ] || { echo "demo: AES output differs from the sequential encryption" >&2; exit 1; }
