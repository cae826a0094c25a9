/* SPDX-License-Identifier: MIT */
/* The H.264 encoder's bit writer: fixed-length fields, exp-Golomb codes, NAL units. */
#ifndef H264_BITS_H
#define H264_BITS_H

#include <stddef.h>
#include <stdint.h>

/* Bits are written most significant first into 'buf', as the standard's
 * u(n), ue(v) and se(v) descriptors lay them out (clause 7.2).  A writer
 * that runs out of room stops writing and sets 'overflow'. */
typedef struct h264_bits {
    uint8_t *buf;
    size_t cap;       /* bytes in 'buf' */
    size_t bytes;     /* whole bytes written */
    uint64_t acc;     /* bits not yet stored, in the low 'pending' bits */
    int pending;      /* 0..7 once a call returns */
    int overflow;
} h264_bits;

void h264_bits_init(h264_bits *b, uint8_t *buf, size_t cap);

/* u(n): the low 'n' bits of 'value', 0 <= n <= 32. */
void h264_put(h264_bits *b, int n, uint32_t value);

/* ue(v) and se(v): exp-Golomb codes (clause 9.1). */
void h264_put_ue(h264_bits *b, uint32_t value);
void h264_put_se(h264_bits *b, int32_t value);

/* Bits in the ue(v) / se(v) code of 'value'. */
int h264_ue_size(uint32_t value);
int h264_se_size(int32_t value);

/* rbsp_trailing_bits(): a one and zeros up to the byte boundary. */
void h264_put_trailing(h264_bits *b);

/* Bits written so far. */
size_t h264_bits_count(const h264_bits *b);

/* Writes one NAL unit into 'out' (at most 'cap' bytes): a 4-byte start
 * code, the header byte (nal_ref_idc, nal_unit_type), then 'rbsp' with an
 * emulation_prevention_three_byte after every two zero bytes that a byte
 * 0..3 follows (clause 7.4.1).  Returns the bytes written, 0 if 'cap' is
 * too small. */
size_t h264_nal(uint8_t *out, size_t cap, int ref_idc, int type, const uint8_t *rbsp,
                size_t len);

/* The most bytes h264_nal writes for an RBSP of 'len' bytes. */
#define H264_NAL_MAX(len) (5 + (len) + (len) / 2 + 1)

#endif /* H264_BITS_H */
