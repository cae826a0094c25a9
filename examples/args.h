/* SPDX-License-Identifier: MIT */
/* The examples' command line: --name=value integers and --help, nothing more. */
#ifndef KPN_EXAMPLE_ARGS_H
#define KPN_EXAMPLE_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program's name as its messages start with: argv[0] without its
 * directories, as the benchmark drivers and h264 name themselves. */
static const char *args_prog(char **argv)
{
    const char *slash;

    if (argv[0] == NULL) /* argc 0 */
        return "example";
    slash = strrchr(argv[0], '/');
    return slash != NULL ? slash + 1 : argv[0];
}

/* Prints 'usage' and exits 0 if --help is given; exits 2 on an argument
 * that is not --name=value with a name in 'names' (space-separated). */
static void args_check(int argc, char **argv, const char *names, const char *usage)
{
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i], *eq = strchr(arg, '='), *n = names;
        int known = 0;

        if (strcmp(arg, "--help") == 0) {
            printf("%s", usage);
            exit(0);
        }
        if (strncmp(arg, "--", 2) == 0 && eq != NULL) {
            size_t len = (size_t)(eq - arg) - 2;
            for (; *n != '\0' && !known; n += strspn(n + strcspn(n, " "), " ") + strcspn(n, " "))
                known = strcspn(n, " ") == len && strncmp(n, arg + 2, len) == 0;
        }
        if (!known) {
            fprintf(stderr, "%s: unknown option '%s' (try --help)\n", args_prog(argv), arg);
            exit(2);
        }
    }
}

/* The value of --name=value (the last, if given twice), or 'value' if
 * absent; exits 2 if a value given is not an integer in lo..hi: decimal
 * digits after an optional '-', no spaces, no '+', nothing that
 * overflows a long. */
static long args_get(int argc, char **argv, const char *name, long value, long lo, long hi)
{
    size_t len = strlen(name);

    for (int i = 1; i < argc; ++i)
        if (strncmp(argv[i], "--", 2) == 0 && strncmp(argv[i] + 2, name, len) == 0 &&
            argv[i][2 + len] == '=') {
            const char *text = argv[i] + 3 + len, *digit = text + (text[0] == '-');
            char *end;
            errno = 0;
            value = strtol(text, &end, 10);
            if (*end != '\0' || *digit < '0' || *digit > '9' || errno == ERANGE || value < lo ||
                value > hi) {
                fprintf(stderr, "%s: --%s wants an integer in %ld..%ld, not '%s'\n",
                        args_prog(argv), name, lo, hi, text);
                exit(2);
            }
        }
    if (value < lo || value > hi) { /* a default the other options put out of range */
        fprintf(stderr, "%s: --%s wants an integer in %ld..%ld here\n", args_prog(argv), name,
                lo, hi);
        exit(2);
    }
    return value;
}

#endif /* KPN_EXAMPLE_ARGS_H */
