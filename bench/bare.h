/* SPDX-License-Identifier: MIT */
/* What the floors on bare coroutines share: main's context, and the room a context takes at a stack's top. */
#ifndef KPN_BENCH_BARE_H
#define KPN_BENCH_BARE_H

#include <stddef.h>
#include <stdlib.h>
#include "port.h"
#include "bench.h"

enum { BARE_LINE = 64, BARE_MAX_CTX = 4096 };

/* main's context, saved here while the coroutines run */
static unsigned char bare_host[BARE_MAX_CTX] __attribute__((aligned(64)));

static inline kpn_port_ctx *bare_host_ctx(void)
{
    return (kpn_port_ctx *)(void *)bare_host;
}

/* 'n' bytes rounded up to whole cache lines. */
static inline size_t bare_lines(size_t n)
{
    return (n + BARE_LINE - 1) & ~(size_t)(BARE_LINE - 1);
}

/* The bytes a coroutine's context takes at its stack's top, rounded up
 * to 16 so that what lies above it is aligned; exits 1 where the port's
 * context would not fit in main's. */
static inline size_t bare_ctx_room(void)
{
    if (kpn_port_ctx_size() > BARE_MAX_CTX) {
        bench_note("the port's context takes %zu bytes, more than %d", kpn_port_ctx_size(),
                   BARE_MAX_CTX);
        exit(1);
    }
    return (kpn_port_ctx_size() + 15) & ~(size_t)15;
}

#endif
