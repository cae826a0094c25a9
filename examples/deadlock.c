/* SPDX-License-Identifier: MIT */
/* The thesis's figure 3.5: a local artificial deadlock, resolved by growing a channel. */
#define _POSIX_C_SOURCE 199309L
#include "kpn.h"
#include "example.h"

/*
 * Processes A and B talk over two channels, and each sends before it
 * reads:
 *
 *                      c1 (A sends first)
 *     source ──in──► A ──────────────────► B ──out──► sink
 *                    ◄──────────────────
 *                      c2 (B sends first)
 *
 * A forwards 'messages' values from the source on c1, then reads as many
 * from c2; B sends its own 'messages' values on c2, then reads c1 and
 * forwards what it gets to the sink.  The source and the sink are the rest
 * of the network (the dashed arrows of figure 3.5), so when c1 and c2 fill
 * the deadlock is local: the cycle is A and B alone; the source and the
 * sink only wait on it from outside.
 *
 * With unbounded channels nothing ever blocks here; with 'capacity'
 * messages per channel both A and B block on a full channel and wait on
 * each other: an artificial deadlock.  The resolver finds the cycle the
 * moment it closes and grows the smallest full channel on it from the
 * reserve pool, so the run completes with exactly the messages an
 * unbounded run would deliver.  --resolve=0 shows the deadlock instead;
 * --reserve=0 shows what KPN_ERESERVE means and how to go on after it.
 */

enum { MAX_MESSAGES = 10000 };

/* A process's channels, filled in before kpn_run. */
struct ports {
    kpn_chan *in;        /* A: from the source;  sink: from B */
    kpn_chan *out;       /* source: to A;  B: to the sink */
    kpn_chan *to_peer;   /* A: c1;  B: c2 */
    kpn_chan *from_peer; /* A: c2;  B: c1 */
};

static long long messages;
static int a_got[MAX_MESSAGES], b_got[MAX_MESSAGES];
static long long a_count, b_count, sink_count;

/* The source makes A's values (1, 4, 7, ...) and B makes its own (1000,
 * 1001, ...); 'verify' computes them again from their formulas. */
static void source(void *arg)
{
    struct ports *io = arg;
    int v = 1;
    long long i;

    for (i = 0; i < messages; ++i, v += 3) /* 1, 4, 7, ... */
        EX_CHECK(kpn_send(io->out, &v));
}

static void process_a(void *arg)
{
    struct ports *io = arg;
    long long i;
    int v;

    for (i = 0; i < messages; ++i) { /* send(c1, data) ... */
        EX_CHECK(kpn_recv(io->in, &v));
        EX_CHECK(kpn_send(io->to_peer, &v));
    }
    for (i = 0; i < messages; ++i) /* ... x = rcv(c2) */
        EX_CHECK(kpn_recv(io->from_peer, &a_got[a_count++]));
}

static void process_b(void *arg)
{
    struct ports *io = arg;
    long long i;
    int v = 1000;

    for (i = 0; i < messages; ++i, ++v) /* send(c2, data): 1000, 1001, ... */
        EX_CHECK(kpn_send(io->to_peer, &v));
    for (i = 0; i < messages; ++i) { /* ... x = rcv(c1) */
        EX_CHECK(kpn_recv(io->from_peer, &b_got[b_count]));
        EX_CHECK(kpn_send(io->out, &b_got[b_count]));
        ++b_count;
    }
}

static void sink(void *arg)
{
    struct ports *io = arg;
    kpn_status s;
    int v;

    while ((s = kpn_recv(io->in, &v)) == KPN_OK)
        ++sink_count;
    if (s != KPN_EOF)
        EX_CHECK(s);
}

/* Did A get B's values and B the source's, all of them, in order?  The
 * expected values are computed here from their formulas, not copied from
 * the senders. */
static int verify(void)
{
    long long i;

    if (a_count != messages || b_count != messages || sink_count != messages)
        return 0;
    for (i = 0; i < messages; ++i)
        if (a_got[i] != 1000 + i || b_got[i] != 3 * i + 1)
            return 0;
    return 1;
}

static const char *status_word(kpn_status s)
{
    switch (s) {
    case KPN_OK: return "ok";
    case KPN_EDEADLOCK: return "deadlock";
    case KPN_ERESERVE: return "reserve";
    default: return "error";
    }
}

static void print_report(const kpn_net *net)
{
    char text[4096];
    size_t need = kpn_report(net, text, sizeof text);

    printf("kpn_report:\n%s", text);
    if (need >= sizeof text)
        printf("(report truncated: %zu bytes)\n", need);
}

/* The arena: every process, channel and the reserve pool carved from it.
 * At the largest options (4 stacks, 4 channels of 1000, a 160 KiB reserve)
 * the total is about 250 KiB. */
static unsigned char arena[256u << 10];
/* What --reserve=0 adds after KPN_ERESERVE, outside the arena. */
static unsigned char extra_reserve[4096];

