#!/bin/sh
# test_qemu_riscv.sh - build the target conformance firmware from
# test/target/ for RISC-V and run it under QEMU's virt machine, in
# machine mode, with semihosting output.
#
#   sh tools/test_qemu_riscv.sh [BOARD...]    (default: all twelve below)
#
#   rv32imac      RV32, ilp32: no FPU (nor has the core QEMU emulates)
#   rv32imafc     RV32 with F, ilp32f: fs0-fs11 (32 bits) and fcsr per process
#   rv32imafdc    RV32 with F and D, ilp32d: fs0-fs11 64 bits wide on RV32
#   rv64imac      RV64, lp64: no FPU
#   rv64imafc     RV64 with F, lp64f: 32-bit fs0-fs11 beside 64-bit s0-s11
#   rv64gc        RV64 with F and D, lp64d: fs0-fs11 (64 bits) and fcsr
#   BOARD:O0      each of the six built unoptimised, as a debug build is:
#                 the port's stack minimum for -O0, whose process frames
#                 are several times deeper
#
# The six are the six frames port/riscv/switch_riscv.S lays out.
# Like tools/test_qemu.sh for Cortex-M: each test/target/test_*.c is a
# Unity-idiom file, tools/qemu/unity.h the adapter, and
# tools/qemu/gen_runner.sh writes the runner.  The core, port/riscv/,
# the firmware example's start-up, trap entry, CLINT access and memcpy
# and memset (examples/firmware/riscv/: the toolchain has no C library)
# and tools/qemu/riscv/ (the tick and the trap handler the tests want)
# are compiled for the board and run with a time limit.  Each
# board ends with "N passed, N failed"; the script fails if a board
# failed, timed out or printed no total.  Needs riscv64-unknown-elf-gcc
# and qemu-system-riscv32/64 (sh tools/deps.sh cross qemu-riscv installs them).
set -eu

BOARDS=${*:-"rv32imac rv32imafc rv32imafdc rv64imac rv64imafc rv64gc \
 rv32imac:O0 rv32imafc:O0 rv32imafdc:O0 rv64imac:O0 rv64imafc:O0 rv64gc:O0"}
OUT=build/qemu-riscv

for tool in riscv64-unknown-elf-gcc qemu-system-riscv32 qemu-system-riscv64; do
    command -v $tool >/dev/null 2>&1 || { echo "test_qemu_riscv: $tool is missing (sh tools/deps.sh cross qemu-riscv)"; exit 1; }
done

# -march, -mabi, and QEMU's CPU: the boards without an FPU run on a core
# without one, so a stray FP instruction traps as it would on silicon.
# GCC 12 wants Zicsr named (ISA spec 20191213); F implies it.
flags_for() {
    case ${1%%:*} in
    rv32imac) echo "-march=rv32imac_zicsr -mabi=ilp32" ;;
    rv32imafc) echo "-march=rv32imafc_zicsr -mabi=ilp32f" ;;
    rv32imafdc) echo "-march=rv32imafdc_zicsr -mabi=ilp32d" ;;
    rv64imac) echo "-march=rv64imac_zicsr -mabi=lp64 -mcmodel=medany" ;;
    rv64imafc) echo "-march=rv64imafc_zicsr -mabi=lp64f -mcmodel=medany" ;;
    rv64gc) echo "-march=rv64gc -mabi=lp64d -mcmodel=medany" ;;
    *) echo "test_qemu_riscv: unknown board $1" >&2; exit 1 ;;
    esac
}
qemu_for() {
    case ${1%%:*} in
    rv32imac) echo "qemu-system-riscv32 -cpu rv32,f=off,d=off" ;;
    rv32imafc) echo "qemu-system-riscv32 -cpu rv32,d=off" ;;
    rv32imafdc) echo "qemu-system-riscv32 -cpu rv32" ;;
    rv64imac) echo "qemu-system-riscv64 -cpu rv64,f=off,d=off" ;;
    rv64imafc) echo "qemu-system-riscv64 -cpu rv64,d=off" ;;
    rv64gc) echo "qemu-system-riscv64 -cpu rv64" ;;
    esac
}

# the whole firmware at one level, as a project builds it
opt_for() {
    case $1 in
    *:O0) echo "-O0" ;;
    *) echo "-Os" ;;
    esac
}

CFLAGS_COMMON="-std=c99 -Wall -Wextra -Werror -g -ffreestanding -ffunction-sections -fdata-sections \
 -Iinclude -Iport -Isrc -Itest -Itest/target -Itools/qemu -Itools/qemu/riscv -Iexamples/firmware/riscv"
TESTS=$(ls test/target/test_*.c)

status=0
for board in $BOARDS; do
    arch=$(flags_for "$board")
    opt=$(opt_for "$board")
    qemu=$(qemu_for "$board")
    # GCC 12 picks no multilib for a -march naming _zicsr, and would
    # link the default (RV64, lp64d) libgcc: ask without it
    # shellcheck disable=SC2046
    libgcc=$(riscv64-unknown-elf-gcc $(echo "$arch" | sed 's/_zicsr//') -print-libgcc-file-name)
    d=$OUT/$(echo "$board" | tr : -)
    rm -rf "$d"
    mkdir -p "$d"
    # shellcheck disable=SC2086
    sh tools/qemu/gen_runner.sh "$board" $TESTS >"$d/runner.c"
    # memcpy and memset are loops GCC would turn back into calls to
    # themselves: not in that file
    # shellcheck disable=SC2086
    riscv64-unknown-elf-gcc $arch $opt $CFLAGS_COMMON -fno-tree-loop-distribute-patterns \
        -c examples/firmware/riscv/libc.c -o "$d/libc.o"
    # shellcheck disable=SC2086
    riscv64-unknown-elf-gcc $arch $opt $CFLAGS_COMMON \
        src/*.c port/riscv/port_riscv.c port/riscv/switch_riscv.S \
        examples/firmware/riscv/crt0.S tools/qemu/riscv/callee_saved_riscv.S tools/qemu/riscv/startup_riscv.c tools/qemu/unity_semihost.c \
        $TESTS "$d/runner.c" "$d/libc.o" \
        -nostdlib -nostartfiles "$libgcc" -Wl,--gc-sections -static \
        -T tools/qemu/riscv/link_riscv.ld -Wl,--no-warn-rwx-segments -Wl,-Map,"$d/firmware.map" -o "$d/firmware.elf"
    echo "== target tests on $board ($arch $opt)"
    # shellcheck disable=SC2086
    sh tools/qemu/run_firmware.sh "$d" "$board" $qemu -machine virt -bios none || status=1
done
exit $status
