/* SPDX-License-Identifier: MIT */
/* Processes: spawning, names, stacks (high-water mark, overflow), inspection. */
#include <string.h>

#include "unity.h"
#include "kpn.h"
#include "kpn_int.h" /* KPN_COMPACT: the layout, and what a handle check sees */
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
static unsigned char arena[1 << 20];
static kpn_net *net;

void setUp(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
}

void tearDown(void) {}

static void idle(void *arg) { (void)arg; }

void test_spawn_rejects_bad_arguments(void)
{
    kpn_proc *p = kt_unwritten();
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(NULL, &p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(net, NULL, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(net, &p, "p", NULL, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(net, &p, "p", idle, NULL, KPN_STACK_MIN - 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(net, &p, "p", idle, NULL, 0));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), p);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(0, st.procs);
    /* the minimum itself is accepted and runs */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, KPN_STACK_MIN));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

void test_spawn_enomem_leaves_the_net_unchanged_and_usable(void)
{
    kpn_proc *p = NULL;
    kpn_stats before, after;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "first", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    p = kt_unwritten();
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_spawn(net, &p, "big", idle, NULL, sizeof arena));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_spawn(net, &p, "huge", idle, NULL, (size_t)-1));
    /* one whose end lies past the end of the address space: where the
     * record would land is worked out before the size is refused */
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_spawn(net, &p, "past", idle, NULL, (size_t)-1 - 4096));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), p);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.procs, after.procs);
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "small", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(2, after.procs_exited);
}

void test_size_proc_is_enough_at_every_arena_alignment(void)
{
    static unsigned char exact[64 * 1024];
    size_t need = kpn_size_net(NULL) + 3 * kpn_size_proc(STACK, 5);
    size_t off;

    TEST_ASSERT_LESS_OR_EQUAL(sizeof exact - 16, need);
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_proc((size_t)-1, 1)); /* no such size */
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_proc(STACK, (size_t)-1));
    for (off = 0; off < 16; ++off) {
        kpn_proc *p;
        int i;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, exact + off, need, NULL));
        for (i = 0; i < 3; ++i)
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "abcde", idle, NULL, STACK));
    }
}

static kpn_status nested_spawn;
static void spawns_while_running(void *arg)
{
    kpn_proc *p = NULL;
    (void)arg;
    nested_spawn = kpn_spawn(net, &p, "late", idle, NULL, STACK);
}

/* A net of one runner built in a loop, a process and then the channel
 * into it from the one before, as bench/ring builds its ring, lays its
 * processes the same odd number of cache lines apart, whatever the
 * stack size: a stride the core's prefetchers can follow, and never one
 * that puts every process's hot lines on the same cache sets (proc.c,
 * block_size). */
void test_a_one_runner_net_built_in_a_loop_lays_its_processes_an_odd_number_of_lines_apart(void)
{
    static unsigned char loop[256 * 1024];
    size_t stack;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout does not round its channels to lines");
    for (stack = KPN_STACK_MIN; stack <= KPN_STACK_MIN + 4096; stack += 48) {
        kpn_proc *p, *prev = NULL;
        kpn_chan *c;
        long stride = 0;
        int i;

        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, loop, sizeof loop, NULL));
        for (i = 0; i < 6; ++i) {
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "ring", idle, NULL, stack));
            if (prev != NULL) {
                long d = (long)((const unsigned char *)p - (const unsigned char *)prev);

                TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, prev, p, sizeof(int), 1));
                TEST_ASSERT_EQUAL_INT_MESSAGE(0, d % 64, "a whole number of lines apart");
                TEST_ASSERT_EQUAL_INT_MESSAGE(1, (d / 64) % 2, "an odd number of lines apart");
                /* the first process has no channel before it */
                if (i >= 3)
                    TEST_ASSERT_EQUAL_INT_MESSAGE(stride, d, "the same stride each time");
                stride = d;
            }
            prev = p;
        }
    }
}

