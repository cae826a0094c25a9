/* SPDX-License-Identifier: MIT */
/* Placement from a profiled run: kpn_place's cut, balance, errors, and the run it places. */
#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* a refused pin leaves the home as it was, white-box; KPN_COMPACT */
#include "support/helpers.h"

TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/input.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/place.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/runners.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/posix/port_posix.c")
TEST_SOURCE_FILE("port/pthread/thread_pthread.c")

#define STACK 16384
#define MAXP 16
static unsigned char arena[4 << 20];
static kpn_net *net;
static kpn_proc *proc[MAXP];

static void init(unsigned runners, kpn_policy policy, int strict)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.policy = policy;
    cfg.strict = strict;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
}

/* The start of a test of a placement over several runners: kpn.h's
 * compact layout places on one runner only, so there it is skipped. */
static void places_on_two(void)
{
    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout places on one runner only");
}

void setUp(void)
{
    net = NULL;
}

void tearDown(void)
{
    if (net != NULL)
        kpn_net_release(net);
}

/* ------------------------------------------------------------------ */
/* A pipeline: source, stages, sink; every message carries a running sum */

#define MESSAGES 2000
struct stage {
    kpn_chan *in, *out;
    long long sum; /* the sink's */
    /* sends that failed: a process may run on a runner's thread, where an
     * assertion cannot unwind to the test, and each has its own count */
    int bad;
};
static struct stage stage[MAXP];

static void source(void *arg)
{
    struct stage *s = arg;
    long long i;

    for (i = 0; i < MESSAGES; ++i)
        s->bad += kpn_send(s->out, &i) != KPN_OK;
    kpn_close(s->out);
}

static void middle(void *arg)
{
    struct stage *s = arg;
    long long v;

    while (kpn_recv(s->in, &v) == KPN_OK) {
        v = v * 3 + 1;
        s->bad += kpn_send(s->out, &v) != KPN_OK;
    }
    kpn_close(s->out);
}

static void sink(void *arg)
{
    struct stage *s = arg;
    long long v;

    while (kpn_recv(s->in, &v) == KPN_OK)
        s->sum += v;
}

/* 'n' processes in a line, spawned in order; runner pins from 'home' if given. */
static void build_pipeline(int n, const unsigned *home)
{
    int i;

    for (i = 0; i < n; ++i) {
        stage[i].sum = 0;
        stage[i].bad = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[i], "p",
                                                i == 0 ? source : i == n - 1 ? sink : middle,
                                                &stage[i], STACK));
    }
    for (i = 0; i + 1 < n; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &stage[i].out, proc[i], proc[i + 1],
                                                  sizeof(long long), 4));
        stage[i + 1].in = stage[i].out;
    }
    for (i = 0; home != NULL && i < n; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_pin(proc[i], home[i]));
}

/* Runs the pipeline of 'n' built above: every send went through. */
static void run_pipeline(int n)
{
    int i;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    for (i = 0; i < n; ++i)
        TEST_ASSERT_EQUAL_INT(0, stage[i].bad);
}

/* What the sink of an n-process pipeline must add up, worked here. */
static long long pipeline_sum(int n)
{
    long long i, v, sum = 0;
    int k;

    for (i = 0; i < MESSAGES; ++i) {
        v = i;
        for (k = 0; k < n - 2; ++k)
            v = v * 3 + 1;
        sum += v;
    }
    return sum;
}

void test_a_pipeline_is_cut_once_into_contiguous_balanced_halves(void)
{
    unsigned home[MAXP];
    int i, cuts = 0, in0 = 0;

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    build_pipeline(10, NULL);
    run_pipeline(10);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 2, home, MAXP));
    for (i = 0; i < 10; ++i) {
        TEST_ASSERT_TRUE(home[i] < 2);
        in0 += home[i] == 0;
        if (i > 0 && home[i] != home[i - 1])
            cuts++;
    }
    /* one channel cut, and the halves hold 5 and 5 (the source and sink
     * carry half a stage's traffic each) */
    TEST_ASSERT_EQUAL_INT(1, cuts);
    TEST_ASSERT_EQUAL_INT(5, in0);
}

void test_the_placement_runs_on_two_runners_with_the_one_runner_result(void)
{
    unsigned home[MAXP];

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    build_pipeline(8, NULL);
    run_pipeline(8);
    TEST_ASSERT_EQUAL_INT64(pipeline_sum(8), stage[7].sum);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 2, home, MAXP));
    kpn_net_release(net);

    init(2, KPN_POLICY_STATIC, 0);
    build_pipeline(8, home);
    run_pipeline(8);
    TEST_ASSERT_EQUAL_INT64(pipeline_sum(8), stage[7].sum);
}

