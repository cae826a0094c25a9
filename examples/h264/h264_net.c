/* SPDX-License-Identifier: MIT */
/* The H.264 encoder as a Kahn process network, and the same encoder as a plain loop. */
#include <stdio.h>
#include <string.h>
#include "h264_net.h"

/*
 * The network: the encoder diagram of the H.264 papers (thesis figure 5.5,
 * after Richardson's white paper), one process per block.  A row of
 * macroblocks is the unit of work and of every message.
 *
 *          ┌──────────────────────────────────────────────┬──────────┬───────────┐
 *          │                                              ▼          ▼           ▼
 *   Fn ────┼─► IP ─────────────────────────────► CIP ─► MC ─► +/- ─► T ─► Q ─► R ─► EC ─► stream
 *          │                                    ▲  ▲    ▲ │               │    ▲
 *          └─► ME ──────────────────────────────┘  │    │ │               ▼    │ intra levels
 *              ▲                                   │    │ │               Qi   │
 *              │                                   │    │ │               ▼    │
 *              │                                   │    │ │               Ti   │
 *              │                                   │    │ │               ▼    │
 *              │                                   │    │ └──────────────► + ──┘
 *              │                                   │    │                  │ reconstructed rows
 *              └───────────────────── F(n-1) ◄─────┴────┴──────────────────┘
 *                     reference windows of frame n+1, from frame n's reconstruction
 *
 *   (Fn also feeds CIP, +/- and +.)
 *
 *   ME, MC (and T, Q, Qi, Ti):  split ──┬─► worker 0 ──┬─► merge
 *                                       ├─► worker 1 ──┤     rows go round-robin:
 *                                       └─► ...      ──┘     row g to worker g mod w
 *
 * Fn      cuts each source frame into macroblock rows.
 * IP      intra analysis: the best Intra16x16 and chroma modes by SAD.
 * ME      motion estimation in the row's reference window.
 * CIP     the choice per macroblock: intra, or inter with the motion
 *         search's vector or the P_Skip one; in raster order, since a
 *         vector's predictor depends on the neighbours' choices.  This is
 *         why it comes before MC here: compensation needs the final vector.
 * MC      motion compensation: the inter prediction.
 * +/-, T, Q   residual, 4x4 transform, quantisation.
 * R, EC   zig-zag, then CAVLC: the stream.
 * Qi, Ti, +   rescaling, inverse transform, prediction + residual.  Intra
 *         macroblocks are predicted from their reconstructed neighbours,
 *         so + codes them whole (with the same T, Q, Qi, Ti functions) and
 *         sends their levels to R.
 * F(n-1)  the reference frame store: it sends row r of frame n+1's
 *         window as soon as frame n's reconstruction reaches row r+1.
 *         That is the loop: frame n+1 is predicted from frame n exactly as
 *         a decoder reconstructs it.
 *
 * Every process knows how many rows it handles, receives them in order
 * and checks their frame and row numbers.  Rows pass by value; a channel
 * holds a frame's worth of them (a worker's channel its share), so Fn and
 * IP may run a frame ahead while the loop finishes the previous one.
 */

typedef void (*row_fn)(const h264_setup *s, const void *in0, const void *in1, void *out);

#define MAX_PORTS (2 * H264_MAX_WORKERS)

typedef struct node node;
struct node {
    h264_net *hn;
    void (*body)(node *n);
    kpn_proc *proc;
    kpn_chan *in[MAX_PORTS], *out[MAX_PORTS];
    int n_in, n_out;
    int index, count; /* a block handles rows g with g % count == index */
    row_fn run;
    void *buf[6];     /* rows received and produced */
    void *state;
    long errors;
};

#define MAX_NODES (32 + 6 * (H264_MAX_WORKERS + 2))

struct h264_net {
    h264_job job;
    node nodes[MAX_NODES];
    int n_nodes;
    h264_entropy entropy;
};

/* ------------------------------------------------------------ memory */

/* A bump allocator over the workspace; with no base it only measures. */
typedef struct carver {
    uint8_t *base;
    size_t size, used;
} carver;

static void *carve(carver *c, size_t n)
{
    size_t at = (c->used + 63) & ~(size_t)63;
    c->used = at + n;
    if (c->base == NULL || c->used > c->size)
        return NULL;
    return c->base + at;
}

