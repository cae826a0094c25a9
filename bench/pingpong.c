/* SPDX-License-Identifier: MIT */
/* The floor under a hand-off between runners: two threads passing one cache line back and forth,
 * or messages through a bare ring between them. */
#if defined(__linux__)
#define _GNU_SOURCE /* pthread_setaffinity_np */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
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
 *
 * With --ring=C the two threads pass messages instead, A writing and B
 * reading, through a bare single-producer single-consumer ring of C
 * 8-byte slots with kpn's counters: A's count of messages sent and B's of
 * messages received, each side keeping a copy of the other's and loading
 * the real one only when its copy says the ring is full or empty, B
 * storing its count at every message as a receive does.  That is the
 * floor under a message on a channel whose ends run on two runners and
 * never wait: at a ring of one slot each message moves the writer's line
 * to the reader and the reader's back.  --lines=2 lays the counters out
 * as a crossing channel's (docs/architecture.md): the writer's count,
 * its copy of the reader's and a ring of up to 6 slots on one line, the
 * reader's count and its copy on the next; --lines=1 puts them all on
 * one line (a ring of up to 4 slots in it), as a channel whose ends
 * never run at once keeps them.  A larger ring lies after the lines.
 */

/* the line the two threads share, alone on it */
static struct {
    long value;
    char pad[64 - sizeof(long)];
} line __attribute__((aligned(64)));

/* the ring's words, in the order --lines=2 lays them: the writer's
 * line (its count, its copy of the reader's, the slots), then the
 * reader's; --lines=1 moves the reader's two words to w[2] and w[3] */
static uint64_t ring_lines[16] __attribute__((aligned(64)));
static uint64_t ring_slots[1024] __attribute__((aligned(64)));
static uint64_t *sent_at, *received_at, *seen_received_at, *seen_sent_at, *slot;
static uint64_t capacity;
static uint64_t reader_sum, writer_sum;

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

/* B's side of the ring: take 'rounds' messages, summing them. */
static void *ring_reader(void *arg)
{
    uint64_t got = 0, sum = 0, n = (uint64_t)rounds;

    (void)arg;
    if (!pin(cpu_b))
        pinned = 0;
    while (got < n) {
        unsigned spins = 0;

        while (*seen_sent_at == got) { /* the copy says empty: look at the count */
            *seen_sent_at = __atomic_load_n(sent_at, __ATOMIC_ACQUIRE);
            if (*seen_sent_at == got && ++spins % 4096 == 0)
                sched_yield();
        }
        sum += slot[got % capacity];
        __atomic_store_n(received_at, ++got, __ATOMIC_RELEASE);
    }
    reader_sum = sum;
    return NULL;
}

/* A's side: send 'rounds' messages, 1 to rounds, summing them. */
static void ring_writer(void)
{
    uint64_t i, n = (uint64_t)rounds, sum = 0;

    for (i = 0; i < n; ++i) {
        unsigned spins = 0;

        while (i - *seen_received_at >= capacity) { /* the copy says full */
            *seen_received_at = __atomic_load_n(received_at, __ATOMIC_ACQUIRE);
            if (i - *seen_received_at >= capacity && ++spins % 4096 == 0)
                sched_yield();
        }
        slot[i % capacity] = i + 1;
        sum += i + 1;
        __atomic_store_n(sent_at, i + 1, __ATOMIC_RELEASE);
    }
    writer_sum = sum;
}

