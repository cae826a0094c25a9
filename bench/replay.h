/* SPDX-License-Identifier: MIT */
/* A random network's protocol played out in time, at given costs (bench/random's
 * parallelism and speedup_* fields). */
#ifndef KPN_RANDOM_REPLAY_H
#define KPN_RANDOM_REPLAY_H

#include "randnet.h"

/* What a step of the protocol costs where nothing else does. */
typedef struct rnet_timing {
    double unit_ns;  /* burning one work unit */
    double msg_ns;   /* a message: its send and its receive, half each */
    double cross_ns; /* what more a step takes that takes a message, or a
                      * slot, that a step on another CPU left */
} rnet_timing;

#define RNET_SCHED_EINVAL (-1.0)    /* a NULL, zero rounds or capacity, a cost below 0,
                                     * cpus > 2048, a part of cpus or above, or
                                     * parts with cpus 0 */
#define RNET_SCHED_ETOOBIG (-2.0)   /* edges * capacity above 2^18 message slots */
#define RNET_SCHED_EDEADLOCK (-3.0) /* every process blocked before its last round */

/* The time, in ns, a net of 'g' ('total' units in 'rounds' rounds,
 * channels of 'capacity') takes where steps cost only what 'tm' says.
 * 'cpus' 0: as many CPUs as processes, each step as early as it can
 * start (no schedule on any number of CPUs ends sooner; every message
 * there crosses to another CPU).  Else 'cpus'
 * CPUs, each of which, when its process blocks or ends, takes the
 * process ready longest: of all, or where 'part' is given, of those
 * 'part' (one entry a node, each below 'cpus') puts on it.  A process
 * runs until it blocks, and nothing grows a channel: a net that would
 * need the resolver gives RNET_SCHED_EDEADLOCK.  Negative on error.
 * Uses static scratch space: one thread at a time. */
double rnet_schedule(const rnet_graph *g, uint64_t total, uint64_t rounds, size_t capacity,
                     const rnet_timing *tm, unsigned cpus, const unsigned *part);

#endif /* KPN_RANDOM_REPLAY_H */
