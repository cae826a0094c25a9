/* SPDX-License-Identifier: MIT */
/* The scheduler: run queues, the one place a process gives up the CPU, a runner's loop, kpn_run. */
#include "kpn_int.h"

#ifdef KPNI_TSAN
/* 'back' is the fiber of the context that switches: when the switch
 * returns, TSan must be in it again.  After a real switch whoever
 * resumed us has already said so; a switch that returns without
 * switching (a mocked port, test_sched_port) would otherwise leave TSan
 * in the fiber it announced, with this stack's calls pushed on that
 * fiber's shadow stack. */
static void tsan_back(void *back)
{
    if (__tsan_get_current_fiber() != back)
        __tsan_switch_to_fiber(back, 0);
}
#define SWITCH(from, to, fiber, back)                                                    \
    (__tsan_switch_to_fiber((fiber), 0), kpn_port_switch((from), (to)), tsan_back(back))
#define FIBER(p) ((p)->fiber)
#else
#define SWITCH(from, to, fiber, back) kpn_port_switch((from), (to))
#define FIBER(p) NULL
#endif

/* ------------------------------------------------------------------ */
/* Run queues (kpn_int.h has the deque itself) */

/* Spawn and kpn_proc_pin: the back of 'r', in the order they come. */
void kpni_sched_enqueue(kpni_runner *r, kpn_proc *p)
{
    if (KPNI_LOAD(&p->state) == KPN_PROC_READY && p->runner != NULL)
        kpni_queue_unlink(p->runner, p);
    KPNI_STORE(&p->state, KPN_PROC_READY);
    kpni_queue_push_back(r, p);
}

/* A process's first run, in a net whose processes have not run yet
 * (one just built, whose queue holds them all in spawn order): 'p' is
 * about to run for the first time, so most likely 'after', queued behind
 * it, is too.  Its first run touches the rest of its record, the
 * start-up frames below its stack's top (where the port's entry, the
 * process function and the calls it makes lay theirs: a worker of
 * bench/aes peaks at 360 bytes), and, for 'p', the channels at the heads
 * of its lists and its argument, which 'p''s record, asked for at the
 * switch before, now names.  Where there are more such processes than
 * the caches hold, each of those lines is a miss of its own: asking for
 * them all at once took 3 to 5 ms off the run of 16 384 workers of
 * bench/aes (docs/benchmarks.md, "AES").  A process that has run before
 * has its frames elsewhere and its lines warmer, and a fine-grained net
 * switches too often to pay for asking (a ring of 12 processes with 6
 * tokens took 1.09 times as long a hop asking at every switch), so only
 * a first run asks.  The compact build keeps no lists to follow. */
static KPNI_INLINE void first_run_ahead(uintptr_t top, const kpn_proc *p, const kpn_proc *after)
{
#if KPN_COMPACT
    (void)top, (void)p, (void)after;
#else
    unsigned i;

    for (i = 1; i < 4; ++i)
        KPNI_PREFETCH_W((uintptr_t)after + KPNI_LINE * i);
    for (i = 2; i <= 6; ++i)
        KPNI_PREFETCH_W(top - KPNI_LINE * i);
    /* the lines of a channel a run uses: shared, writer's (the reader's
     * words too, where its ends share a runner), and the lists' links */
    KPNI_PREFETCH_W(p->ins);
    KPNI_PREFETCH_W((uintptr_t)p->ins + KPNI_LINE);
    KPNI_PREFETCH_W((uintptr_t)p->ins + offsetof(kpn_chan, next));
    KPNI_PREFETCH_W(p->outs);
    KPNI_PREFETCH_W((uintptr_t)p->outs + KPNI_LINE);
    KPNI_PREFETCH_W((uintptr_t)p->outs + offsetof(kpn_chan, next));
    KPNI_PREFETCH_W(p->arg);
#endif
}

/* Switching to 'p', which leaves the process queued behind it at the
 * front: start loading what that one's switch will touch first, the line
 * of its record and context and the line of stack below it (the
 * start-up frame of one that has never run).  Where processes run long
 * and there are more of them than the caches hold (AES with 16 384
 * workers), those lines are cold: without the prefetch, the switch from
 * one worker's return to the next one's start waits about 850 cycles on
 * them, with it about 40.  In a fine-grained net they are warm, and the
 * test folds into the queue's own. */
static KPNI_INLINE void dispatch(kpni_runner *r, kpn_proc *p)
{
    kpn_proc *after = r->head;

    if (after != NULL) {
        uintptr_t top = (uintptr_t)after - r->ctx_off;

        KPNI_PREFETCH_W((uintptr_t)after);
        KPNI_PREFETCH_W(top - KPNI_LINE);
        if (KPNI_UNLIKELY(p->switches == 0))
            first_run_ahead(top, p, after);
    }
    KPNI_STORE(&p->state, KPN_PROC_RUNNING);
    KPNI_STORE(&p->runner, r);
    p->switches++;
    r->switches++;
    KPNI_STORE(&r->current, p);
}

#if KPN_THREADS
/* ------------------------------------------------------------------ */
/* Draining.  First in, first out keeps a net of short hand-offs in the
 * orbit it finds.  A runner that goes solo on a pipeline of capacity 1
 * that two runners have filled (every second channel holding a message,
 * or more) keeps its processes blocking on reads and writes alike, where
 * one runner from the start settles with the source alone
 * write-blocking.  In the mixed orbit a process that parked in a send
 * resumes after one that parked in a receive, its returns miss the
 * predictions the other's calls left, and every write-block walks for
 * the resolver: the 10-stage pipeline ran at about half one runner's
 * pace there (docs/benchmarks.md, "Two runners: short pipelines").  For
 * a while after it goes solo, then, the runner queues a process
 * released from a write-block at the front, and at a switch takes the
 * second process queued instead of the first when only the first was
 * released so.  That drains the messages in flight until the pipeline
 * is in one runner's orbit, which first in, first out then keeps.  It
 * is only an order, and a bounded one: past the window no process is
 * passed over. */

