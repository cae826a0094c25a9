/* SPDX-License-Identifier: MIT */
/* Failure paths swept: every arena size from too small to enough, every reserve size. */
#include "unity.h"
#include "kpn.h"
#include "support/helpers.h"
#include "support/bursts.h"
#include "support/memcheckers.h"

TEST_SOURCE_FILE("bench/randnet.c")
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

/*
 * Like SQLite's and Lua's allocation tests: the library's only allocator
 * is the arena, so shrinking the arena byte by byte (16 at a time: every
 * carve is 16-aligned, so no allocation point is skipped) fails each
 * allocation in turn.  The arena sits between guard bytes and starts
 * filled with a pattern: nothing may be written outside it, and nothing
 * may rely on fresh memory being zero.
 */
#define GUARD 64
#define ARENA_MAX (256 * 1024)
#define STACK 4096
static unsigned char mem[GUARD + ARENA_MAX + GUARD];
static unsigned char *const arena = mem + GUARD;

void setUp(void) {}
void tearDown(void) {}

static void prepare(size_t size)
{
    size_t i;

#ifdef KPN_VALGRIND
    /* memcheck calls the stacks of earlier nets inaccessible */
    (void)VALGRIND_MAKE_MEM_UNDEFINED(mem, sizeof mem);
#endif
    for (i = 0; i < GUARD; ++i)
        mem[i] = (unsigned char)(0xc3 ^ i);
    for (i = 0; i < size; ++i)
        arena[i] = 0xee;
    for (i = 0; i < GUARD; ++i)
        arena[size + i] = (unsigned char)(0x3c ^ i);
}

static int guards_intact(size_t size)
{
    size_t i;
    for (i = 0; i < GUARD; ++i)
        if (mem[i] != (unsigned char)(0xc3 ^ i) || arena[size + i] != (unsigned char)(0x3c ^ i))
            return 0;
    return 1;
}

/* A build step failed for want of memory: the net must be as it was
 * before the step, and a request that still fits must still work. */
static void check_after_enomem(kpn_net *net, const kpn_stats *before, kpn_proc *any)
{
    kpn_stats after;
    kpn_chan *c = NULL;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before->arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(before->procs, after.procs);
    TEST_ASSERT_EQUAL_size_t(before->chans, after.chans);
    TEST_ASSERT_EQUAL_size_t(before->arena_free, after.arena_free);
    if (any != NULL && after.arena_free >= kpn_size_chan(1, 1))
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, any, any, 1, 1));
}

/* ------------------------------------------------------------ networks */

/* The two-source o = 2*i1 + i2 network, as in test_sched.c. */
#define N21 40
static kpn_chan *ch21[4];
static int out21[N21 + 1], n21;

static int sample(int seed, int k) { return (seed * 7919 + k * 104729) % 1000 - 500; }

static void src21(void *arg)
{
    int which = *(int *)arg, k;
    for (k = 0; k < N21; ++k) {
        int v = sample(which + 1, k);
        kpn_send(ch21[which], &v);
    }
}

static void times2(void *arg)
{
    int v;
    (void)arg;
    while (kpn_recv(ch21[0], &v) == KPN_OK) {
        v *= 2;
        kpn_send(ch21[2], &v);
    }
}

static void adder(void *arg)
{
    int a, b;
    (void)arg;
    while (kpn_recv(ch21[2], &a) == KPN_OK && kpn_recv(ch21[1], &b) == KPN_OK) {
        int o = a + b;
        kpn_send(ch21[3], &o);
    }
}

static void sink21(void *arg)
{
    int v;
    (void)arg;
    while (n21 <= N21 && kpn_recv(ch21[3], &v) == KPN_OK)
        out21[n21++] = v;
}

