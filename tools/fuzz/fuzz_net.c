/* SPDX-License-Identifier: MIT */
/* libFuzzer target: a random network run by kpn, on one runner and on several, must agree with a sequential interpreter over unbounded queues. */

/*
 * The input is decoded (defensively: every byte is taken modulo its
 * range, a short input reads as zeros) into a network:
 *
 *   byte 0   processes      1 + b % 8
 *   byte 1   channels       b % 13
 *   byte 2   runners        1 + b % 3; the CPUs they share (cfg.cpus,
 *            which caps a learnt placement) (b / 3) % 4, 0 the port's count
 *   byte 3   bit 0 policy (WS, STATIC), bit 1 wake rule (LAST, WAKER),
 *            bits 2-3 mode (0, 1: resolve; 2: resolve + strict;
 *            3: no resolver), bits 4-5 reserve (64 KiB, none, 64 bytes,
 *            512 bytes; too little is topped up with kpn_reserve_add),
 *            bit 6 the topology comes from the generator (below),
 *            bit 7 under work stealing, learn a placement at the first
 *            steal (cfg.learn 2^30, cfg.learn_grain_ns 0), at once
 *            (cfg.learn_trial_ns 0) if byte 4's shift is even, else on
 *            a trial of 1 ns windows, which each idle look closes
 *   byte 4   bits 0-3 how far the arena's start is off 16-byte alignment;
 *            bits 4-7 a short buffer for kpn_report
 *   per channel, 3 bytes: writer % procs, reader % procs,
 *            capacity 1 + b % 4 and message size 1 + (b >> 2) % 16;
 *            bit 6 set: capacity 0, cfg.default_capacity (3) instead
 *
 * With bit 6 of byte 3 set, the channels are the edges of a random
 * layered network drawn by the benchmarks' generator (bench/randnet.c):
 * byte 0 gives at least 3 processes (a source, a layer, a sink), byte 1
 * the generator's shape (layers 1 + b % (procs - 2), back-edges
 * (b >> 3) % 4, twin channels if bit 7), then 2 bytes its seed; the
 * first 12 edges drawn become the channels, each followed by only its
 * capacity and size byte.  The programs are read as below.
 *   per process, 2 bytes: program length b % 25, repeat 1 + b % 8;
 *            then 2 bytes per instruction, an opcode and an operand
 *
 * Then, optionally, inputs: the bytes 'i' 'n', a mask (bit c: channel c,
 * of the first 8, is an input instead, connected with kpn_connect_input
 * to its reader, no process its writer), and for each input, in
 * channel order, the number of messages offered to it, b % 13.  A thread
 * outside the net offers them while kpn_run runs (kpn_offer), passing
 * over an input that is full for now, then closes each input after its
 * last; the reference reads an input as a channel that holds them all
 * and is closed.
 *
 * Opcode b % 16: 0-5 SEND, 6-11 RECV, 12 CLOSE, 13 EXIT, 14 BURN, 15 PIN;
 * for SEND and RECV, (b >> 4) % 4 picks kpn_send/kpn_recv (0, 3), the
 * _sized forms (1), or the _sized forms with a wrong size (2: KPN_EINVAL,
 * nothing moves).  A channel operand with bit 7 clear picks among the
 * channels the process writes (SEND, CLOSE) or reads (RECV); with bit 7
 * set, or when it has none, any channel: from the wrong process, the
 * call must return KPN_EPERM and change nothing.  BURN n spins a little;
 * PIN r (r = b % 4) pins the process to runner r before the run (the
 * last PIN wins; a runner that does not exist must give KPN_EINVAL).  The
 * program is run 'repeat' times; a process that reaches its end returns.
 *
 * Every SEND, RECV and CLOSE is logged by the process that made it:
 * (step, operation, status, received bytes).  A message's bytes are a
 * function of (writer, channel, sequence number), so a log that equals
 * the interpreter's shows that every message received was sent, in
 * order, exactly once.  Processes only record; every check runs on the
 * host after kpn_run, and a failed one prints what differs and traps so
 * that libFuzzer keeps the input.
 */

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpn.h"
#include "randnet.h" /* bench/randnet.c: the generator */

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_PROCS 8
#define MAX_CHANS 12
#define MAX_PROG 24
#define MAX_REPEAT 8
#define MAX_STEPS (MAX_PROG * MAX_REPEAT)
#define MAX_MSG 16
#define MAX_RUNNERS 3
/* 16 KiB: ASan's redzones make frames several times larger. */
#define STACK_SIZE (16u * 1024u)

/* ------------------------------------------------------------------ */
/* The decoded network                                                 */

enum op { OP_SEND, OP_RECV, OP_CLOSE, OP_EXIT, OP_BURN, OP_PIN };
enum variant { VAR_PLAIN, VAR_SIZED, VAR_BADSIZE };
enum mode { MODE_RESOLVE, MODE_STRICT, MODE_NORESOLVE };

struct insn {
    unsigned char op, variant, arg; /* arg: a channel, a burn count or a runner */
};

struct chan_spec {
    unsigned char writer, reader, cap, size;
    unsigned char by_default;      /* kpn_connect with capacity 0 */
    unsigned char offers;          /* an input's messages; writer OUTSIDE */
};

/* An input's writer: no process, and not WRONG_WRITER (below). */
#define OUTSIDE 0x7fu
#define MAX_OFFERS 12
#define INPUTS_MARK0 'i'
#define INPUTS_MARK1 'n'

#define DEFAULT_CAPACITY 3

struct proc_spec {
    unsigned char len, repeat;
    signed char pin;               /* -1: none */
    struct insn prog[MAX_PROG];
};

struct spec {
    unsigned nprocs, nchans, runners;
    kpn_policy policy;
    kpn_wake wake;
    enum mode mode;
    unsigned reserve;              /* index into reserve_sizes */
    unsigned shift;                /* arena start, bytes past 16-alignment */
    unsigned report_len;           /* short kpn_report buffer */
    int generated;                 /* channels drawn by rnet_generate */
    int learn_eager;               /* learn a placement at the first steal */
    unsigned cpus;                 /* cfg.cpus */
    rnet_params shape;             /* what it was asked for */
    struct chan_spec ch[MAX_CHANS];
    struct proc_spec pr[MAX_PROCS];
};

static const size_t reserve_sizes[4] = { 64u * 1024u, 0, 64, 512 };

struct reader {
    const uint8_t *p;
    size_t n;
};

