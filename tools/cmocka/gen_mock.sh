#!/bin/sh
# gen_mock.sh - write a CMock-compatible mock of one header, for cmocka.
#
#   sh tools/cmocka/gen_mock.sh port/port.h OUTDIR
#
# writes OUTDIR/mock_port.h and OUTDIR/mock_port.c. A test that says
# `#include "mock_port.h"` gets, under `make test`, the same names with the
# same meaning as the mock CMock generates under `ceedling test:all` with
# project.yml's :cmock: settings (:when_ptr: :compare_ptr,
# :enforce_strict_ordering: true, plugins :ignore and :callback). For each
# function `R f(ARGS)` of the header:
#
#   f_Expect(ARGS)                 void f: expect one call with these arguments
#   f_ExpectAndReturn(ARGS, r)     non-void f: the same, and return r
#   f_Ignore()                     void f: accept any calls, any arguments
#   f_IgnoreAndReturn(r)           non-void f: the same; calls return the
#                                  queued values in turn, then the last for ever
#   f_StopIgnore()                 back to checking expectations
#   f_StubWithCallback(cb), f_Stub(cb)
#                                  every call goes to cb(ARGS, cmock_num_calls)
#                                  instead; expectations are not consulted
#   f_AddCallback(cb)              each call is checked against the next
#                                  expectation, then cb is called (its
#                                  result is what f returns)
#   f_CallCount()                  calls the callback has had
#
# and mock_NAME_Init(), _Verify(), _Destroy(), which the runner written by
# gen_runner.sh calls around each test, as Ceedling's runner does.
#
# What is checked, as CMock does: each function's expectations in the order
# they were set, and, across all functions of all mocks, that expected
# calls come in the order their expectations were set ("Called earlier
# than expected." / "Called later than expected."); every argument by
# value, pointers by address; a call with no expectation left fails
# ("Called more times than expected."); at the end of each test, after
# tearDown(), an expectation never met fails it ("Called fewer times than
# expected."). Ignored and stubbed calls take no part in the ordering.
# Failures read like Unity's, "file:line:test:FAIL: Function f. ...",
# naming the line of the expectation where there is one.
#
# Limits (the generator refuses a header outside them, naming the
# declaration): prototypes only (no bodies, no variadic functions, no array
# parameters); parameters are scalars, pointers or function pointers;
# `#if` in the header is ignored (every prototype is mocked). At most
# MOCK_MAX (256) expectations per function per test.
#
# POSIX sh and awk only.

set -u

prog=gen_mock.sh

