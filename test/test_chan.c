/* SPDX-License-Identifier: MIT */
/* Channels: connect, FIFO copy semantics, blocking, EOF, close, 1:1 rules, discard. */
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

#define STACK 16384
#define MAXMSG 512
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

static kpn_chan *connect(kpn_proc *w, kpn_proc *r, size_t msg_size, size_t cap)
{
    kpn_chan *c = NULL;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, w, r, msg_size, cap));
    return c;
}

static void idle(void *arg) { (void)arg; }

/* Sends 'n' ints, first, first+1, ...; closes if asked; keeps each status. */
struct producer {
    kpn_chan *out;
    int first, n, close;
    kpn_status worst;
};

static void produce(void *arg)
{
    struct producer *p = arg;
    int i;

    p->worst = KPN_OK;
    for (i = 0; i < p->n; ++i) {
        int v = p->first + i;
        kpn_status s = kpn_send(p->out, &v);
        if (s != KPN_OK)
            p->worst = s;
    }
    if (p->close)
        p->worst = p->worst != KPN_OK ? p->worst : kpn_close(p->out);
}

/* Receives ints until EOF (or 'limit'), recording them and the status
 * that ended the loop. */
struct consumer {
    kpn_chan *in;
    int limit;
    int got[MAXMSG];
    int n;
    kpn_status end;
};

static void consume(void *arg)
{
    struct consumer *c = arg;
    int v;

    c->n = 0;
    c->end = KPN_OK;
    while (c->n < c->limit && (c->end = kpn_recv(c->in, &v)) == KPN_OK)
        c->got[c->n++] = v;
}

/* ------------------------------------------------------------ connect */

void test_connect_rejects_bad_arguments(void)
{
    kpn_proc *a = spawn(idle, NULL), *b = spawn(idle, NULL);
    kpn_chan *c = NULL;

    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(NULL, &c, a, b, 4, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, NULL, a, b, 4, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &c, NULL, b, 4, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &c, a, NULL, 4, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &c, a, b, 0, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &c, a, b, (size_t)-1 / 2, 4));
    /* a product that wraps to 4 bytes: only the multiplication's own
     * check sees it */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &c, a, b, (size_t)-1 / 4 + 2, 4));
    TEST_ASSERT_NULL(c);
}

void test_connect_rejects_a_process_of_another_net(void)
{
    static unsigned char other_arena[128 * 1024];
    kpn_net *other = NULL;
    kpn_proc *a = spawn(idle, NULL), *x = NULL;
    kpn_chan *c = NULL;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&other, other_arena, sizeof other_arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(other, &x, "x", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &c, a, x, 4, 1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_connect(net, &c, x, a, 4, 1));
    TEST_ASSERT_NULL(c);
}

void test_capacity_zero_takes_the_configured_default(void)
{
    kpn_config cfg;
    kpn_proc *a, *b;
    kpn_chan *c, *d;

    kpn_config_default(&cfg);
    cfg.default_capacity = 5;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    a = spawn(idle, NULL);
    b = spawn(idle, NULL);
    c = connect(a, b, 4, 0);
    d = connect(a, b, 4, 3);
    TEST_ASSERT_EQUAL_size_t(5, kpn_chan_capacity(c));
    TEST_ASSERT_EQUAL_size_t(3, kpn_chan_capacity(d));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(c));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_capacity(NULL));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(NULL));
}

void test_connect_enomem_leaves_the_net_unchanged(void)
{
    kpn_stats before, after;
    kpn_proc *a = spawn(idle, NULL), *b = spawn(idle, NULL);
    kpn_chan *c = NULL;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, kpn_connect(net, &c, a, b, 1024, sizeof arena / 1024));
    TEST_ASSERT_NULL(c);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(before.chans, after.chans);
    /* and a channel that fits still connects and works */
    c = connect(a, b, 4, 1);
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_capacity(c));
}

