/* SPDX-License-Identifier: MIT */
/* No input corrupts memory, no stale handle passes, no stack overflow goes unseen. */
/* support/child.h needs POSIX and XSI (fork, sigaltstack); asked before any header */
#define _XOPEN_SOURCE 700
#include "unity.h"
#include "kpn.h"
#include "support/helpers.h"
#include "support/child.h"
#include "kpn_int.h" /* a net's serial and carve, for the stale channel test */

TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/env.c")
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

/* An arena of 64 KiB (or up to 1 MiB) between two fences of pattern
 * bytes, page-aligned for guard pages. */
#define FENCE 4096
#define SPACE (1024 * 1024)
static unsigned char mem[FENCE + SPACE + FENCE + 4096];
static unsigned char *arena;
static char text[8192];

static unsigned char fence_byte(size_t i) { return (unsigned char)(0xc3 ^ (i * 13)); }

void setUp(void)
{
    size_t i;
    uintptr_t a = ((uintptr_t)mem + FENCE + 4095) & ~(uintptr_t)4095;

    arena = (unsigned char *)a;
    /* processes an earlier test left blocked keep their frames' redzones
     * poisoned under AddressSanitizer; kpn_net_init clears a whole arena */
    {
        kpn_net *n;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&n, mem, sizeof mem, NULL));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(n));
    }
    for (i = 0; i < sizeof mem; ++i)
        mem[i] = fence_byte(i);
}

void tearDown(void) {}

/* Every byte outside [arena, arena + size) still holds its pattern. */
static int outside_untouched(size_t size)
{
    size_t i;
    for (i = 0; i < sizeof mem; ++i)
        if ((&mem[i] < arena || &mem[i] >= arena + size) && mem[i] != fence_byte(i))
            return 0;
    return 1;
}

static void idle(void *arg) { (void)arg; }

/* ------------------------------------------------ defect 1: huge reserve */

static void huge_reserve(unsigned runners, size_t reserve, kpn_status expected)
{
    kpn_config cfg;
    kpn_net *net = kt_unwritten();

    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.reserve_size = reserve;
    /* 0 when the sum overflows; otherwise it counts the whole reserve */
    TEST_ASSERT_TRUE(kpn_size_net(&cfg) == 0 || kpn_size_net(&cfg) > reserve);
    if (reserve > (size_t)-1 - 32)
        TEST_ASSERT_EQUAL_size_t(0, kpn_size_net(&cfg));
    TEST_ASSERT_EQUAL_INT(expected, kpn_net_init(&net, arena, 64 * 1024, &cfg));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), net);
    TEST_ASSERT_TRUE(outside_untouched(0));
}

void test_a_reserve_size_near_size_max_is_enomem_and_writes_nothing(void)
{
    /* kpn.h: a reserve_size above SIZE_MAX - 16 (but KPN_RESERVE_ARENA) is
     * out of range; below that, one that no arena can hold is KPN_ENOMEM */
    huge_reserve(1, (size_t)-1 - 15, KPN_EINVAL);
    huge_reserve(2, (size_t)-1 - 15, KPN_EINVAL);
    huge_reserve(1, (size_t)-1 - 16, KPN_ENOMEM);
    huge_reserve(1, (size_t)-1 - 4096, KPN_ENOMEM);
    huge_reserve(2, (size_t)-1 - 4096, KPN_ENOMEM);
    huge_reserve(4, (size_t)-1 - 4096, KPN_ENOMEM);
}

/* ------------------------------------------------ defect 6: wrapping arena */

void test_an_arena_that_wraps_the_address_space_is_refused(void)
{
    kpn_net *net = kt_unwritten();

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, (size_t)-1, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL,
                          kpn_net_init(&net, arena, (size_t)-1 - (uintptr_t)arena + 1, NULL));
    TEST_ASSERT_EQUAL_PTR(kt_unwritten(), net);
    TEST_ASSERT_TRUE(outside_untouched(0));
}

/* ------------------------------------------------ defect 8: arena_size */

