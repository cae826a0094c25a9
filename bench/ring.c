/* SPDX-License-Identifier: MIT */
/* The papers' ring benchmark (lmbench's lat_ctx): tokens pass around N processes. */
#include <limits.h>
#include "kpn.h"
#include "bench.h"

/*
 * Process 0 puts 'tokens' tokens into the ring and forwards each one until
 * it has made 'trips' round trips; every other process forwards whatever
 * arrives.  A hop is one [send -> switch -> receive] transaction, the
 * figure the papers report.  When process 0 returns its output closes,
 * and the EOF travels round the ring so every process exits.  Process 0
 * counts the tokens it gets back and checks they come in the order it
 * sent them (0, 1, ..., tokens - 1, 0, ...): a run that ends short, or
 * with the tokens out of order, fails the program.
 */

struct ring_proc {
    kpn_chan *in, *out;
};

static long long trips, tokens;
static double started, stopped;
static long long returned, misordered; /* process 0's, read after the run */

/*
 * Each process copies its two handles into locals, so they live in
 * callee-saved registers across the calls rather than being read back
 * from rp[] on every hop: the table is not part of what a hop costs.
 */
static void first(void *arg)
{
    const struct ring_proc *rp = arg;
    kpn_chan *in = rp->in, *out = rp->out;
    long long i, total = trips * tokens, bad = 0;
    int t, expect = 0;

    started = bench_now();
    for (t = 0; t < tokens; ++t)
        kpn_send(out, &t);
    for (i = 0; i < total; ++i) {
        if (kpn_recv(in, &t) != KPN_OK)
            break;
        bad += t != expect;
        if (++expect == tokens)
            expect = 0;
        if (i < total - tokens)
            kpn_send(out, &t);
    }
    stopped = bench_now();
    returned = i;
    misordered = bad;
}

static void forward(void *arg)
{
    const struct ring_proc *rp = arg;
    kpn_chan *in = rp->in, *out = rp->out;
    int t;

    while (kpn_recv(in, &t) == KPN_OK)
        kpn_send(out, &t);
}

