/* SPDX-License-Identifier: MIT */
/* The scheduler: run queue, the one place a process gives up the CPU, and kpn_run. */
#include "kpn_int.h"

static kpn_proc *pop_ready(kpni_runner *r)
{
    kpn_proc *p = r->head;

    if (p != NULL) {
        r->head = p->next_ready;
        if (r->head == NULL)
            r->tail = NULL;
    }
    return p;
}

static void dispatch(kpni_runner *r, kpn_proc *p)
{
    p->state = KPN_PROC_RUNNING;
    p->switches++;
    r->net->switches++;
    r->current = p;
}

/*
 * Every switch away from a process happens here, at one call site, so the
 * port's switch always returns to the same place and the branch predictor
 * learns it (measured: ~7 ns a hop better than scattered call sites).  The
 * next ready process is resumed directly; the host thread only when none
 * is left.  The guard check rides along: a process that overran its stack
 * is stopped here, before anything else trusts that memory.
 */
static KPNI_NOINLINE void park(kpn_proc *self)
{
    kpni_runner *r = self->runner;
    kpn_proc *next;

    if (KPNI_UNLIKELY(!kpni_proc_guard_ok(self))) {
        self->state = KPN_PROC_FAULTED;
        r->net->fault = self;
        r->net->halt = KPN_ESTACK;
        r->current = NULL;
        kpn_port_switch(self->ctx, r->host);
        KPN_ASSERT(0); /* a faulted process is never resumed */
    }
    /* once the run must stop, processes still ready stay queued for the
     * next kpn_run and control goes back to the host */
    next = KPNI_LIKELY(r->net->halt == KPN_OK) ? pop_ready(r) : NULL;
    if (next != NULL) {
        dispatch(r, next);
        kpn_port_switch(self->ctx, next->ctx);
    } else {
        r->current = NULL;
        kpn_port_switch(self->ctx, r->host);
    }
}

/* Block 'self' on channel 'on'.  With the resolver on, this is where a
 * deadlock closes.  A write-block always walks its chain, to find a cycle
 * or to mark where the chain ends (usually one step: the reader is
 * running or ready).  A read-block walks only if it can close a cycle
 * with a writer in it: someone waits on 'self' and 'self' is watched
 * (resolve.c says why); otherwise it costs an increment and two tests.
 * If the resolver grows self's own channel, 'self' does not block. */
void kpni_sched_block(kpn_proc *self, kpn_proc_state why, kpn_chan *on)
{
    self->state = why;
    self->wait = on;
    if (self->runner->resolve) {
        kpni_proc_waits_for(self)->nwaiters++;
        if ((why == KPN_PROC_BLOCKED_WRITE || (self->watched && self->nwaiters != 0)) &&
            kpni_resolve_block(self))
            return;
    }
    park(self);
}

void kpni_sched_exit(kpn_proc *self)
{
    self->state = KPN_PROC_EXITED;
    kpni_proc_finish(self);
    park(self);
    KPN_ASSERT(0); /* an exited process is never resumed */
}

kpn_status kpn_run(kpn_net *net)
{
    kpni_runner *r;
    kpn_proc *p;
    kpn_status halt;

    if (!kpni_net_valid(net))
        return KPN_EINVAL;
    if (net->state == KPNI_NET_RUNNING)
        return KPN_ESTATE;
    if (net->state == KPNI_NET_FAULTED)
        return KPN_ESTACK;

    r = &net->runner;
    if (net->pending_chan != NULL && kpni_resolve_pending(net) != KPN_OK)
        return KPN_ERESERVE;
    net->state = KPNI_NET_RUNNING;
    for (;;) {
        /* The host resumes only when no process is ready or the run must
         * stop, so this loop turns about once per quiet spell. */
        while (net->halt == KPN_OK && (p = pop_ready(r)) != NULL) {
            dispatch(r, p);
            kpn_port_switch(r->host, p->ctx);
        }
        r->current = NULL;
        if (net->halt != KPN_OK || !r->resolve)
            break;
        halt = kpni_resolve_quiet(net);
        if (halt == KPN_OK)
            continue; /* a writer was released */
        if (halt == KPN_ERESERVE)
            net->halt = KPN_ERESERVE;
        break;
    }

    /* The switch checks only the guard words nearest each stack; a frame
     * with a gap can step over them.  Before declaring the run over,
     * check every band whole. */
    for (p = net->procs; p != NULL && net->fault == NULL; p = p->next) {
        if (!kpni_proc_guard_intact(p)) {
            p->state = KPN_PROC_FAULTED;
            net->fault = p;
        }
    }
    if (net->fault != NULL) {
        net->state = KPNI_NET_FAULTED;
        net->halt = KPN_ESTACK;
        return KPN_ESTACK;
    }
    net->state = KPNI_NET_IDLE;
    halt = net->halt;
    net->halt = KPN_OK;
    if (halt != KPN_OK)
        return halt;
    if (net->cfg.strict && net->true_deadlocks != 0)
        return KPN_EDEADLOCK;
    for (p = net->procs; p != NULL && !r->resolve; p = p->next)
        if (p->state == KPN_PROC_BLOCKED_WRITE)
            return KPN_EDEADLOCK;
    return KPN_OK;
}