void test_arena_size_is_the_whole_aligned_arena_whatever_the_reserve(void)
{
    static const size_t reserves[] = {0, 64, 100, 112, 4095};
    size_t i;

    for (i = 0; i < sizeof reserves / sizeof reserves[0]; ++i) {
        kpn_config cfg;
        kpn_net *net;
        kpn_stats st;
        kpn_config_default(&cfg);
        cfg.reserve_size = reserves[i];
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, 64 * 1024, &cfg));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        /* the arena is page-aligned, so alignment takes nothing */
        TEST_ASSERT_EQUAL_size_t(64 * 1024, st.arena_size);
        TEST_ASSERT_EQUAL_size_t((reserves[i] + 15) / 16 * 16, st.reserve_size);
        TEST_ASSERT_EQUAL_size_t(st.arena_size, st.arena_used + st.arena_free + st.reserve_size);
    }
}

/* ------------------------------------------------ defects 2 and 5: reserve regions */

/* Two processes that each send three messages before reading, at
 * capacity 1: an artificial deadlock that needs a channel to grow. */
static kpn_chan *ab, *ba;
static int got_a, got_b;
static void sends_then_reads(void *arg)
{
    int *got = arg, v = 7, k;
    kpn_chan *out = got == &got_a ? ab : ba, *in = got == &got_a ? ba : ab;
    for (k = 0; k < 3; ++k)
        kpn_send(out, &v);
    for (k = 0; k < 3; ++k)
        if (kpn_recv(in, &v) == KPN_OK)
            (*got)++;
}

static kpn_net *growing_pair(unsigned runners)
{
    kpn_config cfg;
    kpn_net *net;
    kpn_proc *a, *b;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    got_a = got_b = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", sends_then_reads, &got_a, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "b", sends_then_reads, &got_b, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ab, a, b, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ba, b, a, sizeof(int), 1));
    return net;
}

static void region_twice(unsigned runners)
{
    static unsigned char extra[4096];
    kpn_net *net = growing_pair(runners);
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, 1024));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra, 1024));        /* the same */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra + 512, 1024));  /* overlaps */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra + 1008, 64));   /* its last 16 */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra + 1024, 1024));     /* adjacent */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2048 - 16 * ((uintptr_t)extra % 16 != 0), st.reserve_size);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(3, got_a);
    TEST_ASSERT_EQUAL_INT(3, got_b);
    /* a region lent to a channel's ring is refused too */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_THAN(0, st.resolutions);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra, 2048));
}

void test_a_reserve_region_given_twice_or_overlapping_is_refused(void)
{
    region_twice(1);
    region_twice(2);
    region_twice(4);
}

void test_a_reserve_of_64_bytes_at_an_odd_address_is_refused(void)
{
    static unsigned char extra[256];
    kpn_net *net;
    unsigned char *odd = extra + (16 - (uintptr_t)extra % 16) % 16 + 1; /* 1 past 16-aligned */

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, 64 * 1024, NULL));
    /* 64 bytes from 'odd' hold 48 aligned bytes; 79 hold 64 */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, odd, 64));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, odd, 78));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, odd, 79));
}

/* ------------------------------------------------ defect 3: stale handles */

static void stale(unsigned runners)
{
    kpn_config cfg;
    kpn_net *n1, *n2;
    kpn_proc *a, *b, *c, *d;
    kpn_chan *ch, *ch2;
    kpn_proc_stats ps;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&n1, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(n1, &a, "a", idle, NULL, 65536));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(n1, &b, "b", idle, NULL, 65536));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(n1, &ch, a, b, sizeof(int), 4));

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&n2, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_PTR(n1, n2); /* the same place: only the serial tells them apart */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(a, 0));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(a, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(n2, &ch2, a, b, sizeof(int), 4));
    TEST_ASSERT_NULL(kpn_proc_next(n2, NULL));
    TEST_ASSERT_NULL(kpn_proc_next(n2, a));
    if (!KPN_COMPACT) { /* the compact layout checks a channel by its tag alone, which ch keeps */
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_capacity(ch));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_send(ch, &runners));
    }

    /* a smaller stack: the new block lies over the old ones, not on them */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(n2, &c, "c", idle, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(n2, &d, "d", idle, NULL, 16384));
    TEST_ASSERT_TRUE(c != a && c != b && d != a && d != b);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(a, 0));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(b, 0));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(n2, &ch2, a, b, sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(n2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(c, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_EXITED, ps.state);

    /* after kpn_net_release, the released net's handles are stale too */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(n2));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(c, 0));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_run(n2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&n1, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(c, 0));
}