/* r, going solo, drains for a while; no process counts as released. */
void kpni_sched_drain(kpni_runner *r)
{
    kpn_proc *p;
    size_t n = r->net->nprocs;

    for (p = r->net->procs; p != NULL; p = p->next)
        KPNI_SET_WOKE_WRITE(p, 0);
    r->drain = n < KPNI_DRAIN_MAX / KPNI_DRAIN_PER_PROC ? (unsigned)n * KPNI_DRAIN_PER_PROC
                                                        : KPNI_DRAIN_MAX;
}

/* A release from a write-block while r drains: ready at the front. */
void kpni_sched_ready_front(kpni_runner *r, kpn_proc *p, kpn_proc *by)
{
    kpn_proc *tail = r->tail;

    kpni_sched_ready_as(r, p, by, 0);
    if (tail != NULL) { /* queued behind 'tail': move it to the front */
        tail->next_ready = NULL;
        r->tail = tail;
        kpni_queue_push_front(r, p);
    }
    KPNI_SET_WOKE_WRITE(p, 1);
}

/* The process a draining runner switches to ('prev_ready' is not kept:
 * one thread runs the net). */
static KPNI_NOINLINE kpn_proc *pop_drain(kpni_runner *r)
{
    kpn_proc *p = r->head, *second;

    r->drain--;
    if (p != NULL && KPNI_WOKE_WRITE(p) && (second = p->next_ready) != NULL &&
        !KPNI_WOKE_WRITE(second)) {
        p->next_ready = second->next_ready;
        if (r->tail == second)
            r->tail = p;
        p = second;
    } else {
        p = kpni_queue_pop_front(r);
    }
    if (p != NULL)
        KPNI_SET_WOKE_WRITE(p, 0);
    return p;
}

/* A runner drains only while one thread runs the net (one runner, or a
 * solo one: kpni_runners_unsolo ends the window), so 'mt' is not asked. */
static KPNI_INLINE kpn_proc *pop_next(kpni_runner *r)
{
    if (KPNI_UNLIKELY(KPNI_DRAINING(r)))
        return pop_drain(r);
    return kpni_queue_pop_front(r);
}
#define DRAIN_WORD(r) ((r)->drain)
#else
#define pop_next(r) kpni_queue_pop_front(r)
#define DRAIN_WORD(r) 0u
#endif

/* ------------------------------------------------------------------ */
/* The scheduler's half of input channels (input.c has the other): the
 * readers that kpn_offer cannot make ready from outside the net. */

static int deliverable(const kpn_chan *c)
{
    const kpn_proc *p = c->reader;

    return c->input && KPNI_LOAD(&p->state) == KPN_PROC_BLOCKED_READ &&
           KPNI_LOAD(&p->wait) == c &&
           (KPNI_SHARED_LOAD(&c->sent) != KPNI_RECEIVED(c) || KPNI_SHARED_LOAD(&c->closed));
}

/* Make ready every reader blocked on an input that now has a message or
 * was closed; 'r' is the runner doing it (with several, every runner's
 * lock is held).  Returns whether any was made ready. */
int kpni_input_deliver(kpni_runner *r)
{
    kpn_net *net = r->net;
    kpn_chan *c;
    int woken = 0;

    KPNI_SHARED_STORE(&net->input_signal, 0u);
    KPNI_SHARED_FENCE();
    for (c = net->chans; c != NULL; c = c->next) {
        if (deliverable(c)) {
            kpni_sched_ready(r, c->reader);
            woken = 1;
        }
    }
    return woken;
}

/* Whether a process waits on an input that is still open: then the net
 * at rest is not finished, only waiting. */
int kpni_input_awaited(const kpn_net *net)
{
    const kpn_chan *c;

    for (c = net->chans; c != NULL; c = c->next)
        if (c->input && !KPNI_SHARED_LOAD(&c->closed) &&
            KPNI_LOAD(&c->reader->state) == KPN_PROC_BLOCKED_READ &&
            KPNI_LOAD(&c->reader->wait) == c)
            return 1;
    return 0;
}

/* The run must stop (a fault, an exhausted pool, a strict deadlock).
 * Processes still ready stay queued for the next kpn_run; every runner
 * returns to its host as its current process parks. */
void kpni_sched_halt(kpn_net *net, kpn_status why)
{
    KPNI_STORE(&net->halt, why);
    if (net->nrunners > 1)
        kpni_runners_wake_all(net);
}

/* Resume 'next', taken off r's queue by the caller, or r's host if
 * there is none (none is left, or the run must stop).  Ends in the
 * switch, a tail call: see park.  With several runners ('mt') the switch
 * hands r's lock over: to a process that parked while r ran solo, which
 * would not let go of it, only the host may switch, with the lock let go
 * (kpni_sched_loop). */
