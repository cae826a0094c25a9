/* SPDX-License-Identifier: MIT */
/* A soak: thousands of processes and twice as many channels moving 10^8 messages, counted exactly. */
#include "kpn.h"
#include "bench.h"

/*
 * Process i writes to i+1 and to i+STRIDE (mod N) and reads from i-1 and
 * i-STRIDE, so there are 2N channels and every process is on cycles of
 * many lengths.  Each first sends one token on each output (so the
 * cycles can turn), then for R rounds reads one message from each input
 * and writes one to each output.  A message carries its sender and its
 * sequence number on that channel, so every reader checks its two
 * streams exactly: nothing lost, nothing duplicated, nothing reordered.
 * At the end every channel holds one message, the last round's.
 */

struct msg {
    uint32_t from, seq;
};

struct node {
    kpn_chan *in[2], *out[2];
    uint32_t index;
    uint64_t received, bad;
};

static long long rounds;
static unsigned nprocs, stride;
static double started;

static void node(void *arg)
{
    struct node *n = arg;
    uint32_t expect_from[2], seq[2] = {0, 0};
    long long r;
    int k;

    expect_from[0] = (n->index + nprocs - 1) % nprocs;
    expect_from[1] = (n->index + nprocs - stride) % nprocs;
    for (k = 0; k < 2; ++k) {
        struct msg m = {n->index, 0};
        kpn_send(n->out[k], &m);
    }
    for (r = 1; r <= rounds; ++r) {
        for (k = 0; k < 2; ++k) {
            struct msg m;
            if (kpn_recv(n->in[k], &m) != KPN_OK)
                return;
            n->bad += m.from != expect_from[k] || m.seq != seq[k];
            seq[k]++;
            n->received++;
        }
        for (k = 0; k < 2; ++k) {
            struct msg m = {n->index, (uint32_t)r};
            kpn_send(n->out[k], &m);
        }
        if (n->index == 0 && r % (rounds / 10 > 0 ? rounds / 10 : 1) == 0)
            bench_note("%lld%% of rounds, %.1f s", r * 100 / rounds, bench_now() - started);
    }
}

