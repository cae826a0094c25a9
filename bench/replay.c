/* SPDX-License-Identifier: MIT */
/* A random network's protocol played out in time, at given costs: what the net allows on R CPUs. */
#include <string.h>
#include "replay.h"

/*
 * rnet_schedule plays the protocol out on CPUs that cost nothing but the
 * work: a send or a receive takes msg_ns / 2, burning t units t * unit_ns,
 * and a message is there for its reader from the end of its send, a slot
 * for its writer from the end of the receive that emptied it.  A step
 * that takes what a step on another CPU left (a message, a slot) takes
 * cross_ns longer, as a core stalls on a line another core wrote.  A
 * process runs until it blocks, as on a runner.
 *
 *  - cpus 0: every process has a CPU of its own and each step starts the
 *    moment its process and its channel let it, which (with cross_ns 0)
 *    is the earliest any schedule can start it.  The order the steps are
 *    played in does not matter: each one's time is the max of the times
 *    it waits for, plus its cost.
 *  - cpus >= 1: a list schedule.  The CPU furthest behind takes the next
 *    step; a CPU whose process blocks or ends takes the process that has
 *    been ready longest, of those 'part' gives it where 'part' is given
 *    (each process then runs on one CPU only), else of all.  With one CPU
 *    the result is the sum of all the costs.
 */

#define SIM_SLOTS (1u << 18) /* message slots for every channel together */

typedef struct sim_msg {
    uint64_t work;
    double at; /* the end of its send */
    int cpu;   /* the CPU its writer ran on */
} sim_msg;

typedef struct sim_slot {
    double at; /* the end of the receive that emptied it */
    int cpu;   /* the CPU the reader ran on */
} sim_slot;

typedef struct sim_chan {
    sim_msg *ring;     /* capacity messages, message k at k % capacity */
    sim_slot *emptied; /* receive k at k % capacity */
    uint64_t sent, received;
} sim_chan;

enum { SIM_IN, SIM_BACK_IN, SIM_BURN, SIM_BACK_OUT, SIM_OUT, SIM_DONE };

typedef struct sim_proc {
    double clock; /* when its next step may start */
    double ready; /* since when it has been ready (list schedule) */
    uint64_t round, t, seq;
    int phase, port;
    int cpu;     /* the CPU it runs or last ran on */
    int on;      /* the channel it is blocked on, or -1 */
} sim_proc;

static sim_msg sim_ring[SIM_SLOTS];
static sim_slot sim_emptied[SIM_SLOTS];
static sim_chan sim_c[RNET_MAX_EDGES];
static sim_proc sim_p[RNET_MAX_NODES];
/* Processes to step.  cpus 0: one stack.  Else a heap on 'ready' per
 * part (or one for all), heap h in sim_q[first[h] .. first[h] + n[h]). */
static int sim_q[RNET_MAX_NODES], sim_first[RNET_MAX_NODES + 1], sim_n[RNET_MAX_NODES];
static int sim_heap_of[RNET_MAX_NODES]; /* each process's heap */
static int sim_on[RNET_MAX_NODES];      /* the process each CPU runs, or -1 */
static double sim_idle[RNET_MAX_NODES]; /* since when each CPU has been idle */
static uint64_t sim_seq;

static int sim_before(int a, int b)
{
    return sim_p[a].ready < sim_p[b].ready ||
           (sim_p[a].ready == sim_p[b].ready && sim_p[a].seq < sim_p[b].seq);
}

static void sim_push(int v, double at)
{
    int h = sim_heap_of[v], *q = sim_q + sim_first[h], i = sim_n[h]++;

    sim_p[v].ready = at;
    sim_p[v].seq = sim_seq++;
    for (; i > 0 && sim_before(v, q[(i - 1) / 2]); i = (i - 1) / 2)
        q[i] = q[(i - 1) / 2];
    q[i] = v;
}

static int sim_pop(int h)
{
    int *q = sim_q + sim_first[h], v = q[0], last = q[--sim_n[h]], i = 0, c;

    while ((c = 2 * i + 1) < sim_n[h]) {
        if (c + 1 < sim_n[h] && sim_before(q[c + 1], q[c]))
            ++c;
        if (!sim_before(q[c], last))
            break;
        q[i] = q[c];
        i = c;
    }
    if (sim_n[h] > 0)
        q[i] = last;
    return v;
}

static double later(double a, double b)
{
    return a > b ? a : b;
}

/* The end 'v' of channel 'e' may go on from 'at', when the step that let
 * it ends: queue it if it is blocked.  On the stack (cpus 0) its own
 * step waits for the channel. */
