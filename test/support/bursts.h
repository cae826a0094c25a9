/* SPDX-License-Identifier: MIT */
/* Random layered networks with feedback and bursts: run on kpn, and simulated with unbounded queues. */
#ifndef KPN_TEST_BURSTS_H
#define KPN_TEST_BURSTS_H

#include <stdint.h>
#include "kpn.h"
#include "randnet.h" /* bench/randnet.c: name it with TEST_SOURCE_FILE */

/*
 * The topology is the benchmarks' random network (bench/randnet.c):
 * layers of processes with forward edges, twins among them (two channels
 * between the same pair of processes), and back-edges that close cycles.
 * What runs on it is the tests' own.  Every channel has a rate of 1 to 3
 * messages a round.  Every
 * process runs 'rounds' rounds; in each it reads a burst of 'rate'
 * messages from every input and then writes a burst to every output, in
 * an order drawn afresh each round from its seed: a fixed program, so
 * still a Kahn process, but one whose bursts cross those of its
 * neighbours, which is what makes channels smaller than a burst deadlock
 * artificially.  A back-edge's writer first sends one round's worth of
 * initial tokens (a delay), so the earlier process has something to read
 * in round 0: with unbounded queues the network never deadlocks.  Each
 * process folds everything it reads into a hash; equal hashes mean equal
 * channel histories.
 */

#define RN_MAX_PROCS 24
#define RN_MAX_CHANS 72
#define RN_MAX_PORTS 8
#define RN_MAX_ROUNDS 16
#define RN_MAX_RATE 3

typedef struct rn_proc {
    int nin, in[RN_MAX_PORTS];    /* channel numbers */
    int nout, out[RN_MAX_PORTS];
    uint32_t seed;
} rn_proc;

typedef struct rn_net {
    int nprocs, nchans, rounds;
    int from[RN_MAX_CHANS], to[RN_MAX_CHANS], back[RN_MAX_CHANS], rate[RN_MAX_CHANS];
    rn_proc p[RN_MAX_PROCS];
} rn_net;