void test_size_chan_is_enough_for_one_channel(void)
{
    static unsigned char exact[64 * 1024];
    kpn_proc *a = NULL;
    kpn_chan *c = NULL;
    size_t need = kpn_size_net(NULL) + kpn_size_proc(STACK, 1) + kpn_size_chan(24, 10);

    TEST_ASSERT_LESS_OR_EQUAL(sizeof exact - 3, need);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, exact + 3, need, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", idle, NULL, STACK));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &c, a, a, 24, 10));
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_chan(0, 1));
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_chan(24, 0)); /* not a size: kpn.h */
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_chan((size_t)-1 / 2, 4));
    TEST_ASSERT_EQUAL_size_t(0, kpn_size_chan((size_t)-1 / 4 + 2, 4)); /* wraps to 4 */
}

/* ------------------------------------------------------------ FIFO */

void test_messages_arrive_in_order_through_a_small_ring(void)
{
    struct producer p = {0};
    struct consumer c = {0};
    kpn_proc *pp = spawn(produce, &p), *cp = spawn(consume, &c);
    int i;

    p.out = c.in = connect(pp, cp, sizeof(int), 3);
    p.first = 1000;
    p.n = 200;
    c.limit = MAXMSG;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, p.worst);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, c.end);
    TEST_ASSERT_EQUAL_INT(200, c.n);
    for (i = 0; i < 200; ++i)
        TEST_ASSERT_EQUAL_INT(1000 + i, c.got[i]);
}

/* Odd-sized messages copy whole, through every wrap position. */
struct rec { unsigned char bytes[13]; };

static void fill_rec(struct rec *r, int k)
{
    int i;
    for (i = 0; i < 13; ++i)
        r->bytes[i] = (unsigned char)(k * 31 + i);
}

static kpn_chan *rec_chan;
static int rec_ok;

static void rec_writer(void *arg)
{
    int k;
    (void)arg;
    for (k = 0; k < 50; ++k) {
        struct rec r;
        fill_rec(&r, k);
        KPN_SEND(rec_chan, &r);
    }
}

static void rec_reader(void *arg)
{
    int k;
    (void)arg;
    rec_ok = 0;
    for (k = 0; k < 50; ++k) {
        struct rec r, want;
        fill_rec(&want, k);
        int i, same = 1;
        if (KPN_RECV(rec_chan, &r) != KPN_OK)
            return;
        for (i = 0; i < 13; ++i)
            same &= r.bytes[i] == want.bytes[i];
        if (!same)
            return;
        rec_ok++;
    }
}

void test_odd_sized_messages_are_copied_whole(void)
{
    kpn_proc *w = spawn(rec_writer, NULL), *r = spawn(rec_reader, NULL);

    rec_chan = connect(w, r, sizeof(struct rec), 7);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(50, rec_ok);
}

/* The sizes the fast paths copy in line (an int, a word, two words),
 * from and into buffers at odd addresses, through the ring as it wraps
 * and straight to a reader waiting for them: every byte arrives, and
 * nothing past the message is written. */
enum { SMALL_MSGS = 40 };
static kpn_chan *small_chan;
static size_t small_size;
static int small_ok;

static unsigned char small_byte(size_t k, size_t i)
{
    return (unsigned char)(k * 37 + i * 11 + 1);
}

static void small_writer(void *arg)
{
    unsigned char buf[1 + 16];
    size_t k, i;
    (void)arg;
    for (k = 0; k < SMALL_MSGS; ++k) {
        for (i = 0; i < small_size; ++i)
            buf[1 + i] = small_byte(k, i);
        if (kpn_send(small_chan, buf + 1) != KPN_OK)
            return;
    }
}

static void small_reader(void *arg)
{
    unsigned char buf[1 + 16 + 1];
    size_t k, i;
    (void)arg;
    for (k = 0; k < SMALL_MSGS; ++k) {
        memset(buf, 0xa5, sizeof buf);
        if (kpn_recv(small_chan, buf + 1) != KPN_OK)
            return;
        for (i = 0; i < small_size; ++i)
            if (buf[1 + i] != small_byte(k, i))
                return;
        if (buf[0] != 0xa5 || buf[1 + small_size] != 0xa5)
            return;
        small_ok++;
    }
}

