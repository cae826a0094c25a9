/* SPDX-License-Identifier: MIT */
/* CAVLC: the residual block syntax of H.264's baseline entropy coder (clause 9.2). */
#include "cavlc.h"

/* Table 9-5, columns 0 <= nC < 2, 2 <= nC < 4, 4 <= nC < 8 and nC = -1,
 * as {length, code} for [TotalCoeff][TrailingOnes].  The 8 <= nC column is
 * a fixed-length code and is computed instead. */
static const h264_vlc coeff_token_table[4][17][4] = {
    { /* 0 <= nC < 2 */
        {{ 1,  1}, { 0,  0}, { 0,  0}, { 0,  0}},
        {{ 6,  5}, { 2,  1}, { 0,  0}, { 0,  0}},
        {{ 8,  7}, { 6,  4}, { 3,  1}, { 0,  0}},
        {{ 9,  7}, { 8,  6}, { 7,  5}, { 5,  3}},
        {{10,  7}, { 9,  6}, { 8,  5}, { 6,  3}},
        {{11,  7}, {10,  6}, { 9,  5}, { 7,  4}},
        {{13, 15}, {11,  6}, {10,  5}, { 8,  4}},
        {{13, 11}, {13, 14}, {11,  5}, { 9,  4}},
        {{13,  8}, {13, 10}, {13, 13}, {10,  4}},
        {{14, 15}, {14, 14}, {13,  9}, {11,  4}},
        {{14, 11}, {14, 10}, {14, 13}, {13, 12}},
        {{15, 15}, {15, 14}, {14,  9}, {14, 12}},
        {{15, 11}, {15, 10}, {15, 13}, {14,  8}},
        {{16, 15}, {15,  1}, {15,  9}, {15, 12}},
        {{16, 11}, {16, 14}, {16, 13}, {15,  8}},
        {{16,  7}, {16, 10}, {16,  9}, {16, 12}},
        {{16,  4}, {16,  6}, {16,  5}, {16,  8}},
    },
    { /* 2 <= nC < 4 */
        {{ 2,  3}, { 0,  0}, { 0,  0}, { 0,  0}},
        {{ 6, 11}, { 2,  2}, { 0,  0}, { 0,  0}},
        {{ 6,  7}, { 5,  7}, { 3,  3}, { 0,  0}},
        {{ 7,  7}, { 6, 10}, { 6,  9}, { 4,  5}},
        {{ 8,  7}, { 6,  6}, { 6,  5}, { 4,  4}},
        {{ 8,  4}, { 7,  6}, { 7,  5}, { 5,  6}},
        {{ 9,  7}, { 8,  6}, { 8,  5}, { 6,  8}},
        {{11, 15}, { 9,  6}, { 9,  5}, { 6,  4}},
        {{11, 11}, {11, 14}, {11, 13}, { 7,  4}},
        {{12, 15}, {11, 10}, {11,  9}, { 9,  4}},
        {{12, 11}, {12, 14}, {12, 13}, {11, 12}},
        {{12,  8}, {12, 10}, {12,  9}, {11,  8}},
        {{13, 15}, {13, 14}, {13, 13}, {12, 12}},
        {{13, 11}, {13, 10}, {13,  9}, {13, 12}},
        {{13,  7}, {14, 11}, {13,  6}, {13,  8}},
        {{14,  9}, {14,  8}, {14, 10}, {13,  1}},
        {{14,  7}, {14,  6}, {14,  5}, {14,  4}},
    },
    { /* 4 <= nC < 8 */
        {{ 4, 15}, { 0,  0}, { 0,  0}, { 0,  0}},
        {{ 6, 15}, { 4, 14}, { 0,  0}, { 0,  0}},
        {{ 6, 11}, { 5, 15}, { 4, 13}, { 0,  0}},
        {{ 6,  8}, { 5, 12}, { 5, 14}, { 4, 12}},
        {{ 7, 15}, { 5, 10}, { 5, 11}, { 4, 11}},
        {{ 7, 11}, { 5,  8}, { 5,  9}, { 4, 10}},
        {{ 7,  9}, { 6, 14}, { 6, 13}, { 4,  9}},
        {{ 7,  8}, { 6, 10}, { 6,  9}, { 4,  8}},
        {{ 8, 15}, { 7, 14}, { 7, 13}, { 5, 13}},
        {{ 8, 11}, { 8, 14}, { 7, 10}, { 6, 12}},
        {{ 9, 15}, { 8, 10}, { 8, 13}, { 7, 12}},
        {{ 9, 11}, { 9, 14}, { 8,  9}, { 8, 12}},
        {{ 9,  8}, { 9, 10}, { 9, 13}, { 8,  8}},
        {{10, 13}, { 9,  7}, { 9,  9}, { 9, 12}},
        {{10,  9}, {10, 12}, {10, 11}, {10, 10}},
        {{10,  5}, {10,  8}, {10,  7}, {10,  6}},
        {{10,  1}, {10,  4}, {10,  3}, {10,  2}},
    },
    { /* nC = -1: chroma DC, TotalCoeff at most 4 */
        {{ 2,  1}, { 0,  0}, { 0,  0}, { 0,  0}},
        {{ 6,  7}, { 1,  1}, { 0,  0}, { 0,  0}},
        {{ 6,  4}, { 6,  6}, { 3,  1}, { 0,  0}},
        {{ 6,  3}, { 7,  3}, { 7,  2}, { 6,  5}},
        {{ 6,  2}, { 8,  3}, { 8,  2}, { 7,  0}},
    },
};

