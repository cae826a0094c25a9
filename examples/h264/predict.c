/* SPDX-License-Identifier: MIT */
/* Prediction: Intra16x16 and intra chroma modes, motion compensation, motion search, SAD. */
#include <stdlib.h>
#include <string.h>
#include "predict.h"

static uint8_t clip1(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

int h264_luma_mode_usable(int mode, const h264_edge *e)
{
    switch (mode) {
    case H264_I16_VERTICAL: return e->has_top;
    case H264_I16_HORIZONTAL: return e->has_left;
    case H264_I16_DC: return 1;
    default: return e->has_top && e->has_left;
    }
}

int h264_chroma_mode_usable(int mode, const h264_edge *e)
{
    switch (mode) {
    case H264_CHROMA_DC: return 1;
    case H264_CHROMA_HORIZONTAL: return e->has_left;
    case H264_CHROMA_VERTICAL: return e->has_top;
    default: return e->has_top && e->has_left;
    }
}

/* p[x, -1] for x = -1..n-1: the corner at index -1. */
static int above(const h264_edge *e, int x)
{
    return x < 0 ? e->top_left : e->top[x];
}

static int beside(const h264_edge *e, int y)
{
    return y < 0 ? e->top_left : e->left[y];
}

void h264_predict_luma16(uint8_t pred[256], int mode, const h264_edge *e)
{
    int x, y, sum = 0;

    switch (mode) {
    case H264_I16_VERTICAL:
        for (y = 0; y < 16; ++y)
            memcpy(pred + 16 * y, e->top, 16);
        break;
    case H264_I16_HORIZONTAL:
        for (y = 0; y < 16; ++y)
            memset(pred + 16 * y, e->left[y], 16);
        break;
    case H264_I16_DC:
        for (x = 0; x < 16; ++x)
            sum += (e->has_top ? e->top[x] : 0) + (e->has_left ? e->left[x] : 0);
        if (e->has_top && e->has_left)
            sum = (sum + 16) >> 5;
        else if (e->has_top || e->has_left)
            sum = (sum + 8) >> 4;
        else
            sum = 128;
        memset(pred, sum, 256);
        break;
    default: { /* plane, equations 8-114 to 8-120 */
        int h = 0, v = 0, a, b, c;
        for (x = 0; x < 8; ++x) {
            h += (x + 1) * (above(e, 8 + x) - above(e, 6 - x));
            v += (x + 1) * (beside(e, 8 + x) - beside(e, 6 - x));
        }
        a = 16 * (e->left[15] + e->top[15]);
        b = (5 * h + 32) >> 6;
        c = (5 * v + 32) >> 6;
        for (y = 0; y < 16; ++y)
            for (x = 0; x < 16; ++x)
                pred[16 * y + x] = clip1((a + b * (x - 7) + c * (y - 7) + 16) >> 5);
    }
    }
}

/* Chroma DC: each 4x4 block from its own stretch of the edge; the top-right
 * block prefers the top, the bottom-left one the left (clause 8.3.4.1-3). */
static int chroma_dc(const h264_edge *e, int bx, int by)
{
    int i, st = 0, sl = 0, prefer_top = bx == 1 && by == 0, prefer_left = bx == 0 && by == 1;

    for (i = 0; i < 4; ++i) {
        st += e->top[4 * bx + i];
        sl += e->left[4 * by + i];
    }
    if (prefer_top) {
        if (e->has_top)
            return (st + 2) >> 2;
        if (e->has_left)
            return (sl + 2) >> 2;
        return 128;
    }
    if (prefer_left) {
        if (e->has_left)
            return (sl + 2) >> 2;
        if (e->has_top)
            return (st + 2) >> 2;
        return 128;
    }
    if (e->has_top && e->has_left)
        return (st + sl + 4) >> 3;
    if (e->has_left)
        return (sl + 2) >> 2;
    if (e->has_top)
        return (st + 2) >> 2;
    return 128;
}

void h264_predict_chroma8(uint8_t pred[64], int mode, const h264_edge *e)
{
    int x, y;

    switch (mode) {
    case H264_CHROMA_DC:
        for (y = 0; y < 8; y += 4)
            for (x = 0; x < 8; x += 4) {
                int j, dc = chroma_dc(e, x >> 2, y >> 2);
                for (j = 0; j < 4; ++j)
                    memset(pred + 8 * (y + j) + x, dc, 4);
            }
        break;
    case H264_CHROMA_HORIZONTAL:
        for (y = 0; y < 8; ++y)
            memset(pred + 8 * y, e->left[y], 8);
        break;
    case H264_CHROMA_VERTICAL:
        for (y = 0; y < 8; ++y)
            memcpy(pred + 8 * y, e->top, 8);
        break;
    default: { /* plane, equations 8-141 to 8-147 with xCF = yCF = 0 */
        int h = 0, v = 0, a, b, c;
        for (x = 0; x < 4; ++x) {
            h += (x + 1) * (above(e, 4 + x) - above(e, 2 - x));
            v += (x + 1) * (beside(e, 4 + x) - beside(e, 2 - x));
        }
        a = 16 * (e->left[7] + e->top[7]);
        b = (34 * h + 32) >> 6;
        c = (34 * v + 32) >> 6;
        for (y = 0; y < 8; ++y)
            for (x = 0; x < 8; ++x)
                pred[8 * y + x] = clip1((a + b * (x - 3) + c * (y - 3) + 16) >> 5);
    }
    }
}

int h264_sad(const uint8_t *a, int a_stride, const uint8_t *b, int b_stride, int w, int h)
{
    int x, y, sum = 0;

    for (y = 0; y < h; ++y, a += a_stride, b += b_stride)
        for (x = 0; x < w; ++x)
            sum += a[x] > b[x] ? a[x] - b[x] : b[x] - a[x];
    return sum;
}

int h264_sad16(const uint8_t *a, const uint8_t *b, int b_stride)
{
    int x, y, sum = 0;
    for (y = 0; y < 16; ++y, a += 16, b += b_stride)
        for (x = 0; x < 16; ++x)
            sum += abs(a[x] - b[x]);
    return sum;
}

void h264_mc_luma16(uint8_t pred[256], const uint8_t *ref, int stride, const int16_t mv[2])
{
    const uint8_t *p = ref + (mv[1] >> 2) * stride + (mv[0] >> 2);
    int y;

    for (y = 0; y < 16; ++y)
        memcpy(pred + 16 * y, p + y * stride, 16);
}

void h264_mc_chroma8(uint8_t pred[64], const uint8_t *ref, int stride, const int16_t mv[2])
{
    /* a chroma vector is the luma one read in 1/8 chroma pixels */
    int fx = mv[0] & 7, fy = mv[1] & 7, x, y;
    const uint8_t *p = ref + (mv[1] >> 3) * stride + (mv[0] >> 3);

    for (y = 0; y < 8; ++y, p += stride)
        for (x = 0; x < 8; ++x) {
            int a = p[x], b = fx ? p[x + 1] : 0, c = fy ? p[x + stride] : 0;
            int d = fx && fy ? p[x + stride + 1] : 0;
            pred[8 * y + x] = (uint8_t)(((8 - fx) * (8 - fy) * a + fx * (8 - fy) * b +
                                         (8 - fx) * fy * c + fx * fy * d + 32) >> 6);
        }
}
