#!/bin/sh
# gen_runner.sh - write the cmocka runner (main) for one Unity-style test file.
#
#   sh tools/cmocka/gen_runner.sh test/test_x.c > build/.../test_x_runner.c
#   sh tools/cmocka/gen_runner.sh --sources test/test_x.c
#   sh tools/cmocka/gen_runner.sh --mocks test/test_x.c
#
# The runner runs, in file order, every `void testNAME(void)` function whose
# definition starts a line (comments ignored; the name may also start the
# line after a lone `void`). That matches what Ceedling's runner picks up:
# anything named test... is a test, so never give a helper such a name.
# `static` or indented test definitions get a warning on stderr.
#
# Each test is one cmocka unit test named after the function, in a group
# named after the file (test_x). setUp() runs before the test inside the
# test body, tearDown() in cmocka's teardown hook, which cmocka calls after
# a passing, failing or skipped test alike (cmocka_run_one_tests() in
# cmocka.c). A failing setUp() thus fails the test and tearDown() still runs,
# as under Unity. TEST_PASS() returns to the runner through a jmp_buf.
#
# After cmocka's own report the runner prints lines that
# tools/cmocka/run_suite.sh reads (cmocka's report differs between versions
# and with CMOCKA_MESSAGE_OUTPUT, and its summary omits tests whose
# teardown failed; these lines do not):
#   @kpn-fail GROUP TEST                  one per failed test
#   @kpn-counts GROUP passed=N failed=N skipped=N
# The runner exits 0 only if no test failed.
#
# KPN_TEST_SKIP, if set, names tests (separated by blanks) that the
# runner counts as skipped without running them, setUp() included: for a
# test its environment cannot run (make test-aarch64 says which and why).
# Ceedling's runner ignores it.
#
# --sources prints the paths named by the file's TEST_SOURCE_FILE("...")
# directives, one per line, so a Makefile can link what Ceedling links.
#
# Mocks: a file that includes "mock_x.h" (any folder; Ceedling's rule) is
# linked with the mock tools/cmocka/gen_mock.sh writes from x.h. Its
# runner, like Ceedling's, calls mock_x_Init() before setUp(), and
# mock_x_Verify() then mock_x_Destroy() after tearDown() (no Verify after
# a failure or TEST_IGNORE()); a Verify that fails fails the test. --mocks prints each
# mocked header's base name (x), one per line.
#
# Exits 1, writing nothing to stdout, if the file cannot be read or does not
# define both setUp() and tearDown(). POSIX sh, awk and sed only.

set -u

prog=gen_runner.sh

usage() {
    echo "usage: sh $prog TEST_FILE.c > RUNNER.c" >&2
    echo "       sh $prog --sources TEST_FILE.c" >&2
    exit 2
}

