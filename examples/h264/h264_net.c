/* SPDX-License-Identifier: MIT */
/* The H.264 encoder example's network, its block operations, its sequential twin and the burn. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "h264_net.h"

/*
 * The network (thesis figure 5.5, after the H.264 white paper's encoder
 * diagram).  Every box is a process, every arrow a channel; ME, MC and P
 * are each a split, 'workers' worker processes and a merge.
 *
 *   Fn ─► fork ─┬───────────────────────────────────────► +/- ─► T ─► Q ─► fork ─► R ─► EC ─► bits
 *               ├─► IP ─────────┐                          ▲                │
 *               │               ▼                          │                ▼
 *               └─► ME ─► MC ─► CIP ─► P ─► fork ──────────┤                Qi
 *                   ▲     ▲                                │                │
 *                   └─fork┘                                └─────────► + ◄─ Ti
 *                      ▲                                               │
 *                      └────────── F(n-1) ◄────────────────────────────┘
 *                                  the feedback: frame n, reconstructed, is the
 *                                  reference of frame n+1
 *
 *   ME, MC, P:   split ──┬─► worker 0 ──┬─► merge     worker k takes the
 *                        ├─► worker 1 ──┤             macroblock rows
 *                        └─► ...      ──┘             [k*H/w, (k+1)*H/w)
 *
 * The unit of work and of communication is a macroblock row (16 picture
 * lines).  Per row r of frame n:
 *
 *   Fn      makes the source row (a moving test pattern) and sends it to
 *           ME, IP and +/- through its fork;
 *   F(n-1)  holds the reference: it sends a mid-grey frame as frame 0's
 *           reference, then collects all H reconstructed rows of frame n
 *           before it sends them on as frame n+1's reference.  That is the
 *           loop: no row of frame n+1 is predicted before the whole of
 *           frame n is reconstructed;
 *   ME      split: builds a job from the source row and a window of the
 *           reference (rows r-1..r+1, padded at the picture edges);
 *           worker: a full search of +-H264_SEARCH pixels by SAD per
 *           macroblock; merge: motion vectors and SADs in row order;
 *   MC      split: the vectors and a reference window again; worker: copies
 *           the displaced 16x16 block of every macroblock (the inter
 *           prediction); merge;
 *   IP      intra analysis: the best of the 16x16 modes vertical,
 *           horizontal and DC, by SAD, from the source neighbours;
 *   CIP     per macroblock, inter or intra by cost;
 *   P       split / worker: forms the chosen prediction (the inter block
 *           or the intra block from the neighbours) / merge, then a fork
 *           to +/- and +;
 *   +/-     residual = source - prediction, in 4x4 blocks;
 *   T, Q    H.264's 4x4 integer core transform, quantisation at QP 28;
 *   R, EC   zig-zag and block reorder; a CAVLC-like code (exp-Golomb
 *           macroblock type, motion vector difference, and per 4x4 block
 *           the count, runs and levels of its coefficients) hashed as it
 *           is emitted;
 *   Qi, Ti, +  rescaling, inverse transform, prediction + residual
 *           clipped: the reconstruction, back to F(n-1).
 *
 * Intra analysis uses the source picture's neighbours, not the
 * reconstructed ones a decoder would see (x264's lookahead does the same):
 * it keeps the macroblocks of a row independent, so P, ME and MC can split
 * a row range over workers and each macroblock's result depends only on
 * the data, never on which worker computed it.  Merges reassemble in row
 * order, so the entropy coder sees the same stream for every worker and
 * runner count.
 *
 * Messages.  Channels copy fixed-size messages, and every message here is
 * one macroblock row passed by value: a 16-byte header (frame, row) and
 * the sections its kind needs (the 'kinds' table below), sized for the
 * picture width when the net is built.  At CIF a row is 5.6 KB of
 * pixels, 11 KB of coefficients, a motion search job 12.5 KB; a frame
 * crosses each channel as 18 of them.  Copying one costs a microsecond
 * or two against the 50 to 500 microseconds a block spends on a row at a
 * 25 fps budget, and buys what pointers would not: every process owns its
 * buffers outright, so there is no protocol for reusing a buffer a reader
 * may still hold.  (The feedback loop would give one for the reference
 * frame, with two frame buffers taking turns, but nothing gives one for
 * the forward path, whose rows would need credits flowing back.)
 * F(n-1) is the one process holding a whole frame, as a reference store
 * must.
 *
 * Costs.  Each block also burns 'burn[stage]' busy-loop iterations per
 * row, the CPU time x264 spends there (h264_profile, h264_plan).  Forks,
 * splits and merges burn nothing: they are the papers' extra processes.
 */

/* ------------------------------------------------------------------ */
/* The profile: table 2 of the papers, mapped onto the blocks           */

/* MC+ME's share is split evenly between ME and MC, the four macroblock
 * encoding blocks share theirs evenly, and "other, including reordering"
 * is spread evenly over R and the blocks the table does not name: Fn
 * (frame input), F(n-1) (the reference store, which in x264 also
 * deblocks), +/- and +. */
const double h264_profile[H264_STAGES] = {
    [H264_FN] = 0.1330 / 5,  [H264_REF] = 0.1330 / 5, [H264_ME] = 0.3436 / 2,
    [H264_MC] = 0.3436 / 2,  [H264_IP] = 0.0502,      [H264_CIP] = 0.0808,
    [H264_P] = 0.2383,       [H264_SUB] = 0.1330 / 5, [H264_T] = 0.0869 / 4,
    [H264_Q] = 0.0869 / 4,   [H264_R] = 0.1330 / 5,   [H264_EC] = 0.0672,
    [H264_QI] = 0.0869 / 4,  [H264_TI] = 0.0869 / 4,  [H264_ADD] = 0.1330 / 5,
};

const char *const h264_stage_name[H264_STAGES] = {
    [H264_FN] = "Fn", [H264_REF] = "F(n-1)", [H264_ME] = "ME",  [H264_MC] = "MC",
    [H264_IP] = "IP", [H264_CIP] = "CIP",    [H264_P] = "P",    [H264_SUB] = "+/-",
    [H264_T] = "T",   [H264_Q] = "Q",        [H264_R] = "R",    [H264_EC] = "EC",
    [H264_QI] = "Qi", [H264_TI] = "Ti",      [H264_ADD] = "+",
};

void h264_params_default(h264_params *p)
{
    if (p == NULL)
        return;
    memset(p, 0, sizeof *p);
    p->mb_w = 22;
    p->mb_h = 18;
    p->frames = 30;
    p->workers = 1;
    p->mark_frame = -1;
}

static int params_ok(const h264_params *p)
{
    return p != NULL && p->mb_w >= 1 && p->mb_w <= H264_MAX_MB_W && p->mb_h >= 1 &&
           p->mb_h <= H264_MAX_MB_H && p->frames >= 1 && p->frames <= H264_MAX_FRAMES &&
           p->workers >= 1 && p->workers <= H264_MAX_WORKERS && p->capacity <= (1u << 20);
}

/* ------------------------------------------------------------------ */
/* Messages                                                             */

#define SEARCH H264_SEARCH
#define WIN_LINES (16 + 2 * SEARCH)

/* Every message starts with this. */
struct hdr {
    uint32_t frame, row;
    uint32_t spare[2]; /* keeps the sections 16-byte aligned */
};

/* What is known of one macroblock. */
struct mb {
    int8_t dx, dy;  /* motion vector, pixels */
    uint8_t intra;  /* 1: predicted from its neighbours */
    uint8_t mode;   /* intra 16x16 mode: MODE_V, MODE_H or MODE_DC */
    uint32_t cost;  /* SAD of that prediction */
};

/* The neighbours intra prediction uses: the line above, the column left. */
struct edge {
    uint8_t top[16], left[16];
    uint8_t has_top, has_left;
    uint8_t spare[2];
};

enum { MODE_V = 0, MODE_H = 1, MODE_DC = 2 }; /* H.264's Intra_16x16 numbers */

enum section { SEC_INFO, SEC_EDGE, SEC_COEF, SEC_PIX, SEC_WIN, SECTIONS };
#define HAS(s) (1u << (s))

enum kind {
    K_PIX,   /* pixels: a source, predicted, reconstructed or reference row */
    K_COEF,  /* 16-bit residuals or coefficients, in 4x4 blocks */
    K_MEJOB, /* ME's job: the source row and a reference window */
    K_MV,    /* ME's answer: a vector and SAD per macroblock */
    K_MCJOB, /* MC's job: the vectors and a reference window */
    K_INTRA, /* IP's answer: mode, SAD and neighbours per macroblock */
    K_PJOB,  /* P's job: the decisions, neighbours and the inter prediction */
    KINDS
};

