/* SPDX-License-Identifier: MIT */
/* The deadlock resolver: Geilen-Basten detection as blocks happen, growth from the pool. */
#include "kpn_int.h"

/*
 * A blocked process waits on one channel, so it has one wait-for edge: to
 * the other end of that channel, the only process that can release it.
 * Following edges from a process gives its chain; a chain ends at a
 * process that is not blocked, or runs into a cycle.  A cycle is stable:
 * every member waits on another member, and nobody outside a 1:1 channel
 * can touch it.  A cycle with a process blocked on a write is an
 * artificial deadlock (a bigger channel breaks it); one of readers only is
 * a true deadlock (Kahn termination for those processes).
 *
 * Walking the chain on every block costs the chain's length, ~1000 steps a
 * hop in the papers' ring, where every block is a read.  Reads are where
 * the savings are:
 *
 *  - 'watched': a read-block by X closes an artificial cycle only if the
 *    cycle holds a write-blocked W, whose chain then ended at X.  So every
 *    write-block walks to the end of its chain and marks it, and a
 *    read-block walks only from a marked process.  A wake moves the end
 *    of chains from the waker to the woken process (the waker is the
 *    process the woken one waited on), so the woken process inherits the
 *    mark (kpni_wake_rule_as).  Marks may outlive their chains; a stale mark
 *    costs a walk, never a missed deadlock.
 *
 *  - Stale marks: a chain that ends at X holds a process waiting on X.
 *    So a process nobody waits on takes no mark as it is woken, where the
 *    count below says so (one thread runs the net: one runner, or a solo
 *    runner, which counted afresh as it went solo).  And a marked
 *    process that read-blocks while nobody waits on it, one thread
 *    running the net, drops its mark: it ends no chain, and blocked it
 *    ends none.  Kept for good, a mark handed down a stream sent every
 *    later read-block of every process on it down the path that walks:
 *    a ring of 12 processes with 6 tokens took a fifth more instructions
 *    a hop for it.
 *
 *  - 'nwaiters': a cycle closed by X's block runs through X, so some
 *    blocked process waits on X.  A marked X that nobody waits on holds a
 *    stale mark, and its read-block need not walk.
 *
 * docs/resolver.md gives the argument in full.
 */

/* The member after 'p' on a cycle found under every lock.  The members
 * stay blocked: a runner whose look at one has gone stale may still try
 * to claim it (runners.c, kpni_inbox_wake), but the channel that look
 * names is not the one the member waits on, whose other end is blocked,
 * not claiming, and the claim fails. */
static kpn_proc *member_next(const kpn_proc *p)
{
    const kpn_chan *c = KPNI_LOAD(&p->wait);

    KPN_ASSERT(c != NULL && !KPNI_IS_CLAIMED(c) && c != KPNI_MOVING);
    return KPNI_LOAD(&p->state) == KPN_PROC_BLOCKED_READ ? c->writer : c->reader;
}

static void record_true_deadlock(kpn_net *net, kpn_proc *member)
{
    kpn_proc *p = member;

    do {
        p->dead = 1;
        p = member_next(p);
    } while (p != member);
    if (net->true_deadlocks < KPNI_DEADLOCK_RECORDS)
        net->deadlocks[net->true_deadlocks] = member;
    net->true_deadlocks++;
    if (net->cfg.strict)
        kpni_sched_halt(net, KPN_EDEADLOCK);
}

/* Release 'w', blocked writing a channel that has just grown.  Every
 * other member of its cycle now has a chain ending at 'w'. */
static void release_writer(kpn_proc *w)
{
    w->watched = 1;
    kpni_sched_ready(w->runner, w);
}

/* The full channel of least capacity on the cycle through 'member', the
 * first from 'member' on a tie; NULL if every member reads. */
static kpn_chan *smallest_full(kpn_proc *member)
{
    kpn_chan *smallest = NULL;
    kpn_proc *p = member;

    do {
        kpn_chan *c = KPNI_LOAD(&p->wait);

        if (KPNI_LOAD(&p->state) == KPN_PROC_BLOCKED_WRITE &&
            (smallest == NULL || c->cap < smallest->cap))
            smallest = c;
        p = member_next(p);
    } while (p != member);
    return smallest;
}