static unsigned char arena[160u << 20];
static struct node nodes[100000];

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"procs", "processes", 10000, NULL, 2, 100000},
        {"messages", "messages to move in all (rounded to whole rounds)", 100000000, NULL, 1, 1000000000000LL},
        {"runners", "runners (threads)", 2, NULL, 1, KPN_MAX_RUNNERS},
        {"capacity", "messages each channel holds", 2, NULL, 1, 1024},
        {"stride", "the second output goes this far round the ring", 97, NULL, 1, 99999},
        {"stack", "stack bytes per process", 4096, NULL, KPN_STACK_MIN, 1 << 20},
        {"policy", "ws (work stealing) or static (process i on runner i*R/procs: the ring "
                   "cut into R arcs)", 0, "ws", 0, 0},
        {"cpus", "CPUs the runners share: with 1 a ws run is on runner 0 alone "
                 "(cfg.cpus; 0: those this program may run on)", 0, NULL, 0, 1 << 20},
    };
    enum { PROCS, MESSAGES, RUNNERS, CAPACITY, STRIDE, STACK, POLICY, CPUS };
    kpn_config cfg;
    kpn_net *net;
    kpn_proc **procs;
    kpn_stats st;
    uint64_t received = 0, bad = 0, sent_expected, left;
    unsigned i;
    int k;
    size_t need;
    double wall;
    int exact;
    size_t peak;
    static kpn_proc *proc_of[100000];

    /* as many processes as the arena holds at the least stack and capacity */
    kpn_config_default(&cfg);
    cfg.reserve_size = 1 << 20;
    opt[PROCS].max = bench_fit(&cfg, sizeof arena, kpn_size_proc(16384, 4),
                               kpn_size_proc(KPN_STACK_MIN, 4) +
                                   2 * kpn_size_chan(sizeof(struct msg), 1),
                               (long long)(sizeof nodes / sizeof nodes[0]));
    bench_parse(argc, argv, "Move many messages through many processes and count every one.",
                opt, (int)(sizeof opt / sizeof opt[0]));
    nprocs = (unsigned)opt[PROCS].value;
    stride = (unsigned)(opt[STRIDE].value % nprocs == 0 ? 1 : opt[STRIDE].value % nprocs);
    rounds = opt[MESSAGES].value / (2LL * nprocs) - 1;
    if (rounds < 1)
        rounds = 1;
    kpn_config_default(&cfg);
    cfg.runners = (unsigned)opt[RUNNERS].value;
    cfg.policy = bench_policy(opt[POLICY].text);
    cfg.cpus = (unsigned)opt[CPUS].value;
    cfg.reserve_size = 1 << 20;
    need = kpn_size_net(&cfg) + kpn_size_proc(16384, 4) +
           nprocs * (kpn_size_proc((size_t)opt[STACK].value, 4) +
                     2 * kpn_size_chan(sizeof(struct msg), (size_t)opt[CAPACITY].value));
    if (need > sizeof arena) {
        bench_note("--procs=%u with --stack=%lld and --capacity=%lld needs %zu bytes of "
                   "arena, has %zu; use fewer --procs, a smaller --stack or --capacity",
                   nprocs, opt[STACK].value, opt[CAPACITY].value, need, sizeof arena);
        return 2;
    }
    procs = proc_of;
    BENCH_CHECK(kpn_net_init(&net, arena, sizeof arena, &cfg));
    for (i = 0; i < nprocs; ++i) {
        nodes[i].index = i;
        /* process 0 also prints progress: stdio wants a deeper stack */
        BENCH_CHECK(kpn_spawn(net, &procs[i], "node", node, &nodes[i],
                           i == 0 ? 16384 : (size_t)opt[STACK].value));
        if (cfg.policy == KPN_POLICY_STATIC)
            BENCH_CHECK(kpn_proc_pin(procs[i], (unsigned)((uint64_t)i * cfg.runners / nprocs)));
    }
    for (i = 0; i < nprocs; ++i) {
        unsigned to[2] = {(i + 1) % nprocs, (i + stride) % nprocs};
        for (k = 0; k < 2; ++k) {
            BENCH_CHECK(kpn_connect(net, &nodes[i].out[k], procs[i], procs[to[k]], sizeof(struct msg),
                                 (size_t)opt[CAPACITY].value));
            nodes[to[k]].in[k] = nodes[i].out[k];
        }
    }
    bench_note("%u processes, %u channels, %lld rounds, %u runners", nprocs, 2 * nprocs, rounds,
               cfg.runners);
    started = bench_now();
    wall = bench_run(net);
    BENCH_CHECK(kpn_net_stats(net, &st));

    for (i = 0; i < nprocs; ++i) {
        received += nodes[i].received;
        bad += nodes[i].bad;
    }
    left = 0;
    peak = 0;
    for (i = 0; i < nprocs; ++i) {
        kpn_proc_stats ps;
        for (k = 0; k < 2; ++k)
            left += kpn_chan_fill(nodes[i].out[k]);
        BENCH_CHECK(kpn_proc_stats_get(procs[i], &ps));
        if (i > 0 && ps.stack_peak > peak)
            peak = ps.stack_peak; /* process 0 also prints */
    }
    /* Every send either copied a message into a channel (st.messages)
     * or, the reader having exited, dropped it; what was queued when a
     * reader exited counts as discarded too.  So the books balance:
     * sends = messages + drops, messages = received + left. */
    sent_expected = 2ull * nprocs * (uint64_t)(rounds + 1);
    exact = st.messages + (st.discarded - left) == sent_expected &&
            received + left == st.messages && received == 2ull * nprocs * (uint64_t)rounds &&
            bad == 0 && st.procs_exited == nprocs;
    bench_result("procs=%u chans=%u runners=%u policy=%s cpus=%u rounds=%lld sends=%llu "
                 "messages=%llu received=%llu left=%llu discarded=%llu wall=%.2f msgs_per_s=%.0f "
                 "switches=%llu detections=%llu steals=%llu placements=%llu "
                 "placements_dropped=%llu placement_runners=%u reserve_peak=%zu "
                 "stack_peak=%zu exact=%d",
                 nprocs, 2 * nprocs, cfg.runners, opt[POLICY].text, cfg.cpus, rounds,
                 (unsigned long long)sent_expected,
                 (unsigned long long)st.messages, (unsigned long long)received,
                 (unsigned long long)left, (unsigned long long)st.discarded, wall,
                 (double)st.messages / wall, (unsigned long long)st.switches,
                 (unsigned long long)st.detections, (unsigned long long)st.steals,
                 (unsigned long long)st.placements, (unsigned long long)st.placements_dropped,
                 st.placement_runners, st.reserve_peak, peak, exact);
    if (!exact)
        bench_note("the books do not balance");
    return exact ? 0 : 1;
}
