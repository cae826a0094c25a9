/* SPDX-License-Identifier: MIT */
/* The encoder's blocks as functions of one macroblock row, and the rows they pass on. */
#include <math.h>
#include <string.h>
#include "stages.h"
#include "cavlc.h"
#include "predict.h"
#include "transform.h"

int h264_setup_init(h264_setup *s, int width, int height, int qp, int frames)
{
    if (width <= 0 || height <= 0 || (width & 1) || (height & 1) ||
        width > 16 * H264_MAX_MB_W || height > 16 * H264_MAX_MB_H || qp < 0 ||
        qp > H264_QP_MAX || frames < 1)
        return -1;
    s->width = width;
    s->height = height;
    s->mb_w = (width + 15) / 16;
    s->mb_h = (height + 15) / 16;
    s->qp = qp;
    s->frames = frames;
    /* the usual rate-distortion trade for SAD: 0.85 * 2^((qp - 12) / 6) */
    s->lambda = (int)(0.85 * pow(2.0, (qp - 12) / 6.0) + 0.5);
    if (s->lambda < 1)
        s->lambda = 1;
    return 0;
}

size_t h264_row_size(h264_row_kind kind, int mb_w)
{
    size_t n = (size_t)mb_w;
    switch (kind) {
    case H264_ROW_PIXELS: return offsetof(h264_pixel_row, mb) + n * sizeof(h264_mb_pixels);
    case H264_ROW_LEVELS: return offsetof(h264_level_row, mb) + n * sizeof(h264_mb_levels);
    case H264_ROW_ANALYSIS:
        return offsetof(h264_analysis_row, mb) + n * sizeof(h264_mb_analysis);
    case H264_ROW_MODES: return offsetof(h264_mode_row, mode) + n * sizeof(h264_mode);
    default: return offsetof(h264_window, pix) + (size_t)H264_WIN_BYTES(mb_w);
    }
}

