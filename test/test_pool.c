/* SPDX-License-Identifier: MIT */
/* The reserve pool: allocation, release, coalescing, exhaustion, kpn_reserve_add. */
#include "unity.h"
#include "kpn_int.h"

TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/place.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/runners.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/posix/port_posix.c")
TEST_SOURCE_FILE("port/pthread/thread_pthread.c")

static unsigned char mem[4096];
static kpni_pool pool;

void setUp(void)
{
    kpni_memset(&pool, 0, sizeof pool);
}

void tearDown(void) {}

static size_t free_blocks(void)
{
    size_t n = 0;
    const kpni_free *b;
    for (b = pool.free; b != NULL; b = b->next)
        ++n;
    return n;
}

void test_alloc_is_aligned_inside_the_memory_and_accounted(void)
{
    unsigned char *a, *b;

    kpni_pool_add(&pool, mem + 5, 1000);
    TEST_ASSERT_LESS_OR_EQUAL(1000, pool.size);
    a = kpni_pool_alloc(&pool, 10);
    b = kpni_pool_alloc(&pool, 100);
    TEST_ASSERT_NOT_NULL(a);
    TEST_ASSERT_NOT_NULL(b);
    TEST_ASSERT_EQUAL_UINT(0, (unsigned)((uintptr_t)a % 16));
    TEST_ASSERT_EQUAL_UINT(0, (unsigned)((uintptr_t)b % 16));
    TEST_ASSERT_GREATER_OR_EQUAL((uintptr_t)(mem + 5), (uintptr_t)a);
    TEST_ASSERT_LESS_OR_EQUAL((uintptr_t)(mem + 1005), (uintptr_t)(b + 100));
    TEST_ASSERT_TRUE(a + 10 <= b || b + 100 <= a);
    TEST_ASSERT_EQUAL_size_t(16 + 16 + 112 + 16, pool.used);
    TEST_ASSERT_EQUAL_size_t(pool.used, pool.peak);
}

void test_exhaustion_returns_null_and_changes_nothing(void)
{
    size_t used;

    kpni_pool_add(&pool, mem, 256);
    TEST_ASSERT_NULL(kpni_pool_alloc(&pool, 256));
    TEST_ASSERT_NULL(kpni_pool_alloc(&pool, (size_t)-1));
    TEST_ASSERT_EQUAL_size_t(0, pool.used);
    TEST_ASSERT_NOT_NULL(kpni_pool_alloc(&pool, 256 - 16));
    used = pool.used;
    TEST_ASSERT_NULL(kpni_pool_alloc(&pool, 1));
    TEST_ASSERT_EQUAL_size_t(used, pool.used);
}

void test_freed_neighbours_merge_back_into_one_block(void)
{
    void *a, *b, *c;

    kpni_pool_add(&pool, mem, 1024);
    a = kpni_pool_alloc(&pool, 200);
    b = kpni_pool_alloc(&pool, 200);
    c = kpni_pool_alloc(&pool, 200);
    TEST_ASSERT_NOT_NULL(c);
    /* free the middle, then the ends: every order must end as one block */
    kpni_pool_free(&pool, b);
    kpni_pool_free(&pool, a);
    kpni_pool_free(&pool, c);
    TEST_ASSERT_EQUAL_size_t(1, free_blocks());
    TEST_ASSERT_EQUAL_size_t(0, pool.used);
    TEST_ASSERT_EQUAL_size_t(3 * (208 + 16), pool.peak);
    /* and the whole pool can be had again in one piece */
    TEST_ASSERT_NOT_NULL(kpni_pool_alloc(&pool, 1024 - 16));
}

void test_doubling_growth_does_not_fragment_the_pool(void)
{
    void *ring = NULL;
    size_t bytes;

    /* grow one ring by doubling, freeing the old one each time, as a
     * channel does: with merging, the last doubling that fits in half
     * the pool still succeeds */
    kpni_pool_add(&pool, mem, 4096);
    for (bytes = 16; bytes <= 1024; bytes *= 2) {
        void *next = kpni_pool_alloc(&pool, bytes);
        TEST_ASSERT_NOT_NULL(next);
        if (ring != NULL)
            kpni_pool_free(&pool, ring);
        ring = next;
    }
    kpni_pool_free(&pool, ring);
    TEST_ASSERT_EQUAL_size_t(1, free_blocks());
}