void test_handles_of_a_discarded_net_are_refused(void)
{
    stale(1);
    stale(2);
    stale(4);
}

/* A handle a few bytes off a record: refused before any field of it is
 * read (a misaligned read is undefined; under the sanitizers' build it
 * stops the test, and a Cortex-M0 faults on one).  kpn_send and kpn_recv
 * leave that check out (kpn.h). */
void test_a_misaligned_handle_is_refused_before_it_is_read(void)
{
    kpn_net *net, *odd_net;
    kpn_proc *a, *b, *odd_proc;
    kpn_chan *ch, *in, *odd_chan;
    kpn_stats st;
    kpn_proc_stats ps;
    unsigned char region[256];
    unsigned home[2];
    size_t off;
    int v = 1;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", idle, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "b", idle, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ch, a, b, sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect_input(net, &in, b, sizeof(int), 4));
    for (off = 1; off < 16; off += 7) {
        odd_net = (kpn_net *)(void *)((unsigned char *)net + off);
        odd_proc = (kpn_proc *)(void *)((unsigned char *)a + off);
        odd_chan = (kpn_chan *)(void *)((unsigned char *)ch + off);
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(odd_net, &a, "c", idle, NULL, 16384));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(odd_net, &ch, a, b, sizeof(int), 4));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &ch, odd_proc, b, sizeof(int), 4));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(odd_net, region, sizeof region));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(odd_net, 2, home, 2));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(odd_net, &st));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_run(odd_net));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_release(odd_net));
        TEST_ASSERT_NULL(kpn_net_fault(odd_net));
        TEST_ASSERT_NULL(kpn_proc_next(odd_net, NULL));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(odd_proc, 0));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(odd_proc, &ps));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_close(odd_chan));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_offer(odd_chan, &v));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_offer((kpn_chan *)(void *)((unsigned char *)in + off), &v));
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_input_close(odd_chan));
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_capacity(odd_chan));
        TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(odd_chan));
    }
    /* nothing changed: the net runs as built */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2, st.procs);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_input_close(in));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
}

/* A net placed a few bytes after another writes over the other's fields
 * but may leave its first bytes, its tag and serial, standing: the old
 * handle must not take the new net's fields for its own.  Every start
 * of the new net inside the old one's fields, on 1 and 2 runners. */
static void overlapped(unsigned runners, size_t off)
{
    kpn_config cfg;
    kpn_net *old, *now;
    kpn_proc *a, *b, *c;
    kpn_chan *ch, *in;
    kpn_stats st;
    unsigned home[4];
    unsigned char region[256];

    kpn_config_default(&cfg);
    cfg.runners = runners;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&old, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(old, &a, "a", idle, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(old, &b, "b", idle, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(old, &ch, a, b, sizeof(int), 4));

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&now, arena + off, SPACE - off, &cfg));
    TEST_ASSERT_EQUAL_PTR(arena + off, now);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_run(old));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(old, &c, "c", idle, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(old, &ch, a, b, sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect_input(old, &in, a, sizeof(int), 4));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(old, region, sizeof region));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_place(old, 2, home, 4));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(old, &st));
    TEST_ASSERT_NULL(kpn_net_fault(old));
    TEST_ASSERT_NULL(kpn_proc_next(old, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_pin(a, 0));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_release(old));

    /* the new net is whole */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(now, &c, "c", idle, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(now));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(now, &st));
    TEST_ASSERT_EQUAL_size_t(1, st.procs);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(now));
}

