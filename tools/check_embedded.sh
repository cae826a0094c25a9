#!/bin/sh
# check_embedded.sh - the portable core and the bare-metal ports as
# firmware builds them, and the footprint figures from a real target build.
#
#   sh tools/check_embedded.sh
#
# 1. The core alone for Cortex-M4F, Cortex-M3, Cortex-M0 (ARMv6-M), RV32
#    and RV64, at -Os, with and without -ffreestanding (RISC-V: only with,
#    the toolchain has no libc headers): it must need nothing
#    from libc but memcpy and memset (port functions and the compiler's
#    own runtime aside), and no allocator.
# 2. The Cortex-M port, with the core, for M4F, M3 and M0, and for the
#    ARMv8-M M33 (with FPU) and M23; the RISC-V port for RV32 and RV64,
#    each without FP, with F and with D; and port/template/, compile.
# 2b. clang for the Cortex-M0 (ARMv6-M, no LDREX/STREX, where clang would
#    call __atomic_* functions that nothing provides): the core, both
#    ways, must need none of them, and the core and the port link into
#    tools/qemu/footprint.c, which runs under QEMU.  Skipped, with a
#    line that says so, where clang, its ARM target or newlib's headers
#    are missing.
# 3. Sizes on the Cortex-M4F: .text + .rodata of every core object, and
#    of the core as linked into tools/qemu/footprint.c (a pipeline with
#    the resolver, --gc-sections), read from the linker map.
# 4. That program runs under QEMU (mps2-an386) and prints what the
#    library says a process and a channel cost; the figures are checked
#    against the budget: <= 96 B a process besides its stack, <= 48 B a
#    channel besides its ring, <= 6144 B of core code and constants.
set -eu

WARN="-std=c99 -pedantic -Wall -Wextra -Werror"
OUT=build/embedded
rm -rf "$OUT"
mkdir -p "$OUT"
LIBC_OK='^(memcpy|memset|kpn_port_[a-z_]+|kpni_port_[a-z_]+|__aeabi_[a-z0-9_]+|__gnu_[a-z0-9_]+|__[a-z]+di[0-9]|__atomic_[a-z_0-9]+|__sync_[a-z_0-9]+)$'
ALLOC='malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|mmap|sbrk|_sbrk|_malloc_r|_free_r'
status=0

