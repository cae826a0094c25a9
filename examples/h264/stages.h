/* SPDX-License-Identifier: MIT */
/* The encoder's blocks as functions of one macroblock row, and the rows they pass on. */
#ifndef H264_STAGES_H
#define H264_STAGES_H

#include <stddef.h>
#include <stdint.h>
#include "bits.h"

/*
 * Every block of the encoder diagram is a function here that turns one
 * macroblock row (16 picture lines) into another.  h264_net.c runs each
 * as a process; h264_encode_sequential calls them in turn.  Both give the
 * same stream because they run the same functions on the same rows.
 *
 * The rows are plain structs sized for the widest picture; a channel
 * carries only the first h264_row_size() bytes, which cover the picture's
 * width (the per-macroblock array is always last).
 */

#define H264_MAX_MB_W 120 /* 1920 pixels */
#define H264_MAX_MB_H 68  /* 1088 pixels */
#define H264_SEARCH 16    /* full-pel motion search range, each way */

typedef struct h264_setup {
    int width, height; /* the picture; even, padded to whole macroblocks when coded */
    int mb_w, mb_h;
    int qp;            /* 0..51, for every macroblock */
    int frames;
    int lambda;        /* SAD units one bit is worth in the mode decisions */
} h264_setup;

/* Fills 's'; returns 0, or -1 if the size is odd, empty or too large or
 * the QP is out of range. */
int h264_setup_init(h264_setup *s, int width, int height, int qp, int frames);

/* Every row starts with this. */
typedef struct h264_head {
    int32_t frame, row;
    int32_t idr; /* 1 for the first frame: intra only, no reference */
    int32_t pad;
} h264_head;

/* CIP's decision for one macroblock. */
typedef struct h264_mode {
    uint8_t intra;       /* 1: Intra16x16; 0: P_L0_16x16 or P_Skip */
    uint8_t luma_mode;   /* H264_I16_* */
    uint8_t chroma_mode; /* H264_CHROMA_*, Intra16x16 only */
    uint8_t skip_ok;     /* the vector is the P_Skip one: without residual it is skipped */
    int16_t mv[2];       /* quarter pixels; multiples of 4 (full-pel search) */
    int16_t mvp[2];      /* its predictor (clause 8.4.1.3): mvd = mv - mvp */
} h264_mode;

typedef struct h264_mb_pixels {
    uint8_t y[256], u[64], v[64]; /* raster order */
} h264_mb_pixels;

/* Source, prediction or reconstruction of a row. */
typedef struct h264_pixel_row {
    h264_head head;
    h264_mode mode[H264_MAX_MB_W];
    h264_mb_pixels mb[H264_MAX_MB_W];
} h264_pixel_row;

/* One macroblock as residual, transform coefficients, levels, rescaled
 * coefficients or decoded residual, as it moves from +/- to +. */
typedef struct h264_mb_levels {
    int16_t luma[16][16];     /* [4x4 block, raster in the macroblock][raster position] */
    int16_t chroma[2][4][16]; /* [Cb, Cr][4x4 block, raster][raster position] */
    int16_t luma_dc[16];      /* Intra16x16: DC levels, raster order of the blocks */
    int16_t chroma_dc[2][4];
    int32_t cbp;              /* coded_block_pattern: luma 8x8 bits, chroma << 4 */
} h264_mb_levels;

typedef struct h264_level_row {
    h264_head head;
    h264_mode mode[H264_MAX_MB_W];
    h264_mb_levels mb[H264_MAX_MB_W];
} h264_level_row;

/* Per macroblock: ME's best vector, IP's best intra modes. */
typedef struct h264_mb_analysis {
    int16_t mv[2];
    int32_t sad;
    uint8_t luma_mode, chroma_mode, pad[2];
} h264_mb_analysis;

typedef struct h264_analysis_row {
    h264_head head;
    h264_mb_analysis mb[H264_MAX_MB_W];
} h264_analysis_row;

/* CIP's decisions for a row. */
typedef struct h264_mode_row {
    h264_head head;
    h264_mode mode[H264_MAX_MB_W];
} h264_mode_row;