static KPNI_INLINE void park_switch(kpni_runner *r, kpn_proc *self, int mt, kpn_proc *next)
{
    if (mt && next != NULL && !KPNI_UNLOCKS(next)) {
        kpni_queue_push_front(r, next);
        next = NULL;
    }
    if (next != NULL) {
        dispatch(r, next);
        if (!mt || next != self) /* else woken from r's inbox as it parked */
            SWITCH(KPNI_CTX(r, self), KPNI_CTX(r, next), FIBER(next), FIBER(self));
    } else {
        KPNI_STORE(&r->current, (kpn_proc *)NULL);
        SWITCH(KPNI_CTX(r, self), r->host, FIBER(r), FIBER(self));
    }
}

/* Back in a process after its switch: with several runners, let go of
 * the lock of the runner that resumed it, which its resumer took for it
 * (see park).  A runner that resumes it solo holds no lock: the store
 * then lets go of one nobody holds, since nothing else takes a lock
 * while a runner is solo. */
static KPNI_INLINE void resumed(kpn_proc *self, int mt)
{
    if (mt) {
        KPNI_SET_UNLOCKS(self, 0);
        kpni_unlock(KPNI_LOAD(&self->runner));
    }
}

/* 'self' overran its stack: stop the run and never resume it.  With
 * several runners its runner's lock is held, and goes with the switch.
 * In line, not called: a park runs this on a stack that is already past
 * its end, where a frame of its own would reach further into what lies
 * below (an AddressSanitizer build's frame reached the record of the
 * process below). */
static KPNI_INLINE void overrun(kpn_proc *self)
{
    kpni_runner *r = self->runner;

    /* An overflow past the band may have reached the net's own fields
     * (the first stack lies just above them): then there is no
     * trustworthy way back, so stop here (fail-stop) rather than run on
     * damaged state. */
    if (!kpni_net_sane(self->net) || r->index >= self->net->nrunners ||
        r != &self->net->runners[r->index] || r->net != self->net)
        kpni_fail_stop();
    KPNI_STORE(&self->state, KPN_PROC_FAULTED);
    r->net->fault = self;
    kpni_sched_halt(r->net, KPN_ESTACK);
    KPNI_STORE(&r->current, (kpn_proc *)NULL);
    SWITCH(KPNI_CTX(r, self), r->host, FIBER(r), FIBER(self));
    KPN_ASSERT(0); /* a faulted process is never resumed */
}

/* park's rare cases: an overrun guard, input offered meanwhile, a run
 * that must stop, or a runner that drains. */
static KPNI_NOINLINE void park_cold(kpn_proc *self, int mt)
{
    kpni_runner *r = self->runner;

    if (!kpni_proc_guard_ok(self))
        overrun(self);
    /* An interrupt or another thread offered input (input.c): make its
     * readers ready now, so that a busy net takes input too.  The readers
     * may be homed anywhere: every runner's lock, if no other runner
     * holds one now (else the next switch delivers). */
    if (KPNI_LOAD(&r->net->input_signal) != 0 && kpni_lock_up_try(r)) {
        (void)kpni_input_deliver(r);
        kpni_lock_down(r);
    }
    KPNI_SET_UNLOCKS(self, mt);
    park_switch(r, self, mt, KPNI_LOAD(&r->net->halt) != KPN_OK ? NULL : pop_next(r));
    resumed(self, mt);
}

/*
 * Every switch away from a live process happens here, inlined into
 * kpni_sched_block and ending it: on one runner the switch is a tail
 * call, so the block's frame is gone before the port saves the
 * registers, and the process resumes straight in the channel code that
 * blocked.  What needs a call of its own (a fault, input) is in
 * park_cold, so that the common case saves no register and sets up no
 * frame before the port's switch does.  The guard check rides along: a
 * process that overran its stack is stopped here, before anything else
 * trusts that memory.  So do the looks at input and at 'halt': one test
 * of the two words together (beside each other in the net's first line)
 * when there is neither, and of the runner's 'drain' with them, on the
 * line the switch counts on, so that a switch pays nothing more for
 * draining than that word.
 *
 * With several runners ('mt') the runner's lock (runners.c) is held on
 * entry and travels with the switch: the context that resumes on that
 * runner releases it, so no other runner can resume this process before
 * its registers are saved.  When 'self' resumes in turn, here, it lets
 * go of the lock its resumer took for it; the caller never sees one.
 */
static KPNI_INLINE void park(kpni_runner *r, kpn_proc *self, int mt)
{
    KPNI_MARK_PARKED(self); /* first: self may be in r's inbox, which the park empties */
    if (mt)
        kpni_own_park(r);

    if (KPNI_UNLIKELY(!kpni_proc_guard_ok(self) ||
                      ((unsigned)KPNI_LOAD(&r->net->halt) | KPNI_LOAD(&r->net->input_signal) |
                       DRAIN_WORD(r)) != 0)) {
        park_cold(self, mt);
        return;
    }
    if (mt) /* cleared as it resumes: see KPNI_PF_UNLOCKS */
        KPNI_SET_UNLOCKS(self, 1);
    park_switch(r, self, mt, kpni_queue_pop_front(r));
    resumed(self, mt);
}

/* The resolver's walk as 'self' blocks (block_any says when): returns 1
 * if 'self' need not park after all.  With several runners a walk that
 * stays on this runner needs only its lock (kpni_resolve_block_local),
 * so that no other runner's lock line moves: a pipeline's usual
 * write-block.  One that leaves the runner is put off, and 'self' parks
 * (runners.c, "Walks put off"), unless this runner already has as many
 * put off as it keeps.  Any other walk lets go of that lock and takes
 * every runner's, in order, and 'self' may be woken in between; every
 * runner's walks put off are made then too. */