core() { # name cc flags tag extra [nm]
    d=$OUT/$1$4
    mkdir -p "$d"
    for f in src/*.c; do
        # shellcheck disable=SC2086
        $2 $WARN $3 $5 -Os -ffunction-sections -fdata-sections -Iinclude -Iport -c "$f" -o "$d/$(basename "$f" .c).o"
    done
    nm=${6:-${2%gcc}nm}
    undefined=$($nm -u "$d"/*.o | awk 'NF==2 {print $2}' | sort -u | grep -v '^kpni_' | grep -v '^kpn_' || true)
    bad=$(printf '%s\n' "$undefined" | grep -Ev "$LIBC_OK" | grep -v '^$' || true)
    alloc=$(printf '%s\n' "$undefined" | grep -Ew "$ALLOC" || true)
    printf '== %s%s: needs %s\n' "$1" "$4" "$(printf '%s\n' "$undefined" | grep -Ev '^kpn_port_' | tr '\n' ' ')"
    if [ -n "$bad$alloc" ]; then
        echo "check-embedded: $1$4 core needs from libc: $bad $alloc"
        status=1
    fi
}

M4F="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
M3="-mcpu=cortex-m3 -mthumb"
M0="-mcpu=cortex-m0 -mthumb"
RV="-march=rv64imac -mabi=lp64"
RV32="-march=rv32imac -mabi=ilp32"
for v in "" "-ffreestanding"; do
    tag=""; [ -n "$v" ] && tag="-freestanding"
    core cortex-m4f arm-none-eabi-gcc "$M4F" "$tag" "$v"
    core cortex-m3 arm-none-eabi-gcc "$M3" "$tag" "$v"
    core cortex-m0 arm-none-eabi-gcc "$M0" "$tag" "$v"
    # Debian's riscv64-unknown-elf-gcc comes without a C library, so
    # <stdint.h> exists only freestanding
    [ -n "$v" ] && core rv64 riscv64-unknown-elf-gcc "$RV" "$tag" "$v"
    [ -n "$v" ] && core rv32 riscv64-unknown-elf-gcc "$RV32" "$tag" "$v"
done

M33F="-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16"
M23="-mcpu=cortex-m23 -mthumb"
core cortex-m33f arm-none-eabi-gcc "$M33F" "" ""
core cortex-m23 arm-none-eabi-gcc "$M23" "" ""
for t in "cortex-m4f:$M4F" "cortex-m3:$M3" "cortex-m0:$M0" "cortex-m33f:$M33F" "cortex-m23:$M23"; do
    name=${t%%:*}; fl=${t#*:}
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $WARN $fl -Os -Iinclude -Iport -c port/cortex-m/port_cortexm.c -o "$OUT/port_$name.o"
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $fl -c port/cortex-m/switch_cortexm.S -o "$OUT/switch_$name.o"
done
echo "== port/cortex-m builds for M4F, M3, M0 (ARMv6-M), M33F and M23 (ARMv8-M)"
for t in "rv32:-march=rv32imac -mabi=ilp32" "rv32f:-march=rv32imafc -mabi=ilp32f" \
         "rv32d:-march=rv32imafdc -mabi=ilp32d" "rv64:-march=rv64imac -mabi=lp64" \
         "rv64f:-march=rv64imafc -mabi=lp64f" "rv64d:-march=rv64gc -mabi=lp64d"; do
    name=${t%%:*}; fl=${t#*:}
    # shellcheck disable=SC2086
    riscv64-unknown-elf-gcc $WARN $fl -ffreestanding -Os -Iinclude -Iport -c port/riscv/port_riscv.c -o "$OUT/port_$name.o"
    # shellcheck disable=SC2086
    riscv64-unknown-elf-gcc $fl -c port/riscv/switch_riscv.S -o "$OUT/switch_$name.o"
done
echo "== port/riscv builds for RV32 and RV64, each without FP, with F and with D"
clang_m0() {
    command -v clang >/dev/null 2>&1 || {
        echo "== clang for cortex-m0: skipped, no clang"; return 0; }
    clang --print-targets 2>/dev/null | grep -Eq '^ *thumb +-' || {
        echo "== clang for cortex-m0: skipped, this clang has no ARM target (clang --print-targets)"; return 0; }
    # newlib's headers, where arm-none-eabi-gcc finds them
    # shellcheck disable=SC2086
    inc=$(printf '#include <string.h>\n' | arm-none-eabi-gcc $M0 -xc -M - 2>/dev/null |
          awk '{for (i = 1; i <= NF; ++i) if ($i ~ /\/string\.h$/) {print $i; exit}}' || true)
    [ -n "$inc" ] || {
        echo "== clang for cortex-m0: skipped, no newlib headers for arm-none-eabi"; return 0; }
    cc="clang --target=thumbv6m-none-eabi"
    fl="$M0 -mfloat-abi=soft -isystem ${inc%/string.h}"
    for v in "" "-ffreestanding"; do
        tag=""; [ -n "$v" ] && tag="-freestanding"
        core cortex-m0-clang "$cc" "$fl" "$tag" "$v" arm-none-eabi-nm
        atomics=$(arm-none-eabi-nm -u "$OUT/cortex-m0-clang$tag"/*.o | awk 'NF==2 {print $2}' |
                  grep '^__atomic_' | sort -u | tr '\n' ' ' || true)
        if [ -n "$atomics" ]; then
            echo "check-embedded: clang's cortex-m0$tag core calls $atomics, which nothing provides"
            status=1
        fi
    done
    d=$OUT/cortex-m0-clang
    # shellcheck disable=SC2086
    $cc $WARN $fl -Os -Iinclude -Iport -c port/cortex-m/port_cortexm.c -o "$d/port.o"
    # shellcheck disable=SC2086
    $cc $fl -c port/cortex-m/switch_cortexm.S -o "$d/switch.o"
    # the program with clang too: its enums are a word, GCC's for
    # arm-none-eabi as small as their values, and kpn_cfg holds two.
    # What the link takes from libgcc and newlib (division, memcpy,
    # memset) passes no enum, so the linker's note on their size is off.
    mkdir -p "$d/prog"
    for f in tools/qemu/footprint.c tools/qemu/startup.c tools/qemu/unity_semihost.c; do
        # shellcheck disable=SC2086
        $cc $fl -std=c99 -Wall -Werror -Os -ffunction-sections -fdata-sections -Iinclude \
            -c "$f" -o "$d/prog/$(basename "$f" .c).o"
    done
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $M0 "$d"/prog/*.o "$d"/[a-z]*.o -nostartfiles --specs=nano.specs --specs=nosys.specs \
        -Wl,--gc-sections -Wl,--no-warn-execstack -Wl,--no-enum-size-warning -T tools/qemu/link.ld \
        -o "$d/footprint.elf"
    # the ARMv6-M build on the M4's core, as tools/test_qemu.sh runs it
    timeout 30 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$d/footprint.elf" > "$d/output.txt" 2>&1 || {
        cat "$d/output.txt"; echo "check-embedded: clang's cortex-m0 footprint program failed"; status=1; return 0; }
    echo "== clang for cortex-m0: core and port/cortex-m link into the footprint program, which runs under QEMU"
}
clang_m0

# shellcheck disable=SC2086
arm-none-eabi-gcc $WARN $M4F -Os -Iinclude -Iport -c port/template/port_template.c -o "$OUT/port_template.o"
${CC:-cc} $WARN -Os -Iinclude -Iport -c port/template/port_template.c -o "$OUT/port_template_host.o"
echo "== port/template builds (Cortex-M4F and host)"

# Sizes: every core object, then the core as linked into the footprint program.
sum_objects() {
    arm-none-eabi-size -A "$@" | awk '$1 ~ /^\.text|^\.rodata/ {s += $2} END {print s + 0}'
}
all=$(sum_objects "$OUT"/cortex-m4f/[a-z]*.o)
d=$OUT/report0
mkdir -p "$d"
for f in src/*.c; do
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $WARN $M4F -Os -ffunction-sections -fdata-sections -DKPN_REPORT=0 -Iinclude -Iport -c "$f" -o "$d/$(basename "$f" .c).o"
done
report0=$(sum_objects "$d"/[a-z]*.o)

f=$OUT/footprint
mkdir -p "$f"
# shellcheck disable=SC2086
arm-none-eabi-gcc $M4F -std=c99 -Wall -Werror -Os -ffunction-sections -fdata-sections -Iinclude \
    tools/qemu/footprint.c tools/qemu/startup.c tools/qemu/unity_semihost.c \
    "$OUT"/cortex-m4f/[a-z]*.o "$OUT/port_cortex-m4f.o" "$OUT/switch_cortex-m4f.o" \
    -nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections -Wl,--no-warn-execstack \
    -T tools/qemu/link.ld -Wl,-Map,"$f/footprint.map" -o "$f/footprint.elf"
# in the map, after "Linker script and memory map": input sections of the
# core's objects that were kept, .text* and .rodata*
linked=$(awk -v dir="$OUT/cortex-m4f/" '
    function hex(s,   i, c, v) {
        v = 0; s = tolower(s); sub(/^0x/, "", s)
        for (i = 1; i <= length(s); ++i) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
        return v
    }
    /^Linker script and memory map/ {on = 1; next}
    !on {next}
    /^ \.(text|rodata)/ { sec = $1; if (NF >= 4) { size = $3; file = $4 } else { pending = 1; next } }
    pending && NF >= 3 { size = $2; file = $3; pending = 0 }
    sec != "" && file != "" {
        if (index(file, dir) == 1) total += hex(size)
        sec = ""; file = ""
    }
    END { print total + 0 }' "$f/footprint.map")

echo "== footprint program under QEMU (mps2-an386, Cortex-M4F)"
timeout 30 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$f/footprint.elf" > "$f/output.txt" 2>&1 || {
    cat "$f/output.txt"; echo "check-embedded: the footprint program failed"; exit 1; }
per_proc=$(sed -n 's/^per_process=//p' "$f/output.txt")
per_named=$(sed -n 's/^per_process_named=//p' "$f/output.txt")
per_chan=$(sed -n 's/^per_channel=//p' "$f/output.txt")
stack_min=$(sed -n 's/^stack_min=//p' "$f/output.txt")
net=$(sed -n 's/^net_default=//p' "$f/output.txt")

echo "check-embedded: cortex-m4f per-process=${per_proc} B besides its stack (named: ${per_named} B; the name is not copied)"
echo "check-embedded: cortex-m4f per-channel=${per_chan} B besides its ring"
echo "check-embedded: cortex-m4f net=${net} B (kpn_size_net, defaults)  KPN_STACK_MIN=${stack_min} B"
echo "check-embedded: cortex-m4f core .text+.rodata: linked into a pipeline with the resolver=${linked} B; all objects=${all} B; all objects with KPN_REPORT 0=${report0} B"
[ "$per_proc" -le 96 ] || { echo "check-embedded: a process costs more than 96 B"; status=1; }
[ "$per_chan" -le 48 ] || { echo "check-embedded: a channel costs more than 48 B"; status=1; }
[ "$linked" -le 6144 ] || { echo "check-embedded: the linked core is over 6144 B"; status=1; }
[ "$linked" -gt 0 ] || { echo "check-embedded: no core sections found in the map"; status=1; }
exit $status