void test_a_net_placed_over_another_nets_fields_makes_its_handle_stale(void)
{
    size_t off;

    for (off = 16; off < sizeof(kpn_net); off += 16) {
        overlapped(1, off);
        overlapped(2, off);
    }
}

/* kpn_net_init from a process, over the arena of the net that runs it:
 * refused, and the run goes on with every message. */
static kpn_chan *over_ch;
static kpn_status over_init;
static kpn_net *over_out;
static int over_sum;

static void sends_three(void *arg)
{
    int v;

    (void)arg;
    for (v = 1; v <= 3; ++v)
        kpn_send(over_ch, &v);
}

static size_t over_offset, over_size;

static void inits_over_its_net(void *arg)
{
    over_init = kpn_net_init(&over_out, (unsigned char *)arg + over_offset, over_size, NULL);
    sends_three(NULL);
}

static void sums(void *arg)
{
    int v;

    (void)arg;
    while (kpn_recv(over_ch, &v) == KPN_OK)
        over_sum += v;
}

/* At the net's own place, given only the net's own bytes (the caller's
 * stack lies beyond them: the running net is found there), and over the
 * whole arena at the net's place and a few bytes or lines off it, where
 * no net is found but the caller's stack lies in the arena. */
void test_init_over_a_running_net_is_refused_and_the_run_goes_on(void)
{
    static const size_t offsets[] = {0, 0, 1, 16, 256, 4096};
    unsigned k;

    for (k = 0; k < 2 * sizeof offsets / sizeof offsets[0]; ++k) {
        kpn_config cfg;
        kpn_net *net;
        kpn_proc *w, *r;
        kpn_stats st;

        kpn_config_default(&cfg);
        cfg.runners = 1 + k % 2;
        over_offset = offsets[k / 2];
        over_size = k / 2 == 0 ? kpn_size_net(NULL) : SPACE - over_offset;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", inits_over_its_net, arena, 16384));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "r", sums, NULL, 16384));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &over_ch, w, r, sizeof(int), 1));
        over_init = KPN_OK;
        over_out = NULL;
        over_sum = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_ESTATE, over_init);
        TEST_ASSERT_NULL(over_out);
        TEST_ASSERT_EQUAL_INT(6, over_sum);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(3, st.messages);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
    }
}

/* kpn_net_init refused for its arguments (KPN_EINVAL) or its size
 * (KPN_ENOMEM) over a net that is built and waiting to run: the net,
 * its handles and its guard pages are as they were, and it runs whole. */
void test_a_refused_init_leaves_the_net_in_the_arena_whole(void)
{
    unsigned runners;

    for (runners = 1; runners <= 2; ++runners) {
        kpn_config cfg, bad;
        kpn_net *net, *other = (kpn_net *)&runners;
        kpn_proc *w, *r;
        kpn_proc_stats ps;
        kpn_stats st;

        kpn_config_default(&cfg);
        cfg.runners = runners;
        cfg.guard_pages = 1;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "w", sends_three, NULL, 16384));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "r", sums, NULL, 16384));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &over_ch, w, r, sizeof(int), 1));

        bad = cfg;
        bad.default_capacity = 0;
        TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&other, arena, SPACE, &bad));
        TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_net_init(&other, arena, 64, &cfg));
        TEST_ASSERT_EQUAL_PTR((kpn_net *)&runners, other); /* not written */

        /* the old handles are live, and the net runs as built */
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(w, &ps));
        TEST_ASSERT_EQUAL_STRING("w", ps.name);
        TEST_ASSERT_EQUAL_size_t(1, kpn_chan_capacity(over_ch));
        over_sum = 0;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(6, over_sum);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(3, st.messages);
        TEST_ASSERT_EQUAL_size_t(2, st.procs_exited);
        TEST_ASSERT_TRUE(outside_untouched(SPACE));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
    }
}