/* Tables 9-7 and 9-8: total_zeros for tzVlcIndex (TotalCoeff) 1..15,
 * {length, code} for total_zeros 0..16-tzVlcIndex. */
static const h264_vlc total_zeros_4x4[15][16] = {
    {{1, 1}, {3, 3}, {3, 2}, {4, 3}, {4, 2}, {5, 3}, {5, 2}, {6, 3}, {6, 2}, {7, 3}, {7, 2},
     {8, 3}, {8, 2}, {9, 3}, {9, 2}, {9, 1}},
    {{3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {4, 5}, {4, 4}, {4, 3}, {4, 2}, {5, 3}, {5, 2},
     {6, 3}, {6, 2}, {6, 1}, {6, 0}},
    {{4, 5}, {3, 7}, {3, 6}, {3, 5}, {4, 4}, {4, 3}, {3, 4}, {3, 3}, {4, 2}, {5, 3}, {5, 2},
     {6, 1}, {5, 1}, {6, 0}},
    {{5, 3}, {3, 7}, {4, 5}, {4, 4}, {3, 6}, {3, 5}, {3, 4}, {4, 3}, {3, 3}, {4, 2}, {5, 2},
     {5, 1}, {5, 0}},
    {{4, 5}, {4, 4}, {4, 3}, {3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {4, 2}, {5, 1}, {4, 1},
     {5, 0}},
    {{6, 1}, {5, 1}, {3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {3, 2}, {4, 1}, {3, 1}, {6, 0}},
    {{6, 1}, {5, 1}, {3, 5}, {3, 4}, {3, 3}, {2, 3}, {3, 2}, {4, 1}, {3, 1}, {6, 0}},
    {{6, 1}, {4, 1}, {5, 1}, {3, 3}, {2, 3}, {2, 2}, {3, 2}, {3, 1}, {6, 0}},
    {{6, 1}, {6, 0}, {4, 1}, {2, 3}, {2, 2}, {3, 1}, {2, 1}, {5, 1}},
    {{5, 1}, {5, 0}, {3, 1}, {2, 3}, {2, 2}, {2, 1}, {4, 1}},
    {{4, 0}, {4, 1}, {3, 1}, {3, 2}, {1, 1}, {3, 3}},
    {{4, 0}, {4, 1}, {2, 1}, {1, 1}, {3, 1}},
    {{3, 0}, {3, 1}, {1, 1}, {2, 1}},
    {{2, 0}, {2, 1}, {1, 1}},
    {{1, 0}, {1, 1}},
};

/* Table 9-9a: total_zeros of a 2x2 chroma DC block, tzVlcIndex 1..3. */
static const h264_vlc total_zeros_dc[3][4] = {
    {{1, 1}, {2, 1}, {3, 1}, {3, 0}},
    {{1, 1}, {2, 1}, {2, 0}},
    {{1, 1}, {1, 0}},
};

/* Table 9-10: run_before for zerosLeft 1..6 and > 6. */
static const h264_vlc run_before_table[7][15] = {
    {{1, 1}, {1, 0}},
    {{1, 1}, {2, 1}, {2, 0}},
    {{2, 3}, {2, 2}, {2, 1}, {2, 0}},
    {{2, 3}, {2, 2}, {2, 1}, {3, 1}, {3, 0}},
    {{2, 3}, {2, 2}, {3, 3}, {3, 2}, {3, 1}, {3, 0}},
    {{2, 3}, {3, 0}, {3, 1}, {3, 3}, {3, 2}, {3, 5}, {3, 4}},
    {{3, 7}, {3, 6}, {3, 5}, {3, 4}, {3, 3}, {3, 2}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1},
     {8, 1}, {9, 1}, {10, 1}, {11, 1}},
};

h264_vlc h264_coeff_token(int nc, int total_coeff, int trailing_ones)
{
    h264_vlc v = {0, 0};

    if (total_coeff < 0 || total_coeff > 16 || trailing_ones < 0 || trailing_ones > 3 ||
        trailing_ones > total_coeff)
        return v;
    if (nc >= 8) {
        /* xxxxyy: TotalCoeff-1 and TrailingOnes; 000011 for no coefficient */
        v.length = 6;
        v.code = (uint8_t)(total_coeff == 0 ? 3 : ((total_coeff - 1) << 2) | trailing_ones);
        return v;
    }
    if (nc == -1)
        return total_coeff <= 4 ? coeff_token_table[3][total_coeff][trailing_ones] : v;
    return coeff_token_table[nc < 2 ? 0 : nc < 4 ? 1 : 2][total_coeff][trailing_ones];
}

h264_vlc h264_total_zeros(int max_coeff, int total_coeff, int total_zeros)
{
    h264_vlc none = {0, 0};

    if (max_coeff == 4)
        return total_coeff >= 1 && total_coeff <= 3 && total_zeros >= 0 &&
                       total_zeros <= 4 - total_coeff
                   ? total_zeros_dc[total_coeff - 1][total_zeros]
                   : none;
    return total_coeff >= 1 && total_coeff <= 15 && total_zeros >= 0 &&
                   total_zeros <= 16 - total_coeff
               ? total_zeros_4x4[total_coeff - 1][total_zeros]
               : none;
}

h264_vlc h264_run_before(int zeros_left, int run_before)
{
    h264_vlc none = {0, 0};

    if (zeros_left < 1 || run_before < 0 || run_before > zeros_left || run_before > 14)
        return none;
    return run_before_table[zeros_left > 6 ? 6 : zeros_left - 1][run_before];
}

int h264_cavlc_nc(int left, int top)
{
    if (left >= 0 && top >= 0)
        return (left + top + 1) >> 1;
    if (left >= 0)
        return left;
    if (top >= 0)
        return top;
    return 0;
}

static void put_vlc(h264_bits *b, h264_vlc v)
{
    h264_put(b, v.length, v.code);
}

/* level_prefix zeros and a one, then level_suffix (clause 9.2.2.1). */
static void put_level(h264_bits *b, int level_code, int suffix_length)
{
    if (suffix_length == 0) {
        if (level_code < 14) {
            h264_put(b, level_code + 1, 1);
        } else if (level_code < 30) {
            h264_put(b, 15, 1);
            h264_put(b, 4, (uint32_t)(level_code - 14));
        } else {
            h264_put(b, 16, 1);
            h264_put(b, 12, (uint32_t)(level_code - 30));
        }
    } else if (level_code < (15 << suffix_length)) {
        h264_put(b, (level_code >> suffix_length) + 1, 1);
        h264_put(b, suffix_length, (uint32_t)(level_code & ((1 << suffix_length) - 1)));
    } else {
        h264_put(b, 16, 1);
        h264_put(b, 12, (uint32_t)(level_code - (15 << suffix_length)));
    }
}

int h264_cavlc_block(h264_bits *b, const int16_t *coef, int count, int nc)
{
    int level[16], run[16]; /* from the highest frequency down */
    int total = 0, trailing = 0, total_zeros = 0, suffix_length, i, last = -1, zeros_left;

    for (i = count - 1; i >= 0; --i)
        if (coef[i] != 0) {
            last = i;
            break;
        }
    for (i = last; i >= 0; --i) {
        if (coef[i] != 0) {
            level[total] = coef[i];
            run[total] = 0;
            ++total;
        } else {
            ++run[total - 1];
            ++total_zeros;
        }
    }
    while (trailing < total && trailing < 3 && (level[trailing] == 1 || level[trailing] == -1))
        ++trailing;

    put_vlc(b, h264_coeff_token(nc, total, trailing));
    if (total == 0)
        return 0;
    for (i = 0; i < trailing; ++i)
        h264_put(b, 1, level[i] < 0);

    suffix_length = total > 10 && trailing < 3 ? 1 : 0;
    for (i = trailing; i < total; ++i) {
        int v = level[i];
        int code = v > 0 ? 2 * v - 2 : -2 * v - 1;
        if (i == trailing && trailing < 3)
            code -= 2; /* this level cannot be +-1 */
        put_level(b, code, suffix_length);
        if (suffix_length == 0)
            suffix_length = 1;
        if ((v < 0 ? -v : v) > (3 << (suffix_length - 1)) && suffix_length < 6)
            ++suffix_length;
    }

    if (total < count)
        put_vlc(b, h264_total_zeros(count, total, total_zeros));
    zeros_left = total_zeros;
    for (i = 0; i < total - 1 && zeros_left > 0; ++i) {
        put_vlc(b, h264_run_before(zeros_left, run[i]));
        zeros_left -= run[i];
    }
    return total;
}
