/* SPDX-License-Identifier: MIT */
/* Random layered networks: the generator, the processes and their work protocol. */
#include <string.h>
#include "randnet.h"

/*
 * The generator (Vrba's thesis, 5.2.1.4, and the Nornir paper's "random network"):
 *
 *  1. Widths.  Each of the L layers gets a width drawn uniformly from
 *     1..m, where m makes the mean width (m+1)/2 as close as it can be to
 *     (nodes-2)/L.  Then single layers, picked at random, are widened
 *     (up to m) or narrowed (down to 1) until the widths add up to
 *     nodes-2 exactly, so a preset has the papers' node count.
 *  2. Forward edges.  Every process but the sink draws an out-degree from
 *     a geometric distribution on 1, 2, ... (mean 1.17) and, for each
 *     edge, a layer distance from another (mean 1.41); the edge goes
 *     to a random process of the layer that far ahead (the sink if that is
 *     past the last layer).  A duplicate of an edge it already has is
 *     drawn again, at most 4 times, then dropped.  Finally every process
 *     left without an input gets one from a random process a geometric
 *     distance back.  So every process hears from the source and reaches
 *     the sink.
 *  3. Back-edges.  A random process u of layer 2..L that has no back-edge
 *     yet picks, a geometric distance back (mean 6.7 layers), one of
 *     its forward ancestors v that has none either, and gets the edge
 *     u -> v: it closes at least the cycle v -> ... -> u -> v.  The
 *     Vrba's thesis's rule: each process is incident to at most one back-edge.
 *
 * With 'twins' > 0, each forward edge drawn in step 2 is followed, with
 * that chance in 1024, by a parallel twin.
 *
 * Vrba's thesis gives the shape of the distributions but not their
 * parameters.  DEG_Q and DIST_Q are chosen so that the papers' node counts
 * give their edge counts on average (over seeds 1..2000: 238 nodes in 50
 * layers make 365.0 edges, Vrba's thesis's RND-A has 364; 212 nodes with 13
 * back-edges make 336.5, RND-B has 333), and each preset's seed is the
 * first, counting from 1, that gives the papers' counts exactly.
 */

/* Geometric distributions as "one more with probability q/1024". */
enum {
    DEG_Q = 150,  /* out-degree: mean 1/(1-q) = 1.17 */
    DIST_Q = 300, /* layer distance of a forward edge: mean 1.41 */
    BACK_Q = 870, /* layer distance of a back-edge: mean 6.7 */
    GEO_CAP = 64
};

const rnet_preset rnet_presets[] = {
    /* Vrba's thesis, 5.2.3.1: "238 nodes and 364 edges in 50 layers" */
    {"RND-A", {UINT64_C(4), 238, 50, 0, 0}, 364, 0},
    /* "212 nodes, 333 edges in 50 layers and 13 cycles" */
    {"RND-B", {UINT64_C(92), 212, 50, 13, 0}, 333, 13},
    {NULL, {0, 0, 0, 0, 0}, 0, 0},
};

