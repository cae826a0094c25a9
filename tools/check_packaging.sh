#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds and runs tools/consumer/main.c every way README.md tells a user
# to use kpn, with README's own commands: the fenced block after each
# '<!-- check_packaging: NAME -->' line is run as written, so the two
# cannot drift.  In the blocks, APP is the user's project folder (it holds
# main.c) and PREFIX the install prefix.
#
#   (a) make install PREFIX=..., then a program built with pkg-config
#       (and DESTDIR staging)
#   (b) CMake find_package(kpn) against that prefix, and against the
#       prefix `cmake --install` writes
#   (c) CMake add_subdirectory of this tree (each port), and FetchContent
#   (d) the amalgamation: cc -c kpn.c, linked with -lpthread, run; also
#       -DKPN_PORT=posix, the port under shadow stacks (x86-64), and
#       warning-free under -std=c99 -pedantic -Wshadow -Wcast-qual, by
#       cc and clang, also with threads off (linked and run too) and
#       the compact layout;
#       kpn.h included from C++ (tools/consumer/main.cpp), linked with it
#   (e) the amalgamation for Cortex-M4 and RV64, freestanding, each with
#       its port (skipped with a message when the cross compiler is
#       missing)
#   (f) README's vendoring steps: the named files copied into an empty
#       folder and built with plain cc, for amd64, aarch64 (on another
#       host cross compiled and run under qemu-aarch64, when installed),
#       posix and bare metal (Cortex-M4, RV64)
#
# Needs cc, make, pkg-config and cmake (sh tools/deps.sh packaging).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
CC=${CC:-cc}
export CC

passed=0
skipped=0
say() { echo "check-packaging: $*"; }
ok() { passed=$((passed + 1)); say "ok   $*"; }
skip() { skipped=$((skipped + 1)); say "skip $*"; }
die() { say "FAILED: $*"; exit 1; }

# ------------------------------------------------------------ tools
for tool in pkg-config cmake; do
    command -v $tool >/dev/null 2>&1 || die "$tool is missing (sh tools/deps.sh packaging)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kpn-packaging.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
log=$tmp/log

# The commands of README's block NAME.
readme_block() {
    awk -v name="$1" '
        $0 == "<!-- check_packaging: " name " -->" { found = 1; next }
        found == 1 && /^```/ { found = 2; next }
        found == 2 && /^```/ { exit }
        found == 2 { print }
    ' README.md
}

# Run README block NAME in folder DIR (with APP and PREFIX as set); its
# output goes to the log, shown when it fails.
run_block() {
    name=$1 dir=$2
    commands=$(readme_block "$name")
    [ -n "$commands" ] || die "README.md has no block '<!-- check_packaging: $name -->'"
    (cd "$dir" && sh -eu -c "$commands") >"$log" 2>&1 || {
        cat "$log"
        die "README block '$name' failed in $dir:
$commands"
    }
}

# Run the program PATH, which must exit 0 and print the expected sum.
run_app() {
    out=$("$@" 2>&1) || die "$* failed: $out"
    case $out in
    *"sum of 1..1000 through a channel = 500500"*) echo "$out" ;;
    *) die "$* printed: $out" ;;
    esac
}

new_app() {
    APP=$tmp/$1
    mkdir -p "$APP"
    cp tools/consumer/main.c "$APP/"
    export APP
}

arch=$(uname -m)
host_port=posix
[ "$arch" = x86_64 ] && host_port=amd64
[ "$arch" = aarch64 ] && host_port=aarch64

# ------------------------------------------------------------ (a)
PREFIX=$tmp/prefix
export PREFIX
run_block install "$root"
for f in include/kpn.h lib/libkpn.a lib/pkgconfig/kpn.pc lib/cmake/kpn/kpnConfig.cmake \
         lib/cmake/kpn/kpnConfigVersion.cmake lib/cmake/kpn/kpnTargets.cmake; do
    [ -f "$PREFIX/$f" ] || die "make install wrote no $f"
done
[ ! -e "$PREFIX/include/port.h" ] || die "make install installed the internal port.h"
new_app pkg-config
run_block pkg-config "$APP"
ok "(a) make install + pkg-config: $(run_app "$APP/app")"

