/* SPDX-License-Identifier: MIT */
/* kpn_report: snprintf's contract, and an account that names what matters. */
#include "unity.h"
#include <stdio.h>
#include <string.h>
#include "kpn_int.h" /* a field of the net, the record limit */
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

static unsigned char arena[256 * 1024];
static kpn_net *net;
static char text[4096];

void setUp(void)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
}

void tearDown(void) {}

static size_t length(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0')
        ++n;
    return n;
}

static kpn_chan *in_of_reader;
static void reads_forever(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(in_of_reader, &v);
}

static void writes_nothing(void *arg)
{
    int v;
    kpn_recv(*(kpn_chan **)arg, &v);
}

static void build_waiting_pair(void)
{
    static kpn_chan *back;
    kpn_proc *r, *w;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "the-reader", reads_forever, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "the-writer", writes_nothing, &back, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &in_of_reader, w, r, sizeof(int), 3));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &back, r, w, sizeof(int), 1));
}

void test_the_returned_length_is_the_whole_account(void)
{
    size_t whole, part;

    build_waiting_pair();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    whole = kpn_report(net, text, sizeof text);
    TEST_ASSERT_EQUAL_size_t(whole, length(text));
    TEST_ASSERT_EQUAL_size_t(whole, kpn_report(net, NULL, 0));
    /* truncated: NUL-terminated, prefix of the whole, same return value */
    {
        char small[20];
        part = kpn_report(net, small, sizeof small);
        TEST_ASSERT_EQUAL_size_t(whole, part);
        TEST_ASSERT_EQUAL_size_t(sizeof small - 1, length(small));
        TEST_ASSERT_EQUAL_MEMORY(text, small, sizeof small - 1);
    }
    {
        char one[1] = {'x'};
        TEST_ASSERT_EQUAL_size_t(whole, kpn_report(net, one, 1));
        TEST_ASSERT_EQUAL_INT(0, one[0]);
    }
}

void test_null_net_gives_an_empty_account(void)
{
    text[0] = 'x';
    TEST_ASSERT_EQUAL_size_t(0, kpn_report(NULL, text, sizeof text));
    TEST_ASSERT_EQUAL_INT(0, text[0]);
}

/* A net whose own fields are damaged (an overflow from the first stack,
 * which lies just above them, can do it) is read no further than its
 * tag: the report says so, and the stats refuse it. */
void test_a_net_with_damaged_bookkeeping_is_named_not_read(void)
{
    kpn_stats st;
    unsigned saved = net->nrunners;
    size_t len;

    net->nrunners = KPN_MAX_RUNNERS + 1;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_stats(net, &st));
    len = kpn_report(net, text, sizeof text);
    TEST_ASSERT_EQUAL_size_t(length(text), len);
    TEST_ASSERT_TRUE(kt_contains(text, "bookkeeping is damaged"));
    /* cut short as any account is, and still its whole length */
    memset(text, 'x', 16);
    TEST_ASSERT_EQUAL_size_t(len, kpn_report(net, text, 8));
    TEST_ASSERT_EQUAL_size_t(7, length(text));
    TEST_ASSERT_EQUAL_MEMORY("kpn: th", text, 7);
    TEST_ASSERT_EQUAL_size_t(len, kpn_report(net, NULL, 0));
    text[0] = 'x';
    TEST_ASSERT_EQUAL_size_t(len, kpn_report(net, text, 0));
    TEST_ASSERT_EQUAL_INT('x', text[0]);
    net->nrunners = saved;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_FALSE(kt_contains(text, "damaged"));
}

/* kpn_net_init gives back the guard pages of a net it finds where the new
 * one goes, by its tag.  Memory reused since for a net at another offset
 * may have written over the fields behind that tag: a page size, an
 * arena and a process list that are another net's bytes.  They are
 * followed only where the arena is this very memory, and a list that
 * loops is followed no further than the arena holds records. */
static void idle_proc(void *arg) { (void)arg; }

void test_a_net_header_written_over_behind_its_tag_is_not_followed(void)
{
    kpn_proc *p;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle_proc, NULL, 16384));
#if KPN_GUARD_PAGES
    net->page = 4096;
#endif
    net->arena.base = NULL;
    net->arena.next = (unsigned char *)(uintptr_t)-1;
    net->procs = (kpn_proc *)(uintptr_t)0x400;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));

    /* the arena this memory's, the list a loop */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle_proc, NULL, 16384));
#if KPN_GUARD_PAGES
    net->page = 4096;
#endif
    p->next = p;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "p", idle_proc, NULL, 16384));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
}

/* More true deadlocks than the net keeps a record of: the report names
 * those it recorded and counts the rest. */
#define PAIRS (KPNI_DEADLOCK_RECORDS + 2)
static kpn_chan *pair_in[2 * PAIRS];