static int same_name(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; ++a, ++b) {
        int x = *a >= 'a' && *a <= 'z' ? *a - 'a' + 'A' : *a;
        int y = *b >= 'a' && *b <= 'z' ? *b - 'a' + 'A' : *b;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

const rnet_preset *rnet_preset_find(const char *name)
{
    const rnet_preset *p;

    for (p = rnet_presets; name != NULL && p->name != NULL; ++p)
        if (same_name(p->name, name))
            return p;
    return NULL;
}

/* ------------------------------------------------------------ drawing */

/* xorshift64*, seeded through splitmix64 so that nearby seeds differ. */
typedef struct rng {
    uint64_t s;
} rng;

static void rng_seed(rng *r, uint64_t seed)
{
    uint64_t z = seed + UINT64_C(0x9e3779b97f4a7c15);

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    r->s = z != 0 ? z : 1;
}

static uint64_t rng_next(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * UINT64_C(0x2545f4914f6cdd1d);
}

/* Uniform in 0..n-1 (n >= 1). */
static int below(rng *r, int n)
{
    return (int)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* 1, 2, ...: one more with probability q/1024 each time. */
static int geometric(rng *r, int q)
{
    int k = 1;

    while (k < GEO_CAP && below(r, 1024) < q)
        ++k;
    return k;
}

/* Fill the forward port lists from the edge list, in edge order (a
 * counting sort: count, add up, place). */
static void index_ports(rnet_graph *g)
{
    static int in_next[RNET_MAX_NODES], out_next[RNET_MAX_NODES];
    int v, e;

    for (v = 0; v <= g->nodes; ++v)
        g->in_first[v] = g->out_first[v] = 0;
    for (e = 0; e < g->edges; ++e)
        if (!g->back[e]) {
            g->in_first[g->to[e] + 1]++;
            g->out_first[g->from[e] + 1]++;
        }
    for (v = 0; v < g->nodes; ++v) {
        g->in_first[v + 1] += g->in_first[v];
        g->out_first[v + 1] += g->out_first[v];
        in_next[v] = g->in_first[v];
        out_next[v] = g->out_first[v];
    }
    for (e = 0; e < g->edges; ++e)
        if (!g->back[e]) {
            g->in_edge[in_next[g->to[e]]++] = e;
            g->out_edge[out_next[g->from[e]]++] = e;
        }
}

int rnet_in_degree(const rnet_graph *g, int v)
{
    return g->in_first[v + 1] - g->in_first[v];
}

int rnet_out_degree(const rnet_graph *g, int v)
{
    return g->out_first[v + 1] - g->out_first[v];
}

static int add_edge(rnet_graph *g, int from, int to, int back)
{
    if (g->edges == RNET_MAX_EDGES)
        return -1;
    g->from[g->edges] = from;
    g->to[g->edges] = to;
    g->back[g->edges] = (unsigned char)back;
    return g->edges++;
}

static int has_edge(const rnet_graph *g, int from, int to)
{
    int e;

    for (e = g->edges - 1; e >= 0 && g->from[e] == from; --e)
        if (g->to[e] == to)
            return 1;
    return 0;
}

/* Mark in 'seen' every forward ancestor of 'u' (u itself included). */
static void ancestors(const rnet_graph *g, int u, unsigned char *seen, int *stack)
{
    int top = 0, i;

    memset(seen, 0, (size_t)g->nodes);
    seen[u] = 1;
    stack[top++] = u;
    while (top > 0) {
        int v = stack[--top];
        for (i = g->in_first[v]; i < g->in_first[v + 1]; ++i) {
            int w = g->from[g->in_edge[i]];
            if (!seen[w]) {
                seen[w] = 1;
                stack[top++] = w;
            }
        }
    }
}

rnet_error rnet_generate(rnet_graph *g, const rnet_params *p)
{
    static unsigned char seen[RNET_MAX_NODES];
    static int stack[RNET_MAX_NODES];
    int first[RNET_MAX_NODES + 3], width[RNET_MAX_NODES + 2];
    int L, inner, sum, m, l, v, k, i, attempts;
    rng r;

    if (g == NULL || p == NULL || p->layers < 1 || p->nodes < p->layers + 2 ||
        p->nodes > RNET_MAX_NODES || p->back_edges < 0 || p->twins < 0 || p->twins > 1024)
        return RNET_EINVAL;
    memset(g, 0, sizeof *g);
    g->params = *p;
    L = g->layers = p->layers;
    g->nodes = p->nodes;
    inner = p->nodes - 2;
    rng_seed(&r, p->seed);

    /* 1. widths: uniform in 1..m, then nudged to add up to 'inner' */
    m = (4 * inner - L) / (2 * L);
    if (m < 1)
        m = 1;
    g->max_width = m;
    for (sum = 0, l = 1; l <= L; ++l)
        sum += width[l] = 1 + below(&r, m);
    while (sum != inner) {
        int grow = sum < inner;
        l = 1 + below(&r, L);
        for (k = 0; k < L; ++k, l = l % L + 1) /* the next layer that may move */
            if (grow ? width[l] < m : width[l] > 1)
                break;
        if (k == L) /* every layer at m: the mean asked for is above m */
            l = 1 + below(&r, L);
        width[l] += grow ? 1 : -1;
        sum += grow ? 1 : -1;
    }
    width[0] = width[L + 1] = 1;
    first[0] = 0;
    for (l = 0; l <= L + 1; ++l) {
        first[l + 1] = first[l] + width[l];
        for (v = first[l]; v < first[l + 1]; ++v)
            g->layer[v] = l;
    }
    for (v = 0; v < g->nodes; ++v)
        g->back_in[v] = g->back_out[v] = -1;

    /* 2. forward edges, then an input for every process without one */
    for (v = 0; v < first[L + 1]; ++v) {
        int degree = geometric(&r, DEG_Q);
        for (k = 0; k < degree; ++k) {
            for (attempts = 0; attempts < 4; ++attempts) {
                int tl = g->layer[v] + geometric(&r, DIST_Q);
                int to;
                if (tl > L + 1)
                    tl = L + 1;
                to = first[tl] + below(&r, width[tl]);
                if (!has_edge(g, v, to)) {
                    if (add_edge(g, v, to, 0) < 0)
                        return RNET_EFULL;
                    if (p->twins > 0 && below(&r, 1024) < p->twins &&
                        add_edge(g, v, to, 0) < 0)
                        return RNET_EFULL;
                    break;
                }
            }
        }
    }
    index_ports(g);
    k = g->edges;
    for (v = 1; v < g->nodes; ++v) {
        if (g->in_first[v + 1] > g->in_first[v])
            continue;
        l = g->layer[v] - geometric(&r, DIST_Q);
        if (l < 0)
            l = 0;
        if (add_edge(g, first[l] + below(&r, width[l]), v, 0) < 0)
            return RNET_EFULL;
    }
    if (g->edges != k)
        index_ports(g);

    /* 3. back-edges, each between two processes that have none */
    for (attempts = 0; g->back_edges < p->back_edges && attempts < 64 * (p->back_edges + 1);
         ++attempts) {
        int u, target, best = -1;
        if (L < 2)
            break;
        u = first[2] + below(&r, first[L + 1] - first[2]);
        if (g->back_in[u] >= 0 || g->back_out[u] >= 0)
            continue;
        target = g->layer[u] - geometric(&r, BACK_Q);
        if (target < 1)
            target = 1;
        ancestors(g, u, seen, stack);
        /* the free ancestors of the layer nearest to 'target' */
        for (k = 0; best < 0 && k < L; ++k) {
            for (i = 0; i < 2 && best < 0; ++i) {
                int n = 0, pick;
                l = i == 0 ? target + k : target - k;
                if (l < 1 || l >= g->layer[u] || (i == 1 && k == 0))
                    continue;
                for (v = first[l]; v < first[l + 1]; ++v)
                    n += seen[v] && g->back_in[v] < 0 && g->back_out[v] < 0;
                if (n == 0)
                    continue;
                pick = below(&r, n);
                for (v = first[l]; v < first[l + 1]; ++v)
                    if (seen[v] && g->back_in[v] < 0 && g->back_out[v] < 0 && pick-- == 0)
                        best = v;
            }
        }
        if (best < 0)
            continue;
        if ((k = add_edge(g, u, best, 1)) < 0)
            return RNET_EFULL;
        g->back_out[u] = k;
        g->back_in[best] = k;
        g->back_edges++;
    }
    return RNET_OK;
}

double rnet_flow_factor(const rnet_graph *g)
{
    static double flow[RNET_MAX_NODES];
    double total = 0, change = 1;
    int v, i, pass;

    /* flow[v]: work per round through v for one unit a round from the
     * source.  Forward edges go up the numbering, so one pass in node
     * order is exact without back-edges; with them, repeat until the
     * back-edge flows settle (each cycle leaks, so they converge). */
    for (v = 0; v < g->nodes; ++v)
        flow[v] = 0;
    for (pass = 0; pass < 10000 && change > 1e-12; ++pass) {
        change = 0;
        for (v = 0; v < g->nodes; ++v) {
            double in = v == 0 ? 1.0 : 0.0, old = flow[v];
            for (i = g->in_first[v]; i < g->in_first[v + 1]; ++i) {
                int u = g->from[g->in_edge[i]];
                in += flow[u] / (rnet_out_degree(g, u) + (g->back_out[u] >= 0));
            }
            if (g->back_in[v] >= 0) {
                int u = g->from[g->back_in[v]];
                in += flow[u] / (rnet_out_degree(g, u) + 1);
            }
            flow[v] = in;
            change += in > old ? in - old : old - in;
        }
    }
    for (v = 1; v + 1 < g->nodes; ++v)
        total += flow[v];
    return total;
}

int rnet_write_dot(const rnet_graph *g, FILE *f)
{
    int l, v, e;

    fprintf(f, "// %d processes, %d channels (%d back-edges), %d layers: drawn by\n"
               "// random --seed=%llu --nodes=%d --layers=%d --back_edges=%d\n",
            g->nodes, g->edges, g->back_edges, g->layers, (unsigned long long)g->params.seed,
            g->params.nodes, g->params.layers, g->params.back_edges);
    fprintf(f, "digraph random_net {\n"
               "  rankdir=BT; nodesep=0.25; ranksep=0.35;\n"
               "  node [shape=circle, width=0.35, fixedsize=true, fontsize=9];\n"
               "  edge [arrowsize=0.6];\n");
    for (l = 0; l <= g->layers + 1; ++l) {
        fprintf(f, "  { rank=same;");
        for (v = 0; v < g->nodes; ++v)
            if (g->layer[v] == l)
                fprintf(f, " n%d", v);
        fprintf(f, " }\n");
    }
    fprintf(f, "  n0 [label=\"src\", shape=box, fixedsize=false];\n"
               "  n%d [label=\"sink\", shape=box, fixedsize=false];\n",
            g->nodes - 1);
    for (v = 1; v + 1 < g->nodes; ++v)
        if (g->back_in[v] >= 0 || g->back_out[v] >= 0)
            fprintf(f, "  n%d [label=\"%d\", style=filled, fillcolor=\"#fde0c5\"];\n", v, v);
        else
            fprintf(f, "  n%d [label=\"%d\"];\n", v, v);
    for (e = 0; e < g->edges; ++e)
        if (g->back[e])
            fprintf(f, "  n%d -> n%d [style=dashed, color=\"#c0392b\", constraint=false];\n",
                    g->from[e], g->to[e]);
        else
            fprintf(f, "  n%d -> n%d;\n", g->from[e], g->to[e]);
    fprintf(f, "}\n");
    return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------ the work */

/*
 * The protocol.  The source emits 'total' units as 'rounds' (d) messages
 * on each output: round r carries total/d, plus one unit in the first
 * total%d rounds, so the rounds add up to 'total' exactly.  In round r,
 * r = 0 .. d-1, every other process
 *
 *   1. reads one message of round r from each forward input, in edge
 *      order, and, if it has a back-edge input and r >= 1, one message of
 *      round r-1 from it; t is the sum of their work;
 *   2. burns t (the sink instead adds t to its total);
 *   3. splits t over its outputs: its forward outputs, plus its back-edge
 *      output unless this is its last round (r = d-1).  Each gets
 *      t / n, and the last forward output also the remainder t % n;
 *      messages go out in edge order, the back-edge's first.
 *
 * So a back-edge u -> v carries the messages of u's rounds 0 .. d-2, and v
 * reads them in its rounds 1 .. d-1: the back-edge is a delay of one
 * round, which is what lets the cycle v -> ... -> u -> v run at all (with
 * unbounded channels the network never deadlocks), and the work u sends
 * back in round r is burned again by v in round r+1.  In its last round u
 * sends everything forward, so no work is left on a back-edge: every
 * message sent is read, every process passes on exactly what it reads,
 * and the sink receives 'total', not a unit more or less.
 *
 * Work units are iterations of the burn loop, integers all the way: no
 * rounding anywhere.  After its last round a process closes its outputs
 * and then reads each input once more, which must say EOF: a channel
 * holding more messages than the rule sends is a protocol error.  The
 * closing comes first so that a reader of a back-edge, waiting for the
 * EOF of a writer downstream of itself, never waits on a process that
 * waits on it.
 */

static void process(void *arg)
{
    rnet_task *task = arg;
    rnet_run *run = task->run;
    const rnet_graph *g = run->g;
    const int v = task->node, sink = g->nodes - 1;
    const int back_in = g->back_in[v], back_out = g->back_out[v];
    const int nin = rnet_in_degree(g, v), nout = rnet_out_degree(g, v);
    uint64_t r, t, share, burned = 0, sunk = 0, got = 0;
    int i, n, err = 0;
    rnet_msg m;

    for (r = 0; r < run->rounds && err == 0; ++r) {
        t = 0;
        if (v == 0)
            t = run->total / run->rounds + (r < run->total % run->rounds);
        for (i = 0; i < nin && err == 0; ++i) {
            if (KPN_RECV(run->chan[g->in_edge[g->in_first[v] + i]], &m) != KPN_OK)
                err = RNET_ERR_RECV;
            else if (m.round != r)
                err = RNET_ERR_ROUND;
            else
                t += m.work;
            ++got;
        }
        if (back_in >= 0 && r > 0 && err == 0) {
            if (KPN_RECV(run->chan[back_in], &m) != KPN_OK)
                err = RNET_ERR_RECV;
            else if (m.round != r - 1)
                err = RNET_ERR_ROUND;
            else
                t += m.work;
        }
        if (err != 0)
            break;
        if (v == sink) {
            sunk += t;
            continue;
        }
        if (v != 0) {
            if (run->burn != NULL)
                run->burn(t);
            burned += t;
        }
        /* n outputs this round: t/n each, the remainder to the last */
        n = nout + (back_out >= 0 && r + 1 < run->rounds);
        share = t / (uint64_t)n;
        m.round = r;
        m.work = share;
        if (n > nout && KPN_SEND(run->chan[back_out], &m) != KPN_OK)
            err = RNET_ERR_SEND;
        for (i = 0; i < nout && err == 0; ++i) {
            if (i + 1 == nout)
                m.work = t - share * (uint64_t)(n - 1);
            if (KPN_SEND(run->chan[g->out_edge[g->out_first[v] + i]], &m) != KPN_OK)
                err = RNET_ERR_SEND;
        }
    }
    for (i = 0; i < nout; ++i)
        kpn_close(run->chan[g->out_edge[g->out_first[v] + i]]);
    if (back_out >= 0)
        kpn_close(run->chan[back_out]);
    for (i = 0; i < nin && err == 0; ++i)
        if (KPN_RECV(run->chan[g->in_edge[g->in_first[v] + i]], &m) != KPN_EOF)
            err = RNET_ERR_TAIL;
    if (back_in >= 0 && err == 0 && KPN_RECV(run->chan[back_in], &m) != KPN_EOF)
        err = RNET_ERR_TAIL;
    run->burned[v] = burned;
    run->error[v] = err;
    if (v == sink) {
        run->sink_total = sunk;
        run->sink_messages = got;
    }
}

static void node_name(const rnet_graph *g, int v, char *buf, size_t len)
{
    if (v == 0)
        snprintf(buf, len, "source");
    else if (v == g->nodes - 1)
        snprintf(buf, len, "sink");
    else
        snprintf(buf, len, "n%d", v);
}

size_t rnet_arena_size(const rnet_graph *g, const kpn_config *cfg, size_t capacity, size_t stack)
{
    char name[16];
    size_t need = kpn_size_net(cfg);
    int v;

    for (v = 0; v < g->nodes; ++v) {
        node_name(g, v, name, sizeof name);
        need += kpn_size_proc(stack, strlen(name));
    }
    return need + (size_t)g->edges * kpn_size_chan(sizeof(rnet_msg), capacity);
}

unsigned rnet_block_runner(const rnet_graph *g, int v, unsigned runners)
{
    return (unsigned)((unsigned long)g->layer[v] * runners / (unsigned long)(g->layers + 2));
}

kpn_status rnet_build(kpn_net *net, const rnet_graph *g, rnet_run *run, uint64_t total,
                      uint64_t rounds, size_t capacity, size_t stack, unsigned pin_runners)
{
    char name[16];
    kpn_status s;
    int v, e;

    if (net == NULL || g == NULL || run == NULL || rounds == 0)
        return KPN_EINVAL;
    run->g = g;
    run->total = total;
    run->rounds = rounds;
    run->sink_total = run->sink_messages = 0;
    for (v = 0; v < g->nodes; ++v) {
        run->task[v].run = run;
        run->task[v].node = v;
        run->burned[v] = 0;
        run->error[v] = 0;
        node_name(g, v, name, sizeof name);
        s = kpn_spawn(net, &run->proc[v], name, process, &run->task[v], stack);
        if (s != KPN_OK)
            return s;
        if (pin_runners > 0) {
            s = kpn_proc_pin(run->proc[v], rnet_block_runner(g, v, pin_runners));
            if (s != KPN_OK)
                return s;
        }
    }
    for (e = 0; e < g->edges; ++e) {
        s = kpn_connect(net, &run->chan[e], run->proc[g->from[e]], run->proc[g->to[e]], sizeof(rnet_msg),
                        capacity);
        if (s != KPN_OK)
            return s;
    }
    return KPN_OK;
}

int rnet_errors(const rnet_run *run, int *first_node)
{
    int v, n = 0;

    if (first_node != NULL)
        *first_node = -1;
    for (v = 0; v < run->g->nodes; ++v)
        if (run->error[v] != 0 && n++ == 0 && first_node != NULL)
            *first_node = v;
    return n;
}

uint64_t rnet_burned(const rnet_run *run)
{
    uint64_t sum = 0;
    int v;

    for (v = 0; v < run->g->nodes; ++v)
        sum += run->burned[v];
    return sum;
}

int rnet_work_ok(const rnet_run *run)
{
    const rnet_graph *g = run->g;

    return rnet_errors(run, NULL) == 0 && run->sink_total == run->total &&
           run->sink_messages ==
               run->rounds * (uint64_t)rnet_in_degree(g, g->nodes - 1);
}