/* 'self' closed a cycle.  Resolve it or record it; returns 1 if 'self'
 * itself may go on (its own channel grew).  A walk put off ('parked':
 * runners.c) is made for 'self' by its runner, with 'self' parked: it
 * is released as any other writer. */
static int on_cycle(kpn_proc *self, int parked)
{
    kpn_net *net = self->net;
    kpn_chan *smallest = smallest_full(self);

    if (smallest == NULL) {
        record_true_deadlock(net, self);
        return 0;
    }
    if (kpni_chan_grow(smallest) != KPN_OK) {
        kpni_sched_halt(net, KPN_ERESERVE);
        net->pending = self;
        net->pending_chan = smallest;
        return 0;
    }
    net->resolutions++;
    if (smallest->writer != self || parked) {
        release_writer(smallest->writer);
        return 0;
    }
    /* 'self' does not block after all: undo what blocking did */
    KPNI_NWAITERS_ADD_ON(KPNI_MT(self->runner), KPNI_LOAD(&self->wait), kpni_proc_waits_for(self),
                         -1);
    KPNI_STORE(&self->state, KPN_PROC_RUNNING);
    KPNI_STORE(&self->wait, (kpn_chan *)NULL);
    self->watched = 1;
    return 1;
}

/* Whether 'next', the other end of channel 'c', is on self's runner,
 * which self's lock keeps it on (runners.c): a channel that does not
 * cross, or under work stealing a process that runs there now. */
static int stays(const kpn_proc *self, const kpn_chan *c, const kpn_proc *next)
{
    return !KPNI_CROSS(c) || (!c->input && KPNI_LOAD(&next->runner) == self->runner);
}

/* The process 'p' waits for now, on '*on', or NULL if it waits for
 * none.  A walk may meet a process just as its runner's thread makes it
 * ready with no lock (docs/runners.md, "Wakes with no lock"), which
 * stores the state, then clears 'wait', or as a runner claims it to
 * wake it through another's inbox ('wait' claimed, then the
 * state): each is read once here, and either ends the chain. */
static kpn_proc *waits_for_now(const kpn_proc *p, const kpn_chan **on)
{
    unsigned s = KPNI_LOAD(&p->state);
    const kpn_chan *c = KPNI_LOAD(&p->wait);

    if (c == NULL || KPNI_IS_CLAIMED(c) || c == KPNI_MOVING ||
        (s != KPN_PROC_BLOCKED_READ && s != KPN_PROC_BLOCKED_WRITE))
        return NULL;
    *on = c;
    return s == KPN_PROC_BLOCKED_READ ? c->writer : c->reader;
}

/* The end of self's chain: the first process on it that is not blocked,
 * or 'self' (a cycle), or a dead one; NULL after more steps than there
 * are processes, or if 'self' no longer waits.  (An artificial cycle is
 * resolved when it closes, or left to the scan at rest by a run that
 * stopped, and a read-only one never moves again, so a walk can only
 * circle where it met a cycle not yet recorded or left by a stop: stop
 * there; the scan at rest records or resolves it.)  'left' non-NULL:
 * follow only channels that do not cross, and return NULL with *left set
 * at the first that does (kpni_resolve_block_local).  '*before': the
 * process before the end on the chain, which waits on it. */
static kpn_proc *chain_end(kpn_proc *self, int *left, kpn_proc **before)
{
    kpn_proc *p = self, *prev = NULL;
    size_t steps = 0;

    do {
        const kpn_chan *on;
        kpn_proc *next = waits_for_now(p, &on);

        if (next == NULL) /* woken as the walk came: the chain ends at p */
            break;
        if (left != NULL && !stays(self, on, next)) {
            *left = 1;
            return NULL;
        }
        if (++steps > self->net->nprocs)
            return NULL;
        prev = p;
        p = next;
    } while (kpni_proc_blocked(p) && p != self && !p->dead);
    if (p == self && prev == NULL)
        return NULL;
    *before = prev;
    return p;
}

/* A walk's chain ends at 'end', which 'before' waits on: mark it.  Where
 * 'end' is on another runner than the walk's and that runner's thread
 * makes its wakes with no lock, 'end' may be releasing 'before' at this
 * moment, having read its own mark before this one came, so that
 * 'before' would not inherit it: 'before' is marked too (a stale mark
 * costs a walk, never a missed deadlock). */