make --no-print-directory install PREFIX=/opt/kpn DESTDIR="$tmp/stage" >"$log" 2>&1 || { cat "$log"; die "make install DESTDIR"; }
[ -f "$tmp/stage/opt/kpn/lib/libkpn.a" ] && [ -f "$tmp/stage/opt/kpn/include/kpn.h" ] ||
    die "make install DESTDIR=$tmp/stage PREFIX=/opt/kpn wrote elsewhere"
grep -q '^prefix=/opt/kpn$' "$tmp/stage/opt/kpn/lib/pkgconfig/kpn.pc" || die "kpn.pc under DESTDIR names the wrong prefix"
ok "(a) make install DESTDIR=... PREFIX=/opt/kpn stages under DESTDIR, kpn.pc says /opt/kpn"

# ------------------------------------------------------------ (b)
cp -R tools/consumer "$tmp/consumer"
APP=$tmp/consumer/find_package
run_block cmake-find-package "$APP"
ok "(b) CMake find_package(kpn) after make install: $(run_app "$APP/build/consumer")"

PREFIX=$tmp/cmake-prefix
run_block cmake-install "$root"
for f in include/kpn.h lib/libkpn.a lib/pkgconfig/kpn.pc lib/cmake/kpn/kpnConfig.cmake lib/cmake/kpn/kpnTargets.cmake; do
    [ -f "$PREFIX/$f" ] || die "cmake --install wrote no $f"
done
rm -rf "$APP/build"
run_block cmake-find-package "$APP"
ok "(b) CMake find_package(kpn) after cmake --install: $(run_app "$APP/build/consumer")"
new_app pkg-config-cmake
run_block pkg-config "$APP"
ok "(b) pkg-config after cmake --install: $(run_app "$APP/app")"

# ------------------------------------------------------------ (c)
for port in auto posix; do
    b=$tmp/sub-$port
    cmake -S tools/consumer/add_subdirectory -B "$b" -DKPN_PORT=$port >"$log" 2>&1 &&
        cmake --build "$b" >>"$log" 2>&1 || { cat "$log"; die "add_subdirectory, KPN_PORT=$port"; }
    ok "(c) CMake add_subdirectory, KPN_PORT=$port: $(run_app "$b/consumer")"
done
b=$tmp/fetch
cmake -S tools/consumer/fetchcontent -B "$b" -DFETCHCONTENT_SOURCE_DIR_KPN="$root" >"$log" 2>&1 &&
    cmake --build "$b" >>"$log" 2>&1 || { cat "$log"; die "FetchContent"; }
ok "(c) CMake FetchContent (this tree as the fetched source): $(run_app "$b/consumer")"

# ------------------------------------------------------------ (d)
make --no-print-directory amalgamation >"$log" 2>&1 || { cat "$log"; die "make amalgamation"; }
amal=build/amalgamation
say "amalgamation: $amal/kpn.c $(wc -l < $amal/kpn.c) lines, $(wc -c < $amal/kpn.c) bytes; kpn.h $(wc -c < $amal/kpn.h) bytes"
new_app amalgamation
cp $amal/kpn.c $amal/kpn.h "$APP/"
run_block amalgamation "$APP"
ok "(d) amalgamation, port from the predefined macros: $(run_app "$APP/app")"
KPN_RUNNERS=4 run_app "$APP/app" >/dev/null
ok "(d) amalgamation, same program on 4 runners (KPN_RUNNERS=4)"
(cd "$APP" && $CC -std=c99 -pedantic -Wall -Wextra -Wshadow -Wcast-qual -Werror -O2 -c kpn.c -o strict.o) >"$log" 2>&1 ||
    { cat "$log"; die "the amalgamation warns under -std=c99 -pedantic -Wall -Wextra -Wshadow -Wcast-qual"; }