/* A net made where no net's tag is found takes its serial from the
 * bytes it finds there.  Where they are as they were when an earlier
 * net was made there (a net of another offset that writes the same
 * bytes over the place each time; here they are put back), the new net
 * takes the earlier one's serial, and the earlier one's records beyond
 * what the new one carves still hold it.  A send or a receive, from the
 * host or from a process, refuses such a channel all the same: it lies
 * past the live net's newest channel record
 * (tools/fuzz/crashes/api-stale-channel-serial-taken-again). */
static kpn_chan *stale_ch;
static int stale_send, stale_recv, stale_close;

static void uses_the_stale_channel(void *arg)
{
    int v = 0;

    (void)arg;
    stale_send = kpn_send(stale_ch, &v);
    stale_recv = kpn_recv(stale_ch, &v);
    stale_close = kpn_close(stale_ch);
}

static kpn_net *made_off(unsigned char *at, kpn_proc **p, kpn_proc **q)
{
    kpn_net *net;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, at, SPACE - 64, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, p, "p", uses_the_stale_channel, NULL, 16384));
    if (q != NULL)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, q, "q", idle, NULL, 16384));
    return net;
}

void test_a_stale_channel_whose_serial_a_net_took_again_is_refused(void)
{
    /* just past the fields of a net at 'arena', over its runners'
     * records: every net made at 'arena' writes the same bytes there
     * (its fields' tail, which holds its serial, lies below) */
    unsigned char *off = arena + kpni_align_up(sizeof(kpn_net));
    static unsigned char before[sizeof(kpn_net)];
    kpn_net *x, *y1, *y2;
    kpn_proc *p, *q, *p2;
    kpn_chan *live;
    uint32_t serial;
    int v = 0;

    if (KPN_COMPACT)
        TEST_IGNORE_MESSAGE("the compact layout has no serial");
    /* no net's tag at 'off' */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&x, arena, kpn_size_net(NULL), NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(x));
    memcpy(before, off, sizeof before);
    y1 = made_off(off, &p, &q);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(y1, &stale_ch, q, p, sizeof v, 1));
    serial = y1->serial;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(y1));
    memcpy(off, before, sizeof before);
    y2 = made_off(off, &p2, NULL);
    TEST_ASSERT_EQUAL_PTR(y1, y2);
    TEST_ASSERT_EQUAL_PTR(p, p2); /* the new process on the old one: it is the new one */
    /* the case this test is for: the same bytes, so the same serial */
    TEST_ASSERT_EQUAL_UINT32(serial, y2->serial);
    /* a channel of the live net's own, below the stale one */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(y2, &live, p2, p2, sizeof v, 1));
    TEST_ASSERT_TRUE((unsigned char *)live < (unsigned char *)stale_ch);
    TEST_ASSERT_TRUE((unsigned char *)stale_ch >= y2->arena.next);

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_send(stale_ch, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_recv(stale_ch, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_send_sized(stale_ch, &v, sizeof v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_recv_sized(stale_ch, &v, sizeof v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_close(stale_ch));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_capacity(stale_ch));
    stale_send = stale_recv = stale_close = -1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(y2));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, stale_send);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, stale_recv);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, stale_close);
}

/* ------------------------------------------------ defects 4, 7, 9: deadlocks */

/* A cycle of 'n' processes, each reading from the one before it first. */
#define CYCLE 4
static kpn_chan *ring_ch[CYCLE];
static void reads_first(void *arg)
{
    int i = (int)(intptr_t)arg, v = 0;
    if (kpn_recv(ring_ch[(i + CYCLE - 1) % CYCLE], &v) == KPN_OK)
        kpn_send(ring_ch[i], &v);
}

static kpn_net *reader_cycle(int resolve, int strict)
{
    static const char *names[CYCLE] = {"first", "second", "third", "fourth"};
    kpn_config cfg;
    kpn_net *net;
    kpn_proc *p[CYCLE];
    int i;

    kpn_config_default(&cfg);
    cfg.resolve = resolve;
    cfg.strict = strict;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
    for (i = 0; i < CYCLE; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p[i], names[i], reads_first,
                                                (void *)(intptr_t)i, 16384));
    for (i = 0; i < CYCLE; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ring_ch[i], p[i], p[(i + 1) % CYCLE],
                                                  sizeof(int), 1));
    return net;
}