static void mark_end(const kpni_runner *walker, kpn_proc *end, kpn_proc *before)
{
    kpni_runner *r = KPNI_LOAD(&end->runner);

    KPNI_STORE(&end->watched, (unsigned char)1);
    if (before != NULL && KPNI_MT(walker) && r != walker && KPNI_OWN(r))
        KPNI_STORE(&before->watched, (unsigned char)1);
}

/* Called by a process that has just marked itself blocked: on a write
 * (its chain's end must be marked, or it closes a cycle), or on a read
 * while watched and waited on (it may close a cycle with a writer in
 * it).  Returns 1 if it may go on instead of parking. */
int kpni_resolve_block(kpn_proc *self)
{
    kpn_proc *p, *before = NULL;

    self->runner->detections++; /* per runner: no line shared between threads */
    self->watched = 0;
    p = chain_end(self, NULL, &before);
    if (p == self)
        return on_cycle(self, 0);
    if (p != NULL && !p->dead)
        mark_end(self->runner, p, before); /* the chain ends at 'p' for now */
    /* A chain into a true deadlock never moves again; if it holds a
     * write-blocked process, kpni_resolve_quiet grows its channel once
     * nothing else can run. */
    return 0;
}

/* kpni_resolve_block under the lock of self's runner alone (several
 * runners): the chain is followed only along channels that do not cross,
 * so every process it reads is homed on self's runner, and that lock
 * keeps them all still (docs/runners.md).  Returns KPNI_WALK_ENDED if the
 * chain ended there, at a process that is not blocked, marked just as
 * kpni_resolve_block marks it; else, having changed nothing,
 * KPNI_WALK_LEFT if it came to a channel that crosses (the walk may be
 * put off: runners.c), or KPNI_WALK_ALL if it came to a cycle or a dead
 * process, which a walk under every lock must deal with now. */
int kpni_resolve_block_local(kpn_proc *self)
{
    int left = 0;
    kpn_proc *before;
    kpn_proc *p = chain_end(self, &left, &before);

    if (left)
        return KPNI_WALK_LEFT;
    if (p == NULL || p == self || p->dead)
        return KPNI_WALK_ALL;
    self->runner->detections++;
    self->watched = 0;
    p->watched = 1;
    return KPNI_WALK_ENDED;
}

/* The walk kpni_resolve_block would have made for 'p', which parked
 * without it and is still blocked, made now by runner 'r' under every
 * runner's lock (runners.c, "Walks put off"). */
void kpni_resolve_parked(kpni_runner *r, kpn_proc *p)
{
    kpn_proc *end, *before = NULL;

    r->detections++;
    end = chain_end(p, NULL, &before);
    if (end == NULL)
        return; /* too long, or 'p' woken meanwhile: it keeps its mark */
    /* 'p' ends no chain while it waits; not before the walk has seen it
     * wait: a wake with no lock may just have handed it a mark */
    KPNI_STORE(&p->watched, (unsigned char)0);
    if (end == p)
        (void)on_cycle(p, 1);
    else if (!end->dead)
        mark_end(r, end, before);
}

/* Record every true deadlock not yet recorded: each blocked process's
 * chain is followed once, stamping it with the walk's number, so a walk
 * that meets its own stamp has found a new cycle.  O(processes).
 * Returns a member of a cycle with a writer in it, if one is found, else
 * NULL: an artificial deadlock that no walk resolved as it closed (a
 * run stopped for the reserve by a cycle on another runner, say). */
static kpn_proc *record_cycles(kpn_net *net)
{
    kpn_proc *s, *p, *artificial = NULL;
    uint32_t walk = 0; /* one stamp per process at most: 'seen' is 32 bits */

    for (s = net->procs; s != NULL; s = s->next) {
        ++walk;
        for (p = s; kpni_proc_blocked(p) && !p->dead && p->seen == 0; p = kpni_proc_waits_for(p))
            p->seen = walk;
        if (kpni_proc_blocked(p) && !p->dead && p->seen == walk) {
            if (smallest_full(p) == NULL)
                record_true_deadlock(net, p);
            else if (artificial == NULL)
                artificial = p;
        }
    }
    for (s = net->procs; s != NULL; s = s->next)
        s->seen = 0;
    return artificial;
}

/* kpn_run with cfg.strict and no resolver: record the true deadlocks. */
void kpni_resolve_record(kpn_net *net)
{
    (void)record_cycles(net); /* no resolver: an artificial cycle stays */
}

