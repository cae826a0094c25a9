/* SPDX-License-Identifier: MIT */
/* Several runners: the net's lock, stealing, idle runners, starting and ending a run. */
#include "kpn_int.h"

/*
 * Everything a net with more than one runner adds to the scheduler
 * (sched.c), which calls it through kpn_int.h: without KPN_THREADS these
 * calls are empty inline functions and this file is empty, so a bare-
 * metal build has no thread code at all.  docs/runners.md describes the
 * model and why no wake-up is lost.
 */

#if KPN_THREADS

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* A test-and-test-and-set lock that yields the CPU when it spins long:
 * held for a few hundred instructions at most (a block, a wake, a
 * switch), so sleeping in the kernel would cost more than it saves. */
void kpni_lock(kpn_net *net)
{
    int spins = 0;

    while (__atomic_exchange_n(&net->lock, 1, __ATOMIC_ACQUIRE) != 0) {
        while (__atomic_load_n(&net->lock, __ATOMIC_RELAXED) != 0) {
            if (++spins < 100) {
                cpu_relax();
            } else {
                spins = 0;
                kpn_port_yield();
            }
        }
    }
}

void kpni_unlock(kpn_net *net)
{
    __atomic_store_n(&net->lock, 0, __ATOMIC_RELEASE);
}

/* An idle runner first spins ('sleeping' KPNI_SPINNING), then commits to
 * its semaphore (KPNI_ASLEEP).  Waking a runner that still spins is a
 * store it sees; only one that committed costs a post, a system call. */
static void wake_runner(kpn_net *net, kpni_runner *r)
{
    net->idle--;
    if (__atomic_exchange_n(&r->sleeping, KPNI_AWAKE, __ATOMIC_ACQ_REL) == KPNI_ASLEEP)
        kpn_port_sem_post(r->sem);
}

void kpni_runners_wake_all(kpn_net *net)
{
    unsigned i;

    for (i = 0; i < net->nrunners; ++i)
        if (KPNI_LOAD(&net->runners[i].sleeping) != KPNI_AWAKE)
            wake_runner(net, &net->runners[i]);
}

/* Under the lock: a woken process joins the front of its target's queue
 * (it ran last, so its stack is warm: Vrba's thesis, 4.2.2.4), and an
 * idle runner that can take it is woken.  Under KPN_POLICY_STATIC it
 * joins the back instead, the order one runner keeps, so that a stage
 * drains a batch before the next one runs (docs/runners.md). */
void kpni_sched_ready_mt(kpni_runner *waker, kpn_proc *p)
{
    kpn_net *net = waker->net;
    kpni_runner *t;
    unsigned i;

    if (net->cfg.policy == KPN_POLICY_STATIC)
        t = &net->runners[p->home];
    else if (net->cfg.wake == KPN_WAKE_WAKER)
        t = waker;
    else
        t = p->runner;
    if (net->cfg.policy == KPN_POLICY_STATIC)
        kpni_queue_push_back(t, p);
    else
        kpni_queue_push_front(t, p);
    if (KPNI_LOAD(&t->sleeping) != KPNI_AWAKE) {
        wake_runner(net, t);
    } else if (net->cfg.policy == KPN_POLICY_WS && net->idle > 0) {
        for (i = 0; i < net->nrunners; ++i)
            if (KPNI_LOAD(&net->runners[i].sleeping) != KPNI_AWAKE) {
                wake_runner(net, &net->runners[i]);
                break;
            }
    }
}

/* Take a process from the back of a random other runner's queue: the
 * back holds what its owner would run last. */
kpn_proc *kpni_runners_steal(kpni_runner *r)
{
    kpn_net *net = r->net;
    unsigned tries;

    if (net->cfg.policy != KPN_POLICY_WS)
        return NULL;
    for (tries = 0; tries + 1 < net->nrunners; ++tries) {
        kpni_runner *v;
        kpn_proc *p;
        r->rng ^= r->rng << 13;
        r->rng ^= r->rng >> 17;
        r->rng ^= r->rng << 5;
        v = &net->runners[(r->index + 1 + r->rng % (net->nrunners - 1)) % net->nrunners];
        r->steal_attempts++;
        p = v->tail;
        if (p != NULL) {
            kpni_queue_unlink(v, p);
            r->steals++;
            return p;
        }
    }
    return NULL;
}

/* Nothing is ready here.  If another runner is busy, spin, then sleep
 * until woken, and return 1 (the caller looks again); if every other
 * runner is idle too, return 0: the net is at rest.  Lock held. */
int kpni_runners_idle(kpni_runner *r)
{
    kpn_net *net = r->net;
    int spin, spinning = KPNI_SPINNING;

    if (net->idle + 1 >= net->nrunners)
        return 0;
    KPNI_STORE(&r->sleeping, KPNI_SPINNING);
    net->idle++;
    kpni_unlock(net);
    for (spin = 1; spin <= KPNI_IDLE_SPINS && KPNI_LOAD(&r->sleeping); ++spin) {
        cpu_relax();
        if (spin % 128 == 0)
            kpn_port_yield(); /* a runner sharing this CPU goes first */
    }
    if (__atomic_compare_exchange_n(&r->sleeping, &spinning, KPNI_ASLEEP, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        r->sleeps++;
        kpn_port_sem_wait(r->sem);
    }
    kpni_lock(net);
    return 1;
}

int kpni_runners_done(const kpni_runner *r)
{
    return r->mt && r->net->done;
}

/* A runner's loop is over: so is the run, for every runner. */
void kpni_runners_finish(kpni_runner *r)
{
    kpn_net *net = r->net;

    net->done = 1;
    kpni_runners_wake_all(net);
    kpni_unlock(net);
}

static void runner_thread(void *arg)
{
    kpni_sched_loop(arg);
}

/* Runner 0 is the calling thread; the others are started for this run
 * and joined before it returns. */
kpn_status kpni_runners_run(kpn_net *net)
{
    unsigned i, started;
    kpn_chan *c;

    /* Under KPN_POLICY_STATIC a process runs only on its home runner, so
     * a channel whose ends share one is never used from two threads at
     * once (chan.c, release). */
    for (c = net->chans; c != NULL; c = c->next)
        c->cross = net->cfg.policy != KPN_POLICY_STATIC || c->input ||
                   c->writer->home != c->reader->home;
    net->done = 0;
    net->idle = 0;
    for (i = 0; i < net->nrunners; ++i)
        KPNI_STORE(&net->runners[i].sleeping, KPNI_AWAKE);
    for (started = 1; started < net->nrunners; ++started) {
        kpni_runner *r = &net->runners[started];
        if (kpn_port_thread_start(r->thread, r->stack, net->cfg.runner_stack, runner_thread, r) != 0)
            break;
    }
    if (started < net->nrunners) {
        kpni_lock(net);
        net->done = 1;
        kpni_runners_wake_all(net);
        kpni_unlock(net);
    } else {
        kpni_sched_loop(&net->runners[0]);
    }
    for (i = 1; i < started; ++i)
        kpn_port_thread_join(net->runners[i].thread);
    return started < net->nrunners ? KPN_ETHREAD : KPN_OK;
}

#else

typedef int kpni_no_runners; /* ISO C wants something in a file */

#endif /* KPN_THREADS */
