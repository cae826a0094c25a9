/* SPDX-License-Identifier: MIT */
/* The papers' random networks (Vrba's thesis, 5.2.1.4): a seeded generator, the network on kpn, its work. */
#ifndef KPN_RANDOM_NET_H
#define KPN_RANDOM_NET_H

#include <stdint.h>
#include <stdio.h>
#include "kpn.h"

/*
 * A random network is a source, 'layers' layers of processes and a sink:
 *
 *                      ┌┄┄┄┄┄┐   back-edge e -> c
 *                      ▼     ┆
 *     source ──► a ──► c ──► e ──► sink
 *        └─────► b ──────────┘
 *
 *       0        1     2     3      4     (layer)
 *
 * Forward edges go from a layer to a later one; a back-edge goes from a
 * process to an earlier one that reaches it by forward edges, so each
 * back-edge closes a cycle.  Every process is incident to at most one
 * back-edge, in or out (Vrba's thesis's rule), and the source and the sink to
 * none.  Everything is drawn from one 64-bit seed with integer arithmetic
 * only, so a seed gives the same network on every machine.
 *
 * A twin is a second channel between the same two processes, drawn only
 * when 'twins' asks for it: the unit tests' networks use twins to cross
 * bursts (thesis figure 3.5), the papers' networks have none.
 *
 * Work (see randnet.c for the protocol): the source emits 'total' work
 * units (iterations of the burn loop) as 'rounds' messages; every process,
 * round after round, reads one message from each input, burns the sum and
 * splits it over its outputs; the sink adds up what arrives, which must be
 * 'total' exactly.
 */

#define RNET_MAX_NODES 2048
#define RNET_MAX_EDGES 8192

/* What the generator is asked for. */
typedef struct rnet_params {
    uint64_t seed;
    int nodes;      /* all processes, the source and the sink included */
    int layers;     /* layers between the source and the sink */
    int back_edges; /* back-edges wanted (fewer if no free pair is left) */
    int twins;      /* chance in 1024 that a forward edge gets a parallel twin
                     * (0, the papers' networks: no draw is made at all) */
} rnet_params;

/* A generated network.  Nodes are numbered layer by layer: 0 is the
 * source, 'nodes'-1 the sink.  Edges are numbered in the order they were
 * drawn; a process reads and writes its ports in that order. */
typedef struct rnet_graph {
    rnet_params params;
    int nodes, edges, layers, back_edges;
    int max_width;                       /* widths were drawn from 1..max_width */
    int layer[RNET_MAX_NODES];           /* 0 the source, 1..layers, layers+1 the sink */
    int from[RNET_MAX_EDGES], to[RNET_MAX_EDGES];
    unsigned char back[RNET_MAX_EDGES];  /* 1 for a back-edge */
    int back_in[RNET_MAX_NODES];         /* the node's incoming back-edge, or -1 */
    int back_out[RNET_MAX_NODES];        /* its outgoing back-edge, or -1 */
    /* forward ports, in edge order: node v's inputs are
     * in_edge[in_first[v] .. in_first[v+1]-1], its outputs likewise */
    int in_first[RNET_MAX_NODES + 1], in_edge[RNET_MAX_EDGES];
    int out_first[RNET_MAX_NODES + 1], out_edge[RNET_MAX_EDGES];
} rnet_graph;

/* A named network of the papers, and the shape it is documented to have. */
typedef struct rnet_preset {
    const char *name;
    rnet_params params;
    int edges;  /* what the generator makes of 'params' */
    int cycles; /* back-edges, each closing a cycle */
} rnet_preset;

/* RND-A and RND-B, then a {NULL} entry. */
extern const rnet_preset rnet_presets[];

/* The preset called 'name' (case-insensitive), or NULL. */
const rnet_preset *rnet_preset_find(const char *name);

typedef enum rnet_error {
    RNET_OK = 0,
    RNET_EINVAL, /* nodes < layers + 2, layers < 1, back_edges < 0, twins outside
                  * 0..1024, or above the limits */
    RNET_EFULL   /* the forward edges drawn do not fit in RNET_MAX_EDGES */
} rnet_error;

/* Draw the network 'p' describes into 'g'.  Deterministic in 'p'.  Uses
 * static scratch space (as rnet_flow_factor does): one thread at a time. */