void test_spawn_while_running_is_refused(void)
{
    kpn_proc *p;
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "early", spawns_while_running, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, nested_spawn);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(1, st.procs);
}

void test_spawn_between_runs_adds_to_the_net(void)
{
    kpn_proc *p;
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "one", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "two", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2, st.procs_exited);
}

void test_names_are_copied_and_null_means_empty(void)
{
    char name[8] = "worker";
    kpn_proc *a, *b;
    kpn_proc_stats ps;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, name, idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, NULL, idle, NULL, STACK));
    name[0] = 'X';
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(a, &ps));
    TEST_ASSERT_EQUAL_STRING("worker", ps.name);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(b, &ps));
    TEST_ASSERT_EQUAL_STRING("", ps.name);
}

void test_proc_next_walks_processes_in_spawn_order(void)
{
    kpn_proc *p[3];
    const kpn_proc *it;
    int i;

    for (i = 0; i < 3; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p[i], "p", idle, NULL, STACK));
    it = kpn_proc_next(net, NULL);
    for (i = 0; i < 3; ++i) {
        TEST_ASSERT_EQUAL_PTR(p[i], it);
        it = kpn_proc_next(net, it);
    }
    TEST_ASSERT_NULL(it);
    TEST_ASSERT_NULL(kpn_proc_next(NULL, NULL));
    {
        /* a process of another net is not a place to continue from: the
         * first of two, so that following it would find the second */
        static unsigned char other_arena[64 * 1024];
        kpn_net *other;
        kpn_proc *stranger[2];
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&other, other_arena, sizeof other_arena, NULL));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(other, &stranger[0], "s", idle, NULL, STACK));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(other, &stranger[1], "t", idle, NULL, STACK));
        TEST_ASSERT_EQUAL_PTR(stranger[1], kpn_proc_next(other, stranger[0]));
        TEST_ASSERT_NULL(kpn_proc_next(net, stranger[0]));
    }
}

void test_proc_stats_rejects_null(void)
{
    kpn_proc *p;
    kpn_proc_stats ps;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(NULL, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(p, NULL));
}

/* kpn.h: a call that fails writes no out-parameter.  A refused
 * kpn_proc_stats_get (NULL, a process of a net the arena no longer
 * holds) leaves 'out' as the caller had it. */
void test_a_refused_proc_stats_call_writes_nothing(void)
{
    kpn_proc *p;
    kpn_proc_stats ps, pattern;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    memset(&pattern, 0xA5, sizeof pattern);
    memcpy(&ps, &pattern, sizeof ps);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(NULL, &ps));
    TEST_ASSERT_EQUAL_MEMORY(&pattern, &ps, sizeof ps);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(p, &ps));
    TEST_ASSERT_EQUAL_MEMORY(&pattern, &ps, sizeof ps);
}

/* ------------------------------------------------------------ states */

static kpn_chan *state_chan;
static void blocks_reading(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(state_chan, &v);
}

void test_states_follow_the_life_of_a_process(void)
{
    kpn_proc *r, *w;
    kpn_proc_stats ps;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "r", blocks_reading, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", blocks_reading, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &state_chan, w, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(r, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, ps.state);
    TEST_ASSERT_EQUAL_UINT64(0, ps.switches);
    /* 'w' is the writer of state_chan, so its recv is refused and it
     * exits; that closes the channel and 'r' gets EOF and exits too. */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(r, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_EXITED, ps.state);
    TEST_ASSERT_NULL(ps.waiting_on);
    /* r ran, blocked on the empty channel, and was woken by the close */
    TEST_ASSERT_EQUAL_UINT64(2, ps.switches);
}

static void reads_arg_channel(void *arg)
{
    int v;
    kpn_recv(*(kpn_chan **)arg, &v);
}

void test_a_reader_left_waiting_reports_its_channel(void)
{
    static kpn_chan *r_in, *w_in;
    kpn_proc *r, *w;
    kpn_proc_stats ps;

    /* r waits on w, and w on r: both stay blocked reading. */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "r", reads_arg_channel, &r_in, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", reads_arg_channel, &w_in, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &r_in, w, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &w_in, r, w, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(r, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, ps.state);
    TEST_ASSERT_EQUAL_PTR(r_in, ps.waiting_on);
    TEST_ASSERT_EQUAL_UINT64(1, ps.switches);
}