static unsigned next_byte(struct reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

/* A channel operand: bit 7 clear picks among the process's own ends. */
static unsigned pick_chan(const struct spec *s, unsigned p, unsigned arg, int writes)
{
    unsigned c, own = 0, k;

    if (!(arg & 0x80)) {
        for (c = 0; c < s->nchans; ++c)
            own += (writes ? s->ch[c].writer : s->ch[c].reader) == p;
        if (own != 0) {
            k = arg % own;
            for (c = 0; c < s->nchans; ++c)
                if ((writes ? s->ch[c].writer : s->ch[c].reader) == p && k-- == 0)
                    return c;
        }
    }
    return (arg & 0x7f) % s->nchans;
}

/* Channels from the generator: the first MAX_CHANS edges of the random
 * layered network 'b1' and the seed describe. */
static void generate(struct spec *s, unsigned b1, unsigned seed)
{
    static rnet_graph g;
    unsigned c;

    if (s->nprocs < 3)
        s->nprocs = 3;
    s->generated = 1;
    s->shape.seed = seed;
    s->shape.nodes = (int)s->nprocs;
    s->shape.layers = 1 + (int)(b1 % (s->nprocs - 2));
    s->shape.back_edges = (int)((b1 >> 3) % 4);
    s->shape.twins = (b1 & 0x80) ? 256 : 0;
    if (rnet_generate(&g, &s->shape) != RNET_OK)
        g.edges = 0; /* cannot happen: 3 <= nodes <= 8, layers <= nodes - 2 */
    s->nchans = g.edges < MAX_CHANS ? (unsigned)g.edges : MAX_CHANS;
    for (c = 0; c < s->nchans; ++c) {
        s->ch[c].writer = (unsigned char)g.from[c];
        s->ch[c].reader = (unsigned char)g.to[c];
    }
}

/* Capacity and message size from one byte. */
static void chan_shape(struct chan_spec *cs, unsigned b)
{
    cs->by_default = (b & 0x40) != 0;
    cs->cap = (unsigned char)(cs->by_default ? DEFAULT_CAPACITY : 1 + b % 4);
    cs->size = (unsigned char)(1 + (b >> 2) % MAX_MSG);
}

static void decode(const uint8_t *data, size_t size, struct spec *s)
{
    struct reader r;
    unsigned b, b1, p, c, i;
    int drawn;

    r.p = data;
    r.n = size;
    memset(s, 0, sizeof *s);
    s->nprocs = 1 + next_byte(&r) % MAX_PROCS;
    b1 = next_byte(&r);
    s->nchans = b1 % (MAX_CHANS + 1);
    b = next_byte(&r);
    s->runners = 1 + b % MAX_RUNNERS;
    s->cpus = (b / MAX_RUNNERS) % 4;
    b = next_byte(&r);
    s->policy = (b & 1) ? KPN_POLICY_STATIC : KPN_POLICY_WS;
    s->wake = (b & 2) ? KPN_WAKE_WAKER : KPN_WAKE_LAST;
    s->mode = ((b >> 2) & 3) == 2 ? MODE_STRICT : ((b >> 2) & 3) == 3 ? MODE_NORESOLVE : MODE_RESOLVE;
    s->reserve = (b >> 4) & 3;
    drawn = (b & 0x40) != 0;
    s->learn_eager = (b & 0x80) != 0;
    b = next_byte(&r);
    s->shift = b & 15;
    s->report_len = b >> 4;
    if (drawn) {
        b = next_byte(&r);
        generate(s, b1, b | next_byte(&r) << 8);
        for (c = 0; c < s->nchans; ++c)
            chan_shape(&s->ch[c], next_byte(&r));
    } else {
        for (c = 0; c < s->nchans; ++c) {
            s->ch[c].writer = (unsigned char)(next_byte(&r) % s->nprocs);
            s->ch[c].reader = (unsigned char)(next_byte(&r) % s->nprocs);
            chan_shape(&s->ch[c], next_byte(&r));
        }
    }
    for (p = 0; p < s->nprocs; ++p) {
        struct proc_spec *ps = &s->pr[p];
        ps->len = (unsigned char)(next_byte(&r) % (MAX_PROG + 1));
        ps->repeat = (unsigned char)(1 + next_byte(&r) % MAX_REPEAT);
        ps->pin = -1;
        for (i = 0; i < ps->len; ++i) {
            struct insn *in = &ps->prog[i];
            unsigned op = next_byte(&r), arg = next_byte(&r), v = (op >> 4) & 3;

            in->variant = v == 1 ? VAR_SIZED : v == 2 ? VAR_BADSIZE : VAR_PLAIN;
            op &= 15;
            in->op = op <= 5 ? OP_SEND : op <= 11 ? OP_RECV : op == 12 ? OP_CLOSE :
                     op == 13 ? OP_EXIT : op == 14 ? OP_BURN : OP_PIN;
            if (in->op == OP_SEND || in->op == OP_RECV || in->op == OP_CLOSE) {
                if (s->nchans == 0) {
                    in->op = OP_BURN; /* nothing to talk to */
                    in->arg = 0;
                } else {
                    in->arg = (unsigned char)pick_chan(s, p, arg, in->op != OP_RECV);
                }
            } else if (in->op == OP_PIN) {
                in->arg = (unsigned char)(arg % 4);
                ps->pin = (signed char)in->arg;
            } else {
                in->arg = (unsigned char)(arg % 32);
            }
        }
    }
    /* Inputs: only after a marker, so that no input written before
     * there were inputs reads differently now. */
    if (next_byte(&r) == INPUTS_MARK0 && next_byte(&r) == INPUTS_MARK1) {
        unsigned mask = next_byte(&r);
        for (c = 0; c < s->nchans && c < 8; ++c)
            if (mask >> c & 1) {
                s->ch[c].writer = OUTSIDE;
                s->ch[c].offers = (unsigned char)(next_byte(&r) % (MAX_OFFERS + 1));
            }
    }
}

/* ------------------------------------------------------------------ */
/* Messages and logs                                                   */

/* The bytes of message 'seq' on channel 'ch' from process 'writer'.  A
 * send from the wrong process uses a writer no channel has, so if it
 * were delivered the receiver's log would show it. */
static void payload(unsigned char *out, unsigned size, unsigned writer, unsigned ch, uint32_t seq)
{
    uint64_t x = ((uint64_t)writer << 40) ^ ((uint64_t)ch << 32) ^ seq;
    unsigned i;

    for (i = 0; i < size; ++i) {
        if (i % 8 == 0) {
            /* splitmix64 */
            uint64_t z = (x += 0x9e3779b97f4a7c15ull);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            x ^= z ^ (z >> 31);
        }
        out[i] = (unsigned char)(x >> (8 * (i % 8)));
    }
}

#define WRONG_WRITER 0x80u
#define WRONG_SEQ 0xffffffu

/* Not kpn statuses: what a process saw that no status describes. */
#define ST_CLOBBERED 100 /* a failed recv wrote into the caller's buffer */
#define ST_OVERRUN 101   /* a recv wrote past the message size */

struct obs {
    uint16_t step;       /* repeat * len + index */
    uint8_t op, status;
    uint8_t data[MAX_MSG]; /* a received message, zero-padded */
};

struct log {
    unsigned n;
    struct obs e[MAX_STEPS];
};

static void record(struct log *lg, unsigned step, unsigned op, int status,
                   const unsigned char *data, unsigned size)
{
    struct obs *o = &lg->e[lg->n++];

    memset(o, 0, sizeof *o);
    o->step = (uint16_t)step;
    o->op = (uint8_t)op;
    o->status = (uint8_t)status;
    if (data != NULL)
        memcpy(o->data, data, size);
}

/* ------------------------------------------------------------------ */
/* The reference: the same programs, sequentially, unbounded queues     */

struct ref {
    struct log log[MAX_PROCS];
    int exited[MAX_PROCS];
    int wait[MAX_PROCS];           /* channel a blocked process reads; -1 */
    unsigned queued[MAX_CHANS];    /* messages left in the channel */
    int closed[MAX_CHANS];
    unsigned blocked, cycles;      /* processes blocked for ever; read-only cycles */
    uint64_t sends, discarded;     /* sends that returned KPN_OK; never received */
    uint64_t input_left;           /* of those, offers an exited reader left */
};

/*
 * Round-robin: each process runs until it blocks on an empty open channel
 * or ends, until a whole round moves nothing.  kpn's rules, with queues
 * that never fill: a send checks the writer (KPN_EPERM), then 'closed'
 * (KPN_ESTATE), then drops the message if the reader has exited; a recv
 * on a closed, drained channel is KPN_EOF; a process that ends closes
 * what it writes; a process that waits on a read no one can satisfy
 * stays blocked (Kahn termination).
 */
static void interpret(const struct spec *s, struct ref *ref)
{
    unsigned step[MAX_PROCS], enq[MAX_CHANS], deq[MAX_CHANS], p, c;
    uint64_t drops = 0;
    int progress;

    memset(ref, 0, sizeof *ref);
    memset(step, 0, sizeof step);
    memset(enq, 0, sizeof enq);
    memset(deq, 0, sizeof deq);
    for (p = 0; p < s->nprocs; ++p)
        ref->wait[p] = -1;
    /* an input holds every message offered to it, and is closed */
    for (c = 0; c < s->nchans; ++c)
        if (s->ch[c].writer == OUTSIDE) {
            enq[c] = s->ch[c].offers;
            ref->closed[c] = 1;
        }

    do {
        progress = 0;
        for (p = 0; p < s->nprocs; ++p) {
            const struct proc_spec *ps = &s->pr[p];
            unsigned total = (unsigned)ps->len * ps->repeat;

            while (!ref->exited[p]) {
                const struct insn *in;
                const struct chan_spec *cs;
                unsigned char msg[MAX_MSG];
                int ended = 0;

                if (step[p] == total) {
                    ended = 1;
                } else {
                    in = &ps->prog[step[p] % ps->len];
                    cs = in->op <= OP_CLOSE ? &s->ch[in->arg] : NULL;
                    switch (in->op) {
                    case OP_SEND:
                        if (in->variant == VAR_BADSIZE) {
                            record(&ref->log[p], step[p], OP_SEND, KPN_EINVAL, NULL, 0);
                        } else if (cs->writer != p) {
                            record(&ref->log[p], step[p], OP_SEND, KPN_EPERM, NULL, 0);
                        } else if (ref->closed[in->arg]) {
                            record(&ref->log[p], step[p], OP_SEND, KPN_ESTATE, NULL, 0);
                        } else {
                            if (ref->exited[cs->reader])
                                drops++;
                            else
                                enq[in->arg]++;
                            ref->sends++;
                            record(&ref->log[p], step[p], OP_SEND, KPN_OK, NULL, 0);
                        }
                        break;
                    case OP_RECV:
                        if (in->variant == VAR_BADSIZE) {
                            record(&ref->log[p], step[p], OP_RECV, KPN_EINVAL, NULL, 0);
                        } else if (cs->reader != p) {
                            record(&ref->log[p], step[p], OP_RECV, KPN_EPERM, NULL, 0);
                        } else if (deq[in->arg] < enq[in->arg]) {
                            payload(msg, cs->size, cs->writer, in->arg, deq[in->arg]++);
                            record(&ref->log[p], step[p], OP_RECV, KPN_OK, msg, cs->size);
                        } else if (ref->closed[in->arg]) {
                            record(&ref->log[p], step[p], OP_RECV, KPN_EOF, NULL, 0);
                        } else {
                            ref->wait[p] = in->arg;
                            goto next_process; /* blocked: retry next round */
                        }
                        break;
                    case OP_CLOSE:
                        if (cs->writer != p) {
                            record(&ref->log[p], step[p], OP_CLOSE, KPN_EPERM, NULL, 0);
                        } else if (ref->closed[in->arg]) {
                            record(&ref->log[p], step[p], OP_CLOSE, KPN_ESTATE, NULL, 0);
                        } else {
                            ref->closed[in->arg] = 1;
                            record(&ref->log[p], step[p], OP_CLOSE, KPN_OK, NULL, 0);
                        }
                        break;
                    case OP_EXIT:
                        ended = 1;
                        break;
                    default: /* BURN, PIN: nothing to see */
                        break;
                    }
                }
                progress = 1;
                ref->wait[p] = -1;
                if (ended) {
                    ref->exited[p] = 1;
                    for (c = 0; c < s->nchans; ++c)
                        if (s->ch[c].writer == p)
                            ref->closed[c] = 1;
                } else {
                    step[p]++;
                }
            }
        next_process:;
        }
    } while (progress);

    ref->discarded = drops;
    for (c = 0; c < s->nchans; ++c) {
        ref->queued[c] = enq[c] - deq[c];
        if (ref->exited[s->ch[c].reader])
            ref->discarded += ref->queued[c];
        if (ref->exited[s->ch[c].reader] && s->ch[c].writer == OUTSIDE)
            ref->input_left += ref->queued[c];
    }
    /* Each blocked process waits on the writer of its channel, itself
     * blocked (an exited writer would have closed it): a functional
     * graph, whose cycles are the true deadlocks kpn must count. */
    {
        unsigned color[MAX_PROCS];
        memset(color, 0, sizeof color);
        for (p = 0; p < s->nprocs; ++p) {
            unsigned q = p;
            if (ref->exited[p])
                continue;
            ref->blocked++;
            while (!ref->exited[q] && color[q] == 0) {
                color[q] = p + 1;
                q = s->ch[ref->wait[q]].writer;
            }
            if (!ref->exited[q] && color[q] == p + 1)
                ref->cycles++;
        }
    }
}

/* ------------------------------------------------------------------ */
/* The same network on kpn                                             */

struct run;

struct pctx {
    unsigned id;
    const struct spec *spec;
    struct run *run;
};

struct run {
    unsigned runners;
    kpn_net *net;
    kpn_proc *proc[MAX_PROCS];
    kpn_chan *chan[MAX_CHANS];
    uint32_t sent[MAX_CHANS];      /* written by the channel's writer only */
    struct log log[MAX_PROCS];     /* written by its process only */
    struct pctx ctx[MAX_PROCS];
    /* the world outside (outside_main), while a kpn_run runs */
    const struct spec *spec;
    unsigned offered[MAX_CHANS];   /* an input's messages offered so far */
    int in_closed[MAX_CHANS];
    int outside_done;              /* kpn_run has returned: give up on a full input */
    int outside_bad;               /* a status kpn_offer or kpn_input_close must not return */
    pthread_t outside;
};

static const char *const proc_names[MAX_PROCS] = { "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7" };

#define CANARY 0xc5u

static int untouched(const unsigned char *buf, size_t from, size_t to)
{
    size_t i;
    for (i = from; i < to; ++i)
        if (buf[i] != CANARY)
            return 0;
    return 1;
}

static void burn(unsigned n)
{
    volatile unsigned sink = 0;
    unsigned i;

    for (i = 0; i < n * 256; ++i)
        sink += i;
    (void)sink;
}

/* Runs on a kpn stack: calls the library and logs, never checks. */
static void proc_main(void *arg)
{
    struct pctx *x = arg;
    const struct spec *s = x->spec;
    const struct proc_spec *ps = &s->pr[x->id];
    struct run *r = x->run;
    struct log *lg = &r->log[x->id];
    unsigned total = (unsigned)ps->len * ps->repeat, step;
    unsigned char buf[2 * MAX_MSG];
    kpn_status st;

    for (step = 0; step < total; ++step) {
        const struct insn *in = &ps->prog[step % ps->len];
        const struct chan_spec *cs = in->op <= OP_CLOSE ? &s->ch[in->arg] : NULL;
        kpn_chan *c = in->op <= OP_CLOSE ? r->chan[in->arg] : NULL;
        int mine;

        switch (in->op) {
        case OP_SEND:
            mine = cs->writer == x->id;
            if (mine)
                payload(buf, cs->size, x->id, in->arg, r->sent[in->arg]);
            else
                payload(buf, cs->size, x->id | WRONG_WRITER, in->arg, WRONG_SEQ);
            if (in->variant == VAR_SIZED)
                st = kpn_send_sized(c, buf, cs->size);
            else if (in->variant == VAR_BADSIZE)
                st = kpn_send_sized(c, buf, cs->size + 1u);
            else
                st = kpn_send(c, buf);
            if (st == KPN_OK && mine)
                r->sent[in->arg]++;
            record(lg, step, OP_SEND, st, NULL, 0);
            break;
        case OP_RECV:
            memset(buf, CANARY, sizeof buf);
            if (in->variant == VAR_SIZED)
                st = kpn_recv_sized(c, buf, cs->size);
            else if (in->variant == VAR_BADSIZE)
                st = kpn_recv_sized(c, buf, cs->size + 1u);
            else
                st = kpn_recv(c, buf);
            if (st == KPN_OK) {
                if (!untouched(buf, cs->size, sizeof buf))
                    record(lg, step, OP_RECV, ST_OVERRUN, NULL, 0);
                else
                    record(lg, step, OP_RECV, st, buf, cs->size);
            } else {
                record(lg, step, OP_RECV, untouched(buf, 0, sizeof buf) ? (int)st : ST_CLOBBERED, NULL, 0);
            }
            break;
        case OP_CLOSE:
            record(lg, step, OP_CLOSE, kpn_close(c), NULL, 0);
            break;
        case OP_EXIT:
            return;
        case OP_BURN:
            burn(in->arg);
            break;
        default:
            break;
        }
    }
}

/* The world outside the net: a thread that, while kpn_run runs, offers
 * each input its messages in turn and closes it after the last.  An
 * input found full is passed over for the others, so that a reader
 * waiting on one is never kept waiting by another.  Now and then it
 * yields after an offer, so that the net runs dry and waits for input.
 * Once kpn_run has returned, an input still full is left as it is: its
 * reader waits elsewhere for ever, or the run stopped (KPN_ERESERVE, a
 * strict deadlock), and the next kpn_run starts the thread again. */
static void *outside_main(void *arg)
{
    struct run *r = arg;
    const struct spec *s = r->spec;
    unsigned char buf[MAX_MSG];

    for (;;) {
        unsigned c, open = 0;
        int moved = 0;
        /* Looked at before the pass, not after: an input found full in
         * a pass that began while kpn_run ran may have been emptied
         * since, and only a pass begun after the run's end sees what
         * it left. */
        int done = __atomic_load_n(&r->outside_done, __ATOMIC_ACQUIRE);

        for (c = 0; c < s->nchans; ++c) {
            const struct chan_spec *cs = &s->ch[c];
            kpn_status st;

            if (cs->writer != OUTSIDE || r->in_closed[c])
                continue;
            if (r->offered[c] < cs->offers) {
                payload(buf, cs->size, OUTSIDE, c, r->offered[c]);
                st = kpn_offer(r->chan[c], buf);
                if (st == KPN_OK) {
                    moved = 1;
                    if (++r->offered[c] % 3 == c % 3)
                        sched_yield();
                } else if (st != KPN_EFULL) {
                    r->outside_bad = (int)st;
                }
            }
            if (r->offered[c] == cs->offers) {
                st = kpn_input_close(r->chan[c]);
                if (st != KPN_OK)
                    r->outside_bad = (int)st;
                r->in_closed[c] = 1;
                moved = 1;
            } else {
                open++;
            }
        }
        if (open == 0)
            return NULL;
        if (!moved) {
            if (done)
                return NULL;
            sched_yield();
        }
    }
}

static int inputs_open(const struct spec *s, const struct run *r)
{
    unsigned c;

    for (c = 0; c < s->nchans; ++c)
        if (s->ch[c].writer == OUTSIDE && !r->in_closed[c])
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Failing loudly, from the host                                       */

static int verbose;
static const struct spec *cur_spec;
static const char *cur_phase = "";
static unsigned cur_runners;
/* the net whose run is being checked: a failure prints its state */
static kpn_net *cur_net;
static unsigned cur_calls; /* of kpn_run on it, KPN_ETHREAD's included */

static const char *op_name(unsigned op)
{
    static const char *const names[] = { "send", "recv", "close", "exit", "burn", "pin" };
    return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static void describe(FILE *f, const struct spec *s)
{
    static const char *const modes[] = { "resolve", "strict", "no resolver" };
    unsigned p, c, i;

    fprintf(f, "network: %u processes, %u channels, %u runners (cfg.cpus %u), %s, wake %s, %s, reserve %zu, shift %u%s\n",
            s->nprocs, s->nchans, s->runners, s->cpus, s->policy == KPN_POLICY_WS ? "ws" : "static",
            s->wake == KPN_WAKE_LAST ? "last" : "waker", modes[s->mode],
            reserve_sizes[s->reserve], s->shift,
            !s->learn_eager  ? ""
            : s->shift & 1 ? ", learning at the first steal on trial"
                           : ", learning at the first steal");
    if (s->generated)
        fprintf(f, "  drawn by rnet_generate: seed %llu, %d layers, %d back-edges asked, twins %d/1024\n",
                (unsigned long long)s->shape.seed, s->shape.layers, s->shape.back_edges,
                s->shape.twins);
    for (c = 0; c < s->nchans; ++c) {
        if (s->ch[c].writer == OUTSIDE)
            fprintf(f, "  c%u: input, %u offers", c, s->ch[c].offers);
        else
            fprintf(f, "  c%u: p%u", c, s->ch[c].writer);
        fprintf(f, " -> p%u, capacity %u%s, %u bytes\n", s->ch[c].reader, s->ch[c].cap,
                s->ch[c].by_default ? " (default)" : "", s->ch[c].size);
    }
    for (p = 0; p < s->nprocs; ++p) {
        const struct proc_spec *ps = &s->pr[p];
        fprintf(f, "  p%u (x%u", p, ps->repeat);
        if (ps->pin >= 0)
            fprintf(f, ", pin %d", ps->pin);
        fprintf(f, "):");
        for (i = 0; i < ps->len; ++i) {
            const struct insn *in = &ps->prog[i];
            fprintf(f, " %s", op_name(in->op));
            if (in->op <= OP_RECV)
                fprintf(f, "%s c%u", in->variant == VAR_SIZED ? "_sized" :
                        in->variant == VAR_BADSIZE ? "_badsize" : "", in->arg);
            else if (in->op == OP_CLOSE)
                fprintf(f, " c%u", in->arg);
            else if (in->op != OP_EXIT)
                fprintf(f, " %u", in->arg);
            fputs(i + 1 < ps->len ? ";" : "", f);
        }
        fprintf(f, "\n");
    }
}

static void dump_obs(const char *who, const struct obs *o)
{
    unsigned i;

    fprintf(stderr, "    %s: step %u %s status %u data", who, o->step, op_name(o->op), o->status);
    for (i = 0; i < MAX_MSG; ++i)
        fprintf(stderr, " %02x", o->data[i]);
    fprintf(stderr, "\n");
}

/* What a run left: kpn_report's account (each process's state and what
 * it waits on, each channel's fill) and the counts a race shows in
 * (steals, placements, the runners' switches). */
static void dump_net(const kpn_net *net)
{
    static char report[16384];
    kpn_stats st;
    unsigned i;

    (void)kpn_report(net, report, sizeof report);
    fprintf(stderr, "  the net as the run left it, after %u kpn_run call(s):\n%s", cur_calls, report);
    if (kpn_net_stats(net, &st) != KPN_OK)
        return;
    fprintf(stderr, "  messages %llu, discarded %llu, steals %llu, placements %llu (on %u runners), "
            "resolutions %llu, switches",
            (unsigned long long)st.messages, (unsigned long long)st.discarded,
            (unsigned long long)st.steals, (unsigned long long)st.placements,
            st.placement_runners, (unsigned long long)st.resolutions);
    for (i = 0; i < st.runners; ++i)
        fprintf(stderr, " %llu", (unsigned long long)st.runner_switches[i]);
    fprintf(stderr, "\n");
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4), noreturn))
#endif
static void fail(int line, const char *cond, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "\nfuzz_net: check failed (fuzz_net.c:%d: %s)\n  ", line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  during: %s, on %u runner(s)\n", cur_phase, cur_runners);
    if (cur_spec != NULL)
        describe(stderr, cur_spec);
    if (cur_net != NULL)
        dump_net(cur_net);
    fflush(stderr);
    __builtin_trap();
}

#define CHECK(cond, ...) \
    do { if (!(cond)) fail(__LINE__, #cond, __VA_ARGS__); } while (0)

/* Every process's log must be the reference's ('full') or a prefix of it. */
static void compare_logs(const struct spec *s, const struct run *r, const struct ref *ref, int full)
{
    unsigned p, i;

    for (p = 0; p < s->nprocs; ++p) {
        const struct log *a = &r->log[p], *b = &ref->log[p];
        unsigned n = a->n < b->n ? a->n : b->n;
        for (i = 0; i < n; ++i) {
            if (memcmp(&a->e[i], &b->e[i], sizeof a->e[i]) != 0) {
                fprintf(stderr, "p%u, observation %u:\n", p, i);
                dump_obs("kpn", &a->e[i]);
                dump_obs("reference", &b->e[i]);
                CHECK(0, "p%u's observation %u differs from the reference", p, i);
            }
        }
        CHECK(a->n <= b->n, "p%u made %u observations, the reference %u", p, a->n, b->n);
        if (full)
            CHECK(a->n == b->n, "p%u made %u observations, the reference %u", p, a->n, b->n);
    }
}

/* kpn_report as snprintf: the same length whatever the buffer, a prefix
 * of the whole account, always terminated, nothing written past 'len'. */
static void check_report(const struct spec *s, kpn_net *net)
{
    static char full[16384], part[32];
    size_t n, m, len = s->report_len;

    n = kpn_report(net, full, sizeof full);
    CHECK(n < sizeof full, "a report of %zu bytes", n);
    CHECK(full[n] == '\0' && strlen(full) == n, "kpn_report returned %zu, wrote %zu", n, strlen(full));
    memset(part, 'x', sizeof part);
    m = kpn_report(net, part, len);
    CHECK(m == n, "kpn_report into %zu bytes returned %zu, into plenty %zu", len, m, n);
    if (len > 0) {
        size_t k = n < len - 1 ? n : len - 1;
        CHECK(part[k] == '\0' && memcmp(part, full, k) == 0, "kpn_report into %zu bytes is not a prefix", len);
    }
    CHECK(part[len] == 'x' && part[sizeof part - 1] == 'x', "kpn_report wrote past %zu bytes", len);
}

/* From the host thread, no process is running: the channel calls must
 * refuse, and change nothing (the logs would show a stray message). */
static void check_host_calls(const struct spec *s, struct run *r)
{
    unsigned char buf[2 * MAX_MSG];

    if (s->nchans == 0)
        return;
    memset(buf, CANARY, sizeof buf);
    CHECK(kpn_send(r->chan[0], buf) == KPN_EPERM, "kpn_send from the host");
    CHECK(kpn_send_sized(r->chan[0], buf, s->ch[0].size + 1u) == KPN_EINVAL, "kpn_send_sized, wrong size");
    CHECK(kpn_recv(r->chan[0], buf) == KPN_EPERM, "kpn_recv from the host");
    CHECK(untouched(buf, 0, sizeof buf), "kpn_recv from the host wrote the buffer");
    CHECK(kpn_close(r->chan[0]) == KPN_EPERM, "kpn_close from the host");
    CHECK(kpn_send(NULL, buf) == KPN_EINVAL && kpn_recv(r->chan[0], NULL) == KPN_EINVAL, "NULL arguments");
}

/* The whole final state, once kpn says the run is over. */
static void check_final(const struct spec *s, struct run *r, const struct ref *ref, unsigned runners)
{
    kpn_stats st;
    uint64_t home_switches[MAX_RUNNERS] = { 0 }, total = 0, input_left = 0;
    unsigned p, c, i, homed = 0;

    compare_logs(s, r, ref, 1);
    CHECK(kpn_net_stats(r->net, &st) == KPN_OK, "kpn_net_stats");
    /* What an exited reader left of its inputs counts as discarded; how
     * much that is depends on when the offers came (one made after it
     * exited is dropped uncounted), so it is set aside here. */
    for (c = 0; c < s->nchans; ++c)
        if (s->ch[c].writer == OUTSIDE && ref->exited[s->ch[c].reader])
            input_left += kpn_chan_fill(r->chan[c]);
    CHECK(input_left <= ref->input_left && input_left <= st.discarded,
          "exited readers left %llu offered messages, the reference %llu",
          (unsigned long long)input_left, (unsigned long long)ref->input_left);
    st.discarded -= input_left;
    CHECK(st.procs == s->nprocs && st.chans == s->nchans, "%zu processes, %zu channels", st.procs, st.chans);
    CHECK(st.procs_exited == s->nprocs - ref->blocked, "%zu exited, the reference %u",
          st.procs_exited, s->nprocs - ref->blocked);
    CHECK(st.procs_blocked_read == ref->blocked, "%zu blocked reading, the reference %u",
          st.procs_blocked_read, ref->blocked);
    CHECK(st.procs_blocked_write == 0, "%zu blocked writing", st.procs_blocked_write);
    CHECK(st.discarded == ref->discarded - ref->input_left, "%llu discarded, the reference %llu",
          (unsigned long long)st.discarded, (unsigned long long)(ref->discarded - ref->input_left));
    CHECK(st.messages <= ref->sends && st.messages + ref->discarded - ref->input_left >= ref->sends,
          "%llu messages copied for %llu sends, %llu discarded", (unsigned long long)st.messages,
          (unsigned long long)ref->sends, (unsigned long long)ref->discarded);
    if (s->mode != MODE_NORESOLVE)
        CHECK(st.true_deadlocks == ref->cycles, "%llu true deadlocks, the reference has %u cycles",
              (unsigned long long)st.true_deadlocks, ref->cycles);
    else
        CHECK(st.resolutions == 0 && st.true_deadlocks == 0, "the resolver is off but ran");
    CHECK(st.runners == runners, "stats say %u runners", st.runners);
    CHECK(st.placements == 0 || (s->policy == KPN_POLICY_WS && runners > 1),
          "%llu placements learnt on %u runner(s), policy %d", (unsigned long long)st.placements,
          runners, (int)s->policy);
    CHECK(st.placement_runners == 0 || (st.placements > 0 && st.placement_runners <= runners),
          "a placement in force on %u of %u runners, %llu learnt", st.placement_runners, runners,
          (unsigned long long)st.placements);
    CHECK(st.reserve_used <= st.reserve_peak && st.reserve_peak <= st.reserve_size,
          "reserve used %zu, peak %zu, size %zu", st.reserve_used, st.reserve_peak, st.reserve_size);
    CHECK(kpn_net_fault(r->net) == NULL, "a stack fault");
    for (i = 0; i < KPN_MAX_RUNNERS; ++i) {
        total += st.runner_switches[i];
        CHECK(i < runners || st.runner_switches[i] == 0, "runner %u of %u switched", i, runners);
    }
    CHECK(kpn_proc_next(r->net, r->proc[s->nprocs - 1]) == NULL, "kpn_proc_next after the last");
    CHECK(total == st.switches, "runners switched %llu times, processes %llu",
          (unsigned long long)total, (unsigned long long)st.switches);

    CHECK(st.arena_used + st.arena_free <= st.arena_size, "arena: %zu used, %zu free, %zu in all",
          st.arena_used, st.arena_free, st.arena_size);

    for (p = 0; p < s->nprocs; ++p) {
        kpn_proc_stats ps;
        unsigned home;
        CHECK(kpn_proc_next(r->net, p == 0 ? NULL : r->proc[p - 1]) == r->proc[p], "kpn_proc_next: not p%u", p);
        CHECK(kpn_proc_stats_get(r->proc[p], &ps) == KPN_OK, "kpn_proc_stats_get");
        CHECK(strcmp(ps.name, proc_names[p]) == 0, "p%u is named '%s'", p, ps.name);
        if (ref->exited[p])
            CHECK(ps.state == KPN_PROC_EXITED && ps.waiting_on == NULL, "p%u is in state %d, not exited", p, (int)ps.state);
        else
            CHECK(ps.state == KPN_PROC_BLOCKED_READ && ps.waiting_on == r->chan[ref->wait[p]],
                  "p%u is in state %d, not blocked reading c%d", p, (int)ps.state, ref->wait[p]);
        CHECK(ps.stack_peak <= ps.stack_size && ps.stack_size >= STACK_SIZE, "p%u stack %zu of %zu",
              p, ps.stack_peak, ps.stack_size);
        /* spawn order places process i on runner i mod runners, a pin elsewhere */
        home = s->pr[p].pin >= 0 && (unsigned)s->pr[p].pin < runners ? (unsigned)s->pr[p].pin : homed;
        homed = (homed + 1) % runners;
        home_switches[home] += ps.switches;
    }
    /* Under STATIC nothing moves: each runner dispatched exactly its own. */
    if (s->policy == KPN_POLICY_STATIC || runners == 1)
        for (i = 0; i < runners; ++i)
            CHECK(home_switches[i] == st.runner_switches[i], "runner %u dispatched %llu, its processes %llu",
                  i, (unsigned long long)st.runner_switches[i], (unsigned long long)home_switches[i]);

    for (c = 0; c < s->nchans; ++c) {
        size_t cap = kpn_chan_capacity(r->chan[c]), fill = kpn_chan_fill(r->chan[c]);
        CHECK(cap >= s->ch[c].cap && fill <= cap, "c%u: capacity %zu, fill %zu", c, cap, fill);
        if (s->mode == MODE_NORESOLVE || st.resolutions == 0)
            CHECK(cap == s->ch[c].cap, "c%u grew to %zu with no resolution", c, cap);
        /* what an exited reader left depends on the schedule; the rest
         * not, but for an input the world outside gave up on (full, its
         * reader waiting elsewhere for ever) */
        if (!ref->exited[s->ch[c].reader] &&
            (s->ch[c].writer != OUTSIDE || r->offered[c] == s->ch[c].offers))
            CHECK(fill == ref->queued[c], "c%u holds %zu messages, the reference %u", c, fill, ref->queued[c]);
        else if (!ref->exited[s->ch[c].reader])
            CHECK(fill == cap && fill < ref->queued[c], "input c%u holds %zu of %zu, the reference %u",
                  c, fill, cap, ref->queued[c]);
    }
}

/* ------------------------------------------------------------------ */
/* Memory: static, and fenced with ASan poison                         */

#define ARENA_BYTES (2u * 1024u * 1024u)
#define POOL_BYTES (1024u * 1024u)
#define FENCE 64u

static unsigned char arena_mem[ARENA_BYTES];
static unsigned char pool_mem[POOL_BYTES];
static struct run runs[2];
static struct ref reference;

/* kpn_run, with the world outside offering to the inputs meanwhile. */
static kpn_status run_once(const struct spec *s, struct run *r)
{
    kpn_status st;
    int outside = inputs_open(s, r);

    if (outside) {
        r->outside_done = 0;
        CHECK(pthread_create(&r->outside, NULL, outside_main, r) == 0, "no thread for the inputs");
    }
    st = kpn_run(r->net);
    if (outside) {
        __atomic_store_n(&r->outside_done, 1, __ATOMIC_RELEASE);
        pthread_join(r->outside, NULL);
        CHECK(r->outside_bad == 0, "an input refused an offer or its close: %s",
              kpn_strerror((kpn_status)r->outside_bad));
    }
    return st;
}

/* Build the network on 'runners' runners and run it to the end;
 * returns 0 if the system refused threads (nothing to compare). */
static int run_net(const struct spec *s, struct run *r, const struct ref *ref, unsigned runners)
{
    kpn_config cfg;
    size_t need, pool_used = 0, chunk = 64;
    unsigned char *base;
    unsigned p, c, rounds = 0, tries = 0;
    uint64_t deadlocks = 0;
    kpn_status st, st2;
    kpn_stats stats;
    int full, inputs = 0;

    cur_runners = runners;
    memset(r, 0, sizeof *r);
    r->runners = runners;
    r->spec = s;
    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.policy = s->policy;
    cfg.wake = s->wake;
    cfg.resolve = s->mode != MODE_NORESOLVE;
    cfg.strict = s->mode == MODE_STRICT;
    cfg.reserve_size = reserve_sizes[s->reserve];
    cfg.default_capacity = DEFAULT_CAPACITY;
    cfg.cpus = s->cpus;
    if (s->learn_eager) {
        cfg.learn = 1u << 30; /* a steal in 2^30 messages is enough */
        cfg.learn_grain_ns = 0;
        cfg.learn_trial_ns = s->shift & 1;
    }

    /* The sizing functions must be upper bounds: the arena is exactly
     * their sum, placed against the end of the buffer (ASan guards what
     * follows) and off 16-alignment by 'shift'. */
    need = kpn_size_net(&cfg);
    CHECK(need != 0, "kpn_size_net refuses a valid configuration");
    for (p = 0; p < s->nprocs; ++p)
        need += kpn_size_proc(STACK_SIZE, strlen(proc_names[p]));
    for (c = 0; c < s->nchans; ++c) {
        need += kpn_size_chan(s->ch[c].size, s->ch[c].cap);
        if (s->ch[c].writer == OUTSIDE && !inputs)
            inputs = 1, need += kpn_size_proc(0, 0); /* kpn.h: the first input's share */
    }
    CHECK(need + 32 <= ARENA_BYTES, "the harness's arena is too small for %zu bytes", need);
    base = arena_mem + ARENA_BYTES - need - 16;
    base -= (uintptr_t)base % 16;
    base += s->shift;
    UNPOISON(arena_mem, ARENA_BYTES);
    POISON(arena_mem, (size_t)(base - arena_mem));
    POISON(base + need, (size_t)(arena_mem + ARENA_BYTES - (base + need)));
    UNPOISON(pool_mem, POOL_BYTES);

    cur_phase = "building";
    cur_net = NULL;
    cur_calls = 0;
    if (cfg.reserve_size == 64) {
        /* kpn.h: a reserve_size from 1 to 63 is a caller mistake */
        cfg.reserve_size = 63;
        CHECK(kpn_net_init(&r->net, base, need, &cfg) == KPN_EINVAL, "reserve_size %zu accepted", cfg.reserve_size);
        cfg.reserve_size = 64;
    }
    st = kpn_net_init(&r->net, base, need, &cfg);
    if (st == KPN_ETHREAD)
        return 0;
    CHECK(st == KPN_OK, "kpn_net_init: %s", kpn_strerror(st));
    for (p = 0; p < s->nprocs; ++p) {
        r->ctx[p].id = p;
        r->ctx[p].spec = s;
        r->ctx[p].run = r;
        st = kpn_spawn(r->net, &r->proc[p], proc_names[p], proc_main, &r->ctx[p], STACK_SIZE);
        CHECK(st == KPN_OK, "kpn_spawn p%u: %s", p, kpn_strerror(st));
    }
    for (c = 0; c < s->nchans; ++c) {
        size_t cap = s->ch[c].by_default ? 0 : s->ch[c].cap;
        if (s->ch[c].writer == OUTSIDE)
            st = kpn_connect_input(r->net, &r->chan[c], r->proc[s->ch[c].reader], s->ch[c].size, cap);
        else
            st = kpn_connect(r->net, &r->chan[c], r->proc[s->ch[c].writer], r->proc[s->ch[c].reader],
                             s->ch[c].size, cap);
        CHECK(st == KPN_OK, "kpn_connect c%u: %s", c, kpn_strerror(st));
    }
    for (p = 0; p < s->nprocs; ++p) {
        if (s->pr[p].pin < 0)
            continue;
        st = kpn_proc_pin(r->proc[p], (unsigned)s->pr[p].pin);
        CHECK(st == ((unsigned)s->pr[p].pin < runners ? KPN_OK : KPN_EINVAL),
              "kpn_proc_pin(p%u, %d): %s", p, s->pr[p].pin, kpn_strerror(st));
    }
    check_host_calls(s, r);

    for (;;) {
        cur_phase = "kpn_run";
        cur_net = NULL;
        cur_calls++;
        st = run_once(s, r);
        cur_phase = "checking";
        cur_net = r->net;
        if (st == KPN_ETHREAD && ++tries < 3)
            continue; /* nothing ran; the system may have been busy */
        if (st == KPN_ETHREAD)
            return 0;
        CHECK(st == KPN_OK || st == KPN_ERESERVE || st == KPN_EDEADLOCK,
              "kpn_run returned %d: %s", (int)st, kpn_strerror(st));
        CHECK(++rounds <= 64, "kpn_run never settles");
        check_report(s, r->net);
        if (st == KPN_ERESERVE) {
            /* Nothing is lost: give memory and go on. */
            CHECK(s->mode != MODE_NORESOLVE, "KPN_ERESERVE with the resolver off");
            compare_logs(s, r, ref, 0);
            CHECK(pool_used + chunk + FENCE <= POOL_BYTES, "KPN_ERESERVE after %zu bytes of reserve", pool_used);
            /* kpn.h: fewer than 64 usable bytes is a caller mistake */
            st = kpn_reserve_add(r->net, pool_mem + pool_used, 63);
            CHECK(st == KPN_EINVAL, "kpn_reserve_add of 63 bytes: %s", kpn_strerror(st));
            st = kpn_reserve_add(r->net, pool_mem + pool_used, chunk);
            CHECK(st == KPN_OK, "kpn_reserve_add: %s", kpn_strerror(st));
            POISON(pool_mem + pool_used + chunk, FENCE);
            pool_used += chunk + FENCE;
            if (chunk < 64u * 1024u)
                chunk *= 4;
            continue;
        }
        if (st == KPN_EDEADLOCK && s->mode == MODE_STRICT) {
            /* A true deadlock stops a strict run; running again goes on
             * until no new one closes. */
            CHECK(ref->cycles > 0, "strict: KPN_EDEADLOCK, but the reference ends with every process exited");
            CHECK(kpn_net_stats(r->net, &stats) == KPN_OK, "kpn_net_stats");
            CHECK(stats.true_deadlocks > 0, "strict: KPN_EDEADLOCK with no true deadlock counted");
            if (stats.true_deadlocks != deadlocks) {
                compare_logs(s, r, ref, 0);
                deadlocks = stats.true_deadlocks;
                continue;
            }
        }
        break;
    }
    /* Inputs the world outside gave up on (their readers wait elsewhere
     * for ever): closed now, between runs, which changes nothing. */
    for (c = 0; c < s->nchans; ++c)
        if (s->ch[c].writer == OUTSIDE && !r->in_closed[c]) {
            st2 = kpn_input_close(r->chan[c]);
            CHECK(st2 == KPN_OK, "closing input c%u after the run: %s", c, kpn_strerror(st2));
            r->in_closed[c] = 1;
        }

    if (st == KPN_EDEADLOCK && s->mode == MODE_NORESOLVE) {
        /* A writer waits on a full channel: what ran is a prefix. */
        CHECK(kpn_net_stats(r->net, &stats) == KPN_OK, "kpn_net_stats");
        CHECK(stats.procs_blocked_write > 0, "KPN_EDEADLOCK with no writer blocked");
        compare_logs(s, r, ref, 0);
        full = 0;
    } else {
        if (s->mode == MODE_STRICT)
            CHECK(st == (ref->cycles > 0 ? KPN_EDEADLOCK : KPN_OK), "strict run ends with %s", kpn_strerror(st));
        else
            CHECK(st == KPN_OK, "kpn_run ends with %s", kpn_strerror(st));
        check_final(s, r, ref, runners);
        full = 1;
    }
    check_host_calls(s, r);
    if (verbose) {
        CHECK(kpn_net_stats(r->net, &stats) == KPN_OK, "kpn_net_stats");
        fprintf(stderr, "  %u runner(s): %s after %u kpn_run call(s); %llu messages, %llu discarded, "
                "%llu resolutions, %llu true deadlocks, %zu reserve bytes added, %llu steals, "
                "%llu placements learnt\n", runners,
                kpn_strerror(st), rounds, (unsigned long long)stats.messages,
                (unsigned long long)stats.discarded, (unsigned long long)stats.resolutions,
                (unsigned long long)stats.true_deadlocks, pool_used,
                (unsigned long long)stats.steals, (unsigned long long)stats.placements);
    }

    /* Once more: a net at rest stays there (on one runner: cheap). */
    if (full && runners == 1) {
        kpn_status again;
        cur_phase = "kpn_run again";
        cur_net = NULL;
        cur_calls++;
        again = kpn_run(r->net);
        cur_net = r->net;
        CHECK(again == st, "kpn_run again returned %s, first %s", kpn_strerror(again), kpn_strerror(st));
        check_final(s, r, ref, runners);
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* libFuzzer's entry points                                            */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *v = getenv("KPN_FUZZ_VERBOSE");

    (void)argc;
    (void)argv;
    verbose = v != NULL && *v != '\0' && *v != '0';
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct spec s;

    decode(data, size, &s);
    cur_spec = &s;
    cur_phase = "interpreting";
    cur_runners = 0;
    if (verbose)
        describe(stderr, &s);
    interpret(&s, &reference);
    if (verbose)
        fprintf(stderr, "  reference: %llu sends, %llu discarded, %u blocked for ever, %u cycles\n",
                (unsigned long long)reference.sends, (unsigned long long)reference.discarded,
                reference.blocked, reference.cycles);
    if (run_net(&s, &runs[0], &reference, 1) && s.runners > 1)
        (void)run_net(&s, &runs[1], &reference, s.runners);
    cur_spec = NULL;
    cur_net = NULL;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The seed corpus: 'cc -DKPN_FUZZ_SEEDS' builds this main, which writes
 * each seed to DIR and runs it through the checks above.  Channel
 * operands are given with bit 7 set: the channel itself, not one of the
 * process's own. */

#ifdef KPN_FUZZ_SEEDS

#define F_STATIC 1u
#define F_WAKER 2u
#define F_STRICT (2u << 2)
#define F_NORESOLVE (3u << 2)
#define F_RES_NONE (1u << 4)
#define F_RES_64 (2u << 4)
#define F_RES_512 (3u << 4)
#define F_DRAWN (1u << 6)
#define F_LEARN (1u << 7)

#define SEND(c) 0u, 0x80u | (c)
#define SEND_SIZED(c) 0x10u, 0x80u | (c)
#define SEND_BADSIZE(c) 0x20u, 0x80u | (c)
#define RECV(c) 6u, 0x80u | (c)
#define RECV_SIZED(c) 0x16u, 0x80u | (c)
#define RECV_BADSIZE(c) 0x26u, 0x80u | (c)
#define CLOSE(c) 12u, 0x80u | (c)
#define EXIT 13u, 0u
#define BURN(n) 14u, (n)
#define PIN(r) 15u, (r)

static unsigned char seed[1024];
static size_t seed_len;

static void put(unsigned b)
{
    if (seed_len < sizeof seed)
        seed[seed_len++] = (unsigned char)b;
}

/* byte 4: arena shift (low nibble) and report buffer (high nibble) */
static void net(unsigned procs, unsigned chans, unsigned runners, unsigned flags, unsigned byte4)
{
    seed_len = 0;
    put(procs - 1);
    put(chans);
    put(runners - 1);
    put(flags);
    put(byte4);
}

/* capacity 0: kpn_connect is given 0 and the net's default applies */
static void chan(unsigned writer, unsigned reader, unsigned cap, unsigned size)
{
    put(writer);
    put(reader);
    put((cap == 0 ? 0x40u : cap - 1) | (size - 1) << 2);
}

/* The input section: 'mask' (bit c: channel c an input), then the
 * number of messages offered to each input, in channel order. */
static void inputs(unsigned mask, ...)
{
    va_list ap;
    unsigned c;

    put(INPUTS_MARK0);
    put(INPUTS_MARK1);
    put(mask);
    va_start(ap, mask);
    for (c = 0; c < 8; ++c)
        if (mask >> c & 1)
            put(va_arg(ap, unsigned));
    va_end(ap);
}

/* 'len' instructions, each an (opcode, operand) pair of the macros above */
static void prog(unsigned repeat, unsigned len, ...)
{
    va_list ap;
    unsigned i;

    put(len);
    put(repeat - 1);
    va_start(ap, len);
    for (i = 0; i < 2 * len; ++i)
        put(va_arg(ap, unsigned));
    va_end(ap);
}

/* 'len' instructions, the pairs (a0, a1) and (b0, b1) in turn */
static void prog_alternating(unsigned repeat, unsigned len, unsigned a0, unsigned a1, unsigned b0,
                             unsigned b1)
{
    unsigned i;

    put(len);
    put(repeat - 1);
    for (i = 0; i < len; ++i) {
        put(i % 2 ? b0 : a0);
        put(i % 2 ? b1 : a1);
    }
}

static const char *out_dir;
static unsigned written;

/* Seeds are numbered; a file for another directory keeps its name. */
static void emit_to(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;

    if (dir == out_dir)
        snprintf(path, sizeof path, "%s/%02u-%s", dir, ++written, name);
    else
        snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(seed, 1, seed_len, f) != seed_len || fclose(f) != 0) {
        fprintf(stderr, "fuzz seeds: cannot write %s\n", path);
        exit(1);
    }
    fprintf(stderr, "%s (%zu bytes)\n", path, seed_len);
    LLVMFuzzerTestOneInput(seed, seed_len);
}

static void emit(const char *name)
{
    emit_to(out_dir, name);
}

/* p0 -> p1 -> p2 -> p3 */
static void pipeline_net(unsigned runners, unsigned flags)
{
    net(4, 3, runners, flags, 0);
    chan(0, 1, 1, 4);
    chan(1, 2, 2, 8);
    chan(2, 3, 1, 16);
}

/* p3 reads twice as often as messages come, so it sees EOF once p2
 * ends. */
static void pipeline(unsigned runners, unsigned flags)
{
    pipeline_net(runners, flags);
    prog(8, 1, SEND(0));
    prog(8, 2, RECV(0), SEND(1));
    prog(8, 2, RECV_SIZED(1), SEND_SIZED(2));
    prog(8, 3, RECV(2), BURN(3), RECV(2));
}

/* p0 and p1 each send three messages before reading: at capacity 1
 * both block writing, an artificial deadlock. */
static void cross(unsigned flags)
{
    net(2, 2, 1, flags, 0);
    chan(0, 1, 1, 8);
    chan(1, 0, 1, 8);
    prog(4, 6, SEND(0), SEND(0), SEND(0), RECV(1), RECV(1), RECV(1));
    prog(4, 6, SEND(1), SEND(1), SEND(1), RECV(0), RECV(0), RECV(0));
}

/* p0 -> p1 -> p2 -> p0, each reading first: a true deadlock; p3 -> p4
 * runs on beside it. */
static void true_deadlock(unsigned runners, unsigned flags)
{
    net(5, 4, runners, flags, 0);
    chan(0, 1, 2, 4);
    chan(1, 2, 2, 4);
    chan(2, 0, 2, 4);
    chan(3, 4, 1, 2);
    prog(1, 2, RECV(2), SEND(0));
    prog(1, 2, RECV(0), SEND(1));
    prog(1, 2, RECV(1), SEND(2));
    prog(8, 2, SEND(3), BURN(5));
    prog(8, 2, RECV(3), RECV(3));
}

int main(int argc, char **argv)
{
    unsigned i;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s CORPUS [CRASHES]   (writes the seed corpus into CORPUS and\n"
                "the hand-made reproducers of known bugs into CRASHES)\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    verbose = 1;

    pipeline(1, 0);
    emit("pipeline");
    pipeline(3, 0);
    emit("pipeline-3-runners");
    pipeline(2, F_WAKER | F_RES_NONE);
    emit("pipeline-2-runners-wake-waker");

    /* a ring of four with two tokens, on two runners */
    net(4, 4, 2, 0, 0);
    chan(0, 1, 0, 8);
    chan(1, 2, 1, 8);
    chan(2, 3, 1, 8);
    chan(3, 0, 1, 8);
    prog(4, 4, SEND(0), SEND(0), RECV(3), RECV(3));
    prog(8, 2, RECV(0), SEND(1));
    prog(8, 2, RECV(1), SEND(2));
    prog(8, 2, RECV(2), SEND(3));
    emit("ring-two-tokens");

    cross(0);
    emit("artificial-deadlock-capacity-1");
    cross(F_RES_NONE);
    emit("artificial-deadlock-no-reserve");
    cross(F_RES_64);
    emit("artificial-deadlock-reserve-64");
    cross(F_NORESOLVE);
    emit("artificial-deadlock-no-resolver");

    true_deadlock(1, 0);
    emit("true-deadlock");
    true_deadlock(2, F_STRICT);
    emit("true-deadlock-strict-2-runners");

    /* a channel from a process to itself: two sends at capacity 1 grow
     * it; the last read waits on itself for ever */
    net(1, 1, 1, 0, 0);
    chan(0, 0, 1, 3);
    prog(3, 4, SEND(0), SEND(0), RECV(0), RECV(0));
    emit("self-loop");

    /* close, then send (ESTATE) and close again (ESTATE); the reader
     * drains and sees EOF, twice */
    net(2, 1, 1, 0, 0x35);
    chan(0, 1, 2, 5);
    prog(1, 5, SEND(0), SEND(0), CLOSE(0), SEND(0), CLOSE(0));
    prog(1, 5, RECV(0), RECV(0), RECV(0), RECV(0), BURN(1));
    emit("close-eof");

    /* the reader takes one message and exits: the writer, blocked on a
     * full channel, is let go and its messages are discarded */
    net(2, 1, 1, 0, 0);
    chan(0, 1, 1, 8);
    prog(8, 2, SEND(0), SEND(0));
    prog(1, 2, RECV(0), EXIT);
    emit("send-to-exited-reader");

    /* p2 uses p0 -> p1 from the wrong end (KPN_EPERM) and with the wrong
     * size (KPN_EINVAL); nothing may change */
    net(3, 1, 1, 0, 0x9c);
    chan(0, 1, 2, 6);
    prog(4, 2, SEND(0), SEND_BADSIZE(0));
    prog(4, 3, RECV(0), RECV_BADSIZE(0), SEND(0));
    prog(2, 4, SEND(0), RECV(0), CLOSE(0), SEND_SIZED(0));
    emit("wrong-process");

    /* static placement on three runners, one pin out of range */
    net(4, 3, 3, F_STATIC, 0);
    chan(0, 1, 1, 16);
    chan(1, 2, 1, 16);
    chan(2, 3, 1, 16);
    prog(8, 2, PIN(2), SEND(0));
    prog(8, 3, PIN(1), RECV(0), SEND(1));
    prog(8, 3, PIN(0), RECV(1), SEND(2));
    prog(8, 2, PIN(3), RECV(2));
    emit("pins-static-3-runners");

    /* the same pins under work stealing, two runners */
    net(3, 2, 2, F_RES_512, 0);
    chan(0, 1, 2, 1);
    chan(1, 2, 2, 1);
    prog(8, 3, PIN(1), SEND(0), BURN(20));
    prog(8, 3, PIN(0), RECV(0), SEND(1));
    prog(8, 2, PIN(1), RECV(1));
    emit("pins-ws-2-runners");

    /* fan-out and fan-in over eight processes and twelve channels */
    net(8, 12, 3, 0, 0x4b);
    chan(0, 1, 1, 4);
    chan(0, 2, 2, 4);
    chan(0, 3, 3, 4);
    chan(1, 4, 1, 8);
    chan(2, 4, 4, 8);
    chan(3, 5, 1, 8);
    chan(4, 6, 2, 12);
    chan(5, 6, 1, 12);
    chan(6, 7, 1, 16);
    chan(7, 0, 1, 1);
    chan(6, 6, 1, 2);
    chan(5, 3, 1, 2);
    prog(6, 4, SEND(0), SEND(1), SEND(2), RECV(9));
    prog(6, 2, RECV(0), SEND(3));
    prog(6, 2, RECV(1), SEND(4));
    prog(6, 4, RECV(2), SEND(5), RECV(11), BURN(2));
    prog(6, 3, RECV(3), RECV(4), SEND(6));
    prog(6, 3, RECV(5), SEND(7), SEND(11));
    prog(6, 6, RECV(6), RECV(7), SEND(10), SEND(10), RECV(10), SEND(8));
    prog(7, 2, RECV(8), SEND(9));
    emit("fan-out-fan-in-3-runners");

    /* an empty input: one process with nothing to do */
    seed_len = 0;
    emit("empty");

    /* eight processes on the generator's network (seed 3, 3 layers, 2
     * back-edges asked for, twins), each sending on its first two outputs
     * and receiving on its first three inputs (operands with bit 7 clear:
     * its own channels), at capacity 1 */
    seed_len = 0;
    put(7);
    put(2u | 2u << 3 | 0x80u);
    put(1);
    put(F_DRAWN);
    put(0);
    put(3);
    put(0);
    for (i = 0; i < MAX_CHANS; ++i)
        put(0);
    for (i = 0; i < 8; ++i)
        prog(6, 6, 0u, 0u, 0u, 1u, 6u, 0u, 6u, 1u, 6u, 2u, BURN(3));
    emit("generated-topology-2-runners");

    /* the pipeline above, longer, on three runners that learn a
     * placement at the first steal: 96 messages a channel, more than
     * the 16 a channel a runner must send before it learns */
    pipeline_net(3, F_WAKER | F_LEARN);
    prog_alternating(4, 24, SEND(0), SEND(0));
    prog_alternating(8, 24, RECV(0), SEND(1));
    prog_alternating(8, 24, RECV(1), SEND(2));
    prog_alternating(8, 24, RECV(2), RECV(2));
    emit("pipeline-3-runners-learning");

    /* the same over one CPU: the placement puts every process on the
     * first runner (byte 2 also carries cfg.cpus) */
    seed[2] += MAX_RUNNERS * 1;
    emit("pipeline-3-runners-learning-1-cpu");

    /* two inputs, read in turn by p0, which passes what it reads down a
     * pipeline over three runners; one input runs dry before the other
     * (EOF), the other is offered 12 messages into a capacity of 1 */
    net(4, 4, 3, 0, 0);
    for (i = 0; i < 2; ++i) /* the inputs, to p0: capacities 1 and 2 */
        chan(0, 0, 1 + i, 4 + 4 * i);
    chan(0, 1, 1, 4);
    chan(1, 2, 1, 4);
    prog(8, 4, RECV(0), SEND(2), RECV(1), SEND(2));
    prog(8, 4, RECV(2), SEND(3), RECV(2), SEND(3));
    prog(8, 2, RECV(3), RECV(3));
    prog(1, 1, BURN(1));
    inputs(0x3, 12, 5);
    emit("inputs-3-runners");

    /* p0 reads one message of its input, then waits for p1, which waits
     * for p0: a true deadlock, and an input left full with offers still
     * to make, which the world outside gives up on once kpn_run returns */
    net(2, 3, 2, 0, 0);
    chan(0, 0, 1, 2);
    chan(1, 0, 1, 2);
    chan(0, 1, 1, 2);
    prog(1, 3, RECV(0), RECV(1), SEND(2));
    prog(1, 2, RECV(2), SEND(1));
    inputs(0x1, 6);
    emit("input-left-full-beside-a-true-deadlock-2-runners");

    /* the reader takes two messages and returns: the rest are dropped
     * as they are offered, or left in the channel, as the offers fall */
    net(2, 2, 2, 0, 0);
    chan(0, 0, 2, 16);
    chan(0, 1, 1, 16);
    prog(1, 3, RECV(0), RECV(0), SEND(1));
    prog(2, 1, RECV(1));
    inputs(0x1, 9);
    emit("input-to-a-reader-that-returns-2-runners");

    if (argc == 3) {
        /* Known bug 1: p2, on runner 1, sends on p0's channel again and
         * again while p0 runs on runner 0 (it wakes p2, then spins).
         * Half the runs or more deliver one of p2's messages to p1. */
        net(3, 2, 2, F_STATIC, 0);
        chan(0, 1, 4, 8);
        chan(0, 2, 4, 4);
        prog(8, 23, PIN(0), SEND(1), BURN(31), BURN(31), BURN(31), BURN(31), BURN(31), BURN(31),
             BURN(31), BURN(31), BURN(31), BURN(31), SEND(0), BURN(31), BURN(31), BURN(31), BURN(31),
             BURN(31), BURN(31), BURN(31), BURN(31), BURN(31), BURN(31));
        prog(8, 2, PIN(0), RECV(0));
        prog(8, 22, PIN(1), RECV(1), SEND(0), BURN(2), SEND(0), BURN(2), SEND(0), BURN(2), SEND(0),
             BURN(2), SEND(0), BURN(2), SEND(0), BURN(2), SEND(0), BURN(2), SEND(0), BURN(2), SEND(0),
             BURN(2), SEND(0), BURN(2));
        emit_to(argv[2], "wrong-end-while-the-writer-runs-elsewhere");

        /* Known bug 2: kpn.h calls a reserve_size of 1 to 63 a caller
         * mistake, and fewer than 64 bytes for kpn_reserve_add; both
         * accept 48.  Any input with the 64-byte reserve shows it. */
        cross(F_RES_64);
        emit_to(argv[2], "reserve-of-63-bytes-accepted");
    }
    return 0;
}

#endif /* KPN_FUZZ_SEEDS */
