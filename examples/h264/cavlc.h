/* SPDX-License-Identifier: MIT */
/* CAVLC: the residual block syntax of H.264's baseline entropy coder (clause 9.2). */
#ifndef H264_CAVLC_H
#define H264_CAVLC_H

#include <stdint.h>
#include "bits.h"

/* One variable-length code: 'length' bits holding 'code'. */
typedef struct h264_vlc {
    uint8_t length;
    uint8_t code;
} h264_vlc;

/* coeff_token (table 9-5) for TotalCoeff 0..16 and TrailingOnes 0..3,
 * given nC: 0 <= nC < 2, 2 <= nC < 4, 4 <= nC < 8, 8 <= nC (a 6-bit
 * code), or -1 (chroma DC).  A length of 0 marks a pair that cannot
 * occur. */
h264_vlc h264_coeff_token(int nc, int total_coeff, int trailing_ones);

/* total_zeros (tables 9-7, 9-8 and 9-9a): 'max_coeff' 4 is the chroma DC
 * table, anything else the 4x4 one. */
h264_vlc h264_total_zeros(int max_coeff, int total_coeff, int total_zeros);

/* run_before (table 9-10) with 'zeros_left' zeros still to place. */
h264_vlc h264_run_before(int zeros_left, int run_before);

/* Writes residual_block_cavlc() for 'count' coefficients in scanning order
 * (16 for a 4x4 block, 15 for an AC block, 4 for chroma DC) whose
 * neighbours give 'nc' (-1 for chroma DC).  Returns TotalCoeff, which the
 * neighbours' nC needs.  Levels must lie in -2063..2063 (level_prefix
 * at most 15, as the baseline profile requires). */
int h264_cavlc_block(h264_bits *b, const int16_t *coef, int count, int nc);

/* nC from the neighbours' TotalCoeff (clause 9.2.1): the rounded mean when
 * both are available, the one that is, or 0.  -1 marks unavailable. */
int h264_cavlc_nc(int left, int top);

#endif /* H264_CAVLC_H */
