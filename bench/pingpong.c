/* SPDX-License-Identifier: MIT */
/* The floor under a hand-off between runners: two threads passing one cache line back and forth. */
#if defined(__linux__)
#define _GNU_SOURCE /* pthread_setaffinity_np */
#endif
#include <pthread.h>
#include <sched.h>
#include "bench.h"

/*
 * No kpn here.  Thread A bumps a counter in one cache line and waits for
 * thread B to bump it again; B does the same the other way.  A round
 * trip is two transfers of the line between the CPUs, the least any
 * hand-off between two runners can cost: the waker's write must reach
 * the other core, and the woken side's reply must come back.  A message
 * that crosses between kpn's runners moves several such lines (the
 * channel's, the woken process's record, its runner's lock and queue:
 * docs/runners.md), so this figure says how much of a two-runner
 * benchmark is the machine.  It swings on a virtual machine, with where
 * the host puts the two virtual CPUs (tools/bench/compare.sh reports it
 * in every round).
 */

/* the line the two threads share, alone on it */
static struct {
    long value;
    char pad[64 - sizeof(long)];
} line __attribute__((aligned(64)));

static long rounds;
static int cpu_b;
static int pinned = 1;

/* Bind the calling thread to 'cpu' (< 0: leave it to the OS); 0 if the
 * OS refused or cannot. */
static int pin(int cpu)
{
    if (cpu < 0)
        return 1;
#if defined(__linux__)
    {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    }
#else
    return 0;
#endif
}

/* Wait until the line holds 'want'.  Two threads bound to one CPU would
 * each spin out its time slice: after a while, let the other run. */
static void await(long want)
{
    unsigned spins = 0;

    while (__atomic_load_n(&line.value, __ATOMIC_ACQUIRE) != want)
        if (++spins % 4096 == 0)
            sched_yield();
}

static void *thread_b(void *arg)
{
    long i;

    (void)arg;
    if (!pin(cpu_b))
        pinned = 0;
    for (i = 0; i < rounds; ++i) {
        await(2 * i + 1);
        __atomic_store_n(&line.value, 2 * i + 2, __ATOMIC_RELEASE);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"rounds", "round trips a run", 1000000, NULL, 1000, 1000000000},
        {"runs", "timed runs; the median is reported", 5, NULL, 1, 1000},
        {"cpu_a", "CPU of the first thread (-1: the OS chooses)", 0, NULL, -1, 1023},
        {"cpu_b", "CPU of the second thread (-1: the OS chooses)", 1, NULL, -1, 1023},
    };
    enum { ROUNDS, RUNS, CPU_A, CPU_B };
    double ns[1000], t0;
    pthread_t b;
    int run, runs;
    long i;

    bench_parse(argc, argv,
                "Two threads pass one cache line back and forth, bound to two CPUs; report the "
                "round trip, the floor under a hand-off between kpn's runners.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    rounds = (long)opt[ROUNDS].value;
    runs = (int)opt[RUNS].value;
    cpu_b = (int)opt[CPU_B].value;
    if (!pin((int)opt[CPU_A].value))
        pinned = 0;
    for (run = 0; run < runs; ++run) {
        __atomic_store_n(&line.value, 0, __ATOMIC_RELEASE);
        if (pthread_create(&b, NULL, thread_b, NULL) != 0) {
            bench_note("pthread_create failed");
            return 1;
        }
        t0 = bench_now();
        for (i = 0; i < rounds; ++i) {
            __atomic_store_n(&line.value, 2 * i + 1, __ATOMIC_RELEASE);
            await(2 * i + 2);
        }
        ns[run] = (bench_now() - t0) * 1e9 / (double)rounds;
        pthread_join(b, NULL);
        bench_note("run %d/%d: %.1f ns a round trip", run + 1, runs, ns[run]);
    }
    if (!pinned)
        bench_note("the threads could not be bound to CPUs %lld and %lld",
                   opt[CPU_A].value, opt[CPU_B].value);
    bench_result("rounds=%ld runs=%d cpu_a=%lld cpu_b=%lld pinned=%d ns_per_round_trip=%.1f", rounds,
                 runs, opt[CPU_A].value, opt[CPU_B].value, pinned, bench_median(ns, runs));
    return 0;
}