static int walk(kpni_runner *r, kpn_proc *self, kpn_proc_state why, int mt)
{
    int go_on, local;
    unsigned state;

    if (!mt)
        return kpni_resolve_block(self);
    local = kpni_resolve_block_local(self);
    if (local == KPNI_WALK_ENDED || (local == KPNI_WALK_LEFT && kpni_runners_put_off(r, self)))
        return 0;
    kpni_lock_up(r);
    kpni_runners_walk_put_off(r);
    /* Woken meanwhile, under a lock (queued here) or through r's inbox,
     * which a waker on another runner may claim self for even now, with
     * no lock: 'wait' first, then the state.  So the state first here:
     * READY from such a waker shows its claim. */
    state = KPNI_LOAD_ACQ(&self->state);
    if (KPNI_IS_CLAIMED(KPNI_LOAD(&self->wait))) {
        go_on = 0; /* parks, and r queues it as it empties the inbox */
    } else if (state != why) {
        kpni_queue_unlink(r, self);
        KPNI_STORE(&self->state, KPN_PROC_RUNNING);
        go_on = 1;
    } else if (self->dead) {
        /* a walk put off (an earlier block of self's, say) has just
         * recorded the true deadlock self closed: not twice */
        go_on = 0;
    } else {
        go_on = kpni_resolve_block(self);
    }
    kpni_lock_down(r);
    return go_on;
}

/* Block 'self' on channel 'on'.  With the resolver on, this is where a
 * deadlock closes.  A write-block always walks its chain, to find a cycle
 * or to mark where the chain ends (usually one step: the reader is
 * running or ready).  A read-block walks only if it can close a cycle
 * with a writer in it: someone waits on 'self' and 'self' is watched
 * (resolve.c says why); otherwise it costs an increment and two tests.
 * If the resolver grows self's own channel, 'self' does not block.
 *
 * With several runners the other end of a channel that crosses may be
 * filling or draining it at this very moment.  Publishing the blocked
 * state before looking at the channel again, while the other end
 * publishes its counter before looking at this state, means one of the
 * two sees the other: the message is not missed, or the wake is not.
 * The other end looks without that fence as it sends or receives
 * (chan.c, release_cross), so this runner remembers 'self' and looks
 * again when it runs out of work.  First of all, 'self' makes the fenced
 * look its own sends and receives left out (kpni_chan_flush): a process
 * that waits has woken every process its messages released.  A
 * resolver's walk that leaves this runner is put off (walk, above) or
 * needs every runner's lock; taking them lets go of this runner's for a
 * moment, in which the other end may wake 'self' (it is marked
 * blocked): then it takes itself back off the queue and goes on.  Walks
 * put off long enough ago are made before 'self' blocks, so that a
 * runner that never runs out of work still makes them.  Whether it
 * parked or not, it returns holding no lock.
 *
 * Under work stealing the marks follow the processes (runners.c,
 * "Moves").  A move that started one of self's channels crossing while
 * self ran left a note here, and self makes its fenced look first.  (One
 * made while a walk has let go of the lock needs none: self's messages
 * were all published before it did.)  And one of self's own wakes above
 * may bring the other end of 'on' here, so that 'on' stops crossing
 * after self found it empty or full while that end ran elsewhere: a
 * block that saw such a move ('unflips') fences and looks again as on a
 * crossing channel. */
