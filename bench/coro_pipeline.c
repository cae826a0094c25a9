/* SPDX-License-Identifier: MIT */
/* The floor under a pipeline's message-stage: bench/pipeline's stages on bare coroutines and bare rings. */
#include <stdint.h>
#include "kpn.h"
#include "port.h"
#include "bench.h"
#include "bare.h"
#include "pipeline.h"

/*
 * bench/pipeline's net with no kpn above the port: S + 2 coroutines on the
 * port's switch (the source, S stages, the sink) joined by rings of
 * --capacity messages.  Each does to a message what bench/pipeline's
 * process in its place does (pipeline.h: the source's first form, a
 * stage's burn and step, the sink's check), but a receive is a look at
 * two counts and a copy out, a send a look and a copy in, and a coroutine
 * that cannot go on switches straight to the next one in the pipeline's
 * order, the sink to the source.  Each turn the source fills its ring and
 * each stage in turn empties its input into its output: a ring's worth of
 * messages a switch, as many switches as kpn's run queue makes of the
 * same net on one runner.  No handles, no caller checks, no queue, no
 * resolver, no counters.  Beside `bench/pipeline --runners=1` at the same
 * options the difference is kpn's channel path and scheduler
 * (docs/benchmarks.md, "Pipeline").
 */

enum { MAX_STAGES = 1000 };

/* One channel, read and written on one thread: counts and positions. */
struct ring {
    struct msg *buf;
    size_t cap, sent, received, wpos, rpos;
    int closed;
};

/* Above each stack's top, right after its context. */
struct coro {
    struct ring *in, *out; /* 'in' NULL for the source, 'out' NULL for the sink */
    struct coro *next;     /* the sink's: the source */
    uint32_t number;       /* 0 the source, 1..S the stages, S+1 the sink */
};

static unsigned char arena[64u << 20] __attribute__((aligned(64)));
static size_t ctx_room; /* a context's bytes, rounded up; each coro follows its own */

/* Set by main before each run. */
static long long messages, stages;
static uint64_t burn_iterations;
/* Written by the sink. */
static long long sink_count, sink_bad;

static kpn_port_ctx *ctx_of(struct coro *c)
{
    return (kpn_port_ctx *)(void *)((unsigned char *)c - ctx_room);
}

static void pass(struct coro *self)
{
    kpn_port_switch(ctx_of(self), ctx_of(self->next));
}

/* Out of line, as kpn's waits are, so that a send or receive that does
 * not wait sets up no frame for it. */
static __attribute__((noinline)) void wait_room(struct coro *self, struct ring *r)
{
    while (r->sent - r->received == r->cap)
        pass(self);
}

/* 0 once the ring is empty and closed. */
static __attribute__((noinline)) int wait_msg(struct coro *self, struct ring *r)
{
    while (r->sent == r->received) {
        if (r->closed)
            return 0;
        pass(self);
    }
    return 1;
}

static inline void put(struct coro *self, struct ring *r, const struct msg *m)
{
    if (r->sent - r->received == r->cap)
        wait_room(self, r);
    r->buf[r->wpos] = *m;
    r->wpos = r->wpos + 1 == r->cap ? 0 : r->wpos + 1;
    r->sent++;
}

static inline int get(struct coro *self, struct ring *r, struct msg *m)
{
    if (r->sent == r->received && !wait_msg(self, r))
        return 0;
    *m = r->buf[r->rpos];
    r->rpos = r->rpos + 1 == r->cap ? 0 : r->rpos + 1;
    r->received++;
    return 1;
}

/* Its reader drains the ring and finds it closed; until the sink is done
 * this one only passes its turns on.  Nothing resumes it after that: the
 * next run lays the arena out afresh. */
static void close_and_pass(struct coro *self)
{
    self->out->closed = 1;
    for (;;)
        pass(self);
}

static void source(void *arg)
{
    struct coro *self = arg;
    struct msg m;
    long long i;

    for (i = 0; i < messages; ++i) {
        msg_first(&m, (uint32_t)i);
        put(self, self->out, &m);
    }
    close_and_pass(self);
}

static void stage(void *arg)
{
    struct coro *self = arg;
    struct msg m;

    while (get(self, self->in, &m)) {
        bench_burn(burn_iterations);
        msg_stage(&m, self->number);
        put(self, self->out, &m);
    }
    close_and_pass(self);
}

static void sink(void *arg)
{
    struct coro *self = arg;
    struct msg m;
    uint64_t mul, add;
    long long count = 0, bad = 0;

    whole_pipeline((uint32_t)stages, &mul, &add);
    while (get(self, self->in, &m)) {
        if (!msg_right(&m, (uint32_t)count, (uint32_t)stages, mul, add))
            ++bad;
        ++count;
    }
    sink_count = count;
    sink_bad = bad;
    kpn_port_switch(ctx_of(self), bare_host_ctx());
}