/* Builds step by step; on ENOMEM checks the net and returns it. */
static kpn_status build_21(kpn_net *net)
{
    static int ids[2] = {0, 1};
    static void (*const fns[5])(void *) = {src21, src21, times2, adder, sink21};
    static void *const args[5] = {&ids[0], &ids[1], NULL, NULL, NULL};
    static const int ends[4][2] = {{0, 2}, {1, 3}, {2, 3}, {3, 4}};
    kpn_proc *p[5] = {NULL};
    kpn_stats before;
    kpn_status s;
    int i;

    for (i = 0; i < 5; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
        if ((s = kpn_spawn(net, &p[i], "p", fns[i], args[i], STACK)) != KPN_OK) {
            TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, s);
            check_after_enomem(net, &before, p[0]);
            return s;
        }
    }
    for (i = 0; i < 4; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
        if ((s = kpn_connect(net, &ch21[i], p[ends[i][0]], p[ends[i][1]], sizeof(int), 2)) != KPN_OK) {
            TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, s);
            check_after_enomem(net, &before, p[0]);
            return s;
        }
    }
    return KPN_OK;
}

static void check_21(void)
{
    int k;
    TEST_ASSERT_EQUAL_INT(N21, n21);
    for (k = 0; k < N21; ++k)
        TEST_ASSERT_EQUAL_INT(2 * sample(1, k) + sample(2, k), out21[k]);
}

/* ------------------------------------------------------------ the sweeps */

/* Every arena size from nothing to enough: ENOMEM, with everything as it
 * was, or a net that runs to the right output; never a byte outside. */
static void sweep_arena(const kpn_config *cfg, kpn_status (*build)(kpn_net *),
                        void (*reset)(void), void (*check)(void))
{
    size_t size, ok_from = 0;
    int init_failures = 0, build_failures = 0, successes = 0;

    for (size = 0; size <= ARENA_MAX && successes < 3; size += 16) {
        kpn_net *net = NULL;
        kpn_status s;

        prepare(size);
        s = kpn_net_init(&net, arena, size, cfg);
        init_failures += s == KPN_ENOMEM;
        if (s == KPN_OK) {
            reset();
            s = build(net);
            build_failures += s == KPN_ENOMEM;
            if (s == KPN_OK) {
                TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
                check();
                if (ok_from == 0)
                    ok_from = size;
                successes++;
            }
        }
        TEST_ASSERT_TRUE(s == KPN_OK || s == KPN_ENOMEM);
        TEST_ASSERT_TRUE(guards_intact(size));
    }
    /* The sweep went from failing to working: through the net's own
     * carve, then through the build's.  Every carve takes at least the
     * step, so each is the first to fail at some size in between. */
    TEST_ASSERT_GREATER_THAN(0, (long)ok_from);
    TEST_ASSERT_GREATER_THAN(0, init_failures);
    TEST_ASSERT_GREATER_THAN(0, build_failures);
}

static void reset_21(void) { n21 = 0; }

void test_every_arena_size_builds_the_2i1_plus_i2_net_or_fails_cleanly(void)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    sweep_arena(&cfg, build_21, reset_21, check_21);
}

void test_every_arena_size_works_with_two_runners_too(void)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    cfg.runners = 2;
    sweep_arena(&cfg, build_21, reset_21, check_21);
}

/* A random cyclic network: many spawns and connects, so many allocation
 * points, and a resolver that needs its reserve. */
static rn_net rnet;
static rn_run rrun;
static uint32_t rref[RN_MAX_PROCS];

/* rn_build's steps one at a time, each checked as build_21's are. */
static kpn_status build_rn(kpn_net *net)
{
    kpn_proc *procs[RN_MAX_PROCS] = {NULL};
    kpn_stats before;
    kpn_status s = KPN_OK;
    int i;

    rrun.net = &rnet;
    rn_current = &rrun;
    for (i = 0; i < rnet.nprocs && s == KPN_OK; ++i) {
        rrun.index[i] = i;
        rrun.hash[i] = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
        s = kpn_spawn(net, &procs[i], "rn", rn_process, &rrun.index[i], STACK);
    }
    for (i = 0; i < rnet.nchans && s == KPN_OK; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
        s = kpn_connect(net, &rrun.chan[i], procs[rnet.from[i]], procs[rnet.to[i]],
                        sizeof(uint32_t), 2);
    }
    if (s != KPN_OK) {
        TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, s);
        check_after_enomem(net, &before, procs[0]);
    }
    return s;
}