static void copy_small_messages(size_t size)
{
    kpn_proc *r = spawn(small_reader, NULL), *w = spawn(small_writer, NULL);

    small_size = size;
    small_ok = 0;
    small_chan = connect(w, r, size, 3);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(SMALL_MSGS, small_ok);
}

void test_messages_of_an_int_are_copied_whole(void) { copy_small_messages(4); }

void test_messages_of_a_word_are_copied_whole(void) { copy_small_messages(8); }

void test_messages_of_two_words_are_copied_whole(void) { copy_small_messages(16); }

/* The sender's buffer is copied at send time: changing it afterwards
 * does not change what the reader gets. */
static kpn_chan *copy_chan;
static int copy_seen[2];

static void copy_writer(void *arg)
{
    int v = 7;
    (void)arg;
    kpn_send(copy_chan, &v);
    v = 8;
    kpn_send(copy_chan, &v);
    v = 9;
}

static void copy_reader(void *arg)
{
    (void)arg;
    kpn_recv(copy_chan, &copy_seen[0]);
    kpn_recv(copy_chan, &copy_seen[1]);
}

void test_send_copies_the_message(void)
{
    kpn_proc *w = spawn(copy_writer, NULL), *r = spawn(copy_reader, NULL);

    copy_chan = connect(w, r, sizeof(int), 4);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(7, copy_seen[0]);
    TEST_ASSERT_EQUAL_INT(8, copy_seen[1]);
}

/* ------------------------------------------------------------ EOF and close */

static kpn_chan *eof_chan;
static kpn_status eof_status[3];
static int eof_buf;

static void eof_reader(void *arg)
{
    int i;
    (void)arg;
    eof_buf = 12345;
    for (i = 0; i < 3; ++i)
        eof_status[i] = kpn_recv(eof_chan, &eof_buf);
}

static void one_then_close(void *arg)
{
    int v = 77;
    (void)arg;
    kpn_send(eof_chan, &v);
    kpn_close(eof_chan);
    /* keep running after the close: the EOF must not depend on exiting */
    kpn_send(eof_chan, &v);
}

void test_recv_drains_then_returns_eof_forever_leaving_the_buffer(void)
{
    kpn_proc *w = spawn(one_then_close, NULL), *r = spawn(eof_reader, NULL);

    eof_chan = connect(w, r, sizeof(int), 2);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, eof_status[0]);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, eof_status[1]);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, eof_status[2]);
    TEST_ASSERT_EQUAL_INT(77, eof_buf);
}

static kpn_status close_twice[3];
static void close_misuse_writer(void *arg)
{
    int v = 1;
    (void)arg;
    close_twice[0] = kpn_close(eof_chan);
    close_twice[1] = kpn_close(eof_chan);
    close_twice[2] = kpn_send(eof_chan, &v);
}

static kpn_status reader_close;
static void closing_reader(void *arg)
{
    int v;
    (void)arg;
    reader_close = kpn_close(eof_chan);
    kpn_recv(eof_chan, &v);
}

void test_close_twice_send_after_close_and_close_by_reader_are_refused(void)
{
    kpn_proc *w = spawn(close_misuse_writer, NULL), *r = spawn(closing_reader, NULL);

    eof_chan = connect(w, r, sizeof(int), 2);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, close_twice[0]);
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, close_twice[1]);
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, close_twice[2]);
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, reader_close);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_close(NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_close(eof_chan)); /* from the host */
}

/* A close the caller may not make (the reader's, the host's) changes
 * nothing: the channel stays open, the writer's sends all go through and
 * the reader sees every message before its EOF. */
static kpn_status open_close_by_reader;
static kpn_status open_sends[3];
static int open_got[4], open_n;
static kpn_status open_end;