/* The part of the reference frame a row's motion search and compensation
 * may reach: luma lines -16..32 and chroma lines -8..16 around the row,
 * with the picture's edge pixels repeated outwards as a decoder reads
 * them (clause 8.4.2.2). */
#define H264_WIN_LUMA_PAD 32
#define H264_WIN_LUMA_TOP 16
#define H264_WIN_LUMA_LINES 49
#define H264_WIN_CHROMA_PAD 16
#define H264_WIN_CHROMA_TOP 8
#define H264_WIN_CHROMA_LINES 25
#define H264_WIN_LUMA_STRIDE(mb_w) (16 * (mb_w) + 2 * H264_WIN_LUMA_PAD)
#define H264_WIN_CHROMA_STRIDE(mb_w) (8 * (mb_w) + 2 * H264_WIN_CHROMA_PAD)
#define H264_WIN_BYTES(mb_w) \
    (H264_WIN_LUMA_LINES * H264_WIN_LUMA_STRIDE(mb_w) + \
     2 * H264_WIN_CHROMA_LINES * H264_WIN_CHROMA_STRIDE(mb_w))

typedef struct h264_window {
    h264_head head; /* idr: no reference; the pixels mean nothing */
    uint8_t pix[H264_WIN_BYTES(H264_MAX_MB_W)];
} h264_window;

/* What travels on a channel of each kind, for a picture 'mb_w' wide. */
typedef enum h264_row_kind {
    H264_ROW_PIXELS,
    H264_ROW_LEVELS,
    H264_ROW_ANALYSIS,
    H264_ROW_MODES,
    H264_ROW_WINDOW
} h264_row_kind;
size_t h264_row_size(h264_row_kind kind, int mb_w);

/* The bottom line of a row (luma) and of its chroma, which the next row's
 * intra prediction reads. */
typedef struct h264_row_edge {
    uint8_t y[16 * H264_MAX_MB_W], u[8 * H264_MAX_MB_W], v[8 * H264_MAX_MB_W];
} h264_row_edge;

/* ------------------------------------------------------------------ */
/* The blocks                                                           */

/* Fn: row 'row' of a frame given as three planes (I420, 'width' and
 * 'width'/2 bytes per line), edges repeated out to whole macroblocks. */
void h264_source(const h264_setup *s, const uint8_t *const planes[3], int frame, int row,
                 h264_pixel_row *out);

/* IP: per macroblock the best Intra16x16 and chroma modes by SAD, from the
 * source's own neighbours ('above': the previous row's bottom edge, which
 * this updates). */
void h264_intra_analysis(const h264_setup *s, h264_row_edge *above, const h264_pixel_row *src,
                         h264_analysis_row *out);

/* ME: per macroblock the full-pel vector within +-H264_SEARCH with the
 * least SAD + lambda * vector bits, from the left neighbour's vector and
 * zero, by small diamond steps and a last square of eight. */
void h264_motion_search(const h264_setup *s, const h264_pixel_row *src, const h264_window *ref,
                        h264_analysis_row *out);

/* CIP: chooses per macroblock intra or inter and the vector, in raster
 * order, because each vector's predictor depends on the neighbours'
 * choices.  'above' holds the previous row's choices. */
typedef struct h264_choice {
    h264_mode above[H264_MAX_MB_W];
} h264_choice;
void h264_choose(const h264_setup *s, h264_choice *state, const h264_pixel_row *src,
                 const h264_window *ref, const h264_analysis_row *me,
                 const h264_analysis_row *ip, h264_mode_row *out);

/* MC: the inter prediction of every inter macroblock (intra ones are
 * predicted in +, from the reconstruction). */
void h264_compensate(const h264_setup *s, const h264_mode_row *modes, const h264_window *ref,
                     h264_pixel_row *pred);

/* +/-: source minus prediction for inter macroblocks; intra ones zero. */
void h264_subtract(const h264_setup *s, const h264_pixel_row *src, const h264_pixel_row *pred,
                   h264_level_row *out);