rnet_error rnet_generate(rnet_graph *g, const rnet_params *p);

/* Forward inputs and outputs of node 'v'. */
int rnet_in_degree(const rnet_graph *g, int v);
int rnet_out_degree(const rnet_graph *g, int v);

/* Work the processes burn per unit the source emits, in the steady state
 * (every back-edge busy), from a real-valued version of the splitting
 * rule: roughly how many times each unit is burned on its way to the
 * sink.  Used to turn a CPU-time budget into the source's total. */
double rnet_flow_factor(const rnet_graph *g);

/* Write 'g' as a Graphviz digraph: layers as ranks, the source at the
 * bottom, back-edges dashed.  0 on success, -1 on a write error. */
int rnet_write_dot(const rnet_graph *g, FILE *f);

/* ------------------------------------------------------------ on kpn */

/* One message: the work it carries and the round it belongs to (a
 * back-edge message of round r is read in round r+1). */
typedef struct rnet_msg {
    uint64_t work;
    uint64_t round;
} rnet_msg;

typedef struct rnet_run rnet_run;

/* What a process is given: its node and the run it belongs to. */
typedef struct rnet_task {
    rnet_run *run;
    int node;
} rnet_task;

/* One run of a network: filled by rnet_build, written by the processes
 * (each only its own node's entries, and the sink alone 'sink_*'), read
 * by the host after kpn_run.  Large: give it static storage. */
struct rnet_run {
    const rnet_graph *g;
    void (*burn)(uint64_t n); /* burns n units of work; NULL burns nothing
                               * (the units are still counted); kept by
                               * rnet_build, so set it before or after */
    uint64_t total;    /* work units the source emits */
    uint64_t rounds;   /* messages the source sends on each output ('d') */
    kpn_chan *chan[RNET_MAX_EDGES];
    kpn_proc *proc[RNET_MAX_NODES];
    rnet_task task[RNET_MAX_NODES];
    uint64_t burned[RNET_MAX_NODES]; /* work units each process burned */
    int error[RNET_MAX_NODES];       /* a process's first protocol error, or 0 */
    uint64_t sink_total;             /* work units the sink received */
    uint64_t sink_messages;          /* messages the sink received */
};

/* Protocol errors a process records (it never asserts). */
enum {
    RNET_ERR_RECV = 1, /* a receive failed or met EOF early */
    RNET_ERR_ROUND,    /* a message of the wrong round */
    RNET_ERR_SEND,     /* a send failed */
    RNET_ERR_TAIL      /* an input held more messages than the protocol sends */
};

/* Bytes of arena a net of 'g' needs with 'cfg', channels of 'capacity'
 * messages and stacks of 'stack' bytes (reserve pool and runner stacks
 * included, through kpn_size_net). */
size_t rnet_arena_size(const rnet_graph *g, const kpn_config *cfg, size_t capacity,
                       size_t stack);

/* The runner of 'runners' that the layers in contiguous blocks give node
 * 'v': layer l on runner l*runners/(layers+2). */
unsigned rnet_block_runner(const rnet_graph *g, int v, unsigned runners);

/* Spawn a process per node and connect a channel per edge, all of
 * 'capacity', into 'net', which has not run.  The source will emit
 * 'total' units in 'rounds' (>= 1) messages per output.  'pin_runners' > 0
 * pins the layers in contiguous blocks onto that many runners
 * (rnet_block_runner), as a static placement wants; 0 pins nothing. */
kpn_status rnet_build(kpn_net *net, const rnet_graph *g, rnet_run *run, uint64_t total,
                      uint64_t rounds, size_t capacity, size_t stack, unsigned pin_runners);

/* After kpn_run: processes that recorded an error, and the first of them
 * in '*first_node' (-1 if none; may be NULL). */
int rnet_errors(const rnet_run *run, int *first_node);

/* Work units all processes burned (the source and the sink burn none). */
uint64_t rnet_burned(const rnet_run *run);

/* 1 if the sink received exactly what the source emitted, every process
 * kept the protocol, and the sink got 'rounds' messages per input. */
int rnet_work_ok(const rnet_run *run);

#endif /* KPN_RANDOM_NET_H */