static void refused_closer_then_reader(void *arg)
{
    int v;
    (void)arg;
    open_close_by_reader = kpn_close(eof_chan);
    open_n = 0;
    while (open_n < 4 && (open_end = kpn_recv(eof_chan, &v)) == KPN_OK)
        open_got[open_n++] = v;
}

static void sends_three_then_returns(void *arg)
{
    int i;
    (void)arg;
    for (i = 0; i < 3; ++i) {
        int v = 10 + i;
        open_sends[i] = kpn_send(eof_chan, &v);
    }
}

void test_a_refused_close_leaves_the_channel_open(void)
{
    /* the reader first, so its close comes before any send */
    kpn_proc *r = spawn(refused_closer_then_reader, NULL);
    kpn_proc *w = spawn(sends_three_then_returns, NULL);
    int i;

    eof_chan = connect(w, r, sizeof(int), 1);
    open_close_by_reader = KPN_OK;
    open_end = KPN_OK;
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_close(eof_chan)); /* from the host */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, open_close_by_reader);
    for (i = 0; i < 3; ++i)
        TEST_ASSERT_EQUAL_INT(KPN_OK, open_sends[i]);
    TEST_ASSERT_EQUAL_INT(3, open_n);
    TEST_ASSERT_EQUAL_INT(10, open_got[0]);
    TEST_ASSERT_EQUAL_INT(11, open_got[1]);
    TEST_ASSERT_EQUAL_INT(12, open_got[2]);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, open_end); /* the writer's return closed it */
}

void test_exit_closes_every_channel_the_process_writes(void)
{
    struct producer p = {0};
    struct consumer c1 = {0}, c2 = {0};
    kpn_proc *pp = spawn(produce, &p);
    kpn_proc *r1 = spawn(consume, &c1), *r2 = spawn(consume, &c2);

    p.out = c1.in = connect(pp, r1, sizeof(int), 4);
    c2.in = connect(pp, r2, sizeof(int), 4); /* never written: EOF at exit */
    p.n = 6;
    c1.limit = c2.limit = MAXMSG;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(6, c1.n);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, c1.end);
    TEST_ASSERT_EQUAL_INT(0, c2.n);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, c2.end);
}

/* A writer of three channels closes the one at 'which' (in the order
 * they were connected) and returns: its exit must close the two others,
 * wherever they lie in its own list, and release their blocked readers. */
static kpn_chan *three[3];
static int close_which;
static kpn_status close_one_status;

static void close_one_of_three(void *arg)
{
    (void)arg;
    close_one_status = kpn_close(three[close_which]);
}

void test_exit_closes_the_channels_left_open_whichever_was_closed_before(void)
{
    struct consumer c[3];
    kpn_proc_stats st;
    kpn_proc *w, *r[3];
    int i;

    for (close_which = 0; close_which < 3; ++close_which) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
        memset(c, 0, sizeof c);
        for (i = 0; i < 3; ++i) { /* the readers run first, and block */
            c[i].limit = MAXMSG;
            c[i].end = KPN_ESTATE; /* not yet ended */
            r[i] = spawn(consume, &c[i]);
        }
        w = spawn(close_one_of_three, NULL);
        for (i = 0; i < 3; ++i)
            c[i].in = three[i] = connect(w, r[i], sizeof(int), 2);
        close_one_status = KPN_ESTATE;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_OK, close_one_status);
        for (i = 0; i < 3; ++i) {
            TEST_ASSERT_EQUAL_INT(0, c[i].n);
            TEST_ASSERT_EQUAL_INT(KPN_EOF, c[i].end);
            TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(r[i], &st));
            TEST_ASSERT_EQUAL_INT(KPN_PROC_EXITED, st.state);
        }
    }
}

/* A writer of more channels than the count of its open ones holds
 * (65 535): the count stops, and the exit still closes every channel
 * left open.  The writer closes the first it connected; the reader waits
 * on the last, which is at the head of the writer's list. */
#define MANY_OUTS 65537
static kpn_chan *many_outs[MANY_OUTS];

