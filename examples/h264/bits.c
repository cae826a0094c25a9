/* SPDX-License-Identifier: MIT */
/* The H.264 encoder's bit writer: fixed-length fields, exp-Golomb codes, NAL units. */
#include "bits.h"

void h264_bits_init(h264_bits *b, uint8_t *buf, size_t cap)
{
    b->buf = buf;
    b->cap = cap;
    b->bytes = 0;
    b->acc = 0;
    b->pending = 0;
    b->overflow = 0;
}

void h264_put(h264_bits *b, int n, uint32_t value)
{
    if (n <= 0)
        return;
    b->acc = (b->acc << n) | (value & (uint32_t)((1ull << n) - 1));
    b->pending += n;
    while (b->pending >= 8) {
        b->pending -= 8;
        if (b->bytes < b->cap)
            b->buf[b->bytes++] = (uint8_t)(b->acc >> b->pending);
        else
            b->overflow = 1;
    }
    b->acc &= (1ull << b->pending) - 1;
}

/* codeNum v is M zeros, a one and the M low bits of v+1, where
 * M = floor(log2(v+1)): that is the 2M+1 bits of v+1. */
static int ue_zeros(uint32_t value)
{
    uint64_t v = (uint64_t)value + 1;
    int m = 0;
    while (v >> (m + 1))
        ++m;
    return m;
}

void h264_put_ue(h264_bits *b, uint32_t value)
{
    int m = ue_zeros(value);
    h264_put(b, m, 0);
    h264_put(b, m + 1, (uint32_t)((uint64_t)value + 1));
}

/* se(v): k > 0 is codeNum 2k-1, k <= 0 is -2k (table 9-3). */
static uint32_t se_code(int32_t value)
{
    return value > 0 ? 2u * (uint32_t)value - 1 : 2u * (uint32_t)(-(int64_t)value);
}

void h264_put_se(h264_bits *b, int32_t value)
{
    h264_put_ue(b, se_code(value));
}

int h264_ue_size(uint32_t value)
{
    return 2 * ue_zeros(value) + 1;
}

int h264_se_size(int32_t value)
{
    return h264_ue_size(se_code(value));
}

void h264_put_trailing(h264_bits *b)
{
    h264_put(b, 1, 1);
    if (b->pending > 0)
        h264_put(b, 8 - b->pending, 0);
}

size_t h264_bits_count(const h264_bits *b)
{
    return 8 * b->bytes + (size_t)b->pending;
}

size_t h264_nal(uint8_t *out, size_t cap, int ref_idc, int type, const uint8_t *rbsp,
                size_t len)
{
    size_t n = 0, i;
    int zeros = 0;

    if (cap < H264_NAL_MAX(len))
        return 0;
    out[n++] = 0;
    out[n++] = 0;
    out[n++] = 0;
    out[n++] = 1;
    out[n++] = (uint8_t)((ref_idc << 5) | type);
    for (i = 0; i < len; ++i) {
        if (zeros == 2 && rbsp[i] <= 3) {
            out[n++] = 3;
            zeros = 0;
        }
        out[n++] = rbsp[i];
        zeros = rbsp[i] == 0 ? zeros + 1 : 0;
    }
    return n;
}
