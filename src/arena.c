/* SPDX-License-Identifier: MIT */
/* The arena: the one block of memory the user lends, carved front to back. */
#include "kpn_int.h"

void kpni_arena_init(kpni_arena *a, void *mem, size_t size)
{
    uintptr_t p = (uintptr_t)mem;
    uintptr_t aligned = (p + (KPNI_ALIGN - 1)) & ~(uintptr_t)(KPNI_ALIGN - 1);
    size_t skip = (size_t)(aligned - p);

    if (size < skip) {
        /* Too small to hold even one aligned byte: an empty arena that
         * points nowhere past the memory it was given. */
        a->base = a->next = a->end = (unsigned char *)mem;
        return;
    }
    a->base = (unsigned char *)mem + skip;
    a->next = a->base;
    a->end = a->base + ((size - skip) & ~(size_t)(KPNI_ALIGN - 1));
}

/* Returns NULL, and changes nothing, when 'size' does not fit.  'room' is
 * a multiple of the alignment, so 'size <= room' also bounds the rounded
 * size, and comparing against the room never overflows. */
void *kpni_arena_carve(kpni_arena *a, size_t size)
{
    size_t room = (size_t)(a->end - a->next);
    void *p;

    if (size > room)
        return NULL;
    p = a->next;
    /* a ring the resolver grows is carved while processes on other
     * runners, and offers from outside, check their handles against it
     * (kpni_chan_ok, kpni_in_arena) */
    KPNI_STORE(&a->next, a->next + kpni_align_up(size));
    return p;
}
