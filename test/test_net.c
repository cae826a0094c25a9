/* SPDX-License-Identifier: MIT */
/* The net: configuration defaults, placement in the arena, sizing. */
#include <string.h>

#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* KPN_COMPACT: what a channel handle check sees */
#include "support/helpers.h"

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

static unsigned char arena[64 * 1024];

void setUp(void) {}
void tearDown(void) {}

static void idle(void *arg) { (void)arg; }

/* Every default kpn.h states, over a struct that held something else. */
void test_config_defaults(void)
{
    kpn_config cfg;

    memset(&cfg, 0xa5, sizeof cfg);
    kpn_config_default(&cfg);
    TEST_ASSERT_EQUAL_size_t(8, cfg.default_capacity);
    TEST_ASSERT_EQUAL_size_t(KPN_RESERVE_ARENA, cfg.reserve_size);
    TEST_ASSERT_EQUAL_INT(1, cfg.resolve);
    TEST_ASSERT_EQUAL_INT(0, cfg.strict);
    TEST_ASSERT_EQUAL_UINT(1, cfg.runners);
    TEST_ASSERT_EQUAL_INT(KPN_POLICY_WS, cfg.policy);
    TEST_ASSERT_EQUAL_INT(KPN_WAKE_WAKER, cfg.wake);
    /* 64 KiB, or the port's minimum for a thread where that is more */
    TEST_ASSERT_GREATER_OR_EQUAL(64 * 1024, cfg.runner_stack);
    TEST_ASSERT_EQUAL_INT(0, cfg.guard_pages);
    TEST_ASSERT_EQUAL_UINT(65536, cfg.learn);
    TEST_ASSERT_EQUAL_UINT(1000, cfg.learn_grain_ns);
    TEST_ASSERT_EQUAL_UINT(0, cfg.cpus); /* the port's count */
    TEST_ASSERT_EQUAL_UINT(5000000, cfg.learn_trial_ns);
    TEST_ASSERT_EQUAL_INT(1, cfg.stack_fill);
    kpn_config_default(NULL); /* ignored, no crash */
}

void test_init_rejects_bad_arguments_and_leaves_out_untouched(void)
{
    kpn_net *net = (kpn_net *)(void *)arena; /* a recognisable non-NULL */
    kpn_config cfg;

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(NULL, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, NULL, sizeof arena, NULL));
    kpn_config_default(&cfg);
    cfg.default_capacity = 0;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_net_init(&net, arena, 0, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_net_init(&net, arena, 15, NULL));
    kpn_config_default(&cfg);
    cfg.reserve_size = sizeof arena;
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.reserve_size = (size_t)-1 / 2;
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.reserve_size = 10; /* too small to hold anything */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_PTR(arena, net);
}

/* The i-th config value kpn.h lists as out of range, in 'cfg'; 0 past
 * the last. */
static int spoil(kpn_config *cfg, unsigned i)
{
    kpn_config_default(cfg);
    switch (i) {
    case 0: cfg->default_capacity = 0; return 1;
    case 1: cfg->resolve = 2; return 1;
    case 2: cfg->strict = -1; return 1;
    case 3: cfg->guard_pages = 2; return 1;
    case 4: cfg->stack_fill = 2; return 1;
    case 5: cfg->reserve_size = 1; return 1;
    case 6: cfg->reserve_size = 63; return 1;
    case 7: cfg->reserve_size = (size_t)-1 - 15; return 1; /* above SIZE_MAX - 16 */
    case 8: cfg->runners = 0; return 1;
    case 9: cfg->runners = KPN_MAX_RUNNERS + 1; return 1;
    case 10: cfg->policy = (kpn_policy)99; return 1;
    case 11: cfg->wake = (kpn_wake)99; return 1;
    case 12: cfg->runners = 2; cfg->runner_stack = 16; return 1;
    case 13: cfg->runners = 2; cfg->runner_stack = (size_t)-1 / KPN_MAX_RUNNERS; return 1;
    case 14: cfg->guard_pages = 1; return 1; /* at arena + 1: not page-aligned */
    default: return 0;
    }
}

/* Each is refused with the arena as it was: not a byte written, '*net'
 * untouched. */