/* 'pairs' true deadlocks of two processes each, run; returns how many the
 * report names. */
static size_t true_deadlocks_named(size_t pairs)
{
    kpn_proc *x, *y;
    kpn_stats st;
    const char *at;
    size_t i, named = 0;

    for (i = 0; i < pairs; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &x, "x", writes_nothing, &pair_in[2 * i], 8192));
        TEST_ASSERT_EQUAL_INT(KPN_OK,
                              kpn_spawn(net, &y, "y", writes_nothing, &pair_in[2 * i + 1], 8192));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &pair_in[2 * i], y, x, sizeof(int), 1));
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &pair_in[2 * i + 1], x, y, sizeof(int), 1));
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(pairs, st.true_deadlocks);
    TEST_ASSERT_LESS_THAN(sizeof text, kpn_report(net, text, sizeof text));
    for (at = text; (at = strstr(at, "true deadlock: ")) != NULL; ++at)
        ++named;
    return named;
}

void test_true_deadlocks_beyond_those_recorded_are_counted(void)
{
    TEST_ASSERT_EQUAL_size_t(KPNI_DEADLOCK_RECORDS, true_deadlocks_named(PAIRS));
    TEST_ASSERT_TRUE(kt_contains(text, "... and 2 more true deadlocks\n"));
}

/* Exactly as many true deadlocks as the net records: all named, and no
 * count of more. */
void test_true_deadlocks_as_many_as_recorded_are_all_named_and_none_counted(void)
{
    TEST_ASSERT_EQUAL_size_t(KPNI_DEADLOCK_RECORDS, true_deadlocks_named(KPNI_DEADLOCK_RECORDS));
    TEST_ASSERT_FALSE(kt_contains(text, "more true deadlocks"));
}

void test_blocked_processes_are_named_with_their_channel(void)
{
    build_waiting_pair();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "process \"the-reader\": blocked reading on \"the-writer\" -> \"the-reader\" (0/3 messages of 4 bytes), in a true deadlock\n"));
    TEST_ASSERT_TRUE(kt_contains(text, "process \"the-writer\": blocked reading"));
    TEST_ASSERT_TRUE(kt_contains(text, "true deadlock: "));
    TEST_ASSERT_TRUE(kt_contains(text, "2 processes"));
}

/* kpn.h: the report names a true deadlock's cycle: from the member it
 * recorded round to that member again, once.  The waiting pair's cycle
 * is the two of them, whichever closed it. */
void test_a_true_deadlock_is_named_once_round(void)
{
    build_waiting_pair();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(
        kt_contains(text, "true deadlock: \"the-reader\" -> \"the-writer\" -> \"the-reader\"\n") ||
        kt_contains(text, "true deadlock: \"the-writer\" -> \"the-reader\" -> \"the-writer\"\n"));
}

/* kpn.h: after a stack overflow the walk of kpn_proc_next stops before a
 * damaged record.  White-box: the tag of the second of three records is
 * damaged by hand, and put back. */
void test_the_process_walk_stops_before_a_damaged_record(void)
{
    kpn_proc *a, *b, *c;
    uint32_t magic;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", idle_proc, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "b", idle_proc, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &c, "c", idle_proc, NULL, 8192));
    TEST_ASSERT_EQUAL_PTR(b, kpn_proc_next(net, a));
    magic = b->magic;
    b->magic = 0;
    TEST_ASSERT_EQUAL_PTR(a, kpn_proc_next(net, NULL));
    TEST_ASSERT_NULL(kpn_proc_next(net, a));
    b->magic = magic;
    TEST_ASSERT_EQUAL_PTR(b, kpn_proc_next(net, a));
    TEST_ASSERT_EQUAL_PTR(c, kpn_proc_next(net, b));
    TEST_ASSERT_NULL(kpn_proc_next(net, c));
}

/* What an overflow may have written over, the report names and does not
 * follow: a channel whose writer lies outside the arena, a recorded true
 * deadlock or a faulted process whose record does.  White-box: the
 * records damaged by hand, and put back. */
void test_damaged_channels_and_processes_are_named_not_followed(void)
{
    static char elsewhere[256]; /* not in the arena */
    kpn_proc *writer, *dead, *fault;

    build_waiting_pair();
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_TRUE(net->true_deadlocks >= 1);
    writer = in_of_reader->writer;
    dead = net->deadlocks[0];
    fault = net->fault;

    in_of_reader->writer = (kpn_proc *)(void *)elsewhere;
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "process \"the-reader\": blocked reading on a damaged channel"));
    in_of_reader->writer = writer;

    net->deadlocks[0] = (kpn_proc *)(void *)elsewhere;
    net->fault = (kpn_proc *)(void *)elsewhere;
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "true deadlock: a damaged process\n"));
    TEST_ASSERT_TRUE(kt_contains(text, "stack overflow: process (its record is damaged)\n"));
    net->deadlocks[0] = dead;
    net->fault = fault;

    kpn_report(net, text, sizeof text);
    TEST_ASSERT_FALSE(kt_contains(text, "damaged"));
}

