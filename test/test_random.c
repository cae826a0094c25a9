/* SPDX-License-Identifier: MIT */
/* The random-network example: the generator's determinism and shapes, work conserved on any runners. */
#include <stdio.h>
#include <string.h>
#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* KPN_COMPACT: whether a placement is learnt */
#include "randnet.h"
#include "replay.h"

TEST_SOURCE_FILE("bench/randnet.c")
TEST_SOURCE_FILE("bench/replay.c")
TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/place.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/report.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/runners.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/posix/port_posix.c")
TEST_SOURCE_FILE("port/pthread/thread_pthread.c")

#define STACK 16384
static unsigned char arena[8 << 20];
static rnet_graph graph, other;
static rnet_run run;

/* A small network with cycles, for the many runs: 30 processes in 8
 * layers, 4 back-edges. */
static const rnet_params small = {UINT64_C(7), 30, 8, 4, 0};

/* The wake rule run_net gives its nets: KPN_WAKE_LAST unless a test says;
 * and cfg.learn, cfg.learn_grain_ns and cfg.learn_trial_ns: the defaults
 * unless a test says. */
static kpn_wake wake_rule;
static unsigned learn_rule, learn_grain, learn_trial;

void setUp(void)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    wake_rule = KPN_WAKE_LAST;
    learn_rule = cfg.learn;
    learn_grain = cfg.learn_grain_ns;
    learn_trial = cfg.learn_trial_ns;
}

void tearDown(void) {}

static void generate(rnet_graph *g, const rnet_params *p)
{
    TEST_ASSERT_EQUAL_INT(RNET_OK, rnet_generate(g, p));
}

