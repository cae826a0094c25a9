#!/bin/sh
# run_suite.sh - run cmocka test binaries and total their results.
#
#   sh tools/cmocka/run_suite.sh run OUTDIR BIN...
#       Runs each BIN in turn (from the current directory), showing its
#       output, and writes OUTDIR/<BIN path with / as _>.log (the output)
#       and .counts (the result). Exit status 1 if any test failed.
#       Existing files for other binaries are kept, so empty OUTDIR first
#       (total sums every .counts file in it).
#
#   sh tools/cmocka/run_suite.sh total OUTDIR...
#       Sums the .counts files of one or more OUTDIRs (one per port, say),
#       lists every failure, and ends with exactly one line
#           N passed, N failed[, N skipped]
#       (", N skipped" only when N > 0). Exit status 1 if anything failed,
#       if no test ran at all, or if an OUTDIR has no results.
#
# How results are counted: the runners written by gen_runner.sh print
#   @kpn-fail GROUP TEST
#   @kpn-counts GROUP passed=N failed=N skipped=N
# after cmocka's report; those lines are the counts, so nothing depends on
# cmocka's human-readable summary. TEST_IGNORE()d tests count as skipped.
# A binary that prints no @kpn-counts line (it crashed, called exit(),
# hung, or is not a generated runner) counts as at least one failure,
# named after the binary and the last test it started; tests it reported
# "[       OK ]" before that still count as passed. A binary that reported
# no failures but exited non-zero (e.g. a sanitizer at exit) gets one
# extra failure.
#
# Each binary is killed after KPN_TEST_TIMEOUT seconds (default 300,
# 0 = no limit) when timeout(1) is available.  KPN_TEST_WRAPPER, if set,
# is a command each binary runs under (e.g. valgrind and its options).
#
# .counts format, one item per line: "binary PATH", "passed N",
# "failed N", "skipped N", "failure TEXT" (one per failure).

set -u

prog=run_suite.sh

usage() {
    echo "usage: sh $prog run OUTDIR BIN..." >&2
    echo "       sh $prog total OUTDIR..." >&2
    exit 2
}

# Number from "key=N" in the line $1, or empty.
field() {
    printf '%s\n' "$1" | sed -n "s/.* $2=\([0-9][0-9]*\).*/\1/p"
}

# Describe exit status $1 of a shell-run command.
describe_status() {
    if [ "$1" -eq 124 ] && [ -n "$timeout_cmd" ]; then
        echo "timed out after ${KPN_TEST_TIMEOUT:-300}s"
    elif [ "$1" -gt 128 ]; then
        echo "killed by signal $(($1 - 128))"
    else
        echo "exited with status $1"
    fi
}

