/* SPDX-License-Identifier: MIT */
/* The resolver: the papers' deadlocking networks, true deadlocks, strict mode, determinism. */
#include "unity.h"
#include <string.h>
#include "kpn.h"
#include "kpn_int.h"
#include "support/helpers.h"
#include "support/bursts.h"

TEST_SOURCE_FILE("bench/randnet.c")
TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/input.c")
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
static unsigned char arena[2 << 20];
static kpn_net *net;

static void init(size_t reserve, int strict)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    cfg.reserve_size = reserve;
    cfg.strict = strict;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
}

void setUp(void)
{
    init(64 * 1024, 0);
}

void tearDown(void) {}

static kpn_proc *spawn(const char *name, void (*fn)(void *), void *arg)
{
    kpn_proc *p = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, name, fn, arg, STACK));
    return p;
}

static kpn_chan *connect(kpn_proc *w, kpn_proc *r, size_t cap)
{
    kpn_chan *c = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, w, r, sizeof(int), cap));
    return c;
}

/* ------------------------------------------------------------ figure 3.5 */
/* A and B each send 'n' messages on their own channel, then read the
 * other's: with capacity 1 both block writing, a local deadlock. */
struct pair { kpn_chan *out, *in; int n; int got[8]; int ngot; };

static void send_then_read(void *arg)
{
    struct pair *p = arg;
    int v;
    for (v = 0; v < p->n; ++v) {
        int m = v * 10 + p->n;
        kpn_send(p->out, &m);
    }
    p->ngot = 0;
    while (p->ngot < p->n && kpn_recv(p->in, &v) == KPN_OK)
        p->got[p->ngot++] = v;
}

void test_figure_3_5_local_deadlock_is_resolved(void)
{
    static struct pair a, b;
    kpn_proc *pa = spawn("A", send_then_read, &a), *pb = spawn("B", send_then_read, &b);
    kpn_stats st;
    int i;

    a.n = b.n = 3;
    a.out = b.in = connect(pa, pb, 1);
    b.out = a.in = connect(pb, pa, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(3, a.ngot);
    TEST_ASSERT_EQUAL_INT(3, b.ngot);
    for (i = 0; i < 3; ++i) {
        TEST_ASSERT_EQUAL_INT(i * 10 + 3, a.got[i]);
        TEST_ASSERT_EQUAL_INT(i * 10 + 3, b.got[i]);
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_OR_EQUAL(1, st.resolutions);
    TEST_ASSERT_GREATER_OR_EQUAL(st.resolutions, st.detections);
    TEST_ASSERT_GREATER_THAN(0, st.reserve_peak);
    TEST_ASSERT_GREATER_THAN(1, kpn_chan_capacity(a.out) + kpn_chan_capacity(b.out) - 1);
}

/* ----------------------------------------------- the default reserve */
/* A sends 'n' messages to B before it reads any of B's answers; B
 * answers each one.  At capacity 1 the cycle closes at once, and only
 * channels that grow to about 'n' messages let it finish. */
struct ahead { kpn_chan *out, *in; int n; long sum; int in_order; };

static void send_all_then_read(void *arg)
{
    struct ahead *a = arg;
    int v, i;

    for (i = 0; i < a->n; ++i)
        kpn_send(a->out, &i);
    a->in_order = 1;
    for (i = 0; i < a->n && kpn_recv(a->in, &v) == KPN_OK; ++i) {
        a->in_order &= v == 2 * i;
        a->sum += v;
    }
}

static void answer_each(void *arg)
{
    struct ahead *a = arg;
    int v;

    while (kpn_recv(a->in, &v) == KPN_OK) {
        v *= 2;
        kpn_send(a->out, &v);
    }
}

static void run_ahead(const kpn_config *cfg, size_t arena_size, int n, struct ahead *a,
                      struct ahead *b)
{
    kpn_proc *pa, *pb;

    a->n = n;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, arena_size, cfg));
    pa = spawn("ahead", send_all_then_read, a);
    pb = spawn("answer", answer_each, b);
    a->out = b->in = connect(pa, pb, 1);
    b->out = a->in = connect(pb, pa, 1);
}

void test_the_default_configuration_grows_channels_from_the_arena(void)
{
    static struct ahead a, b;
    kpn_stats before, st;

    run_ahead(NULL, sizeof arena, 1000, &a, &b);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    TEST_ASSERT_EQUAL_size_t(0, before.reserve_size);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, a.in_order);
    TEST_ASSERT_EQUAL_INT(999L * 1000L, a.sum); /* 2 * (0 + 1 + ... + 999) */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_THAN(0, st.resolutions);
    /* what the pool took came out of the arena's free bytes, and is not
     * counted as carved by processes or channels */
    TEST_ASSERT_GREATER_THAN(0, st.reserve_size);
    TEST_ASSERT_EQUAL_size_t(before.arena_free - st.reserve_size, st.arena_free);
    TEST_ASSERT_EQUAL_size_t(before.arena_used, st.arena_used);
    TEST_ASSERT_EQUAL_size_t(before.arena_size, st.arena_size);
}

