#!/bin/sh
# check_cli.sh - every example and benchmark driver keeps the command-line
# contract (README, "What else is here"): --help prints a usage on stdout
# and exits 0; an unknown option and a bad value each exit with status 2
# and name the option on stderr, printing no result; a short
# run exits 0 and its last line on stdout is name=value pairs (after an
# optional "program: ").  Where a program's limits allow it, the short
# run is at the largest size (hamming's --n): an option's range promises
# that it ends.  Last, a list of arguments each program must refuse in
# the same way: values in range that do not go together, and malformed
# ones that strtol would take.
#
#   sh tools/check_cli.sh BUILD_DIR      (e.g. build/amd64, examples and
#                                         bench drivers built)
set -eu
build=${1:-build/amd64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
checked=0

bad() { echo "check-cli: $*"; fail=1; }

# A short run that does not end within a minute has hung (status 124).
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 60"

# Two frames of 32x32 noise, which the encoder takes as any other input.
{
    printf 'YUV4MPEG2 W32 H32 F25:1 Ip A1:1 C420jpeg\n'
    for i in 1 2; do printf 'FRAME\n'; head -c 1536 /dev/urandom; done
} > "$tmp/in.y4m"

# program, an option it has (for the bad value), the short run's options
while read -r prog opt quick; do
    bin=$build/$prog
    [ -x "$bin" ] || { bad "$bin is not built"; continue; }
    quick=$(printf '%s' "$quick" | sed "s|@Y4M@|$tmp/in.y4m|")
    checked=$((checked + 1))

    rc=0; "$bin" --help > "$tmp/out" 2> "$tmp/err" || rc=$?
    [ $rc -eq 0 ] || bad "$prog --help exits $rc"
    head -n 1 "$tmp/out" | grep -q '^usage: ' || bad "$prog --help prints no usage on stdout"

    for args in --no_such_option=1 "--$opt=oops"; do
        rc=0; "$bin" $args > "$tmp/out" 2> "$tmp/err" || rc=$?
        [ $rc -eq 2 ] || bad "$prog $args exits $rc, not 2"
        grep -qF -- "${args%%=*}" "$tmp/err" || bad "$prog $args does not name ${args%%=*} on stderr"
        ! grep -q '=' "$tmp/out" || bad "$prog $args prints a result: $(tail -n 1 "$tmp/out")"
    done

    rc=0; $limit "$bin" $quick > "$tmp/out" 2> "$tmp/err" || rc=$?
    [ $rc -eq 0 ] || { bad "$prog $quick exits $rc: $(tail -n 3 "$tmp/err")"; continue; }
    tail -n 1 "$tmp/out" |
        grep -Eq '^([a-z0-9_]+: )?[A-Za-z0-9_]+=[^ =]*( [A-Za-z0-9_]+=[^ =]*)*$' ||
        bad "$prog $quick: last line is not name=value pairs: $(tail -n 1 "$tmp/out")"
done <<EOF
examples/hello n --n=10
examples/sieve limit --limit=100000 --filters=100
examples/hamming n --n=10000
examples/runners jobs --workers=4 --jobs=20 --runners=2
examples/aes b --b=16 --k=10 --runners=2
examples/h264 qp --input=@Y4M@ --runs=1
bench/aes b --b=16 --k=10 --passes=1 --runs=1
bench/pipeline stages --stages=4 --d=100 --t_ms=1 --runs=1
bench/random d --d=10 --work_ms=5 --runs=1
bench/ring procs --procs=10 --trips=10 --runs=1
bench/soak procs --procs=10 --messages=1000
bench/pingpong rounds --rounds=1000 --runs=1 --cpu_a=-1 --cpu_b=-1
bench/coro_ring procs --procs=10 --trips=10 --runs=1
bench/coro_pipeline stages --stages=4 --d=100 --runs=1
EOF

# Values that are each in range but not together, malformed ones that
# strtol lets pass, and inputs a program cannot take, which must be
# refused like any bad value: program, the exit status (2 for a value,
# 1 for an input that cannot be read or written), what stderr must say
# (the option, or what is wrong with the input), the arguments.
sed '1s/C420jpeg/C420p10/' "$tmp/in.y4m" > "$tmp/p10.y4m"   # 2-byte samples
while read -r prog status says args; do
    bin=$build/$prog
    [ -x "$bin" ] || continue
    args=$(printf '%s' "$args" | sed "s|@TMP@|$tmp|g")
    rc=0; $limit "$bin" $args > "$tmp/out" 2> "$tmp/err" || rc=$?
    [ $rc -eq "$status" ] || bad "$prog $args exits $rc, not $status"
    grep -qF -- "$says" "$tmp/err" || bad "$prog $args does not say $says on stderr"
    ! grep -q '=' "$tmp/out" || bad "$prog $args prints a result: $(tail -n 1 "$tmp/out")"
done <<EOF
examples/sieve 2 --limit --limit=+100
examples/sieve 2 --limit --limit=100 --limit=x
examples/sieve 2 --filters --limit=1000 --filters=10
examples/hamming 2 --reserve --reserve=1
examples/aes 2 --k --b=30 --k=4
bench/random 2 --seed --seed=99999999999999999999
bench/random 2 --layers --nodes=10 --layers=9
bench/ring 2 --tokens --procs=2 --tokens=3
bench/pingpong 2 --lines --lines=1
examples/h264 1 C420p10 --input=@TMP@/p10.y4m --runs=1
examples/h264 1 --output --input=@TMP@/in.y4m --runs=1 --output=@TMP@/no/such/dir/out.264
EOF

[ $fail -eq 0 ] || exit 1
echo "check-cli: $checked programs: --help, an unknown option, a bad value and a short run each behave as README says"
