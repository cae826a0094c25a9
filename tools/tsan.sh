#!/bin/sh
# tsan.sh - the suite under ThreadSanitizer (clang), on each port given.
#
#   sh tools/tsan.sh PORT...       (from the top of the tree; make tsan)
#
# Processes are TSan fibers (src/kpn_int.h), so stack switches are
# understood.  clang 14's TSan cannot map its shadow on kernels with high
# mmap randomisation; then the tests run with address randomisation off
# (setarch -R).  Results land in build/PORT-tsan/results; the total is
# left to the caller.
set -u
flags="-fsanitize=thread -fno-omit-frame-pointer"
status=0
for port in "$@"; do
    rm -rf build/$port-tsan/results # first: no stale results if the build fails
    make --no-print-directory CC=clang PORT=$port VARIANT=-tsan XFLAGS="$flags" OPT=-O1 \
        test-bins >/dev/null || exit 1
    echo "== suite under ThreadSanitizer, port $port"
    run=""
    build/$port-tsan/tests/test_status >/dev/null 2>&1 || run="setarch $(uname -m) -R"
    TSAN_OPTIONS="halt_on_error=1 exitcode=66" $run sh tools/cmocka/run_suite.sh run \
        build/$port-tsan/results build/$port-tsan/tests/test_* || status=1
done
exit $status