static KPNI_NOINLINE void block_any(kpn_proc *self, kpn_proc_state why, kpn_chan *on)
{
    kpni_runner *r = self->runner;
    int mt;
    unsigned unflips = KPNI_UNFLIPS(r); /* before the wakes below */

    /* solo with more than one process ready: share them (runners.c),
     * unless a placement on one part keeps them all here */
    if (KPNI_SOLO(r) && r->head != r->tail && !KPNI_ONE_PART(r->net))
        kpni_runners_unsolo(r, 1);
    /* a trial's window on one part, which a solo runner closes */
    if (KPNI_SOLO(r) && KPNI_UNLIKELY(KPNI_WINDOW_DUE(r)))
        kpni_runners_window(r);
    mt = KPNI_MT(r); /* read once: the stores below may alias it */
    if (mt && KPNI_UNFENCED(self, KPNI_WRITES) != NULL)
        kpni_chan_flush(self, KPNI_WRITES);
    if (mt && KPNI_UNFENCED(self, KPNI_READS) != NULL)
        kpni_chan_flush(self, KPNI_READS);
    if (mt) {
        kpni_lock_block(r);
        if (KPNI_UNLIKELY(KPNI_FLIPPED(r) != 0))
            kpni_runners_look_flipped(r, self);
        if (KPNI_UNLIKELY(KPNI_WALKS_DUE(r)))
            kpni_runners_walk_due(r);
        if (KPNI_UNLIKELY(KPNI_ONE_PART(r->net)))
            kpni_runners_one_part(r);
        else if (KPNI_UNLIKELY(KPNI_WINDOW_DUE(r)))
            kpni_runners_window(r); /* two parts tried again */
        else if (KPNI_UNLIKELY(KPNI_PULL_PENDING(r)))
            kpni_runners_pull_due(r);
        /* every other runner asleep since r last asked: perhaps go solo.
         * Then nothing else runs, but self found 'on' empty or full
         * before: its other end may have run on another runner since
         * (sent, taken, returned) without a block to wake, and gone to
         * sleep.  So it looks again, as a block on a crossing channel
         * does below; with nothing else running, without a fence. */
        if (KPNI_UNLIKELY(KPNI_SOLO_DUE(r)) && kpni_runners_solo(r)) {
            if (!kpni_chan_must_block(on, why))
                return; /* solo: no lock to let go of */
            mt = 0;
        }
    }
    /* release: a waker on another runner that claims self by 'wait'
     * (runners.c, "Wakes from other runners") then writes self's queue
     * link, which this runner wrote last */
    KPNI_STORE_REL(&self->wait, on);
    KPNI_STORE(&self->state, (unsigned char)why);
    if (mt && (KPNI_CROSS(on) || KPNI_UNFLIPS(r) != unflips)) {
        kpni_chan_waiting(on, why); /* after the state: a look it asks for sees that */
        KPNI_FENCE();
        if (!kpni_chan_must_block(on, why)) {
            /* a waker on another runner may have claimed self meanwhile:
             * then self is, or is about to be, on r's inbox, and parks */
            if (!kpni_unclaim(self, on))
                goto parks;
            KPNI_STORE(&self->state, KPN_PROC_RUNNING);
            kpni_chan_woken(on, why);
            kpni_unlock(r);
            return;
        }
        kpni_runners_parked_cross(r, self);
    }
    if (r->resolve) {
        /* not self's fields: a waker may have claimed it already */
        KPNI_NWAITERS_ADD_ON(mt, on, why == KPN_PROC_BLOCKED_READ ? on->writer : on->reader, 1);
        if (why == KPN_PROC_BLOCKED_WRITE || (self->watched && kpni_proc_waited_on(self))) {
            if (walk(r, self, why, mt)) {
                if (mt)
                    kpni_unlock(r);
                return;
            }
        } else if (self->watched && (!mt || KPNI_NCROSS(self) == 0)) {
            /* nobody waits on self (resolve.c, "Stale marks"); where a
             * channel of self crosses, a look that found nobody may miss
             * a process blocking on it now, under another runner's lock */
            KPNI_STORE(&self->watched, (unsigned char)0);
        }
    }
    /* One thread: the switch is a tail call here too (park), so that a
     * process parked here resumes straight in the channel code, as one
     * parked by kpni_sched_block_read does.  The CPU predicts the
     * switch's return, and each return after it, from the calls of the
     * process that parked; read-blocks split between the two paths missed
     * them at every switch from one to the other: with marks let go
     * (resolve.c, "Stale marks"), a ring of 12 processes with 6 tokens
     * took 30 ns a hop with this switch a call, 20 as a tail call. */
    if (!mt) {
        park(self->runner, self, 0);
        return;
    }
parks:
    park(self->runner, self, 1);
}

/* A block that walks, as block_any makes it where one thread runs the
 * net and has nothing else to look at: a write-block with the resolver
 * on, which always walks, or a read-block of a marked process, which
 * walks if someone waits on it and else lets go of the mark (resolve.c,
 * "Stale marks"; the count is kept here, as kpni_wake_rule_as relies on).
 * Only 'self' lives across the walk. */
static KPNI_NOINLINE void block_walks(kpn_proc *self, kpn_proc_state why, kpn_chan *on)
{
    KPNI_STORE(&self->wait, on);
    KPNI_STORE(&self->state, (unsigned char)why);
    kpni_proc_waits_for(self)->nwaiters++;
    if (why == KPN_PROC_BLOCKED_READ && self->nwaiters == 0)
        self->watched = 0; /* nobody waits on self: it ends no chain */
    else if (kpni_resolve_block(self))
        return; /* the walk grew 'on' */
    park(self->runner, self, 0);
}

/* Holding r's lock, r 'own': whether a read-block of 'self' on 'on' is
 * all block_any would make of it.  'on' does not cross, and self owes
 * no look at one that does (KPNI_UNFENCED); no move has left a note
 * here, no walk put off is due, and no runner has gone dormant since r
 * last asked whether to go solo; and self's mark, if it has one, can
 * go: nobody waits on it along a channel that does not cross, and none
 * of its channels crosses (kpni_proc_waited_on).  The steps a
 * placement's trial asks of a runner at a block (its part to take, a
 * window to close, one part's pulls) are left to a later block: each
 * comes with a change of the placement or the trial that takes 'own'
 * away at r's next park (KPNI_OWN_OK), a block later. */
static KPNI_INLINE int block_lean_ok(const kpni_runner *r, const kpn_proc *self,
                                     const kpn_chan *on)
{
    return !KPNI_CROSS(on) &&
           ((uintptr_t)KPNI_UNFENCED(self, KPNI_WRITES) |
            (uintptr_t)KPNI_UNFENCED(self, KPNI_READS)) == 0 &&
           KPNI_FLIPPED(r) == 0 && !KPNI_WALKS_DUE(r) && !KPNI_SOLO_DUE(r) &&
           (!r->resolve || !self->watched || (self->nwaiters == 0 && KPNI_NCROSS(self) == 0));
}

/* A read-block on a runner that is 'own' ("Wakes with no lock" in
 * docs/runners.md: under KPN_POLICY_STATIC, or a placement kept on
 * several parts): the runner's lock, and then, where block_lean_ok says
 * so, the block as one runner makes it, with the park that joins the
 * inbox and own list to the queue, without block_any's tests of what a
 * runner that shares may owe.  Most read-blocks of a net under a
 * placement are such ones (docs/benchmarks.md, "What sharing costs in
 * instructions").  Else block_any, which takes the lock again. */
