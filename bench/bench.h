/* SPDX-License-Identifier: MIT */
/* What every benchmark driver shares: options, the clock, medians, the burn loop, progress, the result line, failures. */
#ifndef KPN_BENCH_H
#define KPN_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpn.h"

/* The port the driver was built for, named in its result line; the
 * Makefile sets it. */
#ifndef KPN_BENCH_PORT
#define KPN_BENCH_PORT "unknown"
#endif

/*
 * A driver's life: bench_parse reads '--name=value' options (and answers
 * --help), bench_calibrate times the burn loop, the driver builds and runs
 * its nets, reporting each run with bench_note on stderr, and it ends with
 * bench_result: ONE line of name=value pairs on stdout, the line scripts
 * read.  Any kpn call that fails goes to bench_fail, which prints the
 * status's sentence and the net's report and exits 1.
 */

/* One option: '--name=value', an integer or (if 'text' is set) a string. */
typedef struct bench_opt {
    const char *name;
    const char *help;
    long long value;         /* integer options: default in, result out */
    const char *text;        /* string options: default in, result out */
    long long min, max;      /* accepted range of integer options */
} bench_opt;

/* Parses argv into 'o' (n options) and remembers the program's name for
 * the messages below; prints 'what' and the options and exits 0 on
 * --help, exits 2 on an unknown option or a value out of range. */
void bench_parse(int argc, char **argv, const char *what, bench_opt *o, int n);

/* The program's name, as bench_parse found it ("bench" before). */
const char *bench_name(void);

/* --policy=ws|static and --wake=last|waker; exit 2 on anything else. */
kpn_policy bench_policy(const char *text);
/* --policy ws, static or auto: auto is KPN_POLICY_STATIC with the
 * placement kpn_place learns from the 1-runner run (*automatic set). */
kpn_policy bench_placement(const char *text, int *automatic);
/* kpn_place, or exit with its status. */
void bench_place(kpn_net *net, unsigned runners, unsigned *home, size_t n);
kpn_wake bench_wake(const char *text);

/* How many objects of 'each' bytes fit in an arena of 'arena' bytes
 * beside 'fixed' bytes and a net of 'cfg' at its largest runner count,
 * at most 'most': the largest process count a driver can promise. */
long long bench_fit(const kpn_config *cfg, size_t arena, size_t fixed, size_t each,
                    long long most);

/* Seconds on the monotonic clock. */
double bench_now(void);

/* Sorts 'v' (n >= 1 values) in place and returns its median. */
double bench_median(double *v, int n);

/* Burns 'n' iterations of a busy loop: the unit of CPU work.  Its code is
 * reached through a volatile pointer, so calibration and every caller run
 * the very same machine code (an inlined copy may be placed differently:
 * on one test machine a copy whose loop straddled a 32-byte fetch boundary
 * ran half as fast). */
void bench_burn(uint64_t n);

/* Iterations of bench_burn per microsecond on this machine: a trial grows
 * until it takes 20 ms, the loop runs on until half a second has passed,
 * then the median of 7 trials of that length.  A CPU that has been idle
 * can run the loop at half its pace for the first few hundred
 * milliseconds (on an AMD EPYC guest, 40 to 310 ms): a rate timed then
 * is half of what the runs that follow see, and would have a net burn
 * half the work its options ask for.  '*trial' (may be NULL) gets the
 * trial's iterations. */
double bench_calibrate(uint64_t *trial);

/* A line on stderr, prefixed with the program's name: progress and
 * commentary, never read by scripts. */
void bench_note(const char *fmt, ...);

/* The result: "NAME: " and then 'fmt', which must be space-separated
 * name=value pairs, on stdout, and a newline.  Call it once, last. */
void bench_result(const char *fmt, ...);

/* 'v[0..n-1]' joined with commas, in a buffer that the next call
 * overwrites: a list value for the result line. */
const char *bench_list(const uint64_t *v, unsigned n);

/* Prints "NAME: <what>: <kpn_strerror(s)>" and, if 'net' is not NULL,
 * kpn_report of it, on stderr; exits 1. */
void bench_fail(const kpn_net *net, kpn_status s, const char *what, ...);

/* Runs 'net' and returns the seconds kpn_run took (runner start-up
 * included); any status but KPN_OK goes to bench_fail with the report. */
double bench_run(kpn_net *net);

/* Exits through bench_fail when a kpn call does not return KPN_OK. */
#define BENCH_CHECK(call)                                                       \
    do {                                                                        \
        kpn_status bench_s = (call);                                            \
        if (bench_s != KPN_OK)                                                  \
            bench_fail(NULL, bench_s, "%s:%d: %s", __FILE__, __LINE__, #call);  \
    } while (0)

#endif /* KPN_BENCH_H */
