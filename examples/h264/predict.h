/* SPDX-License-Identifier: MIT */
/* Prediction: Intra16x16 and intra chroma modes, motion compensation, motion search, SAD. */
#ifndef H264_PREDICT_H
#define H264_PREDICT_H

#include <stdint.h>

/* Intra16x16 modes (table 8-4) and intra chroma modes (table 8-5). */
enum { H264_I16_VERTICAL, H264_I16_HORIZONTAL, H264_I16_DC, H264_I16_PLANE };
enum { H264_CHROMA_DC, H264_CHROMA_HORIZONTAL, H264_CHROMA_VERTICAL, H264_CHROMA_PLANE };

/* What a block sees of its decoded neighbours: the line above, the column
 * to the left and the corner, each there only if that macroblock exists
 * (one slice per picture: every earlier macroblock is available). */
typedef struct h264_edge {
    uint8_t top[16], left[16], top_left;
    int has_top, has_left;
} h264_edge;

/* Whether an Intra16x16 or chroma mode may be used with these neighbours:
 * vertical needs the top, horizontal the left, plane both. */
int h264_luma_mode_usable(int mode, const h264_edge *e);
int h264_chroma_mode_usable(int mode, const h264_edge *e);

/* Clause 8.3.3: the 16x16 luma prediction, raster order. */
void h264_predict_luma16(uint8_t pred[256], int mode, const h264_edge *e);

/* Clause 8.3.4 for 4:2:0: an 8x8 chroma prediction from top[0..7] and
 * left[0..7]. */
void h264_predict_chroma8(uint8_t pred[64], int mode, const h264_edge *e);

/* Sum of absolute differences of a 'w' x 'h' block. */
int h264_sad(const uint8_t *a, int a_stride, const uint8_t *b, int b_stride, int w, int h);

/* The same for a 16x16 block 'a' stored in 16 bytes per line. */
int h264_sad16(const uint8_t *a, const uint8_t *b, int b_stride);

/* Motion compensation from a reference area whose pixel (0, 0) is at
 * 'ref' with 'stride' bytes per line, padded far enough for the vector.
 * 'mv' is in quarter luma pixels and a multiple of 4 (full-pel search):
 * luma is a copy; chroma, at 1/8 pixel, is interpolated bilinearly
 * (equation 8-266). */
void h264_mc_luma16(uint8_t pred[256], const uint8_t *ref, int stride, const int16_t mv[2]);
void h264_mc_chroma8(uint8_t pred[64], const uint8_t *ref, int stride, const int16_t mv[2]);

#endif /* H264_PREDICT_H */
