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

/* The size of the free block that ends at 'at', if the last one does: 0
 * if none.  Memory added at 'at' merges with it (insert). */
size_t kpni_pool_tail(const kpni_pool *pool, const void *at)
{
    kpni_free *b = pool->free;

    while (b != NULL && b->next != NULL)
        b = b->next;
    return b != NULL && end_of(b) == (const unsigned char *)at ? b->size : 0;
}

void kpni_pool_free(kpni_pool *pool, void *p)
{
    kpni_free *b = (kpni_free *)(void *)((unsigned char *)p - KPNI_POOL_HEADER);

    pool->used -= b->size;
    insert(pool, b);
}

/* The 16-aligned part of [m, m + size) the pool uses: [*lo, *hi). */
static void usable_part(uintptr_t m, size_t size, uintptr_t *lo, uintptr_t *hi)
{
    *lo = (m + (KPNI_ALIGN - 1)) & ~(uintptr_t)(KPNI_ALIGN - 1);
    *hi = (m + size) & ~(uintptr_t)(KPNI_ALIGN - 1);
    if (*hi < *lo)
        *hi = *lo;
}

static int overlaps(uintptr_t lo, uintptr_t hi, const void *b, size_t size)
{
    return lo < (uintptr_t)b + size && (uintptr_t)b < hi;
}

/* Whether [lo, hi) overlaps memory the pool already holds: a free block,
 * or a block lent to a channel's ring.  Between them they cover the
 * usable part of every region given so far, so no record of the regions
 * is needed. */
static int pool_overlaps(const kpn_net *net, uintptr_t lo, uintptr_t hi)
{
    const kpni_free *b;
    const kpn_chan *c;

    for (b = net->pool.free; b != NULL; b = b->next)
        if (overlaps(lo, hi, b, b->size))
            return 1;
    for (c = net->chans; c != NULL; c = c->next)
        if (c->ring_pooled &&
            overlaps(lo, hi, c->ring - KPNI_POOL_HEADER,
                     ((const kpni_free *)(const void *)(c->ring - KPNI_POOL_HEADER))->size))
            return 1;
    return 0;
}

kpn_status kpn_reserve_add(kpn_net *net, void *mem, size_t size)
{
    uintptr_t m = (uintptr_t)mem, lo, hi;

    if (!kpni_net_valid(net) || mem == NULL || size > UINTPTR_MAX - m)
        return KPN_EINVAL;
    usable_part(m, size, &lo, &hi);
    if (hi - lo < KPNI_RESERVE_MIN)
        return KPN_EINVAL;
    if (net->state != KPNI_NET_IDLE)
        return KPN_ESTATE; /* running, or its memory is suspect after an overflow */
    /* the whole arena, including the reserve carved from its top, and
     * every region given before: a block on the free list twice would
     * make the list a loop */
    if ((m < (uintptr_t)net->arena.end + net->reserve_carved && m + size > (uintptr_t)net) ||
        pool_overlaps(net, lo, hi))
        return KPN_EINVAL;
    kpni_pool_add(&net->pool, mem, size);
    return KPN_OK;
}