static int job_ok(const h264_job *job)
{
    return job != NULL && job->frames != NULL && job->stream != NULL &&
           job->setup.mb_w >= 1 && job->setup.mb_w <= H264_MAX_MB_W && job->setup.mb_h >= 1 &&
           job->setup.mb_h <= H264_MAX_MB_H && job->setup.frames >= 1 &&
           job->workers >= 1 && job->workers <= H264_MAX_WORKERS;
}

static const uint8_t *const *picture_planes(const h264_setup *s, const uint8_t *frame,
                                            const uint8_t *planes[3])
{
    size_t luma = (size_t)s->width * (size_t)s->height;
    planes[0] = frame;
    planes[1] = frame + luma;
    planes[2] = frame + luma + luma / 4;
    return planes;
}

/* Copies a reconstructed row into the caller's pictures, without the
 * padding beyond the picture's edges. */
static void keep_recon(const h264_setup *s, uint8_t *recon, const h264_pixel_row *row)
{
    size_t luma = (size_t)s->width * (size_t)s->height, frame = luma + luma / 2;
    uint8_t *y = recon + frame * (size_t)row->head.frame, *u = y + luma, *v = u + luma / 4;
    int x, j, cw = s->width / 2;

    if (recon == NULL)
        return;
    for (x = 0; x < s->mb_w; ++x) {
        int n = s->width - 16 * x < 16 ? s->width - 16 * x : 16;
        for (j = 0; j < 16 && 16 * row->head.row + j < s->height; ++j)
            memcpy(y + (size_t)(16 * row->head.row + j) * (size_t)s->width + 16 * x,
                   row->mb[x].y + 16 * j, (size_t)n);
        for (j = 0; j < 8 && 8 * row->head.row + j < s->height / 2; ++j) {
            size_t at = (size_t)(8 * row->head.row + j) * (size_t)cw + (size_t)(8 * x);
            memcpy(u + at, row->mb[x].u + 8 * j, (size_t)n / 2);
            memcpy(v + at, row->mb[x].v + 8 * j, (size_t)n / 2);
        }
    }
}

/* ------------------------------------------------------------ the processes */

static int total_rows(const node *n)
{
    return n->hn->job.setup.frames * n->hn->job.setup.mb_h;
}

/* Receives row g on input i and checks it is the one expected. */
static void recv_row(node *n, int i, void *row, int g)
{
    const h264_head *h = row;
    int rows = n->hn->job.setup.mb_h;
    if (kpn_recv(n->in[i], row) != KPN_OK || h->frame != g / rows || h->row != g % rows)
        ++n->errors;
}

static void send_all(node *n, const void *row)
{
    int i;
    for (i = 0; i < n->n_out; ++i)
        if (kpn_send(n->out[i], row) != KPN_OK)
            ++n->errors;
}

static void source_body(node *n)
{
    const h264_setup *s = &n->hn->job.setup;
    const uint8_t *planes[3];
    int g;
    for (g = 0; g < total_rows(n); ++g) {
        int f = g / s->mb_h;
        h264_source(s, picture_planes(s, n->hn->job.frames[f], planes), f, g % s->mb_h,
                    n->buf[0]);
        send_all(n, n->buf[0]);
    }
}

static void reference_body(node *n)
{
    const h264_setup *s = &n->hn->job.setup;
    h264_reference *ref = n->state;
    int f, r;

    for (r = 0; r < s->mb_h; ++r) {
        h264_reference_window(s, ref, 0, r, n->buf[1]);
        send_all(n, n->buf[1]);
    }
    for (f = 0; f < s->frames; ++f) {
        for (r = 0; r < s->mb_h; ++r) {
            recv_row(n, 0, n->buf[0], f * s->mb_h + r);
            h264_reference_store(s, ref, n->buf[0]);
            keep_recon(s, n->hn->job.recon, n->buf[0]);
            if (f + 1 < s->frames && r >= 1) {
                h264_reference_window(s, ref, f + 1, r - 1, n->buf[1]);
                send_all(n, n->buf[1]);
            }
        }
        if (f + 1 < s->frames) {
            h264_reference_window(s, ref, f + 1, s->mb_h - 1, n->buf[1]);
            send_all(n, n->buf[1]);
        }
    }
}

