#!/bin/sh
# demo_h264.sh BUILD_DIR OUTDIR - the H.264 example end to end.
#
# Makes a 60-frame CIF clip with ffmpeg (testsrc2), encodes it with
# BUILD_DIR/examples/h264 (1 runner against 2), decodes the stream with
# ffmpeg, checks the decoded pictures equal --recon byte for byte, and
# writes the first and last source and decoded frames as PNG into OUTDIR.
# Prints a summary; exits 1 on a mismatch, 0 with "skipped" without ffmpeg.
set -u

build=${1:?usage: sh tools/demo_h264.sh BUILD_DIR OUTDIR}
out=${2:?usage: sh tools/demo_h264.sh BUILD_DIR OUTDIR}
bin=$build/examples/h264
frames=60
command -v ffmpeg >/dev/null 2>&1 || { echo "demo_h264: skipped: ffmpeg not installed"; exit 0; }
[ -x "$bin" ] || { echo "demo_h264: $bin not built"; exit 1; }
mkdir -p "$out" || exit 1
field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

ffmpeg -v error -y -f lavfi -i testsrc2=size=352x288:rate=25 -frames:v $frames -pix_fmt yuv420p \
    "$out/clip.y4m" || exit 1
line=$("$bin" --input="$out/clip.y4m" --output="$out/clip.264" --recon="$out/recon.yuv" \
       --qp=26 --runners=2 --w=2 --runs=5) || { echo "demo_h264: the encoder failed"; exit 1; }
errors=$(ffmpeg -v error -y -i "$out/clip.264" -f rawvideo -pix_fmt yuv420p "$out/decoded.yuv" 2>&1)
if [ -n "$errors" ] || ! cmp -s "$out/recon.yuv" "$out/decoded.yuv"; then
    echo "$errors"
    echo "demo_h264: FAILED: ffmpeg's decoding differs from the encoder's reconstruction"
    exit 1
fi
last=$((frames - 1))
ffmpeg -v error -y -i "$out/clip.y4m" -vf "select=eq(n\,0)" -frames:v 1 "$out/source-first.png"
ffmpeg -v error -y -i "$out/clip.y4m" -vf "select=eq(n\,$last)" -frames:v 1 "$out/source-last.png"
ffmpeg -v error -y -i "$out/clip.264" -vf "select=eq(n\,0)" -frames:v 1 "$out/decoded-first.png"
ffmpeg -v error -y -i "$out/clip.264" -vf "select=eq(n\,$last)" -frames:v 1 "$out/decoded-last.png"

echo "demo_h264: $frames CIF frames (testsrc2) at QP 26: $(field bits) bits," \
     "PSNR $(field psnr) dB (luma $(field psnr_y) dB)"
echo "demo_h264: $(field fps) fps on 2 runners, speedup $(field speedup) over 1 runner" \
     "(medians of 5; $(field procs) processes), verified=$(field verified)"
echo "demo_h264: ffmpeg decodes clip.264 to exactly the encoder's reconstruction;" \
     "first and last frames in $out/*.png"