void test_regions_added_side_by_side_merge(void)
{
    kpni_pool_add(&pool, mem + 512, 512);
    kpni_pool_add(&pool, mem, 512);
    TEST_ASSERT_EQUAL_size_t(1, free_blocks());
    TEST_ASSERT_NOT_NULL(kpni_pool_alloc(&pool, 1024 - 16));
}

void test_a_region_too_small_for_a_block_is_ignored(void)
{
    kpni_pool_add(&pool, mem + 1, 40);
    TEST_ASSERT_EQUAL_size_t(0, pool.size);
    TEST_ASSERT_NULL(kpni_pool_alloc(&pool, 1));
}

/* A block is split only where the rest can be a block of its own: the
 * smallest is a header and one aligned unit, KPNI_POOL_MIN bytes.  What
 * is left exactly that big stays free and can be had; a rest smaller
 * goes with the allocation, and counts as in use until it is freed. */
void test_a_rest_of_the_smallest_block_size_stays_free(void)
{
    kpni_pool_add(&pool, mem, 256);
    /* 256 - 32 bytes with their header: the rest is KPNI_POOL_MIN */
    TEST_ASSERT_NOT_NULL(kpni_pool_alloc(&pool, 256 - KPNI_POOL_MIN - KPNI_POOL_HEADER));
    TEST_ASSERT_EQUAL_size_t(256 - KPNI_POOL_MIN, pool.used);
    TEST_ASSERT_EQUAL_size_t(1, free_blocks());
    TEST_ASSERT_NOT_NULL(kpni_pool_alloc(&pool, KPNI_POOL_MIN - KPNI_POOL_HEADER));
    TEST_ASSERT_EQUAL_size_t(256, pool.used);
}

void test_a_rest_too_small_for_a_block_is_in_use_with_the_allocation(void)
{
    void *a;

    kpni_pool_add(&pool, mem, 256);
    /* 256 - 16 bytes with the header: the 16 left cannot be a block */
    a = kpni_pool_alloc(&pool, 256 - 2 * KPNI_POOL_HEADER);
    TEST_ASSERT_NOT_NULL(a);
    TEST_ASSERT_EQUAL_size_t(256, pool.used);
    TEST_ASSERT_EQUAL_size_t(256, pool.peak);
    TEST_ASSERT_EQUAL_size_t(0, free_blocks());
    kpni_pool_free(&pool, a);
    TEST_ASSERT_EQUAL_size_t(0, pool.used);
    TEST_ASSERT_NOT_NULL(kpni_pool_alloc(&pool, 256 - KPNI_POOL_HEADER));
}

/* kpni_pool_tail: the size of the last free block when it ends at the
 * address asked about (memory the arena adds there merges with it), 0
 * otherwise, also for a block that ends there but is not the last. */
void test_the_tail_is_the_last_free_block_where_it_ends_there(void)
{
    unsigned char *m = mem + (16u - (uintptr_t)mem % 16u) % 16u;

    kpni_pool_add(&pool, m, 512);
    kpni_pool_add(&pool, m + 1024, 256);
    TEST_ASSERT_EQUAL_size_t(2, free_blocks());
    TEST_ASSERT_EQUAL_size_t(256, kpni_pool_tail(&pool, m + 1024 + 256));
    TEST_ASSERT_EQUAL_size_t(0, kpni_pool_tail(&pool, m + 512));
    TEST_ASSERT_EQUAL_size_t(0, kpni_pool_tail(&pool, m + 1024 + 512));
}

/* ------------------------------------------------------------ kpn_reserve_add */

static unsigned char arena[64 * 1024];
static unsigned char extra[4096];

void test_reserve_add_checks_its_arguments(void)
{
    kpn_net *net;
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(NULL, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, NULL, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra, 40));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra + 1, 63));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra + 1, 48));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, arena + 1024, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, arena + sizeof arena - 8, 4096));
    /* a region past the end of the address space */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, extra, (size_t)-1));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL,
                          kpn_reserve_add(net, extra, (size_t)(UINTPTR_MAX - (uintptr_t)extra) + 2));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(0, st.reserve_size);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(sizeof extra, st.reserve_size);
    TEST_ASSERT_EQUAL_size_t(0, st.reserve_used);
}