/* With the default reserve, a full arena is what ends growth: the run
 * stops with KPN_ERESERVE, nothing lost, and memory given later lets it
 * finish. */
void test_the_default_reserve_stops_cleanly_when_the_arena_is_full(void)
{
    static struct ahead a, b;
    static unsigned char extra[64 * 1024];
    kpn_stats st;
    size_t small = kpn_size_net(NULL) + 2 * kpn_size_proc(STACK, 8) +
                   2 * kpn_size_chan(sizeof(int), 1) + 256;

    run_ahead(NULL, small, 1000, &a, &b);
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    {
        /* the smallest growth asked for (one more message in the smaller
         * ring, aligned, plus the pool's 16-byte header) did not fit */
        size_t cap = kpn_chan_capacity(a.out) < kpn_chan_capacity(b.out) ? kpn_chan_capacity(a.out)
                                                                          : kpn_chan_capacity(b.out);
        TEST_ASSERT_LESS_THAN((((cap + 1) * sizeof(int) + 15) / 16) * 16 + 16, st.arena_free);
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, a.in_order);
    TEST_ASSERT_EQUAL_INT(999L * 1000L, a.sum);
}

/* A writer that sends 'k' messages of 'size' bytes on 'x', then one on
 * 'y', to a reader that reads 'y' first: with capacity 1 each message
 * after the first ends in an artificial deadlock that only growing 'x'
 * breaks.  'go_in' (if any) holds the writer back until the pair before
 * it is done; the reader then lets the next pair go on 'go_out'. */
struct grower {
    kpn_chan *x, *y, *go_in, *go_out;
    size_t size;
    int k, right;
};

static void grower_write(void *arg)
{
    struct grower *g = arg;
    unsigned char m[512];
    int i, go;

    if (g->go_in != NULL && kpn_recv(g->go_in, &go) != KPN_OK)
        return;
    for (i = 0; i < g->k; ++i) {
        kpni_memset(m, 0x30 + i, g->size);
        kpn_send(g->x, m);
    }
    kpn_send(g->y, &i);
}

static void grower_read(void *arg)
{
    struct grower *g = arg;
    unsigned char m[512];
    size_t j;
    int i, n;

    g->right = kpn_recv(g->y, &n) == KPN_OK && n == g->k;
    for (i = 0; i < g->k; ++i) {
        g->right &= kpn_recv(g->x, m) == KPN_OK;
        for (j = 0; j < g->size; ++j)
            g->right &= m[j] == 0x30 + i;
    }
    if (g->go_out != NULL)
        kpn_send(g->go_out, &i);
}

static void build_growers(size_t arena_size, struct grower *a, struct grower *b)
{
    kpn_proc *aw, *ar, *bw, *br;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, arena_size, NULL));
    aw = spawn("a-writer", grower_write, a);
    ar = spawn("a-reader", grower_read, a);
    bw = spawn("b-writer", grower_write, b);
    br = spawn("b-reader", grower_read, b);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &a->x, aw, ar, a->size, 1));
    a->y = connect(aw, ar, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &b->x, bw, br, b->size, 1));
    b->y = connect(bw, br, 1);
    a->go_out = b->go_in = connect(ar, bw, 1);
}

/* With the default reserve, a ring given back from the top of what the
 * arena has carved merges with the arena's free space: a growth that
 * needs both is made.  A's channel (messages of 256 bytes) grows to 2
 * from the arena (528 bytes with the pool's header), leaving 704; its
 * growth to 4 (1 040) and to 3 (784) do not fit, and the run stops.
 * Memory given then takes A's ring of 4, so its ring of 2 goes back to
 * the pool at the arena's top.  B's channel (400 bytes) then needs
 * 816: more than that block or the 704 bytes after it, not more than
 * the two. */
void test_a_ring_given_back_at_the_arenas_top_joins_its_free_space(void)
{
    static struct grower a, b;
    static unsigned char given[1040 + 16];
    unsigned char *at = given + (16 - (uintptr_t)given % 16) % 16;
    kpn_stats st;
    size_t size = sizeof arena;

    a.size = 256, a.k = 3, b.size = 400, b.k = 2;
    build_growers(size, &a, &b);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    size -= st.arena_free - (528 + 704); /* the same net, 704 bytes left after A's ring of 2 */
    build_growers(size, &a, &b);
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_capacity(a.x));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(704, st.arena_free);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, at, 1040));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_size_t(4, kpn_chan_capacity(a.x));
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_capacity(b.x));
    TEST_ASSERT_EQUAL_INT(1, a.right);
    TEST_ASSERT_EQUAL_INT(1, b.right);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(704 - (816 - 528), st.arena_free);
}