static uint32_t rn_rand(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static uint32_t rn_mix(uint32_t h, uint32_t v)
{
    return h ^ (v + 0x9e3779b9u + (h << 6) + (h >> 2));
}

/* The order in which a process visits its 'n' ports in round 'r'. */
static void rn_order(const rn_proc *p, int r, int writing, int n, int *order)
{
    uint32_t s = rn_mix(p->seed, (uint32_t)(2 * r + writing + 1)) | 1u;
    int i;

    for (i = 0; i < n; ++i)
        order[i] = i;
    for (i = n - 1; i > 0; --i) {
        int j = (int)(rn_rand(&s) % (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

static void rn_edge(rn_net *n, int from, int to, int back, uint32_t *s)
{
    int c = n->nchans;
    if (c == RN_MAX_CHANS || n->p[from].nout == RN_MAX_PORTS || n->p[to].nin == RN_MAX_PORTS)
        return; /* a port list is full: the edge is left out */
    n->from[c] = from;
    n->to[c] = to;
    n->back[c] = back;
    n->rate[c] = 1 + (int)(rn_rand(s) % RN_MAX_RATE);
    n->p[from].out[n->p[from].nout++] = c;
    n->p[to].in[n->p[to].nin++] = c;
    n->nchans++;
}

/* A network drawn from 'seed': 2 to 5 layers between a source and a sink,
 * 1 to 4 processes a layer on average, half the forward edges twinned,
 * 1 to 4 back-edges asked for. */
static void rn_generate(rn_net *n, uint32_t seed, int rounds)
{
    static rnet_graph g;
    uint32_t s = seed * 2654435761u | 1u;
    rnet_params params;
    int i;

    params.seed = seed;
    params.layers = 2 + (int)(rn_rand(&s) % 4);
    params.nodes = params.layers + 2 + (int)(rn_rand(&s) % (uint32_t)(3 * params.layers + 1));
    params.back_edges = 1 + (int)(rn_rand(&s) % 4);
    params.twins = 512;
    if (rnet_generate(&g, &params) != RNET_OK)
        g.nodes = g.edges = 0; /* cannot happen for these parameters */
    n->nprocs = g.nodes < RN_MAX_PROCS ? g.nodes : RN_MAX_PROCS;
    n->nchans = 0;
    n->rounds = rounds;
    for (i = 0; i < n->nprocs; ++i) {
        n->p[i].nin = n->p[i].nout = 0;
        n->p[i].seed = rn_rand(&s);
    }
    for (i = 0; i < g.edges; ++i)
        if (g.from[i] < n->nprocs && g.to[i] < n->nprocs)
            rn_edge(n, g.from[i], g.to[i], g.back[i], &s);
}

/* ------------------------------------------------------------ on kpn */

typedef struct rn_run {
    const rn_net *net;
    kpn_chan *chan[RN_MAX_CHANS];
    uint32_t hash[RN_MAX_PROCS];
    int index[RN_MAX_PROCS];
} rn_run;

static rn_run *rn_current;

/* The k-th message of a burst on output port 'port'. */
static uint32_t rn_msg(uint32_t h, int port, int k)
{
    return rn_mix(h, (uint32_t)(port * 16 + k));
}

static void rn_process(void *arg)
{
    const rn_net *n = rn_current->net;
    int me = *(int *)arg, r, i, k, order[RN_MAX_PORTS];
    const rn_proc *p = &n->p[me];
    uint32_t h = p->seed, v;

    for (i = 0; i < p->nout; ++i)
        for (k = 0; k < n->rate[p->out[i]] && n->back[p->out[i]]; ++k) {
            v = rn_msg(p->seed, 0xbac + i, k);
            kpn_send(rn_current->chan[p->out[i]], &v);
        }
    for (r = 0; r < n->rounds; ++r) {
        rn_order(p, r, 0, p->nin, order);
        for (i = 0; i < p->nin; ++i)
            for (k = 0; k < n->rate[p->in[order[i]]]; ++k) {
                if (kpn_recv(rn_current->chan[p->in[order[i]]], &v) != KPN_OK)
                    return;
                h = rn_mix(h, v);
            }
        rn_order(p, r, 1, p->nout, order);
        for (i = 0; i < p->nout; ++i)
            for (k = 0; k < n->rate[p->out[order[i]]]; ++k) {
                v = rn_msg(h, order[i], k);
                kpn_send(rn_current->chan[p->out[order[i]]], &v);
            }
    }
    rn_current->hash[me] = h;
}

/* Spawn and connect 'n' into 'net' with every channel of capacity 'cap'. */
static kpn_status rn_build(kpn_net *net, const rn_net *n, rn_run *run, size_t cap, size_t stack)
{
    kpn_proc *procs[RN_MAX_PROCS];
    kpn_status s;
    int i;

    run->net = n;
    rn_current = run;
    for (i = 0; i < n->nprocs; ++i) {
        run->index[i] = i;
        run->hash[i] = 0;
        s = kpn_spawn(net, &procs[i], "rn", rn_process, &run->index[i], stack);
        if (s != KPN_OK)
            return s;
    }
    for (i = 0; i < n->nchans; ++i) {
        s = kpn_connect(net, &run->chan[i], procs[n->from[i]], procs[n->to[i]],
                        sizeof(uint32_t), cap);
        if (s != KPN_OK)
            return s;
    }
    return KPN_OK;
}

/* ------------------------------------------------------------ reference */

/* The same programs as state machines over unbounded queues, stepped in
 * whatever order makes progress (any order gives the same histories). */
static void rn_simulate(const rn_net *n, uint32_t *hash)
{
    static uint32_t q[RN_MAX_CHANS][(RN_MAX_ROUNDS + 1) * RN_MAX_RATE];
    int head[RN_MAX_CHANS] = {0}, tail[RN_MAX_CHANS] = {0};
    int round[RN_MAX_PROCS], step[RN_MAX_PROCS], got[RN_MAX_PROCS];
    int i, c, k, progress = 1;
    uint32_t h[RN_MAX_PROCS];

    for (i = 0; i < n->nprocs; ++i) {
        const rn_proc *p = &n->p[i];
        h[i] = p->seed;
        round[i] = step[i] = got[i] = 0;
        for (c = 0; c < p->nout; ++c)
            for (k = 0; k < n->rate[p->out[c]] && n->back[p->out[c]]; ++k)
                q[p->out[c]][tail[p->out[c]]++] = rn_msg(p->seed, 0xbac + c, k);
    }
    while (progress) {
        progress = 0;
        for (i = 0; i < n->nprocs; ++i) {
            const rn_proc *p = &n->p[i];
            int order[RN_MAX_PORTS];
            while (round[i] < n->rounds) {
                if (step[i] < p->nin) {
                    /* one message of the current input's burst */
                    rn_order(p, round[i], 0, p->nin, order);
                    c = p->in[order[step[i]]];
                    if (head[c] == tail[c])
                        break;
                    h[i] = rn_mix(h[i], q[c][head[c]++]);
                    if (++got[i] == n->rate[c]) {
                        got[i] = 0;
                        step[i]++;
                    }
                } else {
                    rn_order(p, round[i], 1, p->nout, order);
                    for (c = 0; c < p->nout; ++c)
                        for (k = 0; k < n->rate[p->out[order[c]]]; ++k)
                            q[p->out[order[c]]][tail[p->out[order[c]]]++] = rn_msg(h[i], order[c], k);
                    step[i] = 0;
                    round[i]++;
                }
                progress = 1;
            }
        }
    }
    for (i = 0; i < n->nprocs; ++i)
        hash[i] = round[i] == n->rounds ? h[i] : 0;
}

#endif /* KPN_TEST_BURSTS_H */
