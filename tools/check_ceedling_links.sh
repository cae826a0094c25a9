#!/bin/sh
# check_ceedling_links.sh - build every test the way Ceedling links it:
# with only the sources it names through TEST_SOURCE_FILE (no header of
# the API matches a source by base name), on the posix port.  `make test`
# links the whole library and would not notice a missing one.
set -eu
d=build/ceedling-links
rm -rf $d; mkdir -p $d
warn="-std=c99 -pedantic -Wall -Wextra -Werror"
for t in test/test_*.c; do
    n=$(basename "$t" .c)
    srcs=$(sh tools/cmocka/gen_runner.sh --sources "$t")
    incs=$(for s in $srcs; do case $s in examples/*|bench/*) echo "-I$(dirname "$s")";; esac; done | sort -u)
    sh tools/cmocka/gen_runner.sh "$t" > $d/${n}_runner.c
    cc $warn -DTEST -Iinclude -Iport -Isrc $incs -Itools/cmocka "$t" $d/${n}_runner.c $srcs \
        -lcmocka -lmbedcrypto -lm -lpthread -o $d/$n ||
        { echo "check-ceedling-links: $t names too few sources with TEST_SOURCE_FILE"; exit 1; }
done
echo "check-ceedling-links: every test links with only the sources it names"