static uint8_t clip1(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ------------------------------------------------------------ Fn */

void h264_source(const h264_setup *s, const uint8_t *const planes[3], int frame, int row,
                 h264_pixel_row *out)
{
    int x, i, j, cw = s->width / 2, ch = s->height / 2;

    out->head.frame = frame;
    out->head.row = row;
    out->head.idr = frame == 0;
    out->head.pad = 0;
    for (x = 0; x < s->mb_w; ++x) {
        h264_mb_pixels *m = &out->mb[x];
        for (j = 0; j < 16; ++j) {
            const uint8_t *line = planes[0] + (size_t)clamp(16 * row + j, 0, s->height - 1) * (size_t)s->width;
            for (i = 0; i < 16; ++i)
                m->y[16 * j + i] = line[clamp(16 * x + i, 0, s->width - 1)];
        }
        for (j = 0; j < 8; ++j) {
            size_t off = (size_t)clamp(8 * row + j, 0, ch - 1) * (size_t)cw;
            for (i = 0; i < 8; ++i) {
                int cx = clamp(8 * x + i, 0, cw - 1);
                m->u[8 * j + i] = planes[1][off + (size_t)cx];
                m->v[8 * j + i] = planes[2][off + (size_t)cx];
            }
        }
    }
}

/* ------------------------------------------------------------ neighbours */

/* The edges macroblock 'x' of a row sees: 'above' if the row has one,
 * the macroblock to its left in 'row' if x > 0. */
static void mb_edges(const h264_row_edge *above, int has_above, const h264_pixel_row *row, int x,
                     h264_edge e[3])
{
    int i, p;
    for (p = 0; p < 3; ++p) {
        int n = p == 0 ? 16 : 8;
        const uint8_t *line = p == 0 ? above->y : p == 1 ? above->u : above->v;
        e[p].has_top = has_above;
        e[p].has_left = x > 0;
        e[p].top_left = 0;
        if (has_above) {
            memcpy(e[p].top, line + n * x, (size_t)n);
            if (x > 0)
                e[p].top_left = line[n * x - 1];
        }
        if (x > 0) {
            const h264_mb_pixels *l = &row->mb[x - 1];
            const uint8_t *plane = p == 0 ? l->y : p == 1 ? l->u : l->v;
            for (i = 0; i < n; ++i)
                e[p].left[i] = plane[n * i + n - 1];
        }
    }
}

static void keep_edge(const h264_setup *s, h264_row_edge *above, const h264_pixel_row *row)
{
    int x;
    for (x = 0; x < s->mb_w; ++x) {
        memcpy(above->y + 16 * x, row->mb[x].y + 16 * 15, 16);
        memcpy(above->u + 8 * x, row->mb[x].u + 8 * 7, 8);
        memcpy(above->v + 8 * x, row->mb[x].v + 8 * 7, 8);
    }
}

/* ------------------------------------------------------------ IP */

void h264_intra_analysis(const h264_setup *s, h264_row_edge *above, const h264_pixel_row *src,
                         h264_analysis_row *out)
{
    uint8_t pred[256], pu[64], pv[64];
    int x, m;

    out->head = src->head;
    for (x = 0; x < s->mb_w; ++x) {
        const h264_mb_pixels *mb = &src->mb[x];
        h264_mb_analysis *a = &out->mb[x];
        h264_edge e[3];
        int best = -1;

        mb_edges(above, src->head.row > 0, src, x, e);
        a->luma_mode = H264_I16_DC;
        a->chroma_mode = H264_CHROMA_DC;
        a->mv[0] = a->mv[1] = 0;
        a->pad[0] = a->pad[1] = 0;
        for (m = 0; m < 4; ++m) {
            int sad;
            if (!h264_luma_mode_usable(m, &e[0]))
                continue;
            h264_predict_luma16(pred, m, &e[0]);
            sad = h264_sad16(mb->y, pred, 16);
            if (best < 0 || sad < best) {
                best = sad;
                a->luma_mode = (uint8_t)m;
            }
        }
        a->sad = best;
        best = -1;
        for (m = 0; m < 4; ++m) {
            int sad;
            if (!h264_chroma_mode_usable(m, &e[1]))
                continue;
            h264_predict_chroma8(pu, m, &e[1]);
            h264_predict_chroma8(pv, m, &e[2]);
            sad = h264_sad(mb->u, 8, pu, 8, 8, 8) + h264_sad(mb->v, 8, pv, 8, 8, 8);
            if (best < 0 || sad < best) {
                best = sad;
                a->chroma_mode = (uint8_t)m;
            }
        }
    }
    keep_edge(s, above, src);
}

/* ------------------------------------------------------------ ME */

static const uint8_t *window_plane(const h264_setup *s, const h264_window *w, int plane,
                                   int *stride)
{
    int ls = H264_WIN_LUMA_STRIDE(s->mb_w), cs = H264_WIN_CHROMA_STRIDE(s->mb_w);
    const uint8_t *p = w->pix;
    if (plane == 0) {
        *stride = ls;
        return p + H264_WIN_LUMA_TOP * ls + H264_WIN_LUMA_PAD;
    }
    p += H264_WIN_LUMA_LINES * ls + (plane - 1) * H264_WIN_CHROMA_LINES * cs;
    *stride = cs;
    return p + H264_WIN_CHROMA_TOP * cs + H264_WIN_CHROMA_PAD;
}

/* Bits of a vector difference, both components, in quarter pixels. */
static int mvd_bits(int dx, int dy)
{
    return h264_se_size(dx) + h264_se_size(dy);
}

typedef struct search {
    const uint8_t *block, *origin; /* the source block; the reference at vector (0, 0) */
    int stride, lambda, px, py;    /* predictor in full pixels */
    int best_x, best_y, best_cost, best_sad;
} search;

static void try_vector(search *sr, int dx, int dy)
{
    int sad, cost;
    if (dx < -H264_SEARCH || dx > H264_SEARCH || dy < -H264_SEARCH || dy > H264_SEARCH)
        return;
    sad = h264_sad16(sr->block, sr->origin + dy * sr->stride + dx, sr->stride);
    cost = sad + sr->lambda * mvd_bits(4 * (dx - sr->px), 4 * (dy - sr->py));
    if (cost < sr->best_cost) {
        sr->best_cost = cost;
        sr->best_sad = sad;
        sr->best_x = dx;
        sr->best_y = dy;
    }
}

void h264_motion_search(const h264_setup *s, const h264_pixel_row *src, const h264_window *ref,
                        h264_analysis_row *out)
{
    static const int8_t diamond[4][2] = {{0, -1}, {-1, 0}, {1, 0}, {0, 1}};
    static const int8_t corners[4][2] = {{-1, -1}, {1, -1}, {-1, 1}, {1, 1}};
    int stride, x, i, step;
    const uint8_t *luma = window_plane(s, ref, 0, &stride);

    out->head = src->head;
    for (x = 0; x < s->mb_w; ++x) {
        h264_mb_analysis *a = &out->mb[x];
        search sr;

        memset(a, 0, sizeof *a);
        if (src->head.idr)
            continue;
        sr.block = src->mb[x].y;
        sr.origin = luma + 16 * x;
        sr.stride = stride;
        sr.lambda = s->lambda;
        sr.px = x > 0 ? out->mb[x - 1].mv[0] / 4 : 0;
        sr.py = x > 0 ? out->mb[x - 1].mv[1] / 4 : 0;
        sr.best_cost = 0x7fffffff;
        sr.best_sad = 0;
        sr.best_x = sr.best_y = 0;
        try_vector(&sr, 0, 0);
        try_vector(&sr, sr.px, sr.py);
        for (step = 0; step < 2 * H264_SEARCH; ++step) {
            int cx = sr.best_x, cy = sr.best_y;
            for (i = 0; i < 4; ++i)
                try_vector(&sr, cx + diamond[i][0], cy + diamond[i][1]);
            if (sr.best_x == cx && sr.best_y == cy)
                break;
        }
        for (i = 0, step = 0; i < 4; ++i)
            try_vector(&sr, sr.best_x + corners[i][0], sr.best_y + corners[i][1]);
        a->mv[0] = (int16_t)(4 * sr.best_x);
        a->mv[1] = (int16_t)(4 * sr.best_y);
        a->sad = sr.best_sad;
    }
}

/* ------------------------------------------------------------ CIP */

/* A neighbour for vector prediction (clause 8.4.1.3.2): unavailable or
 * intra ones have refIdx -1 and vector 0. */
typedef struct neighbour {
    int available, ref, mv[2];
} neighbour;

static neighbour neighbour_of(const h264_mode *m)
{
    neighbour n = {0, -1, {0, 0}};
    if (m != NULL) {
        n.available = 1;
        if (!m->intra) {
            n.ref = 0;
            n.mv[0] = m->mv[0];
            n.mv[1] = m->mv[1];
        }
    }
    return n;
}

static int median3(int a, int b, int c)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    return c < lo ? lo : c > hi ? hi : c;
}

