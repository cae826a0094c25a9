/* SPDX-License-Identifier: MIT */
/* H.264's integer transforms and flat-matrix quantisation (clause 8.5 and its forward twin). */
#ifndef H264_TRANSFORM_H
#define H264_TRANSFORM_H

#include <stdint.h>

/* A 4x4 block is 16 values in raster order: element (x, y) at x + 4*y. */

/* The forward core transform Y = C X C^T with C = [1 1 1 1; 2 1 -1 -2;
 * 1 -1 -1 1; 1 -2 2 -1], in place. */
void h264_forward4x4(int16_t block[16]);

/* The inverse transform of clause 8.5.12.2 including its (x + 32) >> 6,
 * in place: scaled coefficients in, residual out. */
void h264_inverse4x4(int16_t block[16]);

/* The 4x4 Hadamard transform H X H with H = [1 1 1 1; 1 1 -1 -1;
 * 1 -1 -1 1; 1 -1 1 -1], in place, unscaled: forward and inverse are the
 * same matrix. */
void h264_hadamard4x4(int32_t block[16]);

/* The 2x2 Hadamard transform [1 1; 1 -1] X [1 1; 1 -1], in place. */
void h264_hadamard2x2(int32_t block[4]);

/* Quantisation step parameters for QP 0..51 (qp / 6 and qp % 6). */
#define H264_QP_MAX 51

/* Chroma QP for a luma QP (table 8-15, chroma_qp_index_offset 0). */
int h264_chroma_qp(int qp);

/* Forward quantisation of one coefficient at raster position 'pos' of a
 * 4x4 block: sign(c) * ((|c| * MF + f) >> (15 + qp/6)) with the deadzone
 * f = 2^(15+qp/6) / 3 for intra and / 6 for inter blocks.  The level is
 * clamped to -2063..2063 (the largest CAVLC codes in baseline). */
int h264_quant(int32_t c, int pos, int qp, int intra);

/* The same for a DC coefficient after its unscaled Hadamard transform:
 * the luma DC of an Intra16x16 macroblock is (H W H) / 2 quantised with
 * one more bit of shift, so two more bits here; chroma DC one more bit. */
int h264_quant_luma_dc(int32_t c, int qp, int intra);
int h264_quant_chroma_dc(int32_t c, int qp, int intra);

/* h264_quant and h264_dequant on positions first..15 of a block, in place. */
void h264_quant4x4(int16_t block[16], int first, int qp, int intra);
void h264_dequant4x4(int16_t block[16], int first, int qp);

/* Scaling (clause 8.5.12.1, flat matrices): level * LevelScale4x4 with the
 * shifts of the standard, for an AC coefficient at raster position 'pos'. */
int32_t h264_dequant(int level, int pos, int qp);

/* Clause 8.5.10: the luma DC levels of an Intra16x16 macroblock (raster
 * order of the 4x4 blocks) to the scaled DC values dcY, in place. */
void h264_dequant_luma_dc(int32_t dc[16], int qp);

/* Clause 8.5.11: the 2x2 chroma DC levels to dcC, in place ('qp' is the
 * chroma QP). */
void h264_dequant_chroma_dc(int32_t dc[4], int qp);

/* The zig-zag scan of a 4x4 frame block: scan index to raster position. */
extern const uint8_t h264_zigzag[16];

#endif /* H264_TRANSFORM_H */