static void reset_rn(void) {}

static void check_rn(void)
{
    int i;
    for (i = 0; i < rnet.nprocs; ++i)
        TEST_ASSERT_EQUAL_HEX32(rref[i], rrun.hash[i]);
}

void test_every_arena_size_builds_a_random_cyclic_net_or_fails_cleanly(void)
{
    kpn_config cfg;

    rn_generate(&rnet, 7, 6);
    rn_simulate(&rnet, rref);
    kpn_config_default(&cfg);
    cfg.reserve_size = 16 * 1024;
    sweep_arena(&cfg, build_rn, reset_rn, check_rn);
}

/* Every reserve size from none up: the run ends KPN_OK with the right
 * output, or KPN_ERESERVE with nothing lost, and after kpn_reserve_add
 * the same run completes with the right output. */
void test_every_reserve_size_completes_or_stops_cleanly_and_resumes(void)
{
    static unsigned char extra[64 * 1024];
    size_t reserve;
    int exhausted = 0, enough = 0;

    rn_generate(&rnet, 11, 8);
    rn_simulate(&rnet, rref);
    for (reserve = 0; reserve <= 4096; reserve += reserve == 0 ? 64 : 16) {
        kpn_config cfg;
        kpn_net *net;
        kpn_status s;

        kpn_config_default(&cfg);
        cfg.reserve_size = reserve;
        prepare(ARENA_MAX);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, ARENA_MAX, &cfg));
        TEST_ASSERT_EQUAL_INT(KPN_OK, rn_build(net, &rnet, &rrun, 1, STACK));
        s = kpn_run(net);
        TEST_ASSERT_TRUE(s == KPN_OK || s == KPN_ERESERVE);
        if (s == KPN_ERESERVE) {
            exhausted++;
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, sizeof extra));
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        } else {
            enough++;
        }
        check_rn();
        TEST_ASSERT_TRUE(guards_intact(ARENA_MAX));
    }
    /* the sweep crossed from too little to enough */
    TEST_ASSERT_GREATER_THAN(0, exhausted);
    TEST_ASSERT_GREATER_THAN(0, enough);
}

/* ------------------------------------------------------------ overflow */
/* A process that recurses past its stack is stopped; the processes on
 * either side of it in the arena, and the bytes around the arena, are as
 * they were: the guard band took the overrun. */
static kpn_proc *culprit;
static kpn_chan *never;

static void sits(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(never, &v);
}

static void overruns(void *arg)
{
    kpn_proc_stats ps;
    int v;
    (void)arg;
    kpn_proc_stats_get(culprit, &ps);
    kt_recurse((const unsigned char *)ps.stack_base - 32, 0);
    kpn_recv(never, &v);
}

void test_an_overflow_leaves_its_neighbours_and_the_arena_bounds_intact(void)
{
    kpn_net *net;
    kpn_proc *before, *after;
    kpn_proc_stats b0, a0, b1, a1;
    char report[2048];

    prepare(ARENA_MAX);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, ARENA_MAX, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &before, "before", sits, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &culprit, "culprit", overruns, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &after, "after", sits, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &never, after, before, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(before, &b0));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(after, &a0));

    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(culprit, kpn_net_fault(net));
    kpn_report(net, report, sizeof report);
    TEST_ASSERT_TRUE(kt_contains(report, "stack overflow: process \"culprit\""));

    /* the neighbours: same names, sensible states, stacks used only by
     * themselves (a shallow wait), guard bands whole */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(before, &b1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(after, &a1));
    TEST_ASSERT_EQUAL_STRING("before", b1.name);
    TEST_ASSERT_EQUAL_STRING("after", a1.name);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, b1.state);
    TEST_ASSERT_LESS_THAN(STACK / 2, b1.stack_peak);
    TEST_ASSERT_LESS_THAN(STACK / 2, a1.stack_peak);
    TEST_ASSERT_LESS_THAN(256, b0.stack_peak); /* only the port's start-up frame */
    TEST_ASSERT_TRUE(guards_intact(ARENA_MAX));
}