/* ------------------------------------------------------------------ */
/* Two cliques spawned interleaved (A0 B0 A1 B1 ...): every member sends
 * 'heavy' messages to every other member of its clique, and A0 one
 * message to B0.  Spawn order alone would cut both cliques in two. */

#define CLIQUE 4
struct member {
    int clique, index, heavy;
    kpn_chan *out[CLIQUE], *in[CLIQUE]; /* to / from member j of its clique */
    kpn_chan *bridge_out, *bridge_in;
};
static struct member member[2 * CLIQUE];

static void clique_member(void *arg)
{
    struct member *m = arg;
    int j, k, v = 0;

    for (k = 0; k < m->heavy; ++k)
        for (j = 0; j < CLIQUE; ++j)
            if (j != m->index)
                TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_send(m->out[j], &k));
    if (m->bridge_out != NULL)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_send(m->bridge_out, &v));
    for (k = 0; k < m->heavy; ++k)
        for (j = 0; j < CLIQUE; ++j)
            if (j != m->index) {
                TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_recv(m->in[j], &v));
                TEST_ASSERT_EQUAL_INT(k, v);
            }
    if (m->bridge_in != NULL)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_recv(m->bridge_in, &v));
}

static void build_cliques(int heavy)
{
    int c, i, j;
    kpn_chan *ch;

    for (i = 0; i < 2 * CLIQUE; ++i) {
        member[i].clique = i % 2;
        member[i].index = i / 2;
        member[i].heavy = heavy;
        member[i].bridge_out = member[i].bridge_in = NULL;
        TEST_ASSERT_EQUAL_INT(KPN_OK,
                              kpn_spawn(net, &proc[i], "m", clique_member, &member[i], STACK));
    }
    for (c = 0; c < 2; ++c)
        for (i = 0; i < CLIQUE; ++i)
            for (j = 0; j < CLIQUE; ++j)
                if (i != j) {
                    int from = 2 * i + c, to = 2 * j + c;
                    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ch, proc[from], proc[to],
                                                              sizeof(int), (size_t)heavy));
                    member[from].out[j] = ch;
                    member[to].in[i] = ch;
                }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ch, proc[0], proc[1], sizeof(int), 1));
    member[0].bridge_out = ch;
    member[1].bridge_in = ch;
}

void test_interleaved_cliques_are_placed_whole_on_separate_runners(void)
{
    unsigned home[MAXP];
    int i;

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    build_cliques(20);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 2, home, MAXP));
    /* every member of a clique with its clique's first member, and the
     * two cliques apart: only the bridge's one message is cut */
    for (i = 0; i < 2 * CLIQUE; ++i)
        TEST_ASSERT_EQUAL_UINT(home[i % 2], home[i]);
    TEST_ASSERT_TRUE(home[0] != home[1]);
}

/* ------------------------------------------------------------------ */
/* The rest: one runner, more runners than processes, errors */

void test_one_runner_places_everything_on_runner_0(void)
{
    unsigned home[MAXP];
    int i;

    init(1, KPN_POLICY_WS, 0);
    build_pipeline(6, NULL);
    for (i = 0; i < MAXP; ++i)
        home[i] = 7;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 1, home, 6));
    for (i = 0; i < 6; ++i)
        TEST_ASSERT_EQUAL_UINT(0, home[i]);
    TEST_ASSERT_EQUAL_UINT(7, home[6]); /* nothing past the processes written */
}

void test_a_net_that_never_ran_is_placed_by_count_in_spawn_order(void)
{
    unsigned home[MAXP];
    int i;

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    build_pipeline(8, NULL);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 4, home, MAXP));
    for (i = 0; i < 8; ++i)
        TEST_ASSERT_EQUAL_UINT((unsigned)i / 2, home[i]);
}

/* A fork-join net: a source deals jobs round-robin to FJ workers, which
 * pass them to a sink.  Each worker talks to the source's part and the
 * sink's as much, and moving every worker to one of them would leave the
 * parts between with nothing to run. */
#define FJ 6
static kpn_chan *fj_job[FJ], *fj_ans[FJ];

static void fj_source(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 600; ++i)
        kpn_send(fj_job[i % FJ], &i);
}

static void fj_worker(void *arg)
{
    int k = *(const int *)arg, v;

    while (kpn_recv(fj_job[k], &v) == KPN_OK)
        kpn_send(fj_ans[k], &v);
}