/* Lays out the coroutines and rings afresh and runs the pipeline from the
 * source to the sink's last message; the wall time. */
static double run_once(size_t stack, size_t capacity)
{
    static struct ring ring[MAX_STAGES + 1];
    static struct coro *coro[MAX_STAGES + 2];
    size_t stride = stack + bare_lines(ctx_room + sizeof(struct coro));
    unsigned char *bufs = arena + (size_t)(stages + 2) * stride;
    long long i, n = stages + 2;
    double t0;

    for (i = 0; i < n; ++i) {
        unsigned char *top = arena + (size_t)i * stride + stack;
        struct coro *c = (struct coro *)(void *)(top + ctx_room);
        void (*fn)(void *) = i == 0 ? source : i == n - 1 ? sink : stage;

        c->in = i == 0 ? NULL : &ring[i - 1];
        c->out = i == n - 1 ? NULL : &ring[i];
        c->number = (uint32_t)i;
        kpn_port_init((kpn_port_ctx *)(void *)top, top - stack, stack, fn, c);
        coro[i] = c;
    }
    for (i = 0; i + 1 < n; ++i) {
        struct ring *r = &ring[i];

        r->buf = (struct msg *)(void *)(bufs + (size_t)i * capacity * sizeof(struct msg));
        r->cap = capacity;
        r->sent = r->received = r->wpos = r->rpos = 0;
        r->closed = 0;
    }
    for (i = 0; i < n; ++i)
        coro[i]->next = coro[(i + 1) % n];
    sink_count = sink_bad = 0;
    t0 = bench_now();
    kpn_port_switch(bare_host_ctx(), ctx_of(coro[0]));
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"stages", "stages between the source and the sink", 50, NULL, 1, MAX_STAGES},
        {"d", "messages the source sends (work division)", 1000000, NULL, 1, 100000000},
        {"t_ms", "ms of CPU each stage burns, summed over all messages", 1, NULL, 1, 1000000},
        {"capacity", "messages each ring holds", 64, NULL, 1, 1 << 20},
        {"stack", "stack bytes per coroutine (rounded up to 64)", 16384, NULL, KPN_STACK_MIN,
         1 << 20},
        {"runs", "timed runs; the median is reported", 3, NULL, 1, 100},
    };
    enum { STAGES, D, T_MS, CAPACITY, STACK, RUNS };
    double wall[100], med, iterations_per_us, work_us;
    uint64_t trial;
    size_t stack, capacity, need;
    int run, runs, verified = 1;

    bench_parse(argc, argv,
                "bench/pipeline's stages on bare coroutines on the port's switch, joined by\n"
                "bare rings; report ns per message-stage, the floor under bench/pipeline's\n"
                "1-runner figure at the same options.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    stages = opt[STAGES].value;
    messages = opt[D].value;
    capacity = (size_t)opt[CAPACITY].value;
    runs = (int)opt[RUNS].value;
    ctx_room = bare_ctx_room();
    stack = bare_lines((size_t)opt[STACK].value);
    need = (size_t)(stages + 2) * (stack + bare_lines(ctx_room + sizeof(struct coro))) +
           (size_t)(stages + 1) * capacity * sizeof(struct msg);
    if (need > sizeof arena) {
        bench_note("needs %zu bytes of arena, has %zu; use fewer --stages, a smaller "
                   "--capacity or --stack",
                   need, sizeof arena);
        return 1;
    }

    iterations_per_us = bench_calibrate(&trial);
    work_us = (double)opt[T_MS].value * 1000.0 / (double)messages;
    burn_iterations = (uint64_t)(iterations_per_us * work_us + 0.5);
    bench_note("burn calibrated at %.1f iterations/us; %.3f us = %llu iterations per message "
               "per stage",
               iterations_per_us, work_us, (unsigned long long)burn_iterations);

    for (run = 0; run < runs; ++run) {
        wall[run] = run_once(stack, capacity);
        if (sink_count != messages || sink_bad != 0) {
            verified = 0;
            bench_note("the sink got %lld of %lld messages, %lld wrong", sink_count, messages,
                       sink_bad);
        }
        bench_note("run %d/%d: %.3f s, %.2f ns per message-stage", run + 1, runs, wall[run],
                   wall[run] * 1e9 / (double)(messages * stages));
    }
    med = bench_median(wall, runs);
    bench_result("stages=%lld d=%lld capacity=%zu t_ms=%lld wall=%.3f ns_per_stage=%.2f "
                 "port=%s stack=%zu runs=%d work_us=%.3f iterations_per_us=%.1f verified=%d",
                 stages, messages, capacity, opt[T_MS].value, med,
                 med * 1e9 / (double)(messages * stages), KPN_BENCH_PORT, stack, runs, work_us,
                 iterations_per_us, verified);
    return verified ? 0 : 1;
}