ok "(d) amalgamation warning-free: $CC -std=c99 -pedantic -Wall -Wextra -Wshadow -Wcast-qual -Werror -O2 -c kpn.c"
# a whole-program build inlines sends and receives into the program,
# where the compiler sees the program's buffers
(cd "$APP" && $CC -std=c99 -pedantic -Wall -Wextra -Werror -O3 -flto -c kpn.c -o lto.o &&
    $CC -std=c99 -pedantic -Wall -Wextra -Werror -O3 -flto main.c lto.o -lpthread -o app-lto) >"$log" 2>&1 ||
    { cat "$log"; die "the amalgamation and its program warn or fail under -O3 -flto"; }
ok "(d) amalgamation and the program, $CC -O3 -flto -Werror: $(run_app "$APP/app-lto")"
# the other builds a user may pick on the host, with each compiler here:
# what one leaves unused (a function, a parameter) the others use
cfgs="-DKPN_PORT=posix|-DKPN_PORT=none|-DKPN_THREADS=0|-DKPN_COMPACT=1|-DKPN_PORT=none -DKPN_COMPACT=1 -DKPN_REPORT=0"
for cc in $CC clang; do
    command -v $cc >/dev/null 2>&1 || continue
    for o in -O0 -O2; do
        printf '%s\n' "$cfgs" | tr '|' '\n' | while read -r cfg; do
            # shellcheck disable=SC2086
            (cd "$APP" && $cc -std=c99 -pedantic -Wall -Wextra -Wshadow -Wcast-qual -Werror $o $cfg -c kpn.c -o cfg.o) >"$log" 2>&1 ||
                { cat "$log"; die "the amalgamation warns: $cc $o $cfg"; }
        done
    done
    ok "(d) amalgamation warning-free under $cc at -O0 and -O2 with $(printf '%s' "$cfgs" | sed 's/|/; /g')"
done
# threads off on a hosted port: the port's idling (for inputs) still links
for cfg in "-DKPN_THREADS=0" "-DKPN_PORT=posix -DKPN_THREADS=0"; do
    # shellcheck disable=SC2086
    (cd "$APP" && $CC -O2 $cfg -c kpn.c -o nothreads.o && $CC -O2 main.c nothreads.o -lpthread -o app-nothreads) \
        >"$log" 2>&1 || { cat "$log"; die "the amalgamation with $cfg does not link"; }
    ok "(d) amalgamation, $cfg, linked and run: $(run_app "$APP/app-nothreads")"
done
# the compact layout with threads keeps no channel counts to learn from:
# kpn_place refuses a placement over several runners, home untouched
cat >"$APP/place.c" <<'END'
#include <stdio.h>
#include "kpn.h"
static unsigned char arena[64 * 1024];
static void idle(void *arg) { (void)arg; }
int main(void)
{
    kpn_net *net;
    kpn_proc *p;
    unsigned home[1] = {7};

    if (kpn_net_init(&net, arena, sizeof arena, NULL) != KPN_OK ||
        kpn_spawn(net, &p, "p", idle, NULL, 16384) != KPN_OK || kpn_run(net) != KPN_OK)
        return 1;
    if (kpn_place(net, 2, home, 1) != KPN_EINVAL || home[0] != 7)
        return 2;
    if (kpn_place(net, 1, home, 1) != KPN_OK || home[0] != 0)
        return 3;
    printf("place_2_runners=EINVAL place_1_runner=OK\n");
    return 0;
}
END
(cd "$APP" && $CC -O2 -DKPN_COMPACT=1 place.c kpn.c -lpthread -o app-place && ./app-place) >"$log" 2>&1 ||
    { cat "$log"; die "kpn_place in the compact build with threads: not as kpn.h says"; }
ok "(d) amalgamation, -DKPN_COMPACT=1 with threads: $(cat "$log")"
if [ "$host_port" != posix ]; then
    nm "$APP/kpn.o" | grep -q ' T kpn_port_switch$' || die "$host_port amalgamation has no assembly kpn_port_switch"
    nm "$APP/kpn.o" | grep -q swapcontext && die "$host_port amalgamation uses ucontext"
    ok "(d) amalgamation on $arch picked the assembly switch"
