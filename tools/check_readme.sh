#!/bin/sh
# check_readme.sh - README's first C example is examples/hello.c, byte for
# byte, and it builds and runs as README shows; examples/hamming prints
# what README shows of it.
#
#   sh tools/check_readme.sh BUILD_DIR      (e.g. build/amd64, with libkpn.a built)
set -eu
build=${1:-build/amd64}
out=build/readme
mkdir -p $out
# the first ```c block
awk '/^```c$/ { if (!done) { on = 1; next } } /^```$/ { if (on) { on = 0; done = 1 } } on' README.md > $out/hello.c
if ! cmp -s $out/hello.c examples/hello.c; then
    echo "check-readme: README's first example differs from examples/hello.c:"
    diff -u examples/hello.c $out/hello.c || true
    exit 1
fi
cc -std=c99 -Iinclude $out/hello.c $build/libkpn.a -lpthread -o $out/hello
got=$($out/hello)
want=$(sed -n '/^\$ cc .*hello\.c/{n;p;q}' README.md)
[ "$got" = "$want" ] || { echo "check-readme: hello printed '$got', README shows '$want'"; exit 1; }
# and as a vendoring user would build it: against the one-file amalgamation
sh tools/amalgamate.sh $out/amalgamation >/dev/null
cc -O2 -c $out/amalgamation/kpn.c -o $out/kpn.o
cc -I$out/amalgamation $out/hello.c $out/kpn.o -lpthread -o $out/hello-amalgamation
got=$($out/hello-amalgamation)
[ "$got" = "$want" ] || { echo "check-readme: against the amalgamation hello printed '$got'"; exit 1; }
# hamming's two runs as README shows them: the line of --n=1000, and the
# whole of what --reserve=0 writes (stderr) and its status
cc -std=c99 -Iinclude -Iexamples examples/hamming.c $build/libkpn.a -lpthread -o $out/hamming
got=$($out/hamming --n=1000)
want=$(sed -n '/^\$ build\/amd64\/examples\/hamming --n=1000$/{n;p;q}' README.md)
[ "$got" = "$want" ] || { echo "check-readme: hamming --n=1000 printed '$got', README shows '$want'"; exit 1; }
rc=0; $out/hamming --reserve=0 > /dev/null 2> $out/hamming.err || rc=$?
[ $rc -eq 1 ] || { echo "check-readme: hamming --reserve=0 exited $rc, not 1"; exit 1; }
awk '/--reserve=0/ { seen = 1 } seen && /^```text$/ { on = 1; next } on && /^```$/ { exit } on' README.md > $out/hamming.want
if ! cmp -s $out/hamming.want $out/hamming.err; then
    echo "check-readme: hamming --reserve=0 writes other than README shows:"
    diff -u $out/hamming.want $out/hamming.err || true
    exit 1
fi
echo "check-readme: README's first example is examples/hello.c; it prints what README shows, built on the library and on the amalgamation; hamming prints what README shows"
