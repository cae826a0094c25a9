/* SPDX-License-Identifier: MIT */
/* The scheduler: kpn_run, termination, artificial deadlock, whole networks. */
#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* the look-ahead's notes, which no call reports */

TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
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
static unsigned char arena[1 << 20];
static kpn_net *net;

void setUp(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
}

void tearDown(void) {}

static kpn_proc *spawn(void (*fn)(void *), void *arg)
{
    kpn_proc *p = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", fn, arg, STACK));
    return p;
}

static kpn_chan *connect(kpn_proc *w, kpn_proc *r, size_t cap)
{
    kpn_chan *c = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, w, r, sizeof(int), cap));
    return c;
}

void test_run_rejects_null_and_runs_an_empty_net(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_run(NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

static kpn_status nested_run;
static void runs_the_net(void *arg)
{
    (void)arg;
    nested_run = kpn_run(net);
}

void test_run_from_inside_a_process_is_refused(void)
{
    spawn(runs_the_net, NULL);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, nested_run);
}

/* A process runs until it blocks: a send that finds room, here on a
 * channel to itself, does not give up the CPU. */
struct tracer { int id; kpn_chan *self; kpn_status sent; };
static int trace[8], ntrace;
static void tracer(void *arg)
{
    struct tracer *t = arg;
    trace[ntrace++] = t->id;
    t->sent = kpn_send(t->self, &t->id);
    trace[ntrace++] = t->id;
}

void test_processes_start_in_spawn_order_and_run_until_they_block(void)
{
    static struct tracer t[3] = {{1, NULL, KPN_EINVAL}, {2, NULL, KPN_EINVAL}, {3, NULL, KPN_EINVAL}};
    kpn_proc *p;
    int i;

    ntrace = 0;
    for (i = 0; i < 3; ++i) {
        p = spawn(tracer, &t[i]);
        t[i].self = connect(p, p, 1);
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(6, ntrace);
    for (i = 0; i < 6; ++i)
        TEST_ASSERT_EQUAL_INT(t[i / 2].id, trace[i]);
    for (i = 0; i < 3; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, t[i].sent);
}

/* ------------------------------------------------------------ o = 2*i1 + i2 */
/* The papers' first network (thesis figure 3.1): "x2" doubles i1 into
 * i1', "+" adds i1' and i2 into o.  Sources and a sink stand in for the
 * environment. */

#define N21 300
struct src { kpn_chan *out; unsigned seed; };
struct x2 { kpn_chan *in, *out; };
struct sum { kpn_chan *a, *b, *out; };
struct sink { kpn_chan *in; int got[N21 + 1]; int n; };

static int sample(unsigned seed, int k)
{
    return (int)((seed * 2654435761u + (unsigned)k * 40503u) % 20011u) - 10000;
}

static void source(void *arg)
{
    struct src *s = arg;
    int k;
    for (k = 0; k < N21; ++k) {
        int v = sample(s->seed, k);
        kpn_send(s->out, &v);
    }
}

static void times2(void *arg)
{
    struct x2 *x = arg;
    int v;
    while (kpn_recv(x->in, &v) == KPN_OK) {
        v *= 2;
        kpn_send(x->out, &v);
    }
}

static void adder(void *arg)
{
    struct sum *s = arg;
    int a, b;
    while (kpn_recv(s->a, &a) == KPN_OK && kpn_recv(s->b, &b) == KPN_OK) {
        int o = a + b;
        kpn_send(s->out, &o);
    }
}

static void sink(void *arg)
{
    struct sink *s = arg;
    int v;
    s->n = 0;
    while (s->n <= N21 && kpn_recv(s->in, &v) == KPN_OK)
        s->got[s->n++] = v;
}

static void run_2i1_plus_i2(size_t cap, struct sink *out)
{
    static struct src s1, s2;
    static struct x2 x;
    static struct sum add;
    kpn_proc *ps1, *ps2, *px, *padd, *psink;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    s1.seed = 1;
    s2.seed = 2;
    /* spawn the consumers first so the schedule differs from the data flow */
    psink = spawn(sink, out);
    padd = spawn(adder, &add);
    px = spawn(times2, &x);
    ps2 = spawn(source, &s2);
    ps1 = spawn(source, &s1);
    s1.out = x.in = connect(ps1, px, cap);
    x.out = add.a = connect(px, padd, cap);
    s2.out = add.b = connect(ps2, padd, cap);
    add.out = out->in = connect(padd, psink, cap);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

void test_the_2i1_plus_i2_network_computes_its_formula_at_every_capacity(void)
{
    static struct sink out;
    size_t caps[] = {1, 2, 3, 8, 64, 400};
    size_t c;
    int k;

    for (c = 0; c < sizeof caps / sizeof caps[0]; ++c) {
        run_2i1_plus_i2(caps[c], &out);
        TEST_ASSERT_EQUAL_INT(N21, out.n);
        for (k = 0; k < N21; ++k)
            TEST_ASSERT_EQUAL_INT(2 * sample(1, k) + sample(2, k), out.got[k]);
    }
}

/* ------------------------------------------------------------ termination */

struct waiter { kpn_chan *in, *out; kpn_status got; };

/* Reads first, then would write: in a cycle of these nobody moves. */
static void read_then_write(void *arg)
{
    struct waiter *w = arg;
    int v = 0;
    w->got = kpn_recv(w->in, &v);
    kpn_send(w->out, &v);
}

void test_processes_left_waiting_on_reads_are_kahn_termination(void)
{
    static struct waiter a, b;
    kpn_proc *pa = spawn(read_then_write, &a), *pb = spawn(read_then_write, &b);
    kpn_stats st;

    a.out = b.in = connect(pa, pb, 1);
    b.out = a.in = connect(pb, pa, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2, st.procs_blocked_read);
    TEST_ASSERT_EQUAL_size_t(0, st.procs_exited);
    /* a second run finds nothing to do and says the same */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

/* Thesis figure 3.5: A and B each fill their outgoing channel, then read
 * the other's.  With capacity 1 both block on a write. */
struct fig35 { kpn_chan *out, *in; int sent; };

static void fig35_proc(void *arg)
{
    struct fig35 *p = arg;
    int v;
    for (v = 0; v < 2; ++v) {
        kpn_send(p->out, &v);
        p->sent++;
    }
    kpn_recv(p->in, &v);
}

/* With the resolver off (it has its own tests), an artificial deadlock
 * ends the run. */
void test_an_artificial_deadlock_stops_the_run_with_messages_in_place(void)
{
    static struct fig35 a, b;
    kpn_config cfg;
    kpn_proc *pa, *pb;
    kpn_chan *c1, *c2;
    kpn_stats st;
    kpn_proc_stats ps;

    kpn_config_default(&cfg);
    cfg.resolve = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    pa = spawn(fig35_proc, &a);
    pb = spawn(fig35_proc, &b);

    a.sent = b.sent = 0;
    a.out = b.in = c1 = connect(pa, pb, 1);
    b.out = a.in = c2 = connect(pb, pa, 1);
    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, a.sent);
    TEST_ASSERT_EQUAL_INT(1, b.sent);
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(c1));
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(c2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2, st.procs_blocked_write);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(pa, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, ps.state);
    TEST_ASSERT_EQUAL_PTR(c1, ps.waiting_on);
    TEST_ASSERT_EQUAL_UINT64(2, st.messages);
    /* nothing moves on a second call, and nothing is lost */
    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, a.sent);
    TEST_ASSERT_EQUAL_INT(1, b.sent);
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(c1));
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(c2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2, st.procs_blocked_write);
    TEST_ASSERT_EQUAL_UINT64(2, st.messages);
}

