#!/bin/sh
# check_doc_figures.sh - the stack figures docs/porting.md quotes, against
# what the bare-metal targets measure now.
#
#   sh tools/check_doc_figures.sh          (make check-doc-figures)
#
# Each figure is printed by a program under QEMU: the target tests'
# process peak and exception frame on every Cortex-M and RISC-V board
# (tools/test_qemu.sh, tools/test_qemu_riscv.sh), and the firmware
# example's main stack and arena bounds (examples/firmware).  A change to
# the core moves them by a few bytes, and prose does not follow by
# itself: each sentence is rebuilt from the figures measured here and
# looked for, word for word, in the doc.  Prints each sentence it finds;
# fails on the first it does not.
set -u
doc=docs/porting.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
    log=$1
    shift
    "$@" >"$tmp/$log" 2>&1 || { cat "$tmp/$log"; echo "check_doc_figures: $* failed"; exit 1; }
}
run cm sh tools/test_qemu.sh
run rv sh tools/test_qemu_riscv.sh
run fw make --no-print-directory -C examples/firmware run
run fw32 make --no-print-directory -C examples/firmware run-riscv
run fw64 make --no-print-directory -C examples/firmware run-riscv RV64=1

# figures BOARD LOG: "PEAK FRAME GUARD MIN" from the board's line
#   stack: process peak P B + exception frame F B + guard G B <= KPN_STACK_MIN M B
figures() {
    awk -v b="== target tests on $1 (" '
        index($0, b) == 1 { on = 1; next }
        on && /^stack: process peak/ { print $4, $9, $13, $17; exit }
        /^== target tests on / { on = 0 }
    ' "$tmp/$2"
}

# main_stack LOG, arena LOG: the firmware's last lines
main_stack() { sed -n 's/.*main stack peak \([0-9]*\) bytes.*/\1/p' "$tmp/$1"; }
arena() { sed -n 's/^arena: \([0-9]*\) of .*/\1/p' "$tmp/$1"; }

want() {
    if grep -F -q -- "$1" "$doc"; then
        echo "check_doc_figures: ok: $1"
    else
        echo "check_doc_figures: $doc does not say, as measured now: $1"
        exit 1
    fi
}

same() {
    [ "$2" = "$3" ] || {
        echo "check_doc_figures: $doc says $1, but they measure '$2' and '$3'"
        exit 1
    }
}

# Cortex-M ("Stack minimum", "Calling kpn_run")
m4=$(figures mps2-an386 cm)
m3=$(figures lm3s6965evb cm)
m0=$(figures mps2-an386:v6m cm)
m33=$(figures mps2-an505 cm)
m23=$(figures mps2-an505:m23 cm)
o0=$(figures mps2-an386:O0 cm)
for f in "$m4" "$m3" "$m0" "$m33" "$m23" "$o0"; do
    [ -n "$f" ] || { cat "$tmp/cm"; echo "check_doc_figures: a Cortex-M board printed no stack line"; exit 1; }
done
# shellcheck disable=SC2086
set -- $m4
want "peak $1 bytes with FP live, plus a $2-byte exception frame, plus the $3-byte guard inside the stack: $(($1 + $2 + $3)), and $(($4 - $1 - $2 - $3)) bytes of margin: \`KPN_STACK_MIN\` is $4."
same "the M33 with FP is the same as the M4F" "$m33" "$m4"
# shellcheck disable=SC2086
set -- $m3
want "on the M3 the same process peaks at $1 bytes with a $2-byte frame"
same "ARMv6-M and the M23 peak alike" "$m0" "$m23"
# shellcheck disable=SC2086
set -- $m0
want "built for ARMv6-M or the M23 at $1 with a $2-byte frame"
# shellcheck disable=SC2086
set -- $o0
want "there the same process peaks at $1 bytes, which with the frame and the guard is $(($1 + $2 + $3)), and \`KPN_STACK_MIN\` is $4."
want "reaches $(main_stack fw) bytes down its main stack"

# RISC-V ("Interrupts", "Stack minimum", "A firmware to start from")
# rv_line SUFFIX: "RV32 P + F + G → M, with F ...; RV64 ..." for the six
# boards named with SUFFIX; the trap frames alone in $frames
rv_line() {
    sfx=$1
    line=
    frames=
    for b in rv32imac rv32imafc rv32imafdc rv64imac rv64imafc rv64gc; do
        f=$(figures "$b$sfx" rv)
        [ -n "$f" ] || { cat "$tmp/rv"; echo "check_doc_figures: $b$sfx printed no stack line"; exit 1; }
        # shellcheck disable=SC2086
        set -- $f
        case $b in
        rv32imac) line="RV32 $1 + $2 + $3 → $4"; frames="$2 bytes on RV32" ;;
        rv64imac) line="$line; RV64 $1 + $2 + $3 → $4"; frames="$frames; $2 on RV64" ;;
        *imafc) line="$line, with F $1 + $2 + $3 → $4"; frames="$frames, $2 with F" ;;
        *) line="$line, with D $1 + $2 + $3 → $4"; frames="$frames, $2 with D" ;;
        esac
    done
}
rv_line ""
want "$line."
want "$frames."
rv_line ":O0"
want "where the same figures are $line."
want "come to $(arena fw32) bytes on RV32 and $(arena fw64) on RV64"
want "reaches $(main_stack fw32) bytes on RV32 and $(main_stack fw64) on RV64 with D"
echo "check_doc_figures: every figure $doc quotes from the targets is what they measure"
