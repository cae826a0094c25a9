#!/bin/sh
# test_qemu.sh - build the target conformance firmware from test/target/
# and run it under QEMU on Cortex-M boards, with semihosting output.
#
#   sh tools/test_qemu.sh [BOARD...]      (default: all six below)
#
#   mps2-an386      Cortex-M4F: the port's FP path (s16-s31, FPSCR per process)
#   lm3s6965evb     Cortex-M3: no FPU
#   mps2-an386:v6m  an ARMv6-M build (-mcpu=cortex-m0) on the M4's core:
#                   the port's ARMv6-M switch and instruction set, though
#                   not what only a v6-M core does (it would fault on an
#                   unaligned access, which the M4 makes)
#   mps2-an505      Cortex-M33 with FPU (ARMv8-M Mainline), in the secure
#                   state it starts in
#   mps2-an505:m23  an ARMv8-M Baseline build (-mcpu=cortex-m23) on the
#                   M33's core, of whose instructions Baseline's are a part
#   mps2-an386:O0   the M4F built unoptimised, as a debug build is: the
#                   port's stack minimum for -O0, whose process frames
#                   are several times deeper
#
# Each test/target/test_*.c is a Unity-idiom file; tools/qemu/unity.h is
# the adapter, tools/qemu/gen_runner.sh writes the runner.  The core and
# the port are compiled for the board, linked with tools/qemu/startup.c and link.ld,
# and run with a time limit.  Each board ends with "N passed, N failed";
# the script fails if a board failed, timed out or printed no total.
# Needs arm-none-eabi-gcc (with newlib) and qemu-system-arm
# (sh tools/deps.sh cross qemu installs them).
set -eu

BOARDS=${*:-"mps2-an386 lm3s6965evb mps2-an386:v6m mps2-an505 mps2-an505:m23 mps2-an386:O0"}
OUT=build/qemu

for tool in arm-none-eabi-gcc qemu-system-arm; do
    command -v $tool >/dev/null 2>&1 || { echo "test_qemu: $tool is missing (sh tools/deps.sh cross qemu)"; exit 1; }
done

flags_for() {
    case $1 in
    mps2-an386|mps2-an386:O0) echo "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" ;;
    mps2-an386:v6m) echo "-mcpu=cortex-m0 -mthumb" ;;
    mps2-an505) echo "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16" ;;
    mps2-an505:m23) echo "-mcpu=cortex-m23 -mthumb" ;;
    lm3s6965evb) echo "-mcpu=cortex-m3 -mthumb" ;;
    *) echo "test_qemu: unknown board $1" >&2; exit 1 ;;
    esac
}

# the whole firmware at one level, as a project builds it
opt_for() {
    case $1 in
    *:O0) echo "-O0" ;;
    *) echo "-Os" ;;
    esac
}

CFLAGS_COMMON="-std=c99 -Wall -Wextra -Werror -g -ffunction-sections -fdata-sections \
 -Iinclude -Iport -Isrc -Itest -Itest/target -Itools/qemu"
TESTS=$(ls test/target/test_*.c)

status=0
for board in $BOARDS; do
    arch="$(flags_for "$board") $(opt_for "$board")"
    machine=${board%%:*}
    d=$OUT/$(echo "$board" | tr : -)
    rm -rf "$d"
    mkdir -p "$d"
    # the board's memory: mps2-an505 starts secure, with its code and
    # RAM at their secure aliases
    case $machine in
    mps2-an505) sed 's/ORIGIN = 0x00000000/ORIGIN = 0x10000000/; s/ORIGIN = 0x20000000/ORIGIN = 0x38000000/' \
        tools/qemu/link.ld >"$d/link.ld" ;;
    *) cp tools/qemu/link.ld "$d/link.ld" ;;
    esac
    # shellcheck disable=SC2086
    sh tools/qemu/gen_runner.sh "$board" $TESTS >"$d/runner.c"
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $arch $CFLAGS_COMMON \
        src/*.c port/cortex-m/port_cortexm.c port/cortex-m/switch_cortexm.S tools/qemu/callee_saved_arm.S \
        tools/qemu/startup.c tools/qemu/unity_semihost.c $TESTS "$d/runner.c" \
        -nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections \
        -T "$d/link.ld" -Wl,--no-warn-execstack -Wl,-Map,"$d/firmware.map" -o "$d/firmware.elf"
    echo "== target tests on $board ($arch)"
    sh tools/qemu/run_firmware.sh "$d" "$board" qemu-system-arm -M "$machine" || status=1
done
exit $status