/* With several runners a process of the cycle a stop recorded may be
 * walking as the run stops, resolve the cycle itself by growing a
 * channel of its own that fits, and go on; the recorded writer may then
 * be woken before the run ends.  The next kpn_run finds nothing left to
 * resolve and goes on (the net fuzzer found a run that followed the
 * recorded writer's empty wait: tools/fuzz/crashes/).  White-box, on one
 * runner: the wake is made by hand. */
void test_a_stopped_cycle_resolved_meanwhile_is_not_resolved_again(void)
{
    static struct ahead a, b;
    static unsigned char extra[64 * 1024];
    kpn_config cfg;
    kpn_proc *w;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.reserve_size = 0;
    run_ahead(&cfg, sizeof arena, 1000, &a, &b);
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_NOT_NULL(net->pending_chan);
    w = net->pending_chan->writer;
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, w->state);
    kpni_sched_ready(w->runner, w); /* as if the cycle had gone on */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_NULL(net->pending_chan);
    TEST_ASSERT_EQUAL_INT(1, a.in_order);
    TEST_ASSERT_EQUAL_INT(999L * 1000L, a.sum);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
}

/* The same race, with the recorded writer still blocked: Q's walk found
 * the cycle, chose its first least-capacity channel, of big messages,
 * and stopped for the reserve; R's walk, made under the locks just
 * after, chose its own first one, of small messages, which fit, and
 * released its writer before that runner saw the stop.  The cycle is
 * broken: the next kpn_run must not ask the pool for the recorded
 * channel, nor stop for it.  White-box, on one runner: R's walk is made
 * by hand. */
static kpn_chan *big, *small;

static void send_big_then_read(void *arg)
{
    static unsigned char m[1000];
    int v;

    (void)arg;
    kpn_send(big, m);
    kpn_send(big, m);
    kpn_recv(small, &v);
    kpn_recv(small, &v);
}

static void send_small_then_read(void *arg)
{
    static unsigned char m[1000];
    int v = 1;

    (void)arg;
    kpn_send(small, &v);
    kpn_send(small, &v);
    kpn_recv(big, m);
    kpn_recv(big, m);
}

void test_a_stopped_cycle_broken_meanwhile_does_not_stop_the_next_run(void)
{
    kpn_proc *q, *r;
    kpn_stats st;

    init(64, 0);
    r = spawn("R", send_small_then_read, NULL); /* blocks first */
    q = spawn("Q", send_big_then_read, NULL);   /* closes the cycle */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &big, q, r, 1000, 1));
    small = connect(r, q, 1);
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_TRUE(net->pending_chan == big);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, r->state);
    kpni_resolve_parked(&net->runners[0], r); /* grows 'small', releases R */
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_capacity(small));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, q->state);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_NULL(net->pending_chan);
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_capacity(big));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2, st.procs_exited);
    TEST_ASSERT_EQUAL_UINT64(1, st.resolutions);
}

/* Several runners can stop one run for the reserve twice: a cycle on
 * another runner closes and finds no room before that runner sees the
 * first stop, and only the last is kept for kpn_run to retry.  The other
 * cycle stays closed and is never walked again, so the scan at rest must
 * resolve it, inputs or not (with an input it used to grow only a writer
 * behind a true deadlock, and the run ended KPN_OK with the cycle still
 * closed: the net fuzzer found it).  White-box, on one runner: the stop
 * that took the first one's place is made by hand, by forgetting it. */
static void read_all(void *arg)
{
    int v;

    while (kpn_recv(*(kpn_chan **)arg, &v) == KPN_OK)
        ;
}

void test_a_cycle_left_closed_by_a_stop_is_resolved_at_rest(void)
{
    static struct ahead a, b;
    static unsigned char extra[64 * 1024];
    static kpn_chan *in;
    kpn_config cfg;
    kpn_proc *r;
    kpn_stats st;
    int v = 7;

    kpn_config_default(&cfg);
    cfg.reserve_size = 0;
    run_ahead(&cfg, sizeof arena, 1000, &a, &b);
    r = spawn("reader", read_all, &in);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, r, sizeof v, 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_offer(in, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(in));
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_NOT_NULL(net->pending_chan);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_WRITE, net->pending_chan->writer->state);
    net->pending = NULL; /* as if another cycle's stop had been kept */
    net->pending_chan = NULL;
    net->pending_bytes = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, a.in_order);
    TEST_ASSERT_EQUAL_INT(999L * 1000L, a.sum);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(3, st.procs_exited);
    TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
}

/* An explicit reserve keeps its exact meaning: 0 is no pool at all. */
void test_an_explicit_reserve_of_0_never_takes_arena_memory(void)
{
    static struct ahead a, b;
    kpn_config cfg;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.reserve_size = 0;
    run_ahead(&cfg, sizeof arena, 1000, &a, &b);
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(0, st.reserve_size);
    TEST_ASSERT_EQUAL_UINT64(0, st.resolutions);
}