static void intra_body(node *n)
{
    int g;
    for (g = 0; g < total_rows(n); ++g) {
        recv_row(n, 0, n->buf[0], g);
        h264_intra_analysis(&n->hn->job.setup, n->state, n->buf[0], n->buf[1]);
        send_all(n, n->buf[1]);
    }
}

static void choose_body(node *n)
{
    int g, i;
    for (g = 0; g < total_rows(n); ++g) {
        for (i = 0; i < 4; ++i)
            recv_row(n, i, n->buf[i], g);
        h264_choose(&n->hn->job.setup, n->state, n->buf[0], n->buf[1], n->buf[2], n->buf[3],
                    n->buf[4]);
        send_all(n, n->buf[4]);
    }
}

static void reconstruct_body(node *n)
{
    int g, i;
    for (g = 0; g < total_rows(n); ++g) {
        for (i = 0; i < 3; ++i)
            recv_row(n, i, n->buf[i], g);
        h264_reconstruct(&n->hn->job.setup, n->state, n->buf[0], n->buf[1], n->buf[2],
                         n->buf[3], n->buf[4]);
        if (kpn_send(n->out[0], n->buf[3]) != KPN_OK || kpn_send(n->out[1], n->buf[4]) != KPN_OK)
            ++n->errors;
    }
}

static void entropy_body(node *n)
{
    int g;
    for (g = 0; g < total_rows(n); ++g) {
        recv_row(n, 0, n->buf[0], g);
        h264_entropy_row(&n->hn->job.setup, &n->hn->entropy, n->buf[0]);
    }
}

/* A block of one or two inputs without state: a single process, or one
 * worker of a parallel stage. */
static void block_body(node *n)
{
    int g;
    for (g = n->index; g < total_rows(n); g += n->count) {
        recv_row(n, 0, n->buf[0], g);
        if (n->n_in > 1)
            recv_row(n, 1, n->buf[1], g);
        n->run(&n->hn->job.setup, n->buf[0], n->buf[1], n->buf[2]);
        send_all(n, n->buf[2]);
    }
}

/* A parallel stage's split: row g to worker g mod w, each input on its own
 * channel (out[k * inputs + i]). */
static void split_body(node *n)
{
    int g, i;
    for (g = 0; g < total_rows(n); ++g) {
        int k = g % n->count;
        for (i = 0; i < n->n_in; ++i) {
            recv_row(n, i, n->buf[i], g);
            if (kpn_send(n->out[k * n->n_in + i], n->buf[i]) != KPN_OK)
                ++n->errors;
        }
    }
}

/* ... and its merge, taking the rows back in order. */
static void merge_body(node *n)
{
    int g;
    for (g = 0; g < total_rows(n); ++g) {
        recv_row(n, g % n->count, n->buf[0], g);
        send_all(n, n->buf[0]);
    }
}

static void node_main(void *arg)
{
    node *n = arg;
    n->body(n);
}

/* The blocks as row functions. */
static void run_search(const h264_setup *s, const void *a, const void *b, void *out)
{
    h264_motion_search(s, a, b, out);
}
static void run_compensate(const h264_setup *s, const void *a, const void *b, void *out)
{
    h264_compensate(s, a, b, out);
}
static void run_subtract(const h264_setup *s, const void *a, const void *b, void *out)
{
    h264_subtract(s, a, b, out);
}
static void run_transform(const h264_setup *s, const void *a, const void *b, void *out)
{
    (void)b;
    h264_transform(s, a, out);
}
static void run_quantise(const h264_setup *s, const void *a, const void *b, void *out)
{
    (void)b;
    h264_quantise(s, a, out);
}
static void run_rescale(const h264_setup *s, const void *a, const void *b, void *out)
{
    (void)b;
    h264_rescale(s, a, out);
}
static void run_inverse(const h264_setup *s, const void *a, const void *b, void *out)
{
    (void)b;
    h264_inverse(s, a, out);
}
static void run_reorder(const h264_setup *s, const void *a, const void *b, void *out)
{
    h264_reorder(s, a, b, out);
}

/* ------------------------------------------------------------ building */

