#!/bin/sh
# compare_h264.sh BUILD_DIR [QP] [FRAMES] - the h264 example against x264.
#
# For CIF testsrc2 and mandelbrot clips made by ffmpeg, encodes with
# BUILD_DIR/examples/h264 and with x264 --preset ultrafast (same QP, no B
# frames, CAVLC, one thread), decodes both streams with ffmpeg and
# measures PSNR against the source with tools/yuv_psnr.c.  Prints one
# table row per clip and encoder.  Needs ffmpeg, x264 and cc.
set -eu

build=${1:?usage: sh tools/compare_h264.sh BUILD_DIR [QP] [FRAMES]}
qp=${2:-26}
frames=${3:-60}
sh "$(dirname "$0")/deps.sh" ffmpeg x264
command -v cc >/dev/null 2>&1 || { echo "compare_h264: cc is not installed"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/yuv_psnr" "$(dirname "$0")/yuv_psnr.c" -lm
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

printf '| clip | encoder | bits | PSNR-Y (dB) | PSNR (dB) | fps |\n| --- | --- | --- | --- | --- | --- |\n'
for src in testsrc2 mandelbrot; do
    ffmpeg -v error -y -f lavfi -i "$src=size=352x288:rate=25" -frames:v "$frames" -pix_fmt yuv420p "$dir/in.y4m"
    ffmpeg -v error -y -i "$dir/in.y4m" -f rawvideo -pix_fmt yuv420p "$dir/in.yuv"

    line=$("$build/examples/h264" --input="$dir/in.y4m" --output="$dir/k.264" --qp="$qp" --runs=3 2>/dev/null)
    ffmpeg -v error -y -i "$dir/k.264" -f rawvideo -pix_fmt yuv420p "$dir/k.yuv"
    p=$("$dir/yuv_psnr" 352 288 "$dir/in.yuv" "$dir/k.yuv")
    printf '| %s | kpn h264 (1 runner / 2 runners) | %s | %s | %s | %s / %s |\n' "$src" \
        "$(wc -c <"$dir/k.264" | awk '{print $1 * 8}')" "$(field psnr_y "$p")" "$(field psnr "$p")" \
        "$(field fps_1 "$line")" "$(field fps "$line")"

    x=$(x264 --preset ultrafast --qp "$qp" --bframes 0 --no-cabac --threads 1 -o "$dir/x.264" "$dir/in.y4m" 2>&1 | \
        sed -n 's/.*encoded [0-9]* frames, \([0-9.]*\) fps.*/\1/p')
    ffmpeg -v error -y -i "$dir/x.264" -f rawvideo -pix_fmt yuv420p "$dir/x.yuv"
    p=$("$dir/yuv_psnr" 352 288 "$dir/in.yuv" "$dir/x.yuv")
    printf '| %s | x264 ultrafast | %s | %s | %s | %s |\n' "$src" \
        "$(wc -c <"$dir/x.264" | awk '{print $1 * 8}')" "$(field psnr_y "$p")" "$(field psnr "$p")" "$x"
done