int main(int argc, char **argv)
{
    ex_opt opt[] = {
        {"messages", "messages A and B each send before reading", 4, NULL, 1, MAX_MESSAGES},
        {"capacity", "messages every channel holds at first", 1, NULL, 1, 1000},
        {"reserve", "bytes of reserve pool channels grow from", 4096, NULL, 0, 160 << 10},
        {"resolve", "1: resolve artificial deadlocks; 0: stop at one", 1, NULL, 0, 1},
    };
    enum { MESSAGES, CAPACITY, RESERVE, RESOLVE };
    const size_t stack = 16u << 10;
    static struct ports src_io, a_io, b_io, sink_io;
    kpn_config cfg;
    kpn_net *net;
    kpn_proc *p_src, *p_a, *p_b, *p_sink;
    kpn_chan *c1, *c2;
    size_t capacity;
    kpn_status s;
    kpn_stats st;
    int runs = 1, verified;

    ex_parse(argc, argv,
             "Figure 3.5 of the thesis: A and B each send before they read, so full\n"
             "channels deadlock them; the resolver grows a channel and the run completes.",
             opt, (int)(sizeof opt / sizeof opt[0]));
    messages = opt[MESSAGES].value;
    capacity = (size_t)opt[CAPACITY].value;

    kpn_config_default(&cfg);
    cfg.reserve_size = (size_t)opt[RESERVE].value;
    cfg.resolve = (int)opt[RESOLVE].value;
    EX_CHECK(kpn_net_init(&net, arena, sizeof arena, &cfg));

    EX_CHECK(kpn_spawn(net, &p_src, "source", source, &src_io, stack));
    EX_CHECK(kpn_spawn(net, &p_a, "A", process_a, &a_io, stack));
    EX_CHECK(kpn_spawn(net, &p_b, "B", process_b, &b_io, stack));
    EX_CHECK(kpn_spawn(net, &p_sink, "sink", sink, &sink_io, stack));

    EX_CHECK(kpn_connect(net, &src_io.out, p_src, p_a, sizeof(int), capacity));
    EX_CHECK(kpn_connect(net, &c1, p_a, p_b, sizeof(int), capacity));
    EX_CHECK(kpn_connect(net, &c2, p_b, p_a, sizeof(int), capacity));
    EX_CHECK(kpn_connect(net, &b_io.out, p_b, p_sink, sizeof(int), capacity));
    a_io.in = src_io.out;
    a_io.to_peer = c1;
    a_io.from_peer = c2;
    b_io.to_peer = c2;
    b_io.from_peer = c1;
    sink_io.in = b_io.out;

    printf("deadlock: A and B each send %lld messages, then read %lld; every channel "
           "holds %zu; reserve %lld bytes; resolver %s\n",
           messages, messages, capacity, opt[RESERVE].value, cfg.resolve ? "on" : "off");

    s = kpn_run(net);
    printf("kpn_run: %s\n", kpn_strerror(s));
    if (s == KPN_ERESERVE) {
        /* Nothing is lost: every message and process waits where it was.
         * The report names the cycle and the bytes the growth asked for. */
        print_report(net);
        printf("adding %zu bytes of reserve with kpn_reserve_add, then kpn_run again\n",
               sizeof extra_reserve);
        EX_CHECK(kpn_reserve_add(net, extra_reserve, sizeof extra_reserve));
        s = kpn_run(net);
        ++runs;
        printf("kpn_run: %s\n", kpn_strerror(s));
    }
    if (s != KPN_OK && s != KPN_ERESERVE && !(s == KPN_EDEADLOCK && !cfg.resolve)) {
        fprintf(stderr, "deadlock: kpn_run: unexpected: %s\n", kpn_strerror(s));
        print_report(net);
        return 1;
    }

    EX_CHECK(kpn_net_stats(net, &st));
    printf("resolver: %llu detections, %llu resolutions, %llu true deadlocks\n",
           (unsigned long long)st.detections, (unsigned long long)st.resolutions,
           (unsigned long long)st.true_deadlocks);
    printf("reserve: %zu of %zu bytes in use, peak %zu\n", st.reserve_used, st.reserve_size,
           st.reserve_peak);
    printf("capacity: c1 (A -> B) %zu, c2 (B -> A) %zu, started at %zu\n",
           kpn_chan_capacity(c1), kpn_chan_capacity(c2), capacity);
    print_report(net);

    verified = verify();
    printf("A received %lld of %lld, B received %lld of %lld, sink drained %lld: %s\n",
           a_count, messages, b_count, messages, sink_count,
           verified ? "all as sent, in order" : "incomplete");
    if (s == KPN_EDEADLOCK)
        printf("(with --resolve=0 the deadlock is the expected outcome)\n");
    if (s == KPN_ERESERVE)
        fprintf(stderr, "deadlock: the reserve is still too small; try a larger --reserve\n");

    printf("deadlock: status=%s resolutions=%llu detections=%llu c1_capacity=%zu "
           "c2_capacity=%zu reserve_peak=%zu verified=%d true_deadlocks=%llu runs=%d "
           "messages=%lld capacity=%zu port=%s\n",
           status_word(s), (unsigned long long)st.resolutions,
           (unsigned long long)st.detections, kpn_chan_capacity(c1), kpn_chan_capacity(c2),
           st.reserve_peak, verified, (unsigned long long)st.true_deadlocks, runs, messages,
           capacity, KPN_EXAMPLE_PORT);
    /* A completed run that delivered the wrong messages is the only failure. */
    return s == KPN_OK && !verified ? 1 : 0;
}
