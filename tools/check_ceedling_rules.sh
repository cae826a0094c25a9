#!/bin/sh
# check_ceedling_rules.sh - build every test the way Ceedling would, without Ceedling.
#
#   sh tools/check_ceedling_rules.sh [TEST_FILE.c...]
#
# (default: test/test_*.c and the example test docs/testing.md shows)
#
# `make test` compiles each test with the whole library and its own include
# path, so two things that break `ceedling test:all` pass it unnoticed.
# For each test file this script checks both, on the posix port:
#
# 1. The runner's include rule.  Ceedling copies every #include of a test
#    file into the runner it generates (Unity's generate_test_runner.rb,
#    fed by Ceedling's include extractor): comments are dropped, but #if,
#    #ifdef and #else are ignored, and only the file name is kept, as a
#    quoted include ('#include <sys/resource.h>' becomes
#    '#include "resource.h"').  unity.h, cmock.h and CException.h are left
#    out, and mock_*.h headers come last.  The script writes that list of
#    includes to a file and compiles it with Ceedling's include path
#    (project.yml's :paths:include, the folders under test/ that hold
#    headers, the test's mocks) and flags.  The fix for a failure is to
#    move the include into a header under test/support/ (docs/testing.md).
#
# 2. The link.  Ceedling links a test with only the sources it names with
#    TEST_SOURCE_FILE (and mocks for its mock_*.h); the script links the
#    test, its cmocka runner and those sources, with the cmocka mocks
#    tools/cmocka/gen_mock.sh writes, and nothing else.
#
# Output goes to build/ceedling-rules/.  Exits 1 naming the first file
# that fails, with the compiler's message.  POSIX sh, awk and sed; needs
# cc, cmocka and mbedTLS (as `make test` does).

set -u

prog=check_ceedling_rules.sh
cc=${CC:-cc}
out=build/ceedling-rules
# project.yml: :paths:include (examples/** is every folder under
# examples/), and the flags and defines of :flags:test and :defines:test.
# Keep in step with it.
ceedling_include="-Iinclude -Isrc -Iport $(find examples -type d 2>/dev/null | sort | sed 's/^/-I/' | tr '\n' ' ') -Ibench"
ceedling_flags="-std=c99 -Wall -Wextra -DTEST -DKPN_TEST_PORT_POSIX"
# `make test`'s warnings, for the link step (what the library is held
# to), and its define for the posix port, which the tests link with
strict_flags="-std=c99 -pedantic -Wall -Wextra -Werror -DTEST -DKPN_TEST_PORT_POSIX"
libs="-lcmocka -lmbedcrypto -lm -lpthread"

if [ ! -f project.yml ] || [ ! -d test ]; then
    echo "$prog: run from the repository root" >&2
    exit 2
fi