#define FILL 0xa5
void test_init_refuses_each_bad_config_value_and_writes_nothing(void)
{
    kpn_net *net = (kpn_net *)(void *)arena;
    kpn_config cfg;
    unsigned i;
    size_t j;

    memset(arena, FILL, sizeof arena);
    for (i = 0; spoil(&cfg, i); ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena + 1, sizeof arena - 1, &cfg));
        TEST_ASSERT_EQUAL_PTR(arena, net);
        for (j = 0; j < sizeof arena; ++j)
            if (arena[j] != FILL)
                TEST_FAIL_MESSAGE("a refused init wrote to the arena");
    }
}

/* The smallest arena that holds a net is found by trying sizes; it must
 * be within the published bound, and one byte less must fail cleanly. */
void test_size_net_bounds_the_smallest_arena_at_every_alignment(void)
{
    size_t off;

    for (off = 0; off < 16; ++off) {
        kpn_net *net = NULL;
        size_t smallest = 0, n;
        for (n = 1; n <= kpn_size_net(NULL) && smallest == 0; ++n)
            if (kpn_net_init(&net, arena + off, n, NULL) == KPN_OK)
                smallest = n;
        TEST_ASSERT_GREATER_THAN(0, smallest);
        TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_net_init(&net, arena + off, smallest - 1, NULL));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net)); /* an empty net runs */
    }
}

void test_the_reserve_is_held_back_from_the_arena(void)
{
    kpn_net *net;
    kpn_config cfg;
    kpn_stats with, without;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &without));
    kpn_config_default(&cfg);
    cfg.reserve_size = 4096;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &with));
    TEST_ASSERT_EQUAL_size_t(without.arena_size, with.arena_size);
    TEST_ASSERT_LESS_OR_EQUAL(sizeof arena, with.arena_size);
    TEST_ASSERT_GREATER_THAN(sizeof arena - 32, with.arena_size);
    /* the reserve's bytes come out of what processes and channels get */
    TEST_ASSERT_EQUAL_size_t(0, without.reserve_size);
    TEST_ASSERT_EQUAL_size_t(4096, with.reserve_size);
    TEST_ASSERT_EQUAL_size_t(without.arena_free - 4096, with.arena_free);
}

void test_a_handle_that_is_not_a_net_is_refused(void)
{
    static unsigned char junk[4096];
    kpn_net *fake = (kpn_net *)(void *)junk;
    kpn_proc *p = kt_unwritten();
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(fake, &p, "p", idle, NULL, KPN_STACK_MIN));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_run(fake));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(fake, &st));
    TEST_ASSERT_NULL(kpn_proc_next(fake, NULL));
    TEST_ASSERT_NULL(kpn_net_fault(fake));
    TEST_ASSERT_NULL(kpn_net_fault(NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_release(fake));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_release(NULL));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), p);
}

/* kpn_net_release: refused while the net runs, which goes on untouched;
 * once released, the net is stale to every call, release included. */
static kpn_net *releasing;
static kpn_chan *release_chan;
static kpn_status release_inside;
static int release_total;

static void tries_release(void *arg)
{
    int i;
    (void)arg;
    release_inside = kpn_net_release(releasing);
    for (i = 1; i <= 5; ++i)
        kpn_send(release_chan, &i);
}

static void sums(void *arg)
{
    int v;
    (void)arg;
    while (kpn_recv(release_chan, &v) == KPN_OK)
        release_total += v;
}

void test_release_is_refused_while_running_and_once_released(void)
{
    static const unsigned counts[] = {1, 2};
    static unsigned char space[1 << 20]; /* room for a runner's stack */
    kpn_config cfg;
    kpn_proc *a, *b;
    kpn_stats st;
    char text[64];
    size_t i;

    for (i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
        kpn_config_default(&cfg);
        cfg.runners = counts[i];
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&releasing, space, sizeof space, &cfg));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(releasing, &a, "a", tries_release, NULL, 8192));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(releasing, &b, "b", sums, NULL, 8192));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(releasing, &release_chan, a, b, sizeof(int), 2));
        release_inside = KPN_OK;
        release_total = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(releasing));
        TEST_ASSERT_EQUAL_INT(KPN_ESTATE, release_inside);
        TEST_ASSERT_EQUAL_INT(15, release_total); /* the run went on, nothing lost */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(releasing, &st));
        TEST_ASSERT_EQUAL_size_t(2, st.procs);

        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(releasing));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_release(releasing));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(releasing, &st));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_run(releasing));
        text[0] = 'x';
        TEST_ASSERT_EQUAL_size_t(0, kpn_report(releasing, text, sizeof text));
        TEST_ASSERT_EQUAL_INT('\0', text[0]);
    }
}