/* Build 'g' into a fresh net and run it; returns the stats. */
static kpn_stats run_net(const rnet_graph *g, unsigned runners, kpn_policy policy,
                         uint64_t total, uint64_t d, size_t capacity)
{
    kpn_config cfg;
    kpn_net *net = NULL;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.policy = policy;
    cfg.wake = wake_rule;
    cfg.learn = learn_rule;
    cfg.learn_grain_ns = learn_grain;
    cfg.learn_trial_ns = learn_trial;
    /* every runner, on a machine of one CPU too: these runs are about
     * what several runners do (one CPU would run them on runner 0 alone) */
    cfg.cpus = runners;
    cfg.reserve_size = 1 << 20;
    TEST_ASSERT_LESS_OR_EQUAL(sizeof arena, rnet_arena_size(g, &cfg, capacity, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, rnet_build(net, g, &run, total, d, capacity, STACK,
                                             policy == KPN_POLICY_STATIC ? runners : 0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    return st;
}

/* ------------------------------------------------------------ the shape */

/* What a walk over the edge list finds, computed here rather than taken
 * from the generator's own counters. */
struct shape {
    int nodes;       /* reached from the source by forward edges */
    int to_sink;     /* nodes from which the sink is reached */
    int edges, back, layers;
    int cycles;      /* back-edges u -> v where v reaches u by forward edges */
    int forward_ok;  /* every forward edge goes to a later layer */
    int incident_ok; /* no node touches two back-edges; source and sink none */
};

static void walk(const rnet_graph *g, struct shape *s)
{
    static unsigned char seen[RNET_MAX_NODES], layer_used[RNET_MAX_NODES];
    static int touch[RNET_MAX_NODES];
    int e, v, changed, b;

    memset(s, 0, sizeof *s);
    s->forward_ok = s->incident_ok = 1;
    s->edges = g->edges;
    memset(touch, 0, sizeof touch);
    memset(layer_used, 0, sizeof layer_used);
    for (e = 0; e < g->edges; ++e) {
        if (g->back[e]) {
            s->back++;
            touch[g->from[e]]++;
            touch[g->to[e]]++;
        } else if (g->layer[g->to[e]] <= g->layer[g->from[e]]) {
            s->forward_ok = 0;
        }
    }
    for (v = 0; v < g->nodes; ++v) {
        if (touch[v] > 1 || ((v == 0 || v == g->nodes - 1) && touch[v] > 0))
            s->incident_ok = 0;
        if (v > 0 && v < g->nodes - 1)
            layer_used[g->layer[v]] = 1;
    }
    for (v = 0; v < RNET_MAX_NODES; ++v)
        s->layers += layer_used[v];
    /* reached from the source: repeat over the forward edges until still */
    memset(seen, 0, sizeof seen);
    seen[0] = 1;
    do {
        changed = 0;
        for (e = 0; e < g->edges; ++e)
            if (!g->back[e] && seen[g->from[e]] && !seen[g->to[e]])
                seen[g->to[e]] = changed = 1;
    } while (changed);
    for (v = 0; v < g->nodes; ++v)
        s->nodes += seen[v];
    memset(seen, 0, sizeof seen);
    seen[g->nodes - 1] = 1;
    do {
        changed = 0;
        for (e = 0; e < g->edges; ++e)
            if (!g->back[e] && seen[g->to[e]] && !seen[g->from[e]])
                seen[g->from[e]] = changed = 1;
    } while (changed);
    for (v = 0; v < g->nodes; ++v)
        s->to_sink += seen[v];
    /* a back-edge u -> v closes a cycle if v reaches u */
    for (b = 0; b < g->edges; ++b) {
        if (!g->back[b])
            continue;
        memset(seen, 0, sizeof seen);
        seen[g->to[b]] = 1;
        do {
            changed = 0;
            for (e = 0; e < g->edges; ++e)
                if (!g->back[e] && seen[g->from[e]] && !seen[g->to[e]])
                    seen[g->to[e]] = changed = 1;
        } while (changed);
        s->cycles += seen[g->from[b]];
    }
}

void test_a_seed_gives_the_same_network_every_time(void)
{
    rnet_params p = small;

    generate(&graph, &p);
    generate(&other, &p);
    /* the generated graph, not the parameters copied in (their padding
     * is whatever the caller's stack held) */
    TEST_ASSERT_EQUAL_MEMORY(&graph.nodes, &other.nodes,
                             sizeof graph - offsetof(rnet_graph, nodes));
    p.seed++;
    generate(&other, &p);
    TEST_ASSERT_EQUAL_INT(p.nodes, other.nodes);
    TEST_ASSERT_FALSE(graph.edges == other.edges &&
                      memcmp(graph.to, other.to, sizeof graph.to) == 0 &&
                      memcmp(graph.from, other.from, sizeof graph.from) == 0);
}

void test_rnd_a_has_the_papers_shape(void)
{
    const rnet_preset *p = rnet_preset_find("RND-A");
    struct shape s;

    TEST_ASSERT_NOT_NULL(p);
    generate(&graph, &p->params);
    walk(&graph, &s);
    /* thesis 5.2.3.1: 238 nodes and 364 edges in 50 layers, no cycles */
    TEST_ASSERT_EQUAL_INT(238, s.nodes);
    TEST_ASSERT_EQUAL_INT(238, s.to_sink);
    TEST_ASSERT_EQUAL_INT(364, s.edges);
    TEST_ASSERT_EQUAL_INT(50, s.layers);
    TEST_ASSERT_EQUAL_INT(0, s.back);
    TEST_ASSERT_EQUAL_INT(0, s.cycles);
    TEST_ASSERT_TRUE(s.forward_ok);
    TEST_ASSERT_EQUAL_INT(p->edges, s.edges);
    TEST_ASSERT_EQUAL_INT(p->cycles, s.cycles);
}

void test_rnd_b_has_the_papers_shape(void)
{
    const rnet_preset *p = rnet_preset_find("rnd-b");
    struct shape s;

    TEST_ASSERT_NOT_NULL(p);
    generate(&graph, &p->params);
    walk(&graph, &s);
    /* "212 nodes, 333 edges in 50 layers and 13 cycles" */
    TEST_ASSERT_EQUAL_INT(212, s.nodes);
    TEST_ASSERT_EQUAL_INT(212, s.to_sink);
    TEST_ASSERT_EQUAL_INT(333, s.edges);
    TEST_ASSERT_EQUAL_INT(50, s.layers);
    TEST_ASSERT_EQUAL_INT(13, s.back);
    TEST_ASSERT_EQUAL_INT(13, s.cycles);
    TEST_ASSERT_TRUE(s.forward_ok);
    TEST_ASSERT_TRUE(s.incident_ok);
    TEST_ASSERT_EQUAL_INT(p->edges, s.edges);
    TEST_ASSERT_EQUAL_INT(p->cycles, s.cycles);
    TEST_ASSERT_NULL(rnet_preset_find("RND-C"));
}

void test_every_node_touches_at_most_one_back_edge(void)
{
    struct shape s;
    uint64_t seed;

    /* ask for more back-edges than there is room for */
    for (seed = 1; seed <= 20; ++seed) {
        rnet_params p = {seed, 40, 6, 30, 0};
        generate(&graph, &p);
        walk(&graph, &s);
        TEST_ASSERT_TRUE(s.incident_ok);
        TEST_ASSERT_TRUE(s.forward_ok);
        TEST_ASSERT_EQUAL_INT(graph.back_edges, s.back);
        TEST_ASSERT_EQUAL_INT(s.back, s.cycles);
        TEST_ASSERT_LESS_OR_EQUAL((p.nodes - 2) / 2, s.back);
        TEST_ASSERT_GREATER_THAN(0, s.back);
        TEST_ASSERT_EQUAL_INT(p.nodes, s.nodes);
        TEST_ASSERT_EQUAL_INT(p.nodes, s.to_sink);
    }
}

void test_impossible_shapes_are_refused(void)
{
    rnet_params p = {1, 10, 9, 0, 0};

    TEST_ASSERT_EQUAL_INT(RNET_EINVAL, rnet_generate(&graph, &p));
    p.layers = 0;
    TEST_ASSERT_EQUAL_INT(RNET_EINVAL, rnet_generate(&graph, &p));
    p.layers = 2;
    p.nodes = RNET_MAX_NODES + 1;
    TEST_ASSERT_EQUAL_INT(RNET_EINVAL, rnet_generate(&graph, &p));
    p.nodes = 4;
    p.back_edges = -1;
    TEST_ASSERT_EQUAL_INT(RNET_EINVAL, rnet_generate(&graph, &p));
    p.back_edges = 5; /* one layer: no back-edge can close a cycle, none placed */
    p.nodes = 3;
    p.layers = 1;
    TEST_ASSERT_EQUAL_INT(RNET_OK, rnet_generate(&graph, &p));
    TEST_ASSERT_EQUAL_INT(3, graph.nodes);
    TEST_ASSERT_EQUAL_INT(0, graph.back_edges);
}

void test_the_dot_file_has_every_edge(void)
{
    char line[256];
    int arrows = 0, dashed = 0;
    FILE *f = tmpfile();

    TEST_ASSERT_NOT_NULL(f);
    generate(&graph, &small);
    TEST_ASSERT_EQUAL_INT(0, rnet_write_dot(&graph, f));
    rewind(f);
    while (fgets(line, sizeof line, f) != NULL) {
        arrows += strstr(line, " -> ") != NULL;
        dashed += strstr(line, "dashed") != NULL;
    }
    fclose(f);
    TEST_ASSERT_EQUAL_INT(graph.edges, arrows);
    TEST_ASSERT_EQUAL_INT(graph.back_edges, dashed);
}

/* ------------------------------------------------------------ the work */

void test_work_is_conserved_on_any_runners_policy_division_and_capacity(void)
{
    static const uint64_t ds[] = {1, 2, 5, 16};
    unsigned runners;
    size_t capacity;
    int i, policy;

    generate(&graph, &small);
    TEST_ASSERT_EQUAL_INT(4, graph.back_edges);
    for (runners = 1; runners <= 3; ++runners)
        for (policy = 0; policy < 2; ++policy)
            for (i = 0; i < 4; ++i)
                for (capacity = 1; capacity <= 3; ++capacity) {
                    uint64_t total = 1000 + 7 * (uint64_t)i;
                    kpn_stats st = run_net(&graph, runners,
                                           policy ? KPN_POLICY_STATIC : KPN_POLICY_WS, total,
                                           ds[i], capacity);
                    TEST_ASSERT_EQUAL_INT(0, rnet_errors(&run, NULL));
                    TEST_ASSERT_EQUAL_UINT64(total, run.sink_total);
                    TEST_ASSERT_TRUE(rnet_work_ok(&run));
                    TEST_ASSERT_EQUAL_size_t((size_t)graph.nodes, st.procs_exited);
                    TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
                    /* d per forward edge, d-1 per back-edge */
                    TEST_ASSERT_EQUAL_UINT64(ds[i] * (uint64_t)graph.edges -
                                                 (uint64_t)graph.back_edges,
                                             st.messages);
                }
}

void test_the_presets_conserve_work_on_two_and_three_runners(void)
{
    const char *names[] = {"RND-A", "RND-B"};
    int n;
    unsigned runners;

    for (n = 0; n < 2; ++n) {
        generate(&graph, &rnet_preset_find(names[n])->params);
        for (runners = 2; runners <= 3; ++runners) {
            kpn_stats st = run_net(&graph, runners, KPN_POLICY_WS, 100003, 6, 1);
            TEST_ASSERT_TRUE(rnet_work_ok(&run));
            TEST_ASSERT_EQUAL_UINT64(100003, run.sink_total);
            TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
        }
    }
}

/* Learning a placement mid-run (cfg.learn) moves processes between
 * runners while their partners run: every process must still see the
 * messages it sees on one runner.  A learn of 2^30 at any grain learns
 * as soon as steals count at all (runners.c, learn_due: 16 of them),
 * however slowly a sanitizer makes the run go, so
 * nearly every run here learns; a batch in which none did would test
 * nothing, and fails.  With no trial the placement is learnt at once;
 * with a trial window of a nanosecond, each idle look closes a window,
 * so a run learns and then keeps or drops what it learnt (runners.c,
 * "Trying a placement"): dropping moves the processes again, as work
 * stealing takes over from where they are, the trial starting again
 * 16 windows later, and on three runners a kept placement is tried on
 * two and learnt again on three if that is not faster, moving them
 * twice more. */
void test_a_placement_learnt_mid_run_changes_no_message(void)
{
    static uint64_t reference[RNET_MAX_NODES];
    uint64_t placements = 0, dropped = 0;
    unsigned runners;
    int v, round, wake, trial;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout learns no placement");
    generate(&graph, &rnet_preset_find("RND-B")->params);
    run_net(&graph, 1, KPN_POLICY_WS, 1000000, 40, 1);
    for (v = 0; v < graph.nodes; ++v)
        reference[v] = run.burned[v];
    learn_rule = 1u << 30;
    learn_grain = 0;
    for (trial = 0; trial < 2; ++trial)
        for (wake = 0; wake < 2; ++wake)
            for (runners = 2; runners <= 3; ++runners)
                for (round = 0; round < 3; ++round) {
                    kpn_stats st;

                    learn_trial = (unsigned)trial;
                    wake_rule = wake ? KPN_WAKE_WAKER : KPN_WAKE_LAST;
                    st = run_net(&graph, runners, KPN_POLICY_WS, 1000000, 40, 1 + (size_t)round);
                    TEST_ASSERT_TRUE(rnet_work_ok(&run));
                    TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
                    for (v = 0; v < graph.nodes; ++v)
                        TEST_ASSERT_EQUAL_UINT64(reference[v], run.burned[v]);
                    /* with no trial nothing is dropped; with windows of
                     * 1 ns a drop is tried again 16 ns later, and may be
                     * dropped again, but only what was learnt */
                    if (!trial)
                        TEST_ASSERT_EQUAL_UINT64(0, st.placements_dropped);
                    TEST_ASSERT_TRUE(st.placements_dropped <= st.placements);
                    placements += st.placements;
                    dropped += st.placements_dropped;
                }
    TEST_ASSERT_MESSAGE(placements > dropped, "no run kept a placement");
}

/* Neither with learn 0, nor at a grain no run reaches (a message a
 * nanosecond, or one per 64 for a runner that is trading), though
 * stealing alone would learn at once. */
void test_no_placement_is_learnt_with_learn_0_or_above_the_grain(void)
{
    unsigned runners;
    int coarse;

    generate(&graph, &rnet_preset_find("RND-B")->params);
    for (coarse = 0; coarse < 2; ++coarse)
        for (runners = 2; runners <= 3; ++runners) {
            kpn_stats st;

            learn_rule = coarse ? 1u << 30 : 0;
            learn_grain = coarse ? 1 : 1000;
            st = run_net(&graph, runners, KPN_POLICY_WS, 1000000, 40, 1);
            TEST_ASSERT_TRUE(rnet_work_ok(&run));
            TEST_ASSERT_EQUAL_UINT64(0, st.placements);
        }
}

void test_messages_with_no_work_are_carried_too(void)
{
    /* fewer units than messages: most rounds carry 0 */
    generate(&graph, &small);
    run_net(&graph, 2, KPN_POLICY_WS, 3, 10, 1);
    TEST_ASSERT_TRUE(rnet_work_ok(&run));
    TEST_ASSERT_EQUAL_UINT64(3, run.sink_total);
    run_net(&graph, 1, KPN_POLICY_WS, 0, 4, 1);
    TEST_ASSERT_TRUE(rnet_work_ok(&run));
    TEST_ASSERT_EQUAL_UINT64(0, run.sink_total);
}

void test_each_process_burns_the_same_whatever_the_schedule(void)
{
    static uint64_t reference[RNET_MAX_NODES];
    int v;

    /* a Kahn network: every process sees the same messages on 1 runner
     * with channels of 1 as on 3 runners with channels of 3 */
    generate(&graph, &rnet_preset_find("RND-B")->params);
    run_net(&graph, 1, KPN_POLICY_WS, 1000000, 9, 1);
    for (v = 0; v < graph.nodes; ++v)
        reference[v] = run.burned[v];
    run_net(&graph, 3, KPN_POLICY_WS, 1000000, 9, 3);
    TEST_ASSERT_TRUE(rnet_work_ok(&run));
    for (v = 0; v < graph.nodes; ++v)
        TEST_ASSERT_EQUAL_UINT64(reference[v], run.burned[v]);
    run_net(&graph, 2, KPN_POLICY_STATIC, 1000000, 9, 2);
    for (v = 0; v < graph.nodes; ++v)
        TEST_ASSERT_EQUAL_UINT64(reference[v], run.burned[v]);
}

void test_a_woken_process_may_join_its_wakers_runner(void)
{
    static uint64_t reference[RNET_MAX_NODES];
    unsigned runners;
    int v;

    /* KPN_WAKE_WAKER moves a woken process to the runner of the process
     * that woke it: on 2 and 3 runners every process still sees what it
     * sees on one */
    generate(&graph, &rnet_preset_find("RND-B")->params);
    run_net(&graph, 1, KPN_POLICY_WS, 1000000, 9, 1);
    for (v = 0; v < graph.nodes; ++v)
        reference[v] = run.burned[v];
    wake_rule = KPN_WAKE_WAKER;
    for (runners = 2; runners <= 3; ++runners) {
        kpn_stats st = run_net(&graph, runners, KPN_POLICY_WS, 1000000, 9, 1);
        TEST_ASSERT_TRUE(rnet_work_ok(&run));
        TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
        for (v = 0; v < graph.nodes; ++v)
            TEST_ASSERT_EQUAL_UINT64(reference[v], run.burned[v]);
    }
}

void test_the_flow_factor_predicts_the_work_burned(void)
{
    uint64_t total = 2000000, d = 400, burned, want;

    generate(&graph, &rnet_preset_find("RND-B")->params);
    run_net(&graph, 1, KPN_POLICY_WS, total, d, 4);
    burned = rnet_burned(&run);
    want = (uint64_t)(rnet_flow_factor(&graph) * (double)total);
    /* the first and the last round differ from the steady state: within 2% */
    TEST_ASSERT_UINT_WITHIN(want / 50, want, burned);
    TEST_ASSERT_EQUAL_UINT64(0, run.burned[0]);
    TEST_ASSERT_EQUAL_UINT64(0, run.burned[graph.nodes - 1]);
}

/* ------------------------------------------------- the protocol in time */

/* Times here are multiples of half a ns, exact in a double: compared as
 * integers so that a failure prints both. */
#define TEST_ASSERT_NS(want, got) TEST_ASSERT_EQUAL_INT64((int64_t)(2 * (want)), (int64_t)(2 * (got)))

/* Node v's ports, the edges whose 'end' is v in edge order, into
 * list[first[v] .. first[v+1]-1]. */
static void ports(int n, int edges, const int *end, int *first, int *list)
{
    int v, e, k = 0;

    for (v = 0; v < n; ++v) {
        first[v] = k;
        for (e = 0; e < edges; ++e)
            if (end[e] == v)
                list[k++] = e;
    }
    first[n] = k;
}

/* A net drawn by hand: 'n' nodes (0 the source, n-1 the sink), the
 * forward edges from[i] -> to[i] in that order, no back-edge. */
static void by_hand(rnet_graph *g, int n, int edges, const int *from, const int *to)
{
    int v, e;

    memset(g, 0, sizeof *g);
    g->nodes = n;
    g->edges = edges;
    for (v = 0; v < n; ++v) {
        g->back_in[v] = g->back_out[v] = -1;
        g->layer[v] = v == n - 1 ? 2 : v > 0;
    }
    for (e = 0; e < edges; ++e) {
        g->from[e] = from[e];
        g->to[e] = to[e];
    }
    ports(n, edges, to, g->in_first, g->in_edge);
    ports(n, edges, from, g->out_first, g->out_edge);
}

void test_a_fan_out_played_out_in_time_takes_what_it_takes_by_hand(void)
{
    /* source -> a, b, c -> sink; one round of 300 units: 100 each */
    static const int from[] = {0, 0, 0, 1, 2, 3}, to[] = {1, 2, 3, 4, 4, 4};
    const rnet_timing tm = {1.0, 10.0, 0.0}; /* a send or a receive: 5 */

    by_hand(&graph, 5, 6, from, to);
    /* unlimited: the source sends at 0-5, 5-10, 10-15; a receives at 5-10
     * and sends at 110-115, b 10-15 and 115-120, c 15-20 and 120-125; the
     * sink receives at 115-120, 120-125, 125-130 */
    TEST_ASSERT_NS(130.0, rnet_schedule(&graph, 300, 1, 1, &tm, 0, NULL));
    /* one CPU: 300 units and 6 messages of 10 */
    TEST_ASSERT_NS(360.0, rnet_schedule(&graph, 300, 1, 1, &tm, 1, NULL));
    /* two: the source (0-15) then b (15-20, burns to 120, 120-125) then
     * the sink (125-135, blocks); a (5-10, burns to 110, 110-115) then c
     * (115-120, burns to 220, 220-225); the sink 225-230 */
    TEST_ASSERT_NS(230.0, rnet_schedule(&graph, 300, 1, 1, &tm, 2, NULL));
    /* three or more: as unlimited (on three, c takes the source's CPU at
     * 15 and the sink a's at 115) */
    TEST_ASSERT_NS(130.0, rnet_schedule(&graph, 300, 1, 1, &tm, 3, NULL));
    TEST_ASSERT_NS(130.0, rnet_schedule(&graph, 300, 1, 1, &tm, 5, NULL));
}

void test_a_chain_of_rounds_waits_for_its_slowest_stage(void)
{
    /* source -> n -> sink, 3 rounds of 100 units */
    static const int from[] = {0, 1}, to[] = {1, 2};
    const rnet_timing tm = {1.0, 10.0, 0.0};

    by_hand(&graph, 3, 2, from, to);
    /* n receives at 5-10, 115-120, 225-230 and sends at 110-115,
     * 220-225, 330-335 (each after its burn of 100); the sink's last
     * receive is 335-340 */
    TEST_ASSERT_NS(340.0, rnet_schedule(&graph, 300, 3, 1, &tm, 0, NULL));
    TEST_ASSERT_NS(340.0, rnet_schedule(&graph, 300, 3, 1, &tm, 2, NULL));
    TEST_ASSERT_NS(360.0, rnet_schedule(&graph, 300, 3, 1, &tm, 1, NULL));
    /* burning for nothing, the channel of one slot paces the source:
     * each send waits for the receive before it, 10 a round */
    {
        const rnet_timing free_work = {0.0, 10.0, 0.0};
        TEST_ASSERT_NS(40.0, rnet_schedule(&graph, 300, 3, 1, &free_work, 0, NULL));
    }
}

void test_a_chain_split_over_two_cpus_waits_for_its_crossings(void)
{
    /* source -> n -> sink, 3 rounds of 100; the source alone on CPU 0,
     * n and the sink on CPU 1, and a crossing costs 100 */
    static const int from[] = {0, 1}, to[] = {1, 2};
    static const unsigned part[] = {0, 1, 1}, one_cpu[] = {0, 0, 0};
    const rnet_timing tm = {1.0, 10.0, 100.0};

    by_hand(&graph, 3, 2, from, to);
    /* a step that takes what the other CPU left takes 100 longer: the
     * source sends at 0-5; n receives at 5-110, burns to 210 and sends
     * at 210-215; the source's second send waits for the slot n emptied
     * at 110 and takes 110-215, and its third blocks; n receives at
     * 215-320 (that wakes the source, which sends at 320-425 and ends),
     * burns to 420 and blocks on the full channel to the sink, which
     * runs at last (420-425, then blocks), so n sends at 425-430,
     * receives at 430-535, burns to 635 and blocks again; the sink
     * 635-640, n 640-645, the sink 645-650 */
    TEST_ASSERT_NS(650.0, rnet_schedule(&graph, 300, 3, 1, &tm, 2, part));
    /* all on one CPU: nothing crosses, whatever a crossing would cost */
    TEST_ASSERT_NS(360.0, rnet_schedule(&graph, 300, 3, 1, &tm, 2, one_cpu));
    TEST_ASSERT_NS(360.0, rnet_schedule(&graph, 300, 3, 1, &tm, 1, one_cpu));
    /* a part that names no CPU, or parts without CPUs */
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 300, 3, 1, &tm, 1, part));
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 300, 3, 1, &tm, 0, part));
}