fi
# kpn.h from C++, linked against the C object, with each C++ compiler here
cp tools/consumer/main.cpp "$APP/"
for cxx in c++ clang++; do
    command -v $cxx >/dev/null 2>&1 || continue
    (cd "$APP" && $cxx -std=c++11 -pedantic -Wall -Wextra -Werror -O2 main.cpp kpn.o -lpthread -o app-cxx) >"$log" 2>&1 ||
        { cat "$log"; die "kpn.h does not build from C++ ($cxx)"; }
    ok "(d) kpn.h from C++ ($cxx -std=c++11 -pedantic -Wall -Wextra -Werror), with the C object: $(run_app "$APP/app-cxx")"
done
new_app amalgamation-posix
cp $amal/kpn.c $amal/kpn.h "$APP/"
run_block amalgamation-posix "$APP"
nm "$APP/kpn.o" | grep -q swapcontext || die "-DKPN_PORT=posix amalgamation does not use ucontext"
ok "(d) amalgamation, -DKPN_PORT=posix: $(run_app "$APP/app")"
(cd "$APP" && $CC -O2 -DKPN_PORT=nonesuch -c kpn.c -o bad.o) >"$log" 2>&1 && die "-DKPN_PORT=nonesuch was accepted"
grep -q "KPN_PORT must be one of" "$log" || { cat "$log"; die "-DKPN_PORT=nonesuch: no sentence"; }
ok "(d) amalgamation, -DKPN_PORT=nonesuch refused: $(grep -o 'KPN_PORT must be one of[^"]*' "$log" | head -1)"
# Shadow stacks (x86 CET; Ubuntu's GCC builds for them by default): the
# one-file build steps aside to ucontext, keeps the assembly switch for
# indirect-branch tracking alone, and refuses the switch asked for by name.
if [ "$arch" = x86_64 ]; then
    for cet in full branch; do
        (cd "$APP" && $CC -O2 -fcf-protection=$cet -c kpn.c -o cet.o) >"$log" 2>&1 ||
            { cat "$log"; die "the amalgamation does not build with -fcf-protection=$cet"; }
        if [ $cet = full ]; then
            nm "$APP/cet.o" | grep -q swapcontext || die "-fcf-protection=full: the amalgamation kept the assembly switch"
        else
            nm "$APP/cet.o" | grep -q ' T kpn_port_switch$' || die "-fcf-protection=branch: no assembly switch"
        fi
    done
    (cd "$APP" && $CC -O2 -fcf-protection=full -DKPN_PORT=amd64 -c kpn.c -o bad.o) >"$log" 2>&1 &&
        die "-DKPN_PORT=amd64 with shadow stacks was accepted"
    grep -q "cannot keep a shadow stack" "$log" || { cat "$log"; die "-DKPN_PORT=amd64 with shadow stacks: no sentence"; }
    ok "(d) amalgamation with shadow stacks (-fcf-protection=full): ucontext; with =branch the assembly switch; -DKPN_PORT=amd64 with them refused"
fi

# ------------------------------------------------------------ (e)
# The KPN_* settings in a preprocessor's -dM output.
settings() { grep -E '^#define KPN_[A-Z0-9_]+ ' | grep -v '^#define KPN_THREADS ' | sort; }
for target in cortex-m4 rv64; do
    case $target in
    cortex-m4) xcc=arm-none-eabi-gcc ;;
    rv64) xcc=riscv64-unknown-elf-gcc ;;
    esac
    if ! command -v $xcc >/dev/null 2>&1; then
        skip "(e) amalgamation for $target: $xcc is not installed"
        continue
    fi
    new_app amalgamation-$target
    cp $amal/kpn.c $amal/kpn.h "$APP/"
    run_block amalgamation-$target "$APP"
    commands=$(readme_block amalgamation-$target | sed 's/ -c kpn.c$/ -std=c99 -pedantic -Wall -Wextra -Wshadow -Wcast-qual -Werror -c kpn.c -o strict.o/')
    (cd "$APP" && sh -eu -c "$commands") >"$log" 2>&1 || { cat "$log"; die "$target amalgamation warns"; }
    prefix=${xcc%gcc}
    undefined=$(${prefix}nm -u "$APP/kpn.o" | awk '{print $2}' | sort -u | tr '\n' ' ')
    ok "(e) amalgamation for $target ($(readme_block amalgamation-$target)), warning-free; needs: $undefined"
    # the port it holds: the target's own, not 'none'
    ${prefix}nm "$APP/kpn.o" | grep -q ' T kpn_port_switch$' || die "$target amalgamation holds no port"
    # the settings the split build takes for the target, the port's own
    # (a Cortex-M's stack minimum) included; KPN_THREADS is spelt
    # differently, the amalgamation setting it by the port it picks
    compile=$(readme_block amalgamation-$target | sed 's/ -c kpn.c$//')
    # shellcheck disable=SC2086
    (cd "$APP" && $compile -dM -E kpn.c) | settings >"$tmp/amal.set"
    # shellcheck disable=SC2086
    $compile -Iinclude -Iport -dM -E src/kpn_int.h | settings >"$tmp/split.set"
    cmp -s "$tmp/amal.set" "$tmp/split.set" ||
        { diff "$tmp/split.set" "$tmp/amal.set"; die "$target amalgamation's settings differ from the split build's"; }
    ok "(e) amalgamation for $target takes the split build's settings: $(grep -o 'KPN_STACK_MIN [0-9a-z]*' "$tmp/amal.set")"