/* Builds or, with no net, only measures: the same calls either way. */
typedef struct builder {
    kpn_net *net;        /* NULL: measure */
    const h264_job *job;
    h264_net *hn;        /* what is built; NULL when measuring */
    carver work;
    size_t arena;        /* bytes of kpn arena the processes and channels take */
    kpn_status status;
    node scratch;        /* what a measuring build writes nodes into */
} builder;

static node *new_node(builder *b, const char *name, void (*body)(node *), int index, int count)
{
    node *n = &b->scratch;
    b->arena += kpn_size_proc(H264_STACK, strlen(name));
    if (b->net == NULL || b->status != KPN_OK)
        return n;
    if (b->hn->n_nodes >= MAX_NODES) {
        b->status = KPN_EINVAL;
        return n;
    }
    n = &b->hn->nodes[b->hn->n_nodes++];
    memset(n, 0, sizeof *n);
    n->hn = b->hn;
    n->body = body;
    n->index = index;
    n->count = count;
    b->status = kpn_spawn(b->net, &n->proc, name, node_main, n, H264_STACK);
    return n;
}

static void *new_buffer(builder *b, h264_row_kind kind)
{
    void *p = carve(&b->work, h264_row_size(kind, b->job->setup.mb_w));
    if (b->net != NULL && p == NULL && b->status == KPN_OK)
        b->status = KPN_ENOMEM;
    return p;
}

/* A channel from output 'o' of 'from' to input 'i' of 'to'. */
static void link(builder *b, node *from, int o, node *to, int i, h264_row_kind kind,
                 size_t capacity)
{
    size_t size = h264_row_size(kind, b->job->setup.mb_w);
    kpn_chan *c = NULL;
    b->arena += kpn_size_chan(size, capacity);
    if (b->net == NULL || b->status != KPN_OK)
        return;
    b->status = kpn_connect(b->net, &c, from->proc, to->proc, size, capacity);
    from->out[o] = c;
    to->in[i] = c;
    if (o >= from->n_out)
        from->n_out = o + 1;
    if (i >= to->n_in)
        to->n_in = i + 1;
}

/* A block with 'inputs' inputs of 'in_kind' (one kind for both; 'in_kind2'
 * for the second) giving 'out_kind': one process, or split, w workers and
 * merge.  '*first' gets the node that receives, '*last' the one that
 * sends. */
static void new_block(builder *b, const char *name, row_fn run, int inputs,
                      h264_row_kind in_kind, h264_row_kind in_kind2, h264_row_kind out_kind,
                      int parallel, node **first, node **last)
{
    int w = parallel ? b->job->workers : 1, k, i;
    size_t share = (size_t)((b->job->setup.mb_h + w - 1) / w) + 1;
    char label[32];
    node *split, *merge, *worker;

    if (!parallel) {
        worker = new_node(b, name, block_body, 0, 1);
        worker->run = run;
        worker->buf[0] = new_buffer(b, in_kind);
        worker->buf[1] = inputs > 1 ? new_buffer(b, in_kind2) : NULL;
        worker->buf[2] = new_buffer(b, out_kind);
        *first = *last = worker;
        return;
    }
    snprintf(label, sizeof label, "%s split", name);
    split = new_node(b, label, split_body, 0, w);
    split->buf[0] = new_buffer(b, in_kind);
    split->buf[1] = inputs > 1 ? new_buffer(b, in_kind2) : NULL;
    snprintf(label, sizeof label, "%s merge", name);
    merge = new_node(b, label, merge_body, 0, w);
    merge->buf[0] = new_buffer(b, out_kind);
    for (k = 0; k < w; ++k) {
        snprintf(label, sizeof label, "%s %d", name, k);
        worker = new_node(b, label, block_body, k, w);
        worker->run = run;
        worker->buf[0] = new_buffer(b, in_kind);
        worker->buf[1] = inputs > 1 ? new_buffer(b, in_kind2) : NULL;
        worker->buf[2] = new_buffer(b, out_kind);
        for (i = 0; i < inputs; ++i)
            link(b, split, k * inputs + i, worker, i, i == 0 ? in_kind : in_kind2, share);
        link(b, worker, 0, merge, k, out_kind, share);
    }
    *first = split;
    *last = merge;
}

