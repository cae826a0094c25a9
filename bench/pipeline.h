/* SPDX-License-Identifier: MIT */
/* The pipeline's message and the checksum its sink checks, shared by bench/pipeline and bench/coro_pipeline. */
#ifndef KPN_BENCH_PIPELINE_H
#define KPN_BENCH_PIPELINE_H

#include <stdint.h>

struct msg {
    uint32_t seq;   /* 0, 1, ... in send order */
    uint32_t hops;  /* stages passed */
    uint64_t check; /* seed(seq), then step(.., k) at stage k = 1..S */
};

static inline uint64_t seed(uint32_t seq)
{
    return ((uint64_t)seq + 1u) * UINT64_C(0x9e3779b97f4a7c15);
}

/* Stage k maps the checksum c to c * P + K(k) (mod 2^64), P odd and K(k)
 * distinct odd numbers.  Order matters: stages a then b give
 * c * P^2 + K(a) * P + K(b), and b then a give K(b) * P + K(a); a stage
 * skipped or repeated changes the power of P.  Being affine, the S stages
 * fold into one map the sink computes once (whole_pipeline), so checking
 * a message costs the sink O(1), not the O(S) of stepping through every
 * stage: a sink that did that was the heaviest process of a fine-grained
 * pipeline, a load no split between runners could balance. */
#define CHECK_P UINT64_C(0x100000001b3)

static inline uint64_t stage_constant(uint32_t stage)
{
    return (uint64_t)stage * UINT64_C(0xbf58476d1ce4e5b9) | 1u;
}

static inline uint64_t step(uint64_t check, uint32_t stage)
{
    return check * CHECK_P + stage_constant(stage);
}

/* The map of stages 1..'stages' together: c -> c * *mul + *add. */
static inline void whole_pipeline(uint32_t stages, uint64_t *mul, uint64_t *add)
{
    uint32_t k;

    *mul = 1;
    *add = 0;
    for (k = 1; k <= stages; ++k) {
        *mul *= CHECK_P;
        *add = step(*add, k);
    }
}

/* The source's message number 'seq'. */
static inline void msg_first(struct msg *m, uint32_t seq)
{
    m->seq = seq;
    m->hops = 0;
    m->check = seed(seq);
}

/* What stage 'number' does to a message once it has burnt its work. */
static inline void msg_stage(struct msg *m, uint32_t number)
{
    m->check = step(m->check, number);
    ++m->hops;
}

/* Whether 'm' is right as the sink's message number 'count' of a pipeline
 * of 'stages' stages, whose map whole_pipeline gave as (mul, add). */
static inline int msg_right(const struct msg *m, uint32_t count, uint32_t stages, uint64_t mul,
                            uint64_t add)
{
    return m->seq == count && m->hops == stages && m->check == seed(count) * mul + add;
}

#endif