void test_with_the_resolver_off_the_same_network_is_a_deadlock(void)
{
    static struct pair a, b;
    kpn_config cfg;
    kpn_proc *pa, *pb;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.resolve = 0;
    cfg.reserve_size = 4096;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    pa = spawn("A", send_then_read, &a);
    pb = spawn("B", send_then_read, &b);
    a.n = b.n = 3;
    a.out = b.in = connect(pa, pb, 1);
    b.out = a.in = connect(pb, pa, 1);
    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(0, st.detections);
    TEST_ASSERT_EQUAL_size_t(2, st.procs_blocked_write);
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(a.out));
}

/* ------------------------------------------------------------ figure 3.6 */
/* 0 sends K to 2 then reads K from 1; 1 sends K to 0 then one to 2; 2
 * reads one from 1, then K from 0.  The cycle 2 -r-> 1 -w-> 0 -w-> 2 has
 * a reader in it, and depending on the spawn order the reader is the
 * last to block. */
#define K36 6
static kpn_chan *c02, *c10, *c12;
static int got0[K36], got2[K36 + 1], n0, n2;

static void fig36_p0(void *arg)
{
    int i, v;
    (void)arg;
    for (i = 0; i < K36; ++i) {
        v = 100 + i;
        kpn_send(c02, &v);
    }
    for (n0 = 0; n0 < K36 && kpn_recv(c10, &v) == KPN_OK;)
        got0[n0++] = v;
}

static void fig36_p1(void *arg)
{
    int i, v;
    (void)arg;
    for (i = 0; i < K36; ++i) {
        v = 200 + i;
        kpn_send(c10, &v);
    }
    v = 299;
    kpn_send(c12, &v);
}

static void fig36_p2(void *arg)
{
    int v;
    (void)arg;
    for (n2 = 0; n2 < K36 + 1; ++n2) {
        if (kpn_recv(n2 == 0 ? c12 : c02, &v) != KPN_OK)
            return;
        got2[n2] = v;
    }
}

static void run_figure_3_6(int reader_last)
{
    kpn_proc *p[3];
    int i;

    init(64 * 1024, 0);
    if (reader_last) {
        p[0] = spawn("0", fig36_p0, NULL);
        p[1] = spawn("1", fig36_p1, NULL);
        p[2] = spawn("2", fig36_p2, NULL);
    } else {
        p[2] = spawn("2", fig36_p2, NULL);
        p[1] = spawn("1", fig36_p1, NULL);
        p[0] = spawn("0", fig36_p0, NULL);
    }
    c02 = connect(p[0], p[2], 1);
    c10 = connect(p[1], p[0], 1);
    c12 = connect(p[1], p[2], 1);
    n0 = n2 = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(K36, n0);
    TEST_ASSERT_EQUAL_INT(K36 + 1, n2);
    TEST_ASSERT_EQUAL_INT(299, got2[0]);
    for (i = 0; i < K36; ++i) {
        TEST_ASSERT_EQUAL_INT(200 + i, got0[i]);
        TEST_ASSERT_EQUAL_INT(100 + i, got2[i + 1]);
    }
}

void test_figure_3_6_cycle_closed_by_a_writer(void)
{
    run_figure_3_6(0);
}

void test_figure_3_6_cycle_closed_by_a_reader(void)
{
    run_figure_3_6(1);
}

/* ------------------------------------------------------------ local */
/* The figure 3.5 pair deadlocks while an unrelated producer and consumer
 * keep running: the pair must be released long before the others end. */
#define BUSY 20000
static kpn_chan *busy_chan;
static int busy_count, busy_count_when_pair_done;

static void busy_producer(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < BUSY; ++i)
        kpn_send(busy_chan, &i);
}

static void busy_consumer(void *arg)
{
    int v;
    (void)arg;
    for (busy_count = 0; kpn_recv(busy_chan, &v) == KPN_OK; ++busy_count)
        ;
}

static void pair_then_note(void *arg)
{
    send_then_read(arg);
    busy_count_when_pair_done = busy_count;
}

void test_a_local_deadlock_is_resolved_while_the_rest_runs(void)
{
    static struct pair a, b;
    kpn_proc *bp = spawn("busy producer", busy_producer, NULL);
    kpn_proc *bc = spawn("busy consumer", busy_consumer, NULL);
    kpn_proc *pa = spawn("A", pair_then_note, &a), *pb = spawn("B", pair_then_note, &b);

    busy_chan = connect(bp, bc, 1);
    a.n = b.n = 4;
    a.out = b.in = connect(pa, pb, 1);
    b.out = a.in = connect(pb, pa, 1);
    busy_count_when_pair_done = -1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(BUSY, busy_count);
    TEST_ASSERT_EQUAL_INT(4, a.ngot);
    TEST_ASSERT_EQUAL_INT(4, b.ngot);
    TEST_ASSERT_GREATER_OR_EQUAL(0, busy_count_when_pair_done);
    TEST_ASSERT_LESS_THAN(100, busy_count_when_pair_done);
}