/* The fill the report gives for the channel a process waits on is what
 * the channel holds now, not what it was ever sent: W has put 3 into a
 * ring of 2 and waits to send a fourth, R took 1 and waits on W. */
static kpn_chan *filled, *filled_back;

static void sends_four_then_signals(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 4; ++i)
        kpn_send(filled, &i);
    kpn_send(filled_back, &i);
}

static void takes_one_then_waits(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(filled, &v);
    kpn_recv(filled_back, &v);
}

void test_the_fill_shown_is_what_the_channel_holds_now(void)
{
    kpn_config cfg;
    kpn_proc *w, *r;

    kpn_config_default(&cfg);
    cfg.resolve = 0; /* the artificial deadlock stays for the report */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &w, "W", sends_four_then_signals, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &r, "R", takes_one_then_waits, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &filled, w, r, sizeof(int), 2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &filled_back, w, r, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_EDEADLOCK, kpn_run(net));
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_fill(filled));
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, "process \"W\": blocked writing on \"W\" -> \"R\" (2/2 messages of 4 bytes)\n"));
    /* W sent 0, 1 and 2 (R took 0; 3 waits), none dropped; W blocked
     * writing, R reading */
    TEST_ASSERT_TRUE(kt_contains(text, "kpn: 2 processes (0 exited, 1 blocked reading, 1 blocked "
                                       "writing), 2 channels, 3 messages, 0 discarded\n"));
}

/* The report names the process that overran its stack and the stack's
 * size as kpn_proc_stats gives it. */
static kpn_proc *deep;
static kpn_chan *deep_in;

static void overflows(void *arg)
{
    kpn_proc_stats ps;
    int v;
    (void)arg;
    kpn_proc_stats_get(deep, &ps);
    kt_recurse((const unsigned char *)ps.stack_base - 16, 0);
    kpn_recv(deep_in, &v); /* the switch finds the overflow */
}

void test_a_stack_overflow_is_named_with_the_size_of_its_stack(void)
{
    kpn_proc *other;
    kpn_proc_stats ps;
    char line[128];

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &other, "other", reads_forever, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &deep, "deep", overflows, NULL, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &deep_in, other, deep, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &in_of_reader, deep, other, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_ESTACK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(deep, &ps));
    snprintf(line, sizeof line, "stack overflow: process \"deep\" overran its %lu-byte stack\n",
             (unsigned long)ps.stack_size);
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, line));
}

static void exits_at_once(void *arg) { (void)arg; }

void test_exited_processes_are_left_out(void)
{
    kpn_proc *p;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &p, "short-lived", exits_at_once, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_FALSE(kt_contains(text, "short-lived"));
    TEST_ASSERT_TRUE(kt_contains(text, "1 exited"));
}

/* The account's resolver line gives the counts kpn_net_stats gives.  An
 * artificial deadlock resolved twice: 'grows' sends three messages on a
 * channel of capacity 1 before the one 'late' waits for, so that channel
 * doubles twice (docs/resolver.md) from a reserve of 4096 bytes.  The
 * second growth takes its new ring before the old one goes back to the
 * pool, so the peak is above what is in use after. */
static kpn_chan *grow_c, *grow_go;

static void grows(void *arg)
{
    int v;
    (void)arg;
    for (v = 0; v < 3; ++v)
        kpn_send(grow_c, &v);
    kpn_send(grow_go, &v);
}

static void late(void *arg)
{
    int v;
    (void)arg;
    kpn_recv(grow_go, &v);
    while (kpn_recv(grow_c, &v) == KPN_OK)
        ;
}

void test_the_resolver_line_gives_the_nets_counts(void)
{
    kpn_config cfg;
    kpn_proc *g, *l;
    kpn_stats st;
    char line[256];

    kpn_config_default(&cfg);
    cfg.reserve_size = 4096;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &g, "grows", grows, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &l, "late", late, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &grow_c, g, l, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &grow_go, g, l, sizeof(int), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(2, st.resolutions);
    TEST_ASSERT_EQUAL_UINT64(0, st.true_deadlocks);
    TEST_ASSERT_EQUAL_size_t(4096, st.reserve_size);
    TEST_ASSERT_LESS_THAN(st.reserve_peak, st.reserve_used);
    snprintf(line, sizeof line,
             "resolver: %lu detections, 2 resolutions, 0 true deadlocks; reserve %lu of 4096 "
             "bytes in use, peak %lu\n",
             (unsigned long)st.detections, (unsigned long)st.reserve_used,
             (unsigned long)st.reserve_peak);
    kpn_report(net, text, sizeof text);
    TEST_ASSERT_TRUE(kt_contains(text, line));
}
