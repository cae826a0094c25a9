#!/bin/sh
# check_readme.sh - README's first C example is examples/hello.c, byte for
# byte, and it builds and runs as README shows.
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
echo "check-readme: README's first example is examples/hello.c; it prints what README shows, built on the library and on the amalgamation"