static void close_the_first(void *arg)
{
    (void)arg;
    close_one_status = kpn_close(many_outs[0]);
}

void test_exit_closes_what_is_open_past_the_count_of_open_channels(void)
{
    static unsigned char big[MANY_OUTS * 320 + (1 << 20)];
    struct consumer c;
    kpn_proc *w, *r;
    kpn_chan *ch = NULL;
    long i;

    TEST_ASSERT_TRUE(kpn_size_chan(sizeof(int), 1) * MANY_OUTS < sizeof big - (1 << 19));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, big, sizeof big, NULL));
    memset(&c, 0, sizeof c);
    c.limit = MAXMSG;
    c.end = KPN_ESTATE;
    r = spawn(consume, &c);
    w = spawn(close_the_first, NULL);
    for (i = 0; i < MANY_OUTS; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &ch, w, r, sizeof(int), 1));
        many_outs[i] = ch;
    }
    c.in = many_outs[MANY_OUTS - 1];
    close_one_status = KPN_ESTATE;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, close_one_status);
    TEST_ASSERT_EQUAL_INT(0, c.n);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, c.end);
}

/* ------------------------------------------------------------ discard */

void test_send_to_an_exited_reader_succeeds_and_is_counted(void)
{
    struct producer p = {0};
    struct consumer c = {0};
    kpn_proc *cp = spawn(consume, &c), *pp = spawn(produce, &p);
    kpn_stats st;

    /* the reader takes 3 and exits; the writer blocks on the full ring,
     * is released by the exit, and the rest is dropped */
    p.out = c.in = connect(pp, cp, sizeof(int), 2);
    p.n = 10;
    c.limit = 3;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_OK, p.worst);
    TEST_ASSERT_EQUAL_INT(3, c.n);
    TEST_ASSERT_EQUAL_INT(0, c.got[0]);
    TEST_ASSERT_EQUAL_INT(2, c.got[2]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_UINT64(7, st.discarded);
    TEST_ASSERT_EQUAL_size_t(2, st.procs_exited);
    /* 0 to 3 went into the ring; 4, which the writer had yet to put in
     * when the reader exited, is dropped, not copied into a ring nobody
     * reads */
    TEST_ASSERT_EQUAL_UINT64(4, st.messages);
}

/* The writer waits on its full channel when the reader returns without
 * reading: the exit itself must release it.  Without the resolver nothing
 * else would (the run would end in KPN_EDEADLOCK); with it, the writer
 * left waiting at rest would be freed by growing the channel. */
void test_a_reader_that_exits_releases_the_writer_waiting_on_its_full_channel(void)
{
    int resolve;

    for (resolve = 0; resolve <= 1; ++resolve) {
        struct producer p = {0};
        kpn_proc *pp, *rp;
        kpn_config cfg;
        kpn_stats st;

        kpn_config_default(&cfg);
        cfg.resolve = resolve;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
        pp = spawn(produce, &p); /* first: it fills the ring and waits */
        rp = spawn(idle, NULL);
        p.out = connect(pp, rp, sizeof(int), 2);
        p.n = 10;
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
        TEST_ASSERT_EQUAL_INT(KPN_OK, p.worst);
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
        TEST_ASSERT_EQUAL_size_t(2, st.procs_exited);
        TEST_ASSERT_EQUAL_UINT64(2, st.messages); /* the two the ring took */
        TEST_ASSERT_EQUAL_UINT64(10, st.discarded);
        TEST_ASSERT_EQUAL_UINT64(0, st.resolutions);
        TEST_ASSERT_EQUAL_size_t(2, kpn_chan_capacity(p.out));
    }
}

/* A send to a reader that waits on the channel puts the message where
 * the receive wants it (chan.c, hand_over), but the message counts as in
 * the channel until the reader runs: the fill, and the room a further
 * send finds, are those of a message in the ring.  The reader blocks
 * first; the writer then sends 1 (to the waiting reader), 2 (into the
 * ring: the channel then holds its capacity) and 3, which blocks until
 * the reader has taken 1 and 2. */