run_mode() {
    [ $# -ge 2 ] || usage
    outdir=$1
    shift
    mkdir -p "$outdir" || exit 2

    tmo=${KPN_TEST_TIMEOUT:-300}
    timeout_cmd=
    if [ "$tmo" != 0 ] && command -v timeout >/dev/null 2>&1; then
        if timeout --foreground 10 true >/dev/null 2>&1; then
            timeout_cmd="timeout --foreground $tmo"
        else
            timeout_cmd="timeout $tmo"
        fi
    fi

    run_failed=0 run_passed=0 run_skipped=0
    for bin in "$@"; do
        key=$(printf '%s' "$bin" | sed 's|^\./||; s|[/ ]|_|g')
        log=$outdir/$key.log
        counts=$outdir/$key.counts
        rcfile=$outdir/$key.rc
        rm -f "$counts" "$rcfile"
        case $bin in
            */*) cmd=$bin ;;
            *) cmd=./$bin ;;
        esac

        echo "---- $bin"
        why=
        if [ ! -f "$cmd" ] || [ ! -x "$cmd" ]; then
            why="not an executable file"
            echo "$prog: $bin: $why" | tee "$log" >&2
            rc=127
        else
            # The subshell records the status; tee shows and keeps the output.
            { $timeout_cmd ${KPN_TEST_WRAPPER:-} "$cmd" 2>&1; echo $? >"$rcfile"; } | tee "$log"
            rc=$(cat "$rcfile" 2>/dev/null)
            rm -f "$rcfile"
            [ -n "$rc" ] || rc=255
        fi

        line=$(grep '@kpn-counts ' "$log" 2>/dev/null | tail -n 1)
        passed=$(field "$line" passed)
        failed=$(field "$line" failed)
        skipped=$(field "$line" skipped)
        {
            echo "binary $bin"
            if [ -n "$line" ] && [ -n "$passed" ] && [ -n "$failed" ] && [ -n "$skipped" ]; then
                sed -n "s|.*@kpn-fail [^ ]* \(.*\)|failure $bin: \1|p" "$log"
                if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
                    failed=1
                    echo "failure $bin: $(describe_status "$rc") although all tests passed"
                fi
            else
                # No result line: count what cmocka reported before it died.
                passed=$(grep -c '^\[       OK \] ' "$log" 2>/dev/null)
                passed=${passed:-0}
                skipped=$(grep '^\[  SKIPPED \] ' "$log" 2>/dev/null | grep -vc 'test(s)')
                skipped=${skipped:-0}
                started=$(grep -c '^\[ RUN      \] ' "$log" 2>/dev/null)
                started=${started:-0}
                failed=$((started - passed - skipped))
                [ "$failed" -ge 1 ] || failed=1
                last=$(sed -n 's/^\[ RUN      \] //p' "$log" 2>/dev/null | tail -n 1)
                [ -n "$why" ] || why="$(describe_status "$rc") without a result line"
                echo "failure $bin: $why${last:+ (last test started: $last)}"
            fi
            echo "passed $passed"
            echo "failed $failed"
            echo "skipped $skipped"
        } >"$counts.tmp"
        mv "$counts.tmp" "$counts"

        sed -n 's/^failure /FAILED: /p' "$counts"
        run_passed=$((run_passed + passed))
        run_failed=$((run_failed + failed))
        run_skipped=$((run_skipped + skipped))
    done

    echo "---- $outdir: passed=$run_passed failed=$run_failed skipped=$run_skipped"
    [ "$run_failed" -eq 0 ]
}

total_mode() {
    [ $# -ge 1 ] || usage
    passed=0 failed=0 skipped=0 problems=0
    for dir in "$@"; do
        found=0
        for f in "$dir"/*.counts; do
            [ -f "$f" ] || continue
            found=1
            p=$(sed -n 's/^passed \([0-9][0-9]*\)$/\1/p' "$f")
            x=$(sed -n 's/^failed \([0-9][0-9]*\)$/\1/p' "$f")
            s=$(sed -n 's/^skipped \([0-9][0-9]*\)$/\1/p' "$f")
            if [ -z "$p" ] || [ -z "$x" ] || [ -z "$s" ]; then
                echo "FAILED: $f: unreadable result file"
                failed=$((failed + 1))
                continue
            fi
            sed -n 's/^failure /FAILED: /p' "$f"
            passed=$((passed + p))
            failed=$((failed + x))
            skipped=$((skipped + s))
        done
        if [ "$found" -eq 0 ]; then
            echo "$prog: no results in $dir" >&2
            problems=1
        fi
    done

    if [ $((passed + failed + skipped)) -eq 0 ]; then
        echo "$prog: no tests ran" >&2
        problems=1
    fi
    if [ "$skipped" -gt 0 ]; then
        echo "$passed passed, $failed failed, $skipped skipped"
    else
        echo "$passed passed, $failed failed"
    fi
    [ "$failed" -eq 0 ] && [ "$problems" -eq 0 ]
}

[ $# -ge 1 ] || usage
mode=$1
shift
case $mode in
    run) run_mode "$@" ;;
    total) total_mode "$@" ;;
    *) usage ;;
esac