static void sim_wake(int v, int e, double at, int heap)
{
    if (sim_p[v].on != e)
        return;
    sim_p[v].on = -1;
    if (!heap) {
        sim_q[sim_n[0]++] = v;
        return;
    }
    sim_p[v].clock = later(sim_p[v].clock, at);
    sim_push(v, at);
}

/* Take the next step of process v.  0: it took one; 1: it blocked; 2: it
 * has ended. */
static int sim_step(const rnet_graph *g, uint64_t total, uint64_t rounds, size_t cap,
                    const rnet_timing *tm, int v, int heap)
{
    sim_proc *p = &sim_p[v];
    const int nin = rnet_in_degree(g, v), nout = rnet_out_degree(g, v);
    const double half = tm->msg_ns / 2;
    int e;

    switch (p->phase) {
    case SIM_IN:
        if (p->port == 0)
            p->t = v == 0 ? total / rounds + (p->round < total % rounds) : 0;
        if (p->port == nin) {
            p->phase = SIM_BACK_IN;
            return 0;
        }
        e = g->in_edge[g->in_first[v] + p->port];
        goto receive;
    case SIM_BACK_IN:
        if (g->back_in[v] < 0 || p->round == 0) {
            p->phase = SIM_BURN;
            return 0;
        }
        e = g->back_in[v];
    receive:
        if (sim_c[e].sent == sim_c[e].received) {
            p->on = e;
            return 1;
        } else {
            sim_chan *c = &sim_c[e];
            const sim_msg *m = &c->ring[c->received % cap];
            sim_slot *slot = &c->emptied[c->received % cap];
            p->clock = later(p->clock, m->at) + (m->cpu != p->cpu ? tm->cross_ns : 0) + half;
            p->t += m->work;
            slot->at = p->clock;
            slot->cpu = p->cpu;
            c->received++;
            sim_wake(g->from[e], e, p->clock, heap);
            if (p->phase == SIM_IN)
                p->port++;
            else
                p->phase = SIM_BURN;
            return 0;
        }
    case SIM_BURN:
        if (v == g->nodes - 1) /* the sink adds up instead */
            goto next_round;
        if (v != 0)
            p->clock += (double)p->t * tm->unit_ns;
        p->phase = SIM_BACK_OUT;
        p->port = 0;
        return 0;
    case SIM_BACK_OUT:
    case SIM_OUT: {
        const int back = g->back_out[v] >= 0 && p->round + 1 < rounds;
        const int n = nout + back;
        const uint64_t share = p->t / (uint64_t)n;
        uint64_t work = share;
        sim_chan *c;
        sim_msg *m;

        if (p->phase == SIM_BACK_OUT && !back)
            p->phase = SIM_OUT;
        if (p->phase == SIM_OUT && p->port == nout)
            goto next_round;
        if (p->phase == SIM_BACK_OUT) {
            e = g->back_out[v];
        } else {
            e = g->out_edge[g->out_first[v] + p->port];
            if (p->port + 1 == nout)
                work = p->t - share * (uint64_t)(n - 1);
        }
        c = &sim_c[e];
        if (c->sent - c->received == cap) {
            p->on = e;
            return 1;
        }
        if (c->sent >= cap) {
            const sim_slot *slot = &c->emptied[c->sent % cap];
            p->clock = later(p->clock, slot->at) + (slot->cpu != p->cpu ? tm->cross_ns : 0);
        }
        p->clock += half;
        m = &c->ring[c->sent % cap];
        m->work = work;
        m->at = p->clock;
        m->cpu = p->cpu;
        c->sent++;
        sim_wake(g->to[e], e, p->clock, heap);
        if (p->phase == SIM_BACK_OUT)
            p->phase = SIM_OUT;
        else
            p->port++;
        return 0;
    }
    default:
        return 2;
    }
next_round:
    if (++p->round == rounds) {
        p->phase = SIM_DONE;
        return 2;
    }
    p->phase = SIM_IN;
    p->port = 0;
    return 0;
}

/* cpus 0: step each process as far as it goes, in any order. */
static double sim_unlimited(const rnet_graph *g, uint64_t total, uint64_t rounds, size_t cap,
                            const rnet_timing *tm)
{
    double end = 0;
    int v, r, ended = 0;

    sim_n[0] = 0;
    for (v = 0; v < g->nodes; ++v) {
        sim_p[v].cpu = v;
        sim_q[sim_n[0]++] = v;
    }
    while (sim_n[0] > 0) {
        v = sim_q[--sim_n[0]];
        while ((r = sim_step(g, total, rounds, cap, tm, v, 0)) == 0)
            ;
        if (r == 2) {
            ++ended;
            end = later(end, sim_p[v].clock);
        }
    }
    return ended == g->nodes ? end : RNET_SCHED_EDEADLOCK;
}

