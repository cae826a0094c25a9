# SPDX-License-Identifier: MIT
# Writes kpn.c, the amalgamation, on standard output; tools/amalgamate.sh
# gives it the port table (-v table), the core files (-v core), the
# version and the revision.  POSIX awk: every file is read with getline.
#
# What it does to the tree's files, and why:
#  - "quoted" includes of the tree are inlined once, where first met;
#    <system> includes stay where they are.
#  - '#define _X...' feature-test macros before a .c file's first include
#    are hoisted to the top (with the conditionals round them), since
#    they must come before the first system header of the whole file.
#  - macros a .c file defines are #undef'ed after it: in the split build
#    they never left their file.
#  - file-scope 'static' names must differ between files that can be
#    compiled together; a clash fails the run (two 'static int x;' in one
#    file would silently become one object).
#  - a .S file becomes one top-level __asm__ statement: each assembly
#    line a string, its comments and its simple preprocessor lines kept as
#    C, its object-like macros pasted in with KPNI_STR.

function fail(msg) {
    print "amalgamate: " msg > "/dev/stderr"
    failed = 1
    exit 1
}

function trim(s) {
    sub(/^[ \t]+/, "", s)
    sub(/[ \t]+$/, "", s)
    return s
}

function is_ident(s) {
    return s ~ /^[A-Za-z_][A-Za-z0-9_]*$/
}

