#!/bin/sh
# check_embedded.sh - build the portable core as bare-metal targets do, and
# fail if it reaches for an allocator or for any libc symbol beyond memcpy
# and memset.  Prints what the core needs from a firmware and its size.
#
#   sh tools/check_embedded.sh        (from the top of the tree)
set -eu

warn="-std=c99 -pedantic -Wall -Wextra -Werror"
alloc='malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|mmap|sbrk|_sbrk|_malloc_r|_free_r'
status=0

for target in arm riscv; do
    case $target in
    arm)   cc=arm-none-eabi-gcc;       flags="-mcpu=cortex-m4 -mthumb" ;;
    riscv) cc=riscv64-unknown-elf-gcc; flags="-march=rv64imac -mabi=lp64" ;;
    esac
    if ! command -v $cc >/dev/null 2>&1; then
        echo "check-embedded: $cc missing (sh tools/deps.sh cross)"; exit 1
    fi
    prefix=${cc%gcc}
    d=build/embedded-$target
    rm -rf $d; mkdir -p $d
    for f in src/*.c; do
        $cc $warn $flags -ffreestanding -Os -Iinclude -Iport -c "$f" -o "$d/$(basename "$f" .c).o"
    done
    ${prefix}ld -r -o $d/kpn_core.o $d/*.o
    bad=$(${prefix}nm -u $d/kpn_core.o | grep -Ew "$alloc" || true)
    if [ -n "$bad" ]; then
        echo "check-embedded: the $target core references an allocator:"; echo "$bad"; status=1
    fi
    needs=$(${prefix}nm -u $d/kpn_core.o | awk '{print $2}' | sort -u | tr '\n' ' ')
    echo "== $target ($cc $flags -Os): needs from the firmware: $needs"
    ${prefix}size $d/kpn_core.o | tail -1 |
        awk -v t=$target '{print "check-embedded: " t " text=" $1 " data=" $2 " bss=" $3}'
done
exit $status