static KPNI_NOINLINE void block_lean(kpn_proc *self, kpn_chan *on)
{
    kpni_runner *r = self->runner;

    kpni_lock_block(r);
    if (KPNI_UNLIKELY(!block_lean_ok(r, self, on))) {
        kpni_unlock(r);
        block_any(self, KPN_PROC_BLOCKED_READ, on);
        return;
    }
    KPNI_STORE_REL(&self->wait, on); /* release: as in block_any */
    KPNI_STORE(&self->state, KPN_PROC_BLOCKED_READ);
    if (r->resolve) {
        on->writer->nwaiters++; /* 'on' does not cross */
        if (self->watched)
            KPNI_STORE(&self->watched, (unsigned char)0);
    }
    park(r, self, 1);
}

/* The blocks, by kind; kpni_sched_block picks the entry where 'why' is a
 * constant, so no block tests it.  The common one, a read-block on one
 * runner that walks nothing (by a process no write-blocked chain ends
 * at, or with no resolver), is made here with no call but the switch,
 * so no frame.  Blocks that walk take block_walks where one thread runs
 * the net, and block_any wherever it has more to do: several runners
 * (but for a read-block on a runner that is own, which tries block_lean
 * first), a solo runner that may share its queue (not on one part) or
 * close a trial's window, a write-block without the resolver (rare
 * enough), and a small memory, which keeps one copy of park the fewer. */
void kpni_sched_block_read(kpn_proc *self, kpn_chan *on)
{
    kpni_runner *r = self->runner;
    int resolve = r->resolve; /* once: the stores below may alias it */

    if (KPNI_SLOW_READS(r) || (resolve && self->watched)) {
        if (KPNI_OWN(r)) {
            block_lean(self, on);
            return;
        }
        if (KPN_COMPACT || KPNI_SLOW_READS(r) || (KPNI_SOLO(r) && !KPNI_ONE_PART(r->net)))
            block_any(self, KPN_PROC_BLOCKED_READ, on);
        else
            block_walks(self, KPN_PROC_BLOCKED_READ, on);
        return;
    }
    KPNI_STORE(&self->wait, on);
    KPNI_STORE(&self->state, KPN_PROC_BLOCKED_READ);
    if (resolve) /* kpni_proc_waits_for(self): 'on''s writer */
        on->writer->nwaiters++;
    park(r, self, 0);
}

void kpni_sched_block_write(kpn_proc *self, kpn_chan *on)
{
    kpni_runner *r = self->runner;

    if (KPN_COMPACT || KPNI_SLOW_READS(r) || !r->resolve ||
        (KPNI_SOLO(r) && (!KPNI_ONE_PART(r->net) || KPNI_WINDOW_DUE(r))))
        block_any(self, KPN_PROC_BLOCKED_WRITE, on);
    else
        block_walks(self, KPN_PROC_BLOCKED_WRITE, on);
}

/* An exit wakes the other ends of its channels, on any runner: every
 * runner's lock. */
void kpni_sched_exit(kpn_proc *self)
{
    kpni_runner *r = self->runner;

    if (KPNI_MT(r))
        kpni_lock_all(r);
    KPNI_STORE(&self->state, KPN_PROC_EXITED);
    kpni_proc_finish(self);
    if (KPNI_MT(r)) {
        /* what a move noted here is for self's channels, whose other
         * ends the finish has just woken (or was left by an earlier
         * process's walk, which needs no look: block_any) */
        KPNI_FORGET_FLIPS(r);
        kpni_lock_down(r);
        kpni_own_park(r); /* before an overrun's switch, below */
    }
    /* The whole band, not only the words nearest the stack that every
     * switch checks: its stack is never used again, so the check at the
     * end of the run (find_fault) leaves an exited process's band to
     * this one, made while its lines are likely still at hand. */
    if (!kpni_proc_guard_intact(self))
        overrun(self);
    park(self->runner, self, KPNI_MT(r)); /* never resumed: nothing follows the switch */
    KPN_ASSERT(0); /* an exited process is never resumed */
}

/* ------------------------------------------------------------------ */
/* A runner's own loop, on its thread's stack (runner 0: the caller of
 * kpn_run).  It resumes a process and gets control back only when that
 * process's runner has nothing ready, so it turns once per quiet spell.
 * What several runners add (stealing, sleeping, the end of the run) is
 * in runners.c. */