/* ------------------------------------------------------------ figure 3.7 */
/* An effective network no finite memory can run: every loop leaves one
 * more message on c2.  It must stop cleanly when the pool is used up,
 * with B's input correct so far and nothing lost, and go further after
 * kpn_reserve_add. */
void test_figure_3_7_exhausts_the_pool_cleanly_and_goes_on_after_more(void)
{
    static unsigned char more[16 * 1024];
    static struct kt_fig37 f;
    kpn_stats st;
    char report[1024];
    int first;

    init(4096, 0);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kt_fig37_build(net, &f, 0));

    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, f.b_bad);
    TEST_ASSERT_GREATER_THAN(10, f.b_got2);
    /* nothing lost: what A sent on c2 is what B took plus what is queued */
    TEST_ASSERT_EQUAL_INT(f.a_sent2, f.b_got2 + (int)kpn_chan_fill(f.c2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_LESS_OR_EQUAL(st.reserve_size, st.reserve_peak);
    TEST_ASSERT_GREATER_THAN(0, kpn_report(net, report, sizeof report));
    TEST_ASSERT_TRUE(kt_contains(report, "reserve exhausted"));
    TEST_ASSERT_TRUE(kt_contains(report, "\"A\" -> \"B\""));
    /* asking again without memory changes nothing */
    first = f.b_got2;
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(first, f.b_got2);

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, more, sizeof more));
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(0, f.b_bad);
    TEST_ASSERT_GREATER_THAN(first, f.b_got2);
    TEST_ASSERT_EQUAL_INT(f.a_sent2, f.b_got2 + (int)kpn_chan_fill(f.c2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_THAN(4096 + 8 * 1024, st.reserve_size);
}

/* ------------------------------------------------------------ true deadlock */
struct reader_pair { kpn_chan *in, *out; kpn_status got; };

static void read_first(void *arg)
{
    struct reader_pair *r = arg;
    int v = 0;
    r->got = kpn_recv(r->in, &v);
    kpn_send(r->out, &v);
}

static void build_true_deadlock(void)
{
    static struct reader_pair x, y;
    kpn_proc *px = spawn("X", read_first, &x), *py = spawn("Y", read_first, &y);

    x.out = y.in = connect(px, py, 2);
    y.out = x.in = connect(py, px, 2);
}

void test_a_true_deadlock_is_termination_and_reported(void)
{
    kpn_stats st;
    char report[1024];

    build_true_deadlock();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
    TEST_ASSERT_EQUAL_UINT64(0, st.resolutions);
    kpn_report(net, report, sizeof report);
    TEST_ASSERT_TRUE(kt_contains(report, "true deadlock: "));
    TEST_ASSERT_TRUE(kt_contains(report, "\"X\""));
    TEST_ASSERT_TRUE(kt_contains(report, "\"Y\""));
    /* a second run finds the same deadlock, and does not count it twice */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
}

void test_strict_mode_turns_a_true_deadlock_into_an_error(void)
{
    init(0, 1);
    build_true_deadlock();
    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
}

void test_config_rejects_flags_other_than_0_and_1(void)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    TEST_ASSERT_EQUAL_INT(1, cfg.resolve);
    TEST_ASSERT_EQUAL_INT(0, cfg.strict);
    /* each flag out of range on both sides */
    cfg.resolve = 2;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.resolve = -1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.resolve = 1;
    cfg.strict = -1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.strict = 2;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.strict = 0;
    cfg.stack_fill = 2;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_net(&cfg));
    cfg.stack_fill = -1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_net(&cfg));
    cfg.stack_fill = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
}

/* A writer whose reader sits in a true deadlock is not itself deadlocked:
 * with a bigger channel it goes on.  Found once nothing else can run. */
static kpn_chan *tail_chan, *tail_done;
static int tail_sent;

static void tail_writer(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 5; ++i, ++tail_sent)
        kpn_send(tail_chan, &i);
    kpn_send(tail_done, &i);
}

static void never_reads(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(*(kpn_chan **)arg, &v); /* waits on the other deadlocked reader */
}

static int tail_witness;
static void witness(void *arg)
{
    int v;
    (void)arg;
    if (kpn_recv(tail_done, &v) == KPN_OK)
        tail_witness = v;
}

/* W writes 5 messages to X, which with Y waits in a true deadlock, then
 * tells Z how many it sent. */
/* 'writer_first' 0: X and Y are spawned, and so run, before W. */
static void build_tail_net_in_order(int writer_first)
{
    static kpn_chan *xin, *yin;
    kpn_proc *w = writer_first ? spawn("W", tail_writer, NULL) : NULL;
    kpn_proc *x = spawn("X", never_reads, &xin), *y = spawn("Y", never_reads, &yin);
    kpn_proc *z;

    if (!writer_first)
        w = spawn("W", tail_writer, NULL);
    z = spawn("Z", witness, NULL);
    xin = connect(y, x, 1);
    yin = connect(x, y, 1);
    tail_chan = connect(w, x, 1);
    tail_done = connect(w, z, 1);
    tail_sent = 0;
    tail_witness = 0;
}