doc_example=
if [ $# -eq 0 ]; then
    doc_example=$out/docs/test_example.c
    set -- test/test_*.c
fi

rm -rf "$out"
mkdir -p "$out" || exit 2

# docs/testing.md's example test, as a reader would copy it
if [ -n "$doc_example" ]; then
    mkdir -p "$out/docs"
    awk '/^## Writing a test/ { s = 1 } s && /^```c$/ { on = 1; next } on && /^```$/ { exit } on' \
        docs/testing.md >"$doc_example"
    [ -s "$doc_example" ] || { echo "$prog: docs/testing.md shows no test under \"Writing a test\""; exit 1; }
    # and it names every core source, as the rule under it says to
    for f in src/*.c; do
        grep -qF "TEST_SOURCE_FILE(\"$f\")" "$doc_example" ||
            { echo "$prog: docs/testing.md's example test does not name $f"; exit 1; }
    done
    set -- "$@" "$doc_example"
fi

# Ceedling puts every folder of its test paths that holds a header on the
# include path: test/** less test/target/** (project.yml's -:test/target/**).
support_include=$(find test -path test/target -prune -o -name '*.h' -exec dirname {} \; 2>/dev/null |
    sort -u | sed 's/^/-I/' | tr '\n' ' ')

# The base names of a test file's #include lines, in file order, as
# Ceedling's extractor sees them: block and line comments removed, lines
# joined at a trailing backslash, every #include kept whatever #if says.
includes_of() {
    awk '
    {
        line = $0
        sub(/\r$/, "", line)
        if (cont != "") { line = cont line; cont = "" }
        if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); cont = line; next }
        gsub(/\/\/.*$/, "", line)
        out = ""
        while (line != "") {
            if (incomment) {
                p = index(line, "*/")
                if (p == 0) { line = ""; break }
                line = substr(line, p + 2); incomment = 0; continue
            }
            p = index(line, "/*")
            if (p == 0) { out = out line; break }
            out = out substr(line, 1, p - 1); line = substr(line, p + 2); incomment = 1
        }
        if (match(out, /#[ \t]*include[ \t]+[<"][ \t]*[\/A-Za-z0-9_.-]+[ \t]*[>"]/)) {
            f = substr(out, RSTART, RLENGTH)
            sub(/^#[ \t]*include[ \t]+[<"][ \t]*/, "", f); sub(/[ \t]*[>"]$/, "", f)
            sub(/.*\//, "", f)
            print f
        }
    }' "$1"
}

for t in "$@"; do
    [ -r "$t" ] || { echo "$prog: cannot read $t" >&2; exit 2; }
    n=$(basename "$t" .c)
    d=$out/$n
    mkdir -p "$d/mocks"

    mocks=$(sh tools/cmocka/gen_runner.sh --mocks "$t") || exit 1
    for m in $mocks; do
        h=
        for dir in port src include; do
            [ -f "$dir/$m.h" ] && { h=$dir/$m.h; break; }
        done
        if [ -z "$h" ]; then
            echo "$prog: $t: nothing to mock for mock_$m.h (no $m.h under port/, src/ or include/)"
            exit 1
        fi
        sh tools/cmocka/gen_mock.sh "$h" "$d/mocks" || exit 1
    done

    # 1. the runner's includes
    {
        echo "/* The #include lines Ceedling's runner for $t will hold. */"
        includes_of "$t" | awk '
            /^(unity|cmock|CException)\.h$/ { next }
            /^mock_/ { mocks[++nm] = $0; next }
            { printf "#include \"%s\"\n", $0 }
            END { for (i = 1; i <= nm; i++) printf "#include \"%s\"\n", mocks[i] }'
        echo "typedef int ${n}_runner_includes_compile;"
    } >"$d/runner_includes.c"
    # shellcheck disable=SC2086
    if ! $cc $ceedling_flags -Itools/cmocka -I"$d/mocks" $support_include $ceedling_include \
            -fsyntax-only "$d/runner_includes.c" 2>"$d/runner_includes.log"; then
        cat "$d/runner_includes.log"
        echo "$prog: $t: an #include does not survive Ceedling's runner (it copies every #include, #if ignored, as \"file name\" without folders; see $d/runner_includes.c). Move it into a header under test/support/."
        exit 1
    fi

    # 2. the link with only what the test names
    sh tools/cmocka/gen_runner.sh "$t" >"$d/${n}_runner.c" || exit 1
    sources=$(sh tools/cmocka/gen_runner.sh --sources "$t") || exit 1
    mock_sources=
    for m in $mocks; do
        mock_sources="$mock_sources $d/mocks/mock_$m.c"
    done
    # shellcheck disable=SC2086
    if ! $cc $strict_flags -Itools/cmocka -I"$d/mocks" $support_include $ceedling_include \
            "$t" "$d/${n}_runner.c" $sources $mock_sources $libs -o "$d/$n" 2>"$d/link.log"; then
        cat "$d/link.log"
        echo "$prog: $t: does not build with only the sources it names with TEST_SOURCE_FILE (and its mocks)"
        exit 1
    fi
done
echo "$prog: every test's runner includes resolve as Ceedling writes them, and every test links with only the sources it names"
