/* SPDX-License-Identifier: MIT */
/* The arena's carving: alignment, exhaustion without side effects, overflow. */
#include "unity.h"
#include "kpn_int.h"

TEST_SOURCE_FILE("src/arena.c")

static unsigned char mem[1024];

void setUp(void) {}
void tearDown(void) {}

void test_carves_are_aligned_and_consecutive(void)
{
    kpni_arena a;
    unsigned char *p, *q;

    kpni_arena_init(&a, mem + 3, 500);
    p = kpni_arena_carve(&a, 1);
    q = kpni_arena_carve(&a, 17);
    TEST_ASSERT_NOT_NULL(p);
    TEST_ASSERT_NOT_NULL(q);
    TEST_ASSERT_EQUAL_UINT(0, (unsigned)((uintptr_t)p % 16));
    TEST_ASSERT_EQUAL_UINT(0, (unsigned)((uintptr_t)q % 16));
    TEST_ASSERT_EQUAL_PTR(p + 16, q);
    TEST_ASSERT_GREATER_OR_EQUAL((uintptr_t)(mem + 3), (uintptr_t)p);
}

void test_exhaustion_returns_null_and_changes_nothing(void)
{
    kpni_arena a;
    unsigned char *before;
    size_t room;

    kpni_arena_init(&a, mem, sizeof mem);
    room = (size_t)(a.end - a.next);
    TEST_ASSERT_LESS_OR_EQUAL(sizeof mem, room);
    before = a.next;
    TEST_ASSERT_NULL(kpni_arena_carve(&a, room + 1));
    TEST_ASSERT_NULL(kpni_arena_carve(&a, (size_t)-1));
    TEST_ASSERT_NULL(kpni_arena_carve(&a, (size_t)-1 - 8));
    TEST_ASSERT_EQUAL_PTR(before, a.next);
    TEST_ASSERT_NOT_NULL(kpni_arena_carve(&a, room));
    TEST_ASSERT_NULL(kpni_arena_carve(&a, 1));
}

void test_the_end_never_passes_the_memory_given(void)
{
    size_t off, size;

    for (off = 0; off < 16; ++off)
        for (size = 0; size < 64; ++size) {
            kpni_arena a;
            kpni_arena_init(&a, mem + off, size);
            TEST_ASSERT_LESS_OR_EQUAL((uintptr_t)(mem + off + size), (uintptr_t)a.end);
            TEST_ASSERT_LESS_OR_EQUAL((uintptr_t)a.end, (uintptr_t)a.base);
        }
}

/* The room is a whole number of aligned units (every carve is rounded up
 * to one), so a carve of all the room ends exactly at the end, never
 * past it. */
void test_the_room_is_whole_units_and_carving_it_ends_at_the_end(void)
{
    size_t off, size;

    for (off = 0; off < 16; ++off)
        for (size = 16; size < 96; ++size) {
            kpni_arena a;
            size_t room;
            kpni_arena_init(&a, mem + off, size);
            room = (size_t)(a.end - a.next);
            TEST_ASSERT_EQUAL_size_t(0, room % 16);
            if (room > 0) {
                TEST_ASSERT_NOT_NULL(kpni_arena_carve(&a, room));
                TEST_ASSERT_EQUAL_PTR(a.end, a.next);
            }
        }
}

void test_align_up(void)
{
    TEST_ASSERT_EQUAL_size_t(0, kpni_align_up(0));
    TEST_ASSERT_EQUAL_size_t(16, kpni_align_up(1));
    TEST_ASSERT_EQUAL_size_t(16, kpni_align_up(16));
    TEST_ASSERT_EQUAL_size_t(32, kpni_align_up(17));
}
