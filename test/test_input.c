/* SPDX-License-Identifier: MIT */
/* Input channels: kpn_offer from another thread, EFULL, close, a net that waits for input, the resolver, errors. */
/* support/offer_thread.h gives its thread a stack (pthread_attr_setstack: POSIX 2001); asked before any header */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* KPN_COMPACT: what a channel handle check sees */
#include "support/offer_thread.h"

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

#define STACK 65536
#define MAXN 4000u
static unsigned char arena[1 << 20];
static kpn_net *net;

void setUp(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
}

/* A test's closer (kt_offerer with delay_ms) is stopped here too, so that
 * a test that fails before it stops it leaves no thread behind. */
static struct kt_offerer closer;
static int closer_started;

static void stop_closer(void)
{
    if (closer_started) {
        __atomic_store_n(&closer.cancel, 1, __ATOMIC_SEQ_CST);
        kt_offerer_join(&closer);
        closer_started = 0;
    }
}

void tearDown(void)
{
    stop_closer();
}

static kpn_proc *spawn(void (*fn)(void *), void *arg)
{
    kpn_proc *p = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", fn, arg, STACK));
    return p;
}

/* The net under test: 'filter' drops multiples of 3 and doubles the
 * rest, 'sink' records what arrives, in order. */
struct filter {
    kpn_chan *in, *out;
    uint32_t got[MAXN];
    unsigned n, eofs;
};

static void filter_proc(void *arg)
{
    struct filter *f = arg;
    uint32_t v;
    while (kpn_recv(f->in, &v) == KPN_OK)
        if (v % 3u != 0) {
            v *= 2;
            kpn_send(f->out, &v);
        }
    f->eofs++;
}

static void sink_proc(void *arg)
{
    struct filter *f = arg;
    uint32_t v;
    while (kpn_recv(f->out, &v) == KPN_OK)
        if (f->n < MAXN)
            f->got[f->n++] = v;
}

static void build(struct filter *f, size_t in_cap, size_t out_cap)
{
    kpn_proc *filter = spawn(filter_proc, f);
    kpn_proc *sink = spawn(sink_proc, f);
    f->n = f->eofs = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &f->in, filter, sizeof(uint32_t), in_cap));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &f->out, filter, sink, sizeof(uint32_t), out_cap));
}

/* What the net must output for inputs first..first+count-1, computed
 * from the definition (a sequential reference). */
static unsigned expected(uint32_t first, uint32_t count, uint32_t *out)
{
    unsigned n = 0;
    uint32_t v;
    for (v = first; v < first + count; ++v)
        if (v % 3u != 0)
            out[n++] = 2 * v;
    return n;
}

static void check_output(const struct filter *f, uint32_t first, uint32_t count)
{
    static uint32_t want[MAXN];
    unsigned n = expected(first, count, want);
    TEST_ASSERT_EQUAL_UINT(n, f->n);
    if (n > 0)
        TEST_ASSERT_EQUAL_MEMORY(want, f->got, n * sizeof want[0]);
    TEST_ASSERT_EQUAL_UINT(1, f->eofs);
}

static struct filter f;

/* Run 'f''s net while another thread offers 1..count to its input:
 * every offer arrives, in order. */
static void run_with_offers(uint32_t count)
{
    struct kt_offerer o = {0};

    o.in = f.in;
    o.first = 1;
    o.count = count;
    TEST_ASSERT_EQUAL_INT(0, kt_offerer_start(&o));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kt_offerer_join(&o);
    TEST_ASSERT_FALSE(o.bad);
    check_output(&f, 1, count);
}

void test_offer_from_another_thread_reaches_the_reader_in_order(void)
{
    build(&f, 4, 2);
    run_with_offers(3000);
}

/* Bursts that cross on two channels of capacity 1, each one message
 * longer than the last: every burst is an artificial deadlock, broken by
 * a ring carved from the arena's free space (the default reserve). */
#define BURSTS 150
static kpn_chan *burst_first, *burst_second;
static uint32_t burst_sum;

static void burst_writer(void *arg)
{
    uint32_t k, i, v = 0;
    (void)arg;
    for (k = 1; k <= BURSTS; ++k) {
        for (i = 0; i < k; ++i, ++v)
            kpn_send(burst_first, &v);
        for (i = 0; i < k; ++i, ++v)
            kpn_send(burst_second, &v);
    }
}