/* ------------------------------------------------------------ stacks */

static void uses_3000_bytes(void *arg)
{
    volatile unsigned char buf[3000];
    size_t i;
    for (i = 0; i < sizeof buf; ++i)
        buf[i] = (unsigned char)i;
    *(int *)arg = buf[2999];
}

void test_stack_high_water_mark_tracks_use(void)
{
    kpn_proc *heavy, *light;
    kpn_proc_stats hs, ls;
    int sink = 0;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &heavy, "heavy", uses_3000_bytes, &sink, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &light, "light", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(heavy, &hs));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(light, &ls));
    TEST_ASSERT_EQUAL_size_t(STACK, hs.stack_size);
    TEST_ASSERT_GREATER_OR_EQUAL(3000, hs.stack_peak);
    TEST_ASSERT_LESS_OR_EQUAL(STACK, hs.stack_peak);
    TEST_ASSERT_GREATER_THAN(0, ls.stack_peak);
    TEST_ASSERT_LESS_THAN(3000, ls.stack_peak);
}

/* The mark is exact to the byte: one byte changed at each of these depths
 * from the stack's low end, in a process that has not run (its start-up
 * frame lies at the top), makes the peak everything above it, whether
 * the byte starts a word, ends one or lies inside. */
void test_stack_high_water_mark_is_exact_to_the_byte(void)
{
    static const size_t at[] = {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 1001, 2048};
    kpn_proc *p;
    kpn_proc_stats ps;
    unsigned char *lo;
    size_t k, top;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(p, &ps));
    top = ps.stack_peak; /* the start-up frame alone */
    TEST_ASSERT_GREATER_THAN(0, top);
    TEST_ASSERT_LESS_THAN(256, top);
    lo = (unsigned char *)(uintptr_t)ps.stack_base;
    for (k = 0; k < sizeof at / sizeof at[0]; ++k) {
        TEST_ASSERT_EQUAL_HEX8(0xa5, lo[at[k]]); /* the fill */
        lo[at[k]] = 0xa4;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(p, &ps));
        TEST_ASSERT_EQUAL_size_t(ps.stack_size - at[k], ps.stack_peak);
        lo[at[k]] = 0xa5;
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(p, &ps));
    TEST_ASSERT_EQUAL_size_t(top, ps.stack_peak);
}

/* The fill reaches every byte below the start-up frame whatever the
 * stack's size, sizes that are not a whole number of lines among them.
 * Over an arena of other bytes, stacks of these sizes each report the
 * start-up frame alone as their peak, and hold the fill to their low
 * end. */
void test_the_fill_reaches_every_byte_of_stacks_of_any_size(void)
{
    static const size_t sizes[] = {KPN_STACK_MIN,      KPN_STACK_MIN + 16, KPN_STACK_MIN + 48,
                                   KPN_STACK_MIN + 80, 4096 + 16,          4096 + 48,
                                   STACK};
    kpn_proc *p;
    kpn_proc_stats ps;
    const unsigned char *lo;
    size_t k, i, top = 0;

    memset(arena, 0x33, sizeof arena);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, sizes[k]));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(p, &ps));
        if (k == 0)
            top = ps.stack_peak;
        TEST_ASSERT_GREATER_THAN(0, top);
        TEST_ASSERT_EQUAL_size_t(top, ps.stack_peak);
        lo = (const unsigned char *)(uintptr_t)ps.stack_base;
        for (i = 0; i < ps.stack_size - ps.stack_peak; ++i)
            if (lo[i] != 0xa5)
                TEST_FAIL_MESSAGE("a byte below the start-up frame does not hold the fill");
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

/* With cfg.stack_fill 0 kpn_spawn leaves the stack's bytes as they were:
 * the process runs all the same, and no peak is reported. */