function dir_of(path) {
    if (path !~ /\//)
        return "."
    sub(/\/[^\/]*$/, "", path)
    return path
}

function exists(path,    line, r) {
    r = (getline line < path)
    if (r >= 0)
        close(path)
    return r >= 0
}

# The file a '#include "name"' in 'from' means: its own folder first,
# then the split build's -Iinclude -Iport -Isrc.
function resolve(name, from,    d, n, i, dirs, p) {
    d = dir_of(from)
    n = split(d " include port src", dirs, " ")
    for (i = 1; i <= n; ++i) {
        p = dirs[i] "/" name
        sub(/^\.\//, "", p)
        if (exists(p))
            return p
    }
    fail("'" from "' includes \"" name "\", which is not in the tree")
}

function directive(line,    d) {
    d = line
    sub(/^[ \t]*#[ \t]*/, "", d)
    sub(/[^A-Za-z_].*$/, "", d)
    return d
}

# The name a '#define' line defines.
function defined_name(line,    d) {
    d = line
    sub(/^[ \t]*#[ \t]*define[ \t]+/, "", d)
    sub(/[^A-Za-z0-9_].*$/, "", d)
    return d
}

# The name a file-scope line starting with 'static' declares: the last
# identifier before '(', '[', '=', ';' or '{'.
function static_name(line,    s) {
    s = line
    sub(/[\(\[=;\{].*$/, "", s)
    s = trim(s)
    sub(/^.*[^A-Za-z0-9_]/, "", s)
    return s
}

function banner(text) {
    print ""
    print "/************************************************************ " text " */"
}

# Lines before the first #include of a .c file that define feature-test
# macros, with the conditionals round them; "" if there are none.
function prologue(path,    line, text, depth, d, any) {
    text = ""
    depth = 0
    any = 0
    while ((getline line < path) > 0) {
        if (line !~ /^[ \t]*#/)
            continue
        d = directive(line)
        if (d == "include")
            break
        if (d == "if" || d == "ifdef" || d == "ifndef") {
            ++depth
            text = text line "\n"
        } else if (d == "elif" || d == "else") {
            text = text line "\n"
        } else if (d == "endif") {
            --depth
            text = text line "\n"
        } else if (d == "define" && defined_name(line) ~ /^_/) {
            any = 1
            text = text "#ifndef " defined_name(line) "\n" line "\n#endif\n"
        }
    }
    close(path)
    if (depth != 0)
        fail("'" path "': its first #include sits inside a conditional; cannot hoist its feature macros")
    return any ? text : ""
}

# Copy a C file, inlining the tree's headers once.  'undefs' collects
# (for a .c file) the macros to forget after it.
function emit_c(path,    line, name, target, seen_include, d, n) {
    if (!exists(path))
        fail("'" path "' is missing")
    seen_include = 0
    while ((getline line < path) > 0) {
        if (line ~ /^[ \t]*#/) {
            d = directive(line)
            if (d == "include" && line ~ /"/) {
                seen_include = 1
                name = line
                sub(/^[^"]*"/, "", name)
                sub(/".*$/, "", name)
                target = resolve(name, path)
                if (target in inlined) {
                    print "/* #include \"" name "\": " target ", above */"
                } else {
                    inlined[target] = 1
                    print "/* #include \"" name "\" */"
                    banner(target)
                    emit_c(target)
                    banner("end of " target)
                }
                continue
            }
            if (d == "include")
                seen_include = 1
            if (d == "define") {
                n = defined_name(line)
                if (!seen_include && n ~ /^_/ && path ~ /\.c$/) {
                    print "/* " line ": at the top of this file */"
                    continue
                }
                if (path ~ /\.c$/ && n !~ /^_/ && !((path SUBSEP n) in undef_seen)) {
                    undef_seen[path, n] = 1
                    undefs = undefs " " n
                }
            }
        }
        print line
    }
    close(path)
}

# Replace every whole-word 'word' in 's' by 'by'.
function replace_word(s, word, by,    out, i, before, after) {
    out = ""
    while ((i = index(s, word)) > 0) {
        before = (i > 1) ? substr(s, i - 1, 1) : ""
        after = substr(s, i + length(word), 1)
        if (before ~ /[A-Za-z0-9_]/ || after ~ /[A-Za-z0-9_]/) {
            out = out substr(s, 1, i + length(word) - 1)
        } else {
            out = out substr(s, 1, i - 1) by
        }
        s = substr(s, i + length(word))
    }
    return out s
}

# An assembly file as one top-level __asm__ statement.  Only what carries
# over unchanged is accepted: whole-line comments, #if/#ifdef/#ifndef/
# #elif/#else/#endif/#error, and object-like #defines used in the
# assembly; anything else fails the run with the line.
function emit_asm(path,    line, in_comment, d, n, m, s, i, macros, nmacros, rest) {
    if (!exists(path))
        fail("'" path "' is missing")
    nmacros = 0
    in_comment = 0
    n = 0
    print "__asm__("
    print "\"\\t.pushsection .text\\n\""
    while ((getline line < path) > 0) {
        ++n
        if (in_comment) {
            print line
            if (index(line, "*/") > 0) {
                in_comment = 0
                rest = substr(line, index(line, "*/") + 2)
                if (trim(rest) != "")
                    fail(path ":" n ": assembly after a comment on one line")
            }
            continue
        }
        s = trim(line)
        if (s == "") {
            print ""
            continue
        }
        if (substr(s, 1, 2) == "/*") {
            print line
            rest = substr(s, 3)
            if (index(rest, "*/") == 0) {
                in_comment = 1
            } else if (trim(substr(rest, index(rest, "*/") + 2)) != "") {
                fail(path ":" n ": assembly after a comment on one line")
            }
            continue
        }
        if (substr(s, 1, 1) == "#") {
            d = directive(s)
            if (s ~ /\\$/)
                fail(path ":" n ": a continued preprocessor line")
            if (d == "define") {
                m = defined_name(s)
                rest = s
                sub(/^#[ \t]*define[ \t]+[A-Za-z0-9_]+/, "", rest)
                if (substr(rest, 1, 1) == "(")
                    fail(path ":" n ": function-like macro '" m "'")
                if (!((path SUBSEP m) in undef_seen)) {
                    undef_seen[path, m] = 1
                    macros[++nmacros] = m
                    undefs = undefs " " m
                }
            } else if (d != "if" && d != "ifdef" && d != "ifndef" && d != "elif" &&
                       d != "else" && d != "endif" && d != "error") {
                fail(path ":" n ": '#" d "' cannot be carried into C")
            }
            print line
            continue
        }
        if (index(s, "/*") > 0 || index(s, "//") > 0)
            fail(path ":" n ": a comment after assembly on one line")
        gsub(/\\/, "\\\\", line)
        gsub(/"/, "\\\"", line)
        line = "\"" line "\\n\""
        for (i = 1; i <= nmacros; ++i)
            line = replace_word(line, macros[i], "\" KPNI_STR(" macros[i] ") \"")
        print line
    }
    close(path)
    if (in_comment)
        fail(path ": ends inside a comment")
    print "\"\\t.popsection\\n\""
    print ");"
}

function emit_undefs(path,    k, n, names) {
    if (undefs == "")
        return
    print "/* What " path " defined stays in it, as in the split build. */"
    n = split(undefs, names, " ")
    for (k = 1; k <= n; ++k)
        print "#undef " names[k]
    undefs = ""
}

# The condition under which a port or thread file is compiled: whenever
# its port is, as in the split build (a hosted port's thread-service file
# also idles a net that waits for input, with or without KPN_THREADS).
function file_condition(f,    i, c) {
    c = ""
    for (i = 1; i <= nrows; ++i)
        if (index(" " pfiles[i] " ", " " f " ") || index(" " tfiles[i] " ", " " f " "))
            c = c (c == "" ? "" : " || ") "KPNI_PORT == " i
    return c
}

# Whether files 'a' and 'b' can be compiled together.
function together(a, b,    i) {
    if (a in is_core || b in is_core)
        return 1
    for (i = 1; i <= nrows; ++i)
        if (index(" " pfiles[i] " " tfiles[i] " ", " " a " ") &&
            index(" " pfiles[i] " " tfiles[i] " ", " " b " "))
            return 1
    return 0
}

function check_statics(    i, f, line, name, depth, key) {
    for (i = 1; i <= nall; ++i) {
        f = all[i]
        if (f !~ /\.c$/)
            continue
        while ((getline line < f) > 0) {
            if (line !~ /^static[ \t]/)
                continue
            name = static_name(line)
            if (!is_ident(name))
                continue
            if (name in static_file && static_file[name] != f &&
                together(static_file[name], f))
                fail("file-scope static '" name "' is in both " static_file[name] " and " f "; rename one in the tree")
            static_file[name] = f
        }
        close(f)
    }
}

BEGIN {
    failed = 0
    # ------------------------------------------------------------ inputs
    nrows = 0
    nl = split(table, lines, "\n")
    for (i = 1; i <= nl; ++i) {
        if (trim(lines[i]) == "" || lines[i] ~ /^[ \t]*#/)
            continue
        if (split(lines[i], col, ";") != 4)
            fail("port table line '" lines[i] "' needs four ;-separated columns")
        ++nrows
        pname[nrows] = trim(col[1])
        pcond[nrows] = trim(col[2])
        pfiles[nrows] = trim(col[3])
        tfiles[nrows] = trim(col[4])
        if (!is_ident(pname[nrows]))
            fail("port name '" pname[nrows] "' is not a C identifier")
    }
    ncore = split(core, corefiles, " ")
    nall = 0
    for (i = 1; i <= ncore; ++i) {
        is_core[corefiles[i]] = 1
        all[++nall] = corefiles[i]
    }
    nport = 0
    for (i = 1; i <= nrows; ++i) {
        n = split(pfiles[i] " " tfiles[i], fs, " ")
        for (j = 1; j <= n; ++j)
            if (!(fs[j] in listed)) {
                listed[fs[j]] = 1
                portfiles[++nport] = fs[j]
                all[++nall] = fs[j]
                if (!exists(fs[j]))
                    fail("port table names '" fs[j] "', which is not in the tree")
            }
    }
    check_statics()

    # ------------------------------------------------------------ head
    names = ""
    for (i = 1; i <= nrows; ++i)
        names = names (i > 1 ? " " : "") pname[i]
    print "/*"
    print " * kpn " version ", amalgamation: the whole library in one C file, with kpn.h"
    print " * beside it.  Generated by tools/amalgamate.sh from the kpn source tree"
    print " * (" revision "): change the tree, not this file."
    print " *"
    print " *     cc -O2 -c kpn.c            then link programs with kpn.o -lpthread"
    print " *"
    print " * The port comes from the compiler's predefined macros, first match:"
    for (i = 1; i <= nrows; ++i)
        print " *     " pname[i] "\t" (pcond[i] == "1" ? "otherwise" : pcond[i])
    print " * -DKPN_PORT=<one of: " names "> overrides.  'none' compiles no port:"
    print " * the firmware links its own (port/port.h in the tree says what)."
    print " * A port without thread services builds with KPN_THREADS 0 unless"
    print " * KPN_THREADS or KPN_CONFIG_FILE is given."
    print " */"
    print "/* SPDX-License-Identifier: MIT */"
    print ""
    print "/* Which port: KPNI_PORT is its row in the table above. */"
    for (i = 1; i <= nrows; ++i)
        print "#define KPNI_PORT_ID_" pname[i] " " i
    print "#define KPNI_PASTE(a, b) a##b"
    print "#define KPNI_XPASTE(a, b) KPNI_PASTE(a, b)"
    print "#define KPNI_STR2(x) #x"
    print "#define KPNI_STR(x) KPNI_STR2(x)"
    print "#if defined(KPN_PORT)"
    print "#define KPNI_PORT KPNI_XPASTE(KPNI_PORT_ID_, KPN_PORT)"
    for (i = 1; i <= nrows; ++i) {
        print "#elif " pcond[i]
        print "#define KPNI_PORT " i
    }
    print "#endif"
    print "#if !(KPNI_PORT >= 1 && KPNI_PORT <= " nrows ")"
    print "#error \"KPN_PORT must be one of: " names "\""
    print "#endif"
    c = ""
    for (i = 1; i <= nrows; ++i)
        if (tfiles[i] == "")
            c = c (c == "" ? "" : " || ") "KPNI_PORT == " i
    if (c != "") {
        print "/* No thread services in this port: one runner only. */"
        print "#if (" c ") && !defined(KPN_THREADS) && !defined(KPN_CONFIG_FILE)"
        print "#define KPN_THREADS 0"
        print "#endif"
    }

    # ------------------------------------------------ feature-test macros
    print ""
    print "/* Feature-test macros, before any system header. */"
    for (i = 1; i <= nall; ++i) {
        f = all[i]
        if (f !~ /\.c$/)
            continue
        p = prologue(f)
        if (p == "")
            continue
        print "/* from " f " */"
        cond = (f in is_core) ? "" : file_condition(f)
        if (cond != "")
            print "#if " cond
        printf "%s", p
        if (cond != "")
            print "#endif"
    }

    # ------------------------------------------------------------ body
    # The private header first, not kpn.h: it takes the user's options
    # and the port's settings (a Cortex-M's KPN_STACK_MIN, say) before
    # kpn.h, which only fills in what they left unset, as in the split
    # build.
    banner("src/kpn_int.h")
    inlined["src/kpn_int.h"] = 1
    emit_c("src/kpn_int.h")
    banner("end of src/kpn_int.h")
    for (i = 1; i <= ncore; ++i) {
        undefs = ""
        banner(corefiles[i])
        emit_c(corefiles[i])
        emit_undefs(corefiles[i])
    }
    for (i = 1; i <= nport; ++i) {
        f = portfiles[i]
        undefs = ""
        banner(f)
        print "#if " file_condition(f)
        if (f ~ /\.[sS]$/)
            emit_asm(f)
        else
            emit_c(f)
        print "#endif"
        emit_undefs(f)
    }
    banner("end of kpn.c")
    exit 0
}