static const unsigned kinds[KINDS] = {
    [K_PIX] = HAS(SEC_INFO) | HAS(SEC_PIX),
    [K_COEF] = HAS(SEC_INFO) | HAS(SEC_COEF),
    [K_MEJOB] = HAS(SEC_PIX) | HAS(SEC_WIN),
    [K_MV] = HAS(SEC_INFO),
    [K_MCJOB] = HAS(SEC_INFO) | HAS(SEC_WIN),
    [K_INTRA] = HAS(SEC_INFO) | HAS(SEC_EDGE),
    [K_PJOB] = HAS(SEC_INFO) | HAS(SEC_EDGE) | HAS(SEC_PIX),
};

/* The picture's shape and where each section of each kind of message
 * lies.  A row's pixels are raster order, 16 lines of 'line' bytes; its
 * coefficients are per macroblock 16 blocks of 16 (both in raster order);
 * a window is WIN_LINES lines of 'wline' bytes: reference lines
 * 16r-SEARCH .. 16r+15+SEARCH, columns -SEARCH .. line-1+SEARCH, clamped
 * to the picture. */
struct geom {
    int w, h;     /* macroblocks */
    size_t line;  /* pixels in a picture line */
    size_t wline; /* pixels in a window line */
    size_t off[KINDS][SECTIONS];
    size_t size[KINDS];
};

static size_t align16(size_t n)
{
    return (n + 15u) & ~(size_t)15u;
}

static void geom_init(struct geom *g, int w, int h)
{
    size_t len[SECTIONS];
    int k, s;

    g->w = w;
    g->h = h;
    g->line = 16u * (size_t)w;
    g->wline = g->line + 2 * SEARCH;
    len[SEC_INFO] = (size_t)w * sizeof(struct mb);
    len[SEC_EDGE] = (size_t)w * sizeof(struct edge);
    len[SEC_COEF] = 256u * (size_t)w * sizeof(int16_t);
    len[SEC_PIX] = 256u * (size_t)w;
    len[SEC_WIN] = WIN_LINES * g->wline;
    for (k = 0; k < KINDS; ++k) {
        size_t off = sizeof(struct hdr);
        for (s = 0; s < SECTIONS; ++s) {
            g->off[k][s] = 0;
            if (kinds[k] & HAS(s)) {
                g->off[k][s] = off;
                off += align16(len[s]);
            }
        }
        g->size[k] = off;
    }
}

static struct hdr *hdr_of(unsigned char *m)
{
    return (struct hdr *)(void *)m;
}
static struct mb *info_of(const struct geom *g, unsigned char *m, int k)
{
    return (struct mb *)(void *)(m + g->off[k][SEC_INFO]);
}
static struct edge *edge_of(const struct geom *g, unsigned char *m, int k)
{
    return (struct edge *)(void *)(m + g->off[k][SEC_EDGE]);
}
static int16_t *coef_of(const struct geom *g, unsigned char *m, int k)
{
    return (int16_t *)(void *)(m + g->off[k][SEC_COEF]);
}
static uint8_t *pix_of(const struct geom *g, unsigned char *m, int k)
{
    return m + g->off[k][SEC_PIX];
}
static uint8_t *win_of(const struct geom *g, unsigned char *m, int k)
{
    return m + g->off[k][SEC_WIN];
}

static void set_hdr(unsigned char *m, int frame, int row)
{
    struct hdr *h = hdr_of(m);
    h->frame = (uint32_t)frame;
    h->row = (uint32_t)row;
    h->spare[0] = h->spare[1] = 0;
}

/* ------------------------------------------------------------------ */
/* The blocks' work                                                     */