void test_without_stack_fill_a_stack_keeps_its_bytes_and_reports_no_peak(void)
{
    kpn_config cfg;
    kpn_proc *heavy;
    kpn_proc_stats hs;
    const unsigned char *lo;
    int sink = 0;
    size_t i, kept = 0;

    kpn_config_default(&cfg);
    TEST_ASSERT_EQUAL_INT(1, cfg.stack_fill);
    cfg.stack_fill = 0;
    memset(arena, 0x3c, sizeof arena);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &heavy, "heavy", uses_3000_bytes, &sink, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(heavy, &hs));
    lo = hs.stack_base;
    for (i = 0; i < STACK - 256; ++i) /* the top holds the start-up frame */
        kept += lo[i] == 0x3c;
    TEST_ASSERT_EQUAL_size_t(STACK - 256, kept);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(2999 & 0xff, sink);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(heavy, &hs));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_EXITED, hs.state);
    TEST_ASSERT_EQUAL_size_t(0, hs.stack_peak);
}

/* An unfilled stack may hold a record of the net the arena held before,
 * untouched: its serial still refuses it. */
void test_a_record_left_in_an_unfilled_stack_is_refused(void)
{
    enum { N = 8, SMALL = 4096 };
    static unsigned char before[sizeof arena];
    kpn_config cfg;
    kpn_proc *old[N], *big;
    kpn_proc_stats st;
    size_t from, to;
    int i;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout has no serial to refuse it by");
    for (i = 0; i < N; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &old[i], "old", idle, NULL, SMALL));
    memcpy(before, arena, sizeof arena);
    kpn_config_default(&cfg);
    cfg.stack_fill = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &big, "big", idle, NULL, 8 * STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(big, &st));
    from = (size_t)((const unsigned char *)st.stack_base - arena);
    to = from + st.stack_size - 256;
    for (i = 0; i < N; ++i) {
        size_t at = (size_t)((unsigned char *)old[i] - arena);
        TEST_ASSERT_TRUE(at > from && at + 256 < to);
        /* the old record is still there, byte for byte */
        TEST_ASSERT_EQUAL_MEMORY(before + at, arena + at, 128);
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(old[i], &st));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(old[i], 0));
    }
}

/* Recurse, writing every frame, until a frame lies below the stack's
 * lowest usable byte: that is an overflow into the guard band. */
static kpn_proc *deep_proc;
static kpn_chan *to_deep, *from_deep;
static int deep_reached;

/* The check runs when a process gives up the CPU, so after overflowing,
 * this one blocks on a read that nothing will satisfy. */
static void overflows(void *arg)
{
    kpn_proc_stats ps;
    int v;
    (void)arg;
    kpn_proc_stats_get(deep_proc, &ps);
    deep_reached = kt_recurse((const unsigned char *)ps.stack_base - 16, 0);
    kpn_recv(to_deep, &v);
    deep_reached = -1; /* never gets here */
}

static int bystander_ran;
static void bystander(void *arg)
{
    int v;
    (void)arg;
    bystander_ran = 1;
    kpn_recv(from_deep, &v);
    bystander_ran = 2;
}

void test_a_stack_overflow_stops_the_run_and_names_the_process(void)
{
    static unsigned char more[4096];
    kpn_proc *other;
    kpn_chan *late = NULL;
    kpn_proc_stats ps;
    kpn_stats before, after;

    bystander_ran = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &other, "bystander", bystander, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &deep_proc, "deep", overflows, NULL, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &from_deep, deep_proc, other, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &to_deep, other, deep_proc, sizeof(int), 1));
    TEST_ASSERT_NULL(kpn_net_fault(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(deep_proc, kpn_net_fault(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(deep_proc, &ps));
    TEST_ASSERT_EQUAL_STRING("deep", ps.name);
    TEST_ASSERT_EQUAL_INT(KPN_PROC_FAULTED, ps.state);
    TEST_ASSERT_GREATER_THAN(0, deep_reached);
    /* the bystander is where it was: blocked on its read */
    TEST_ASSERT_EQUAL_INT(1, bystander_ran);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(other, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, ps.state);
    /* a faulted net stays stopped */
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_spawn(net, &other, "late", idle, NULL, STACK));
    /* nor does its pool take memory, nor it a channel: the net's own
     * fields are suspect */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_reserve_add(net, more, sizeof more));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect(net, &late, other, deep_proc, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect_input(net, &late, other, sizeof(int), 1));
    TEST_ASSERT_NULL(late);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.reserve_size, after.reserve_size);
    TEST_ASSERT_EQUAL_size_t(before.chans, after.chans);
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
}

