/* SPDX-License-Identifier: MIT */
/* The benchmark drivers' shared helper: options, clock, medians, burn loop, progress, result line, failures. */
#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <stdarg.h>
#include <time.h>

#include "bench.h"

/* A driver is one program: its name is the one piece of state here. */
static const char *program = "bench";

const char *bench_name(void)
{
    return program;
}

static void usage(const char *what, const bench_opt *o, int n)
{
    int i;

    printf("usage: %s [--name=value ...]\n%s\n\noptions:\n", program, what);
    for (i = 0; i < n; ++i) {
        if (o[i].text != NULL && o[i].text[0] == '\0') /* its help says what empty means */
            printf("  --%-12s %s\n", o[i].name, o[i].help);
        else if (o[i].text != NULL)
            printf("  --%-12s %s (default %s)\n", o[i].name, o[i].help, o[i].text);
        else
            printf("  --%-12s %s (default %lld, %lld..%lld)\n", o[i].name, o[i].help,
                   o[i].value, o[i].min, o[i].max);
    }
    printf("  --help         this text\n"
           "\nProgress goes to stderr; the last line on stdout is name=value pairs for "
           "scripts.\n");
}

/* Sets the option 'arg' ("--name=value") names; 0 if it names none. */
static int set_option(const char *arg, bench_opt *o, int n)
{
    const char *eq = strchr(arg, '=');
    int i;

    if (eq == NULL || strncmp(arg, "--", 2) != 0)
        return 0;
    for (i = 0; i < n; ++i) {
        size_t len = (size_t)(eq - arg - 2);
        const char *digit;
        char *end;
        long long v;

        if (strlen(o[i].name) != len || strncmp(arg + 2, o[i].name, len) != 0)
            continue;
        if (o[i].text != NULL) {
            o[i].text = eq + 1;
            return 1;
        }
        /* decimal digits after an optional '-': strtoll alone would also
         * take leading spaces and a '+', and clamp an overflow to the
         * largest value, which may be in range */
        digit = eq + 1 + (eq[1] == '-');
        errno = 0;
        v = strtoll(eq + 1, &end, 10);
        if (*end != '\0' || *digit < '0' || *digit > '9' || errno == ERANGE || v < o[i].min ||
            v > o[i].max) {
            fprintf(stderr, "%s: --%s wants an integer in %lld..%lld, not '%s'\n", program,
                    o[i].name, o[i].min, o[i].max, eq + 1);
            exit(2);
        }
        o[i].value = v;
        return 1;
    }
    return 0;
}

void bench_parse(int argc, char **argv, const char *what, bench_opt *o, int n)
{
    const char *slash;
    int a;

    if (argc > 0 && argv[0] != NULL) {
        slash = strrchr(argv[0], '/');
        program = slash != NULL ? slash + 1 : argv[0];
    }
    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            usage(what, o, n);
            exit(0);
        }
        if (!set_option(argv[a], o, n)) {
            fprintf(stderr, "%s: unknown option '%s' (try --help)\n", program, argv[a]);
            exit(2);
        }
    }
}

/* 0 if 'text' is 'first', 1 if it is 'second'; exits 2 on anything else. */
static int one_of(const char *option, const char *text, const char *first, const char *second)
{
    if (strcmp(text, first) == 0)
        return 0;
    if (strcmp(text, second) == 0)
        return 1;
    fprintf(stderr, "%s: --%s wants %s or %s, not '%s'\n", program, option, first, second, text);
    exit(2);
}

kpn_policy bench_policy(const char *text)
{
    return one_of("policy", text, "ws", "static") ? KPN_POLICY_STATIC : KPN_POLICY_WS;
}

kpn_policy bench_placement(const char *text, int *automatic)
{
    *automatic = strcmp(text, "auto") == 0;
    if (!*automatic && strcmp(text, "ws") != 0 && strcmp(text, "static") != 0) {
        fprintf(stderr, "%s: --policy wants ws, static or auto, not '%s'\n", program, text);
        exit(2);
    }
    return *automatic ? KPN_POLICY_STATIC : bench_policy(text);
}

