/* SPDX-License-Identifier: MIT */
/* kpn_net_stats: totals that agree with what the network did. */
#include <string.h>

#include "unity.h"
#include "kpn.h"

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

static unsigned char arena[256 * 1024];
static kpn_net *net;

void setUp(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
}

void tearDown(void) {}

static kpn_chan *data, *never;

static void writes_five(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 5; ++i)
        kpn_send(data, &i);
}

static void reads_all(void *arg)
{
    int v;
    (void)arg;
    while (kpn_recv(data, &v) == KPN_OK)
        ;
}

static void waits_forever(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(never, &v);
}

void test_stats_reject_null(void)
{
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(NULL, &st));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(net, NULL));
}

/* kpn.h: a call that fails writes no out-parameter.  A refused
 * kpn_net_stats (NULL, a released net) leaves 'out' as the caller had it. */
void test_a_refused_stats_call_writes_nothing(void)
{
    kpn_stats st, pattern;

    memset(&pattern, 0xA5, sizeof pattern);
    memcpy(&st, &pattern, sizeof st);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(NULL, &st));
    TEST_ASSERT_EQUAL_MEMORY(&pattern, &st, sizeof st);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_MEMORY(&pattern, &st, sizeof st);
}

void test_a_fresh_net_counts_nothing(void)
{
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(0, st.procs);
    TEST_ASSERT_EQUAL_size_t(0, st.chans);
    TEST_ASSERT_EQUAL_UINT64(0, st.switches);
    TEST_ASSERT_EQUAL_UINT64(0, st.messages);
    TEST_ASSERT_GREATER_THAN(0, st.arena_used);
    TEST_ASSERT_LESS_THAN(st.arena_size, st.arena_used);
    TEST_ASSERT_EQUAL_size_t(st.arena_size, st.arena_used + st.arena_free);
}

/* w sends five messages to r over a ring of 2; r, at EOF, closes
 * 'never', on which z waits: run to the end. */
static void run_five_through(void)
{
    kpn_proc *w, *r, *z;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", writes_five, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "r", reads_all, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &z, "z", waits_forever, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &data, w, r, sizeof(int), 2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &never, r, z, sizeof(int), 2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

void test_counts_match_the_run(void)
{
    kpn_stats st;
    const kpn_proc *it;
    uint64_t per_proc = 0;

    run_five_through();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(3, st.procs);
    TEST_ASSERT_EQUAL_size_t(2, st.chans);
    /* r exits at EOF, which closes 'never' and releases z too */
    TEST_ASSERT_EQUAL_size_t(3, st.procs_exited);
    TEST_ASSERT_EQUAL_size_t(0, st.procs_blocked_read);
    TEST_ASSERT_EQUAL_UINT64(5, st.messages);
    TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
    /* the net's dispatch count is the sum of every process's */
    for (it = kpn_proc_next(net, NULL); it != NULL; it = kpn_proc_next(net, it)) {
        kpn_proc_stats ps;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(it, &ps));
        TEST_ASSERT_GREATER_OR_EQUAL(1, ps.switches);
        per_proc += ps.switches;
    }
    TEST_ASSERT_EQUAL_UINT64(st.switches, per_proc);
    /* w fills the ring of 2 and blocks at least twice more for 5 messages */
    TEST_ASSERT_GREATER_OR_EQUAL(3 + 2, st.switches);
}

void test_arena_use_grows_with_every_object(void)
{
    kpn_stats a, b, c;
    kpn_proc *p;
    kpn_chan *ch;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &a));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", reads_all, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &b));
    TEST_ASSERT_GREATER_OR_EQUAL(a.arena_used + 8192, b.arena_used);
    TEST_ASSERT_LESS_OR_EQUAL(a.arena_used + kpn_size_proc(8192, 1), b.arena_used);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ch, p, p, 100, 10));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &c));
    TEST_ASSERT_GREATER_OR_EQUAL(b.arena_used + 1000, c.arena_used);
    TEST_ASSERT_LESS_OR_EQUAL(b.arena_used + kpn_size_chan(100, 10), c.arena_used);
}

/* kpn.h: runner_switches gives the dispatches per runner, entries from
 * 'runners' on 0.  With one runner every dispatch is runner 0's, and
 * there is no other runner to steal from, nor one to sleep while it
 * runs. */
void test_one_runner_makes_every_dispatch(void)
{
    kpn_stats st;
    unsigned i;

    run_five_through();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT(1, st.runners);
    TEST_ASSERT_GREATER_THAN(0, st.switches);
    TEST_ASSERT_EQUAL_UINT64(st.switches, st.runner_switches[0]);
    for (i = 1; i < KPN_MAX_RUNNERS; ++i)
        TEST_ASSERT_EQUAL_UINT64(0, st.runner_switches[i]);
    TEST_ASSERT_EQUAL_UINT64(0, st.steals);
    TEST_ASSERT_EQUAL_UINT64(0, st.steal_attempts);
    TEST_ASSERT_EQUAL_UINT64(0, st.sleeps);
}

/* reserve_used is what the pool lends now, reserve_peak the most it
 * ever lent.  A channel of capacity 1 that must hold three messages
 * before its reader starts doubles twice from the pool
 * (docs/resolver.md); the second growth takes the new ring before the
 * first pooled one goes back, so the peak is the two rings together and
 * what stays in use is the last ring only. */
static kpn_chan *grow_go;

static void writes_three_then_go(void *arg)
{
    int v;
    (void)arg;
    for (v = 0; v < 3; ++v)
        kpn_send(data, &v);
    kpn_send(grow_go, &v);
}

static void waits_for_go_then_reads_all(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(grow_go, &v);
    while (kpn_recv(data, &v) == KPN_OK)
        ;
}

void test_reserve_use_now_is_below_its_peak_after_two_growths(void)
{
    kpn_config cfg;
    kpn_proc *w, *r;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.reserve_size = 4096;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", writes_three_then_go, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "r", waits_for_go_then_reads_all, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &data, w, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &grow_go, w, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(2, st.resolutions);
    TEST_ASSERT_EQUAL_size_t(4, kpn_chan_capacity(data));
    TEST_ASSERT_GREATER_THAN(0, st.reserve_used);
    TEST_ASSERT_LESS_THAN(st.reserve_peak, st.reserve_used);
    TEST_ASSERT_LESS_OR_EQUAL(st.reserve_size, st.reserve_peak);
}