void test_one_cpu_takes_the_work_a_run_burns_and_its_messages(void)
{
    const rnet_timing tm = {0.5, 40.0, 0.0};
    uint64_t messages = 0;
    int e;

    /* what kpn's processes burn, against the protocol played out alone */
    generate(&graph, &rnet_preset_find("RND-B")->params);
    run_net(&graph, 1, KPN_POLICY_WS, 1000000, 9, 1);
    for (e = 0; e < graph.edges; ++e)
        messages += graph.back[e] ? 8 : 9;
    TEST_ASSERT_NS((double)rnet_burned(&run) * 0.5 + (double)messages * 40.0,
                             rnet_schedule(&graph, 1000000, 9, 1, &tm, 1, NULL));
}

void test_more_cpus_never_take_longer_than_the_earliest_schedule_allows(void)
{
    const rnet_timing tm = {1.0, 10.0, 0.0};
    double unlimited, one, t;
    unsigned cpus;

    /* cycles, channels of 1 and 2 */
    generate(&graph, &small);
    unlimited = rnet_schedule(&graph, 100000, 20, 1, &tm, 0, NULL);
    one = rnet_schedule(&graph, 100000, 20, 1, &tm, 1, NULL);
    TEST_ASSERT_TRUE(unlimited > 0 && unlimited < one);
    for (cpus = 2; cpus <= 64; ++cpus) {
        t = rnet_schedule(&graph, 100000, 20, 1, &tm, cpus, NULL);
        TEST_ASSERT_TRUE(t >= unlimited);
        TEST_ASSERT_TRUE(t >= one / cpus);
    }
    /* a CPU for every process: the list schedule is the earliest */
    TEST_ASSERT_NS(unlimited, rnet_schedule(&graph, 100000, 20, 1, &tm, 30, NULL));
    TEST_ASSERT_TRUE(rnet_schedule(&graph, 100000, 20, 2, &tm, 0, NULL) <= unlimited);
}