static void burst_reader(void *arg)
{
    uint32_t k, i, v;
    (void)arg;
    for (k = 1; k <= BURSTS; ++k) {
        for (i = 0; i < k; ++i)
            if (kpn_recv(burst_second, &v) == KPN_OK)
                burst_sum += v;
        for (i = 0; i < k; ++i)
            if (kpn_recv(burst_first, &v) == KPN_OK)
                burst_sum += v;
    }
}

/* An offer checks its channel while the net runs, and a deadlock the
 * resolver breaks meanwhile carves from the arena: the check reads how
 * far the arena is carved while a runner moves it on (ThreadSanitizer
 * reports the race where that read is a plain one).  Every offer still
 * arrives, and every burst too. */
void test_offers_while_the_resolver_carves_from_the_arena(void)
{
    kpn_proc *w, *r;
    kpn_stats st;
    uint32_t n = 2 * BURSTS * (BURSTS + 1) / 2;

    build(&f, 2, 1);
    w = spawn(burst_writer, NULL);
    r = spawn(burst_reader, NULL);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &burst_first, w, r, sizeof(uint32_t), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &burst_second, w, r, sizeof(uint32_t), 1));
    burst_sum = 0;
    run_with_offers(3000);
    TEST_ASSERT_EQUAL_UINT32(n * (n - 1) / 2, burst_sum);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_TRUE(st.resolutions > 0);
}

/* 2 000 offers from another thread, pausing before each so that the net
 * runs dry and waits, into a net of 2 runners over 'cpus' CPUs (0: the
 * port's count), from 'first' on: every value through, in order. */
static void offers_to_two_runners(unsigned cpus, uint32_t first)
{
    struct kt_offerer o = {0};
    kpn_config cfg;

    kpn_config_default(&cfg);
    cfg.runners = 2;
    cfg.cpus = cpus;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    build(&f, 2, 1);
    o.in = f.in;
    o.first = first;
    o.count = 2000;
    o.pause = 1;
    TEST_ASSERT_EQUAL_INT(0, kt_offerer_start(&o));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kt_offerer_join(&o);
    TEST_ASSERT_FALSE(o.bad);
    check_output(&f, first, 2000);
}

void test_offer_from_another_thread_with_several_runners(void)
{
    offers_to_two_runners(0, 5);
}

/* Runners over one CPU: the net runs on runner 0 alone (runners.c), with
 * no runner thread to hear of input, and must still take every offer. */
void test_offer_from_another_thread_with_several_runners_over_one_cpu(void)
{
    kpn_stats st;

    offers_to_two_runners(1, 7);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(0, st.runner_switches[1]);
    TEST_ASSERT_TRUE(st.runner_switches[0] > 0);
}

/* A cyclic net on three runners, fed from another thread.  'head' adds
 * to each input value the one that came back round the loop LAG values
 * earlier and sends the sum round a loop of LOOP processes; the last of
 * them sends each value back to head and out to the sink.  LAG values
 * are in the loop at once, so that the runners share its processes, and
 * messages cross between them in both directions while input arrives. */
#define LOOP 6u
#define LAG 4u
#define LOOP_STACK 16384
struct loop_net {
    kpn_chan *in, *link[LOOP], *back;
    struct filter sink; /* its 'out' and what sink_proc records */
};
struct loop_stage {
    struct loop_net *ln;
    unsigned k;
};
static struct loop_net ln;
static struct loop_stage stages[LOOP];

static uint32_t loop_step(uint32_t x, unsigned k)
{
    return x * 2654435761u + k + 1u;
}

static void loop_head(void *arg)
{
    struct loop_net *l = arg;
    uint32_t v, t, sent = 0;

    while (kpn_recv(l->in, &v) == KPN_OK) {
        t = 0;
        if (sent >= LAG && kpn_recv(l->back, &t) != KPN_OK)
            break;
        v += t;
        kpn_send(l->link[0], &v);
        sent++;
    }
}

static void loop_stage_proc(void *arg)
{
    const struct loop_stage *s = arg;
    struct loop_net *l = s->ln;
    uint32_t x;

    while (kpn_recv(l->link[s->k], &x) == KPN_OK) {
        x = loop_step(x, s->k);
        if (s->k + 1 < LOOP) {
            kpn_send(l->link[s->k + 1], &x);
        } else {
            kpn_send(l->sink.out, &x);
            kpn_send(l->back, &x); /* dropped once head has returned */
        }
    }
}