struct waited {
    kpn_chan *c;
    kpn_proc *reader;
    kpn_proc_state reader_state; /* as the writer starts */
    size_t fill[3];              /* after each send */
    int got[4], n;
    kpn_status end;
};

static void waited_writer(void *arg)
{
    struct waited *w = arg;
    kpn_proc_stats ps;
    int v;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(w->reader, &ps));
    w->reader_state = ps.state;
    for (v = 1; v <= 3; ++v) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_send(w->c, &v));
        w->fill[v - 1] = kpn_chan_fill(w->c);
    }
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_close(w->c));
}

static void waited_reader(void *arg)
{
    struct waited *w = arg;
    int v;

    while (w->n < 4 && (w->end = kpn_recv(w->c, &v)) == KPN_OK)
        w->got[w->n++] = v;
}

void test_a_message_sent_to_a_waiting_reader_is_in_the_channel_until_it_runs(void)
{
    static struct waited w;
    static const int want[] = {1, 2, 3};
    kpn_proc *wp;

    memset(&w, 0, sizeof w);
    w.reader = spawn(waited_reader, &w);
    wp = spawn(waited_writer, &w);
    w.c = connect(wp, w.reader, sizeof(int), 2);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_PROC_BLOCKED_READ, w.reader_state);
    TEST_ASSERT_EQUAL_size_t(1, w.fill[0]);
    TEST_ASSERT_EQUAL_size_t(2, w.fill[1]); /* full: 3 waits for the reader */
    TEST_ASSERT_EQUAL_size_t(1, w.fill[2]);
    TEST_ASSERT_EQUAL_INT(3, w.n);
    TEST_ASSERT_EQUAL_INT_ARRAY(want, w.got, 3);
    TEST_ASSERT_EQUAL_INT(KPN_EOF, w.end);
    TEST_ASSERT_EQUAL_size_t(2, kpn_chan_capacity(w.c));
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(w.c));
}

/* ------------------------------------------------------------ 1:1 */

static kpn_chan *perm_chan;
static kpn_status perm_seen[4];

static void intruder(void *arg)
{
    int v = 5;
    (void)arg;
    perm_seen[0] = kpn_send(perm_chan, &v);   /* not the writer */
    perm_seen[1] = kpn_recv(perm_chan, &v);   /* not the reader */
}

static void wrong_way(void *arg)
{
    int v = 5;
    (void)arg;
    perm_seen[2] = kpn_recv(perm_chan, &v);   /* the writer reading */
    perm_seen[3] = kpn_send(perm_chan, NULL);
}

void test_only_the_two_endpoints_may_use_a_channel(void)
{
    kpn_proc *w = spawn(wrong_way, NULL), *r = spawn(idle, NULL);
    int v = 1;

    spawn(intruder, NULL);
    perm_chan = connect(w, r, sizeof(int), 2);
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_send(perm_chan, &v)); /* host thread */
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, kpn_recv(perm_chan, &v));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, perm_seen[0]);
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, perm_seen[1]);
    TEST_ASSERT_EQUAL_INT(KPN_EPERM, perm_seen[2]);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, perm_seen[3]);
    TEST_ASSERT_EQUAL_size_t(0, kpn_chan_fill(perm_chan));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_send(NULL, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_recv(NULL, &v));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_recv(perm_chan, NULL));
}

/* ------------------------------------------------------------ sized */

static kpn_chan *sized_chan;
static kpn_status sized_seen[6];
static long sized_got;
static short sized_untouched;

static void sized_writer(void *arg)
{
    long v = 42;
    short s = 1;
    (void)arg;
    sized_seen[0] = kpn_send_sized(sized_chan, &s, sizeof s);
    sized_seen[4] = kpn_send_sized(sized_chan, NULL, sizeof v);
    sized_seen[1] = KPN_SEND(sized_chan, &v);
}