void test_a_net_that_cannot_be_played_out_says_why(void)
{
    /* a and b each wait for the other first: forward edges both ways */
    static const int from[] = {0, 1, 2, 2}, to[] = {1, 2, 1, 3};
    const rnet_timing tm = {1.0, 10.0, 0.0}, negative = {-1.0, 10.0, 0.0},
                      negative_cross = {1.0, 10.0, -1.0};

    by_hand(&other, 4, 4, from, to);
    TEST_ASSERT_NS(RNET_SCHED_EDEADLOCK, rnet_schedule(&other, 10, 2, 1, &tm, 0, NULL));
    TEST_ASSERT_NS(RNET_SCHED_EDEADLOCK, rnet_schedule(&other, 10, 2, 1, &tm, 2, NULL));
    generate(&graph, &small);
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(NULL, 10, 2, 1, &tm, 0, NULL));
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 10, 2, 1, NULL, 0, NULL));
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 10, 0, 1, &tm, 0, NULL));
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 10, 2, 0, &tm, 0, NULL));
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 10, 2, 1, &tm, RNET_MAX_NODES + 1, NULL));
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 10, 2, 1, &negative, 0, NULL));
    TEST_ASSERT_NS(RNET_SCHED_EINVAL, rnet_schedule(&graph, 10, 2, 1, &negative_cross, 2, NULL));
    /* 2^18 message slots in all */
    TEST_ASSERT_NS(RNET_SCHED_ETOOBIG,
                             rnet_schedule(&graph, 10, 2, ((size_t)1 << 18) / (size_t)graph.edges + 1, &tm, 0, NULL));
    TEST_ASSERT_TRUE(rnet_schedule(&graph, 10, 2, ((size_t)1 << 18) / (size_t)graph.edges, &tm, 0, NULL) > 0);
}