static kpn_status build(builder *b)
{
    const h264_setup *s = &b->job->setup;
    size_t cap = (size_t)s->mb_h;
    node *fn, *ref, *ip, *cip, *rec, *ec, *me_in, *me_out, *mc_in, *mc_out, *sub, *t_in, *t_out,
        *q_in, *q_out, *qi_in, *qi_out, *ti_in, *ti_out, *r;

    fn = new_node(b, "Fn", source_body, 0, 1);
    fn->buf[0] = new_buffer(b, H264_ROW_PIXELS);
    ref = new_node(b, "F(n-1)", reference_body, 0, 1);
    ref->buf[0] = new_buffer(b, H264_ROW_PIXELS);
    ref->buf[1] = new_buffer(b, H264_ROW_WINDOW);
    ref->state = carve(&b->work, sizeof(h264_reference) + h264_reference_size(s));
    if (ref->state != NULL)
        h264_reference_init(ref->state, s, (h264_reference *)ref->state + 1);
    ip = new_node(b, "IP", intra_body, 0, 1);
    ip->buf[0] = new_buffer(b, H264_ROW_PIXELS);
    ip->buf[1] = new_buffer(b, H264_ROW_ANALYSIS);
    ip->state = carve(&b->work, sizeof(h264_row_edge));
    new_block(b, "ME", run_search, 2, H264_ROW_PIXELS, H264_ROW_WINDOW, H264_ROW_ANALYSIS, 1,
              &me_in, &me_out);
    cip = new_node(b, "CIP", choose_body, 0, 1);
    cip->buf[0] = new_buffer(b, H264_ROW_PIXELS);
    cip->buf[1] = new_buffer(b, H264_ROW_WINDOW);
    cip->buf[2] = new_buffer(b, H264_ROW_ANALYSIS);
    cip->buf[3] = new_buffer(b, H264_ROW_ANALYSIS);
    cip->buf[4] = new_buffer(b, H264_ROW_MODES);
    cip->state = carve(&b->work, sizeof(h264_choice));
    new_block(b, "MC", run_compensate, 2, H264_ROW_MODES, H264_ROW_WINDOW, H264_ROW_PIXELS, 1,
              &mc_in, &mc_out);
    new_block(b, "+/-", run_subtract, 2, H264_ROW_PIXELS, H264_ROW_PIXELS, H264_ROW_LEVELS, 0,
              &sub, &sub);
    new_block(b, "T", run_transform, 1, H264_ROW_LEVELS, H264_ROW_LEVELS, H264_ROW_LEVELS, 1,
              &t_in, &t_out);
    new_block(b, "Q", run_quantise, 1, H264_ROW_LEVELS, H264_ROW_LEVELS, H264_ROW_LEVELS, 1,
              &q_in, &q_out);
    new_block(b, "Qi", run_rescale, 1, H264_ROW_LEVELS, H264_ROW_LEVELS, H264_ROW_LEVELS, 1,
              &qi_in, &qi_out);
    new_block(b, "Ti", run_inverse, 1, H264_ROW_LEVELS, H264_ROW_LEVELS, H264_ROW_LEVELS, 1,
              &ti_in, &ti_out);
    rec = new_node(b, "+", reconstruct_body, 0, 1);
    rec->buf[0] = new_buffer(b, H264_ROW_PIXELS);
    rec->buf[1] = new_buffer(b, H264_ROW_PIXELS);
    rec->buf[2] = new_buffer(b, H264_ROW_LEVELS);
    rec->buf[3] = new_buffer(b, H264_ROW_PIXELS);
    rec->buf[4] = new_buffer(b, H264_ROW_LEVELS);
    rec->state = carve(&b->work, sizeof(h264_row_edge));
    new_block(b, "R", run_reorder, 2, H264_ROW_LEVELS, H264_ROW_LEVELS, H264_ROW_LEVELS, 0, &r,
              &r);
    ec = new_node(b, "EC", entropy_body, 0, 1);
    ec->buf[0] = new_buffer(b, H264_ROW_LEVELS);
    ec->state = carve(&b->work, h264_slice_size(s));
    if (b->net != NULL && b->status == KPN_OK) {
        if (ref->state == NULL || ip->state == NULL || cip->state == NULL || rec->state == NULL ||
            ec->state == NULL)
            b->status = KPN_ENOMEM;
        else
            h264_entropy_init(&b->hn->entropy, s, ec->state, b->job->stream,
                              b->job->stream_cap);
    }

    /* Fn's source rows */
    link(b, fn, 0, ip, 0, H264_ROW_PIXELS, cap);
    link(b, fn, 1, me_in, 0, H264_ROW_PIXELS, cap);
    link(b, fn, 2, cip, 0, H264_ROW_PIXELS, cap);
    link(b, fn, 3, sub, 0, H264_ROW_PIXELS, cap);
    link(b, fn, 4, rec, 0, H264_ROW_PIXELS, cap);
    /* F(n-1)'s reference windows */
    link(b, ref, 0, me_in, 1, H264_ROW_WINDOW, cap);
    link(b, ref, 1, cip, 1, H264_ROW_WINDOW, cap);
    link(b, ref, 2, mc_in, 1, H264_ROW_WINDOW, cap);
    /* analysis, choice, prediction */
    link(b, me_out, 0, cip, 2, H264_ROW_ANALYSIS, cap);
    link(b, ip, 0, cip, 3, H264_ROW_ANALYSIS, cap);
    link(b, cip, 0, mc_in, 0, H264_ROW_MODES, cap);
    link(b, mc_out, 0, sub, 1, H264_ROW_PIXELS, cap);
    link(b, mc_out, 1, rec, 1, H264_ROW_PIXELS, cap);
    /* forward path */
    link(b, sub, 0, t_in, 0, H264_ROW_LEVELS, cap);
    link(b, t_out, 0, q_in, 0, H264_ROW_LEVELS, cap);
    link(b, q_out, 0, r, 0, H264_ROW_LEVELS, cap);
    link(b, r, 0, ec, 0, H264_ROW_LEVELS, cap);
    /* the loop */
    link(b, q_out, 1, qi_in, 0, H264_ROW_LEVELS, cap);
    link(b, qi_out, 0, ti_in, 0, H264_ROW_LEVELS, cap);
    link(b, ti_out, 0, rec, 2, H264_ROW_LEVELS, cap);
    link(b, rec, 0, ref, 0, H264_ROW_PIXELS, cap);
    link(b, rec, 1, r, 1, H264_ROW_LEVELS, cap);
    return b->status;
}