/* What the sink must get for inputs first..first+count-1, worked out
 * one value at a time. */
static void loop_expected(uint32_t first, uint32_t count, uint32_t *want)
{
    uint32_t i;
    unsigned k;

    for (i = 0; i < count; ++i) {
        uint32_t x = first + i + (i >= LAG ? want[i - LAG] : 0u);
        for (k = 0; k < LOOP; ++k)
            x = loop_step(x, k);
        want[i] = x;
    }
}

static void build_loop(unsigned runners)
{
    kpn_config cfg;
    kpn_proc *head, *stage[LOOP], *sink;
    unsigned k;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    ln.sink.n = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &head, "head", loop_head, &ln, LOOP_STACK));
    for (k = 0; k < LOOP; ++k) {
        stages[k].ln = &ln;
        stages[k].k = k;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &stage[k], "loop", loop_stage_proc,
                                                &stages[k], LOOP_STACK));
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &sink, "sink", sink_proc, &ln.sink, LOOP_STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &ln.in, head, sizeof(uint32_t), 2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ln.link[0], head, stage[0], sizeof(uint32_t), 1));
    for (k = 1; k < LOOP; ++k)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ln.link[k], stage[k - 1], stage[k],
                                                  sizeof(uint32_t), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ln.back, stage[LOOP - 1], head,
                                              sizeof(uint32_t), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ln.sink.out, stage[LOOP - 1], sink,
                                              sizeof(uint32_t), 1));
}

/* Every value through, in order, with every value that came back round
 * the loop added in: what one thread working through the definition
 * gives, in rounds that offer at different paces. */
void test_offers_into_a_loop_that_spans_three_runners_give_what_one_thread_gives(void)
{
    static uint32_t want[MAXN];
    unsigned round;

    loop_expected(11, MAXN, want);
    for (round = 0; round < 4; ++round) {
        struct kt_offerer o = {0};

        build_loop(3);
        o.in = ln.in;
        o.first = 11;
        o.count = MAXN;
        o.pause = round % 2 == 0 ? 0u : round;
        TEST_ASSERT_EQUAL_INT(0, kt_offerer_start(&o));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        kt_offerer_join(&o);
        TEST_ASSERT_FALSE(o.bad);
        TEST_ASSERT_EQUAL_UINT(MAXN, ln.sink.n);
        TEST_ASSERT_EQUAL_MEMORY(want, ln.sink.got, MAXN * sizeof want[0]);
    }
}

void test_a_net_waiting_for_input_returns_only_after_the_close(void)
{
    struct kt_offerer o = {0};

    build(&f, 8, 8);
    o.in = f.in;
    o.first = 1;
    o.count = 50;
    o.pause = 2000; /* the net runs dry before every message */
    TEST_ASSERT_EQUAL_INT(0, kt_offerer_start(&o));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_TRUE(__atomic_load_n(&o.closed, __ATOMIC_SEQ_CST));
    kt_offerer_join(&o);
    check_output(&f, 1, 50);
}

/* cfg.strict: a true deadlock ends the run even while another process
 * waits on an open input, which only the outside could move. */
static kpn_chan *dl_ab, *dl_ba, *dl_in;
static void dl_a(void *arg)
{
    uint32_t v;
    (void)arg;
    (void)kpn_recv(dl_ba, &v);
}
static void dl_b(void *arg)
{
    uint32_t v;
    (void)arg;
    (void)kpn_recv(dl_ab, &v);
}
static void dl_reader(void *arg)
{
    uint32_t v;
    (void)arg;
    while (kpn_recv(dl_in, &v) == KPN_OK)
        ;
}

