/* SPDX-License-Identifier: MIT */
/* What several test files share: a text search, a stack overflow, thesis figure 3.7. */
#ifndef KPN_TEST_HELPERS_H
#define KPN_TEST_HELPERS_H

#include "kpn.h"

/* A recognisable pointer that no call of kpn returns, for an
 * out-parameter a refused call must leave as it was: starting it at
 * NULL would pass a refusal that writes NULL. */
static inline void *kt_unwritten(void)
{
    static char mark;
    return &mark;
}

/* Whether 'needle' occurs in 'hay' (the tests use no libc string calls
 * on library output, so a missing NUL would show up as a failure). */
static inline int kt_contains(const char *hay, const char *needle)
{
    size_t i, j;
    for (i = 0; hay[i] != '\0'; ++i) {
        for (j = 0; needle[j] != '\0' && hay[i + j] == needle[j]; ++j)
            ;
        if (needle[j] == '\0')
            return 1;
    }
    return 0;
}

/* One level of kt_recurse; 'above' is the array of the level above, NULL
 * at the first: the distance between the two is one frame. */
static inline int kt_descend(const unsigned char *limit, int depth,
                             const volatile unsigned char *above)
{
    int (*volatile next)(const unsigned char *, int, const volatile unsigned char *) =
        kt_descend;
    volatile unsigned char here[32];
    uintptr_t at = (uintptr_t)here, low = (uintptr_t)limit;
    size_t i;

    for (i = 0; i < sizeof here; ++i)
        here[i] = (unsigned char)depth;
    if (above != NULL) {
        uintptr_t frame = (uintptr_t)above - at;
        /* nothing of this frame lies below 'bottom': the next one's
         * array ends there, and that frame ends at this one's start */
        uintptr_t bottom = at - frame + sizeof here;

        if (bottom < low + 16)
            return here[0]; /* the frames alone come within 16 bytes of it */
        if (bottom - frame < low + 16) {
            /* another frame would not fit: overrun the rest of the way */
            volatile unsigned char *p = (volatile unsigned char *)low;
            for (i = bottom - low; i-- > 0;)
                p[i] = (unsigned char)depth;
            return here[0];
        }
    }
    return next(limit, depth + 1, here) + here[1];
}

/* Write the stack from here down to 'limit', and not a byte below it:
 * recurse, writing every frame, while another frame fits above 'limit',
 * then write the bytes left down to it, as a local array that is
 * overrun would.  Frames alone would stop anywhere up to a frame past
 * 'limit', and a frame under ASan (about 200 bytes) is most of a 256-byte
 * guard band: the band would not take the overrun, and what lies below
 * it would be hit (a runner's stack below a net's first process, whose
 * top holds the C library's thread block).  A level is called through a
 * volatile pointer so the compiler cannot fold levels together.
 * Returns more than 0 (a sum of bytes it wrote, which keeps the writes). */
static inline int kt_recurse(const unsigned char *limit, int depth)
{
    return kt_descend(limit, depth, NULL) + 1;
}

/* Thesis figure 3.7: an effective network no finite memory can run.  A
 * sends two messages on c2, signals B on c1 and waits on c3; B waits on
 * c1, takes one message from c2 and signals back: every loop leaves one
 * more message on c2.  B checks it gets A's numbers in order. */
struct kt_fig37 {
    kpn_chan *c1, *c2, *c3;
    int a_sent2, b_got2, b_bad;
};

static inline void kt_fig37_a(void *arg)
{
    struct kt_fig37 *f = arg;
    int token = 0;
    for (;;) {
        kpn_send(f->c2, &f->a_sent2);
        f->a_sent2++;
        kpn_send(f->c2, &f->a_sent2);
        f->a_sent2++;
        kpn_send(f->c1, &token);
        kpn_recv(f->c3, &token);
    }
}

static inline void kt_fig37_b(void *arg)
{
    struct kt_fig37 *f = arg;
    int v, token = 0;
    for (;;) {
        kpn_recv(f->c1, &token);
        kpn_recv(f->c2, &v);
        f->b_bad += v != f->b_got2;
        f->b_got2++;
        kpn_send(f->c3, &token);
    }
}

/* Spawn A and B (pinned to runners 0 and 1 when 'pin'), connect them
 * with capacity 1. */
static inline kpn_status kt_fig37_build(kpn_net *net, struct kt_fig37 *f, int pin)
{
    kpn_proc *a, *b;
    kpn_status s;

    f->a_sent2 = f->b_got2 = f->b_bad = 0;
    if ((s = kpn_spawn(net, &a, "A", kt_fig37_a, f, 16384)) != KPN_OK ||
        (s = kpn_spawn(net, &b, "B", kt_fig37_b, f, 16384)) != KPN_OK)
        return s;
    if (pin && ((s = kpn_proc_pin(a, 0)) != KPN_OK || (s = kpn_proc_pin(b, 1)) != KPN_OK))
        return s;
    if ((s = kpn_connect(net, &f->c1, a, b, sizeof(int), 1)) != KPN_OK ||
        (s = kpn_connect(net, &f->c2, a, b, sizeof(int), 1)) != KPN_OK)
        return s;
    return kpn_connect(net, &f->c3, b, a, sizeof(int), 1);
}

#endif /* KPN_TEST_HELPERS_H */