static void measure(const h264_job *job, const kpn_config *cfg, size_t *work, size_t *arena)
{
    builder b;

    memset(&b, 0, sizeof b);
    b.job = job;
    b.work.used = sizeof(h264_net);
    build(&b);
    *work = b.work.used + 64;
    *arena = kpn_size_net(cfg) + b.arena;
}

size_t h264_work_size(const h264_job *job)
{
    size_t work, arena;
    if (!job_ok(job))
        return 0;
    measure(job, NULL, &work, &arena);
    return work;
}

size_t h264_arena_size(const h264_job *job, const kpn_config *cfg)
{
    size_t work, arena;
    if (!job_ok(job))
        return 0;
    measure(job, cfg, &work, &arena);
    return arena;
}

kpn_status h264_build(kpn_net *net, const h264_job *job, void *work, size_t work_size,
                      h264_net **hn)
{
    builder b;

    if (net == NULL || work == NULL || hn == NULL || !job_ok(job))
        return KPN_EINVAL;
    memset(&b, 0, sizeof b);
    b.net = net;
    b.work.base = work;
    b.work.size = work_size;
    b.hn = carve(&b.work, sizeof(h264_net));
    if (b.hn == NULL)
        return KPN_ENOMEM;
    memset(b.hn, 0, sizeof *b.hn);
    b.hn->job = *job;
    b.job = &b.hn->job;
    if (build(&b) != KPN_OK)
        return b.status;
    *hn = b.hn;
    return KPN_OK;
}

static void fill_result(const h264_entropy *e, long errors, h264_result *res)
{
    res->bytes = e->size;
    res->bits = e->bits;
    res->checksum = h264_checksum(e->out, e->size);
    res->intra_mbs = e->intra_mbs;
    res->skip_mbs = e->skip_mbs;
    res->errors = errors;
    res->overflow = e->overflow;
}

void h264_collect(const h264_net *hn, h264_result *res)
{
    long errors = 0;
    int i;
    for (i = 0; i < hn->n_nodes; ++i)
        errors += hn->nodes[i].errors;
    fill_result(&hn->entropy, errors, res);
}

