#!/bin/sh
# check_h264.sh BUILD_DIR - the H.264 example against a real decoder.
#
# Generates a short CIF clip with ffmpeg, encodes it with
# BUILD_DIR/examples/h264 (on 1 and 2 runners, w=3), decodes the stream
# with ffmpeg and compares the decoded pictures with the encoder's
# --recon byte for byte.  Prints one line; exits 1 on any mismatch or
# decoder message, 0 (with "skipped") when ffmpeg is not installed.
set -u

build=${1:?usage: sh tools/check_h264.sh BUILD_DIR}
bin=$build/examples/h264
if ! command -v ffmpeg >/dev/null 2>&1; then
    echo "check_h264: skipped: ffmpeg not installed"
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "check_h264: FAILED: $bin not built"
    exit 1
fi
field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

status=0
for src in testsrc2 mandelbrot; do
    ffmpeg -v error -y -f lavfi -i "$src=size=352x288:rate=25" -frames:v 12 -pix_fmt yuv420p \
        "$dir/$src.y4m" || { echo "check_h264: FAILED: ffmpeg could not make the $src clip"; exit 1; }
    if ! line=$("$bin" --input="$dir/$src.y4m" --output="$dir/$src.264" --recon="$dir/$src.yuv" \
                  --qp=26 --w=3 --runners=2 --runs=1 2>"$dir/log"); then
        cat "$dir/log"
        echo "check_h264: FAILED: the encoder failed on $src"
        status=1
        continue
    fi
    errors=$(ffmpeg -v error -y -i "$dir/$src.264" -f rawvideo -pix_fmt yuv420p "$dir/$src.dec.yuv" 2>&1)
    if [ -n "$errors" ]; then
        echo "$errors"
        echo "check_h264: FAILED: ffmpeg reported errors decoding the $src stream"
        status=1
    elif ! cmp -s "$dir/$src.yuv" "$dir/$src.dec.yuv"; then
        echo "check_h264: FAILED: ffmpeg's decoding of the $src stream differs from --recon"
        status=1
    else
        echo "check_h264: ok: $src, 12 CIF frames: ffmpeg decodes the stream to exactly --recon" \
             "($(field bits) bits, PSNR $(field psnr) dB, verified=$(field verified))"
        [ "$(field verified)" = 1 ] || { echo "check_h264: FAILED: streams differ between runs"; status=1; }
    fi
done
exit $status
