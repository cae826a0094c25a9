/* SPDX-License-Identifier: MIT */
/* The floor under a ring hop: coroutines on the port's switch, with nothing of kpn above it. */
#include <stdint.h>
#include "kpn.h"
#include "port.h"
#include "bench.h"
#include "bare.h"

/*
 * No kpn above the port here.  N coroutines in a ring, each a stack
 * whose top line holds its context, a link to the next, one to the
 * coroutine --ahead hops on and a one-word slot; a hop writes the token
 * into the next one's slot, asks for the lines of the one --ahead hops
 * on (by default two: the one after the next, as kpn's wake asks for
 * those of the process it makes ready; --prefetch=0 leaves that out)
 * and switches straight to the next.  No channel, no queue, no checks,
 * no counters, no resolver: what a hop costs with the port's switch on
 * kpn's layout in a net of one runner (each stack top on a line of its
 * own, the records the same odd number of lines apart, as kpn lays out
 * a ring built in a loop), and nothing else.  Beside bench/ring at
 * the same size the difference is kpn's, and how the hop grows with the
 * ring says how much of bench/ring's step from 1 000 to 10 000
 * processes the machine's caches would take from any runtime (docs/benchmarks.md, "Large nets"); a
 * larger --ahead, how much of that step asking earlier takes back.
 * --kpn_lines adds as many of the lines a kpn hop touches beyond these
 * three, so that beside bench/ring at 10 000 processes the difference is
 * what kpn's hop spends besides the lines it touches.
 */

enum { LINE = BARE_LINE };

/* The stride from one coroutine to the next: 'bytes', and one line more
 * where that is an even number of lines, as kpn's spawn lays out a net
 * of one runner (src/proc.c, odd_stride_pad). */
static size_t odd_stride(size_t bytes)
{
    return bytes / LINE % 2 == 0 ? bytes + LINE : bytes;
}

/* Above each stack's top, right after its context. */
struct coro {
    struct coro *next;
    struct coro *far; /* --ahead hops on */
    long long slot; /* the token as the one before passed it on */
    unsigned char *chan; /* --kpn_lines: its channel's lines */
    unsigned char *far_chan; /* --kpn_lines: far->chan, kept here so that asking for
                                it waits on no load of far's line */
};

/* --kpn_lines=L: L of the four lines a kpn hop touches beyond these
 * three, in this order, where bench/ring has them: two lines of the
 * channel into the next one, which bench/ring connects as it spawns
 * that one, so that kpn carves it right after that one's record (CHAN
 * bytes each); the record's third line (two lines above the slot); the
 * guard words at the foot of the stack.  With L of 1 or more each
 * record takes three lines, as kpn's does (a coroutine and its channel
 * then take 4 544 bytes on amd64, a process of bench/ring and its
 * channel 5 056, its guard band among them). */
enum { CHAN = 256 };

static unsigned char arena[256u << 20] __attribute__((aligned(64)));
static size_t ctx_room; /* a context's bytes, rounded up; each coro follows its own */
static long long trips;
static int prefetch, kpn_lines;
static size_t stack_bytes;

static kpn_port_ctx *ctx_of(struct coro *c)
{
    return (kpn_port_ctx *)(void *)((unsigned char *)c - ctx_room);
}

/* Every coroutine passes the token on 'trips' times, touching 'lines'
 * of kpn's four more lines of the next one's and asking for as many of
 * the one --ahead hops on.  The first then goes back to main and leaves
 * the others parked: the next run lays the arena out afresh.  In line
 * in two callers, so that the plain hop, 'lines' 0, compiles to what it
 * would without them. */
static inline void hop_with(struct coro *self, int lines)
{
    struct coro *next = self->next;
    long long k;

    for (k = 0; k < trips; ++k) {
        next->slot = self->slot + 1;
        if (lines > 0) {
            /* the channel's lines written, the record's third line and
             * the guard words read: bytes of the static arena nothing
             * writes, zero, so the token stays the count */
            const unsigned char *top = (const unsigned char *)ctx_of(next);

            next->chan[0]++;
            if (lines > 1)
                next->chan[LINE]++;
            if (lines > 2)
                next->slot += top[ctx_room + 2 * LINE];
            if (lines > 3)
                next->slot += top[-(ptrdiff_t)stack_bytes];
        }
        if (prefetch) {
            /* its slot and the two lines below its stack's top, where
             * it saved its registers */
            const unsigned char *top = (const unsigned char *)ctx_of(self->far);

            __builtin_prefetch(top + ctx_room, 1);
            __builtin_prefetch(top - LINE, 1);
            __builtin_prefetch(top - 2 * LINE, 1);
            if (lines > 0)
                __builtin_prefetch(self->far_chan, 1);
            if (lines > 1)
                __builtin_prefetch(self->far_chan + LINE, 1);
            if (lines > 2)
                __builtin_prefetch(top + ctx_room + 2 * LINE, 0);
            if (lines > 3)
                __builtin_prefetch(top - stack_bytes, 0);
        }
        kpn_port_switch(ctx_of(self), ctx_of(next));
    }
    kpn_port_switch(ctx_of(self), bare_host_ctx());
}