void bench_place(kpn_net *net, unsigned runners, unsigned *home, size_t n)
{
    kpn_status s = kpn_place(net, runners, home, n);

    if (s != KPN_OK)
        bench_fail(net, s, "kpn_place on %u runners", runners);
}

kpn_wake bench_wake(const char *text)
{
    return one_of("wake", text, "last", "waker") ? KPN_WAKE_WAKER : KPN_WAKE_LAST;
}

long long bench_fit(const kpn_config *cfg, size_t arena, size_t fixed, size_t each,
                    long long most)
{
    kpn_config c = *cfg;
    size_t net = kpn_size_net(&c), fit;

    c.runners = KPN_MAX_RUNNERS; /* the runner stacks come from the arena too */
    if (kpn_size_net(&c) > net)
        net = kpn_size_net(&c);
    if (each == 0 || net > arena || fixed > arena - net)
        return 0;
    fit = (arena - net - fixed) / each;
    return fit < (unsigned long long)most ? (long long)fit : most;
}

double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The accumulator is volatile so that every iteration loads and stores,
 * and local so that runners burning at once on different cores share no
 * cache line.  The function starts a cache line, so that the loop, 19
 * bytes at offset 24, lies in one: on an AMD EPYC guest the same loop
 * placed across two lines ran at half the iterations a microsecond, and
 * where it falls moves with any change to the code before it. */
#if defined(__GNUC__)
__attribute__((aligned(64)))
#endif
static void burn(uint64_t n)
{
    volatile uint64_t acc = 0;

    while (n-- > 0)
        acc += n;
    (void)acc; /* read once more: clang counts the stores alone as unused */
}

static void (*volatile burn_code)(uint64_t) = burn;

void bench_burn(uint64_t n)
{
    burn_code(n);
}

/* seconds the loop runs before it is timed (bench.h says why) */
#define WARM_S 0.5

double bench_calibrate(uint64_t *trial)
{
    enum { TRIALS = 7 };
    double rate[TRIALS], t0, t, warm;
    uint64_t n = 1000;
    int i;

    warm = bench_now() + WARM_S;
    for (;;) {
        t0 = bench_now();
        bench_burn(n);
        t = bench_now() - t0;
        if (t >= 0.020 || n >= (UINT64_C(1) << 40))
            break;
        n *= 2;
    }
    while (bench_now() < warm)
        bench_burn(n);
    for (i = 0; i < TRIALS; ++i) {
        t0 = bench_now();
        bench_burn(n);
        t = bench_now() - t0;
        rate[i] = (double)n / (t > 0 ? t * 1e6 : 1e-3);
    }
    if (trial != NULL)
        *trial = n;
    return bench_median(rate, TRIALS);
}

void bench_note(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void bench_result(const char *fmt, ...)
{
    va_list ap;

    printf("%s: ", program);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

const char *bench_list(const uint64_t *v, unsigned n)
{
    static char text[KPN_MAX_RUNNERS * 24 + 1];
    size_t used = 0;
    unsigned i;

    text[0] = '\0';
    for (i = 0; i < n && used + 24 < sizeof text; ++i)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%llu", i ? "," : "",
                                 (unsigned long long)v[i]);
    return text;
}

void bench_fail(const kpn_net *net, kpn_status s, const char *what, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", program);
    va_start(ap, what);
    vfprintf(stderr, what, ap);
    va_end(ap);
    fprintf(stderr, ": %s\n", kpn_strerror(s));
    if (net != NULL) {
        char text[4096];
        size_t need = kpn_report(net, text, sizeof text);
        fprintf(stderr, "%s", text);
        if (need >= sizeof text)
            fprintf(stderr, "(report truncated: %zu bytes)\n", need);
    }
    exit(1);
}

double bench_run(kpn_net *net)
{
    double t0 = bench_now(), t;
    kpn_status s = kpn_run(net);

    t = bench_now() - t0;
    if (s != KPN_OK)
        bench_fail(net, s, "kpn_run");
    return t;
}