static void build_tail_net(void)
{
    build_tail_net_in_order(1);
}

void test_a_writer_behind_a_true_deadlock_is_released(void)
{
    kpn_stats st;

    build_tail_net();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(5, tail_sent);
    TEST_ASSERT_EQUAL_INT(5, tail_witness);
    TEST_ASSERT_EQUAL_size_t(5, kpn_chan_fill(tail_chan));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
    /* W's channel grows 1 -> 2 -> 4 -> 8, each growth at rest, after a
     * write-block of W that walked (resolver.md): 3 walks and 3 growths.
     * W's first walk marks X, which read-blocks waited on and walks,
     * marking Y, whose walk closes the cycle; Z, unmarked, never walks.
     * resolver.md counts a growth at rest as a detection: 8 in all. */
    TEST_ASSERT_EQUAL_UINT64(3, st.resolutions);
    TEST_ASSERT_EQUAL_size_t(8, kpn_chan_capacity(tail_chan));
    TEST_ASSERT_EQUAL_UINT64(3 + 3 + 2, st.detections);
}

/* The same writer with no reserve: the run stops with KPN_ERESERVE,
 * nothing lost, stops so again until memory is given, then goes on. */
void test_a_writer_behind_a_true_deadlock_waits_for_reserve_then_goes_on(void)
{
    static unsigned char more[1024];
    char report[1024];

    init(0, 0);
    build_tail_net();
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, tail_sent); /* the second send waits */
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_fill(tail_chan));
    TEST_ASSERT_EQUAL_INT(0, tail_witness);
    kpn_report(net, report, sizeof report);
    TEST_ASSERT_TRUE(kt_contains(report, "reserve exhausted: \"W\" -> \"X\" (in a true deadlock)"));
    TEST_ASSERT_TRUE(kt_contains(report, "needs a free block of"));
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(1, tail_sent);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, more, sizeof more));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(5, tail_sent);
    TEST_ASSERT_EQUAL_INT(5, tail_witness);
    TEST_ASSERT_EQUAL_size_t(5, kpn_chan_fill(tail_chan));
}

/* Under cfg.strict, X and Y close a true deadlock unseen (neither is
 * marked), W then waits on X, and only the scan at rest finds the cycle.
 * That ends the run with KPN_EDEADLOCK: W's channel does not grow in the
 * run it ends, and an empty pool cannot turn the status into
 * KPN_ERESERVE. */
void test_strict_ends_a_true_deadlock_found_at_rest_before_growing_behind_it(void)
{
    size_t reserve;
    kpn_stats st;

    for (reserve = 0; reserve <= 4096; reserve += 4096) {
        init(reserve, 1);
        build_tail_net_in_order(0);
        TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
        TEST_ASSERT_EQUAL_UINT64(0, st.resolutions);
        TEST_ASSERT_EQUAL_size_t(1, st.procs_blocked_write);
        TEST_ASSERT_EQUAL_INT(1, tail_sent);
        TEST_ASSERT_EQUAL_size_t(1, kpn_chan_capacity(tail_chan));
    }
}

/* A channel of 64-byte messages, so that its rings dwarf a pool block's
 * header, written by W, whose reader X waits with Y in a true deadlock. */
struct wide {
    unsigned char b[64];
};
static kpn_chan *wide_chan;
static int wide_sent;

static void wide_writer(void *arg)
{
    struct wide m;
    int n = (int)(intptr_t)arg;

    for (m.b[0] = 0; wide_sent < n; ++wide_sent, ++m.b[0])
        kpn_send(wide_chan, &m);
}

static size_t number_after(const char *text, const char *words)
{
    const char *at = strstr(text, words);
    size_t n = 0;

    TEST_ASSERT_NOT_NULL(at);
    for (at += strlen(words); *at >= '0' && *at <= '9'; ++at)
        n = n * 10 + (size_t)(*at - '0');
    return n;
}

/* resolver.md, "Growth rule": a full channel of capacity c grows to 2c,
 * or to c + 1 where the pool has no block for 2c; after KPN_ERESERVE the
 * report names the block that growth asked for.  So that block is enough
 * and one 16 bytes smaller is not, and the channel then holds c + 1
 * (3 messages of 64 bytes: 192 bytes and a header, where 2c takes 256). */