static void fj_sink(void *arg)
{
    int i, v;
    (void)arg;
    for (i = 0; kpn_recv(fj_ans[i % FJ], &v) == KPN_OK; ++i)
        ;
}

void test_a_fork_join_net_leaves_no_part_empty(void)
{
    static const int index[FJ] = {0, 1, 2, 3, 4, 5};
    unsigned home[MAXP], runners;
    int i, count[3];

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[0], "source", fj_source, NULL, STACK));
    for (i = 0; i < FJ; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[1 + i], "worker", fj_worker,
                                                (void *)&index[i], STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[FJ + 1], "sink", fj_sink, NULL, STACK));
    for (i = 0; i < FJ; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &fj_job[i], proc[0], proc[1 + i],
                                                  sizeof(int), 4));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &fj_ans[i], proc[1 + i], proc[FJ + 1],
                                                  sizeof(int), 4));
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    for (runners = 2; runners <= 3; ++runners) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, runners, home, MAXP));
        count[0] = count[1] = count[2] = 0;
        for (i = 0; i < FJ + 2; ++i) {
            TEST_ASSERT_TRUE(home[i] < runners);
            count[home[i]]++;
        }
        for (i = 0; i < (int)runners; ++i)
            TEST_ASSERT_GREATER_THAN(0, count[i]);
    }
}

void test_more_runners_than_processes_leaves_no_index_out_of_range(void)
{
    unsigned home[MAXP];
    int i;

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    build_pipeline(3, NULL);
    run_pipeline(3);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, KPN_MAX_RUNNERS, home, MAXP));
    for (i = 0; i < 3; ++i)
        TEST_ASSERT_TRUE(home[i] < KPN_MAX_RUNNERS);
}

/* The true deadlock of two readers waiting on each other. */
static kpn_chan *ab, *ba;
static void reads_first_a(void *arg)
{
    int v;
    (void)arg;
    if (kpn_recv(ba, &v) == KPN_OK)
        kpn_send(ab, &v);
}
static void reads_first_b(void *arg)
{
    int v;
    (void)arg;
    if (kpn_recv(ab, &v) == KPN_OK)
        kpn_send(ba, &v);
}

static void exits(void *arg)
{
    (void)arg;
}

void test_placing_a_net_leaves_its_deadlock_scan_working(void)
{
    unsigned home[MAXP];
    kpn_stats st;
    int i;

    places_on_two();
    /* kpn_place borrows the field the at-rest scan stamps; the scan must
     * still find the cycle afterwards */
    init(1, KPN_POLICY_WS, 1);
    /* three that exit at once first, so that the pair's spawn indices
     * (3 and 4) are not stamps the scan's first walks would use */
    for (i = 0; i < 3; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[i], "x", exits, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[3], "a", reads_first_a, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[4], "b", reads_first_b, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ab, proc[3], proc[4], sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ba, proc[4], proc[3], sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 2, home, MAXP));
    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
}

/* An input's writer is the net's outside process, which no part holds:
 * the messages offered to an input pull its reader towards no part
 * (counted, they would pull 'x' to part 0, where the outside's unset
 * mark points).  A channel from a process to itself is passed over as
 * well, and a net of no processes is placed with nothing written. */
void test_an_input_pulls_its_reader_towards_no_part(void)
{
    unsigned home[MAXP];
    kpn_chan *loop, *in;
    kpn_proc *x, *y;
    int v;

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    home[0] = 7;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 2, home, 0));
    TEST_ASSERT_EQUAL_UINT(7, home[0]);

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &y, "y", exits, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &x, "x", exits, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &loop, x, x, sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, x, sizeof(int), 4));
    for (v = 0; v < 3; ++v) /* offered, not yet received: x weighs 1, as y */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(in, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 2, home, MAXP));
    TEST_ASSERT_EQUAL_UINT(0, home[0]); /* spawn order, equal weights */
    TEST_ASSERT_EQUAL_UINT(1, home[1]);
}

/* A process's messages to itself cross no cut wherever it goes, so they
 * pull it towards no part.  Spawned: an idle process, then the chain's
 * end, which sends itself LOOPED messages, then its middle and its head.
 * Spawn order splits the net between the end (weighing 1 + 3 + 2 x 40)
 * and the middle, so the end starts in the idle process's part and must
 * move to the chain's, the only part it talks to.  Counting its loop as
 * talk within its own part, it stayed, and the chain was cut. */