/* The 16x16 predictor (clause 8.4.1.3) and the P_Skip vector (8.4.1.1). */
static void predict_vector(const h264_mode *a_m, const h264_mode *b_m, const h264_mode *c_m,
                           const h264_mode *d_m, int16_t mvp[2], int16_t skip[2])
{
    neighbour a = neighbour_of(a_m), b = neighbour_of(b_m), c = neighbour_of(c_m);
    int k, matches;

    if (!c.available)
        c = neighbour_of(d_m);
    if (!a.available || !b.available || (a.ref == 0 && a.mv[0] == 0 && a.mv[1] == 0) ||
        (b.ref == 0 && b.mv[0] == 0 && b.mv[1] == 0))
        skip[0] = skip[1] = 0;
    else
        skip[0] = skip[1] = 1; /* the predictor, below */
    if (!b.available && !c.available && a.available)
        b = c = a;
    matches = (a.ref == 0) + (b.ref == 0) + (c.ref == 0);
    for (k = 0; k < 2; ++k) {
        if (matches == 1)
            mvp[k] = (int16_t)(a.ref == 0 ? a.mv[k] : b.ref == 0 ? b.mv[k] : c.mv[k]);
        else
            mvp[k] = (int16_t)median3(a.mv[k], b.mv[k], c.mv[k]);
    }
    if (skip[0]) {
        skip[0] = mvp[0];
        skip[1] = mvp[1];
    }
}

/* An intra macroblock in a P picture must earn its longer header. */
#define INTRA_PENALTY_BITS 6

void h264_choose(const h264_setup *s, h264_choice *state, const h264_pixel_row *src,
                 const h264_window *ref, const h264_analysis_row *me,
                 const h264_analysis_row *ip, h264_mode_row *out)
{
    int x, row = src->head.row, stride;
    const uint8_t *luma = window_plane(s, ref, 0, &stride);

    out->head = src->head;
    for (x = 0; x < s->mb_w; ++x) {
        h264_mode *m = &out->mode[x];
        const h264_mode *a = x > 0 ? &out->mode[x - 1] : NULL;
        const h264_mode *b = row > 0 ? &state->above[x] : NULL;
        const h264_mode *c = row > 0 && x + 1 < s->mb_w ? &state->above[x + 1] : NULL;
        const h264_mode *d = row > 0 && x > 0 ? &state->above[x - 1] : NULL;
        int16_t skip[2];

        memset(m, 0, sizeof *m);
        m->luma_mode = ip->mb[x].luma_mode;
        m->chroma_mode = ip->mb[x].chroma_mode;
        predict_vector(a, b, c, d, m->mvp, skip);
        if (src->head.idr) {
            m->intra = 1;
        } else {
            const h264_mb_analysis *e = &me->mb[x];
            int cost_me = e->sad + s->lambda * mvd_bits(e->mv[0] - m->mvp[0], e->mv[1] - m->mvp[1]);
            int sad_skip = e->sad, cost_skip, cost_inter;
            if (skip[0] != e->mv[0] || skip[1] != e->mv[1])
                sad_skip = h264_sad16(src->mb[x].y,
                                      luma + 16 * x + (skip[1] >> 2) * stride + (skip[0] >> 2),
                                      stride);
            cost_skip = sad_skip + s->lambda * mvd_bits(skip[0] - m->mvp[0], skip[1] - m->mvp[1]);
            if (cost_skip <= cost_me) {
                m->mv[0] = skip[0];
                m->mv[1] = skip[1];
                cost_inter = cost_skip;
            } else {
                m->mv[0] = e->mv[0];
                m->mv[1] = e->mv[1];
                cost_inter = cost_me;
            }
            if (ip->mb[x].sad + s->lambda * INTRA_PENALTY_BITS < cost_inter)
                m->intra = 1;
            else
                m->skip_ok = m->mv[0] == skip[0] && m->mv[1] == skip[1];
        }
        if (m->intra)
            m->mv[0] = m->mv[1] = 0;
    }
    memcpy(state->above, out->mode, sizeof(h264_mode) * (size_t)s->mb_w);
}

/* ------------------------------------------------------------ MC */

void h264_compensate(const h264_setup *s, const h264_mode_row *modes, const h264_window *ref,
                     h264_pixel_row *pred)
{
    int x, ls, cs;
    const uint8_t *y = window_plane(s, ref, 0, &ls);
    const uint8_t *u = window_plane(s, ref, 1, &cs);
    const uint8_t *v = window_plane(s, ref, 2, &cs);

    pred->head = modes->head;
    memcpy(pred->mode, modes->mode, sizeof(h264_mode) * (size_t)s->mb_w);
    for (x = 0; x < s->mb_w; ++x) {
        const h264_mode *m = &modes->mode[x];
        h264_mb_pixels *p = &pred->mb[x];
        if (m->intra) {
            memset(p, 0, sizeof *p);
            continue;
        }
        h264_mc_luma16(p->y, y + 16 * x, ls, m->mv);
        h264_mc_chroma8(p->u, u + 8 * x, cs, m->mv);
        h264_mc_chroma8(p->v, v + 8 * x, cs, m->mv);
    }
}

/* ------------------------------------------------------------ +/- */

/* Residual of a 16x16 (n = 16) or 8x8 (n = 8) block into its 4x4 blocks. */
static void split_residual(int16_t (*blocks)[16], const uint8_t *src, const uint8_t *pred, int n)
{
    int b, i, j, per_line = n / 4;
    for (b = 0; b < per_line * per_line; ++b) {
        int ox = 4 * (b % per_line), oy = 4 * (b / per_line);
        for (j = 0; j < 4; ++j)
            for (i = 0; i < 4; ++i) {
                int at = (oy + j) * n + ox + i;
                blocks[b][4 * j + i] = (int16_t)(src[at] - pred[at]);
            }
    }
}