void test_a_pool_too_small_to_double_grows_by_one_and_the_report_names_that_block(void)
{
    static unsigned char mem[1024];
    static kpn_chan *xin, *yin;
    unsigned char *at = mem + (16 - (uintptr_t)mem % 16) % 16;
    char report[1024];
    size_t block;
    kpn_proc *w, *x, *y;

    init(0, 0);
    w = spawn("W", wide_writer, (void *)(intptr_t)3);
    x = spawn("X", never_reads, &xin);
    y = spawn("Y", never_reads, &yin);
    xin = connect(y, x, 1);
    yin = connect(x, y, 1);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &wide_chan, w, x, sizeof(struct wide), 2));
    wide_sent = 0;
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(2, wide_sent);
    kpn_report(net, report, sizeof report);
    block = number_after(report, "needs a free block of ");
    TEST_ASSERT_GREATER_THAN(3 * sizeof(struct wide), block);
    TEST_ASSERT_LESS_THAN(4 * sizeof(struct wide), block);

    /* apart, so that the two regions cannot merge into one block */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, at, block - 16));
    TEST_ASSERT_EQUAL_INT(KPN_ERESERVE, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(2, wide_sent);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, at + 512, block));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(3, wide_sent);
    TEST_ASSERT_EQUAL_size_t(3, kpn_chan_capacity(wide_chan));
    TEST_ASSERT_EQUAL_size_t(3, kpn_chan_fill(wide_chan));
}

/* Two writers behind a true deadlock, found once nothing else can run:
 * the smaller full channel grows first, as Parks grows the smallest at a
 * global deadlock, though its writer was spawned second. */
static kpn_chan *order_chan[2];
static int order_done[2], order_n;

static void fills(void *arg)
{
    int which = (int)(intptr_t)arg, i;

    for (i = 0; i < (which == 0 ? 4 : 2); ++i) /* one more than its channel holds */
        kpn_send(order_chan[which], &i);
    order_done[order_n++] = which;
}

void test_behind_a_true_deadlock_the_smallest_full_channel_grows_first(void)
{
    static kpn_chan *xin, *yin;
    kpn_proc *a = spawn("A", fills, (void *)(intptr_t)0);
    kpn_proc *b = spawn("B", fills, (void *)(intptr_t)1);
    kpn_proc *x = spawn("X", never_reads, &xin), *y = spawn("Y", never_reads, &yin);
    kpn_stats st;

    xin = connect(y, x, 1);
    yin = connect(x, y, 1);
    order_chan[0] = connect(a, x, 3);
    order_chan[1] = connect(b, y, 1);
    order_n = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(2, order_n);
    TEST_ASSERT_EQUAL_INT(1, order_done[0]); /* B, whose channel held 1 */
    TEST_ASSERT_EQUAL_INT(0, order_done[1]);
    TEST_ASSERT_EQUAL_size_t(6, kpn_chan_capacity(order_chan[0]));
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_capacity(order_chan[1]));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(2, st.resolutions);
    TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
}

/* ------------------------------------------------------------ determinism */
/* Random cyclic networks give, at every capacity from 1 to 64, the
 * histories of a sequential run with unbounded queues.  Each run starts
 * with no reserve at all and is given 512 bytes more at every
 * KPN_ERESERVE, so every reserve size that suffices is passed through,
 * and so is every resume after an exhausted pool. */
#define CHUNK 512
#define CHUNKS 128
static unsigned char chunks[CHUNKS][CHUNK];

void test_random_cyclic_networks_match_unbounded_queues_at_every_capacity(void)
{
    static rn_net n;
    static rn_run run;
    uint32_t ref[RN_MAX_PROCS];
    uint32_t seed;
    size_t cap;
    int i, resumed = 0, resolved = 0;

    for (seed = 1; seed <= 6; ++seed) {
        rn_generate(&n, seed, 12);
        rn_simulate(&n, ref);
        for (i = 0; i < n.nprocs; ++i)
            TEST_ASSERT_TRUE(ref[i] != 0);
        for (cap = 1; cap <= 64; ++cap) {
            kpn_status s;
            kpn_stats st;
            int used = 0;
            init(0, 0);
            TEST_ASSERT_EQUAL_INT(KPN_OK, rn_build(net, &n, &run, cap, 8192));
            while ((s = kpn_run(net)) == KPN_ERESERVE && used < CHUNKS)
                TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, chunks[used++], CHUNK));
            TEST_ASSERT_EQUAL_INT(KPN_OK, s);
            for (i = 0; i < n.nprocs; ++i)
                TEST_ASSERT_EQUAL_HEX32(ref[i], run.hash[i]);
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
            resumed += used;
            resolved += (int)st.resolutions;
        }
    }
    /* the sweep really exercised the resolver and the resume path */
    TEST_ASSERT_GREATER_THAN(50, resolved);
    TEST_ASSERT_GREATER_THAN(10, resumed);
}

/* X fills cA while nothing waits on X, then R, reading cB first, closes
 * the cycle R -> X -> R with a read.  The write-block must still mark the
 * end of X's chain, or the read-block that closes the cycle walks nothing
 * and the deadlock waits for the whole net to come to rest. */
static kpn_chan *ca, *cb;
static int r_got;

static void x_proc(void *arg)
{
    int v = 1;
    (void)arg;
    kpn_send(ca, &v);
    kpn_send(ca, &v);
    kpn_send(cb, &v);
}

static void r_proc(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(cb, &v);
    kpn_recv(ca, &v);
    kpn_recv(ca, &v);
    r_got = 3;
    busy_count_when_pair_done = busy_count;
}