mode=runner
if [ $# -eq 2 ] && [ "$1" = "--sources" ]; then
    mode=sources
    shift
elif [ $# -eq 2 ] && [ "$1" = "--mocks" ]; then
    mode=mocks
    shift
fi
[ $# -eq 1 ] || usage

src=$1
[ -r "$src" ] || { echo "$prog: cannot read $src" >&2; exit 1; }

group=$(basename "$src")
group=${group%.c}

warn=1
[ "$mode" = runner ] || warn=0

# Scan the test file with comments removed. Prints "test NAME LINE" per
# test (in order, once each), "has setUp" / "has tearDown", "source PATH"
# per TEST_SOURCE_FILE, "mock X" per #include of mock_X.h, and (if warn)
# warnings on stderr.
scan=$(awk -v file="$src" -v warn="$warn" '
function strip(s,    out, i, n, c, nx, quote) {
    out = ""; n = length(s); i = 1; quote = ""
    while (i <= n) {
        c = substr(s, i, 1); nx = substr(s, i + 1, 1)
        if (inblock) {
            if (c == "*" && nx == "/") { inblock = 0; i += 2; out = out " " } else i++
            continue
        }
        if (quote != "") {
            out = out c
            if (c == "\\") { out = out nx; i += 2; continue }
            if (c == quote) quote = ""
            i++; continue
        }
        if (c == "/" && nx == "*") { inblock = 1; i += 2; continue }
        if (c == "/" && nx == "/") break
        if (c == "\"" || c == "\047") quote = c
        out = out c; i++
    }
    return out
}
function complain(msg) {
    if (warn) printf "%s:%d: warning: %s\n", file, NR, msg | "cat 1>&2"
}
# s starts at the function name (after "void" and blanks).
function consider(s,    name, rest) {
    if (!match(s, /^[A-Za-z_][A-Za-z0-9_]*[ \t]*\([ \t]*void[ \t]*\)/)) return
    rest = substr(s, RLENGTH + 1)
    if (rest ~ /^[ \t]*;/) return              # a prototype, not a definition
    name = s; sub(/[ \t]*\(.*/, "", name)
    if (name == "setUp") { print "has setUp"; return }
    if (name == "tearDown") { print "has tearDown"; return }
    if (name !~ /^test/) return
    if (!(name in seen)) { seen[name] = 1; print "test " name " " NR }
}
{
    sub(/\r$/, "")
    line = strip($0)
    if (match(line, /^[ \t]*TEST_SOURCE_FILE[ \t]*\([ \t]*"[^"]*"/)) {
        p = substr(line, RSTART, RLENGTH); sub(/^[^"]*"/, "", p); sub(/"$/, "", p)
        print "source " p
    }
    if (match(line, /^[ \t]*#[ \t]*include[ \t]*"([^"]*\/)?mock_[A-Za-z0-9_.-]+\.h"/)) {
        p = substr(line, RSTART, RLENGTH); sub(/"$/, "", p); sub(/.*[\/"]mock_/, "", p); sub(/\.h$/, "", p)
        if (!(p in mocked)) { mocked[p] = 1; print "mock " p }
    }
    if (pending) {
        pending = 0
        t = line; sub(/^[ \t]+/, "", t)
        consider(t)
    }
    if (line ~ /^void[ \t]*$/) { pending = 1; next }
    if (line ~ /^void[ \t]+[A-Za-z_]/) {
        t = line; sub(/^void[ \t]+/, "", t)
        consider(t)
    } else if (line ~ /^[ \t]*static[ \t]+(inline[ \t]+)?void[ \t]+test[A-Za-z0-9_]*[ \t]*\(/) {
        complain("static test function is run by neither runner")
    } else if (line ~ /^[ \t]+void[ \t]+test[A-Za-z0-9_]*[ \t]*\([ \t]*void[ \t]*\)[ \t]*(\{.*)?$/) {
        complain("indented test definition: Ceedling runs it, make test does not; start it at column 0")
    }
}
' "$src") || { echo "$prog: scanning $src failed" >&2; exit 1; }

if [ "$mode" = sources ]; then
    printf '%s\n' "$scan" | sed -n 's/^source //p'
    exit 0
fi
mocks=$(printf '%s\n' "$scan" | sed -n 's/^mock //p')
if [ "$mode" = mocks ]; then
    [ -z "$mocks" ] || printf '%s\n' "$mocks"
    exit 0
fi

missing=
printf '%s\n' "$scan" | grep -qx 'has setUp' || missing="setUp"
printf '%s\n' "$scan" | grep -qx 'has tearDown' || missing="$missing${missing:+ and }tearDown"
if [ -n "$missing" ]; then
    echo "$src: error: test files must define void $missing(void) (may be empty)" >&2
    exit 1
fi

tests=$(printf '%s\n' "$scan" | sed -n 's/^test \([^ ]*\) .*/\1/p')
count=$(printf '%s\n' "$tests" | grep -c .)
if [ "$count" -eq 0 ]; then
    echo "$src: warning: no test functions found" >&2
fi

# C string literal contents for the group and source path.
cstr() { printf '%s' "$1" | sed 's/[\\"]/\\&/g'; }
cgroup=$(cstr "$group")
csrc=$(printf '%s' "$src" | sed 's|\*/|* /|g')

cat <<EOF
/* Generated by tools/cmocka/gen_runner.sh from $csrc - do not edit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unity.h"
EOF
[ -z "$mocks" ] || printf '%s\n' "$mocks" | sed 's/.*/#include "mock_&.h"/'
cat <<EOF

struct kpn_unity_state kpn_unity_state;

static const char kpn_group_[] = "$cgroup";
static const char kpn_file_[] = "$(cstr "$src")";
EOF

if [ "$count" -eq 0 ]; then
    cat <<'EOF'

int main(void)
{
    printf("[==========] %s: 0 test(s) run.\n", kpn_group_);
    printf("@kpn-counts %s passed=0 failed=0 skipped=0\n", kpn_group_);
    return 0;
}
EOF
    exit 0
fi

printf '\n'
printf '%s\n' "$tests" | sed 's/.*/void &(void);/'

cat <<EOF

#define KPN_NTESTS_ $count
static int kpn_status_[KPN_NTESTS_];   /* 0 failed or not run, 1 passed, 2 ignored */
static volatile int kpn_current_ = -1;
static volatile int kpn_body_done_;

static void kpn_mocks_init_(void)
{
EOF
printf '%s\n' "$mocks" | sed -n 's/..*/    mock_&_Init();/p'
cat <<EOF
}

static void kpn_mocks_verify_(void)
{
EOF
printf '%s\n' "$mocks" | sed -n 's/..*/    mock_&_Verify();/p'
cat <<EOF
}

static void kpn_mocks_destroy_(void)
{
EOF
printf '%s\n' "$mocks" | sed -n 's/..*/    mock_&_Destroy();/p'
cat <<EOF
}

/* Whether KPN_TEST_SKIP (names separated by blanks) names the test. */
static int kpn_skipped_(const char *name)
{
    const char *list = getenv("KPN_TEST_SKIP");
    size_t n = strlen(name);

    while (list != NULL && *list != '\0') {
        const char *end = list + strcspn(list, " \t\n");
        if ((size_t)(end - list) == n && strncmp(list, name, n) == 0)
            return 1;
        list = end + strspn(end, " \t\n");
    }
    return 0;
}

/* setUp() + test body. A failure longjmps out to cmocka, TEST_PASS() to here. */
static void kpn_body_(int index, const char *name, int line, void (*fn)(void))
{
    kpn_current_ = index;
    kpn_body_done_ = 0;
    kpn_unity_state.test_name = name;
    kpn_unity_state.test_file = kpn_file_;
    kpn_unity_state.test_line = line;
    kpn_unity_state.ignored = 0;
    kpn_unity_state.expect_count = 0;
    kpn_unity_state.verify_order = 0;
    if (kpn_skipped_(name)) {
        kpn_status_[index] = 2;
        kpn_current_ = -1; /* nothing for the teardown hook to do */
        print_message("%s:%d:%s:IGNORE: named in KPN_TEST_SKIP\n", kpn_file_, line, name);
        _skip(kpn_file_, line); /* cmocka reports it skipped, not passed */
        return;
    }
    kpn_mocks_init_();
    if (setjmp(kpn_unity_state.abort_frame) == 0) {
        kpn_unity_state.abort_armed = 1;
        setUp();
        fn();
    }
    kpn_unity_state.abort_armed = 0;
    kpn_body_done_ = 1;
}

/* cmocka's teardown hook: runs after every test, failed, skipped or not. */
static int kpn_teardown_(void **state)
{
    (void)state;
    if (kpn_current_ < 0)
        return 0; /* skipped (KPN_TEST_SKIP): neither setUp() nor mocks ran */
    kpn_unity_state.abort_armed = 0;
    if (setjmp(kpn_unity_state.abort_frame) == 0) {
        kpn_unity_state.abort_armed = 1;
        tearDown();
    }
    kpn_unity_state.abort_armed = 0;
    /* Reached only if tearDown() did not fail; so is what follows.  A
     * test that failed or was ignored has nothing left to verify. */
    if (kpn_body_done_ && !kpn_unity_state.ignored)
        kpn_mocks_verify_();
    kpn_mocks_destroy_();
    if (kpn_current_ >= 0) {
        if (kpn_unity_state.ignored) {
            kpn_status_[kpn_current_] = 2;
        } else if (kpn_body_done_) {
            kpn_status_[kpn_current_] = 1;
        }
    }
    kpn_current_ = -1;
    return 0;
}
EOF

printf '\n'
printf '%s\n' "$scan" | sed -n 's/^test //p' | awk '{
    printf "static void kpn_run_%d_(void **state) { (void)state; kpn_body_(%d, \"%s\", %s, %s); }\n", NR - 1, NR - 1, $1, $2, $1
}'

cat <<'EOF'

static const char *const kpn_names_[KPN_NTESTS_] = {
EOF
printf '%s\n' "$tests" | sed 's/.*/    "&",/'
cat <<'EOF'
};

int main(void)
{
    static const struct CMUnitTest tests[KPN_NTESTS_] = {
EOF
printf '%s\n' "$tests" | awk '{
    printf "        { .name = \"%s\", .test_func = kpn_run_%d_, .teardown_func = kpn_teardown_ },\n", $0, NR - 1
}'
cat <<'EOF'
    };
    unsigned passed = 0, failed = 0, skipped = 0;
    int rc, i;

    setvbuf(stdout, NULL, _IOLBF, 0);
    rc = cmocka_run_group_tests_name(kpn_group_, tests, NULL, NULL);
    fflush(stderr);
    for (i = 0; i < KPN_NTESTS_; i++) {
        if (kpn_status_[i] == 1) {
            passed++;
        } else if (kpn_status_[i] == 2) {
            skipped++;
        } else {
            failed++;
            printf("@kpn-fail %s %s\n", kpn_group_, kpn_names_[i]);
        }
    }
    printf("@kpn-counts %s passed=%u failed=%u skipped=%u\n", kpn_group_, passed, failed, skipped);
    fflush(stdout);
    return (rc != 0 || failed != 0) ? 1 : 0;
}
EOF