static unsigned char arena[256u << 20];

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"procs", "processes in the ring", 1000, NULL, 2, 1000000},
        {"trips", "round trips each token makes", 1000, NULL, 1, 1000000000},
        {"tokens", "tokens circulating at once", 1, NULL, 1, 1000000},
        {"capacity", "messages each channel holds", 1, NULL, 1, 1000000},
        {"stack", "stack bytes per process", 4096, NULL, KPN_STACK_MIN, 1 << 24},
        {"runs", "timed runs; the median is reported", 5, NULL, 1, 1000},
        {"resolve", "deadlock detection on (1) or off (0)", 1, NULL, 0, 1},
        {"runners", "runners (threads)", 1, NULL, 1, KPN_MAX_RUNNERS},
        {"policy", "ws (work stealing) or static (process i on runner i*R/procs)", 0, "ws", 0, 0},
    };
    enum { PROCS, TRIPS, TOKENS, CAPACITY, STACK, RUNS, RESOLVE, RUNNERS, POLICY };
    static struct ring_proc rp[1000000];
    double ns[1000];
    long long n, i, hops;
    int run, runs;
    size_t need;
    kpn_stats st;
    kpn_config cfg;

    /* as many processes as the arena holds at the least stack and capacity */
    kpn_config_default(&cfg);
    opt[PROCS].max = bench_fit(&cfg, sizeof arena, 0,
                               kpn_size_proc(KPN_STACK_MIN, 4) + kpn_size_chan(sizeof(int), 1),
                               (long long)(sizeof rp / sizeof rp[0]));
    bench_parse(argc, argv, "Pass tokens round a ring of processes; report ns per hop.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    n = opt[PROCS].value;
    trips = opt[TRIPS].value;
    tokens = opt[TOKENS].value;
    runs = (int)opt[RUNS].value;
    kpn_config_default(&cfg);
    cfg.resolve = (int)opt[RESOLVE].value;
    cfg.runners = (unsigned)opt[RUNNERS].value;
    cfg.policy = bench_policy(opt[POLICY].text);
    need = kpn_size_net(&cfg) +
           (size_t)n * (kpn_size_proc((size_t)opt[STACK].value, 4) +
                        kpn_size_chan(sizeof(int), (size_t)opt[CAPACITY].value));
    if (need > sizeof arena) {
        bench_note("--procs=%lld with --stack=%lld and --capacity=%lld needs %zu bytes of "
                   "arena, has %zu; use fewer --procs, a smaller --stack or --capacity",
                   n, opt[STACK].value, opt[CAPACITY].value, need, sizeof arena);
        return 2;
    }
    if (tokens > n * opt[CAPACITY].value) {
        bench_note("--tokens=%lld cannot fit in %lld channels (--procs) of %lld (--capacity)",
                   tokens, n, opt[CAPACITY].value);
        return 2;
    }
    if (trips > LLONG_MAX / tokens / n) {
        bench_note("--procs=%lld, --trips=%lld and --tokens=%lld make more hops than a "
                   "long long counts", n, trips, tokens);
        return 2;
    }

    for (run = 0; run < runs; ++run) {
        kpn_net *net;
        kpn_proc *p[2];
        kpn_proc *prev = NULL, *p0 = NULL;

        BENCH_CHECK(kpn_net_init(&net, arena, sizeof arena, &cfg));
        for (i = 0; i < n; ++i) {
            BENCH_CHECK(kpn_spawn(net, &p[0], "ring", i == 0 ? first : forward, &rp[i],
                                  (size_t)opt[STACK].value));
            /* static: contiguous arcs, so that only R channels cross */
            if (cfg.policy == KPN_POLICY_STATIC)
                BENCH_CHECK(kpn_proc_pin(p[0], (unsigned)(i * cfg.runners / n)));
            if (i == 0)
                p0 = p[0];
            else
                BENCH_CHECK(kpn_connect(net, &rp[i - 1].out, prev, p[0], sizeof(int),
                                        (size_t)opt[CAPACITY].value));
            prev = p[0];
        }
        BENCH_CHECK(kpn_connect(net, &rp[n - 1].out, prev, p0, sizeof(int),
                                (size_t)opt[CAPACITY].value));
        for (i = 0; i < n; ++i)
            rp[i].in = rp[i == 0 ? n - 1 : i - 1].out;
        returned = misordered = -1;
        bench_run(net);
        BENCH_CHECK(kpn_net_stats(net, &st));
        if (returned != trips * tokens || misordered != 0) {
            if (returned < 0)
                bench_note("run %d: the run ended before process 0 had its tokens back",
                           run + 1);
            else
                bench_note("run %d: process 0 had %lld of %lld tokens back, %lld out of order",
                           run + 1, returned, trips * tokens, misordered);
            bench_note("verification failed");
            return 1;
        }
        hops = n * trips * tokens;
        ns[run] = (stopped - started) * 1e9 / (double)hops;
        bench_note("run %d/%d: %.1f ns/hop", run + 1, runs, ns[run]);
    }
    hops = n * trips * tokens;
    bench_result("procs=%lld hops=%lld ns_per_hop=%.1f port=%s trips=%lld tokens=%lld "
                 "capacity=%lld resolve=%lld runners=%u policy=%s runs=%d switches=%llu "
                 "detections=%llu steals=%llu placements=%llu placements_dropped=%llu "
                 "placement_runners=%u verified=1",
                 n, hops, bench_median(ns, runs), KPN_BENCH_PORT, trips, tokens,
                 opt[CAPACITY].value, opt[RESOLVE].value, cfg.runners, opt[POLICY].text, runs,
                 (unsigned long long)st.switches, (unsigned long long)st.detections,
                 (unsigned long long)st.steals, (unsigned long long)st.placements,
                 (unsigned long long)st.placements_dropped, st.placement_runners);
    return 0;
}