static uint8_t clip255(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Fn: the test pattern.  A background of diagonal ramps (smooth, so
 * intra prediction has something to predict) pans one pixel left per
 * frame and one up every other frame; a 40x32 box with a busy texture of
 * its own crosses it two pixels right and one down per frame; a little
 * noise keeps the residual from vanishing.  Every motion is within the
 * search range, so ME has something to find. */
static void gen_row(const struct geom *g, const h264_params *p, int n, int r, unsigned char *m)
{
    uint8_t *pix = pix_of(g, m, K_PIX);
    int width = (int)g->line;
    int bx = (2 * n) % (width + 40) - 40, by = 8 + n % 32;
    int y, x;

    memset(info_of(g, m, K_PIX), 0, (size_t)g->w * sizeof(struct mb));
    for (y = 0; y < 16; ++y) {
        int py = 16 * r + y, v = py + n / 2;
        int in_y = py >= by && py < by + 32;
        uint8_t *out = pix + (size_t)y * g->line;
        for (x = 0; x < width; ++x) {
            int u = x + n, value;
            unsigned noise = ((unsigned)x * 73856093u ^ (unsigned)py * 19349663u ^
                              (unsigned)n * 83492791u) >> 13;
            if (in_y && x >= bx && x < bx + 40)
                value = 200 - ((((x - bx) ^ (py - by)) & 15) * 5);
            else {
                int t = (u + v / 2) % 96; /* a triangle wave of period 96 */
                value = 40 + 3 * (t < 48 ? t : 96 - t);
            }
            out[x] = clip255(value + (int)(noise & 3) - 1);
        }
        if (n == p->mark_frame && py >= 4 && py < 12)
            for (x = 4; x < 12 && x < width; ++x)
                out[x] = 255;
    }
    set_hdr(m, n, r);
}

static void grey_row(const struct geom *g, int r, unsigned char *m)
{
    memset(info_of(g, m, K_PIX), 0, (size_t)g->w * sizeof(struct mb));
    memset(pix_of(g, m, K_PIX), 128, 256u * (size_t)g->w);
    set_hdr(m, 0, r);
}

/* ME and MC splits: the reference window of row r from rows r-1, r, r+1
 * ('rows[0..2]', NULL outside the picture), edges replicated. */
static void build_window(const struct geom *g, int r, const uint8_t *const rows[3], uint8_t *win)
{
    int wy, last = 16 * g->h - 1;

    for (wy = 0; wy < WIN_LINES; ++wy) {
        int y = 16 * r - SEARCH + wy;
        const uint8_t *src;
        uint8_t *dst = win + (size_t)wy * g->wline;

        y = y < 0 ? 0 : y > last ? last : y;
        src = rows[y / 16 - r + 1] + (size_t)(y % 16) * g->line;
        memset(dst, src[0], SEARCH);
        memcpy(dst + SEARCH, src, g->line);
        memset(dst + SEARCH + g->line, src[g->line - 1], SEARCH);
    }
}

/* Sum of absolute differences of two 16x16 blocks; stops once it reaches
 * 'limit' (the caller only wants to know whether it is below). */
static uint32_t sad16(const uint8_t *a, size_t as, const uint8_t *b, size_t bs, uint32_t limit)
{
    uint32_t sum = 0;
    int y, x;

    for (y = 0; y < 16; ++y, a += as, b += bs) {
        for (x = 0; x < 16; ++x)
            sum += (uint32_t)abs(a[x] - b[x]);
        if (sum >= limit)
            break;
    }
    return sum;
}

/* ME worker: full search; the zero vector wins ties, then scan order. */
static void me_row(const struct geom *g, unsigned char *job, unsigned char *out)
{
    const uint8_t *cur = pix_of(g, job, K_MEJOB), *win = win_of(g, job, K_MEJOB);
    struct mb *info = info_of(g, out, K_MV);
    int x, dx, dy;

    for (x = 0; x < g->w; ++x) {
        const uint8_t *c = cur + 16 * x, *centre = win + SEARCH * g->wline + SEARCH + 16 * x;
        struct mb best = {0, 0, 0, 0, 0};

        best.cost = sad16(c, g->line, centre, g->wline, UINT32_MAX);
        for (dy = -SEARCH; dy <= SEARCH; ++dy)
            for (dx = -SEARCH; dx <= SEARCH; ++dx) {
                uint32_t sad;
                if (dx == 0 && dy == 0)
                    continue;
                sad = sad16(c, g->line, centre + dy * (long)g->wline + dx, g->wline, best.cost);
                if (sad < best.cost) {
                    best.cost = sad;
                    best.dx = (int8_t)dx;
                    best.dy = (int8_t)dy;
                }
            }
        info[x] = best;
    }
}

/* MC worker: the displaced blocks. */
static void mc_row(const struct geom *g, unsigned char *job, unsigned char *out)
{
    const struct mb *mv = info_of(g, job, K_MCJOB);
    const uint8_t *win = win_of(g, job, K_MCJOB);
    uint8_t *pred = pix_of(g, out, K_PIX);
    int x, y;

    memcpy(info_of(g, out, K_PIX), mv, (size_t)g->w * sizeof(struct mb));
    for (x = 0; x < g->w; ++x) {
        const uint8_t *src =
            win + (SEARCH + mv[x].dy) * (long)g->wline + SEARCH + mv[x].dx + 16 * x;
        for (y = 0; y < 16; ++y)
            memcpy(pred + (size_t)y * g->line + 16 * x, src + (size_t)y * g->wline, 16);
    }
}

/* The 16x16 intra prediction of 'mode' from 'e'. */
static void intra_pred(const struct edge *e, int mode, uint8_t *dst, size_t stride)
{
    int x, y, sum = 0, dc;

    if (mode == MODE_V) {
        for (y = 0; y < 16; ++y)
            memcpy(dst + (size_t)y * stride, e->top, 16);
        return;
    }
    if (mode == MODE_H) {
        for (y = 0; y < 16; ++y)
            memset(dst + (size_t)y * stride, e->left[y], 16);
        return;
    }
    for (x = 0; x < 16; ++x)
        sum += (e->has_top ? e->top[x] : 0) + (e->has_left ? e->left[x] : 0);
    if (e->has_top && e->has_left)
        dc = (sum + 16) >> 5;
    else if (e->has_top || e->has_left)
        dc = (sum + 8) >> 4;
    else
        dc = 128;
    for (y = 0; y < 16; ++y)
        memset(dst + (size_t)y * stride, dc, 16);
}

/* IP: per macroblock the cheapest available mode (DC first, then V, H,
 * each only if strictly cheaper).  'above' is the previous row's last
 * line, NULL for row 0. */
static void ip_row(const struct geom *g, unsigned char *cur_m, const uint8_t *above,
                   unsigned char *out)
{
    const uint8_t *cur = pix_of(g, cur_m, K_PIX);
    struct mb *info = info_of(g, out, K_INTRA);
    struct edge *edge = edge_of(g, out, K_INTRA);
    uint8_t pred[256];
    int x, y, mode;

    for (x = 0; x < g->w; ++x) {
        struct edge *e = &edge[x];
        const uint8_t *c = cur + 16 * x;
        struct mb best = {0, 0, 1, MODE_DC, 0};

        memset(e, 0, sizeof *e);
        e->has_top = above != NULL;
        e->has_left = x > 0;
        if (above != NULL)
            memcpy(e->top, above + 16 * x, 16);
        if (x > 0)
            for (y = 0; y < 16; ++y)
                e->left[y] = c[y * (ptrdiff_t)g->line - 1];
        intra_pred(e, MODE_DC, pred, 16);
        best.cost = sad16(c, g->line, pred, 16, UINT32_MAX);
        for (mode = MODE_V; mode <= MODE_H; ++mode) {
            uint32_t sad;
            if ((mode == MODE_V && !e->has_top) || (mode == MODE_H && !e->has_left))
                continue;
            intra_pred(e, mode, pred, 16);
            sad = sad16(c, g->line, pred, 16, best.cost);
            if (sad < best.cost) {
                best.cost = sad;
                best.mode = (uint8_t)mode;
            }
        }
        info[x] = best;
    }
}

/* CIP: intra when its SAD plus a fixed penalty for its costlier coding
 * beats the inter SAD plus the vector's length. */
#define INTRA_PENALTY 96
#define MV_WEIGHT 4

static void cip_row(const struct geom *g, unsigned char *mc, unsigned char *ip, unsigned char *out)
{
    const struct mb *inter = info_of(g, mc, K_PIX), *intra = info_of(g, ip, K_INTRA);
    struct mb *choice = info_of(g, out, K_PJOB);
    int x;

    for (x = 0; x < g->w; ++x) {
        uint32_t length = (uint32_t)(abs(inter[x].dx) + abs(inter[x].dy));
        uint32_t inter_cost = inter[x].cost + MV_WEIGHT * length;
        choice[x] = intra[x].cost + INTRA_PENALTY < inter_cost ? intra[x] : inter[x];
    }
    memcpy(edge_of(g, out, K_PJOB), edge_of(g, ip, K_INTRA), (size_t)g->w * sizeof(struct edge));
    memcpy(pix_of(g, out, K_PJOB), pix_of(g, mc, K_PIX), 256u * (size_t)g->w);
}

/* P worker: the chosen prediction. */
static void p_row(const struct geom *g, unsigned char *job, unsigned char *out)
{
    const struct mb *choice = info_of(g, job, K_PJOB);
    const struct edge *edge = edge_of(g, job, K_PJOB);
    const uint8_t *inter = pix_of(g, job, K_PJOB);
    uint8_t *pred = pix_of(g, out, K_PIX);
    int x, y;

    memcpy(info_of(g, out, K_PIX), choice, (size_t)g->w * sizeof(struct mb));
    for (x = 0; x < g->w; ++x) {
        if (choice[x].intra)
            intra_pred(&edge[x], choice[x].mode, pred + 16 * x, g->line);
        else
            for (y = 0; y < 16; ++y) {
                size_t at = (size_t)y * g->line + 16u * (size_t)x;
                memcpy(pred + at, inter + at, 16);
            }
    }
}

/* Where pixel 'i' of 4x4 block 'b' of macroblock 'x' lies in a row (both
 * numbered in raster order). */
static size_t block_at(const struct geom *g, int x, int b, int i)
{
    return (size_t)(4 * (b / 4) + i / 4) * g->line + (size_t)(16 * x + 4 * (b % 4) + i % 4);
}

/* +/-: source minus prediction, into 4x4 blocks. */
static void sub_row(const struct geom *g, unsigned char *cur_m, unsigned char *pred_m,
                    unsigned char *out)
{
    const uint8_t *cur = pix_of(g, cur_m, K_PIX), *pred = pix_of(g, pred_m, K_PIX);
    int16_t *res = coef_of(g, out, K_COEF);
    int x, b, i;

    memcpy(info_of(g, out, K_COEF), info_of(g, pred_m, K_PIX), (size_t)g->w * sizeof(struct mb));
    for (x = 0; x < g->w; ++x)
        for (b = 0; b < 16; ++b)
            for (i = 0; i < 16; ++i) {
                size_t at = block_at(g, x, b, i);
                *res++ = (int16_t)(cur[at] - pred[at]);
            }
}

/* +: prediction plus decoded residual, clipped, over the prediction. */
static void add_row(const struct geom *g, unsigned char *res_m, unsigned char *pred_m)
{
    const int16_t *res = coef_of(g, res_m, K_COEF);
    uint8_t *pix = pix_of(g, pred_m, K_PIX);
    int x, b, i;

    for (x = 0; x < g->w; ++x)
        for (b = 0; b < 16; ++b)
            for (i = 0; i < 16; ++i) {
                size_t at = block_at(g, x, b, i);
                pix[at] = clip255(pix[at] + *res++);
            }
}

/* T: H.264's forward core transform Cf X Cf^T of each 4x4 block. */
static void t_row(const struct geom *g, unsigned char *m)
{
    int16_t *c = coef_of(g, m, K_COEF);
    int n = 16 * g->w, k, i;

    for (k = 0; k < n; ++k, c += 16) {
        int t[16];
        for (i = 0; i < 4; ++i) {
            const int16_t *x = c + 4 * i;
            int s0 = x[0] + x[3], s1 = x[1] + x[2], d0 = x[0] - x[3], d1 = x[1] - x[2];
            t[4 * i + 0] = s0 + s1;
            t[4 * i + 1] = 2 * d0 + d1;
            t[4 * i + 2] = s0 - s1;
            t[4 * i + 3] = d0 - 2 * d1;
        }
        for (i = 0; i < 4; ++i) {
            int s0 = t[i] + t[12 + i], s1 = t[4 + i] + t[8 + i];
            int d0 = t[i] - t[12 + i], d1 = t[4 + i] - t[8 + i];
            c[i] = (int16_t)(s0 + s1);
            c[4 + i] = (int16_t)(2 * d0 + d1);
            c[8 + i] = (int16_t)(s0 - s1);
            c[12 + i] = (int16_t)(d0 - 2 * d1);
        }
    }
}

/* Ti: the inverse core transform, with its final (x + 32) >> 6.  Right
 * shifts of negative values are arithmetic on every compiler kpn
 * supports, as the standard's arithmetic assumes. */
static void ti_row(const struct geom *g, unsigned char *m)
{
    int16_t *c = coef_of(g, m, K_COEF);
    int n = 16 * g->w, k, i;

    for (k = 0; k < n; ++k, c += 16) {
        int t[16];
        for (i = 0; i < 4; ++i) {
            const int16_t *x = c + 4 * i;
            int e = x[0] + x[2], f = x[0] - x[2], gg = (x[1] >> 1) - x[3], h = x[1] + (x[3] >> 1);
            t[4 * i + 0] = e + h;
            t[4 * i + 1] = f + gg;
            t[4 * i + 2] = f - gg;
            t[4 * i + 3] = e - h;
        }
        for (i = 0; i < 4; ++i) {
            int e = t[i] + t[8 + i], f = t[i] - t[8 + i];
            int gg = (t[4 + i] >> 1) - t[12 + i], h = t[4 + i] + (t[12 + i] >> 1);
            c[i] = (int16_t)((e + h + 32) >> 6);
            c[4 + i] = (int16_t)((f + gg + 32) >> 6);
            c[8 + i] = (int16_t)((f - gg + 32) >> 6);
            c[12 + i] = (int16_t)((e - h + 32) >> 6);
        }
    }
}

/* Quantisation and rescaling at H264_QP, with the standard's tables:
 * a position's class is 0 where row and column are both even, 1 where
 * both are odd, 2 otherwise. */
static const int quant_mf[6][3] = {{13107, 5243, 8066}, {11916, 4660, 7490}, {10082, 4194, 6554},
                                   {9362, 3647, 5825},  {8192, 3355, 5243},  {7282, 2893, 4559}};
static const int rescale_v[6][3] = {{10, 16, 13}, {11, 18, 14}, {13, 20, 16},
                                    {14, 23, 18}, {16, 25, 20}, {18, 29, 23}};
static const unsigned char pos_class[16] = {0, 2, 0, 2, 2, 1, 2, 1, 0, 2, 0, 2, 2, 1, 2, 1};

static void q_row(const struct geom *g, unsigned char *m)
{
    const struct mb *info = info_of(g, m, K_COEF);
    int16_t *c = coef_of(g, m, K_COEF);
    const int qbits = 15 + H264_QP / 6;
    const int *mf = quant_mf[H264_QP % 6];
    int x, i;

    for (x = 0; x < g->w; ++x) {
        /* H.264's reference rounding: a third for intra, a sixth for inter */
        int f = (1 << qbits) / (info[x].intra ? 3 : 6);
        for (i = 0; i < 256; ++i, ++c) {
            int v = *c, z = ((v < 0 ? -v : v) * mf[pos_class[i % 16]] + f) >> qbits;
            *c = (int16_t)(v < 0 ? -z : z);
        }
    }
}

static void qi_row(const struct geom *g, unsigned char *m)
{
    int16_t *c = coef_of(g, m, K_COEF);
    int n = 256 * g->w, i;

    for (i = 0; i < n; ++i)
        c[i] = (int16_t)(c[i] * rescale_v[H264_QP % 6][pos_class[i % 16]] * (1 << (H264_QP / 6)));
}

/* R: each macroblock's 4x4 blocks in the standard's order (8x8 quadrants,
 * then 4x4 blocks within them), each block's coefficients in zig-zag. */
static const unsigned char block_order[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};
static const unsigned char zigzag[16] = {0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15};

static void r_row(const struct geom *g, unsigned char *in, unsigned char *out)
{
    const int16_t *c = coef_of(g, in, K_COEF);
    int16_t *o = coef_of(g, out, K_COEF);
    int x, b, i;

    memcpy(hdr_of(out), hdr_of(in), sizeof(struct hdr));
    memcpy(info_of(g, out, K_COEF), info_of(g, in, K_COEF), (size_t)g->w * sizeof(struct mb));
    for (x = 0; x < g->w; ++x, c += 256)
        for (b = 0; b < 16; ++b)
            for (i = 0; i < 16; ++i)
                *o++ = c[16 * block_order[b] + zigzag[i]];
}

/* EC: the bits, hashed (FNV-1a, 64 bits) byte by byte as they are made. */
#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

struct ec_state {
    uint64_t acc;        /* bits not yet hashed: the low 'nacc' */
    int nacc;
    uint64_t frame_hash; /* this frame's bytes */
    uint64_t stream_hash;/* every byte so far */
    uint64_t bits;
    long intra;
};

static void ec_init(struct ec_state *e)
{
    memset(e, 0, sizeof *e);
    e->frame_hash = e->stream_hash = FNV_OFFSET;
}

static void ec_put(struct ec_state *e, uint32_t value, int n)
{
    e->acc = (e->acc << n) | value;
    e->nacc += n;
    e->bits += (uint64_t)n;
    while (e->nacc >= 8) {
        uint8_t byte = (uint8_t)(e->acc >> (e->nacc -= 8));
        e->frame_hash = (e->frame_hash ^ byte) * FNV_PRIME;
        e->stream_hash = (e->stream_hash ^ byte) * FNV_PRIME;
    }
}

/* Exp-Golomb codes: ue(v) is len-1 zeros and v+1 in len bits. */
static void ec_ue(struct ec_state *e, uint32_t v)
{
    int len = 0;
    while (((uint64_t)v + 1) >> len)
        ++len;
    ec_put(e, 0, len - 1);
    ec_put(e, v + 1, len);
}

static void ec_se(struct ec_state *e, int v)
{
    ec_ue(e, v > 0 ? 2u * (uint32_t)v - 1u : 2u * (uint32_t)(-v));
}

static void ec_row(const struct geom *g, struct ec_state *e, unsigned char *m)
{
    const struct mb *info = info_of(g, m, K_COEF);
    const int16_t *c = coef_of(g, m, K_COEF);
    int x, b, i, pdx = 0, pdy = 0;

    for (x = 0; x < g->w; ++x) {
        if (info[x].intra) {
            ec_ue(e, 1u + info[x].mode);
            e->intra++;
            pdx = pdy = 0;
        } else {
            ec_ue(e, 0);
            ec_se(e, info[x].dx - pdx); /* the vector as a difference from the left one's */
            ec_se(e, info[x].dy - pdy);
            pdx = info[x].dx;
            pdy = info[x].dy;
        }
        for (b = 0; b < 16; ++b, c += 16) {
            uint32_t nonzero = 0, run = 0;
            for (i = 0; i < 16; ++i)
                nonzero += c[i] != 0;
            ec_ue(e, nonzero);
            for (i = 0; i < 16 && nonzero > 0; ++i) {
                if (c[i] == 0) {
                    ++run;
                    continue;
                }
                ec_ue(e, run);
                ec_se(e, c[i]);
                run = 0;
                --nonzero;
            }
        }
    }
}

/* The end of a frame: a stop bit, zeros to the byte; its hash. */
static uint64_t ec_frame_end(struct ec_state *e)
{
    uint64_t h;

    ec_put(e, 1, 1);
    if (e->nacc > 0)
        ec_put(e, 0, 8 - e->nacc);
    h = e->frame_hash;
    e->frame_hash = FNV_OFFSET;
    return h;
}

/* ------------------------------------------------------------------ */
/* The burn                                                             */

double h264_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The calling thread's CPU time in seconds.  The budget is CPU time, so
 * the calibration and the real work's cost are measured on this clock: a
 * thread preempted by another program does not count the time it waited
 * (on a shared machine that skewed a wall-clock calibration by half). */
double h264_cpu_now(void)
{
#ifdef CLOCK_THREAD_CPUTIME_ID
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
    return h264_now();
}

/* The accumulator is volatile so every iteration does its load and store,
 * and local so that runners burning at once share no cache line. */
static void burn_loop(unsigned long long n)
{
    volatile unsigned long long acc = 0;

    while (n-- > 0)
        acc += n;
    (void)acc;
}

/* Calibration and the stages call the loop through this pointer, so it is
 * never inlined and both run the very same machine code (examples/
 * pipeline.c tells why that matters). */
static void (*volatile burn_code)(unsigned long long) = burn_loop;

void h264_burn(unsigned long long n)
{
    burn_code(n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double h264_calibrate(unsigned long long *trial)
{
    enum { TRIALS = 7 };
    double rate[TRIALS], t0, t;
    unsigned long long n = 1000;
    int i;

    for (;;) {
        t0 = h264_cpu_now();
        burn_code(n);
        t = h264_cpu_now() - t0;
        if (t >= 0.020 || n >= (1ull << 40))
            break;
        n *= 2;
    }
    for (i = 0; i < TRIALS; ++i) {
        t0 = h264_cpu_now();
        burn_code(n);
        t = h264_cpu_now() - t0;
        rate[i] = (double)n / (t > 0 ? t * 1e6 : 1e-3);
    }
    if (trial != NULL)
        *trial = n;
    qsort(rate, TRIALS, sizeof rate[0], cmp_double);
    return rate[TRIALS / 2];
}

void h264_plan(h264_params *p, double fps_budget, double iterations_per_us,
               const double real_seconds[H264_STAGES])
{
    int s;

    if (p == NULL || p->mb_h < 1 || fps_budget <= 0)
        return;
    for (s = 0; s < H264_STAGES; ++s) {
        double us = (h264_profile[s] / fps_budget - (real_seconds ? real_seconds[s] : 0)) * 1e6;
        p->burn[s] = us > 0 ? (unsigned long long)(us / p->mb_h * iterations_per_us + 0.5) : 0;
    }
}

/* ------------------------------------------------------------------ */
/* The processes                                                        */

enum role {
    R_FN, R_FORK_FN, R_REF, R_FORK_REF, R_ME_SPLIT, R_ME_MERGE, R_MC_SPLIT, R_MC_MERGE,
    R_IP, R_CIP, R_P_SPLIT, R_P_MERGE, R_FORK_P, R_SUB, R_T, R_Q, R_FORK_Q, R_R, R_EC,
    R_QI, R_TI, R_ADD, R_ME, R_MC, R_P, ROLES
};
#define SINGLE_ROLES R_ME /* the roles before it have one process each */
#define MAX_BUFS 5
#define MAX_OUT 3

struct h264_proc {
    h264_net *hn;
    kpn_proc *kp;
    int role;
    int stage;        /* the h264_stage it burns for, -1 for none */
    int nout;
    kpn_chan *in[2], *out[MAX_OUT];
    kpn_chan **many;  /* a split's channels to its workers, a merge's from them */
    unsigned char *buf[MAX_BUFS];
    long errors;      /* counted here, summed by h264_collect */
};

struct h264_net {
    h264_params p;
    struct geom g;
    int nprocs;
    struct h264_proc *procs;
    /* written by EC alone, read by h264_collect after the run */
    struct ec_state ec;
    int frames_done;
    uint64_t *frame_checksum;
};

/* The CPU time a row costs this process's block in x264. */
static void burn(const struct h264_proc *pr)
{
    unsigned long long n = pr->stage >= 0 ? pr->hn->p.burn[pr->stage] : 0;
    if (n > 0)
        burn_code(n);
}

/* 1 with a message, 0 at the end of the stream (or a failed call, counted). */
static int get(struct h264_proc *pr, kpn_chan *c, unsigned char *m)
{
    kpn_status s = kpn_recv(c, m);
    if (s == KPN_OK)
        return 1;
    if (s != KPN_EOF)
        pr->errors++;
    return 0;
}

static void put(struct h264_proc *pr, kpn_chan *c, const unsigned char *m)
{
    if (kpn_send(c, m) != KPN_OK)
        pr->errors++;
}

/* Every message says which row of which frame it is: count any that
 * arrives out of turn. */
static void expect(struct h264_proc *pr, unsigned char *m, int frame, int row)
{
    const struct hdr *h = hdr_of(m);
    if (h->frame != (uint32_t)frame || h->row != (uint32_t)row)
        pr->errors++;
}

/* The worker of row r: worker k has rows [k*H/w, (k+1)*H/w). */
static int owner(const h264_net *hn, int r)
{
    long w = hn->p.workers, h = hn->g.h;
    return (int)(((r + 1) * w + h - 1) / h - 1);
}

static void proc_source(void *arg)
{
    struct h264_proc *pr = arg;
    const h264_net *hn = pr->hn;
    int n, r;

    for (n = 0; n < hn->p.frames; ++n)
        for (r = 0; r < hn->g.h; ++r) {
            gen_row(&hn->g, &hn->p, n, r, pr->buf[0]);
            burn(pr);
            put(pr, pr->out[0], pr->buf[0]);
        }
}

static void proc_fork(void *arg)
{
    struct h264_proc *pr = arg;
    int i;

    while (get(pr, pr->in[0], pr->buf[0]))
        for (i = 0; i < pr->nout; ++i)
            put(pr, pr->out[i], pr->buf[0]);
}

/* F(n-1): buf[0] is the frame store, H messages. */
static void proc_ref(void *arg)
{
    struct h264_proc *pr = arg;
    const struct geom *g = &pr->hn->g;
    size_t size = g->size[K_PIX];
    int n, r;

    for (r = 0; r < g->h; ++r) {
        grey_row(g, r, pr->buf[0] + (size_t)r * size);
        put(pr, pr->out[0], pr->buf[0] + (size_t)r * size);
    }
    for (n = 0; n < pr->hn->p.frames; ++n) {
        for (r = 0; r < g->h; ++r) {
            if (!get(pr, pr->in[0], pr->buf[0] + (size_t)r * size))
                return;
            expect(pr, pr->buf[0] + (size_t)r * size, n, r);
            burn(pr);
        }
        if (n + 1 == pr->hn->p.frames)
            break;
        for (r = 0; r < g->h; ++r) {
            hdr_of(pr->buf[0] + (size_t)r * size)->frame = (uint32_t)(n + 1);
            put(pr, pr->out[0], pr->buf[0] + (size_t)r * size);
        }
    }
}

/* The ME and MC splits: in[0] the row (source pixels or vectors), in[1]
 * the reference rows, kept three at a time in buf[0..2]; buf[3] the row,
 * buf[4] the job. */
static void proc_ref_split(void *arg)
{
    struct h264_proc *pr = arg;
    const struct geom *g = &pr->hn->g;
    int me = pr->role == R_ME_SPLIT, job_kind = me ? K_MEJOB : K_MCJOB;
    unsigned char *row = pr->buf[3], *job = pr->buf[4];
    int n, r;

    for (n = 0;; ++n) {
        int have = 0;
        for (r = 0; r < g->h; ++r) {
            const uint8_t *rows[3];
            int last = r + 1 < g->h ? r + 1 : r;
            if (!get(pr, pr->in[0], row))
                return;
            expect(pr, row, n, r);
            for (; have <= last; ++have) {
                if (!get(pr, pr->in[1], pr->buf[have % 3]))
                    return;
                expect(pr, pr->buf[have % 3], n, have);
            }
            rows[0] = r > 0 ? pix_of(g, pr->buf[(r - 1) % 3], K_PIX) : NULL;
            rows[1] = pix_of(g, pr->buf[r % 3], K_PIX);
            rows[2] = r + 1 < g->h ? pix_of(g, pr->buf[(r + 1) % 3], K_PIX) : NULL;
            set_hdr(job, n, r);
            if (me)
                memcpy(pix_of(g, job, K_MEJOB), pix_of(g, row, K_PIX), 256u * (size_t)g->w);
            else
                memcpy(info_of(g, job, K_MCJOB), info_of(g, row, K_MV),
                       (size_t)g->w * sizeof(struct mb));
            build_window(g, r, rows, win_of(g, job, job_kind));
            put(pr, pr->many[owner(pr->hn, r)], job);
        }
    }
}

static void proc_split(void *arg)
{
    struct h264_proc *pr = arg;
    int n, r;

    for (n = 0;; ++n)
        for (r = 0; r < pr->hn->g.h; ++r) {
            if (!get(pr, pr->in[0], pr->buf[0]))
                return;
            expect(pr, pr->buf[0], n, r);
            put(pr, pr->many[owner(pr->hn, r)], pr->buf[0]);
        }
}

static void proc_merge(void *arg)
{
    struct h264_proc *pr = arg;
    int n, r;

    for (n = 0;; ++n)
        for (r = 0; r < pr->hn->g.h; ++r) {
            if (!get(pr, pr->many[owner(pr->hn, r)], pr->buf[0]))
                return;
            expect(pr, pr->buf[0], n, r);
            put(pr, pr->out[0], pr->buf[0]);
        }
}

/* ME, MC and P workers: a job in buf[0], the answer in buf[1]. */
static void proc_worker(void *arg)
{
    struct h264_proc *pr = arg;
    const struct geom *g = &pr->hn->g;

    while (get(pr, pr->in[0], pr->buf[0])) {
        if (pr->role == R_ME)
            me_row(g, pr->buf[0], pr->buf[1]);
        else if (pr->role == R_MC)
            mc_row(g, pr->buf[0], pr->buf[1]);
        else
            p_row(g, pr->buf[0], pr->buf[1]);
        memcpy(hdr_of(pr->buf[1]), hdr_of(pr->buf[0]), sizeof(struct hdr));
        burn(pr);
        put(pr, pr->out[0], pr->buf[1]);
    }
}

/* IP: buf[0] and buf[1] take turns as this row and the one above. */
static void proc_ip(void *arg)
{
    struct h264_proc *pr = arg;
    const struct geom *g = &pr->hn->g;
    int n, r, cur = 0;

    for (n = 0;; ++n)
        for (r = 0; r < g->h; ++r, cur ^= 1) {
            const uint8_t *above = pix_of(g, pr->buf[cur ^ 1], K_PIX) + 15 * g->line;
            if (!get(pr, pr->in[0], pr->buf[cur]))
                return;
            expect(pr, pr->buf[cur], n, r);
            ip_row(g, pr->buf[cur], r > 0 ? above : NULL, pr->buf[2]);
            set_hdr(pr->buf[2], n, r);
            burn(pr);
            put(pr, pr->out[0], pr->buf[2]);
        }
}

/* CIP, +/- and +: two rows in, one out. */
static void proc_join(void *arg)
{
    struct h264_proc *pr = arg;
    const struct geom *g = &pr->hn->g;
    unsigned char *a = pr->buf[0], *b = pr->buf[1], *out = pr->buf[2];
    int n, r;

    for (n = 0;; ++n)
        for (r = 0; r < g->h; ++r) {
            if (!get(pr, pr->in[0], a) || !get(pr, pr->in[1], b))
                return;
            expect(pr, a, n, r);
            expect(pr, b, n, r);
            if (pr->role == R_CIP) {
                cip_row(g, a, b, out);
            } else if (pr->role == R_SUB) {
                sub_row(g, b, a, out); /* in[0] the prediction, in[1] the source */
            } else {
                add_row(g, a, b); /* in[0] the residual, in[1] the prediction */
                out = b;
            }
            burn(pr);
            set_hdr(out, n, r);
            put(pr, pr->out[0], out);
        }
}

/* T, Q, Qi and Ti work in place in buf[0]; R reorders into buf[1]. */
static void proc_coef(void *arg)
{
    struct h264_proc *pr = arg;
    const struct geom *g = &pr->hn->g;
    unsigned char *in = pr->buf[0];
    int n, r;

    for (n = 0;; ++n)
        for (r = 0; r < g->h; ++r) {
            unsigned char *out = in;
            if (!get(pr, pr->in[0], in))
                return;
            expect(pr, in, n, r);
            if (pr->role == R_T)
                t_row(g, in);
            else if (pr->role == R_Q)
                q_row(g, in);
            else if (pr->role == R_QI)
                qi_row(g, in);
            else if (pr->role == R_TI)
                ti_row(g, in);
            else
                r_row(g, in, out = pr->buf[1]);
            burn(pr);
            put(pr, pr->out[0], out);
        }
}

static void proc_ec(void *arg)
{
    struct h264_proc *pr = arg;
    h264_net *hn = pr->hn;
    int n, r;

    for (n = 0;; ++n) {
        for (r = 0; r < hn->g.h; ++r) {
            if (!get(pr, pr->in[0], pr->buf[0]))
                return;
            expect(pr, pr->buf[0], n, r);
            ec_row(&hn->g, &hn->ec, pr->buf[0]);
            burn(pr);
        }
        if (n < hn->p.frames)
            hn->frame_checksum[n] = ec_frame_end(&hn->ec);
        hn->frames_done = n + 1;
    }
}

/* What each role is: its name, its function, the stage it burns for
 * (-1: plumbing, none), its buffers' kinds. */
static const struct role_info {
    const char *name;
    void (*fn)(void *);
    signed char stage;
    unsigned char nbuf;
    unsigned char buf[MAX_BUFS];
} roles[ROLES] = {
    [R_FN] = {"Fn", proc_source, H264_FN, 1, {K_PIX}},
    [R_FORK_FN] = {"Fn.fork", proc_fork, -1, 1, {K_PIX}},
    [R_REF] = {"F(n-1)", proc_ref, H264_REF, 1, {K_PIX}}, /* times H: the frame store */
    [R_FORK_REF] = {"F(n-1).fork", proc_fork, -1, 1, {K_PIX}},
    [R_ME_SPLIT] = {"ME.split", proc_ref_split, -1, 5, {K_PIX, K_PIX, K_PIX, K_PIX, K_MEJOB}},
    [R_ME_MERGE] = {"ME.merge", proc_merge, -1, 1, {K_MV}},
    [R_MC_SPLIT] = {"MC.split", proc_ref_split, -1, 5, {K_PIX, K_PIX, K_PIX, K_MV, K_MCJOB}},
    [R_MC_MERGE] = {"MC.merge", proc_merge, -1, 1, {K_PIX}},
    [R_IP] = {"IP", proc_ip, H264_IP, 3, {K_PIX, K_PIX, K_INTRA}},
    [R_CIP] = {"CIP", proc_join, H264_CIP, 3, {K_PIX, K_INTRA, K_PJOB}},
    [R_P_SPLIT] = {"P.split", proc_split, -1, 1, {K_PJOB}},
    [R_P_MERGE] = {"P.merge", proc_merge, -1, 1, {K_PIX}},
    [R_FORK_P] = {"P.fork", proc_fork, -1, 1, {K_PIX}},
    [R_SUB] = {"+/-", proc_join, H264_SUB, 3, {K_PIX, K_PIX, K_COEF}},
    [R_T] = {"T", proc_coef, H264_T, 1, {K_COEF}},
    [R_Q] = {"Q", proc_coef, H264_Q, 1, {K_COEF}},
    [R_FORK_Q] = {"Q.fork", proc_fork, -1, 1, {K_COEF}},
    [R_R] = {"R", proc_coef, H264_R, 2, {K_COEF, K_COEF}},
    [R_EC] = {"EC", proc_ec, H264_EC, 1, {K_COEF}},
    [R_QI] = {"Qi", proc_coef, H264_QI, 1, {K_COEF}},
    [R_TI] = {"Ti", proc_coef, H264_TI, 1, {K_COEF}},
    [R_ADD] = {"+", proc_join, H264_ADD, 2, {K_COEF, K_PIX}},
    [R_ME] = {"ME", proc_worker, H264_ME, 2, {K_MEJOB, K_MV}},
    [R_MC] = {"MC", proc_worker, H264_MC, 2, {K_MCJOB, K_PIX}},
    [R_P] = {"P", proc_worker, H264_P, 2, {K_PJOB, K_PIX}},
};

/* ------------------------------------------------------------------ */
/* Building the net                                                     */

/* One routine both sizes and builds: without a workspace it only counts
 * the workspace and arena bytes, so the sizes can never disagree with
 * what h264_build carves. */
struct builder {
    kpn_net *net;        /* NULL when counting */
    const h264_params *p;
    struct geom g;
    unsigned char *work; /* NULL: count only */
    size_t work_size, work_used;
    size_t arena;        /* bytes of arena for processes and channels */
    kpn_status s;        /* the first failure */
    h264_net *hn;
    int next;            /* next free entry of hn->procs */
};

static void *carve(struct builder *b, size_t n)
{
    size_t at = align16(b->work_used);

    if (b->work != NULL && (at > b->work_size || n > b->work_size - at)) {
        if (b->s == KPN_OK)
            b->s = KPN_ENOMEM;
        return NULL;
    }
    b->work_used = at + n;
    return b->work != NULL ? b->work + at : NULL;
}

static void proc_name(char *buf, size_t len, int role, int index)
{
    if (role >= SINGLE_ROLES)
        snprintf(buf, len, "%s.%d", roles[role].name, index);
    else
        snprintf(buf, len, "%s", roles[role].name);
}

/* A process of 'role' with its buffers; NULL when counting or failed. */
static struct h264_proc *spawn(struct builder *b, int role, int index)
{
    const struct role_info *ri = &roles[role];
    struct h264_proc *pr = NULL;
    char name[32];
    int i;

    proc_name(name, sizeof name, role, index);
    b->arena += kpn_size_proc(H264_STACK, strlen(name));
    if (b->hn != NULL && b->s == KPN_OK) {
        pr = &b->hn->procs[b->next++];
        memset(pr, 0, sizeof *pr);
        pr->hn = b->hn;
        pr->role = role;
        pr->stage = ri->stage;
    }
    if (role == R_ME_SPLIT || role == R_MC_SPLIT || role == R_P_SPLIT || role == R_ME_MERGE ||
        role == R_MC_MERGE || role == R_P_MERGE) {
        kpn_chan **many = carve(b, (size_t)b->p->workers * sizeof *many);
        if (pr != NULL)
            pr->many = many;
    }
    for (i = 0; i < ri->nbuf; ++i) {
        size_t n = b->g.size[ri->buf[i]] * (role == R_REF ? (size_t)b->g.h : 1u);
        unsigned char *buf = carve(b, n);
        if (pr != NULL)
            pr->buf[i] = buf;
    }
    if (pr != NULL && b->s == KPN_OK) {
        kpn_status s = kpn_spawn(b->net, &pr->kp, name, ri->fn, pr, H264_STACK);
        if (s != KPN_OK)
            b->s = s;
    }
    return b->s == KPN_OK ? pr : NULL;
}

/* A channel of messages of 'kind' from 'w' to 'r'.  'w' lists it as its
 * next output (or, for a split, its channel to worker 'slot'); 'r' as its
 * input 'in' (or, for a merge, its channel from worker 'slot'). */
static void chan_many(struct builder *b, struct h264_proc *w, int slot_w, struct h264_proc *r,
                      int in, int slot_r, int kind, size_t capacity)
{
    kpn_chan *c = NULL;

    b->arena += kpn_size_chan(b->g.size[kind], capacity);
    if (w == NULL || r == NULL || b->s != KPN_OK)
        return;
    b->s = kpn_connect(b->net, &c, w->kp, r->kp, b->g.size[kind], capacity);
    if (b->s != KPN_OK)
        return;
    if (slot_w >= 0)
        w->many[slot_w] = c;
    else
        w->out[w->nout++] = c;
    if (slot_r >= 0)
        r->many[slot_r] = c;
    else
        r->in[in] = c;
}

static void chan_to(struct builder *b, struct h264_proc *w, struct h264_proc *r, int in, int kind,
                    size_t capacity)
{
    chan_many(b, w, -1, r, in, -1, kind, capacity);
}

/* A split, its workers and its merge; the workers' channels hold their
 * whole row range, so the split hands out a frame's rows without waiting
 * and no worker waits for the merge to reach its rows. */
static void workers(struct builder *b, struct h264_proc *split, struct h264_proc *merge, int role,
                    int job, int answer)
{
    int k, w = b->p->workers, h = b->g.h;

    for (k = 0; k < w; ++k) {
        struct h264_proc *wk = spawn(b, role, k);
        size_t rows = (size_t)((long)(k + 1) * h / w - (long)k * h / w);
        chan_many(b, split, k, wk, 0, -1, job, rows > 0 ? rows : 1);
        chan_many(b, wk, -1, merge, 0, k, answer, rows > 0 ? rows : 1);
    }
}

static void wire(struct builder *b)
{
    size_t cap = b->p->capacity > 0 ? b->p->capacity : (size_t)b->g.h;
    struct h264_proc *fn, *fork_fn, *ref, *fork_ref, *me_split, *me_merge, *mc_split, *mc_merge;
    struct h264_proc *ip, *cip, *p_split, *p_merge, *fork_p, *sub, *t, *q, *fork_q, *r, *ec;
    struct h264_proc *qi, *ti, *add;

    fn = spawn(b, R_FN, 0);
    fork_fn = spawn(b, R_FORK_FN, 0);
    ref = spawn(b, R_REF, 0);
    fork_ref = spawn(b, R_FORK_REF, 0);
    me_split = spawn(b, R_ME_SPLIT, 0);
    me_merge = spawn(b, R_ME_MERGE, 0);
    mc_split = spawn(b, R_MC_SPLIT, 0);
    mc_merge = spawn(b, R_MC_MERGE, 0);
    ip = spawn(b, R_IP, 0);
    cip = spawn(b, R_CIP, 0);
    p_split = spawn(b, R_P_SPLIT, 0);
    p_merge = spawn(b, R_P_MERGE, 0);
    fork_p = spawn(b, R_FORK_P, 0);
    sub = spawn(b, R_SUB, 0);
    t = spawn(b, R_T, 0);
    q = spawn(b, R_Q, 0);
    fork_q = spawn(b, R_FORK_Q, 0);
    r = spawn(b, R_R, 0);
    ec = spawn(b, R_EC, 0);
    qi = spawn(b, R_QI, 0);
    ti = spawn(b, R_TI, 0);
    add = spawn(b, R_ADD, 0);

    chan_to(b, fn, fork_fn, 0, K_PIX, cap);
    chan_to(b, fork_fn, me_split, 0, K_PIX, cap);
    chan_to(b, fork_fn, ip, 0, K_PIX, cap);
    chan_to(b, fork_fn, sub, 1, K_PIX, cap);
    chan_to(b, ref, fork_ref, 0, K_PIX, cap);
    chan_to(b, fork_ref, me_split, 1, K_PIX, cap);
    chan_to(b, fork_ref, mc_split, 1, K_PIX, cap);
    workers(b, me_split, me_merge, R_ME, K_MEJOB, K_MV);
    chan_to(b, me_merge, mc_split, 0, K_MV, cap);
    workers(b, mc_split, mc_merge, R_MC, K_MCJOB, K_PIX);
    chan_to(b, mc_merge, cip, 0, K_PIX, cap);
    chan_to(b, ip, cip, 1, K_INTRA, cap);
    chan_to(b, cip, p_split, 0, K_PJOB, cap);
    workers(b, p_split, p_merge, R_P, K_PJOB, K_PIX);
    chan_to(b, p_merge, fork_p, 0, K_PIX, cap);
    chan_to(b, fork_p, sub, 0, K_PIX, cap);
    chan_to(b, fork_p, add, 1, K_PIX, cap);
    chan_to(b, sub, t, 0, K_COEF, cap);
    chan_to(b, t, q, 0, K_COEF, cap);
    chan_to(b, q, fork_q, 0, K_COEF, cap);
    chan_to(b, fork_q, r, 0, K_COEF, cap);
    chan_to(b, fork_q, qi, 0, K_COEF, cap);
    chan_to(b, r, ec, 0, K_COEF, cap);
    chan_to(b, qi, ti, 0, K_COEF, cap);
    chan_to(b, ti, add, 0, K_COEF, cap);
    chan_to(b, add, ref, 0, K_PIX, cap); /* the feedback */
}

static int proc_count(const h264_params *p)
{
    return SINGLE_ROLES + 3 * p->workers;
}

/* The workspace: the h264_net, its processes, their buffers, the checksums. */
static void plan(struct builder *b)
{
    h264_net *hn = carve(b, sizeof *hn);
    struct h264_proc *procs = carve(b, (size_t)proc_count(b->p) * sizeof *procs);
    uint64_t *sums = carve(b, (size_t)b->p->frames * sizeof *sums);

    if (hn != NULL && b->s == KPN_OK) {
        memset(hn, 0, sizeof *hn);
        hn->p = *b->p;
        hn->g = b->g;
        hn->nprocs = proc_count(b->p);
        hn->procs = procs;
        hn->frame_checksum = sums;
        memset(sums, 0, (size_t)b->p->frames * sizeof *sums);
        ec_init(&hn->ec);
        b->hn = hn;
    }
    wire(b);
}

static size_t reference_work(const h264_params *p, unsigned char *work, size_t size,
                             unsigned char **bufs, uint64_t **sums);

size_t h264_work_size(const h264_params *p)
{
    struct builder b;
    size_t ref;

    if (!params_ok(p))
        return 0;
    memset(&b, 0, sizeof b);
    b.p = p;
    geom_init(&b.g, p->mb_w, p->mb_h);
    plan(&b);
    ref = reference_work(p, NULL, 0, NULL, NULL);
    /* 15 bytes for aligning an arbitrary workspace */
    return (b.work_used > ref ? b.work_used : ref) + 15u;
}

size_t h264_arena_size(const h264_params *p, const kpn_config *cfg)
{
    struct builder b;

    if (!params_ok(p))
        return 0;
    memset(&b, 0, sizeof b);
    b.p = p;
    geom_init(&b.g, p->mb_w, p->mb_h);
    plan(&b);
    return kpn_size_net(cfg) + b.arena;
}

static unsigned char *align_work(void *work, size_t *size)
{
    size_t skip = (size_t)((16u - (uintptr_t)work % 16u) % 16u);

    if (*size < skip)
        return NULL;
    *size -= skip;
    return (unsigned char *)work + skip;
}

kpn_status h264_build(kpn_net *net, const h264_params *p, void *work, size_t work_size,
                      h264_net **hn)
{
    struct builder b;

    if (net == NULL || work == NULL || hn == NULL || !params_ok(p))
        return KPN_EINVAL;
    memset(&b, 0, sizeof b);
    b.net = net;
    b.p = p;
    geom_init(&b.g, p->mb_w, p->mb_h);
    b.work = align_work(work, &work_size);
    b.work_size = work_size;
    if (b.work == NULL)
        return KPN_ENOMEM;
    plan(&b);
    if (b.s != KPN_OK)
        return b.s;
    *hn = b.hn;
    return KPN_OK;
}

void h264_collect(const h264_net *hn, h264_result *res)
{
    int i;

    if (hn == NULL || res == NULL)
        return;
    memset(res, 0, sizeof *res);
    res->frames = hn->frames_done;
    res->checksum = hn->ec.stream_hash;
    res->frame_checksum = hn->frame_checksum;
    res->bits = hn->ec.bits;
    res->intra_mbs = hn->ec.intra;
    for (i = 0; i < hn->nprocs; ++i)
        res->errors += hn->procs[i].errors;
}

/* ------------------------------------------------------------------ */
/* The sequential twin                                                  */

/* Buffers of the reference encoder, in 'bufs' order. */
enum {
    RB_REF, RB_RECON, RB_CUR, RB_ABOVE, RB_MEJOB, RB_MV, RB_MCJOB, RB_MC, RB_INTRA, RB_PJOB,
    RB_PRED, RB_COEF, RB_ZIGZAG, RB_COUNT
};
static const unsigned char reference_kind[RB_COUNT] = {
    [RB_REF] = K_PIX,     [RB_RECON] = K_PIX,   [RB_CUR] = K_PIX,   [RB_ABOVE] = K_PIX,
    [RB_MEJOB] = K_MEJOB, [RB_MV] = K_MV,       [RB_MCJOB] = K_MCJOB, [RB_MC] = K_PIX,
    [RB_INTRA] = K_INTRA, [RB_PJOB] = K_PJOB,   [RB_PRED] = K_PIX,  [RB_COEF] = K_COEF,
    [RB_ZIGZAG] = K_COEF,
};

static size_t reference_work(const h264_params *p, unsigned char *work, size_t size,
                             unsigned char **bufs, uint64_t **sums)
{
    struct builder b;
    unsigned char *m;
    int i;

    memset(&b, 0, sizeof b);
    b.p = p;
    b.work = work;
    b.work_size = size;
    geom_init(&b.g, p->mb_w, p->mb_h);
    for (i = 0; i < RB_COUNT; ++i) {
        /* the reference and the reconstruction are whole frames */
        size_t n = b.g.size[reference_kind[i]] * (i <= RB_RECON ? (size_t)p->mb_h : 1u);
        m = carve(&b, n);
        if (bufs != NULL)
            bufs[i] = m;
    }
    m = carve(&b, (size_t)p->frames * sizeof(uint64_t));
    if (sums != NULL)
        *sums = (uint64_t *)(void *)m;
    return b.s == KPN_OK ? b.work_used : 0;
}

kpn_status h264_reference(const h264_params *p, void *work, size_t work_size, h264_result *res,
                          double stage_seconds[H264_STAGES])
{
    unsigned char *buf[RB_COUNT], *ref, *recon, *base;
    uint64_t *sums = NULL;
    struct ec_state ec;
    struct geom g;
    double sse = 0, t = 0;
    int n, r, s;

    if (work == NULL || res == NULL || !params_ok(p))
        return KPN_EINVAL;
    base = align_work(work, &work_size);
    if (base == NULL || reference_work(p, base, work_size, buf, &sums) == 0)
        return KPN_ENOMEM;
    geom_init(&g, p->mb_w, p->mb_h);
    ec_init(&ec);
    if (stage_seconds != NULL)
        for (s = 0; s < H264_STAGES; ++s)
            stage_seconds[s] = 0;
    ref = buf[RB_REF];
    recon = buf[RB_RECON];
    for (r = 0; r < g.h; ++r)
        grey_row(&g, r, ref + (size_t)r * g.size[K_PIX]);

/* Times the statement that follows into stage 's'. */
#define TIMED(s, stmt)                                                                       \
    do {                                                                                     \
        if (stage_seconds != NULL)                                                           \
            t = h264_cpu_now();                                                              \
        stmt;                                                                                \
        if (stage_seconds != NULL)                                                           \
            stage_seconds[s] += h264_cpu_now() - t;                                          \
    } while (0)

    for (n = 0; n < p->frames; ++n) {
        for (r = 0; r < g.h; ++r) {
            const uint8_t *rows[3];
            unsigned char *out = recon + (size_t)r * g.size[K_PIX];
            const uint8_t *cur = pix_of(&g, buf[RB_CUR], K_PIX);
            int i;

            TIMED(H264_FN, gen_row(&g, p, n, r, buf[RB_CUR]));
            rows[0] = r > 0 ? pix_of(&g, ref + (size_t)(r - 1) * g.size[K_PIX], K_PIX) : NULL;
            rows[1] = pix_of(&g, ref + (size_t)r * g.size[K_PIX], K_PIX);
            rows[2] = r + 1 < g.h ? pix_of(&g, ref + (size_t)(r + 1) * g.size[K_PIX], K_PIX) : NULL;
            memcpy(pix_of(&g, buf[RB_MEJOB], K_MEJOB), cur, 256u * (size_t)g.w);
            build_window(&g, r, rows, win_of(&g, buf[RB_MEJOB], K_MEJOB));
            TIMED(H264_ME, me_row(&g, buf[RB_MEJOB], buf[RB_MV]));
            memcpy(info_of(&g, buf[RB_MCJOB], K_MCJOB), info_of(&g, buf[RB_MV], K_MV),
                   (size_t)g.w * sizeof(struct mb));
            memcpy(win_of(&g, buf[RB_MCJOB], K_MCJOB), win_of(&g, buf[RB_MEJOB], K_MEJOB),
                   WIN_LINES * g.wline);
            TIMED(H264_MC, mc_row(&g, buf[RB_MCJOB], buf[RB_MC]));
            TIMED(H264_IP, ip_row(&g, buf[RB_CUR],
                                  r > 0 ? pix_of(&g, buf[RB_ABOVE], K_PIX) + 15 * g.line : NULL,
                                  buf[RB_INTRA]));
            TIMED(H264_CIP, cip_row(&g, buf[RB_MC], buf[RB_INTRA], buf[RB_PJOB]));
            TIMED(H264_P, p_row(&g, buf[RB_PJOB], buf[RB_PRED]));
            TIMED(H264_SUB, sub_row(&g, buf[RB_CUR], buf[RB_PRED], buf[RB_COEF]));
            TIMED(H264_T, t_row(&g, buf[RB_COEF]));
            TIMED(H264_Q, q_row(&g, buf[RB_COEF]));
            TIMED(H264_R, r_row(&g, buf[RB_COEF], buf[RB_ZIGZAG]));
            TIMED(H264_EC, ec_row(&g, &ec, buf[RB_ZIGZAG]));
            TIMED(H264_QI, qi_row(&g, buf[RB_COEF]));
            TIMED(H264_TI, ti_row(&g, buf[RB_COEF]));
            TIMED(H264_ADD, add_row(&g, buf[RB_COEF], buf[RB_PRED]));
            TIMED(H264_REF, memcpy(out, buf[RB_PRED], g.size[K_PIX]));
            for (i = 0; i < 256 * g.w; ++i) {
                double d = (double)cur[i] - (double)pix_of(&g, out, K_PIX)[i];
                sse += d * d;
            }
            /* this row becomes the one above */
            memcpy(pix_of(&g, buf[RB_ABOVE], K_PIX), cur, 256u * (size_t)g.w);
        }
        sums[n] = ec_frame_end(&ec);
        /* frame n, reconstructed, is frame n+1's reference */
        buf[RB_REF] = recon;
        recon = ref;
        ref = buf[RB_REF];
    }
#undef TIMED

    memset(res, 0, sizeof *res);
    res->frames = p->frames;
    res->checksum = ec.stream_hash;
    res->frame_checksum = sums;
    res->bits = ec.bits;
    res->intra_mbs = ec.intra;
    res->psnr = sse > 0 ? 10.0 * log10(255.0 * 255.0 * 256.0 * g.w * g.h * p->frames / sse) : 99.0;
    return KPN_OK;
}