void kpni_sched_loop(kpni_runner *r)
{
    kpn_net *net = r->net;
    kpn_proc *p;
    kpn_status quiet;

#ifdef KPNI_TSAN
    r->fiber = __tsan_get_current_fiber();
#endif
    if (KPNI_MT(r))
        kpni_lock(r);
    for (;;) {
        /* Back from a solo process with none ready, or told to stop: the
         * others may have work to share, or must see the end. */
        if (KPNI_SOLO(r)) {
            kpni_runners_unsolo(r, 0);
            kpni_lock(r);
        }
        /* none of r's processes runs: another runner may move them,
         * but for a placement given (KPN_POLICY_STATIC), where nothing
         * moves: r stays own, so that a wake from another runner that
         * is own comes through r's inbox (kpni_runners_wake_missed) */
        if (net->cfg.policy != KPN_POLICY_STATIC)
            KPNI_OWN_CLEAR(r);
        kpni_unbias(r);
        if (KPNI_MT(r))
            kpni_inbox_drain(r);
        if (KPNI_LOAD(&net->halt) != KPN_OK || kpni_runners_done(r))
            break;
        p = kpni_queue_pop_front(r);
        if (p == NULL && KPNI_MT(r))
            p = kpni_runners_steal(r);
        if (p != NULL) {
            dispatch(r, p);
            /* one that parked while its runner was solo does not let go
             * of the lock as it resumes (KPNI_PF_UNLOCKS) */
            if (KPNI_MT(r) && !KPNI_UNLOCKS(p))
                kpni_unlock(r);
            SWITCH(r->host, KPNI_CTX(r, p), FIBER(p), FIBER(r));
            continue;
        }
        /* others are busy: wait until one hands this runner work */
        if (KPNI_MT(r) && kpni_runners_idle(r))
            continue;
        /* Nothing is ready and nothing runs anywhere: the net is at rest,
         * and every runner's lock is held.  Input that came meanwhile
         * goes first, then the resolver. */
        if (net->ninputs != 0 && kpni_input_deliver(r)) {
            kpni_lock_down(r); /* a reader was released */
            continue;
        }
        quiet = r->resolve ? kpni_resolve_quiet(net) : KPN_EDEADLOCK;
        if (quiet == KPN_OK) {
            kpni_lock_down(r); /* a writer was released */
            continue;
        }
        if (quiet == KPN_ERESERVE) {
            kpni_sched_halt(net, KPN_ERESERVE);
            kpni_lock_down(r);
            break;
        }
        /* Under cfg.strict a true deadlock that closed in this run ends
         * it now, not when an input that other processes wait on moves:
         * one the scan above found (the halt) or, without the resolver,
         * one looked for here (the end of kpn_run looks for them where
         * no input is awaited).  A cycle an earlier run found is not
         * found again: a later run goes on with the rest of the net. */
        if (net->cfg.strict && !r->resolve && net->ninputs != 0)
            kpni_resolve_record(net);
        if (KPNI_LOAD(&net->halt) != KPN_OK) {
            kpni_lock_down(r);
            break;
        }
        /* A process waits on an open input: only an offer or a close from
         * outside can move the net now, so sleep until one comes. */
        if (net->ninputs != 0 && kpni_input_awaited(net)) {
            if (KPNI_MT(r))
                kpni_unlock_all(r);
            kpn_port_idle_wait(net->input_idle);
            if (KPNI_MT(r))
                kpni_lock(r);
            continue;
        }
        /* Every input a process waits on is closed, but the last close
         * may have come after the delivery above: a close is final, so
         * one more delivery sees every one of them. */
        if (net->ninputs != 0 && kpni_input_deliver(r)) {
            kpni_lock_down(r);
            continue;
        }
        kpni_lock_down(r);
        break;
    }
    KPNI_STORE(&r->current, (kpn_proc *)NULL);
    if (KPNI_MT(r))
        kpni_runners_finish(r);
}

/* The process whose block lies just above 'x' (an object an overflow
 * damaged): processes are carved in spawn order, so it is the first live
 * one above it, found from either end of the list as far as it can be
 * trusted.  NULL if none is known. */
static kpn_proc *blame(kpn_net *net, const void *x)
{
    kpn_proc *p, *best = NULL;

    for (p = net->procs; kpni_proc_sane(net, p); p = p->next)
        if ((const void *)p > x && (best == NULL || p < best))
            best = p;
#if !KPN_COMPACT
    for (p = net->procs_tail; kpni_proc_sane(net, p); p = p->prev)
        if ((const void *)p > x && (best == NULL || p < best))
            best = p;
#endif
    if (best == NULL && kpni_proc_sane(net, net->procs_tail))
        best = net->procs_tail;
    if (best == NULL)
        kpni_fail_stop(); /* damage, and no record left to name */
    return best;
}

/* The scan below walks lists whose records lie far apart in the arena
 * and were last touched long ago: without help, 16 384 processes and
 * their 32 768 channels wait about 12 ms on misses, one after the
 * other.  Each step asks for the lines the step after next reads (the
 * record after the next one) and for the next process's band, which its
 * check reads a word at a time.  The next record was asked for a step
 * ago: checking it now waits on nothing, and only a record found sane is
 * followed.  That check is the scan's own: each record is checked once,
 * here, a step before the scan reaches it.  Asking only one step ahead
 * left about a third more of the scan's time waiting (16 384 workers of
 * bench/aes). */
static int ahead_proc(const kpn_net *net, const kpn_proc *p)
{
    const kpn_proc *next = p->next;

    if (next == NULL || !kpni_proc_sane(net, next))
        return 0;
    if (next->state != KPN_PROC_EXITED) /* see find_fault */
        kpni_proc_band_ahead(next);
    KPNI_PREFETCH(next->next);
    KPNI_PREFETCH((uintptr_t)next->next + KPNI_LINE);
    return 1;
}

static int ahead_chan(const kpn_net *net, const kpn_chan *c)
{
    const kpn_chan *next = c->next;

    if (next == NULL || !kpni_chan_sane(net, next))
        return 0;
    KPNI_PREFETCH(next->next);
    KPNI_PREFETCH((uintptr_t)next->next + offsetof(kpn_chan, next));
    return 1;
}

/* Further ahead than the lists let the scan look.  A net built in a loop
 * (a worker's stack and record, its channels, the next worker's) lays
 * its records out in a pattern that repeats, so the record SCAN_AHEAD
 * steps on most likely lies as far past this one as this one lies past
 * the record SCAN_AHEAD steps back: exactly, where the pattern's period
 * divides SCAN_AHEAD (bench/aes's channel list alternates two strides).
 * The scan asks for its lines on that guess.  A prefetch never faults,
 * so a wrong guess costs only the request, and a right one overlaps the
 * misses of that many steps.  The guesses are integers: one may fall
 * outside any object.  The scan of 16 384 workers of bench/aes and their
 * channels took 3.5 to 5.8 ms with it, 6.5 to 7.3 without (a build made
 * for the measurement, six alternating pairs).  The compact build, for
 * small memories with no caches to fill, leaves it out. */