/* Grow 'c', full, at rest, and release its writer; 'from' is where
 * kpn_report's chain starts should the pool not hold the growth. */
static kpn_status grow_at_rest(kpn_net *net, kpn_proc *from, kpn_chan *c)
{
    net->detections++;
    if (kpni_chan_grow(c) != KPN_OK) {
        net->pending = from;
        net->pending_chan = c;
        return KPN_ERESERVE;
    }
    net->resolutions++;
    release_writer(c->writer);
    return KPN_OK;
}

/* With input channels a blocked writer's chain may also end at the
 * outside (a reader waiting for input): that is no deadlock, and growing
 * its channel would only let it run ahead of the input.  Only a chain
 * into a true deadlock qualifies. */
static int waits_on_true_deadlock(const kpn_net *net, const kpn_proc *p)
{
    size_t steps = 0;

    while (kpni_proc_blocked(p) && !p->dead && steps++ <= net->nprocs)
        p = kpni_proc_waits_for(p);
    return p->dead;
}

/*
 * Nothing can run.  Record the true deadlocks, then resolve an
 * artificial cycle that is still closed: its walk found it, but another
 * runner's cycle stopped the run for the reserve at the same time, and
 * only one is kept for the next run to retry.  Otherwise look for a
 * process still blocked on a write: it waits (through others, perhaps)
 * on a true deadlock, and would go on with a bigger channel.  Grow the
 * smallest such full channel, as Parks does at a global deadlock, and
 * let the run go on.  KPN_OK: a writer was released.  KPN_ERESERVE: the
 * pool could not hold the growth.  KPN_EDEADLOCK: nothing to release
 * (Kahn termination).
 */
kpn_status kpni_resolve_quiet(kpn_net *net)
{
    kpn_proc *p, *writer = NULL;

    if (net->nexited == net->nprocs)
        return KPN_EDEADLOCK; /* the usual end: every process returned */
    p = record_cycles(net);
    /* cfg.strict: a true deadlock just recorded ends the run, which grows
     * nothing more (nor asks the pool for it, whose failure would hide
     * the deadlock behind KPN_ERESERVE) */
    if (KPNI_LOAD(&net->halt) != KPN_OK)
        return KPN_EDEADLOCK;
    if (p != NULL)
        return grow_at_rest(net, p, smallest_full(p));
    for (p = net->procs; p != NULL; p = p->next)
        if (p->state == KPN_PROC_BLOCKED_WRITE &&
            (writer == NULL || p->wait->cap < writer->wait->cap) &&
            (net->ninputs == 0 || waits_on_true_deadlock(net, p)))
            writer = p;
    if (writer == NULL)
        return KPN_EDEADLOCK;
    return grow_at_rest(net, writer, writer->wait);
}

static void forget_pending(kpn_net *net)
{
    net->pending = NULL;
    net->pending_chan = NULL;
    net->pending_bytes = 0;
}

/* A run that stopped with KPN_ERESERVE left a closed cycle unresolved;
 * try it again (after kpn_reserve_add, say).  A cycle is stable, so the
 * channel it needs to grow is the one recorded, unless another walk
 * resolved it first: with several runners a process of the same cycle
 * may be walking when the stop is recorded, grow a channel of its own
 * that fits where the recorded one did not, and go on, and the recorded
 * writer may then be woken before the run ends.  If that writer no
 * longer waits on the channel, or its chain now ends at a process that
 * can run (the other walk released one, which the stop kept from
 * running), there is nothing left to resolve: growing the channel then
 * would take reserve no deadlock needs, and stop the run for it. */
kpn_status kpni_resolve_pending(kpn_net *net)
{
    kpn_chan *c = net->pending_chan;
    kpn_proc *end, *before;

    if (c == NULL)
        return KPN_OK;
    if (c->writer->state != KPN_PROC_BLOCKED_WRITE || c->writer->wait != c ||
        ((end = chain_end(c->writer, NULL, &before)) != NULL && end != c->writer && !end->dead)) {
        forget_pending(net);
        return KPN_OK;
    }
    if (kpni_chan_grow(c) != KPN_OK)
        return KPN_ERESERVE;
    forget_pending(net);
    net->resolutions++;
    release_writer(c->writer);
    return KPN_OK;
}