/* ------------------------------------------------------------ the plain loop */

typedef struct sequential {
    h264_pixel_row *src, *pred, *recon;
    h264_window *win;
    h264_analysis_row *ip, *me;
    h264_mode_row *modes;
    h264_level_row *levels, *residual, *intra, *ordered;
    h264_row_edge *ip_edge, *recon_edge;
    h264_choice *choice;
    h264_reference *ref;
    h264_entropy *entropy;
    uint8_t *slice;
} sequential;

static void carve_sequential(carver *c, const h264_setup *s, sequential *q)
{
    int w = s->mb_w;
    q->src = carve(c, h264_row_size(H264_ROW_PIXELS, w));
    q->pred = carve(c, h264_row_size(H264_ROW_PIXELS, w));
    q->recon = carve(c, h264_row_size(H264_ROW_PIXELS, w));
    q->win = carve(c, h264_row_size(H264_ROW_WINDOW, w));
    q->ip = carve(c, h264_row_size(H264_ROW_ANALYSIS, w));
    q->me = carve(c, h264_row_size(H264_ROW_ANALYSIS, w));
    q->modes = carve(c, h264_row_size(H264_ROW_MODES, w));
    q->levels = carve(c, h264_row_size(H264_ROW_LEVELS, w));
    q->residual = carve(c, h264_row_size(H264_ROW_LEVELS, w));
    q->intra = carve(c, h264_row_size(H264_ROW_LEVELS, w));
    q->ordered = carve(c, h264_row_size(H264_ROW_LEVELS, w));
    q->ip_edge = carve(c, sizeof(h264_row_edge));
    q->recon_edge = carve(c, sizeof(h264_row_edge));
    q->choice = carve(c, sizeof(h264_choice));
    q->ref = carve(c, sizeof(h264_reference) + h264_reference_size(s));
    q->entropy = carve(c, sizeof(h264_entropy));
    q->slice = carve(c, h264_slice_size(s));
}

size_t h264_sequential_work_size(const h264_job *job)
{
    carver c = {NULL, 0, 0};
    sequential q;
    if (!job_ok(job))
        return 0;
    carve_sequential(&c, &job->setup, &q);
    return c.used + 64;
}

kpn_status h264_encode_sequential(const h264_job *job, void *work, size_t work_size,
                                  h264_result *res)
{
    const h264_setup *s;
    carver c;
    sequential q;
    const uint8_t *planes[3];
    int f, r;

    if (!job_ok(job) || work == NULL || res == NULL)
        return KPN_EINVAL;
    s = &job->setup;
    c.base = work;
    c.size = work_size;
    c.used = 0;
    carve_sequential(&c, s, &q);
    if (q.slice == NULL)
        return KPN_ENOMEM;
    h264_reference_init(q.ref, s, q.ref + 1);
    h264_entropy_init(q.entropy, s, q.slice, job->stream, job->stream_cap);
    for (f = 0; f < s->frames; ++f)
        for (r = 0; r < s->mb_h; ++r) {
            h264_source(s, picture_planes(s, job->frames[f], planes), f, r, q.src);
            h264_reference_window(s, q.ref, f, r, q.win);
            h264_intra_analysis(s, q.ip_edge, q.src, q.ip);
            h264_motion_search(s, q.src, q.win, q.me);
            h264_choose(s, q.choice, q.src, q.win, q.me, q.ip, q.modes);
            h264_compensate(s, q.modes, q.win, q.pred);
            h264_subtract(s, q.src, q.pred, q.levels);
            h264_transform(s, q.levels, q.levels);
            h264_quantise(s, q.levels, q.levels);
            h264_rescale(s, q.levels, q.residual);
            h264_inverse(s, q.residual, q.residual);
            h264_reconstruct(s, q.recon_edge, q.src, q.pred, q.residual, q.recon, q.intra);
            h264_reference_store(s, q.ref, q.recon);
            keep_recon(s, job->recon, q.recon);
            h264_reorder(s, q.levels, q.intra, q.ordered);
            h264_entropy_row(s, q.entropy, q.ordered);
        }
    fill_result(q.entropy, 0, res);
    return KPN_OK;
}