void test_a_cycle_closed_by_a_reader_behind_an_unwaited_writer_is_found_at_once(void)
{
    kpn_proc *bp = spawn("busy producer", busy_producer, NULL);
    kpn_proc *bc = spawn("busy consumer", busy_consumer, NULL);
    kpn_proc *x = spawn("X", x_proc, NULL), *r = spawn("R", r_proc, NULL);

    busy_chan = connect(bp, bc, 1);
    ca = connect(x, r, 1);
    cb = connect(x, r, 1);
    r_got = 0;
    busy_count_when_pair_done = -1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(3, r_got);
    TEST_ASSERT_GREATER_OR_EQUAL(0, busy_count_when_pair_done);
    TEST_ASSERT_LESS_THAN(100, busy_count_when_pair_done);
}

/* B waits on V; W, then X, fill their channels and wait, W on B and X on
 * W, so both walks end at V and mark it.  V's message wakes B, which W
 * waits on: the chain W -> B now ends at B, so B must take V's mark.
 * B then reads X's channel, which is empty, and closes the cycle
 * B -> X -> W -> B with a read: it walks only if it holds the mark. */
static kpn_chan *vb, *wb, *xw, *xb;
static int b_got;

static void v_proc(void *arg)
{
    int v = 1;
    (void)arg;
    kpn_send(vb, &v);
}

static void w_proc(void *arg)
{
    int v = 1;
    (void)arg;
    kpn_send(wb, &v);
    kpn_send(wb, &v);
    kpn_recv(xw, &v);
}

static void x_fill_proc(void *arg)
{
    int v = 1;
    (void)arg;
    kpn_send(xw, &v);
    kpn_send(xw, &v);
    kpn_send(xb, &v);
}

static void b_proc(void *arg)
{
    int v;
    (void)arg;
    b_got = 0;
    b_got += kpn_recv(vb, &v) == KPN_OK;
    b_got += kpn_recv(xb, &v) == KPN_OK;
    b_got += kpn_recv(wb, &v) == KPN_OK;
    b_got += kpn_recv(wb, &v) == KPN_OK;
    busy_count_when_pair_done = busy_count;
}

void test_a_process_woken_while_waited_on_takes_the_mark_and_closes_the_cycle(void)
{
    kpn_proc *bp = spawn("busy producer", busy_producer, NULL);
    kpn_proc *bc = spawn("busy consumer", busy_consumer, NULL);
    kpn_proc *b = spawn("B", b_proc, NULL), *w = spawn("W", w_proc, NULL);
    kpn_proc *x = spawn("X", x_fill_proc, NULL), *v = spawn("V", v_proc, NULL);
    kpn_stats st;

    busy_chan = connect(bp, bc, 1);
    vb = connect(v, b, 1);
    wb = connect(w, b, 1);
    xw = connect(x, w, 1);
    xb = connect(x, b, 1);
    busy_count_when_pair_done = -1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(4, b_got);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.resolutions);
    TEST_ASSERT_GREATER_OR_EQUAL(0, busy_count_when_pair_done);
    TEST_ASSERT_LESS_THAN(100, busy_count_when_pair_done);
}

/* One runner, S -> A -> Z, capacity 1.  S's second message waits, and its
 * walk marks A.  A's receive wakes S, which nobody waits on: no chain
 * runs through S, so it takes no mark.  A then read-blocks with nobody
 * waiting on it: it ends no chain, and its mark goes, so that its later
 * read-blocks take the short path.  (Against the marks kept for good, S
 * would take A's and A would keep its own.) */
static kpn_chan *sa, *az;
static kpn_proc *proc_s, *proc_a;
static int s_marked, a_marked_when_z_ran, z_got;

static void s_proc(void *arg)
{
    int v = 1;
    (void)arg;
    kpn_send(sa, &v);
    kpn_send(sa, &v);
    s_marked = proc_s->watched;
}

static void a_proc(void *arg)
{
    int v;
    (void)arg;
    while (kpn_recv(sa, &v) == KPN_OK)
        kpn_send(az, &v);
}

static void z_proc(void *arg)
{
    int v;
    (void)arg;
    z_got = 0;
    while (kpn_recv(az, &v) == KPN_OK) {
        if (z_got++ == 0)
            a_marked_when_z_ran = proc_a->watched;
    }
}

void test_on_one_runner_a_mark_passes_to_no_process_nobody_waits_on(void)
{
    kpn_proc *z;
    kpn_stats st;

    proc_s = spawn("S", s_proc, NULL);
    proc_a = spawn("A", a_proc, NULL);
    z = spawn("Z", z_proc, NULL);
    sa = connect(proc_s, proc_a, 1);
    az = connect(proc_a, z, 1);
    s_marked = a_marked_when_z_ran = -1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(2, z_got);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.detections); /* S's walk, which marked A */
    TEST_ASSERT_EQUAL_INT(0, s_marked);
    TEST_ASSERT_EQUAL_INT(0, a_marked_when_z_ran);
}
