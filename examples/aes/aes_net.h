/* SPDX-License-Identifier: MIT */
/* The AES example's network: a source scatters a buffer to n workers that encrypt it with AES-128-CTR. */
#ifndef KPN_AES_NET_H
#define KPN_AES_NET_H

#include <stddef.h>
#include <stdint.h>
#include <mbedtls/aes.h>
#include "kpn.h"

/*
 *                 ┌──job──► worker 0 ──reply──┐
 *                 ├──job──► worker 1 ──reply──┤
 *        source ──┤          ...              ├──► source
 *                 └──job──► worker n-1 ─reply─┘
 *
 * The buffer holds 2^b bytes, cut into n = 2^(b-k) chunks of 2^k.  The
 * source sends worker i one job, the pointer-length pair of chunk i, and
 * closes its job channel; the worker encrypts the chunk in place
 * 'passes' times and sends the same pair back; the source gathers the n
 * replies in order.  Every channel carries one message, so none ever
 * fills and the source blocks only on replies still to come.
 *
 * Encryption is AES-128 in CTR mode (NIST SP 800-38A), which makes the
 * chunks independent: byte j of the buffer is XORed with the key stream
 * block E(counter + j/16) of the pass, whoever encrypts it.  So chunk i
 * starts its counter at block i * 2^k / 16, and the parallel result is
 * exactly one sequential CTR encryption of the whole buffer per pass,
 * which 'aes_sequential' computes to check it.
 *
 * Counters are 128-bit big-endian integers, incremented mod 2^128 as
 * mbedTLS does.  Pass p starts at base + p * 2^64: a buffer of at most
 * 2^64 blocks never reaches the next pass's range, so no two passes
 * share a key stream block.
 */

/* AES's block: the unit of the counter. */
#define AES_NET_BLOCK 16u

/* Stack bytes for the source and each worker (see aes_net.c for how it
 * was measured). */
#define AES_NET_STACK 4096u

/* Limits the builder accepts: chunks are whole blocks, the buffer fits
 * any size_t, and the worker count stays something an arena can hold. */
#define AES_NET_MIN_K 4u
#define AES_NET_MAX_B 40u
#define AES_NET_MAX_SPLIT 20u /* b - k: at most 2^20 workers */

/* ------------------------------------------------------------------ */
/* CTR with a counter offset                                            */

/* 'out' = 'iv' + 'blocks' (mod 2^128).  'out' may be 'iv'. */
void aes_ctr_counter(const unsigned char iv[16], uint64_t blocks, unsigned char out[16]);

/* Pass 'pass''s initial counter: 'base' + pass * 2^64 (mod 2^128). */
void aes_pass_iv(const unsigned char base[16], unsigned pass, unsigned char out[16]);

/* CTR-encrypts (or decrypts: the same thing) 'len' bytes at 'buf' in
 * place, as the part of a longer CTR stream that starts 'block' blocks
 * after the initial counter 'iv'.  'aes' holds an encryption key
 * (mbedtls_aes_setkey_enc) and is only read.  Returns mbedTLS's status,
 * 0 on success. */
int aes_ctr_at(mbedtls_aes_context *aes, const unsigned char iv[16], uint64_t block,
               unsigned char *buf, size_t len);

/* The reference: 'passes' CTR encryptions of the whole of 'buf', pass p
 * from counter aes_pass_iv(base, p).  Plain calls, no kpn.  Returns
 * mbedTLS's status, 0 on success. */
int aes_sequential(mbedtls_aes_context *aes, const unsigned char base[16], unsigned passes,
                   unsigned char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* The network                                                          */

/* A job and its reply: a pointer-length pair, 16 bytes on LP64. */
typedef struct aes_msg {
    unsigned char *data;
    size_t len;
} aes_msg;

typedef struct aes_params {
    unsigned b;        /* the buffer is 2^b bytes */
    unsigned k;        /* each chunk is 2^k bytes: n = 2^(b-k) workers */
    unsigned passes;   /* encryptions of every chunk, 1 or more */
    unsigned runners;  /* kpn_config.runners */
    kpn_policy policy; /* kpn_config.policy; static pins worker i on runner i mod runners */
    size_t stack;      /* stack bytes of every process; 0: AES_NET_STACK */
    unsigned cpus;     /* kpn_config.cpus; 0: the port's count */
    int no_fill;       /* 1: kpn_config.stack_fill 0, stacks left unfilled
                          (no stack peaks: aes_net_stack_peaks gives 0) */
} aes_params;

struct aes_net;

/* What a worker is given and what it records.  The builder fills it;
 * the host reads it after kpn_run. */
typedef struct aes_worker {
    struct aes_net *an;
    kpn_proc *proc;
    kpn_chan *job;     /* source -> worker */
    kpn_chan *reply;   /* worker -> source */
    unsigned jobs;     /* chunks encrypted */
    int failed;        /* a bad job, a kpn or mbedTLS error: 0 if none */
} aes_worker;

typedef struct aes_net {
    kpn_net *net;
    kpn_proc *source;
    mbedtls_aes_context *aes;
    unsigned char iv[16];   /* the base counter */
    unsigned char *buf;
    size_t len;             /* 2^b */
    size_t chunk;           /* 2^k */
    size_t n;               /* workers */
    aes_params params;
    aes_worker *workers;
    /* what the source saw */
    size_t gathered;        /* replies that named the chunk sent */
    int source_failed;      /* a kpn call failed or a reply was wrong */
} aes_net;

/* Arena bytes aes_net_build needs for 'p' (kpn_size_net with the
 * runners and policy, plus every process and channel); 0 if 'p' is
 * out of range (b > AES_NET_MAX_B, k < AES_NET_MIN_K, k > b,
 * b - k > AES_NET_MAX_SPLIT, passes 0, runners 0 or above
 * KPN_MAX_RUNNERS, stack below KPN_STACK_MIN) or the sum overflows. */
size_t aes_net_arena_size(const aes_params *p);

/* Workers a net of 'p' has: 2^(b-k). */
size_t aes_net_workers(const aes_params *p);

/* Builds the network in 'arena' (which kpn_net_init takes over) to
 * encrypt the 2^b bytes at 'buf' with 'aes' (an encryption key) from
 * base counter 'iv'; 'workers' has room for aes_net_workers(p) entries.
 * Ready for kpn_run(an->net).  Host thread.
 * KPN_EINVAL: a NULL argument, 'p' out of range, too few 'workers'.
 * Otherwise what kpn_net_init, kpn_spawn, kpn_connect or kpn_proc_pin
 * returned (KPN_ENOMEM: the arena is smaller than aes_net_arena_size). */
kpn_status aes_net_build(aes_net *an, void *arena, size_t arena_size, const aes_params *p,
                         mbedtls_aes_context *aes, const unsigned char iv[16], unsigned char *buf,
                         aes_worker *workers, size_t nworkers);

/* After kpn_run returned KPN_OK: 1 if every worker encrypted exactly its
 * one chunk without error and the source gathered every reply, else 0.
 * (Whether the bytes are right is for the caller to compare with
 * aes_sequential.) */
int aes_net_done(const aes_net *an);

/* The largest stack high-water mark among the workers and the source's. */
void aes_net_stack_peaks(const aes_net *an, size_t *worker_peak, size_t *source_peak);

#endif /* KPN_AES_NET_H */
