/* SPDX-License-Identifier: MIT */
/* The H.264 encoder as a Kahn process network, and the same encoder as a plain loop. */
#ifndef H264_NET_H
#define H264_NET_H

#include <stddef.h>
#include <stdint.h>
#include "kpn.h"
#include "stages.h"

#define H264_MAX_WORKERS 64
#define H264_STACK (64u << 10) /* each process's stack */

/* What goes in and comes out of an encoding. */
typedef struct h264_job {
    h264_setup setup;
    const uint8_t *const *frames; /* setup.frames pictures, each I420: Y, then U, then V */
    uint8_t *stream;              /* the Annex-B stream is written here */
    size_t stream_cap;
    uint8_t *recon;               /* NULL, or room for every reconstructed picture, I420 */
    int workers;                  /* processes in each parallel stage, 1..H264_MAX_WORKERS */
} h264_job;

typedef struct h264_result {
    size_t bytes;       /* of the stream */
    uint64_t bits;
    uint64_t checksum;  /* h264_checksum of the stream */
    long intra_mbs, skip_mbs;
    long errors;        /* failed kpn calls or rows out of order; 0 in a good run */
    int overflow;       /* the stream did not fit */
} h264_result;

/* The network's state, placed in the caller's workspace. */
typedef struct h264_net h264_net;

/* Bytes of workspace h264_build needs for 'job' and of kpn arena with
 * 'cfg' (NULL: defaults).  0 if the job is malformed. */
size_t h264_work_size(const h264_job *job);
size_t h264_arena_size(const h264_job *job, const kpn_config *cfg);

/* Spawns and connects the encoder into 'net', a fresh net, with its state
 * in 'work'.  Host thread.  After kpn_run, h264_collect gives the result.
 * KPN_EINVAL: a NULL argument or a malformed job; KPN_ENOMEM: 'work' too
 * small; otherwise the status of the kpn call that failed. */
kpn_status h264_build(kpn_net *net, const h264_job *job, void *work, size_t work_size,
                      h264_net **hn);
void h264_collect(const h264_net *hn, h264_result *res);

/* The same blocks called one after the other, row by row, without kpn:
 * the stream every network must reproduce.  'job->workers' is ignored.
 * KPN_EINVAL / KPN_ENOMEM as h264_build. */
size_t h264_sequential_work_size(const h264_job *job);
kpn_status h264_encode_sequential(const h264_job *job, void *work, size_t work_size,
                                  h264_result *res);

#endif /* H264_NET_H */
