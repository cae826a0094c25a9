/* SPDX-License-Identifier: MIT */
/* H.264's integer transforms and flat-matrix quantisation (clause 8.5 and its forward twin). */
#include "transform.h"

const uint8_t h264_zigzag[16] = {0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15};

/* Table 8-15: QPc for qPi 30..51 (below 30, QPc = qPi). */
static const uint8_t chroma_qp_table[22] = {29, 30, 31, 32, 32, 33, 34, 34, 35, 35, 36,
                                            36, 37, 37, 37, 38, 38, 38, 39, 39, 39, 39};

/* Multiplication factors of the forward quantiser and the standard's
 * normAdjust4x4 (v in clause 8.5.9), for qp % 6 and the three position
 * classes: both coordinates even, both odd, the rest. */
static const int32_t quant_mf[6][3] = {{13107, 5243, 8066}, {11916, 4660, 7490},
                                       {10082, 4194, 6554}, {9362, 3647, 5825},
                                       {8192, 3355, 5243},  {7282, 2893, 4559}};
static const int32_t dequant_v[6][3] = {{10, 16, 13}, {11, 18, 14}, {13, 20, 16},
                                        {14, 23, 18}, {16, 25, 20}, {18, 29, 23}};

#define LEVEL_MAX 2063

/* 0: both coordinates even, 1: both odd, 2: the rest */
static const uint8_t position_classes[16] = {0, 2, 0, 2, 2, 1, 2, 1, 0, 2, 0, 2, 2, 1, 2, 1};

static int position_class(int pos)
{
    return position_classes[pos];
}

int h264_chroma_qp(int qp)
{
    return qp < 30 ? qp : chroma_qp_table[qp - 30];
}

void h264_forward4x4(int16_t block[16])
{
    int32_t t[16];
    int i;

    for (i = 0; i < 4; ++i) { /* rows */
        const int16_t *x = block + 4 * i;
        int32_t a = x[0] + x[3], b = x[1] + x[2], c = x[1] - x[2], d = x[0] - x[3];
        t[4 * i + 0] = a + b;
        t[4 * i + 1] = 2 * d + c;
        t[4 * i + 2] = a - b;
        t[4 * i + 3] = d - 2 * c;
    }
    for (i = 0; i < 4; ++i) { /* columns */
        int32_t a = t[i] + t[12 + i], b = t[4 + i] + t[8 + i];
        int32_t c = t[4 + i] - t[8 + i], d = t[i] - t[12 + i];
        block[i] = (int16_t)(a + b);
        block[4 + i] = (int16_t)(2 * d + c);
        block[8 + i] = (int16_t)(a - b);
        block[12 + i] = (int16_t)(d - 2 * c);
    }
}

void h264_inverse4x4(int16_t block[16])
{
    int32_t t[16];
    int i;

    for (i = 0; i < 4; ++i) { /* rows: equations 8-338 to 8-345 */
        const int16_t *d = block + 4 * i;
        int32_t e0 = d[0] + d[2], e1 = d[0] - d[2];
        int32_t e2 = (d[1] >> 1) - d[3], e3 = d[1] + (d[3] >> 1);
        t[4 * i + 0] = e0 + e3;
        t[4 * i + 1] = e1 + e2;
        t[4 * i + 2] = e1 - e2;
        t[4 * i + 3] = e0 - e3;
    }
    for (i = 0; i < 4; ++i) { /* columns, then (x + 32) >> 6 */
        int32_t g0 = t[i] + t[8 + i], g1 = t[i] - t[8 + i];
        int32_t g2 = (t[4 + i] >> 1) - t[12 + i], g3 = t[4 + i] + (t[12 + i] >> 1);
        block[i] = (int16_t)((g0 + g3 + 32) >> 6);
        block[4 + i] = (int16_t)((g1 + g2 + 32) >> 6);
        block[8 + i] = (int16_t)((g1 - g2 + 32) >> 6);
        block[12 + i] = (int16_t)((g0 - g3 + 32) >> 6);
    }
}