void test_strict_ends_a_true_deadlock_while_another_process_waits_for_input(void)
{
    unsigned k;

    for (k = 0; k < 4; ++k) {
        kpn_config cfg;
        kpn_proc *a, *b, *r;
        kpn_stats st;
        kpn_proc_stats ps;

        kpn_config_default(&cfg);
        cfg.strict = 1;
        cfg.resolve = (int)(k / 2); /* without the resolver, then with it */
        cfg.runners = 1 + k % 2;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        a = spawn(dl_a, NULL);
        b = spawn(dl_b, NULL);
        r = spawn(dl_reader, NULL);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &dl_ab, a, b, sizeof(uint32_t), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &dl_ba, b, a, sizeof(uint32_t), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &dl_in, r, sizeof(uint32_t), 1));
        memset(&closer, 0, sizeof closer);
        closer.in = dl_in;
        closer.delay_ms = 30000; /* closes the input only if a run hangs */
        TEST_ASSERT_EQUAL_INT(0, kt_offerer_start(&closer));
        closer_started = 1;
        TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
        stop_closer();
        TEST_ASSERT_FALSE(closer.closed);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(r, &ps));
        TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, ps.state);
        /* the input is still open; a later run goes on with the rest of
         * the net (the reader takes the input's end) and, the cycle
         * found before, ends as a strict run without inputs does */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(dl_in));
        TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(r, &ps));
        TEST_ASSERT_EQUAL_INT(KPN_PROC_EXITED, ps.state);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
    }
}

void test_offer_to_a_full_input_returns_efull_and_writes_nothing(void)
{
    uint32_t v[3] = {1, 2, 4};

    build(&f, 2, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(f.in, &v[0]));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(f.in, &v[1]));
    TEST_ASSERT_EQUAL_INT(KPN_EFULL, kpn_offer(f.in, &v[2]));
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_fill(f.in));
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_capacity(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    check_output(&f, 1, 2);
}

void test_close_lets_the_reader_drain_then_see_eof(void)
{
    uint32_t v;

    build(&f, 8, 8);
    for (v = 1; v <= 5; ++v)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(f.in, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_input_close(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_offer(f.in, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    check_output(&f, 1, 5);
}

/* Determinism: the same input sequence gives the same output, offered
 * all before the run or trickled in while the net runs, with any
 * capacities. */
void test_output_is_a_function_of_the_input_sequence(void)
{
    static uint32_t first_run[MAXN];
    unsigned first_n, round;
    uint32_t v;

    build(&f, 64, 64);
    for (v = 7; v < 7 + 60; ++v)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(f.in, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    first_n = f.n;
    for (round = 0; round < first_n; ++round)
        first_run[round] = f.got[round];
    for (round = 0; round < 3; ++round) {
        struct kt_offerer o = {0};
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
        build(&f, 1 + round, 1 + 2 * round);
        o.in = f.in;
        o.first = 7;
        o.count = 60;
        o.pause = round * 50;
        TEST_ASSERT_EQUAL_INT(0, kt_offerer_start(&o));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        kt_offerer_join(&o);
        TEST_ASSERT_EQUAL_UINT(first_n, f.n);
        TEST_ASSERT_EQUAL_MEMORY(first_run, f.got, first_n * sizeof first_run[0]);
    }
}

/* A writer blocked on a full channel to a reader that waits for input is
 * no deadlock: the resolver must not grow the channel (nor the input). */
struct ahead {
    kpn_chan *in, *c;
    uint32_t sum;
};

static void ahead_writer(void *arg)
{
    struct ahead *a = arg;
    uint32_t i;
    for (i = 1; i <= 10; ++i)
        kpn_send(a->c, &i);
}

static void ahead_reader(void *arg)
{
    struct ahead *a = arg;
    uint32_t v, w;
    while (kpn_recv(a->in, &v) == KPN_OK && kpn_recv(a->c, &w) == KPN_OK)
        a->sum += v * w;
}

void test_a_reader_waiting_for_input_ends_the_chain_and_nothing_grows(void)
{
    static struct ahead a;
    struct kt_offerer o = {0};
    kpn_proc *w = spawn(ahead_writer, &a);
    kpn_proc *r = spawn(ahead_reader, &a);
    kpn_stats st;
    uint32_t i, want = 0;

    a.sum = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &a.in, r, sizeof(uint32_t), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &a.c, w, r, sizeof(uint32_t), 1));
    o.in = a.in;
    o.first = 1;
    o.count = 10;
    o.pause = 500;
    TEST_ASSERT_EQUAL_INT(0, kt_offerer_start(&o));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kt_offerer_join(&o);
    for (i = 1; i <= 10; ++i)
        want += i * i;
    TEST_ASSERT_EQUAL_UINT(want, a.sum);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(0, st.resolutions);
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_capacity(a.c));
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_capacity(a.in));
}

