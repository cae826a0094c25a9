#!/bin/sh
# check_test_port_fails.sh - `make test-port` must fail when a test fails.
# Builds a copy of the tree with one test whose assertion is false and
# runs only that test; the make must exit non-zero.  Then a test that
# passed stops building: the make must fail again, and the total that
# `make test` ends with must not count the results it left before.
set -eu
d=build/selftest
rm -rf $d; mkdir -p $d/test
cp -R Makefile include src port tools $d/
cp -R test/support $d/test/
# one_test BODY: the suite under test, one test whose body is BODY
one_test() {
    cat > $d/test/test_must_fail.c <<TEST
#include "unity.h"
#include "kpn.h"
TEST_SOURCE_FILE("src/status.c")
void setUp(void) {}
void tearDown(void) {}
$1
TEST
}

one_test 'void test_a_false_assertion_fails(void) { TEST_ASSERT_EQUAL_INT(KPN_OK, KPN_EINVAL); }'
if make --no-print-directory -C $d test-port PORT=posix TESTS=test/test_must_fail.c >$d/log 2>&1; then
    cat $d/log
    echo "check-test-port-fails: make test-port exited 0 although a test failed"
    exit 1
fi
grep -q "test_a_false_assertion_fails" $d/log || { cat $d/log; echo "check-test-port-fails: the failure was not reported"; exit 1; }

one_test 'void test_a_true_assertion_passes(void) { TEST_ASSERT_EQUAL_INT(KPN_OK, KPN_OK); }'
make --no-print-directory -C $d test-port PORT=posix TESTS=test/test_must_fail.c >$d/log 2>&1 ||
    { cat $d/log; echo "check-test-port-fails: a passing test failed"; exit 1; }
echo "void test_that_does_not_build(void) { undeclared_name = 1; }" >>$d/test/test_must_fail.c
if make --no-print-directory -C $d test-port PORT=posix TESTS=test/test_must_fail.c >$d/log 2>&1; then
    cat $d/log
    echo "check-test-port-fails: make test-port exited 0 although a test did not build"
    exit 1
fi
if (cd $d && sh tools/cmocka/run_suite.sh total build/posix/results) >$d/log 2>&1; then
    cat $d/log
    echo "check-test-port-fails: the total counted the results of a suite that no longer builds"
    exit 1
fi
echo "check-test-port-fails: make test-port fails when a test fails or does not build"