#define LOOPED 40
static kpn_chan *chain_in[2], *self_loop;

static void forwards(void *arg)
{
    int v;

    while (kpn_recv(*(kpn_chan **)arg, &v) == KPN_OK)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_send(chain_in[1], &v));
    kpn_close(chain_in[1]);
}

static void heads(void *arg)
{
    int v;

    (void)arg;
    for (v = 0; v < 3; ++v)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_send(chain_in[0], &v));
    kpn_close(chain_in[0]);
}

static void ends_talking_to_itself(void *arg)
{
    int v, w;

    (void)arg;
    for (v = 0; v < LOOPED; ++v) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_send(self_loop, &v));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_recv(self_loop, &w));
        TEST_ASSERT_EQUAL_INT(v, w);
    }
    for (v = 0; kpn_recv(chain_in[1], &w) == KPN_OK; ++v)
        TEST_ASSERT_EQUAL_INT(v, w);
    TEST_ASSERT_EQUAL_INT(3, v);
}

void test_a_process_talking_to_itself_is_placed_with_those_it_talks_to(void)
{
    unsigned home[MAXP];
    kpn_stats st;

    places_on_two();
    init(1, KPN_POLICY_WS, 0);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[0], "idle", exits, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK,
                          kpn_spawn(net, &proc[1], "end", ends_talking_to_itself, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[2], "middle", forwards, &chain_in[0], STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[3], "head", heads, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK,
                          kpn_connect(net, &self_loop, proc[1], proc[1], sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK,
                          kpn_connect(net, &chain_in[0], proc[3], proc[2], sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK,
                          kpn_connect(net, &chain_in[1], proc[2], proc[1], sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(4, st.procs_exited);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_place(net, 2, home, MAXP));
    TEST_ASSERT_EQUAL_UINT(home[3], home[2]);
    TEST_ASSERT_EQUAL_UINT(home[3], home[1]); /* no message cut */
    TEST_ASSERT_TRUE(home[0] != home[1]);     /* the idle one alone: the split by weight */
}

static kpn_status placed_inside;
static unsigned inside_home[MAXP];
static void places_while_running(void *arg)
{
    (void)arg;
    placed_inside = kpn_place(net, 2, inside_home, MAXP);
}

void test_place_refuses_bad_arguments_and_a_running_net(void)
{
    unsigned home[MAXP];
    int i;

    init(1, KPN_POLICY_WS, 0);
    build_pipeline(4, NULL);
    for (i = 0; i < MAXP; ++i)
        home[i] = 99;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(NULL, 2, home, MAXP));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(net, 0, home, MAXP));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(net, KPN_MAX_RUNNERS + 1, home, MAXP));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(net, 2, NULL, MAXP));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(net, 2, home, 3)); /* 4 processes */
    if (KPN_COMPACT) /* kpn.h: the compact layout places on one runner only */
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(net, 2, home, MAXP));
    for (i = 0; i < MAXP; ++i)
        TEST_ASSERT_EQUAL_UINT(99, home[i]); /* nothing written on an error */
    kpn_net_release(net);

    init(1, KPN_POLICY_WS, 0);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[0], "p", places_while_running, NULL,
                                            STACK));
    placed_inside = KPN_OK;
    for (i = 0; i < MAXP; ++i)
        inside_home[i] = 99;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, placed_inside);
    for (i = 0; i < MAXP; ++i)
        TEST_ASSERT_EQUAL_UINT(99, inside_home[i]);
}

/* A process that overflows its stack, then blocks: the switch finds it. */
static kpn_chan *never;
static void overflows(void *arg)
{
    kpn_proc_stats ps;
    int v;
    (void)arg;
    kpn_proc_stats_get(proc[0], &ps);
    kt_recurse((const unsigned char *)ps.stack_base - 16, 0);
    kpn_recv(never, &v);
}

void test_place_and_pin_refuse_a_net_whose_stack_overflowed(void)
{
    unsigned home[MAXP];

    init(2, KPN_POLICY_WS, 0);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[0], "deep", overflows, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &proc[1], "x", exits, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &never, proc[1], proc[0], sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    home[0] = 99;
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_place(net, 2, home, MAXP));
    TEST_ASSERT_EQUAL_UINT(99, home[0]);
    home[1] = proc[1]->home;
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_proc_pin(proc[1], 1 - home[1]));
    TEST_ASSERT_EQUAL_UINT(home[1], proc[1]->home);
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_proc_pin(proc[0], 0));
}