/* A process's own operations refuse an input, and kpn_offer refuses a
 * channel that is not one. */
static void try_send_on_input(void *arg)
{
    struct filter *g = arg;
    uint32_t v = 1;
    g->got[0] = (uint32_t)kpn_send(g->in, &v);
    g->got[1] = (uint32_t)kpn_close(g->in);
    while (kpn_recv(g->in, &v) == KPN_OK)
        ;
}

void test_input_errors(void)
{
    static unsigned char other_arena[1 << 18];
    kpn_net *other;
    kpn_proc *p = spawn(try_send_on_input, &f);
    kpn_proc *q = spawn(sink_proc, &f);
    kpn_proc *foreign;
    kpn_chan *c, *in;
    kpn_stats before, after;
    uint32_t v = 3;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, p, q, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(NULL, &in, p, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(net, NULL, p, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(net, &in, NULL, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(net, &in, p, 0, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(net, &in, p, (size_t)-1 / 2, 4));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(net, &in, p, (size_t)-1 / 4 + 2, 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&other, other_arena, sizeof other_arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(other, &foreign, "x", sink_proc, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(net, &in, foreign, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(other, &in, p, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_connect_input(net, &in, p, sizeof v, sizeof arena));

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_offer(NULL, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_offer(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_offer(c, NULL)); /* as kpn_send: the argument first */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_input_close(NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_input_close(c));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &f.in, p, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_offer(f.in, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, (kpn_status)f.got[0]);
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, (kpn_status)f.got[1]);
    /* the reader has exited: no new input for it, and nothing carved */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    in = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect_input(net, &in, p, sizeof v, 1));
    TEST_ASSERT_NULL(in);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(before.chans, after.chans);
}

static void returns_at_once(void *arg) { (void)arg; }

/* What is not a live input channel is refused: a block of zeros, and an
 * input of a net the arena no longer holds. */
void test_offer_and_close_refuse_what_is_not_a_channel(void)
{
    static unsigned char junk[512];
    kpn_chan *fake = (kpn_chan *)(void *)junk, *old;
    kpn_proc *q = spawn(returns_at_once, NULL);
    uint32_t v = 3;

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_offer(fake, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_input_close(fake));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &old, q, sizeof v, 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(old, &v));
    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout checks a channel by its tag alone, which old keeps");
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_offer(old, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_input_close(old));
}

/* The first input also carves a record for the world outside and the
 * port's idle object, which kpn.h says kpn_size_proc(0, 0) covers: an
 * arena sized by that rule takes it, and in arenas ever smaller the first
 * that cannot is refused with nothing carved. */
void test_the_first_input_fits_its_documented_size_and_enomem_carves_nothing(void)
{
    size_t bound = kpn_size_net(NULL) + kpn_size_proc(STACK, 1) + kpn_size_proc(0, 0) +
                   kpn_size_chan(sizeof(uint32_t), 4);
    size_t size;
    kpn_proc *q;
    kpn_chan *in = NULL;
    kpn_stats before, after;
    kpn_status s = KPN_OK;

    TEST_ASSERT_TRUE(bound <= sizeof arena);
    for (size = bound; s == KPN_OK; size -= 16) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, size, NULL));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", returns_at_once, NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
        s = kpn_connect_input(net, &in, q, sizeof(uint32_t), 4);
        TEST_ASSERT_TRUE(s == KPN_OK || size < bound);
    }
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, s);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(before.chans, after.chans);
    /* the net is whole: its process runs */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(1, after.procs_exited);
}

static kpn_status running_connect_input;
static void connects_an_input(void *arg)
{
    kpn_chan *in = NULL;

    running_connect_input =
        kpn_connect_input(net, &in, *(kpn_proc **)arg, sizeof(uint32_t), 1);
}

void test_connect_input_while_running_is_refused(void)
{
    static kpn_proc *self; /* the process asks for an input to itself */
    kpn_stats before, after;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &self, "p", connects_an_input, &self, STACK));
    running_connect_input = KPN_OK;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, running_connect_input);
    /* nothing carved: no channel, nor the first input's own record */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(0, after.chans);
}

/* kpn_offer and kpn_input_close refuse an ordinary channel with
 * KPN_EPERM and leave it as it was: no message queued, not closed; its
 * writer's sends all reach the reader, which sees EOF only after them. */
