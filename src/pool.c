/* SPDX-License-Identifier: MIT */
/* The reserve pool: first-fit blocks in address order that merge when freed. */
#include "kpn_int.h"

/*
 *   pool.free ─► ┌──────┬──────────┐      ┌──────┬──────────────┐
 *                │ size │ next ────┼─────►│ size │ next = NULL  │
 *                │      │  ...free │      │      │   ...free    │
 *                └──────┴──────────┘      └──────┴──────────────┘
 *                 lower address            higher address
 *
 * Growth asks for blocks of doubling size and gives the old one back, so
 * without merging neighbours a long run would leave only slivers.
 */

static unsigned char *end_of(kpni_free *b)
{
    return (unsigned char *)b + b->size;
}

/* Insert 'b' in address order, merging it with the blocks it touches. */
static void insert(kpni_pool *pool, kpni_free *b)
{
    kpni_free **link = &pool->free, *prev = NULL;

    while (*link != NULL && (uintptr_t)*link < (uintptr_t)b) {
        prev = *link;
        link = &(*link)->next;
    }
    b->next = *link;
    *link = b;
    if (b->next != NULL && end_of(b) == (unsigned char *)b->next) {
        b->size += b->next->size;
        b->next = b->next->next;
    }
    if (prev != NULL && end_of(prev) == (unsigned char *)b) {
        prev->size += b->size;
        prev->next = b->next;
    }
}

void kpni_pool_add(kpni_pool *pool, void *mem, size_t size)
{
    uintptr_t p = (uintptr_t)mem;
    size_t skip = (size_t)(((p + (KPNI_ALIGN - 1)) & ~(uintptr_t)(KPNI_ALIGN - 1)) - p);
    kpni_free *b;

    if (size < skip + KPNI_POOL_MIN)
        return;
    b = (kpni_free *)(void *)((unsigned char *)mem + skip);
    b->size = (size - skip) & ~(size_t)(KPNI_ALIGN - 1);
    pool->size += b->size;
    insert(pool, b);
}

void *kpni_pool_alloc(kpni_pool *pool, size_t size)
{
    kpni_free **link;
    size_t need;

    if (size > (size_t)-1 - KPNI_POOL_HEADER - KPNI_ALIGN)
        return NULL;
    need = kpni_align_up(size) + KPNI_POOL_HEADER;
    for (link = &pool->free; *link != NULL; link = &(*link)->next) {
        kpni_free *b = *link;
        if (b->size < need)
            continue;
        if (b->size - need >= KPNI_POOL_MIN) {
            /* hand out the front, keep the rest in place on the list */
            kpni_free *rest = (kpni_free *)(void *)((unsigned char *)b + need);
            rest->size = b->size - need;
            rest->next = b->next;
            *link = rest;
            b->size = need;
        } else {
            *link = b->next;
        }
        pool->used += b->size;
        if (pool->used > pool->peak)
            pool->peak = pool->used;
        return (unsigned char *)b + KPNI_POOL_HEADER;
    }
    return NULL;
}

void kpni_pool_free(kpni_pool *pool, void *p)
{
    kpni_free *b = (kpni_free *)(void *)((unsigned char *)p - KPNI_POOL_HEADER);

    pool->used -= b->size;
    insert(pool, b);
}

kpn_status kpn_reserve_add(kpn_net *net, void *mem, size_t size)
{
    uintptr_t m = (uintptr_t)mem, lo, hi;

    if (!kpni_net_valid(net) || mem == NULL || size < KPNI_RESERVE_MIN ||
        size > UINTPTR_MAX - m)
        return KPN_EINVAL;
    if (net->state == KPNI_NET_RUNNING)
        return KPN_ESTATE;
    /* the whole arena, including the reserve carved from its top */
    lo = (uintptr_t)net;
    hi = (uintptr_t)net->arena.end + net->reserve_carved;
    if (m < hi && m + size > lo)
        return KPN_EINVAL;
    kpni_pool_add(&net->pool, mem, size);
    return KPN_OK;
}