void h264_hadamard4x4(int32_t block[16])
{
    int32_t t[16];
    int i;

    for (i = 0; i < 4; ++i) {
        const int32_t *x = block + 4 * i;
        int32_t s01 = x[0] + x[1], d01 = x[0] - x[1], s23 = x[2] + x[3], d23 = x[2] - x[3];
        t[4 * i + 0] = s01 + s23;
        t[4 * i + 1] = s01 - s23;
        t[4 * i + 2] = d01 - d23;
        t[4 * i + 3] = d01 + d23;
    }
    for (i = 0; i < 4; ++i) {
        int32_t s01 = t[i] + t[4 + i], d01 = t[i] - t[4 + i];
        int32_t s23 = t[8 + i] + t[12 + i], d23 = t[8 + i] - t[12 + i];
        block[i] = s01 + s23;
        block[4 + i] = s01 - s23;
        block[8 + i] = d01 - d23;
        block[12 + i] = d01 + d23;
    }
}

void h264_hadamard2x2(int32_t block[4])
{
    int32_t a = block[0] + block[1], b = block[0] - block[1];
    int32_t c = block[2] + block[3], d = block[2] - block[3];
    block[0] = a + c;
    block[1] = b + d;
    block[2] = a - c;
    block[3] = b - d;
}

static int quantise(int32_t c, int32_t mf, int shift, int intra)
{
    int64_t f = ((int64_t)1 << shift) / (intra ? 3 : 6);
    int64_t a = c < 0 ? -(int64_t)c : c;
    int64_t level = (a * mf + f) >> shift;
    if (level > LEVEL_MAX)
        level = LEVEL_MAX;
    return (int)(c < 0 ? -level : level);
}

int h264_quant(int32_t c, int pos, int qp, int intra)
{
    return quantise(c, quant_mf[qp % 6][position_class(pos)], 15 + qp / 6, intra);
}

int h264_quant_luma_dc(int32_t c, int qp, int intra)
{
    return quantise(c, quant_mf[qp % 6][0], 17 + qp / 6, intra);
}

int h264_quant_chroma_dc(int32_t c, int qp, int intra)
{
    return quantise(c, quant_mf[qp % 6][0], 16 + qp / 6, intra);
}

void h264_quant4x4(int16_t block[16], int first, int qp, int intra)
{
    const int32_t *mf = quant_mf[qp % 6];
    int shift = 15 + qp / 6, i;
    int32_t f = (int32_t)((1 << shift) / (intra ? 3 : 6));
    for (i = first; i < 16; ++i) {
        int32_t c = block[i], a = c < 0 ? -c : c;
        int32_t level = (a * mf[position_classes[i]] + f) >> shift;
        if (level > LEVEL_MAX)
            level = LEVEL_MAX;
        block[i] = (int16_t)(c < 0 ? -level : level);
    }
}

void h264_dequant4x4(int16_t block[16], int first, int qp)
{
    const int32_t *v = dequant_v[qp % 6];
    int i, scale = 1 << (qp / 6);
    for (i = first; i < 16; ++i)
        block[i] = (int16_t)(block[i] * v[position_classes[i]] * scale);
}

/* LevelScale4x4 = 16 * v for flat matrices (equation 8-315); with it, the
 * AC scaling of equation 8-336/8-337 is exactly level * v << (qp / 6). */
int32_t h264_dequant(int level, int pos, int qp)
{
    return (int32_t)level * dequant_v[qp % 6][position_class(pos)] * (1 << (qp / 6));
}

void h264_dequant_luma_dc(int32_t dc[16], int qp)
{
    int32_t scale = 16 * dequant_v[qp % 6][0];
    int i;

    h264_hadamard4x4(dc);
    for (i = 0; i < 16; ++i) {
        if (qp >= 36)
            dc[i] = (dc[i] * scale) * (1 << (qp / 6 - 6));
        else
            dc[i] = (dc[i] * scale + (1 << (5 - qp / 6))) >> (6 - qp / 6);
    }
}

void h264_dequant_chroma_dc(int32_t dc[4], int qp)
{
    int32_t scale = 16 * dequant_v[qp % 6][0];
    int i;

    h264_hadamard2x2(dc);
    for (i = 0; i < 4; ++i)
        dc[i] = ((dc[i] * scale) * (1 << (qp / 6))) >> 5;
}