/* Lay the ring out for 'lines' and empty it. */
static void ring_lay(int lines)
{
    uint64_t *w = ring_lines;
    unsigned in_line = lines == 2 ? 6u : 4u; /* slots that fit in the writer's line */

    memset(ring_lines, 0, sizeof ring_lines);
    sent_at = &w[0];
    seen_received_at = &w[1];
    received_at = lines == 2 ? &w[8] : &w[2];
    seen_sent_at = lines == 2 ? &w[9] : &w[3];
    slot = capacity <= in_line ? &w[8 - in_line] : ring_slots;
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

/* A's side of the round trip: bump the line, wait for B's bump, 'rounds' times. */
static void line_a(void)
{
    long i;

    for (i = 0; i < rounds; ++i) {
        __atomic_store_n(&line.value, 2 * i + 1, __ATOMIC_RELEASE);
        await(2 * i + 2);
    }
}

/* One timed run: B's side on a thread of its own, A's on this one; ns a
 * round (a round trip, or a message); -1 if B's thread did not start. */
static double timed(void *(*b_side)(void *), void (*a_side)(void))
{
    pthread_t b;
    double t0;

    if (pthread_create(&b, NULL, b_side, NULL) != 0)
        return -1;
    t0 = bench_now();
    a_side();
    pthread_join(b, NULL); /* B has taken the last message */
    return (bench_now() - t0) * 1e9 / (double)rounds;
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"rounds", "round trips a run (with --ring: messages)", 1000000, NULL, 1000, 1000000000},
        {"runs", "timed runs; the median is reported", 5, NULL, 1, 1000},
        {"cpu_a", "CPU of the first thread (-1: the OS chooses)", 0, NULL, -1, 1023},
        {"cpu_b", "CPU of the second thread (-1: the OS chooses)", 1, NULL, -1, 1023},
        {"ring", "0: pass one line back and forth; C: pass 'rounds' messages through a ring of C "
                 "slots instead",
         0, NULL, 0, 1024},
        {"lines", "with --ring: 2, the ring's counters laid out as a crossing channel's; 1, all "
                  "on one line (0: 2 with --ring)",
         0, NULL, 0, 2},
    };
    enum { ROUNDS, RUNS, CPU_A, CPU_B, RING, LINES };
    double ns[1000];
    int run, runs, lines;

    bench_parse(argc, argv,
                "Two threads pass one cache line back and forth, bound to two CPUs; report the "
                "round trip, the floor under a hand-off between kpn's runners.  With --ring, "
                "they pass messages through a bare ring with kpn's counters instead; report "
                "the time a message, the floor under a channel between two runners.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    rounds = (long)opt[ROUNDS].value;
    runs = (int)opt[RUNS].value;
    cpu_b = (int)opt[CPU_B].value;
    capacity = (uint64_t)opt[RING].value;
    if (capacity == 0 && opt[LINES].value != 0) {
        bench_note("--lines=%lld lays out a ring: give --ring too", opt[LINES].value);
        return 2;
    }
    lines = opt[LINES].value ? (int)opt[LINES].value : 2;
    if (!pin((int)opt[CPU_A].value))
        pinned = 0;
    for (run = 0; run < runs; ++run) {
        if (capacity > 0)
            ring_lay(lines);
        else
            __atomic_store_n(&line.value, 0, __ATOMIC_RELEASE);
        ns[run] = capacity > 0 ? timed(ring_reader, ring_writer) : timed(thread_b, line_a);
        if (ns[run] < 0) {
            bench_note("pthread_create failed");
            return 1;
        }
        if (capacity > 0 && reader_sum != writer_sum) {
            bench_note("the reader summed %llu, the writer sent %llu",
                       (unsigned long long)reader_sum, (unsigned long long)writer_sum);
            return 1;
        }
        bench_note("run %d/%d: %.1f ns a %s", run + 1, runs, ns[run],
                   capacity > 0 ? "message" : "round trip");
    }
    if (!pinned)
        bench_note("the threads could not be bound to CPUs %lld and %lld",
                   opt[CPU_A].value, opt[CPU_B].value);
    if (capacity > 0)
        bench_result("rounds=%ld runs=%d cpu_a=%lld cpu_b=%lld pinned=%d ring=%llu lines=%d "
                     "ns_per_message=%.1f",
                     rounds, runs, opt[CPU_A].value, opt[CPU_B].value, pinned,
                     (unsigned long long)capacity, lines, bench_median(ns, runs));
    else
        bench_result("rounds=%ld runs=%d cpu_a=%lld cpu_b=%lld pinned=%d ns_per_round_trip=%.1f",
                     rounds, runs, opt[CPU_A].value, opt[CPU_B].value, pinned,
                     bench_median(ns, runs));
    return 0;
}
