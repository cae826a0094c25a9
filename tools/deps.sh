#!/bin/sh
# deps.sh - install the Debian packages a make target needs, saying which and why.
#
#   sh tools/deps.sh GROUP...
#
# Groups: test (cmocka, mbedTLS: the suite and the AES example), examples
# (mbedTLS, which every example and benchmark program links), clang
# (ThreadSanitizer, libFuzzer, the clang build), cross (arm-none-eabi and
# riscv64-unknown-elf gcc: check-embedded), qemu (qemu-system-arm:
# test-qemu, firmware), qemu-riscv (qemu-system-misc, whose
# qemu-system-riscv32/64 run test-qemu-riscv, firmware-riscv), aarch64
# (the AArch64 Linux cross compiler, qemu-user, and Debian's arm64 cmocka
# and mbedTLS: test-aarch64), gcovr (coverage), valgrind, gnuplot (bench plots),
# ffmpeg (decoding the H.264 example's stream), x264 (the encoder
# tools/compare_h264.sh compares it with), packaging (cmake and
# pkg-config: check-packaging).
#
# Only what is missing is installed.  As root it runs apt-get; otherwise it
# prints the apt-get command to run and exits 1.  Nothing else in the tree
# installs packages.
set -eu

need=""
why=""
want() { # PACKAGE PRESENT-TEST REASON
    if ! eval "$2" >/dev/null 2>&1; then
        need="$need $1"
        why="$why
  $1: $3"
    fi
}
have() { command -v "$1"; }

for group in "$@"; do
    case $group in
    test)
        want libcmocka-dev '[ -f /usr/include/cmocka.h ]' "cmocka runs the unit suite (make test)"
        want libmbedtls-dev '[ -f /usr/include/mbedtls/aes.h ]' "AES-128 for the AES example and its test" ;;
    examples)
        want libmbedtls-dev '[ -f /usr/include/mbedtls/aes.h ]' "AES-128 for the AES example, which every program links" ;;
    clang)
        want clang 'have clang' "ThreadSanitizer, libFuzzer and the clang -Werror build" ;;
    cross)
        want gcc-arm-none-eabi 'have arm-none-eabi-gcc' "the Cortex-M builds"
        want gcc-riscv64-unknown-elf 'have riscv64-unknown-elf-gcc' "the RISC-V build" ;;
    qemu)
        want qemu-system-arm 'have qemu-system-arm' "runs the Cortex-M firmware and target tests" ;;
    qemu-riscv)
        want qemu-system-misc 'have qemu-system-riscv32 && have qemu-system-riscv64' "runs the RISC-V firmware and target tests (qemu-system-riscv32/64)" ;;
    aarch64)
        want gcc-aarch64-linux-gnu 'have aarch64-linux-gnu-gcc' "the AArch64 Linux build of test-aarch64"
        want qemu-user 'have qemu-aarch64' "runs the AArch64 suite under user-mode emulation"
        want libcmocka-dev:arm64 '[ -f /usr/lib/aarch64-linux-gnu/libcmocka.so ]' "cmocka for the AArch64 suite"
        want libmbedtls-dev:arm64 '[ -f /usr/lib/aarch64-linux-gnu/libmbedcrypto.so ]' "mbedTLS for the AArch64 suite and AES example" ;;
    gcovr)
        want gcovr 'have gcovr' "line and branch coverage" ;;
    valgrind)
        want valgrind 'have valgrind' "the suite under memcheck" ;;
    gnuplot)
        want gnuplot-nox 'have gnuplot' "the plots of make bench" ;;
    ffmpeg)
        want ffmpeg 'have ffmpeg' "decodes the H.264 example's stream to check it bit for bit" ;;
    x264)
        want x264 'have x264' "the reference encoder the H.264 example is compared with" ;;
    packaging)
        want cmake 'have cmake' "the CMake consumers of check-packaging"
        want pkg-config 'have pkg-config' "the pkg-config consumer of check-packaging"
        want g++ 'have c++' "the C++ consumer of check-packaging" ;;
    *)
        echo "deps.sh: unknown group '$group'" >&2; exit 2 ;;
    esac
done

[ -n "$need" ] || exit 0
echo "deps.sh: missing Debian packages:$why" >&2
# Another architecture's libraries (NAME:arm64) need it known to dpkg,
# and the package lists read again.
addarch=""
for pkg in $need; do
    case $pkg in *:*)
        arch=${pkg#*:}
        case " $addarch " in *" $arch "*) continue ;; esac
        if [ "$arch" != "$(dpkg --print-architecture)" ] &&
            ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
            addarch="$addarch $arch"
        fi ;;
    esac
done
if [ "$(id -u)" != 0 ]; then
    for arch in $addarch; do
        echo "deps.sh: run: sudo dpkg --add-architecture $arch" >&2
    done
    [ -z "$addarch" ] || echo "deps.sh: run: sudo apt-get update" >&2
    echo "deps.sh: run: sudo apt-get install$need" >&2
    exit 1
fi
echo "deps.sh: installing$need" >&2
export DEBIAN_FRONTEND=noninteractive
for arch in $addarch; do
    echo "deps.sh: adding dpkg architecture $arch" >&2
    dpkg --add-architecture "$arch"
done
apt-get install -y -qq $need >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq $need >/dev/null; }