static void mb_subtract(h264_mb_levels *m, const h264_mb_pixels *src, const h264_mb_pixels *pred)
{
    split_residual(m->luma, src->y, pred->y, 16);
    split_residual(m->chroma[0], src->u, pred->u, 8);
    split_residual(m->chroma[1], src->v, pred->v, 8);
    memset(m->luma_dc, 0, sizeof m->luma_dc);
    memset(m->chroma_dc, 0, sizeof m->chroma_dc);
    m->cbp = 0;
}

void h264_subtract(const h264_setup *s, const h264_pixel_row *src, const h264_pixel_row *pred,
                   h264_level_row *out)
{
    int x;
    out->head = pred->head;
    memcpy(out->mode, pred->mode, sizeof(h264_mode) * (size_t)s->mb_w);
    for (x = 0; x < s->mb_w; ++x) {
        if (pred->mode[x].intra)
            memset(&out->mb[x], 0, sizeof out->mb[x]);
        else
            mb_subtract(&out->mb[x], &src->mb[x], &pred->mb[x]);
    }
}

/* ------------------------------------------------------------ T, Q, Qi, Ti */

void h264_mb_transform(h264_mb_levels *m)
{
    int b, c;
    for (b = 0; b < 16; ++b)
        h264_forward4x4(m->luma[b]);
    for (c = 0; c < 2; ++c)
        for (b = 0; b < 4; ++b)
            h264_forward4x4(m->chroma[c][b]);
}

void h264_mb_inverse(h264_mb_levels *m)
{
    int b, c;
    for (b = 0; b < 16; ++b)
        h264_inverse4x4(m->luma[b]);
    for (c = 0; c < 2; ++c)
        for (b = 0; b < 4; ++b)
            h264_inverse4x4(m->chroma[c][b]);
}

/* What a block's levels are worth keeping: a level above 1 always is
 * (9); lone +-1 levels score less the longer the zero run before them.
 * Inter macroblocks drop 8x8 blocks scoring under 4, all luma under 6 and
 * a chroma component's AC under 7, as the JM reference encoder does. */
