#!/bin/sh
# test_aarch64.sh - build kpn with port/aarch64 for AArch64 Linux and run
# the unit suite, the examples and a benchmark driver under QEMU's
# user-mode emulation, from a host of another architecture.
#
#   sh tools/test_aarch64.sh
#
# What it builds is `make test-port PORT=aarch64` with an AArch64 cross
# compiler (CROSS_CC, default aarch64-linux-gnu-gcc; NM and READELF to
# match) against Debian's arm64 cmocka and mbedTLS; qemu-aarch64 runs
# each binary with the arm64 C library (QEMU_LD_PREFIX, default
# /usr/aarch64-linux-gnu).  On an
# AArch64 host, `make test` runs the same suite natively, with no
# emulator.  sh tools/deps.sh aarch64 installs what it needs (it adds
# Debian's arm64 architecture for the two libraries).
#
# QEMU runs the guest's threads on the host's CPUs, so the tests with
# several runners run truly in parallel; but it orders memory as the
# host does (x86-64: stores in order), so a missing barrier that only a
# weakly ordered CPU would expose cannot fail here.
#
# It also builds the one-file distribution for AArch64 (it must pick the
# assembly switch) and the switch for BTI and PAC (it must say so), and
# runs the one-file build compiled for both: QEMU checks the PAC
# signatures of return addresses across switches, but not BTI, since
# Debian's arm64 start files carry no BTI marking, so no link with them
# is marked and nothing asks QEMU to enforce it.
#
# One test is skipped, named in the output and counted in the total:
# under QEMU 7.2's user mode a forked child that faults loops for ever,
# so the child that test_with_guard_pages_a_deep_overflow_stops_at_the_page
# forks to overflow into a guard page never dies.  The guard pages themselves run:
# test_guard_pages_need_a_page_aligned_arena_and_come_back_on_release.
#
# Ends with the suite's "N passed, N failed, N skipped" line; exits 1 if
# anything failed.
set -eu

CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
NM=${NM:-aarch64-linux-gnu-nm}
READELF=${READELF:-aarch64-linux-gnu-readelf}
QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
export QEMU_LD_PREFIX
BUILD=build/aarch64

for tool in "$CROSS_CC" "$NM" "$READELF" qemu-aarch64; do
    command -v "$tool" >/dev/null 2>&1 || { echo "test_aarch64: $tool is missing (sh tools/deps.sh aarch64)"; exit 1; }
done

make --no-print-directory PORT=aarch64 CC="$CROSS_CC" test-bins examples bench-bins >/dev/null

run() { qemu-aarch64 "$@"; }
fail=0

echo "== examples and a benchmark driver, port aarch64 (qemu-aarch64)"
# hello's sum, and on one runner and on three the AES example's own
# check and every hop of a ring with three tokens.
out=$(run $BUILD/examples/hello) || fail=1
echo "hello: $out"
[ "$out" = "n=100 sum=5050" ] || { echo "test_aarch64: hello printed '$out'"; fail=1; }
for r in 1 3; do
    line=$(run $BUILD/examples/aes --runners=$r 2>/dev/null | tail -n 1) || fail=1
    echo "aes --runners=$r: $line"
    case $line in *" verified=1") ;; *) echo "test_aarch64: aes --runners=$r did not verify"; fail=1 ;; esac
    line=$(run $BUILD/bench/ring --procs=300 --trips=20 --tokens=3 --runs=1 --runners=$r 2>/dev/null | tail -n 1) || fail=1
    # (under emulation the time says nothing of the port: left out)
    echo "ring --runners=$r: ${line%% ns_per_hop=*}"
    case $line in "ring: procs=300 hops=18000 "*) ;; *) echo "test_aarch64: ring --runners=$r: '$line'"; fail=1 ;; esac
done

echo "== the one-file build and branch protection, aarch64"
# The amalgamation must pick the assembly switch on AArch64 Linux, as it
# does amd64's on x86-64, and run.
AM=$BUILD/amalgamation
sh tools/amalgamate.sh $AM >/dev/null
$CROSS_CC -std=c99 -pedantic -Wall -Wextra -Werror -O2 -c $AM/kpn.c -o $AM/kpn.o
if ! $NM $AM/kpn.o | grep -q ' T kpn_port_switch$'; then
    echo "test_aarch64: the amalgamation has no assembly kpn_port_switch"; fail=1
fi
if $NM $AM/kpn.o | grep -q swapcontext; then
    echo "test_aarch64: the amalgamation uses ucontext"; fail=1
fi
$CROSS_CC -std=c99 -O2 -I$AM examples/hello.c $AM/kpn.o -lpthread -o $AM/hello
out=$(run $AM/hello) || fail=1
echo "amalgamation: kpn_port_switch in assembly; hello: $out"
[ "$out" = "n=100 sum=5050" ] || { echo "test_aarch64: the amalgamation's hello printed '$out'"; fail=1; }
# Built for BTI and PAC, the switch's object says so (a link is marked
# only if every object is), and the one-file build still runs, its
# return addresses signed (QEMU's CPU has pointer authentication).
$CROSS_CC -mbranch-protection=standard -c port/aarch64/switch_aarch64.S -o $AM/switch_bti.o
if $READELF -n $AM/switch_bti.o | grep -q 'AArch64 feature: BTI, PAC'; then
    echo "switch_aarch64.S with -mbranch-protection=standard: marked BTI, PAC"
else
    echo "test_aarch64: switch_aarch64.S built for BTI is not marked so"; fail=1
fi
$CROSS_CC -std=c99 -O2 -mbranch-protection=standard -I$AM examples/hello.c $AM/kpn.c -lpthread -o $AM/hello_bti
out=$(run $AM/hello_bti) || fail=1
[ "$out" = "n=100 sum=5050" ] || { echo "test_aarch64: hello built for BTI printed '$out'"; fail=1; }

echo "== suite, port aarch64 (qemu-aarch64)"
rm -rf $BUILD/results
KPN_TEST_WRAPPER=qemu-aarch64 \
KPN_TEST_SKIP="test_with_guard_pages_a_deep_overflow_stops_at_the_page" \
    sh tools/cmocka/run_suite.sh run $BUILD/results $BUILD/tests/test_* >$BUILD/suite.log 2>&1 || true
grep -E '^@kpn-counts|:IGNORE:' $BUILD/suite.log || true
sh tools/cmocka/run_suite.sh total $BUILD/results || fail=1
exit $fail