[ $# -eq 2 ] || { echo "usage: sh $prog HEADER.h OUTDIR" >&2; exit 2; }
header=$1
outdir=$2
[ -r "$header" ] || { echo "$prog: cannot read $header" >&2; exit 1; }
mkdir -p "$outdir" || exit 1

base=$(basename "$header" .h)
mock=mock_$base

awk -v header="$header" -v base="$base" -v mock="$mock" \
    -v out_h="$outdir/$mock.h" -v out_c="$outdir/$mock.c" -v prog="$prog" '
function trim(s) { sub(/^[ \t\n]+/, "", s); sub(/[ \t\n]+$/, "", s); gsub(/[ \t\n]+/, " ", s); return s }
function die(msg) { printf "%s: %s: %s\n", prog, header, msg > "/dev/stderr"; failed = 1; exit 1 }
# Split "a, b (*c)(d, e), f" at top-level commas into parts[1..n].
function split_params(s, parts,    n, depth, i, c, cur) {
    n = 0; depth = 0; cur = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "(") depth++
        if (c == ")") depth--
        if (c == "," && depth == 0) { parts[++n] = trim(cur); cur = ""; continue }
        cur = cur c
    }
    parts[++n] = trim(cur)
    return n
}
{
    line = $0
    sub(/\r$/, "", line)
    # comments: block comments may span lines
    out = ""
    while (line != "") {
        if (incomment) {
            p = index(line, "*/")
            if (p == 0) { line = ""; break }
            line = substr(line, p + 2); incomment = 0; continue
        }
        p = index(line, "/*"); q = index(line, "//")
        if (q > 0 && (p == 0 || q < p)) { out = out substr(line, 1, q - 1); line = ""; break }
        if (p == 0) { out = out line; line = ""; break }
        out = out substr(line, 1, p - 1) " "; line = substr(line, p + 2); incomment = 1
    }
    if (out ~ /^[ \t]*#/) next
    text = text " " out
}
END {
    if (failed) exit 1
    nfn = 0; nfp = 0
    nstmt = split(text, stmts, ";")
    for (k = 1; k <= nstmt; k++) {
        s = trim(stmts[k])
        if (s == "" || s ~ /^typedef / || s ~ /^(struct|union|enum) [A-Za-z_0-9]+$/ || s ~ /^extern "C"/) continue
        if (s ~ /[{}]/) {
            gsub(/extern "C" *\{|\}/, "", s); s = trim(s)
            if (s == "") continue
        }
        if (!match(s, /^[A-Za-z_][A-Za-z_0-9 *]*[ *][A-Za-z_][A-Za-z_0-9]* *\(.*\)$/)) {
            die("cannot mock the declaration: " s)
        }
        p = index(s, "(")
        head = trim(substr(s, 1, p - 1))
        params = substr(s, p + 1); params = trim(substr(params, 1, length(params) - 1))
        name = head; sub(/^.*[ *]/, "", name)
        ret = trim(substr(head, 1, length(head) - length(name)))
        sub(/^extern /, "", ret)
        if (ret ~ /(^| )static( |$)/) continue
        nfn++
        fname[nfn] = name; fret[nfn] = ret
        np = 0
        if (params != "void" && params != "") {
            n = split_params(params, parts)
            for (i = 1; i <= n; i++) {
                d = parts[i]
                if (d == "..." ) die("variadic function " name)
                if (d ~ /\[/) die("array parameter in " name)
                np++
                if (match(d, /\( *\* *[A-Za-z_][A-Za-z_0-9]* *\)/)) {
                    pn = substr(d, RSTART, RLENGTH); gsub(/[ ()*]/, "", pn)
                    nfp++
                    tname = "cmock_" base "_func_ptr" nfp
                    td = d; sub(/\( *\* *[A-Za-z_][A-Za-z_0-9]* *\)/, "(*" tname ")", td)
                    fptypedef[nfp] = "typedef " td ";"
                    ptype[nfn, np] = tname; pkind[nfn, np] = "fn"
                } else {
                    if (!match(d, /[A-Za-z_][A-Za-z_0-9]*$/)) die("unnamed parameter in " name)
                    pn = substr(d, RSTART)
                    pt = trim(substr(d, 1, RSTART - 1))
                    if (pt == "") die("parameter without a type in " name)
                    ptype[nfn, np] = pt
                    if (pt ~ /\*/) pkind[nfn, np] = "ptr"
                    else if (pt ~ /(unsigned|size_t|uint[0-9a-z_]*_t|uintptr_t)/) pkind[nfn, np] = "uint"
                    else pkind[nfn, np] = "int"
                }
                pname[nfn, np] = pn
            }
        }
        fnp[nfn] = np
    }
    if (nfn == 0) die("no function prototypes")

    guard = toupper(mock) "_H"
    gsub(/[^A-Z0-9_]/, "_", guard)

    # ------------------------------------------------------------ header
    printf "/* Generated by tools/cmocka/gen_mock.sh from %s - do not edit. */\n", header > out_h
    printf "#ifndef %s\n#define %s\n\n", guard, guard > out_h
    printf "#include \"unity.h\"\n#include \"%s.h\"\n\n", base > out_h
    printf "void %s_Init(void);\nvoid %s_Verify(void);\nvoid %s_Destroy(void);\n\n", mock, mock, mock > out_h
    for (i = 1; i <= nfp; i++) print fptypedef[i] > out_h
    for (f = 1; f <= nfn; f++) {
        n = fname[f]; r = fret[f]; isvoid = (r == "void")
        args = ""; decl = ""; cbdecl = ""
        for (i = 1; i <= fnp[f]; i++) {
            args = args (i > 1 ? ", " : "") pname[f, i]
            decl = decl ", " ptype[f, i] " " pname[f, i]
        }
        cbdecl = substr(decl, 3); cbdecl = cbdecl (cbdecl != "" ? ", " : "") "int cmock_num_calls"
        rargs = args (args != "" ? ", " : "") "cmock_retval"
        printf "\n/* %s */\n", n > out_h
        printf "typedef %s (*CMOCK_%s_CALLBACK)(%s);\n", r, n, cbdecl > out_h
        if (isvoid) {
            printf "#define %s_Expect(%s) %s_CMockExpect(__FILE__, __LINE__%s)\n", n, args, n, (args != "" ? ", " args : "") > out_h
            printf "#define %s_ExpectAndReturn(%s) TEST_FAIL_MESSAGE(\"%s requires _Expect (not AndReturn)\")\n", n, rargs, n > out_h
            printf "#define %s_Ignore() %s_CMockIgnore()\n", n, n > out_h
            printf "#define %s_IgnoreAndReturn(cmock_retval) TEST_FAIL_MESSAGE(\"%s requires _Ignore (not AndReturn)\")\n", n, n > out_h
            printf "void %s_CMockExpect(const char *cmock_file, int cmock_line%s);\n", n, decl > out_h
            printf "void %s_CMockIgnore(void);\n", n > out_h
        } else {
            printf "#define %s_Expect(%s) TEST_FAIL_MESSAGE(\"%s requires _ExpectAndReturn\")\n", n, args, n > out_h
            printf "#define %s_ExpectAndReturn(%s) %s_CMockExpectAndReturn(__FILE__, __LINE__%s, cmock_retval)\n", n, rargs, n, (args != "" ? ", " args : "") > out_h
            printf "#define %s_Ignore() TEST_FAIL_MESSAGE(\"%s requires _IgnoreAndReturn\")\n", n, n > out_h
            printf "#define %s_IgnoreAndReturn(cmock_retval) %s_CMockIgnoreAndReturn(__FILE__, __LINE__, cmock_retval)\n", n, n > out_h
            printf "void %s_CMockExpectAndReturn(const char *cmock_file, int cmock_line%s, %s cmock_to_return);\n", n, decl, r > out_h
            printf "void %s_CMockIgnoreAndReturn(const char *cmock_file, int cmock_line, %s cmock_to_return);\n", n, r > out_h
        }
        printf "#define %s_StopIgnore() %s_CMockStopIgnore()\n", n, n > out_h
        printf "void %s_CMockStopIgnore(void);\n", n > out_h
        printf "void %s_AddCallback(CMOCK_%s_CALLBACK Callback);\n", n, n > out_h
        printf "void %s_Stub(CMOCK_%s_CALLBACK Callback);\n", n, n > out_h
        printf "#define %s_StubWithCallback %s_Stub\n", n, n > out_h
        printf "int %s_CallCount(void);\n", n > out_h
    }
    printf "\n#endif /* %s */\n", guard > out_h

    # ------------------------------------------------------------ source
    printf "/* Generated by tools/cmocka/gen_mock.sh from %s - do not edit. */\n", header > out_c
    printf "#include <stdint.h>\n#include <string.h>\n#include \"%s.h\"\n\n", mock > out_c
    print "#define MOCK_MAX 256\n" > out_c
    for (f = 1; f <= nfn; f++) {
        n = fname[f]; r = fret[f]; isvoid = (r == "void")
        printf "typedef struct {\n    const char *file;\n    int line;\n    int order;\n" > out_c
        if (!isvoid) printf "    %s ret;\n", r > out_c
        for (i = 1; i <= fnp[f]; i++) printf "    %s expected_%s;\n", ptype[f, i], pname[f, i] > out_c
        printf "} %s_call;\n\n", n > out_c
    }
    print "static struct {" > out_c
    for (f = 1; f <= nfn; f++) {
        n = fname[f]; r = fret[f]
        printf "    struct {\n        %s_call calls[MOCK_MAX];\n", n > out_c
        print "        int head, tail;        /* calls[head..tail) not yet made */" > out_c
        print "        int ignore;            /* _Ignore / _IgnoreAndReturn in force */" > out_c
        print "        int callback_checked;  /* _AddCallback (1) or _Stub (0) */" > out_c
        print "        int callback_calls;" > out_c
        printf "        CMOCK_%s_CALLBACK callback;\n", n > out_c
        if (r != "void") printf "        %s final_return;\n", r > out_c
        printf "    } %s;\n", n > out_c
    }
    print "} mock;\n" > out_c

    print "static void mock_fail(const char *file, int line, const char *fn, const char *what)" > out_c
    print "{" > out_c
    print "    kpn_unity_failf_(file != NULL ? file : kpn_unity_file_(), line, NULL, \"Function %s. %s\", fn, what);" > out_c
    print "}\n" > out_c
    # argument mismatches: only the printers this header needs (an unused
    # static function is a warning, and tests build with -Werror)
    for (f = 1; f <= nfn; f++) for (i = 1; i <= fnp[f]; i++) kinds[pkind[f, i]] = 1
    if ("ptr" in kinds) {
        print "static void mock_fail_ptr(const char *file, int line, const char *fn, const char *arg," > out_c
        print "                          const void *expected, const void *actual)" > out_c
        print "{" > out_c
        print "    kpn_unity_failf_(file, line, NULL, \"Function %s Argument %s. Expected 0x%llX Was 0x%llX. %s\"," > out_c
        print "                     fn, arg, (unsigned long long)(uintptr_t)expected, (unsigned long long)(uintptr_t)actual," > out_c
        print "                     \"Function called with unexpected argument value.\");" > out_c
        print "}\n" > out_c
    }
    if ("uint" in kinds) {
        print "static void mock_fail_uint(const char *file, int line, const char *fn, const char *arg," > out_c
        print "                           unsigned long long expected, unsigned long long actual)" > out_c
        print "{" > out_c
        print "    kpn_unity_failf_(file, line, NULL, \"Function %s Argument %s. Expected %llu Was %llu. %s\"," > out_c
        print "                     fn, arg, expected, actual, \"Function called with unexpected argument value.\");" > out_c
        print "}\n" > out_c
    }
    if ("int" in kinds) {
        print "static void mock_fail_int(const char *file, int line, const char *fn, const char *arg," > out_c
        print "                          long long expected, long long actual)" > out_c
        print "{" > out_c
        print "    kpn_unity_failf_(file, line, NULL, \"Function %s Argument %s. Expected %lld Was %lld. %s\"," > out_c
        print "                     fn, arg, expected, actual, \"Function called with unexpected argument value.\");" > out_c
        print "}\n" > out_c
    }
    print "static void mock_order(const char *file, int line, const char *fn, int order)" > out_c
    print "{" > out_c
    print "    if (order > ++kpn_unity_state.verify_order)" > out_c
    print "        mock_fail(file, line, fn, \"Called earlier than expected.\");" > out_c
    print "    if (order < kpn_unity_state.verify_order)" > out_c
    print "        mock_fail(file, line, fn, \"Called later than expected.\");" > out_c
    print "}\n" > out_c

    printf "void %s_Init(void)\n{\n    memset(&mock, 0, sizeof mock);\n}\n\n", mock > out_c
    printf "void %s_Destroy(void)\n{\n    memset(&mock, 0, sizeof mock);\n}\n\n", mock > out_c
    printf "void %s_Verify(void)\n{\n", mock > out_c
    for (f = 1; f <= nfn; f++) {
        n = fname[f]
        printf "    if (!mock.%s.ignore && mock.%s.head < mock.%s.tail)\n", n, n, n > out_c
        printf "        mock_fail(mock.%s.calls[mock.%s.head].file, mock.%s.calls[mock.%s.head].line, \"%s\", \"Called fewer times than expected.\");\n", n, n, n, n, n > out_c
    }
    print "}" > out_c

    for (f = 1; f <= nfn; f++) {
        n = fname[f]; r = fret[f]; isvoid = (r == "void")
        M = "mock." n
        args = ""; decl = ""
        for (i = 1; i <= fnp[f]; i++) {
            args = args (i > 1 ? ", " : "") pname[f, i]
            decl = decl (i > 1 ? ", " : "") ptype[f, i] " " pname[f, i]
        }
        cbargs = args (args != "" ? ", " : "")
        printf "\n/* ---- %s */\n\n", n > out_c
        # a new queued call
        printf "static %s_call *%s_push(const char *file, int line)\n{\n", n, n > out_c
        printf "    %s_call *c;\n\n", n > out_c
        printf "    if (%s.tail == MOCK_MAX) {\n", M > out_c
        printf "        mock_fail(file, line, \"%s\", \"CMock has run out of memory. Please allocate more.\");\n", n > out_c
        print "        return NULL;\n    }" > out_c
        printf "    c = &%s.calls[%s.tail++];\n", M, M > out_c
        print "    memset(c, 0, sizeof *c);\n    c->file = file;\n    c->line = line;\n    return c;\n}\n" > out_c

        # the mocked function
        printf "%s %s(%s)\n{\n", r, n, (decl != "" ? decl : "void") > out_c
        printf "    %s_call *c = %s.head < %s.tail ? &%s.calls[%s.head] : NULL;\n", n, M, M, M, M > out_c
        if (!isvoid) printf "    %s ret;\n", r > out_c
        printf "\n    if (c != NULL)\n        %s.head++;\n", M > out_c
        printf "    if (%s.ignore) {\n", M > out_c
        if (isvoid) print "        return;" > out_c
        else {
            printf "        if (c != NULL)\n            %s.final_return = c->ret;\n", M > out_c
            printf "        return %s.final_return;\n", M > out_c
        }
        print "    }" > out_c
        printf "    if (!%s.callback_checked && %s.callback != NULL)\n", M, M > out_c
        printf "        %s%s.callback(%s%s.callback_calls++);\n", (isvoid ? "" : "return "), M, cbargs, M > out_c
        if (isvoid) printf "    if (!%s.callback_checked && %s.callback != NULL)\n        return;\n", M, M > out_c
        printf "    if (c == NULL) {\n        mock_fail(NULL, kpn_unity_state.test_line, \"%s\", \"Called more times than expected.\");\n", n > out_c
        if (isvoid) print "        return;\n    }" > out_c
        else print "        return 0;\n    }" > out_c
        printf "    mock_order(c->file, c->line, \"%s\", c->order);\n", n > out_c
        for (i = 1; i <= fnp[f]; i++) {
            a = pname[f, i]; k = pkind[f, i]
            printf "    if (c->expected_%s != %s)\n", a, a > out_c
            if (k == "fn")
                printf "        mock_fail(c->file, c->line, \"%s\", \"Argument %s: not the function pointer expected.\");\n", n, a > out_c
            else if (k == "ptr")
                printf "        mock_fail_ptr(c->file, c->line, \"%s\", \"%s\", (const void *)c->expected_%s, (const void *)%s);\n", n, a, a, a > out_c
            else if (k == "uint")
                printf "        mock_fail_uint(c->file, c->line, \"%s\", \"%s\", (unsigned long long)c->expected_%s, (unsigned long long)%s);\n", n, a, a, a > out_c
            else
                printf "        mock_fail_int(c->file, c->line, \"%s\", \"%s\", (long long)c->expected_%s, (long long)%s);\n", n, a, a, a > out_c
        }
        if (isvoid) {
            printf "    if (%s.callback != NULL)\n        %s.callback(%s%s.callback_calls++);\n}\n\n", M, M, cbargs, M > out_c
        } else {
            printf "    ret = c->ret;\n" > out_c
            printf "    if (%s.callback != NULL)\n        ret = %s.callback(%s%s.callback_calls++);\n", M, M, cbargs, M > out_c
            print "    return ret;\n}\n" > out_c
        }

        # expectations
        if (isvoid) {
            printf "void %s_CMockExpect(const char *cmock_file, int cmock_line%s)\n{\n", n, (decl != "" ? ", " decl : "") > out_c
        } else {
            printf "void %s_CMockExpectAndReturn(const char *cmock_file, int cmock_line%s, %s cmock_to_return)\n{\n", n, (decl != "" ? ", " decl : ""), r > out_c
        }
        printf "    %s_call *c = %s_push(cmock_file, cmock_line);\n\n", n, n > out_c
        print "    if (c == NULL)\n        return;" > out_c
        printf "    %s.ignore = 0;\n", M > out_c
        print "    c->order = ++kpn_unity_state.expect_count;" > out_c
        if (!isvoid) print "    c->ret = cmock_to_return;" > out_c
        for (i = 1; i <= fnp[f]; i++) printf "    c->expected_%s = %s;\n", pname[f, i], pname[f, i] > out_c
        print "}\n" > out_c

        if (isvoid) {
            printf "void %s_CMockIgnore(void)\n{\n    %s.ignore = 1;\n}\n\n", n, M > out_c
        } else {
            printf "void %s_CMockIgnoreAndReturn(const char *cmock_file, int cmock_line, %s cmock_to_return)\n{\n", n, r > out_c
            printf "    %s_call *c = %s_push(cmock_file, cmock_line);\n\n", n, n > out_c
            print "    if (c == NULL)\n        return;" > out_c
            printf "    c->ret = cmock_to_return;\n    %s.ignore = 1;\n}\n\n", M > out_c
        }
        # as CMock: for a function with a result, drop the oldest call
        # still queued (a value an IgnoreAndReturn queued and no call
        # took); the Ignore of a void function queued nothing
        printf "void %s_CMockStopIgnore(void)\n{\n", n > out_c
        if (!isvoid) printf "    if (%s.ignore && %s.head < %s.tail)\n        %s.head++;\n", M, M, M, M > out_c
        printf "    %s.ignore = 0;\n}\n\n", M > out_c
        printf "void %s_AddCallback(CMOCK_%s_CALLBACK Callback)\n{\n", n, n > out_c
        printf "    %s.ignore = 0;\n    %s.callback_checked = 1;\n    %s.callback_calls = 0;\n    %s.callback = Callback;\n}\n\n", M, M, M, M > out_c
        printf "void %s_Stub(CMOCK_%s_CALLBACK Callback)\n{\n", n, n > out_c
        printf "    %s.ignore = 0;\n    %s.callback_checked = 0;\n    %s.callback_calls = 0;\n    %s.callback = Callback;\n}\n\n", M, M, M, M > out_c
        printf "int %s_CallCount(void)\n{\n    return %s.callback_calls;\n}\n", n, M > out_c
    }
}
' "$header" || { rm -f "$outdir/$mock.h" "$outdir/$mock.c"; exit 1; }