static void hop(void *arg)
{
    hop_with(arg, 0);
}

static void hop_lines(void *arg)
{
    hop_with(arg, kpn_lines);
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"procs", "coroutines in the ring", 1000, NULL, 2, 1000000},
        {"trips", "round trips the token makes", 1000, NULL, 1, 1000000000},
        {"stack", "stack bytes per coroutine (rounded up to 64)", 4096, NULL, KPN_STACK_MIN,
         1 << 24},
        {"runs", "timed runs; the median is reported", 5, NULL, 1, 1000},
        {"prefetch", "1: each hop asks for the lines of the coroutine --ahead hops on; 0: it "
                     "asks for nothing", 1, NULL, 0, 1},
        {"ahead", "hops on to the coroutine whose lines a hop asks for (2: the one after the "
                  "next, as kpn's wake asks for)", 2, NULL, 1, 1000},
        {"kpn_lines", "lines a hop also touches (and asks ahead for), of the four more a kpn "
                      "hop touches: two of a channel, a third record line, the guard words",
         0, NULL, 0, 4},
    };
    enum { PROCS, TRIPS, STACK, RUNS, PREFETCH, AHEAD, KPN_LINES };
    double ns[1000], t0;
    long long n, i;
    size_t stack, stride, block;
    int run, runs, verified = 1;

    /* as many coroutines as the arena holds at the least stack */
    ctx_room = bare_ctx_room();
    stride = odd_stride(bare_lines(KPN_STACK_MIN) + bare_lines(ctx_room + sizeof(struct coro)));
    if ((long long)(sizeof arena / stride) < opt[PROCS].max)
        opt[PROCS].max = (long long)(sizeof arena / stride);
    bench_parse(argc, argv,
                "Pass a token round a ring of bare coroutines on the port's switch; report ns "
                "per hop, the floor under bench/ring's.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    n = opt[PROCS].value;
    trips = opt[TRIPS].value;
    runs = (int)opt[RUNS].value;
    prefetch = (int)opt[PREFETCH].value;
    kpn_lines = (int)opt[KPN_LINES].value;
    stack = stack_bytes = bare_lines((size_t)opt[STACK].value);
    /* with --kpn_lines a record of three lines, as kpn's, and the
     * channel into the coroutine after it */
    block = stack + bare_lines(ctx_room + sizeof(struct coro)) + (kpn_lines ? 2 * LINE : 0);
    stride = odd_stride(block + (kpn_lines ? CHAN : 0));
    if ((size_t)n > sizeof arena / stride) {
        bench_note("--procs=%lld with --stack=%lld needs %zu bytes of arena, has %zu; use "
                   "fewer --procs or a smaller --stack",
                   n, opt[STACK].value, (size_t)n * stride, sizeof arena);
        return 2;
    }

    for (run = 0; run < runs; ++run) {
        struct coro *first = NULL, *prev = NULL;

        for (i = 0; i < n; ++i) {
            unsigned char *top = arena + (size_t)i * stride + stack;
            struct coro *c = (struct coro *)(void *)(top + ctx_room);

            c->next = NULL;
            c->slot = 0;
            c->chan = kpn_lines > 0 ? arena + (size_t)i * stride + block : NULL;
            kpn_port_init((kpn_port_ctx *)(void *)top, top - stack, stack,
                          kpn_lines > 0 ? hop_lines : hop, c);
            if (prev != NULL)
                prev->next = c;
            else
                first = c;
            prev = c;
        }
        prev->next = first;
        {
            struct coro *c = first, *far = first;

            for (i = 0; i < opt[AHEAD].value; ++i)
                far = far->next;
            for (i = 0; i < n; ++i, c = c->next, far = far->next) {
                c->far = far;
                c->far_chan = far->chan;
            }
        }
        t0 = bench_now();
        kpn_port_switch(bare_host_ctx(), ctx_of(first));
        ns[run] = (bench_now() - t0) * 1e9 / (double)(n * trips);
        if (first->slot != n * trips)
            verified = 0;
        bench_note("run %d/%d: %.1f ns/hop", run + 1, runs, ns[run]);
    }
    bench_result("procs=%lld hops=%lld ns_per_hop=%.1f port=%s trips=%lld stack=%zu runs=%d "
                 "prefetch=%d ahead=%lld kpn_lines=%d verified=%d",
                 n, n * trips, bench_median(ns, runs), KPN_BENCH_PORT, trips, stack, runs,
                 prefetch, opt[AHEAD].value, kpn_lines, verified);
    return verified ? 0 : 1;
}