done

# ------------------------------------------------------------ (f)
if [ "$host_port" = amd64 ]; then
    new_app vendor-amd64
    run_block vendor-amd64 "$root"
    ok "(f) README vendoring, amd64 ($(cd "$APP/kpn" && ls | wc -l) files): $(run_app "$APP/app")"
else
    skip "(f) README vendoring for amd64: this is $arch"
fi
# AArch64 Linux: README's block as written on such a host; elsewhere its
# 'cc' is the cross compiler and the program runs under qemu-aarch64.
if [ "$arch" = aarch64 ]; then
    new_app vendor-aarch64
    run_block vendor-aarch64 "$root"
    ok "(f) README vendoring, aarch64 ($(cd "$APP/kpn" && ls | wc -l) files): $(run_app "$APP/app")"
elif command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-aarch64 >/dev/null 2>&1; then
    new_app vendor-aarch64
    mkdir -p "$tmp/cross-cc"
    printf '#!/bin/sh\nexec aarch64-linux-gnu-gcc "$@"\n' >"$tmp/cross-cc/cc"
    chmod +x "$tmp/cross-cc/cc"
    host_path=$PATH
    PATH="$tmp/cross-cc:$PATH"
    run_block vendor-aarch64 "$root"
    PATH=$host_path
    aarch64-linux-gnu-nm "$APP/app" | grep -q ' T kpn_port_switch$' || die "README's AArch64 vendoring built no switch"
    QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
    export QEMU_LD_PREFIX
    ok "(f) README vendoring, aarch64 (cross compiled, under qemu-aarch64): $(run_app qemu-aarch64 "$APP/app")"
else
    skip "(f) README vendoring for aarch64: neither an AArch64 host nor aarch64-linux-gnu-gcc and qemu-aarch64"
fi
new_app vendor-posix
run_block vendor-posix "$root"
ok "(f) README vendoring, posix ($(cd "$APP/kpn" && ls | wc -l) files): $(run_app "$APP/app")"
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
    new_app vendor-bare-metal
    run_block vendor-bare-metal "$root"
    ok "(f) README vendoring, bare metal (Cortex-M4, the core and port/cortex-m): $(ls "$APP"/*.o | wc -l) objects"
else
    skip "(f) README vendoring for bare metal: arm-none-eabi-gcc is not installed"
fi
if command -v riscv64-unknown-elf-gcc >/dev/null 2>&1; then
    new_app vendor-bare-metal-riscv
    run_block vendor-bare-metal-riscv "$root"
    riscv64-unknown-elf-nm "$APP/switch_riscv.o" | grep -q ' T kpn_port_switch$' || die "README's RISC-V vendoring built no switch"
    ok "(f) README vendoring, bare metal (RV64GC, the core and port/riscv): $(ls "$APP"/*.o | wc -l) objects"
else
    skip "(f) README vendoring for RISC-V: riscv64-unknown-elf-gcc is not installed"
fi

say "$passed passed, $skipped skipped"