/* kpn_net_release makes the net's handles stale (kpn.h): every call that
 * would build on it, place it or pin its processes is refused with
 * KPN_EINVAL and writes nothing. */
void test_a_released_net_refuses_every_call_that_builds_on_it(void)
{
    static unsigned char reserve[4096];
    kpn_net *net = NULL;
    kpn_proc *a = NULL, *p = NULL;
    unsigned home[2] = {99, 99};

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", idle, NULL, KPN_STACK_MIN));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(net, &p, "p", idle, NULL, KPN_STACK_MIN));
    TEST_ASSERT_NULL(p);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, reserve, sizeof reserve));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(net, 1, home, 2));
    TEST_ASSERT_EQUAL_UINT(99, home[0]);
    TEST_ASSERT_EQUAL_UINT(99, home[1]);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(a, 0));
    TEST_ASSERT_NULL(kpn_proc_next(net, NULL));
    TEST_ASSERT_NULL(kpn_net_fault(net));
}

/* kpn.h: a released net's handles are stale, its channels' too.  From the
 * host a live channel's send and receive are refused as not the caller's
 * (KPN_EPERM); a stale one is refused before the caller is looked at. */
void test_a_released_nets_channels_are_stale(void)
{
    kpn_net *net = NULL;
    kpn_proc *a = NULL;
    kpn_chan *c = NULL;
    int v = 1;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", idle, NULL, KPN_STACK_MIN));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, a, a, sizeof v, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_send(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_recv(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout checks a channel by its tag alone, which c keeps");

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_send(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_recv(c, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_send_sized(c, &v, sizeof v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_recv_sized(c, &v, sizeof v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_close(c));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_capacity(c));
    TEST_ASSERT_EQUAL_INT(1, v);
}

/* Two nets in two arenas share nothing. */
static kpn_chan *chan_of[2];
static int total_of[2];

static void pair_source(void *arg)
{
    int which = *(int *)arg, i;
    for (i = 1; i <= 10; ++i) {
        int v = i * (which + 1);
        kpn_send(chan_of[which], &v);
    }
}

static void pair_sink(void *arg)
{
    int which = *(int *)arg, v;
    total_of[which] = 0;
    while (kpn_recv(chan_of[which], &v) == KPN_OK)
        total_of[which] += v;
}

void test_two_nets_are_independent(void)
{
    static unsigned char second[64 * 1024];
    static int ids[2] = {0, 1};
    kpn_net *n[2];
    int i;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&n[0], arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&n[1], second, sizeof second, NULL));
    for (i = 0; i < 2; ++i) {
        kpn_proc *s, *k;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(n[i], &s, "src", pair_source, &ids[i], 8192));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(n[i], &k, "sink", pair_sink, &ids[i], 8192));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(n[i], &chan_of[i], s, k, sizeof(int), 2));
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(n[1]));
    TEST_ASSERT_EQUAL_INT(110, total_of[1]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(n[0]));
    TEST_ASSERT_EQUAL_INT(55, total_of[0]);
}

/* kpn.h: runners go from 1 to KPN_MAX_RUNNERS.  The most is a
 * configuration kpn_size_net sizes and kpn_net_init takes; one more is
 * refused by both. */
void test_the_most_runners_are_taken_and_one_more_refused(void)
{
    static unsigned char big[16u << 20]; /* 32 runner stacks of 128 KiB under TSan */
    kpn_config cfg;
    kpn_net *net = NULL;
    size_t need;

    kpn_config_default(&cfg);
    cfg.runners = KPN_MAX_RUNNERS;
    need = kpn_size_net(&cfg);
    TEST_ASSERT_NOT_EQUAL(0, need);
    TEST_ASSERT_LESS_OR_EQUAL(sizeof big, need);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, big, sizeof big, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
    cfg.runners = KPN_MAX_RUNNERS + 1;
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_net(&cfg));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, big, sizeof big, &cfg));
}