static kpn_net *running_net;
static kpn_status add_while_running;
static void adds_reserve(void *arg)
{
    (void)arg;
    add_while_running = kpn_reserve_add(running_net, extra, sizeof extra);
}

void test_reserve_add_while_running_is_refused(void)
{
    kpn_proc *p;
    kpn_stats st;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&running_net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(running_net, &p, "p", adds_reserve, NULL, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(running_net));
    TEST_ASSERT_EQUAL_INT(KPN_ESTATE, add_while_running);
    /* the pool is as it was: nothing given, and the region is still the
     * caller's to give between runs */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(running_net, &st));
    TEST_ASSERT_EQUAL_size_t(0, st.reserve_size);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(running_net, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(running_net, &st));
    TEST_ASSERT_EQUAL_size_t(sizeof extra, st.reserve_size);
}

void test_the_configured_reserve_is_the_pool(void)
{
    kpn_net *net;
    kpn_config cfg;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.reserve_size = 63; /* kpn.h: 1 to 63 is a caller mistake */
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.reserve_size = 48;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.reserve_size = 64;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    cfg.reserve_size = 8192;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(8192, st.reserve_size);
    TEST_ASSERT_EQUAL_size_t(0, st.reserve_peak);
}

/* A region may overlap no block the pool holds, free or lent: here one
 * that covers only the block lent to a channel's ring, none of the free
 * ones, after a run in which a deadlocked pair grew its channels. */
struct big {
    unsigned char bytes[32];
};
static kpn_chan *lent_ab, *lent_ba;

static void sends_then_reads(void *arg)
{
    kpn_chan *out = *(kpn_chan **)arg, *in = out == lent_ab ? lent_ba : lent_ab;
    struct big m;
    int k;

    kpni_memset(&m, 0, sizeof m);
    for (k = 0; k < 3; ++k)
        kpn_send(out, &m);
    for (k = 0; k < 3; ++k)
        kpn_recv(in, &m);
}

void test_a_region_over_a_ring_the_pool_lent_is_refused(void)
{
    kpn_net *net;
    kpn_config cfg;
    kpn_proc *a, *b;
    const kpn_chan *c, *lent = NULL;
    const kpni_free *f;
    uintptr_t lo;
    size_t size;
    kpn_stats before, after;

    kpn_config_default(&cfg);
    cfg.reserve_size = 0;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &a, "a", sends_then_reads, &lent_ab, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_spawn(net, &b, "b", sends_then_reads, &lent_ba, 8192));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &lent_ab, a, b, sizeof(struct big), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_connect(net, &lent_ba, b, a, sizeof(struct big), 1));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, extra, sizeof extra));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));

    for (c = net->chans; c != NULL; c = c->next)
        if (c->ring_pooled)
            lent = c;
    TEST_ASSERT_NOT_NULL(lent);
    lo = (uintptr_t)(lent->ring - KPNI_POOL_HEADER);
    size = ((const kpni_free *)(const void *)(lent->ring - KPNI_POOL_HEADER))->size;
    TEST_ASSERT_GREATER_OR_EQUAL(KPNI_RESERVE_MIN, size);
    for (f = net->pool.free; f != NULL; f = f->next) /* only the lent block is hit */
        TEST_ASSERT_TRUE((uintptr_t)f + f->size <= lo || lo + size <= (uintptr_t)f);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &before));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, (void *)lo, size));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &after));
    TEST_ASSERT_EQUAL_size_t(before.reserve_size, after.reserve_size);
}

/* kpn.h: a region that overlaps the arena is refused, and the reserve
 * held back at its top is part of the arena.  A region whose first bytes
 * are the arena's last, and whose 16-aligned part lies wholly above it,
 * is refused all the same, and the pool stays as it was. */
void test_a_region_over_the_top_of_a_held_back_reserve_is_refused(void)
{
    static unsigned char room[32 * 1024 + 8192];
    kpn_config cfg;
    kpn_net *net;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.reserve_size = 4096;
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, room, 32 * 1024, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, kpn_reserve_add(net, room + 32 * 1024 - 8, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(4096, st.reserve_size);
    /* the same region from the arena's end on is taken */
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_reserve_add(net, room + 32 * 1024, 4096));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_GREATER_THAN(4096, st.reserve_size);
}
