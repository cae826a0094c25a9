#!/bin/sh
# make demo: the AES and H.264 examples with sensible defaults: what ran,
# what was checked and how fast.  Usage: tools/demo.sh BUILD_DIR
set -eu
build=${1:-build/amd64}
runners=$(nproc 2>/dev/null || echo 2)
[ "$runners" -gt 4 ] && runners=4
[ "$runners" -lt 2 ] && runners=2

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

echo "== AES-128-CTR: 16 MiB in 1024 chunks, one worker process each, against one sequential encryption" >&2
aes=$($build/bench/aes --b=24 --k=14 --passes=2 --runners="$runners" --runs=3 | tail -n 1) ||
    { echo "demo: aes failed" >&2; exit 1; }
echo "== H.264: a real encoder as a network, decoded by ffmpeg" >&2
h264=$(sh tools/demo_h264.sh "$build" build/demo/h264) || { echo "$h264"; echo "demo: h264 failed" >&2; exit 1; }

echo
echo "summary ($runners runners)"
printf '  aes   %s MB/s, %sx the sequential encryption, byte for byte equal: verified=%s\n' \
    "$(field "$aes" mbps)" "$(field "$aes" ratio)" "$(field "$aes" verified)"
printf '%s\n' "$h264" | sed 's/^demo_h264: /  h264  /'
[ "$(field "$aes" verified)" = 1 ] || { echo "demo: AES output differs from the sequential encryption" >&2; exit 1; }