/* ------------------------------------------------------------ scale */

#define CHAIN 10000
#define CHAIN_MSGS 20
#define CHAIN_STACK 4096
/* Room for every build's records: a ThreadSanitizer build of the
 * ucontext port, the largest, takes about 6 200 bytes a stage */
static unsigned char big_arena[(size_t)CHAIN * 7 * 1024];

struct stage { kpn_chan *in, *out; };
static struct stage stages[CHAIN];
static int chain_got[CHAIN_MSGS], chain_n;

static void chain_source(void *arg)
{
    struct stage *s = arg;
    int k;
    for (k = 0; k < CHAIN_MSGS; ++k) {
        int v = k * 1000;
        kpn_send(s->out, &v);
    }
}

static void chain_stage(void *arg)
{
    struct stage *s = arg;
    int v;
    while (kpn_recv(s->in, &v) == KPN_OK) {
        ++v;
        kpn_send(s->out, &v);
    }
}

static void chain_sink(void *arg)
{
    struct stage *s = arg;
    int v;
    while (chain_n < CHAIN_MSGS && kpn_recv(s->in, &v) == KPN_OK)
        chain_got[chain_n++] = v;
}

void test_a_chain_of_ten_thousand_processes(void)
{
    static kpn_proc *procs[CHAIN];
    kpn_stats st;
    int i;

    /* the sizes kpn reports, each at its worst, fit the arena: a build
     * whose records grow fails here, not part-way through the carving */
    TEST_ASSERT_TRUE_MESSAGE(kpn_size_net(NULL) + (size_t)CHAIN * (kpn_size_proc(CHAIN_STACK, 5) +
                                                                   kpn_size_chan(sizeof(int), 2)) <=
                                 sizeof big_arena,
                             "big_arena is too small for this build's records");
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, big_arena, sizeof big_arena, NULL));
    for (i = 0; i < CHAIN; ++i) {
        void (*fn)(void *) = i == 0 ? chain_source : i == CHAIN - 1 ? chain_sink : chain_stage;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &procs[i], "stage", fn, &stages[i], CHAIN_STACK));
    }
    for (i = 0; i + 1 < CHAIN; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &stages[i].out, procs[i], procs[i + 1],
                                                  sizeof(int), 2));
    for (i = 1; i < CHAIN; ++i)
        stages[i].in = stages[i - 1].out;
    chain_n = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(CHAIN_MSGS, chain_n);
    for (i = 0; i < CHAIN_MSGS; ++i)
        TEST_ASSERT_EQUAL_INT(i * 1000 + (CHAIN - 2), chain_got[i]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(CHAIN, st.procs);
    TEST_ASSERT_EQUAL_size_t(CHAIN, st.procs_exited);
    TEST_ASSERT_EQUAL_UINT64((uint64_t)CHAIN_MSGS * (CHAIN - 1), st.messages);
}

