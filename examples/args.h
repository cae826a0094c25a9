/* SPDX-License-Identifier: MIT */
/* The examples' command line: --name=value integers and --help, nothing more. */
#ifndef KPN_EXAMPLE_ARGS_H
#define KPN_EXAMPLE_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            fprintf(stderr, "%s: unknown argument '%s' (try --help)\n", argv[0], arg);
            exit(2);
        }
    }
}

/* The value of --name=value, or 'value' if absent; exits 2 outside lo..hi. */
static long args_get(int argc, char **argv, const char *name, long value, long lo, long hi)
{
    size_t len = strlen(name);

    for (int i = 1; i < argc; ++i)
        if (strncmp(argv[i], "--", 2) == 0 && strncmp(argv[i] + 2, name, len) == 0 &&
            argv[i][2 + len] == '=') {
            char *end;
            value = strtol(argv[i] + 3 + len, &end, 10);
            if (*end != '\0' || end == argv[i] + 3 + len)
                value = lo - 1;
        }
    if (value < lo || value > hi) {
        fprintf(stderr, "%s: --%s wants an integer in %ld..%ld\n", argv[0], name, lo, hi);
        exit(2);
    }
    return value;
}

#endif /* KPN_EXAMPLE_ARGS_H */
