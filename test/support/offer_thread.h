/* SPDX-License-Identifier: MIT */
/* Another thread that feeds an input channel with kpn_offer: POSIX threads kept out of the test files. */
#ifndef KPN_TEST_OFFER_THREAD_H
#define KPN_TEST_OFFER_THREAD_H

#include <pthread.h>
#include <sched.h>

#include "kpn.h"

/* Offers 'first', 'first + 1', ... ('count' of them) to 'in', yielding
 * 'pause' times before each (so the net runs dry and waits), retrying
 * on KPN_EFULL; then closes the input unless 'keep_open'.  'efull' counts
 * the retries, 'bad' any other status; 'closed' is set just before the
 * close, so the test can tell kpn_run returned only after it. */
struct kt_offerer {
    kpn_chan *in;
    uint32_t first, count;
    unsigned pause;
    int keep_open;
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

static inline int kt_offerer_start(struct kt_offerer *o)
{
    return pthread_create(&o->thread, NULL, kt_offerer_main, o);
}

static inline void kt_offerer_join(struct kt_offerer *o)
{
    (void)pthread_join(o->thread, NULL);
}

#endif /* KPN_TEST_OFFER_THREAD_H */