static kpn_chan *plain_chan;
static kpn_status plain_sends[2];
static uint32_t plain_got[4];
static unsigned plain_n;
static kpn_status plain_end;

static void plain_writer(void *arg)
{
    uint32_t v;
    (void)arg;
    for (v = 0; v < 2; ++v) {
        uint32_t m = 20 + v;
        plain_sends[v] = kpn_send(plain_chan, &m);
    }
}

static void plain_reader(void *arg)
{
    uint32_t v;
    (void)arg;
    plain_n = 0;
    while (plain_n < 4 && (plain_end = kpn_recv(plain_chan, &v)) == KPN_OK)
        plain_got[plain_n++] = v;
}

void test_offer_and_close_refused_on_an_ordinary_channel_change_nothing(void)
{
    kpn_proc *w = spawn(plain_writer, NULL), *r = spawn(plain_reader, NULL);
    uint32_t v = 99;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &plain_chan, w, r, sizeof v, 4));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_offer(plain_chan, &v));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(plain_chan));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_input_close(plain_chan));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(plain_chan));
    plain_end = KPN_OK;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, plain_sends[0]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, plain_sends[1]);
    TEST_ASSERT_EQUAL_UINT(2, plain_n);
    TEST_ASSERT_EQUAL_UINT(20, plain_got[0]);
    TEST_ASSERT_EQUAL_UINT(21, plain_got[1]);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, plain_end);
}

/* kpn_offer's rule for a reader that has returned: the message is
 * dropped and the offer still succeeds, as a send to an exited reader
 * does; nothing is queued, however many come. */
void test_an_offer_to_an_exited_reader_is_dropped(void)
{
    kpn_chan *in;
    kpn_stats before, after;
    uint32_t v = 7;
    int i;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, spawn(returns_at_once, NULL),
                                                    sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net)); /* the reader never reads */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    for (i = 0; i < 3; ++i) /* more than the capacity of 1 */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(in, &v));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(in));
    /* kpn.h: 'discarded' and 'messages' leave offers out */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_UINT64(before.discarded, after.discarded);
    TEST_ASSERT_EQUAL_UINT64(before.messages, after.messages);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(in));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_offer(in, &v));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_input_close(in));
}

void test_efull_has_a_sentence(void)
{
    TEST_ASSERT_TRUE(kpn_strerror(KPN_EFULL)[0] != '\0');
    TEST_ASSERT_TRUE(kpn_strerror(KPN_EFULL) != kpn_strerror(KPN_STATUS_COUNT));
}

/* kpn.h: an input given capacity 0 holds cfg.default_capacity messages.
 * With a default of 3 it takes three offers and refuses the fourth with
 * KPN_EFULL; the three reach the reader. */
void test_an_input_of_capacity_0_holds_the_default_capacity(void)
{
    kpn_config cfg;
    uint32_t v;

    kpn_config_default(&cfg);
    cfg.default_capacity = 3;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    build(&f, 0, 1);
    TEST_ASSERT_EQUAL_size_t(3, kpn_chan_capacity(f.in));
    for (v = 1; v <= 3; ++v)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(f.in, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EFULL, kpn_offer(f.in, &v));
    TEST_ASSERT_EQUAL_size_t(3, kpn_chan_fill(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(f.in));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    check_output(&f, 1, 3);
}

/* An input that fits in what is left of the arena is made, even when it
 * takes the last byte.  Every carve is a multiple of 16 bytes (kpn.h's
 * 16-aligned arena), so in a 16-aligned arena whose size is what spawn
 * and the first input carve, the input fits exactly; 16 bytes fewer and
 * it is KPN_ENOMEM. */
void test_the_first_input_may_take_the_last_bytes_of_the_arena(void)
{
    unsigned char *mem = arena + (16u - (uintptr_t)arena % 16u) % 16u;
    size_t spawned, carved;
    kpn_proc *q;
    kpn_chan *in = NULL;
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, mem, sizeof arena - 16, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", returns_at_once, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    spawned = st.arena_used;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, q, sizeof(uint32_t), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    carved = st.arena_used - spawned;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, mem, spawned + carved, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", returns_at_once, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, q, sizeof(uint32_t), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(0, st.arena_free);

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, mem, spawned + carved - 16, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &q, "q", returns_at_once, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_connect_input(net, &in, q, sizeof(uint32_t), 4));
}