/* T, Q, Qi, Ti on the inter macroblocks of a row ('in' may be 'out'). */
void h264_transform(const h264_setup *s, const h264_level_row *in, h264_level_row *out);
void h264_quantise(const h264_setup *s, const h264_level_row *in, h264_level_row *out);
void h264_rescale(const h264_setup *s, const h264_level_row *in, h264_level_row *out);
void h264_inverse(const h264_setup *s, const h264_level_row *in, h264_level_row *out);

/* +: the reconstruction.  Inter macroblocks: prediction + decoded
 * residual.  Intra ones go the whole way here, because their prediction
 * reads the reconstructed neighbours: predict, subtract, T, Q (their levels
 * go to 'intra'), Qi, Ti, add.  'above' is the previous reconstructed
 * row's bottom edge, which this updates. */
void h264_reconstruct(const h264_setup *s, h264_row_edge *above, const h264_pixel_row *src,
                      const h264_pixel_row *pred, const h264_level_row *residual,
                      h264_pixel_row *recon, h264_level_row *intra);

/* F(n-1): two frame stores taking turns (frame n's reconstruction goes to
 * store n % 2; frame n+1's windows read it). */
typedef struct h264_reference {
    uint8_t *plane[2][3]; /* [store][Y, U, V] at the coded size */
} h264_reference;
size_t h264_reference_size(const h264_setup *s);
void h264_reference_init(h264_reference *r, const h264_setup *s, void *memory);
void h264_reference_store(const h264_setup *s, h264_reference *r, const h264_pixel_row *recon);
/* The window of row 'row' of frame 'frame' (frame 0: an empty one). */
void h264_reference_window(const h264_setup *s, const h264_reference *r, int frame, int row,
                           h264_window *out);

/* R: the levels of intra macroblocks from +, of the others from Q, each
 * 4x4 block in zig-zag scanning order. */
void h264_reorder(const h264_setup *s, const h264_level_row *inter, const h264_level_row *intra,
                  h264_level_row *out);

/* EC: CAVLC.  Writes SPS and PPS before the first frame, one slice per
 * frame (IDR for frame 0, P after), into 'out' as an Annex-B stream. */
typedef struct h264_entropy {
    uint8_t *out;
    size_t cap, size;    /* bytes of 'out', bytes written */
    int overflow;        /* 'out' or the slice buffer ran out */
    uint64_t bits;       /* bits of the stream so far (bytes * 8) */
    h264_bits slice;     /* the slice being written, as RBSP */
    uint8_t *slice_buf;
    size_t slice_cap;
    int skip_run;
    uint8_t nz_above[H264_MAX_MB_W][24]; /* TotalCoeff per 4x4 block, row above */
    uint8_t nz[H264_MAX_MB_W][24];       /* and this row (16 luma, 4 Cb, 4 Cr) */
    long intra_mbs, skip_mbs;            /* counts, for the report */
} h264_entropy;
size_t h264_slice_size(const h264_setup *s); /* bytes the slice buffer needs */
void h264_entropy_init(h264_entropy *e, const h264_setup *s, uint8_t *slice_buf, uint8_t *out,
                       size_t cap);
void h264_entropy_row(const h264_setup *s, h264_entropy *e, const h264_level_row *row);

/* ------------------------------------------------------------------ */
/* Per-macroblock steps, shared by the row blocks (and tested alone)   */

void h264_mb_transform(h264_mb_levels *m);
/* Levels from coefficients; 'intra' selects Intra16x16 (luma DC apart,
 * intra deadzone) or inter (16 luma coefficients per block, inter
 * deadzone, and blocks whose few small levels cost more than they give
 * dropped).  Sets m->cbp. */
void h264_mb_quantise(h264_mb_levels *m, int qp, int intra);
void h264_mb_rescale(h264_mb_levels *m, int qp, int intra);
void h264_mb_inverse(h264_mb_levels *m);

/* The stream's FNV-1a 64 checksum. */
uint64_t h264_checksum(const uint8_t *data, size_t len);

#endif /* H264_STAGES_H */