static void sized_reader(void *arg)
{
    short s = 9;
    (void)arg;
    sized_seen[2] = KPN_RECV(sized_chan, &s);
    sized_untouched = s;
    sized_seen[5] = kpn_recv_sized(sized_chan, NULL, sizeof sized_got);
    sized_seen[3] = KPN_RECV(sized_chan, &sized_got);
}

void test_sized_variants_refuse_a_wrong_size_and_touch_nothing(void)
{
    kpn_proc *w = spawn(sized_writer, NULL), *r = spawn(sized_reader, NULL);

    sized_chan = connect(w, r, sizeof(long), 2);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, sized_seen[0]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, sized_seen[1]);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, sized_seen[2]);
    TEST_ASSERT_EQUAL_INT(KPN_OK, sized_seen[3]);
    /* no message, at the right size: refused as kpn_send and kpn_recv
     * refuse it, and the message after it goes through */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, sized_seen[4]);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, sized_seen[5]);
    TEST_ASSERT_EQUAL_INT(42, (int)sized_got);
    TEST_ASSERT_EQUAL_INT(9, sized_untouched); /* the refused call wrote nothing */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_send_sized(NULL, &sized_got, sizeof sized_got));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_recv_sized(NULL, &sized_got, sizeof sized_got));
}

/* ------------------------------------------------------------ blocking */

/* A self-loop: a process may be both ends of one channel. */
static kpn_chan *loop_chan;
static int loop_sum;

static void self_loop(void *arg)
{
    int i, v;
    (void)arg;
    loop_sum = 0;
    for (i = 1; i <= 3; ++i)
        kpn_send(loop_chan, &i);
    for (i = 0; i < 3; ++i) {
        kpn_recv(loop_chan, &v);
        loop_sum = loop_sum * 10 + v;
    }
}

void test_a_process_may_talk_to_itself(void)
{
    kpn_proc *p = spawn(self_loop, NULL);

    loop_chan = connect(p, p, sizeof(int), 3);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(123, loop_sum);
}

void test_connect_after_an_endpoint_exited_is_refused(void)
{
    kpn_proc *a = spawn(idle, NULL), *b = spawn(idle, NULL);
    kpn_chan *c = NULL;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect(net, &c, a, b, 4, 1));
    TEST_ASSERT_NULL(c);
    /* a live writer, an exited reader */
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect(net, &c, spawn(idle, NULL), b, 4, 1));
    TEST_ASSERT_NULL(c);
    /* an exited writer, a live reader */
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect(net, &c, a, spawn(idle, NULL), 4, 1));
    TEST_ASSERT_NULL(c);
}

/* kpn.h: a call that fails leaves the net as it was; a connect refused
 * for an exited endpoint carves nothing and links no channel. */
void test_a_connect_refused_for_an_exited_endpoint_carves_nothing(void)
{
    kpn_proc *a = spawn(idle, NULL), *b = spawn(idle, NULL), *live;
    kpn_chan *c = NULL;
    kpn_stats before, after;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    live = spawn(idle, NULL);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect(net, &c, a, b, 4, 1));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect(net, &c, live, b, 4, 1));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, kpn_connect(net, &c, a, live, 4, 1));
    TEST_ASSERT_NULL(c);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(0, after.chans);
    /* the live process can still be given a channel to itself */
    c = connect(live, live, 4, 1);
    TEST_ASSERT_EQUAL_size_t(1, kpn_chan_capacity(c));
}

static kpn_status running_connect;
static kpn_proc *self_for_connect;
static void connects_while_running(void *arg)
{
    kpn_chan *c = NULL;
    (void)arg;
    running_connect = kpn_connect(net, &c, self_for_connect, self_for_connect, 4, 1);
}

void test_connect_while_running_is_refused(void)
{
    kpn_stats before, after;

    self_for_connect = spawn(connects_while_running, NULL);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, running_connect);
    /* nothing carved, no channel linked */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.arena_used, after.arena_used);
    TEST_ASSERT_EQUAL_size_t(0, after.chans);
}