/* A ring of the fewest processes that look ahead (kpn_int.h,
 * kpni_sched_look_ahead): one token goes round it AHEAD_TRIPS times, each
 * process adding one.  The ring wakes its processes in one order, pass
 * after pass, the exits that close it included, so every process's
 * 'beyond' must name the one KPNI_AHEAD places on round the ring. */
#define AHEAD_RING ((int)KPNI_AHEAD_PROCS)
#define AHEAD_TRIPS 3

#if !KPN_COMPACT /* the compact layout does not look ahead */
static int ahead_got[AHEAD_TRIPS];

static void ahead_first(void *arg)
{
    struct stage *s = arg;
    int k, v;

    for (k = 0; k < AHEAD_TRIPS; ++k) {
        v = k * AHEAD_RING;
        kpn_send(s->out, &v);
        if (kpn_recv(s->in, &ahead_got[k]) != KPN_OK)
            return;
    }
}

/* Builds the ring on 'runners' runners and runs it: the token comes back
 * to the first process each time having passed every other one. */
static void ahead_ring(kpn_proc **procs, unsigned runners)
{
    kpn_config cfg;
    kpn_stats st;
    int i;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, big_arena, sizeof big_arena, &cfg));
    for (i = 0; i < AHEAD_RING; ++i) {
        /* the last spawn, and only it, turns the look-ahead on */
        TEST_ASSERT_EQUAL_INT(0, net->runners[runners - 1].ahead);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &procs[i], "ring",
                                                i == 0 ? ahead_first : chain_stage, &stages[i],
                                                CHAIN_STACK));
    }
    for (i = 0; i < (int)runners; ++i)
        TEST_ASSERT_EQUAL_INT(1, net->runners[i].ahead);
    for (i = 0; i < AHEAD_RING; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &stages[i].out, procs[i],
                                                  procs[(i + 1) % AHEAD_RING], sizeof(int), 1));
    for (i = 0; i < AHEAD_RING; ++i)
        stages[(i + 1) % AHEAD_RING].in = stages[i].out;
    for (i = 0; i < AHEAD_TRIPS; ++i)
        ahead_got[i] = -1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    for (i = 0; i < AHEAD_TRIPS; ++i)
        TEST_ASSERT_EQUAL_INT(i * AHEAD_RING + AHEAD_RING - 1, ahead_got[i]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(AHEAD_RING, st.procs_exited);
    TEST_ASSERT_EQUAL_UINT64((uint64_t)AHEAD_TRIPS * AHEAD_RING, st.messages);
}
#endif

void test_a_net_of_4096_processes_or_more_looks_ahead_to_the_process_woken_16_wakes_on(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact build does not look ahead");
#else
    static kpn_proc *procs[AHEAD_RING];
    int i;

    TEST_ASSERT_EQUAL_UINT(4096, KPNI_AHEAD_PROCS);
    TEST_ASSERT_EQUAL_UINT(16, KPNI_AHEAD);
    ahead_ring(procs, 1);
    for (i = 0; i < AHEAD_RING; ++i)
        TEST_ASSERT_EQUAL_PTR(procs[(i + KPNI_AHEAD) % AHEAD_RING], procs[i]->beyond);
#endif
}

/* Where several runners share the net, a runner looks ahead only while
 * it runs the net alone (solo); the net's messages are those of one
 * runner whichever way its runners take turns. */
void test_a_net_that_looks_ahead_on_two_runners_carries_the_messages_of_one(void)
{
#if KPN_COMPACT
    TEST_IGNORE_MESSAGE("the compact build keeps one runner");
#else
    static kpn_proc *procs[AHEAD_RING];

    ahead_ring(procs, 2);
#endif
}