void test_strict_without_the_resolver_ends_a_true_deadlock(void)
{
    kpn_net *net = reader_cycle(0, 1);
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
    TEST_ASSERT_EQUAL_size_t(CYCLE, st.procs_blocked_read);
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "true deadlock: "));
}

/* The cycle's processes stay blocked, so the net holds its true
 * deadlock whenever it comes to rest again: every later run ends with
 * KPN_EDEADLOCK too, and the deadlock is counted once. */
void test_strict_ends_every_later_run_of_a_net_holding_a_true_deadlock(void)
{
    int resolve;

    for (resolve = 0; resolve <= 1; ++resolve) {
        kpn_net *net = reader_cycle(resolve, 1);
        kpn_stats st;

        TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_UINT64(1, st.true_deadlocks);
        TEST_ASSERT_EQUAL_size_t(CYCLE, st.procs_blocked_read);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
    }
}

static const char *find(const char *hay, const char *needle)
{
    size_t i, j;
    for (i = 0; hay[i] != '\0'; ++i) {
        for (j = 0; needle[j] != '\0' && hay[i + j] == needle[j]; ++j)
            ;
        if (needle[j] == '\0')
            return hay + i;
    }
    return NULL;
}

void test_the_report_names_every_member_of_a_true_deadlock_cycle(void)
{
    kpn_net *net = reader_cycle(1, 0);
    const char *line;
    size_t i;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kpn_report(net, text, sizeof text);
    /* the cycle's own line, not the per-process lines: cut it out */
    line = find(text, "\ntrue deadlock: ");
    TEST_ASSERT_NOT_NULL(line);
    for (i = 1; line[i] != '\0' && line[i] != '\n'; ++i)
        ;
    text[(size_t)(line - text) + i] = '\0';
    TEST_ASSERT_TRUE(kt_contains(line, "\"first\""));
    TEST_ASSERT_TRUE(kt_contains(line, "\"second\""));
    TEST_ASSERT_TRUE(kt_contains(line, "\"third\""));
    TEST_ASSERT_TRUE(kt_contains(line, "\"fourth\""));
}

void test_the_deadlock_sentence_covers_a_cycle_of_readers(void)
{
    TEST_ASSERT_TRUE(kt_contains(kpn_strerror(KPN_EDEADLOCK), "read"));
    TEST_ASSERT_TRUE(kt_contains(kpn_strerror(KPN_EDEADLOCK), "write"));
}

/* ------------------------------------------------ stacks */

void test_the_stack_minimum_is_what_the_library_was_built_with(void)
{
    kpn_net *net;
    kpn_proc *p;

    TEST_ASSERT_EQUAL_size_t(KPN_STACK_MIN, kpn_stack_min());
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, 64 * 1024, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_spawn(net, &p, "p", idle, NULL, kpn_stack_min() - 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, kpn_stack_min()));
}

/* An overflow of thousands of bytes past a 4 KiB stack, into the block
 * below (a process with a bigger stack): reported, and inspection stays
 * safe whatever it damaged. */
static kpn_proc *far_proc;
static void overflows_far(void *arg)
{
    kpn_proc_stats ps;
    (void)arg;
    kpn_proc_stats_get(far_proc, &ps);
    kt_recurse((const unsigned char *)ps.stack_base - 9000, 0);
}