static double sim_list(const rnet_graph *g, uint64_t total, uint64_t rounds, size_t cap,
                       const rnet_timing *tm, unsigned cpus, const unsigned *part)
{
    const unsigned heaps = part != NULL ? cpus : 1;
    double end = 0;
    int v, ended = 0;
    unsigned i, h;

    for (h = 0; h < heaps; ++h)
        sim_n[h] = 0;
    for (v = 0; v < g->nodes; ++v)
        sim_n[sim_heap_of[v] = part != NULL ? (int)part[v] : 0]++;
    for (sim_first[0] = 0, h = 0; h < heaps; ++h) {
        sim_first[h + 1] = sim_first[h] + sim_n[h];
        sim_n[h] = 0;
    }
    for (v = 0; v < g->nodes; ++v) {
        sim_p[v].cpu = part != NULL ? (int)part[v] : -1;
        sim_push(v, 0);
    }
    for (i = 0; i < cpus; ++i) {
        sim_on[i] = -1;
        sim_idle[i] = 0;
    }
    for (;;) {
        double first = 0;
        int cpu = -1;

        for (i = 0; i < cpus; ++i)
            if (sim_on[i] >= 0 && (cpu < 0 || sim_p[sim_on[i]].clock < first)) {
                cpu = (int)i;
                first = sim_p[sim_on[i]].clock;
            }
        /* An idle CPU takes a process once no running CPU is behind the
         * time it would start it: until then a running one may yet make
         * another ready sooner.  Of the idle CPUs, the one that can start
         * soonest takes it. */
        for (;;) {
            double start = 0, at;
            int idle = -1;
            for (i = 0; i < cpus; ++i) {
                h = part != NULL ? i : 0;
                if (sim_on[i] >= 0 || sim_n[h] == 0)
                    continue;
                at = later(sim_idle[i], sim_p[sim_q[sim_first[h]]].ready);
                if (idle < 0 || at < start) {
                    idle = (int)i;
                    start = at;
                }
            }
            if (idle < 0 || (cpu >= 0 && start > first))
                break;
            v = sim_pop(part != NULL ? idle : 0);
            sim_p[v].clock = later(sim_p[v].clock, start);
            sim_p[v].cpu = idle;
            sim_on[idle] = v;
            if (cpu < 0 || sim_p[v].clock < first) {
                cpu = idle;
                first = sim_p[v].clock;
            }
        }
        if (cpu < 0)
            break;
        v = sim_on[cpu];
        switch (sim_step(g, total, rounds, cap, tm, v, 1)) {
        case 2:
            ++ended;
            end = later(end, sim_p[v].clock);
            /* fall through */
        case 1:
            sim_idle[cpu] = sim_p[v].clock;
            sim_on[cpu] = -1;
            break;
        default:
            break;
        }
    }
    return ended == g->nodes ? end : RNET_SCHED_EDEADLOCK;
}

double rnet_schedule(const rnet_graph *g, uint64_t total, uint64_t rounds, size_t capacity,
                     const rnet_timing *tm, unsigned cpus, const unsigned *part)
{
    int v, e;

    if (g == NULL || tm == NULL || rounds == 0 || capacity == 0 || cpus > RNET_MAX_NODES ||
        !(tm->unit_ns >= 0) || !(tm->msg_ns >= 0) || !(tm->cross_ns >= 0) ||
        (part != NULL && cpus == 0))
        return RNET_SCHED_EINVAL;
    for (v = 0; part != NULL && v < g->nodes; ++v)
        if (part[v] >= cpus)
            return RNET_SCHED_EINVAL;
    if ((uint64_t)g->edges * capacity > SIM_SLOTS)
        return RNET_SCHED_ETOOBIG;
    for (e = 0; e < g->edges; ++e) {
        sim_c[e].ring = sim_ring + (size_t)e * capacity;
        sim_c[e].emptied = sim_emptied + (size_t)e * capacity;
        sim_c[e].sent = sim_c[e].received = 0;
    }
    sim_seq = 0;
    for (v = 0; v < g->nodes; ++v) {
        memset(&sim_p[v], 0, sizeof sim_p[v]);
        sim_p[v].on = -1;
    }
    return cpus == 0 ? sim_unlimited(g, total, rounds, capacity, tm)
                     : sim_list(g, total, rounds, capacity, tm, cpus, part);
}
