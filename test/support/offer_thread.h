/* SPDX-License-Identifier: MIT */
/* Another thread that feeds an input channel with kpn_offer: POSIX threads kept out of the test files. */
#ifndef KPN_TEST_OFFER_THREAD_H
#define KPN_TEST_OFFER_THREAD_H

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kpn.h"

/* Ceedling's runner includes this header too, without the test file's
 * _POSIX_C_SOURCE: it needs none of it, and without the feature macro
 * pthread_attr_setstack is not declared. */
#ifdef _POSIX_C_SOURCE

/* Offers 'first', 'first + 1', ... ('count' of them) to 'in', yielding
 * 'pause' times before each (so the net runs dry and waits), retrying
 * on KPN_EFULL; then closes the input unless 'keep_open'.  'efull' counts
 * the retries, 'bad' any other status; 'closed' is set just before the
 * close, so the test can tell kpn_run returned only after it.  With
 * 'delay_ms' it first sleeps that long, and does nothing at all if the
 * test sets 'cancel' meanwhile: a close that comes only if kpn_run
 * fails to return by itself, so that such a failure fails the test
 * instead of hanging it. */
struct kt_offerer {
    kpn_chan *in;
    uint32_t first, count;
    unsigned pause;
    int keep_open;
    unsigned delay_ms;
    volatile int cancel;
    unsigned long efull;
    int bad;
    volatile int closed;
    pthread_t thread;
};

static inline void *kt_offerer_main(void *arg)
{
    struct kt_offerer *o = arg;
    uint32_t i;
    unsigned k;

    for (k = 0; k < o->delay_ms / 10 && !__atomic_load_n(&o->cancel, __ATOMIC_SEQ_CST); ++k) {
        struct timespec ten_ms = {0, 10L * 1000 * 1000};
        (void)nanosleep(&ten_ms, NULL);
    }
    if (__atomic_load_n(&o->cancel, __ATOMIC_SEQ_CST))
        return NULL;
    for (i = 0; i < o->count; ++i) {
        uint32_t v = o->first + i;
        kpn_status s;
        for (k = 0; k < o->pause; ++k)
            sched_yield();
        while ((s = kpn_offer(o->in, &v)) == KPN_EFULL) {
            o->efull++;
            sched_yield();
        }
        o->bad |= s != KPN_OK;
    }
    if (!o->keep_open) {
        __atomic_store_n(&o->closed, 1, __ATOMIC_SEQ_CST);
        o->bad |= kpn_input_close(o->in) != KPN_OK;
    }
    return NULL;
}

/* The offerer runs on a stack of its own, as kpn's runner threads do:
 * a thread on a stack the C library maps never starts under QEMU's
 * user-mode emulation of AArch64 (QEMU 7.2, glibc 2.36: pthread_create
 * spins), which make test-aarch64 runs the suite in.  The stack is a
 * mapping of its own, not a static array: valgrind takes a thread's
 * stack to reach down to the start of the mapping its first stack
 * pointer lies in, and a stack in .bss would take in the test's arena,
 * whose process stacks memcheck would then see as frames of one stack.
 * One offerer at a time; 4 MiB holds glibc's TLS and descriptor at the
 * top, under any sanitizer's runtime too.  Mapped from /dev/zero, as
 * POSIX has it (MAP_ANONYMOUS is an extension), once, and kept. */
#define KT_OFFERER_STACK (4u << 20)

static inline void *kt_offerer_stack(void)
{
    static void *stack;

    if (stack == NULL) {
        int fd = open("/dev/zero", O_RDWR);
        void *p;

        if (fd < 0)
            return NULL;
        p = mmap(NULL, KT_OFFERER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        (void)close(fd);
        stack = p == MAP_FAILED ? NULL : p;
    }
    return stack;
}

static inline int kt_offerer_start(struct kt_offerer *o)
{
    void *stack = kt_offerer_stack();
    pthread_attr_t attr;
    int r;

    if (stack == NULL || pthread_attr_init(&attr) != 0)
        return -1;
    r = pthread_attr_setstack(&attr, stack, KT_OFFERER_STACK);
    if (r == 0)
        r = pthread_create(&o->thread, &attr, kt_offerer_main, o);
    (void)pthread_attr_destroy(&attr);
    return r;
}

static inline void kt_offerer_join(struct kt_offerer *o)
{
    (void)pthread_join(o->thread, NULL);
}

#endif /* _POSIX_C_SOURCE */

#endif /* KPN_TEST_OFFER_THREAD_H */