void test_inspection_after_a_large_overflow_does_not_crash(void)
{
    kpn_net *net;
    kpn_proc *below;
    kpn_proc_stats ps;
    kpn_stats st;
    const kpn_proc *p = NULL;
    size_t n = 0;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &below, "below", idle, NULL, 32768));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &far_proc, "far", overflows_far, NULL, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_PTR(far_proc, kpn_net_fault(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(far_proc, &ps));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_FAULTED, ps.state);
    /* 'below' lost its record to the overflow */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_proc_stats_get(below, &ps));
    /* the net's own counts stand; of the records, only what can be
     * trusted is counted: 'below' returned before the overflow, but its
     * record is gone, and 'far' faulted */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(2, st.procs);
    TEST_ASSERT_EQUAL_size_t(0, st.procs_exited);
    TEST_ASSERT_EQUAL_size_t(0, st.procs_blocked_read + st.procs_blocked_write);
    TEST_ASSERT_EQUAL_UINT64(0, st.messages);
    while ((p = kpn_proc_next(net, p)) != NULL)
        ++n;
    TEST_ASSERT_LESS_THAN(2, n);
    TEST_ASSERT_GREATER_THAN(0, kpn_report(net, text, sizeof text));
    TEST_ASSERT_TRUE(kt_contains(text, "stack overflow: process \"far\""));
    TEST_ASSERT_TRUE(kt_contains(text, "damaged"));
}

/* With guard pages, 20 KB of recursion in a 4 KiB stack stops at the
 * page: SIGSEGV at once, and a handler on sigaltstack names the process
 * from the fault address. */
static void recurses_20k(void *arg)
{
    kpn_proc_stats ps;
    (void)arg;
    kpn_proc_stats_get(far_proc, &ps);
    kt_recurse((const unsigned char *)ps.stack_base - 20000, 0);
}

static void guarded_run(void)
{
    kpn_config cfg;
    kpn_net *net;
    kpn_proc *other;

    kpn_config_default(&cfg);
    cfg.guard_pages = 1;
    if (kpn_net_init(&net, arena, SPACE, &cfg) != KPN_OK ||
        kpn_spawn(net, &other, "other", idle, NULL, 8192) != KPN_OK ||
        kpn_spawn(net, &far_proc, "deep", recurses_20k, NULL, 4096) != KPN_OK)
        _exit(2);
    kt_guarded_net = net;
    kt_guard_below = kt_page_size() + 256 + 512; /* page, guard band, stagger */
    kpn_run(net);
    _exit(3); /* not reached: the run must not return */
}

void test_with_guard_pages_a_deep_overflow_stops_at_the_page(void)
{
    /* process number 1, "deep", is named by the handler */
    TEST_ASSERT_EQUAL_INT(KT_NAMED + 1, kt_in_child(guarded_run));
}

void test_guard_pages_need_a_page_aligned_arena_and_come_back_on_release(void)
{
    kpn_config cfg;
    kpn_net *net;
    kpn_proc *p;
    kpn_proc_stats ps;
    kpn_stats st;
    size_t page = kt_page_size();

    kpn_config_default(&cfg);
    cfg.guard_pages = 1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena + 16, SPACE - 16, &cfg));
    cfg.guard_pages = 2;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, SPACE, &cfg));
    cfg.guard_pages = -1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, SPACE, &cfg));
    cfg.guard_pages = 1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(p, &ps));
    /* the block, guard page included, fits what kpn.h says to count */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_TRUE(st.arena_used <= kpn_size_net(&cfg) + kpn_size_proc(8192, 1) + 2 * page);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    /* re-initialising gives the pages back: a net without guard pages
     * then writes stacks where they were */
    cfg.guard_pages = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "q", idle, NULL, 65536));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    cfg.guard_pages = 1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_release(net));
    /* released: every byte is ordinary memory again */
    {
        size_t i;
        for (i = 0; i < SPACE; ++i)
            arena[i] = 0;
    }
    TEST_ASSERT_TRUE(outside_untouched(SPACE));
}

/* kpn_net_init over a net gives back every guard page of that net, also
 * when it is given less of the memory than that net had. */
void test_a_net_made_again_in_less_memory_gives_back_every_guard_page(void)
{
    kpn_config cfg;
    kpn_net *net;
    kpn_proc *p;
    size_t i;

    kpn_config_default(&cfg);
    cfg.guard_pages = 1;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE, &cfg));
    for (i = 0; i < 8; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle, NULL, 8192));
    cfg.guard_pages = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, SPACE / 16, &cfg));
    for (i = 0; i < SPACE; ++i) /* faults on a page still protected */
        arena[i] = 0;
    TEST_ASSERT_TRUE(outside_untouched(SPACE));
}
