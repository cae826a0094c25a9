#!/bin/sh
# coverage.sh - line and branch coverage of src/ and port/ over the suite
# on the given ports (gcov + gcovr); fails below the given floors.
#
#   sh tools/coverage.sh LINES% BRANCHES% PORT...     (make coverage)
set -eu
lines=$1 branches=$2; shift 2
dirs=""
# KPNI_COVERAGE: functions the library forces in line are called, so
# that a branch counts once, not once for each copy a caller inlines
for p in "$@"; do
    rm -rf build/$p-cov
    make --no-print-directory test-port PORT=$p VARIANT=-cov \
        XFLAGS="--coverage -fprofile-update=atomic -DKPNI_COVERAGE" OPT=-O0 >/dev/null || exit 1
    dirs="$dirs build/$p-cov"
done
sh tools/cmocka/run_suite.sh total $(for d in $dirs; do echo $d/results; done) | tail -n 1
# gcovr's own status is the verdict: not a pipe's, whose status is its
# last command's
status=0
gcovr --root . --filter 'src/' --filter 'port/' --exclude-unreachable-branches \
    --print-summary --txt build/coverage.txt \
    --fail-under-line "$lines" --fail-under-branch "$branches" $dirs \
    >build/coverage.log 2>&1 || status=$?
grep -E '^(lines|functions|branches):|ERROR' build/coverage.log
echo "coverage: per-file report in build/coverage.txt"
exit "$status"