#if KPN_COMPACT
typedef struct scan_back {
    unsigned n;
} scan_back;

static uintptr_t scan_step(scan_back *b, const void *x)
{
    (void)b;
    (void)x;
    return 0;
}
#else
#define SCAN_AHEAD 8

typedef struct scan_back {
    uintptr_t at[SCAN_AHEAD]; /* the last SCAN_AHEAD records, a ring */
    unsigned n;               /* records seen */
} scan_back;

/* How far past 'x' the record SCAN_AHEAD steps on is guessed to lie, or
 * 0 until the scan has gone that far; notes 'x' as seen. */
static uintptr_t scan_step(scan_back *b, const void *x)
{
    uintptr_t *back = &b->at[b->n % SCAN_AHEAD];
    uintptr_t step = b->n >= SCAN_AHEAD ? (uintptr_t)x - *back : 0;

    *back = (uintptr_t)x;
    b->n++;
    return step;
}
#endif

/* Ask for the lines of the 'bytes' at 'x' + 'step'. */
static void scan_ahead(const void *x, uintptr_t step, size_t bytes)
{
    uintptr_t from = ((uintptr_t)x + step) & ~(uintptr_t)(KPNI_LINE - 1);
    size_t i;

    for (i = 0; i < bytes + KPNI_LINE - 1; i += KPNI_LINE)
        KPNI_PREFETCH(from + i);
}

/*
 * The switch checks only the guard words nearest each stack; a frame
 * with a gap can step over them, and over the whole band.  Before
 * declaring a run over, check every band whole (an exited process's was,
 * as it exited), and every process and channel record for damage from
 * an overflow that jumped the band: the process just above a damaged
 * record is the one that overflowed.
 */
static kpn_proc *find_fault(kpn_net *net)
{
    kpn_proc *p, *last = NULL;
    kpn_chan *c;
    size_t n = 0;
    scan_back back;
    uintptr_t step;
    int sane;

    back.n = 0;
    if (!kpni_net_sane(net))
        kpni_fail_stop(); /* see park */
    sane = kpni_proc_sane(net, net->procs);
    if (sane)
        kpni_proc_band_ahead(net->procs);
    for (p = net->procs; sane; p = p->next) {
        int exited = p->state == KPN_PROC_EXITED;

        sane = ahead_proc(net, p);
        if ((step = scan_step(&back, p)) != 0) {
            scan_ahead(p, step, sizeof *p);
            if (!exited) /* the one that far on is guessed to be alike */
                scan_ahead(p->stack_lo - KPN_STACK_GUARD, step, KPN_STACK_GUARD);
        }
        /* an exited process's band was checked whole as it exited
         * (kpni_sched_exit), and nothing of its own writes there since */
        if (!exited && !kpni_proc_guard_intact(p))
            return p;
        last = p;
        ++n;
    }
    if (n != net->nprocs || last != net->procs_tail)
        return blame(net, p != NULL ? (const void *)p : (const void *)last);
    n = 0;
    back.n = 0;
    for (c = net->chans, sane = kpni_chan_sane(net, c); sane; c = c->next) {
        sane = ahead_chan(net, c);
        if ((step = scan_step(&back, c)) != 0)
            scan_ahead(c, step, offsetof(kpn_chan, next) + sizeof c->next);
        ++n;
    }
    if (n != net->nchans)
        return blame(net, c != NULL ? (const void *)c : (const void *)net);
    return NULL;
}

kpn_status kpn_run(kpn_net *net)
{
    kpn_proc *p;
    kpn_status halt;

    if (!kpni_net_valid(net))
        return KPN_EINVAL;
    if (net->state == KPNI_NET_RUNNING)
        return KPN_ESTATE;
    if (net->state == KPNI_NET_FAULTED)
        return KPN_ESTACK;
    if (net->pending_chan != NULL && kpni_resolve_pending(net) != KPN_OK)
        return KPN_ERESERVE;

    net->state = KPNI_NET_RUNNING;
    if (net->nrunners > 1) {
        halt = kpni_runners_run(net);
        if (halt != KPN_OK) {
            net->state = KPNI_NET_IDLE;
            return halt;
        }
    } else {
        kpni_sched_loop(&net->runners[0]);
    }

    if (net->fault == NULL && (p = find_fault(net)) != NULL) {
        p->state = KPN_PROC_FAULTED;
        net->fault = p;
    }
    if (net->fault != NULL) {
        /* Handles of the processes below it may point into what its
         * frames covered, dead stack to memcheck since they returned:
         * inspection reads those records all the same. */
        KPNI_VG_ADDRESSABLE(net->arena.base, (size_t)(net->fault->stack_lo - net->arena.base));
        net->state = KPNI_NET_FAULTED;
        net->halt = KPN_ESTACK;
        return KPN_ESTACK;
    }
    /* Strict without the resolver: the true deadlocks are found here,
     * once the net is at rest (the scan the resolver makes). */
    if (net->cfg.strict && !net->cfg.resolve)
        kpni_resolve_record(net);
    net->state = KPNI_NET_IDLE;
    halt = net->halt;
    net->halt = KPN_OK;
    if (halt != KPN_OK)
        return halt;
    if (net->cfg.strict && net->true_deadlocks != 0)
        return KPN_EDEADLOCK;
    for (p = net->procs; p != NULL && !net->cfg.resolve; p = p->next)
        if (p->state == KPN_PROC_BLOCKED_WRITE)
            return KPN_EDEADLOCK;
    return KPN_OK;
}