/* A frame with a gap can write the guard band without touching the words
 * checked at each switch.  The band of a process that returns is checked
 * whole as it exits: the run stops there, as at a switch that finds the
 * nearest words written, and what was queued behind it does not start. */
static kpn_proc *gap_proc;
static void writes_deep_in_the_guard(void *arg)
{
    kpn_proc_stats ps;
    (void)arg;
    kpn_proc_stats_get(gap_proc, &ps);
    ((volatile unsigned char *)ps.stack_base)[-100] = 0;
}

static int later_ran;
static void later(void *arg)
{
    (void)arg;
    later_ran = 1;
}

void test_an_overflow_that_skips_the_checked_words_is_caught_as_the_process_returns(void)
{
    kpn_proc *after;
    kpn_proc_stats ps;

    later_ran = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &gap_proc, "gap", writes_deep_in_the_guard,
                                            NULL, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &after, "later", later, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(gap_proc, kpn_net_fault(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(gap_proc, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_FAULTED, ps.state);
    TEST_ASSERT_EQUAL_INT(0, later_ran);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(after, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_READY, ps.state);
}

/* One that writes deep in its band and then waits for ever is found by
 * the check of every band at the end of the run. */
static kpn_chan *gap_in, *gap_out;
static void writes_deep_then_waits(void *arg)
{
    int v;
    (void)arg;
    writes_deep_in_the_guard(NULL);
    kpn_recv(gap_in, &v);
}

static void waits_on_the_gap(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(gap_out, &v);
}

void test_an_overflow_that_skips_the_checked_words_and_waits_is_caught_at_the_end(void)
{
    kpn_proc *other;
    kpn_proc_stats ps;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &gap_proc, "gap", writes_deep_then_waits,
                                            NULL, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &other, "other", waits_on_the_gap, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &gap_in, other, gap_proc, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &gap_out, gap_proc, other, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(gap_proc, kpn_net_fault(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(other, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, ps.state);
}

/* An overflow whose frames jump the band whole lands on the record
 * carved just below it: a channel's or a process's.  The scan at the
 * end of the run finds the record damaged and names the process just
 * above it.  The overflowing process stands in for such frames by
 * writing over the record itself (the first 64 bytes, which every
 * record has). */
static void *damage_at;
static kpn_chan *damaged_chan;
static void writes_over_the_record_below(void *arg)
{
    (void)arg;
    memset(damage_at, 0xa5, 64);
}

static void reads_to_eof(void *arg)
{
    int v;
    (void)arg;
    while (kpn_recv(damaged_chan, &v) == KPN_OK)
        ;
}

void test_an_overflow_onto_the_channel_below_is_blamed_on_the_process_above_it(void)
{
    kpn_proc *w, *a, *b;
    kpn_proc_stats ps;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", reads_to_eof, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &damaged_chan, w, a, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "b", writes_over_the_record_below, NULL,
                                            STACK));
    damage_at = damaged_chan;
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(b, kpn_net_fault(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(b, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_FAULTED, ps.state);
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net)); /* it stays stopped */
}

void test_an_overflow_onto_the_process_below_is_blamed_on_the_process_above_it(void)
{
    kpn_proc *a, *b;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "b", writes_over_the_record_below, NULL,
                                            STACK));
    damage_at = a;
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(b, kpn_net_fault(net));
}
