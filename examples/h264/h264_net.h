/* SPDX-License-Identifier: MIT */
/* The H.264 encoder example's network: parameters in, the entropy coder's checksums out. */
#ifndef H264_NET_H
#define H264_NET_H

#include <stddef.h>
#include <stdint.h>
#include "kpn.h"

/*
 * The encoder block diagram of the H.264 white paper, as the papers model
 * it (thesis 5.2.1.3, figure 5.5): one process per block, extra processes
 * at the branch points, and ME, MC and P each spread over 'workers'
 * processes.  The pictures and macroblocks are real (a generated moving
 * test pattern, luma only) and every block does real, simple integer work
 * on them; the CPU time each block stands for in x264 is a calibrated busy
 * loop on top.  h264_net.c draws the network and explains the messages.
 *
 * Memory: the net's processes and channels live in the kpn arena (size it
 * with h264_arena_size); the processes' state and message buffers live in
 * a workspace the caller also owns (h264_work_size).  Nothing allocates.
 */

#define H264_MAX_MB_W 120      /* 1920 pixels */
#define H264_MAX_MB_H 68       /* 1088 pixels */
#define H264_MAX_WORKERS 512
#define H264_MAX_FRAMES 100000
#define H264_SEARCH 2          /* motion search range: +-2 pixels each way */
#define H264_QP 28             /* the one quantiser parameter */
#define H264_STACK (16u << 10) /* each process's stack */

/* The blocks that burn CPU, in the order of 'h264_profile'.  Forks,
 * splits and merges are the network's plumbing and burn nothing. */
typedef enum h264_stage {
    H264_FN,   /* the current frame Fn: makes the source picture */
    H264_REF,  /* the reference frame F(n-1): stores the reconstruction */
    H264_ME,   /* motion estimation (each worker) */
    H264_MC,   /* motion compensation (each worker) */
    H264_IP,   /* intra-prediction analysis */
    H264_CIP,  /* choose inter or intra */
    H264_P,    /* prediction (each worker) */
    H264_SUB,  /* +/-: the residual, current minus prediction */
    H264_T,    /* forward 4x4 integer transform */
    H264_Q,    /* quantisation */
    H264_R,    /* reorder (zig-zag) */
    H264_EC,   /* entropy coding */
    H264_QI,   /* rescaling (inverse quantisation) */
    H264_TI,   /* inverse transform */
    H264_ADD,  /* +: prediction plus decoded residual, the reconstruction */
    H264_STAGES
} h264_stage;

/* Share of a frame's CPU time each stage burns: table 2 of the papers
 * (x264 under cachegrind), spread over the blocks as h264_net.c says.
 * The entries add up to 1. */
extern const double h264_profile[H264_STAGES];
/* Short names for printing ("ME", "+/-", ...). */
extern const char *const h264_stage_name[H264_STAGES];

typedef struct h264_params {
    int mb_w, mb_h;   /* picture size in macroblocks: 1..H264_MAX_MB_W/H */
    int frames;       /* 1..H264_MAX_FRAMES */
    int workers;      /* w: processes in each of ME, MC and P, 1..H264_MAX_WORKERS */
    size_t capacity;  /* macroblock rows a channel between stages holds;
                         0: mb_h (a whole frame) */
    int mark_frame;   /* -1 normally; a frame number stamps a bright square
                         into that frame's source picture (tests use it to
                         see the feedback) */
    /* Busy-loop iterations each stage burns per macroblock row it handles
     * (a worker burns its stage's figure for each of its rows, so the sum
     * does not depend on 'workers').  Zero: no burn. */
    unsigned long long burn[H264_STAGES];
} h264_params;

/* Fill 'p' with a small default picture (22x18, CIF), 30 frames, 1
 * worker, whole-frame channels, no mark and no burn. */
void h264_params_default(h264_params *p);

/* What the entropy coder emitted. */
typedef struct h264_result {
    int frames;                 /* frames the coder finished */
    uint64_t checksum;          /* FNV-1a 64 over the whole bitstream */
    const uint64_t *frame_checksum; /* 'frames' entries: FNV-1a 64 over each
                                   frame's bytes; points into the workspace */
    uint64_t bits;              /* bits emitted */
    long intra_mbs;             /* macroblocks coded intra */
    long errors;                /* messages out of order or failed kpn calls
                                   seen by any process; 0 in a good run */
    double psnr;                /* luma PSNR of the reconstruction in dB
                                   (h264_reference only; 0 from the net) */
} h264_result;

/* The example's state, placed at the start of the workspace. */
typedef struct h264_net h264_net;

/* Bytes of workspace h264_build (and h264_reference) need for 'p'; 0 if
 * 'p' is NULL or out of range. */
size_t h264_work_size(const h264_params *p);

/* Bytes of arena a net of 'p' needs with 'cfg' (NULL: defaults): the net
 * itself, its reserve pool and runner stacks, every process and channel.
 * 0 if 'p' is NULL or out of range. */
size_t h264_arena_size(const h264_params *p, const kpn_config *cfg);

/* Spawn and connect the encoder into 'net', a fresh net nothing has been
 * spawned in, with its state in 'work' ('work_size' bytes, any alignment).
 * Host thread.  '*hn' is set on success.  After kpn_run, h264_collect
 * reads the result.
 * KPN_EINVAL: a NULL argument or 'p' out of range.
 * KPN_ENOMEM: the workspace or the arena is too small (the net then holds
 *             what was spawned so far: initialise it again).
 * Any other status from kpn_spawn, kpn_connect or kpn_proc_pin. */
kpn_status h264_build(kpn_net *net, const h264_params *p, void *work, size_t work_size,
                      h264_net **hn);

/* Gather the result of the net's run into 'res' (host thread, after
 * kpn_run returned). */
void h264_collect(const h264_net *hn, h264_result *res);

/* The same encoder as a plain sequential loop, without kpn: frame after
 * frame, row after row, every block in turn.  Burns nothing.  If
 * 'stage_seconds' is not NULL it receives the time each stage's real work
 * took over the whole run, in CPU seconds (h264_cpu_now).  KPN_EINVAL /
 * KPN_ENOMEM as h264_build. */
kpn_status h264_reference(const h264_params *p, void *work, size_t work_size,
                          h264_result *res, double stage_seconds[H264_STAGES]);

/* ------------------------------------------------------------------ */
/* The burn                                                             */

/* Spins 'n' iterations of a busy loop, always the same machine code. */
void h264_burn(unsigned long long n);

/* Iterations of h264_burn per microsecond of CPU time on this machine
 * (median of 7 trials of about 20 ms); '*trial' (may be NULL) gets the
 * trial length. */
double h264_calibrate(unsigned long long *trial);

/* Set p->burn so that a frame costs 1/fps_budget CPU-seconds in all,
 * split by 'h264_profile': each stage burns its share less the time its
 * real work takes ('real_seconds' per frame and stage, e.g. from
 * h264_reference divided by the frames; NULL: none), never below zero.
 * 'iterations_per_us' comes from h264_calibrate. */
void h264_plan(h264_params *p, double fps_budget, double iterations_per_us,
               const double real_seconds[H264_STAGES]);

/* A monotonic clock in seconds. */
double h264_now(void);

/* The calling thread's CPU time in seconds (the monotonic clock where the
 * system has no thread CPU clock). */
double h264_cpu_now(void);

#endif /* H264_NET_H */
