/* SPDX-License-Identifier: MIT */
/* What every example shares: --name=value options, --help, a clock, a median. */
#ifndef KPN_EXAMPLE_H
#define KPN_EXAMPLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kpn.h"

#ifndef KPN_BENCH_PORT
#define KPN_BENCH_PORT "unknown"
#endif

/* One option: '--name=value', an integer or (if 'text' is set) a string. */
typedef struct ex_opt {
    const char *name;
    const char *help;
    long long value;         /* integer options: default in, result out */
    const char *text;        /* string options: default in, result out */
    long long min, max;      /* accepted range of integer options */
} ex_opt;

static inline void ex_usage(FILE *f, const char *prog, const char *what, const ex_opt *o, int n)
{
    int i;
    fprintf(f, "usage: %s [--name=value ...]\n%s\n\noptions:\n", prog, what);
    for (i = 0; i < n; ++i) {
        if (o[i].text != NULL)
            fprintf(f, "  --%-12s %s (default %s)\n", o[i].name, o[i].help, o[i].text);
        else
            fprintf(f, "  --%-12s %s (default %lld, %lld..%lld)\n", o[i].name, o[i].help,
                    o[i].value, o[i].min, o[i].max);
    }
    fprintf(f, "  --help         this text\n"
               "\nThe last line printed is name=value pairs for scripts.\n");
}

/* Parses argv into 'o'; exits 0 after --help, 2 on a bad option. */
static inline void ex_parse(int argc, char **argv, const char *what, ex_opt *o, int n)
{
    int a, i;
    for (a = 1; a < argc; ++a) {
        const char *arg = argv[a], *eq;
        int found = 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            ex_usage(stdout, argv[0], what, o, n);
            exit(0);
        }
        eq = strchr(arg, '=');
        for (i = 0; i < n && eq != NULL && strncmp(arg, "--", 2) == 0; ++i) {
            size_t len = (size_t)(eq - arg - 2);
            if (strlen(o[i].name) != len || strncmp(arg + 2, o[i].name, len) != 0)
                continue;
            found = 1;
            if (o[i].text != NULL) {
                o[i].text = eq + 1;
            } else {
                char *end;
                long long v = strtoll(eq + 1, &end, 10);
                if (*end != '\0' || end == eq + 1 || v < o[i].min || v > o[i].max) {
                    fprintf(stderr, "%s: --%s wants an integer in %lld..%lld, not '%s'\n",
                            argv[0], o[i].name, o[i].min, o[i].max, eq + 1);
                    exit(2);
                }
                o[i].value = v;
            }
        }
        if (!found) {
            fprintf(stderr, "%s: unknown option '%s' (try --help)\n", argv[0], arg);
            exit(2);
        }
    }
}

static inline double ex_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int ex_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts 'v' in place and returns its median. */
static inline double ex_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, ex_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --policy=ws|static and --wake=last|waker; exits 2 on anything else. */
static inline kpn_policy ex_policy(const char *prog, const char *text)
{
    if (strcmp(text, "ws") == 0)
        return KPN_POLICY_WS;
    if (strcmp(text, "static") == 0)
        return KPN_POLICY_STATIC;
    fprintf(stderr, "%s: --policy wants ws or static, not '%s'\n", prog, text);
    exit(2);
}

static inline kpn_wake ex_wake(const char *prog, const char *text)
{
    if (strcmp(text, "last") == 0)
        return KPN_WAKE_LAST;
    if (strcmp(text, "waker") == 0)
        return KPN_WAKE_WAKER;
    fprintf(stderr, "%s: --wake wants last or waker, not '%s'\n", prog, text);
    exit(2);
}

/* Exits with a sentence when a kpn call fails. */
#define EX_CHECK(call)                                                           \
    do {                                                                         \
        kpn_status ex_s = (call);                                                \
        if (ex_s != KPN_OK) {                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
                    kpn_strerror(ex_s));                                         \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#endif /* KPN_EXAMPLE_H */