static int block_score(const int16_t *block, int first)
{
    static const uint8_t run_score[16] = {3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int i, run = 0, score = 0;
    for (i = first; i < 16; ++i) {
        int v = block[h264_zigzag[i]];
        if (v == 0) {
            ++run;
        } else if (v > 1 || v < -1) {
            return 9;
        } else {
            score += run_score[run];
            run = 0;
        }
    }
    return score;
}

static int block_nonzero(const int16_t *block, int first)
{
    int i;
    for (i = first; i < 16; ++i)
        if (block[i] != 0)
            return 1;
    return 0;
}

/* The 4x4 blocks (raster numbers) of 8x8 block k. */
static int block_of_8x8(int k, int i)
{
    return 8 * (k >> 1) + 2 * (k & 1) + 4 * (i >> 1) + (i & 1);
}

static void decimate(h264_mb_levels *m)
{
    int k, i, c, total = 0;
    for (k = 0; k < 4; ++k) {
        int score = 0;
        for (i = 0; i < 4; ++i)
            score += block_score(m->luma[block_of_8x8(k, i)], 0);
        if (score < 4)
            for (i = 0; i < 4; ++i)
                memset(m->luma[block_of_8x8(k, i)], 0, sizeof m->luma[0]);
        total += score;
    }
    if (total < 6)
        memset(m->luma, 0, sizeof m->luma);
    for (c = 0; c < 2; ++c) {
        int score = 0;
        for (i = 0; i < 4; ++i)
            score += block_score(m->chroma[c][i], 1);
        if (score < 7)
            for (i = 0; i < 4; ++i)
                memset(m->chroma[c][i] + 1, 0, 15 * sizeof(int16_t));
    }
}

static int coded_block_pattern(const h264_mb_levels *m, int intra)
{
    int k, i, c, luma = 0, chroma = 0;
    for (k = 0; k < 4; ++k)
        for (i = 0; i < 4; ++i)
            if (block_nonzero(m->luma[block_of_8x8(k, i)], intra ? 1 : 0))
                luma |= 1 << k;
    if (intra && luma)
        luma = 15; /* Intra16x16 codes all AC blocks or none */
    for (c = 0; c < 2; ++c)
        for (i = 0; i < 4; ++i) {
            if (block_nonzero(m->chroma[c][i], 1))
                chroma = 2;
            if (m->chroma_dc[c][i] != 0 && chroma == 0)
                chroma = 1;
        }
    return luma | chroma << 4;
}

void h264_mb_quantise(h264_mb_levels *m, int qp, int intra)
{
    int32_t dc[16];
    int b, c, cqp = h264_chroma_qp(qp);

    if (intra) {
        for (b = 0; b < 16; ++b)
            dc[b] = m->luma[b][0];
        h264_hadamard4x4(dc);
        for (b = 0; b < 16; ++b) {
            m->luma_dc[b] = (int16_t)h264_quant_luma_dc(dc[b], qp, 1);
            m->luma[b][0] = 0;
            h264_quant4x4(m->luma[b], 1, qp, 1);
        }
    } else {
        for (b = 0; b < 16; ++b)
            h264_quant4x4(m->luma[b], 0, qp, 0);
    }
    for (c = 0; c < 2; ++c) {
        for (b = 0; b < 4; ++b)
            dc[b] = m->chroma[c][b][0];
        h264_hadamard2x2(dc);
        for (b = 0; b < 4; ++b) {
            m->chroma_dc[c][b] = (int16_t)h264_quant_chroma_dc(dc[b], cqp, intra);
            m->chroma[c][b][0] = 0;
            h264_quant4x4(m->chroma[c][b], 1, cqp, intra);
        }
    }
    if (!intra)
        decimate(m);
    m->cbp = coded_block_pattern(m, intra);
}

void h264_mb_rescale(h264_mb_levels *m, int qp, int intra)
{
    int32_t dc[16];
    int b, c, cqp = h264_chroma_qp(qp);

    if (intra) {
        for (b = 0; b < 16; ++b)
            dc[b] = m->luma_dc[b];
        h264_dequant_luma_dc(dc, qp);
    }
    for (b = 0; b < 16; ++b) {
        h264_dequant4x4(m->luma[b], intra ? 1 : 0, qp);
        if (intra)
            m->luma[b][0] = (int16_t)dc[b];
    }
    for (c = 0; c < 2; ++c) {
        for (b = 0; b < 4; ++b)
            dc[b] = m->chroma_dc[c][b];
        h264_dequant_chroma_dc(dc, cqp);
        for (b = 0; b < 4; ++b) {
            h264_dequant4x4(m->chroma[c][b], 1, cqp);
            m->chroma[c][b][0] = (int16_t)dc[b];
        }
    }
}

static void copy_head(const h264_setup *s, const h264_level_row *in, h264_level_row *out)
{
    if (in == out)
        return;
    out->head = in->head;
    memcpy(out->mode, in->mode, sizeof(h264_mode) * (size_t)s->mb_w);
}

/* The T, Q, Qi and Ti blocks: one step on every inter macroblock of a
 * row (intra ones were coded inside '+'), in place or into 'out'. */
enum row_step { STEP_TRANSFORM, STEP_QUANTISE, STEP_RESCALE, STEP_INVERSE };

static void row_step(const h264_setup *s, const h264_level_row *in, h264_level_row *out,
                     enum row_step step)
{
    int x;
    copy_head(s, in, out);
    for (x = 0; x < s->mb_w; ++x) {
        if (in != out)
            out->mb[x] = in->mb[x];
        if (in->mode[x].intra)
            continue;
        switch (step) {
        case STEP_TRANSFORM: h264_mb_transform(&out->mb[x]); break;
        case STEP_QUANTISE: h264_mb_quantise(&out->mb[x], s->qp, 0); break;
        case STEP_RESCALE: h264_mb_rescale(&out->mb[x], s->qp, 0); break;
        case STEP_INVERSE: h264_mb_inverse(&out->mb[x]); break;
        }
    }
}

void h264_transform(const h264_setup *s, const h264_level_row *in, h264_level_row *out)
{
    row_step(s, in, out, STEP_TRANSFORM);
}

void h264_quantise(const h264_setup *s, const h264_level_row *in, h264_level_row *out)
{
    row_step(s, in, out, STEP_QUANTISE);
}

void h264_rescale(const h264_setup *s, const h264_level_row *in, h264_level_row *out)
{
    row_step(s, in, out, STEP_RESCALE);
}

void h264_inverse(const h264_setup *s, const h264_level_row *in, h264_level_row *out)
{
    row_step(s, in, out, STEP_INVERSE);
}

/* ------------------------------------------------------------ + */

/* prediction + residual of a 16x16 or 8x8 block from its 4x4 blocks */
static void add_residual(uint8_t *out, const uint8_t *pred, const int16_t (*blocks)[16], int n)
{
    int b, i, j, per_line = n / 4;
    for (b = 0; b < per_line * per_line; ++b) {
        int ox = 4 * (b % per_line), oy = 4 * (b / per_line);
        for (j = 0; j < 4; ++j)
            for (i = 0; i < 4; ++i) {
                int at = (oy + j) * n + ox + i;
                out[at] = clip1(pred[at] + blocks[b][4 * j + i]);
            }
    }
}

static void mb_add(h264_mb_pixels *out, const h264_mb_pixels *pred, const h264_mb_levels *res)
{
    add_residual(out->y, pred->y, res->luma, 16);
    add_residual(out->u, pred->u, res->chroma[0], 8);
    add_residual(out->v, pred->v, res->chroma[1], 8);
}

void h264_reconstruct(const h264_setup *s, h264_row_edge *above, const h264_pixel_row *src,
                      const h264_pixel_row *pred, const h264_level_row *residual,
                      h264_pixel_row *recon, h264_level_row *intra)
{
    int x;

    recon->head = pred->head;
    memcpy(recon->mode, pred->mode, sizeof(h264_mode) * (size_t)s->mb_w);
    intra->head = pred->head;
    memcpy(intra->mode, pred->mode, sizeof(h264_mode) * (size_t)s->mb_w);
    for (x = 0; x < s->mb_w; ++x) {
        const h264_mode *m = &pred->mode[x];
        if (m->intra) {
            h264_mb_pixels p;
            h264_mb_levels *lv = &intra->mb[x], decoded;
            h264_edge e[3];

            mb_edges(above, recon->head.row > 0, recon, x, e);
            h264_predict_luma16(p.y, m->luma_mode, &e[0]);
            h264_predict_chroma8(p.u, m->chroma_mode, &e[1]);
            h264_predict_chroma8(p.v, m->chroma_mode, &e[2]);
            mb_subtract(lv, &src->mb[x], &p);
            h264_mb_transform(lv);
            h264_mb_quantise(lv, s->qp, 1);
            decoded = *lv;
            h264_mb_rescale(&decoded, s->qp, 1);
            h264_mb_inverse(&decoded);
            mb_add(&recon->mb[x], &p, &decoded);
        } else {
            memset(&intra->mb[x], 0, sizeof intra->mb[x]);
            mb_add(&recon->mb[x], &pred->mb[x], &residual->mb[x]);
        }
    }
    keep_edge(s, above, recon);
}

/* ------------------------------------------------------------ F(n-1) */

size_t h264_reference_size(const h264_setup *s)
{
    return 2 * (size_t)(256 * s->mb_w * s->mb_h * 3 / 2);
}

void h264_reference_init(h264_reference *r, const h264_setup *s, void *memory)
{
    uint8_t *p = memory;
    size_t luma = (size_t)256 * (size_t)(s->mb_w * s->mb_h);
    int k;
    for (k = 0; k < 2; ++k) {
        r->plane[k][0] = p;
        r->plane[k][1] = p + luma;
        r->plane[k][2] = p + luma + luma / 4;
        p += luma + luma / 2;
    }
}

void h264_reference_store(const h264_setup *s, h264_reference *r, const h264_pixel_row *recon)
{
    int k = recon->head.frame & 1, x, j, w = 16 * s->mb_w, row = recon->head.row;
    for (x = 0; x < s->mb_w; ++x)
        for (j = 0; j < 16; ++j) {
            memcpy(r->plane[k][0] + (size_t)(16 * row + j) * (size_t)w + 16 * x,
                   recon->mb[x].y + 16 * j, 16);
            if (j < 8) {
                size_t at = (size_t)(8 * row + j) * (size_t)(w / 2) + (size_t)(8 * x);
                memcpy(r->plane[k][1] + at, recon->mb[x].u + 8 * j, 8);
                memcpy(r->plane[k][2] + at, recon->mb[x].v + 8 * j, 8);
            }
        }
}

/* Lines first_line .. first_line+lines-1 of a plane 'w' x 'h', each
 * padded by 'pad' repeated pixels either side. */
static void window_lines(uint8_t *out, int stride, const uint8_t *plane, int w, int h,
                         int first_line, int lines, int pad)
{
    int j;
    for (j = 0; j < lines; ++j, out += stride) {
        const uint8_t *line = plane + (size_t)clamp(first_line + j, 0, h - 1) * (size_t)w;
        memset(out, line[0], (size_t)pad);
        memcpy(out + pad, line, (size_t)w);
        memset(out + pad + w, line[w - 1], (size_t)pad);
    }
}

void h264_reference_window(const h264_setup *s, const h264_reference *r, int frame, int row,
                           h264_window *out)
{
    int k = (frame - 1) & 1, w = 16 * s->mb_w, h = 16 * s->mb_h;
    int ls = H264_WIN_LUMA_STRIDE(s->mb_w), cs = H264_WIN_CHROMA_STRIDE(s->mb_w);
    uint8_t *p = out->pix;

    out->head.frame = frame;
    out->head.row = row;
    out->head.idr = frame == 0;
    out->head.pad = 0;
    if (frame == 0)
        return;
    window_lines(p, ls, r->plane[k][0], w, h, 16 * row - H264_WIN_LUMA_TOP, H264_WIN_LUMA_LINES,
                 H264_WIN_LUMA_PAD);
    p += H264_WIN_LUMA_LINES * ls;
    window_lines(p, cs, r->plane[k][1], w / 2, h / 2, 8 * row - H264_WIN_CHROMA_TOP,
                 H264_WIN_CHROMA_LINES, H264_WIN_CHROMA_PAD);
    p += H264_WIN_CHROMA_LINES * cs;
    window_lines(p, cs, r->plane[k][2], w / 2, h / 2, 8 * row - H264_WIN_CHROMA_TOP,
                 H264_WIN_CHROMA_LINES, H264_WIN_CHROMA_PAD);
}

/* ------------------------------------------------------------ R */

static void scan_block(int16_t block[16])
{
    int16_t t[16];
    int i;
    for (i = 0; i < 16; ++i)
        t[i] = block[h264_zigzag[i]];
    memcpy(block, t, sizeof t);
}

void h264_reorder(const h264_setup *s, const h264_level_row *inter, const h264_level_row *intra,
                  h264_level_row *out)
{
    int x, b, c;
    copy_head(s, inter, out);
    for (x = 0; x < s->mb_w; ++x) {
        h264_mb_levels *m = &out->mb[x];
        *m = inter->mode[x].intra ? intra->mb[x] : inter->mb[x];
        for (b = 0; b < 16; ++b)
            scan_block(m->luma[b]);
        for (c = 0; c < 2; ++c)
            for (b = 0; b < 4; ++b)
                scan_block(m->chroma[c][b]);
        scan_block(m->luma_dc);
    }
}

/* ------------------------------------------------------------ EC */

/* Table 9-4: codeNum of each coded_block_pattern of an inter macroblock. */
static const uint8_t inter_cbp_code[48] = {
    0,  2,  3,  7,  4,  8,  17, 13, 5,  18, 9,  14, 10, 15, 16, 11,
    1,  32, 33, 36, 34, 37, 44, 40, 35, 45, 38, 41, 39, 42, 43, 19,
    6,  24, 25, 20, 26, 21, 46, 28, 27, 47, 22, 29, 23, 30, 31, 12};

/* blkIdx (the order blocks are coded, clause 6.4.3) to raster number */
static const uint8_t coded_order[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};

size_t h264_slice_size(const h264_setup *s)
{
    /* generous: 3200 bytes a macroblock, above any CAVLC macroblock at QP >= 0 */
    return (size_t)3200 * (size_t)(s->mb_w * s->mb_h) + 1024;
}

void h264_entropy_init(h264_entropy *e, const h264_setup *s, uint8_t *slice_buf, uint8_t *out,
                       size_t cap)
{
    memset(e, 0, sizeof *e);
    e->out = out;
    e->cap = cap;
    e->slice_buf = slice_buf;
    e->slice_cap = h264_slice_size(s);
}

static void emit_nal(h264_entropy *e, int type, const uint8_t *rbsp, size_t len)
{
    size_t n = h264_nal(e->out + e->size, e->cap - e->size, 3, type, rbsp, len);
    if (n == 0 && len > 0)
        e->overflow = 1;
    e->size += n;
    e->bits = 8 * (uint64_t)e->size;
}

static int level_idc(const h264_setup *s)
{
    int mbs = s->mb_w * s->mb_h;
    return mbs <= 99 ? 10 : mbs <= 396 ? 20 : mbs <= 792 ? 21 : mbs <= 1620 ? 30
         : mbs <= 3600 ? 31 : mbs <= 5120 ? 32 : mbs <= 8192 ? 40 : 51;
}

static void write_parameter_sets(const h264_setup *s, h264_entropy *e)
{
    uint8_t buf[64];
    h264_bits b;
    int crop_right = (16 * s->mb_w - s->width) / 2, crop_bottom = (16 * s->mb_h - s->height) / 2;

    h264_bits_init(&b, buf, sizeof buf); /* seq_parameter_set_rbsp, 7.3.2.1.1 */
    h264_put(&b, 8, 66);                 /* profile_idc: baseline */
    h264_put(&b, 8, 0xc0);               /* constraint_set0 and 1: constrained baseline */
    h264_put(&b, 8, (uint32_t)level_idc(s));
    h264_put_ue(&b, 0); /* seq_parameter_set_id */
    h264_put_ue(&b, 0); /* log2_max_frame_num_minus4 */
    h264_put_ue(&b, 2); /* pic_order_cnt_type: output order is decoding order */
    h264_put_ue(&b, 1); /* max_num_ref_frames */
    h264_put(&b, 1, 0); /* gaps_in_frame_num_value_allowed_flag */
    h264_put_ue(&b, (uint32_t)(s->mb_w - 1));
    h264_put_ue(&b, (uint32_t)(s->mb_h - 1));
    h264_put(&b, 1, 1); /* frame_mbs_only_flag */
    h264_put(&b, 1, 1); /* direct_8x8_inference_flag */
    h264_put(&b, 1, crop_right || crop_bottom);
    if (crop_right || crop_bottom) {
        h264_put_ue(&b, 0);
        h264_put_ue(&b, (uint32_t)crop_right);
        h264_put_ue(&b, 0);
        h264_put_ue(&b, (uint32_t)crop_bottom);
    }
    h264_put(&b, 1, 0); /* vui_parameters_present_flag */
    h264_put_trailing(&b);
    emit_nal(e, 7, buf, b.bytes);

    h264_bits_init(&b, buf, sizeof buf); /* pic_parameter_set_rbsp, 7.3.2.2 */
    h264_put_ue(&b, 0); /* pic_parameter_set_id */
    h264_put_ue(&b, 0); /* seq_parameter_set_id */
    h264_put(&b, 1, 0); /* entropy_coding_mode_flag: CAVLC */
    h264_put(&b, 1, 0); /* bottom_field_pic_order_in_frame_present_flag */
    h264_put_ue(&b, 0); /* num_slice_groups_minus1 */
    h264_put_ue(&b, 0); /* num_ref_idx_l0_default_active_minus1 */
    h264_put_ue(&b, 0); /* num_ref_idx_l1_default_active_minus1 */
    h264_put(&b, 1, 0); /* weighted_pred_flag */
    h264_put(&b, 2, 0); /* weighted_bipred_idc */
    h264_put_se(&b, s->qp - 26); /* pic_init_qp_minus26: slices need no qp delta */
    h264_put_se(&b, 0);          /* pic_init_qs_minus26 */
    h264_put_se(&b, 0);          /* chroma_qp_index_offset */
    h264_put(&b, 1, 1); /* deblocking_filter_control_present_flag */
    h264_put(&b, 1, 0); /* constrained_intra_pred_flag */
    h264_put(&b, 1, 0); /* redundant_pic_cnt_present_flag */
    h264_put_trailing(&b);
    emit_nal(e, 8, buf, b.bytes);
}

static void write_slice_header(h264_bits *b, int frame, int idr)
{
    h264_put_ue(b, 0);              /* first_mb_in_slice */
    h264_put_ue(b, idr ? 7 : 5);    /* slice_type: I or P, as every slice of the picture */
    h264_put_ue(b, 0);              /* pic_parameter_set_id */
    h264_put(b, 4, (uint32_t)(frame & 15)); /* frame_num, log2_max_frame_num 4 */
    if (idr)
        h264_put_ue(b, 0);          /* idr_pic_id */
    if (!idr) {
        h264_put(b, 1, 0);          /* num_ref_idx_active_override_flag */
        h264_put(b, 1, 0);          /* ref_pic_list_modification_flag_l0 */
    }
    if (idr) {
        h264_put(b, 1, 0);          /* no_output_of_prior_pics_flag */
        h264_put(b, 1, 0);          /* long_term_reference_flag */
    } else {
        h264_put(b, 1, 0);          /* adaptive_ref_pic_marking_mode_flag */
    }
    h264_put_se(b, 0);              /* slice_qp_delta */
    h264_put_ue(b, 1);              /* disable_deblocking_filter_idc: no loop filter */
}

/* nC of luma block 'blk' (raster) of macroblock x, clause 9.2.1 */
static int luma_nc(const h264_entropy *e, int x, int row, int blk)
{
    int bx = blk & 3, by = blk >> 2;
    int left = bx > 0 ? e->nz[x][blk - 1] : x > 0 ? e->nz[x - 1][blk + 3] : -1;
    int top = by > 0 ? e->nz[x][blk - 4] : row > 0 ? e->nz_above[x][blk + 12] : -1;
    return h264_cavlc_nc(left, top);
}

static int chroma_nc(const h264_entropy *e, int x, int row, int c, int blk)
{
    int at = 16 + 4 * c + blk;
    int left = (blk & 1) ? e->nz[x][at - 1] : x > 0 ? e->nz[x - 1][at + 1] : -1;
    int top = (blk >> 1) ? e->nz[x][at - 2] : row > 0 ? e->nz_above[x][at + 2] : -1;
    return h264_cavlc_nc(left, top);
}

/* residual( ) of clause 7.3.5.3 with CAVLC */
static void write_residual(h264_entropy *e, int x, int row, const h264_mb_levels *m, int intra)
{
    h264_bits *b = &e->slice;
    int i, c, cbp_luma = m->cbp & 15, cbp_chroma = m->cbp >> 4;

    if (intra)
        h264_cavlc_block(b, m->luma_dc, 16, luma_nc(e, x, row, 0));
    for (i = 0; i < 16; ++i) {
        int blk = coded_order[i];
        if (!(cbp_luma & (1 << (i / 4))))
            continue;
        e->nz[x][blk] = (uint8_t)(intra ? h264_cavlc_block(b, m->luma[blk] + 1, 15, luma_nc(e, x, row, blk))
                                        : h264_cavlc_block(b, m->luma[blk], 16, luma_nc(e, x, row, blk)));
    }
    if (cbp_chroma)
        for (c = 0; c < 2; ++c)
            h264_cavlc_block(b, m->chroma_dc[c], 4, -1);
    if (cbp_chroma & 2)
        for (c = 0; c < 2; ++c)
            for (i = 0; i < 4; ++i)
                e->nz[x][16 + 4 * c + i] =
                    (uint8_t)h264_cavlc_block(b, m->chroma[c][i] + 1, 15, chroma_nc(e, x, row, c, i));
}

void h264_entropy_row(const h264_setup *s, h264_entropy *e, const h264_level_row *r)
{
    int x, row = r->head.row, idr = r->head.idr;
    h264_bits *b = &e->slice;

    if (r->head.frame == 0 && row == 0)
        write_parameter_sets(s, e);
    if (row == 0) {
        h264_bits_init(b, e->slice_buf, e->slice_cap);
        write_slice_header(b, r->head.frame, idr);
        e->skip_run = 0;
    }
    for (x = 0; x < s->mb_w; ++x) {
        const h264_mode *m = &r->mode[x];
        const h264_mb_levels *lv = &r->mb[x];
        memset(e->nz[x], 0, sizeof e->nz[x]);
        if (!m->intra && m->skip_ok && lv->cbp == 0) {
            ++e->skip_run; /* P_Skip */
            ++e->skip_mbs;
            continue;
        }
        if (!idr) {
            h264_put_ue(b, (uint32_t)e->skip_run); /* mb_skip_run */
            e->skip_run = 0;
        }
        if (m->intra) {
            int cbp_luma = lv->cbp & 15, cbp_chroma = lv->cbp >> 4;
            /* mb_type I_16x16_<mode>_<chroma cbp>_<luma cbp> (table 7-11), after
             * the 5 P types in a P slice */
            h264_put_ue(b, (uint32_t)((idr ? 0 : 5) + 1 + m->luma_mode + 4 * cbp_chroma +
                                      (cbp_luma ? 12 : 0)));
            h264_put_ue(b, m->chroma_mode); /* intra_chroma_pred_mode */
            h264_put_se(b, 0);              /* mb_qp_delta */
            write_residual(e, x, row, lv, 1);
            ++e->intra_mbs;
        } else {
            h264_put_ue(b, 0); /* mb_type P_L0_16x16 */
            h264_put_se(b, m->mv[0] - m->mvp[0]);
            h264_put_se(b, m->mv[1] - m->mvp[1]);
            h264_put_ue(b, inter_cbp_code[lv->cbp]);
            if (lv->cbp) {
                h264_put_se(b, 0); /* mb_qp_delta */
                write_residual(e, x, row, lv, 0);
            }
        }
    }
    memcpy(e->nz_above, e->nz, sizeof e->nz);
    if (row == s->mb_h - 1) {
        if (e->skip_run > 0)
            h264_put_ue(b, (uint32_t)e->skip_run);
        h264_put_trailing(b);
        if (b->overflow)
            e->overflow = 1;
        emit_nal(e, idr ? 5 : 1, b->buf, b->bytes);
    }
}

uint64_t h264_checksum(const uint8_t *data, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    size_t i;
    for (i = 0; i < len; ++i) {
        h ^= data[i];
        h *= 1099511628211ull;
    }
    return h;
}
