/* SPDX-License-Identifier: MIT */
/* Several runners: the locks, stealing, idle runners, starting and ending a run. */
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
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__ __volatile__("yield");
#endif
}

/*
 * Locks.  Each runner has one, guarding its queue and the states of the
 * processes on it: a block, a wake and a switch on one runner take only
 * that runner's lock, a line no other runner writes unless a channel
 * crosses or a process moves.  What must see the whole net at one
 * instant (the resolver's walks, an exit's wakes, input, the decision
 * that the net is at rest) takes every runner's lock, in index order.
 *
 * Under work stealing a process moves: a thief takes it off another
 * runner's queue, a wake may queue it on the waker's runner.  Every such
 * move holds the lock of the runner it leaves and of the one it joins,
 * so a runner whose lock is held keeps every process that names it
 * (kpni_lock_proc).  A lock taken with no one in the way is one
 * exchange, inline where it is taken (kpn_int.h); the spin is here.
 * Under a settled placement a runner makes the wakes on it with no lock
 * at all, and nobody else moves its processes meanwhile ('own':
 * kpn_int.h, kpni_sched_ready_own; docs/runners.md, "Wakes with no
 * lock").
 *
 * Biased locks.  A runner that is 'own' blocks and switches far more
 * often than any other thread takes its lock: other runners wake its
 * processes through its inbox (below), and take its lock only to take
 * every lock (a walk, an exit, input, an idle look, the net at rest).
 * So while biased it takes the lock at a block with a plain store to
 * 'inside', and goes on if nobody counts in 'revoke' or holds the lock
 * (kpni_lock_block), sparing the exchange, which waits for every store
 * before it, the message's among them.  Another thread that wants the
 * lock counts itself in 'revoke', then waits until the owner lets the
 * bias go (at its next block, or back in its host loop) or, if that
 * takes long (a process that runs on without blocking), has the port
 * fence every thread: after it the owner's next look sees the count,
 * and this thread sees the owner's last 'inside'.  It waits until that
 * is clear, and takes the lock with the exchange.  The owner takes the
 * bias again only at a park, holding the lock, by an exchange and then
 * a look at 'revoke', as the other thread counts and then looks at
 * 'bias': at least one sees the other.  A thread that waits for
 * another runner's lock has let its own bias go first, so two runners
 * never wait for each other.
 */

int kpni_claimed_words[3];

/* A test-and-test-and-set lock that yields the CPU when it spins long:
 * held for a few hundred instructions at most (a block, a wake, a
 * switch), so sleeping in the kernel would cost more than it saves. */
static void spin_lock(int *word)
{
    int spins = 0;

    KPNI_FUZZ_YIELD();
    while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE) != 0) {
        while (__atomic_load_n(word, __ATOMIC_RELAXED) != 0) {
            if (++spins < 100) {
                cpu_relax();
            } else {
                spins = 0;
                kpn_port_yield();
            }
        }
    }
}

static void spin_unlock(int *word)
{
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    KPNI_FUZZ_YIELD();
}

/* r's thread, r's lock held, r 'own' and not biased: take the bias if
 * nobody waits for the lock.  The exchange orders it before the look
 * at 'revoke', as a waiter orders its count before its look at 'bias':
 * one of the two sees the other. */
void kpni_bias(kpni_runner *r)
{
    if (!r->net->fence_ok || __atomic_load_n(&r->revoke, __ATOMIC_RELAXED) != 0)
        return;
    (void)__atomic_exchange_n(&r->bias, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&r->revoke, __ATOMIC_SEQ_CST) != 0)
        __atomic_store_n(&r->bias, 0, __ATOMIC_RELEASE);
}

/* r's thread: other threads may take r's lock from now on (runners.c,
 * "Biased locks").  If this thread holds it by 'inside', it takes it
 * with the exchange first (nobody else holds it, nor takes it before
 * 'inside' or 'bias' is clear), so that whoever sees 'bias' clear and
 * takes the lock waits for this thread. */
void kpni_unbias(kpni_runner *r)
{
    if (!r->bias)
        return;
    if (r->inside) {
        kpni_lock(r);
        __atomic_store_n(&r->inside, 0, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&r->bias, 0, __ATOMIC_RELEASE);
}

/* How long a thread waits for a biased runner to see it asks, before
 * it has every thread fenced instead (ns): several blocks of a fine-
 * grained net.  An owner that runs on longer runs a coarse process,
 * and the fence is then cheaper than waiting for its block (membarrier
 * took about 12 us on the guest of docs/benchmarks.md).  Timed, not
 * counted in spins: a pause takes ten times as long on some CPUs as on
 * others, and 2 000 of them took 50 us on that guest.  Never more
 * than KPNI_REVOKE_SPINS pauses all the same: a clock may stand still
 * (port/pthread's reads 0 where clock_gettime fails). */
#define KPNI_REVOKE_NS 4000u
#define KPNI_REVOKE_SPINS 2000

/* The lock of another runner than 'me' (or of any, off the runners'
 * threads: 'me' NULL). */
void kpni_lock_other(kpni_runner *me, kpni_runner *r)
{
    int spins;

    if (me != NULL)
        kpni_unbias(me); /* two runners never wait for each other */
    __atomic_add_fetch(&r->revoke, 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&r->bias, __ATOMIC_SEQ_CST)) {
        /* r sees 'revoke' at its next block, and clears 'bias'; if it
         * runs on without one, the fence shows the count to its next
         * look and its last 'inside' to this thread */
        uint64_t since = kpn_port_clock_ns();

        for (spins = 1; __atomic_load_n(&r->bias, __ATOMIC_ACQUIRE); ++spins) {
            /* the clock every 16 spins, so that its reads cost little beside the pauses */
            if (spins == KPNI_REVOKE_SPINS ||
                (spins % 16 == 0 && kpn_port_clock_ns() - since >= KPNI_REVOKE_NS)) {
                (void)kpn_port_fence_threads(); /* works: fence_ok, or no bias */
                break;
            }
            cpu_relax();
        }
        for (spins = 0; __atomic_load_n(&r->inside, __ATOMIC_ACQUIRE); ++spins)
            if (spins % 128 == 127)
                kpn_port_yield();
            else
                cpu_relax();
    }
    spin_lock(&r->lock);
    /* r takes the fast way again only with the lock free (kpni_lock_block) */
    __atomic_sub_fetch(&r->revoke, 1u, __ATOMIC_RELEASE);
}

/* The same if the lock is free now and r is not biased; never waits. */
static int trylock_other(kpni_runner *r)
{
    int ok = 0;

    __atomic_add_fetch(&r->revoke, 1u, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&r->bias, __ATOMIC_SEQ_CST) &&
        __atomic_load_n(&r->lock, __ATOMIC_RELAXED) == 0)
        ok = __atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE) == 0;
    __atomic_sub_fetch(&r->revoke, 1u, __ATOMIC_RELEASE);
    return ok;
}

/* r's lock, which kpni_lock found taken. */
void kpni_lock_spin(kpni_runner *r)
{
    spin_lock(&r->lock);
}

/* Every runner's lock, holding none. */
void kpni_lock_all(kpni_runner *r)
{
    kpn_net *net = r->net;
    unsigned i;

    kpni_unbias(r);
    for (i = 0; i < net->nrunners; ++i)
        kpni_lock_by(r, &net->runners[i]);
}

/* Holding r's lock: every runner's.  r's is let go first, so that all
 * are taken in index order and two runners doing this cannot deadlock;
 * the caller looks again at whatever may have changed meanwhile. */
void kpni_lock_up(kpni_runner *r)
{
    kpni_unbias(r);
    kpni_unlock(r);
    kpni_lock_all(r);
}

/* Holding r's lock: every runner's if none is held elsewhere now, else
 * nothing more (and 0).  Never waits, so it needs no order. */
int kpni_lock_up_try(kpni_runner *r)
{
    kpn_net *net = r->net;
    unsigned i, j;

    for (i = 0; i < net->nrunners; ++i) {
        if (i == r->index)
            continue;
        if (!trylock_other(&net->runners[i])) {
            for (j = 0; j < i; ++j)
                if (j != r->index)
                    spin_unlock(&net->runners[j].lock);
            return 0;
        }
    }
    return 1;
}

/* Holding every runner's lock: keep r's only. */
void kpni_lock_down(kpni_runner *r)
{
    kpn_net *net = r->net;
    unsigned i;

    for (i = 0; i < net->nrunners; ++i)
        if (i != r->index)
            spin_unlock(&net->runners[i].lock);
}

/* Holding every runner's lock: none. */
void kpni_unlock_all(kpni_runner *r)
{
    kpn_net *net = r->net;
    unsigned i;

    for (i = 0; i < net->nrunners; ++i)
        spin_unlock(&net->runners[i].lock);
}

/*
 * Moves.  Under work stealing a channel is marked 'cross' (chan.c,
 * release) while its two ends are on different runners, so that where a
 * net keeps to one runner its messages cost what they cost on one.  A
 * process that moves sets the marks of its channels for where it goes,
 * holding the locks of the runner it leaves and of the one it joins:
 *
 *  - a channel whose other end is on the runner it joins stops crossing.
 *    Nothing runs there but, at most, the waker that moves it there,
 *    which may finish its message the crossing way: more than it needs.
 *  - a channel whose other end stays behind starts to cross.  If that
 *    end is running, it may have read the old mark for the message it is
 *    handling: it then skipped the fenced pairing with a partner that is
 *    now free to block elsewhere, and may miss that partner's block.  So
 *    the move notes the channel on the runner it leaves ('flipped'), and
 *    the running end makes the look again, after a fence, before it next
 *    blocks (kpni_runners_look_flipped), as it does for the looks its
 *    crossing messages leave unfenced (chan.c, release_cross); its exit
 *    wakes every partner anyway.  A process whose move would need more
 *    notes than the runner has room for stays where it is (may_move).
 *
 * A blocker, which holds its runner's lock, sees the marks of its
 * channels still; the resolver's walk on one runner (resolve.c, stays)
 * follows a channel that does not cross to a process on the same runner.
 * An input, and every channel of a process with more than MOVE_WALK of
 * them (a source scattering to a thousand workers), cross for the whole
 * run ('always_cross'), so that a move never walks more than MOVE_WALK
 * channels.
 */
#define MOVE_WALK 16

#if KPNI_CHAN_LINES

/* The other end of 'c' from 'p' (NULL where its mark never changes). */
static kpn_proc *partner(const kpn_chan *c, const kpn_proc *p)
{
    if (c->always_cross)
        return NULL;
    return c->writer == p ? c->reader : c->writer;
}

/* Whether a move of 'p' off its runner starts 'c' crossing while its
 * other end runs there. */
static int flips_running(const kpn_chan *c, const kpn_proc *p)
{
    const kpn_proc *q = partner(c, p);

    return q != NULL && q != p && !KPNI_LOAD(&c->cross) && q == p->runner->current;
}

/* Holding the lock of p's runner: whether p may move off it now, as the
 * process that wakes it moves it to its own runner (kpni_sched_ready_mt).
 * Not while it runs, nor where the runner has no room left to note the
 * channels the move starts crossing under a running partner. */
static int may_follow(const kpn_proc *p)
{
    const kpni_runner *v = p->runner;
    const kpn_chan *c;
    unsigned flips = v->nflipped;

    if (v->current == NULL)
        return 1;
    if (v->current == p)
        return 0;
    for (c = p->outs; c != NULL; c = c->next_out)
        flips += (unsigned)flips_running(c, p);
    for (c = p->ins; c != NULL; c = c->next_in)
        flips += (unsigned)flips_running(c, p);
    return flips <= KPNI_FLIPS;
}

/* The same for any other move (a steal, a pull): not while p's runner
 * is 'own', whose thread may be waking p with no lock, or have p on its
 * own list, which no other thread touches.  A waker may move p all the
 * same: nothing else can release p, so that thread leaves it alone. */
static int may_move(const kpn_proc *p)
{
    return !p->runner->own && may_follow(p);
}

/* 'p''s count of its channels that cross, by 'd', saturating. */
static void ncross_add(kpn_proc *p, int d)
{
    unsigned n = KPNI_LOAD(&p->ncross);

    if (n != KPNI_NCROSS_MANY)
        KPNI_STORE(&p->ncross, (unsigned char)(n + (unsigned)d));
}

/* 'c' starts crossing ('d' -1) or stops (+1): the counts that leave out
 * waiters on a crossing channel (kpn_int.h, KPNI_NWAITERS_ADD_ON) take
 * out or put in an end blocked on it, and each end's count of channels
 * that cross changes.  The runners of both ends are locked, so no other
 * change to those counts is under way: a block or wake on a channel that
 * does not cross takes its runner's lock, or is made by an own runner's
 * thread, whose processes no move takes but a woken reader, ready by
 * then.  The two ends are two processes: a channel from a process to
 * itself never crosses. */
static void flip_counts(kpn_chan *c, int d)
{
    kpn_proc *rd = c->reader, *wr = c->writer;

    if (KPNI_LOAD(&rd->state) == KPN_PROC_BLOCKED_READ && KPNI_LOAD(&rd->wait) == c)
        wr->nwaiters += (uint32_t)d;
    if (KPNI_LOAD(&wr->state) == KPN_PROC_BLOCKED_WRITE && KPNI_LOAD(&wr->wait) == c)
        rd->nwaiters += (uint32_t)d;
    ncross_add(rd, -d);
    ncross_add(wr, -d);
}

static void mark(kpn_chan *c, kpn_proc *p, kpni_runner *to)
{
    kpn_proc *q = partner(c, p);
    unsigned char cross;

    if (q == NULL || q == p)
        return;
    if (flips_running(c, p)) {
        kpni_runner *v = p->runner;
        struct kpni_flip *f = &v->flipped[v->nflipped++];

        f->c = c;
        f->why = c->reader == p ? KPN_PROC_BLOCKED_READ : KPN_PROC_BLOCKED_WRITE;
    }
    cross = (unsigned char)(KPNI_LOAD(&q->runner) != to);
    if (KPNI_LOAD(&c->cross) != cross) {
        flip_counts(c, cross ? -1 : 1);
        if (cross)
            kpni_chan_ask_looks(c);
        KPNI_STORE(&c->cross, cross);
        if (!cross)
            to->unflips++;
    }
}

/* Holding the locks of p's runner and of 'to' (may_move said yes): p
 * moves there. */
static void move(kpn_proc *p, kpni_runner *to)
{
    kpn_chan *c;

    for (c = p->outs; c != NULL; c = c->next_out)
        mark(c, p, to);
    for (c = p->ins; c != NULL; c = c->next_in)
        mark(c, p, to);
}

/* Before a run under work stealing: each channel's marks for where its
 * ends start.  A process's channels are counted in 'seen' (place.c says
 * why that is free), up to one past MOVE_WALK. */
void kpni_runners_mark(kpn_net *net)
{
    kpn_proc *p;
    kpn_chan *c;

    for (c = net->chans; c != NULL; c = c->next) {
        if (!c->input && c->writer->seen <= MOVE_WALK)
            c->writer->seen++;
        if (!c->input && c->reader != c->writer && c->reader->seen <= MOVE_WALK)
            c->reader->seen++;
    }
    for (c = net->chans; c != NULL; c = c->next) {
        c->always_cross = (unsigned char)(c->input || c->writer->seen > MOVE_WALK ||
                                          c->reader->seen > MOVE_WALK);
        kpni_chan_set_cross(c, 1); /* the reader's words on its own line */
        KPNI_STORE(&c->cross, (unsigned char)(c->always_cross || c->writer->runner != c->reader->runner));
    }
    for (p = net->procs; p != NULL; p = p->next)
        p->seen = 0;
}

static void count_waiters(kpn_net *net, int all); /* "Solo", below */

/* Before a run on several runners, with the channels' marks set: count
 * each process's channels that cross, and the processes blocked waiting
 * on it along the others (kpn_int.h, KPNI_NWAITERS_ADD_ON), left as the
 * last run left them. */
void kpni_runners_count(kpn_net *net)
{
    kpn_proc *p;
    kpn_chan *c;

    if (net->outside != NULL)
        net->outside->ncross = 0;
    for (p = net->procs; p != NULL; p = p->next)
        p->ncross = 0;
    for (c = net->chans; c != NULL; c = c->next) {
        if (!KPNI_LOAD(&c->cross))
            continue;
        ncross_add(c->writer, 1);
        if (c->reader != c->writer)
            ncross_add(c->reader, 1);
    }
    count_waiters(net, 0);
}

#else /* the compact layout keeps no lists: every channel crosses */

static int may_follow(const kpn_proc *p)
{
    return p->runner->current != p;
}

static int may_move(const kpn_proc *p)
{
    return !p->runner->own && may_follow(p);
}

static void move(kpn_proc *p, kpni_runner *to)
{
    (void)p;
    (void)to;
}

void kpni_runners_mark(kpn_net *net)
{
    kpn_chan *c;

    for (c = net->chans; c != NULL; c = c->next)
        kpni_chan_set_cross(c, 1);
}

/* every channel crosses, and every count is whole (kpn_int.h) */
void kpni_runners_count(kpn_net *net)
{
    (void)net;
}
#endif

/* Work stealing with no placement learnt: processes move between the
 * runners by steals, and a runner with nothing to run looks at the
 * others' queues. */
#define STEALING(net) ((net)->cfg.policy == KPN_POLICY_WS && (net)->learnt == 0)

/* An idle runner first spins ('sleeping' KPNI_SPINNING), then commits to
 * its semaphore (KPNI_ASLEEP).  Waking a runner that still spins is a
 * store it sees; only one that committed costs a post, a system call. */
static int set_awake(kpn_net *net, kpni_runner *r)
{
    int was = __atomic_exchange_n(&r->sleeping, KPNI_AWAKE, __ATOMIC_ACQ_REL);

    /* two wakers (or a waker and r itself) may race here: the one that
     * saw it idle counts it awake (the moment between the two is what
     * the decision that the net is at rest allows for: kpni_runners_idle) */
    KPNI_FUZZ_YIELD();
    if (was != KPNI_AWAKE)
        __atomic_fetch_sub(&net->idle, 1u, __ATOMIC_RELAXED);
    return was;
}

/* r, counted idle: it says it spins, then looks at its inbox, as a
 * waker that pushes there then looks at 'sleeping' (sequentially
 * consistent, both): one of the two sees the other.  1 if a process is
 * there, and r awake again to queue it. */
static int spin_unless_woken(kpn_net *net, kpni_runner *r)
{
    __atomic_store_n(&r->sleeping, KPNI_SPINNING, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&r->inbox, __ATOMIC_SEQ_CST) == NULL)
        return 0;
    (void)set_awake(net, r);
    return 1;
}

static void wake_runner(kpn_net *net, kpni_runner *r)
{
    if (set_awake(net, r) == KPNI_ASLEEP)
        kpn_port_sem_post(r->sem);
}

/* Wakes from other runners.  Where runners are 'own', a process that
 * wakes one blocked on another runner takes no lock: it claims the
 * process by its 'wait' (the channel to KPNI_CLAIMED, so that of two
 * wakers, or of a waker and the blocker going on by its own look, one
 * wins), pushes it on that runner's inbox and wakes the runner if it
 * idles.  Only that runner's thread empties the inbox, under its lock,
 * at a park, in its host loop and as it idles, and queues them: so the
 * claimed process, which may not have switched out yet, is resumed on
 * its own runner only, after its switch, as under the lock.  Until
 * then it is READY with 'wait' claimed, on no queue: a move, a
 * walk and the scan at rest leave it alone (docs/runners.md, "Wakes
 * from other runners").  A claim may be under way on any process that
 * blocks on a crossing channel, found so by a look that has gone stale,
 * so 'wait' is read atomically wherever a claim may meet it.  'by' is
 * the process that releases it, whose mark the process takes. */
void kpni_inbox_wake(kpn_proc *by, kpn_proc *p, kpn_chan *c, kpn_proc_state why)
{
    kpni_runner *t;
    kpn_chan *expect = c;
    kpn_proc *head;
    int resolve = by->runner->resolve;
    kpn_chan *claim = resolve && KPNI_LOAD(&by->watched) ? KPNI_CLAIMED_MARK : KPNI_CLAIMED;

    while (!__atomic_compare_exchange_n(&p->wait, &expect, claim, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
        if (expect != KPNI_MOVING)
            return; /* woken already, or gone on */
        expect = c; /* a runner takes p over, under every lock: a moment */
        cpu_relax();
    }
    if (resolve)
        KPNI_NWAITERS_ADD_ON(1, c, by, -1); /* what kpni_wake_rule_as does but the mark */
    kpni_chan_woken(c, why);
    /* after the claim, which a READY read with acquire shows (sched.c, walk) */
    __atomic_store_n(&p->state, (unsigned char)KPN_PROC_READY, __ATOMIC_RELEASE);
    t = KPNI_LOAD(&p->runner); /* claimed, p moves no more */
    head = __atomic_load_n(&t->inbox, __ATOMIC_RELAXED);
    do
        p->prev_ready = head; /* next_ready holds where p parked */
    while (!__atomic_compare_exchange_n(&t->inbox, &head, p, 1, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED));
    if (__atomic_load_n(&t->sleeping, __ATOMIC_SEQ_CST) != KPNI_AWAKE)
        wake_runner(t->net, t);
}

/* r's thread, r's lock held: r's inbox to the back of its queue, in the
 * order the wakes came. */
void kpni_inbox_take(kpni_runner *r)
{
    kpn_proc *p = __atomic_exchange_n(&r->inbox, (kpn_proc *)NULL, __ATOMIC_ACQUIRE);
    kpn_proc *rev = NULL, *n;

    while (p != NULL) {
        n = p->prev_ready;
        p->prev_ready = rev;
        rev = p;
        p = n;
    }
    while (rev != NULL) {
        n = rev->prev_ready;
        if (KPNI_LOAD(&rev->wait) == KPNI_CLAIMED_MARK)
            KPNI_STORE(&rev->watched, (unsigned char)1);
        KPNI_STORE(&rev->wait, (kpn_chan *)NULL);
        kpni_queue_push_back(r, rev);
        rev = n;
    }
}

void kpni_runners_wake_all(kpn_net *net)
{
    unsigned i;

    for (i = 0; i < net->nrunners; ++i)
        if (KPNI_LOAD(&net->runners[i].sleeping) != KPNI_AWAKE)
            wake_runner(net, &net->runners[i]);
}

/* Under the target's lock: a woken process joins the front of its target's queue
 * (it ran last, so its stack is warm: Vrba's thesis, 4.2.2.4), and an
 * idle runner that can take it is woken.  Under KPN_POLICY_STATIC it
 * joins the back instead, the order one runner keeps, so that a stage
 * drains a batch before the next one runs (docs/runners.md).
 *
 * Under KPN_WAKE_WAKER the target is the waker's runner for a process
 * woken from a read: the waker has just written what it will read.  One
 * woken from a write stays where it is: its reader made room, and what
 * it will write next is its own.  Moving it too would pull each stage of
 * a pipeline onto the runner of the stage after it, leaving the other
 * runner to steal them back, one at a time (docs/runners.md).  Once a
 * placement is learnt (below), a reader follows only a waker on its
 * home runner, and joins the back, as under KPN_POLICY_STATIC. */
void kpni_sched_ready_mt(kpni_runner *waker, kpn_proc *p)
{
    kpn_net *net = waker->net;
    unsigned why = KPNI_LOAD(&p->state);
    kpni_runner *t;
    unsigned i;

    if ((why == KPN_PROC_BLOCKED_READ || why == KPN_PROC_BLOCKED_WRITE) &&
        KPNI_LOAD(&p->wait) != NULL)
        kpni_chan_woken(KPNI_LOAD(&p->wait), (kpn_proc_state)why);
    KPNI_STORE(&p->state, KPN_PROC_READY);
    KPNI_STORE(&p->wait, (kpn_chan *)NULL);
    /* Under work stealing the caller holds the lock of p's runner and,
     * for a reader under KPN_WAKE_WAKER, the waker's (or every lock).  A
     * process that is still its runner's current one (it let go of the
     * lock to take every lock, sched.c's walk) stays where it runs. */
    if (net->cfg.policy == KPN_POLICY_STATIC)
        t = &net->runners[p->home];
    else if (kpni_wake_follows(net, why) && (p->runner == waker || may_follow(p)) &&
             (net->learnt == 0 || &net->runners[p->home] == waker))
        t = waker;
    else
        t = p->runner;
    if (t != p->runner)
        move(p, t);
    if (t == waker)
        KPNI_PREFETCH_OUT_SHARED(p);
    if (net->cfg.policy == KPN_POLICY_STATIC || net->learnt != 0)
        kpni_queue_push_back(t, p);
    else
        kpni_queue_push_front(t, p);
    if (KPNI_LOAD(&t->sleeping) != KPNI_AWAKE) {
        wake_runner(net, t);
    } else if (STEALING(net) && KPNI_LOAD(&net->idle) > 0) {
        /* 'p' alone in the queue may not be taken yet (takeable): a
         * runner that spins looks for it itself, and only one that
         * sleeps is worth a system call; not one that came back
         * empty-handed from its last wakes (KPNI_FRUITLESS), but for
         * one wake in KPNI_LONE_RETRY, in case the net now computes
         * longer between its messages.  Counted per wake, not per runner
         * looked at: that woke one every 1024 / 15 hops of a one-token
         * ring on 16 runners, and kept it from going solo
         * (docs/benchmarks.md, "Up to 16 runners"). */
        int lone = t->head == t->tail;
        int retry = lone && ++waker->lone_skips % KPNI_LONE_RETRY == 0;

        for (i = 0; i < net->nrunners; ++i) {
            int sleeping = KPNI_LOAD(&net->runners[i].sleeping);

            if ((sleeping == KPNI_ASLEEP &&
                 (!lone || retry || KPNI_LOAD(&net->runners[i].fruitless) < KPNI_FRUITLESS)) ||
                (sleeping == KPNI_SPINNING && !lone)) {
                wake_runner(net, &net->runners[i]);
                break;
            }
        }
    }
}

/* Holding v's lock (or every lock): the process thief r may take from
 * v, the back of its queue, unless that one still runs there
 * (sched_ready_mt); else NULL.
 *
 * A process queued alone behind a running one is taken only once it has
 * waited: on an earlier look ('note') it was already there and v has
 * dispatched nothing since.  In a fine-grained net the running process
 * has usually just woken it and is about to block, and v would run it
 * next within a hop; taking it would move a ring's one runnable process
 * to the other runner on every hop, each message crossing between the
 * two runners' caches.  Behind a process that runs long, it waits only
 * until the thief looks again (kpni_runners_idle). */
static kpn_proc *takeable(kpni_runner *r, const kpni_runner *v, int note)
{
    kpn_proc *p = v->tail;

    if (p == NULL || !may_move(p))
        return NULL;
    if (p != v->head || v->current == NULL ||
        (r->lone == p && r->lone_switches == v->switches))
        return p;
    if (note) {
        r->lone = p;
        r->lone_switches = v->switches;
    }
    return NULL;
}

/* Holding r's lock: take a process from the back of a random other
 * runner's queue, the one its owner would run last.  The victim's lock
 * is only tried (its owner may be stealing from r), and a process still
 * running there (sched_ready_mt) is left to it. */
kpn_proc *kpni_runners_steal(kpni_runner *r)
{
    kpn_net *net = r->net;
    unsigned tries;

    if (!STEALING(net))
        return NULL;
    for (tries = 0; tries + 1 < net->nrunners; ++tries) {
        kpni_runner *v;
        kpn_proc *p;
        r->rng ^= r->rng << 13;
        r->rng ^= r->rng >> 17;
        r->rng ^= r->rng << 5;
        v = &net->runners[(r->index + 1 + r->rng % (net->nrunners - 1)) % net->nrunners];
        r->steal_attempts++;
        if (!trylock_other(v))
            continue;
        p = takeable(r, v, 1);
        if (p != NULL) {
            move(p, r);
            kpni_queue_unlink(v, p);
            KPNI_STORE(&p->runner, r); /* moved under both locks */
        }
        spin_unlock(&v->lock);
        if (p != NULL) {
            r->steals++;
            r->lone = NULL;
            return p;
        }
    }
    return NULL;
}

/* Holding every lock: whether another runner has a process r could
 * steal (its lock was busy when r tried). */
static int stealable(kpni_runner *r)
{
    const kpn_net *net = r->net;
    unsigned i;

    if (!STEALING(net))
        return 0;
    for (i = 0; i < net->nrunners; ++i)
        if (i != r->index && takeable(r, &net->runners[i], 0) != NULL)
            return 1;
    return 0;
}

/* 'p' parks on a crossing channel (block_any, r's lock held): remember
 * it among the last few. */
void kpni_runners_parked_cross(kpni_runner *r, kpn_proc *p)
{
    r->parked_cross[r->nparked_cross++ % KPNI_PARKED_CROSS] = p;
}

/* Holding r's lock, 'self' about to block on r: the looks the moves
 * noted in 'flipped' (above, "Moves"), each after a fence, since self's
 * last message on the channel may have skipped its pairing with a
 * partner that now blocks on another runner.  A look may wake, which
 * takes other runners' locks, so r's is let go meanwhile; one note at a
 * time, so that the frame stays small on a process's stack.  A note on a
 * channel that is not self's was left by a move while an earlier
 * process's walk had let go of r's lock, and needs no look (sched.c,
 * block_any); nor could self make it, since a wake hands the woken
 * process the resolver's mark of the process it waited for, which only
 * that process, or a holder of its runner's lock, may read.  Returns
 * holding r's lock, with nothing left noted. */
void kpni_runners_look_flipped(kpni_runner *r, kpn_proc *self)
{
    while (r->nflipped != 0) {
        struct kpni_flip f = r->flipped[--r->nflipped];

        if (f.c->writer != self && f.c->reader != self)
            continue;
        kpni_unlock(r);
        KPNI_FENCE();
        kpni_chan_look(self, f.c, f.why);
        kpni_lock(r);
    }
}

/* Holding no lock: make ready any of the processes r remembers that waits
 * on a crossing channel it need not wait on any more.  Its partner looked
 * at it without a fence (chan.c, release_cross) and may have missed it in
 * the instant it parked; the partner's own next block or message would
 * find it too, but an idle runner looks now. */
void kpni_runners_wake_missed(kpni_runner *r)
{
    unsigned i;

    for (i = 0; i < KPNI_PARKED_CROSS; ++i) {
        kpn_proc *p = r->parked_cross[i];
        kpn_chan *c;
        unsigned why;

        if (p == NULL)
            continue;
        why = KPNI_LOAD(&p->state);
        c = KPNI_LOAD(&p->wait);
        if ((why != KPN_PROC_BLOCKED_READ && why != KPN_PROC_BLOCKED_WRITE) || c == NULL ||
            KPNI_IS_CLAIMED(c) || c == KPNI_MOVING || kpni_chan_must_block(c, (kpn_proc_state)why))
            continue;
        /* every lock, not just p's runner's: the wake hands p the mark
         * of the process it waited for (kpni_sched_ready_by), which runs
         * on another runner and marks itself under that one's lock.
         * The channel is asked again under them: meanwhile p may have
         * been woken, taken the message and blocked on 'c' again, and
         * the net come to rest and the run end; woken now, p would be
         * left ready after it. */
        kpni_lock_all(r);
        /* p may have moved: not one on another runner that is 'own',
         * whose thread may be waking it with no lock (its partner's
         * flush finds it).  r's own thread runs nothing now, and r may
         * be own while it idles (KPN_POLICY_STATIC: sched.c). */
        if ((KPNI_LOAD(&p->runner) == r || !KPNI_OWN(KPNI_LOAD(&p->runner))) &&
            KPNI_LOAD(&p->state) == why &&
            KPNI_LOAD(&p->wait) == c &&
            !kpni_chan_must_block(c, (kpn_proc_state)why))
            kpni_inbox_wake(why == KPN_PROC_BLOCKED_READ ? c->writer : c->reader, p, c,
                            (kpn_proc_state)why); /* a waker may be claiming it too */
        kpni_unlock_all(r);
    }
}

/* ------------------------------------------------------------------ */
/* Walks put off
 *
 * A block's walk for the resolver that leaves its runner must see the
 * processes of the others still, so it takes every runner's lock, and
 * the other runners wait on their own locks while it walks.  In a net
 * whose processes block at nearly every message and whose placement
 * cuts a few channels, that is much of what a second runner costs: in
 * RND-B on two runners, one runner made 447 000 such walks a run, and
 * the other's lock was found taken 743 000 times, 0.2 s of spinning in
 * a run of 1.2 s (docs/benchmarks.md).  So such a block parks without
 * its walk, and its runner notes the process (up to KPNI_WALKS of them).
 * The walks are made under every lock, every runner's at once, whenever
 * a runner takes every lock for a walk (one that finds its runner's
 * notes full, or comes to a cycle), at a runner's first block once it
 * has switched KPNI_WALKS_AFTER times since its first note (block_any),
 * and as soon as a runner that runs out of work finds some put off
 * (kpni_runners_idle, which reads the counts without their locks): a
 * cycle that spans runners often leaves one of them nothing to run.
 *
 * Nothing is missed, only found later.  A walk made late is the walk the
 * process would make if it blocked then, for it is still blocked on the
 * same channel (one woken meanwhile is in no cycle, and if it blocked
 * again, that block walked or put off a walk of its own): it finds the
 * cycle its chain runs into, or marks the end of its chain as a walk at
 * the block would.  Until then a cycle closed through that process may
 * go unfound (a read-block that would have walked from the mark does
 * not), and the late walk finds it: a cycle is stable.  The net comes to
 * rest only under every lock, taken by a runner that has just made
 * every runner's walks while the others idle and run nothing; so the
 * scan at rest (kpni_resolve_quiet) sees every walk made.  A runner
 * with walks put off does not go solo, whose blocks walk at once: it
 * makes them at its next block first.  A run that stops (a halt) keeps
 * the rest for the next.  Where a cycle lies on one runner its walk is
 * not put off: it is resolved as it closes, as on one runner.
 */

/* Holding r's lock, as 'self' blocks: note it, unless the notes are
 * full (0: walk now). */
int kpni_runners_put_off(kpni_runner *r, kpn_proc *self)
{
    if (r->nwalks == KPNI_WALKS)
        return 0;
    if (r->nwalks == 0)
        r->walks_since = r->switches;
    r->walks[r->nwalks] = self;
    KPNI_STORE(&r->nwalks, r->nwalks + 1); /* read without r's lock: kpni_runners_idle */
    return 1;
}

/* Holding every lock: runner r makes the walks every runner put off, of
 * the processes still blocked, until the run stops.  Only a holder of
 * a runner's lock touches its notes. */
void kpni_runners_walk_put_off(kpni_runner *r)
{
    kpn_net *net = r->net;
    unsigned i;

    for (i = 0; i < net->nrunners; ++i) {
        kpni_runner *of = &net->runners[i];

        while (of->nwalks != 0 && KPNI_LOAD(&net->halt) == KPN_OK) {
            kpn_proc *p = of->walks[of->nwalks - 1];

            KPNI_STORE(&of->nwalks, of->nwalks - 1);

            if (kpni_proc_blocked(p) && !p->dead)
                kpni_resolve_parked(r, p);
        }
    }
}

/* Holding r's lock, in block_any, before the blocker publishes its
 * state: the walks are due (KPNI_WALKS_DUE). */
void kpni_runners_walk_due(kpni_runner *r)
{
    kpni_lock_up(r);
    kpni_runners_walk_put_off(r);
    kpni_lock_down(r);
}

/* ------------------------------------------------------------------ */
/* Learning a placement (cfg.learn)
 *
 * Work stealing gains only as long as a steal moves work, not traffic.
 * In a net whose processes block at nearly every message, a runner runs
 * dry many times a second and steals each time; the stolen process's
 * partners stay behind, so its channels start crossing and the next
 * steal goes the other way.  Such a run is slower on two runners than on
 * one (RND-B, docs/benchmarks.md), while the same net placed by
 * kpn_place runs at 1.4 to 1.6 times the speed: a placement is what it
 * needs, and the counts to learn one from are in its channels as it runs.
 *
 * So an idle runner, holding every lock, asks whether stealing has
 * become a habit of a fine-grained net: whether it has stolen one process
 * for every cfg.learn messages it has sent in this run, and at least
 * LEARN_MIN in all, and whether it has sent at least one message per
 * cfg.learn_grain_ns of the run so far, or the net has carried one for
 * each CPU the runners share (learn_due; a runner that is trading is
 * held to a coarser grain, kpni_learn_want).  All three count.  A net that
 * ends up on one runner steals a few times as it gathers there, and a
 * runner the machine held up has its lone process taken now and then:
 * in a small net, whose learning waits for a few hundred messages,
 * those few steals met the ratio alone.  A 16-process ring with one token on two runners learnt a
 * placement from 3 to 8 of them in about one run in ten, which split it
 * over the two runners: the token then crossed between them twice a lap,
 * and the ring never went solo (below).
 * A coarse net steals as often for its few messages (the H.264 encoder
 * about once per 76, a pipeline of long messages as it fills up), but a
 * steal costs it little beside the work a message carries, and its
 * processes do unequal work for equal messages, which a placement by
 * messages would split unevenly; and a fine net that steals once per
 * hundreds of thousands of messages keeps its load balanced cheaply.
 * If so, and the net has carried enough messages for its counts to mean
 * something (LEARN_MIN a channel), it partitions the processes as kpn_place does
 * and makes each one's part its home.  There are as many parts as the
 * runners have CPUs (cfg.cpus, else the port's count), the first runners
 * taking them: runners beyond the CPUs would take turns on them, and
 * every message for a process whose runner waits for a CPU would wait
 * with it.  From then on nothing is stolen;
 * a reader woken by a process on its home runner joins it there (the
 * wake rule, restricted); and each runner, the next time it is idle,
 * takes the processes homed on it that are queued or blocked elsewhere
 * (pull_home: a move like a steal's, which marks the channels for where
 * their ends now are).  The placement is learnt again each time the
 * runner's messages double: the first counts still hold the net's
 * filling, later ones its steady state. */
#define LEARN_MIN 16u
/* blocks before a pull that found a process on a runner that was 'own'
 * looks again (kpni_runners_pull_due) */
#define OWNED_WAIT 64u
/* Trading (kpni_learn_want): a runner that has stolen LEARN_TRADING_MIN
 * processes in the run, one for every LEARN_TRADING messages it has sent
 * or oftener, is held to a grain LEARN_STRETCH times as coarse. */
#define LEARN_TRADING 64u
#define LEARN_TRADING_MIN 1024u
#define LEARN_STRETCH 64u

/* The messages the net's channels have carried, ever: the counters are
 * shared words every runner may read. */
static uint64_t net_messages(const kpn_net *net)
{
    const kpn_chan *c;
    uint64_t n = 0;

    for (c = net->chans; c != NULL; c = c->next)
        n += KPNI_LOAD(&c->sent);
    return n;
}

/* The messages a runner that has sent 'sent' and stolen 'stolen' in the
 * 'ns' the run has taken so far must have carried (itself, or the net
 * for each CPU) for the run to count as finer than 'grain_ns'.
 *
 * Trading stretches the grain it is measured by: each steal takes a
 * process away from its partners, and each message on a channel that
 * then crosses waits for lines from another CPU.  On 16 CPUs, RND-A,
 * whose messages take 0.1 us each on one runner, took 1.6 us a message
 * on each of 4 runners and 16 us on each of 16, and never learnt: the
 * more runners, the coarser the clock said the net was, and the worse
 * it ran (docs/runners.md, "Trading").  So a runner that is trading,
 * having stolen one process per LEARN_TRADING messages or oftener, is
 * held to LEARN_STRETCH times the grain.  A coarse net's runners run dry
 * as often for their few messages (the 50-stage pipeline of 50 us
 * messages stole one process per 5 on 16 runners), but over its whole
 * run each stole a few hundred: LEARN_TRADING_MIN keeps them out, and
 * with them trial windows of too few messages to judge a placement by. */
uint64_t kpni_learn_want(uint64_t ns, unsigned grain_ns, uint64_t sent, uint64_t stolen)
{
    uint64_t want = ns / grain_ns;

    if (stolen >= LEARN_TRADING_MIN && stolen >= sent / LEARN_TRADING)
        want /= LEARN_STRETCH;
    return want;
}

/* One part kept: two are tried again after AGAIN_SHARE windows for each
 * time over that one part carried its messages as fast as the best
 * with more (or work stealing), so that a window of two costs the run
 * about 1/AGAIN_SHARE of the time in between if two are still that much
 * slower; twice as long each time one part wins again ("Trying a
 * placement"). */
#define AGAIN_SHARE 16u

/* A wait of 'ns' doubled 'times' times, at most 16: the waits below
 * grow with each time the same choice wins again in a run. */
static uint64_t doubled(uint64_t ns, unsigned times)
{
    return ns << (times < 16 ? times : 16);
}

/* A placement dropped: the wait before the trial starts again,
 * AGAIN_SHARE windows, twice as long for each drop before in the run. */
static uint64_t drop_wait(const kpn_net *net)
{
    return doubled((uint64_t)AGAIN_SHARE * net->cfg.learn_trial_ns,
                   net->drops > 1 ? net->drops - 1 : 0);
}

/* Whether learn_due may find learning due, from what learn_due looks
 * at first: the words r writes itself and those written only under
 * every lock, so that a holder of r's lock alone may ask
 * (kpni_runners_idle).  0 says learn_due would say 0 too. */
static int learn_may_be_due(const kpni_runner *r)
{
    const kpn_net *net = r->net;
    uint64_t sent = r->messages - r->run_messages, stolen = r->steals - r->run_steals;

    if (net->cfg.policy != KPN_POLICY_WS || net->cfg.learn == 0 || KPN_COMPACT || sent == 0 ||
        sent < net->learn_at ||
        (net->trial == KPNI_TRIAL_DROPPED && kpn_port_clock_ns() - net->trial_ns < drop_wait(net)))
        return 0;
    return net->learnt != 0 || (stolen >= LEARN_MIN && stolen >= sent / net->cfg.learn);
}

/* The grain is the asking runner's own messages in this run, or the
 * net's for each CPU the runners share (net->parts), whichever is finer:
 * runners beyond the CPUs take turns on them, and a runner that waited
 * for one has sent few messages for the time.  Eight runners over two
 * CPUs trading RND-A's processes sent one message each per 2.8 us and
 * never learnt (docs/runners.md); for the net, per CPU, it was 0.7.
 * The net's count sums every channel, so it is taken again only when
 * the asking runner's messages have doubled. */
static int learn_due(kpni_runner *r)
{
    kpn_net *net = r->net;
    uint64_t sent = r->messages - r->run_messages, stolen = r->steals - r->run_steals, want;
    unsigned grain = net->cfg.learn_grain_ns;

    if (!learn_may_be_due(r))
        return 0;
    if (net->learnt != 0 || grain == 0)
        return 1;
    want = kpni_learn_want(kpn_port_clock_ns() - net->run_began, grain, sent, stolen);
    if (want <= sent)
        return 1;
    if (sent < net->grain_at)
        return 0;
    net->grain_at = 2 * sent;
    return want <= (net_messages(net) - net->run_msgs) / net->parts;
}

static void learn(kpni_runner *r)
{
    kpn_net *net = r->net;

    kpni_place_live(net);
    net->learnt++;
    net->pulled_parts = 0; /* and no runner is 'own' once it next parks */
    net->learn_at = 2 * (r->messages - r->run_messages);
    r->placements++;
    kpni_runners_wake_all(net); /* each takes its share (pull_home) */
}

/* A trial's halves ("Trying a placement", below): the next half of the
 * parts for a window, or the best for the run; where that is work
 * stealing (parts_won 0), a second window of it (recheck_ends). */
static void try_half(kpni_runner *r)
{
    kpn_net *net = r->net;

    if (net->parts >= 2) {
        net->parts = (net->parts + 1) / 2;
        learn(r);
        net->trial = KPNI_TRIAL_HALF;
        return;
    }
    if (net->parts_won == 0) {
        /* work stealing's second window, judged in recheck_ends */
        net->trial = KPNI_TRIAL_RECHECK;
        net->learnt_before = net->learnt;
        net->learnt = 0;
        kpni_runners_wake_all(net); /* to steal again */
        return;
    }
    net->trial = KPNI_TRIAL_KEPT;
    if (net->parts != net->parts_won) {
        net->parts = net->parts_won;
        learn(r);
    }
}

/* Two paces to compare, 'msgs1' messages in 'ns1' and 'msgs2' in 'ns2':
 * both counts, and both times, halved alike until the products of a
 * count and a time fit in 64 bits. */
static void halve_alike(uint64_t *msgs1, uint64_t *ns1, uint64_t *msgs2, uint64_t *ns2)
{
    while ((*msgs1 | *msgs2) >> 30) {
        *msgs1 >>= 1;
        *msgs2 >>= 1;
    }
    while ((*ns1 | *ns2) >> 29) {
        *ns1 >>= 1;
        *ns2 >>= 1;
    }
}

/* The wait before two parts are tried again, where one part carried
 * 'msgs1' messages in 'ns1' and the best with more 'msgs2' in 'ns2'. */
static uint64_t again_after(const kpn_net *net, uint64_t msgs1, uint64_t ns1, uint64_t msgs2,
                            uint64_t ns2)
{
    uint64_t fast, slow, over; /* over: how much faster one part was, in 64ths */

    halve_alike(&msgs1, &ns1, &msgs2, &ns2);
    fast = msgs1 * ns2;
    slow = msgs2 * ns1;
    /* One part won by more than 8/7, so 'fast' exceeds 'slow' (were it
     * not, the difference would wrap to the longest wait).  Two parts
     * that carried next to nothing wait the longest. */
    over = slow < 64 ? UINT64_MAX : (fast - slow) / (slow / 64);
    if (over > (uint64_t)1 << 16)
        over = (uint64_t)1 << 16;
    return over * AGAIN_SHARE * net->cfg.learn_trial_ns / 64;
}

/* How long one part, once kept, runs before two are tried again. */
static uint64_t again_wait(const kpn_net *net)
{
    return doubled(net->again_ns, net->agains);
}

/* How long since the last step the next one waits: a window, or where
 * one part is kept, the wait before two are tried again, or where the
 * placement was dropped, the wait before the trial starts again. */
static uint64_t window_ns(const kpn_net *net)
{
    if (net->trial == KPNI_TRIAL_KEPT)
        return again_wait(net);
    return net->trial == KPNI_TRIAL_DROPPED ? drop_wait(net) : net->cfg.learn_trial_ns;
}

/* The placement's window on 'parts' carried 'msgs' messages in 'ns'
 * ('first': the first placement's): the best so far where the first
 * keeps the pace of work stealing's window (net->base_*) within 1/8, or
 * a half is more than 8/7 as fast as the best with more; a first that
 * does not leaves work stealing's window the best. */
static void judge(kpn_net *net, int first, unsigned parts, uint64_t msgs, uint64_t ns)
{
    if (first ? kpni_trial_kept(msgs, ns, net->base_msgs, net->base_ns)
              : !kpni_trial_kept(net->base_msgs, net->base_ns, msgs, ns)) {
        if (!first && parts == 1)
            net->again_ns = again_after(net, msgs, ns, net->base_msgs, net->base_ns);
        net->parts_won = parts;
        net->base_msgs = msgs;
        net->base_ns = ns;
    } else if (first) {
        net->parts_won = 0;
    }
}

/* Work stealing's first window is timed as soon as learning falls due,
 * before anything has moved, and may carry the messages at a pace work
 * stealing does not keep: bench/soak's, 14 to 17 million a second in
 * its first window, and 6 to 8 million after dropping its placement
 * for it, one run in two at one time.  So where work stealing's window
 * was the best, it runs a second one, from where the processes are, and
 * the windows of the placement and its halves are judged again against
 * that one, as they were against the first: the placement is dropped
 * only where work stealing is the best again, else the parts that won
 * are learnt again and kept. */
static void recheck_ends(kpni_runner *r, uint64_t carried, uint64_t ns)
{
    kpn_net *net = r->net;
    unsigned i;

    net->parts_won = 0;
    net->base_msgs = carried;
    net->base_ns = ns;
    for (i = 0; i < net->ntried; ++i)
        judge(net, i == 0, net->tried[i].parts, net->tried[i].msgs, net->tried[i].ns);
    if (net->parts_won == 0) {
        net->trial = KPNI_TRIAL_DROPPED; /* and stealing goes on */
        net->drops++;
        r->dropped++;
        return;
    }
    net->trial = KPNI_TRIAL_KEPT;
    net->parts = net->parts_won;
    net->learnt = net->learnt_before; /* so that no runner has pulled for the next */
    learn(r);
}

/* One part, kept since the last step, carried 'carried' messages in
 * 'ns': try two for a window against that pace. */
static void try_again(kpni_runner *r, uint64_t carried, uint64_t ns)
{
    kpn_net *net = r->net;

    net->base_msgs = carried;
    net->base_ns = ns;
    net->parts = 2;
    learn(r);
    net->trial = KPNI_TRIAL_AGAIN;
}

/* Two parts' window carried 'carried' messages in 'ns': kept unless one
 * part was more than 8/7 as fast, as in the trial; else one part again,
 * tried again after twice as long as it would be. */
static void again_ends(kpni_runner *r, uint64_t carried, uint64_t ns)
{
    kpn_net *net = r->net;

    net->trial = KPNI_TRIAL_KEPT;
    if (kpni_trial_kept(carried, ns, net->base_msgs, net->base_ns))
        return;
    net->again_ns = again_after(net, net->base_msgs, net->base_ns, carried, ns);
    net->agains++;
    net->parts = 1;
    learn(r);
}

/* Trying a placement
 *
 * Whether a placement beats work stealing depends on more than the net:
 * on what moving a cache line between the runners' CPUs costs, which on
 * a virtual machine changes from minute to minute (docs/benchmarks.md,
 * "Trying a placement").  So the first placement of a run is on trial,
 * and the run's own pace decides (cfg.learn_trial_ns, T below).  When
 * one falls due, work stealing carries on for a window of at least T,
 * timed; then the placement is learnt, and its window timed the same
 * way, learning again as the messages double.  It is the best so far
 * unless the net carried its messages more than 1/8 slower in that
 * window than in the one before; then work stealing's window is.
 * Either way the same partition into half as many parts (runners) is
 * tried for a window, and each half after it down to one part; then
 * the parts that carried the messages fastest are learnt for the rest
 * of the run, fewer parts winning only if more than 8/7 as fast as the
 * best with more (the test above the other way round).  Where work
 * stealing stays the best, the runners steal again, from where the
 * processes are, for a second window of it, and every window of the
 * placement is judged again against that one (recheck_ends): only where
 * work stealing is the best again is the placement dropped, the runners
 * stealing until the trial starts again (below).  A net with too little
 * parallelism for two runners may be slower under both than on one: a
 * 4-process pipeline of capacity 1 ran 8 times as slowly as on one
 * runner under work stealing, and slower still on two parts, but on one
 * as fast.
 * What a crossing message costs grows with the runners and the distance
 * between their CPUs, and a quota the port cannot see (cfg.cpus) puts
 * parts on runners that wait for a CPU: the pace counts both.  Every
 * half is tried, not only while each wins: on two CPUs with cfg.cpus 8,
 * four parts were often no faster than eight, and two parts were more
 * than twice as fast (docs/runners.md).  One part is tried last: a net
 * with little parallelism (a ring with a few tokens) keeps both runners
 * busy on two, trading its processes and their lines between the CPUs,
 * and carries its messages two to three times as fast on one.  A window
 * ends at the first idle look after T, so a placement that never runs a
 * runner dry is kept; on one part the runner that holds every process
 * may never run dry, so it looks at the clock itself once per
 * KPNI_WINDOW_LOOK switches, from a block (kpni_runners_window).  The
 * others sleep meanwhile, and it goes solo, so that the window times
 * what one part gives.  The pace is the channels' 'sent' counters
 * summed, which every runner may read; one runner's own count would
 * change with the share of the net the placement gives it.
 *
 * A window may meet a slow spell of the host (the other CPU taken for a
 * few milliseconds), and one part kept for it would hold the run to its
 * end.  So one part, kept, is tried against two again, for a window,
 * its runner looking at the clock as in its window (KPNI_WINDOW_DUE),
 * and on two parts either runner, since both may stay busy there:
 * two are kept if they hold one part's pace since it was kept within
 * 1/8, else one part again (try_again, again_ends).  The wait before
 * (again_after) is what makes a window of two cost a share of at most
 * 1/AGAIN_SHARE of the time in between, were two as much slower as in
 * the window one part won, and it doubles each time one wins again.
 *
 * A drop may be for a window the host slowed too, and would hold the run
 * under work stealing to its end: bench/soak, which carries about 40
 * million messages a second on two parts, carried 6 to 8 million after a
 * drop.  So a drop is not for good either: after AGAIN_SHARE windows,
 * twice as long after each drop before in the run, the trial starts
 * again from work stealing's window, once learning is due as at first.
 * Where work stealing does win, its windows are its own pace, and what
 * the trial costs it is the placement's windows, a share of the wait. */
void kpni_trial_step(kpni_runner *r, uint64_t now)
{
    kpn_net *net = r->net;
    uint64_t ns = now - net->trial_ns, msgs, carried;

    if (KPNI_TRIAL_SETTLED(net))
        return; /* settled for the run */
    if (net->trial == KPNI_TRIAL_NONE && net->cfg.learn_trial_ns == 0) {
        net->parts_first = net->parts;
        learn(r);
        net->trial = KPNI_TRIAL_KEPT;
        return;
    }
    if (net->trial != KPNI_TRIAL_NONE && ns < window_ns(net))
        return; /* the window still open, or two parts not yet due again */
    msgs = net_messages(net);
    carried = msgs - net->trial_msgs;
    if (net->trial == KPNI_TRIAL_NONE) {
        net->trial = KPNI_TRIAL_BASE;
    } else if (net->trial == KPNI_TRIAL_DROPPED) {
        net->trial = KPNI_TRIAL_BASE; /* again, from as many parts as at first */
        net->parts = net->parts_first;
    } else if (net->trial == KPNI_TRIAL_KEPT) {
        try_again(r, carried, ns);
    } else if (net->trial == KPNI_TRIAL_AGAIN) {
        again_ends(r, carried, ns);
    } else if (net->trial == KPNI_TRIAL_RECHECK) {
        recheck_ends(r, carried, ns);
    } else if (net->trial == KPNI_TRIAL_BASE) {
        net->parts_first = net->parts;
        net->base_ns = ns;
        net->base_msgs = carried;
        net->ntried = 0;
        /* after a drop, counted on from the placements before it: a
         * count that started again would pass for one a runner has
         * taken already (r->pulled), and that runner would leave its
         * part where work stealing put it */
        net->learnt = net->learnt_before;
        learn(r);
        net->trial = KPNI_TRIAL_ON;
    } else { /* the placement's window (ON) or a half's */
        if (net->ntried < KPNI_TRIAL_WINDOWS) {
            net->tried[net->ntried].parts = net->parts;
            net->tried[net->ntried].msgs = carried;
            net->tried[net->ntried].ns = ns;
            net->ntried++;
        }
        judge(net, net->trial == KPNI_TRIAL_ON, net->parts, carried, ns);
        try_half(r);
    }
    net->trial_ns = now;
    net->trial_msgs = msgs;
}

/* Whether 'msgs' messages in 'ns' keep, within 1/8, the pace of
 * 'base_msgs' in 'base_ns': both counts, and both times, halved alike
 * until the products fit in 64 bits (halve_alike). */
int kpni_trial_kept(uint64_t msgs, uint64_t ns, uint64_t base_msgs, uint64_t base_ns)
{
    halve_alike(&msgs, &ns, &base_msgs, &base_ns);
    return 8 * msgs * base_ns >= 7 * base_msgs * ns;
}

/* Blocks a runner lets pass before it walks every process again, to pull
 * one home or to ask to go solo: as many as the net has processes, so
 * that the walk costs a block no more than a step. */
static unsigned blocks_per_walk(const kpn_net *net)
{
    return net->nprocs < (unsigned)-1 ? (unsigned)net->nprocs : (unsigned)-1;
}

/* r takes the processes the placement homes on it that are queued or
 * blocked elsewhere.  A process moves to a runner only by that runner's
 * own thread, as a thief takes one (so 'unflips' stays its own count,
 * and a channel stops crossing only where nothing runs on its side).
 * One that runs elsewhere stays there; on several parts r takes it when
 * the placement is learnt again, or a reader as its home runner wakes
 * it.  On one part r takes it at a later block (KPNI_PULL_DUE): r may
 * never run dry to look again, and a process that only writes is never
 * woken from a read.  Left where it ran, the source of a 4-process
 * pipeline of capacity 1 kept its channel crossing, and the window on
 * one part carried a tenth of the messages that one part does.  r looks
 * again once it has blocked as often as the net has processes, so that
 * the walk costs a block no more than a step. */
static void pull_home(kpni_runner *r)
{
    kpn_net *net = r->net;
    kpn_proc *p;
    int left = 0, owned = 0;

    for (p = net->procs; p != NULL; p = p->next) {
        kpni_runner *v = p->runner;
        unsigned state;
        kpn_chan *wait;

        if (v == r || p->home != r->index)
            continue;
        if (v->own) { /* taken at a later look, once v has parked */
            owned = 1;
            continue;
        }
        state = KPNI_LOAD(&p->state);
        wait = KPNI_LOAD(&p->wait);
        /* Not one claimed for an inbox, on none yet (runners.c, "Wakes
         * from other runners").  A blocked one is marked moving first:
         * its runner may have been 'own' a moment ago, and a waker that
         * saw it so claims with no lock; it waits for the move. */
        if (!may_move(p) || KPNI_IS_CLAIMED(wait) ||
            (state != KPN_PROC_READY && state != KPN_PROC_BLOCKED_READ &&
             state != KPN_PROC_BLOCKED_WRITE) ||
            (state != KPN_PROC_READY &&
             !__atomic_compare_exchange_n(&p->wait, &wait, KPNI_MOVING, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED))) {
            left |= state != KPN_PROC_EXITED;
            continue;
        }
        move(p, r);
        if (state == KPN_PROC_READY) { /* not running (may_move): queued on v */
            kpni_queue_unlink(v, p);
            kpni_queue_push_back(r, p);
        }
        KPNI_STORE(&p->runner, r);
        if (state != KPN_PROC_READY)
            __atomic_store_n(&p->wait, wait, __ATOMIC_RELEASE);
    }
    if (owned) {
        r->pull_after = OWNED_WAIT;
        return;
    }
    if (!left || !KPNI_ONE_PART(net)) {
        r->pulled = net->learnt;
        net->pulled_parts += r->index < net->parts;
    } else
        r->pull_after = blocks_per_walk(net);
}

/* Holding r's lock, in block_any, with a placement kept for the run on
 * several parts that r has yet to take its part of: take it now rather
 * than when it next runs out of work, which a busy runner may not do for
 * a long while, and until every part's runner has, none goes 'own'
 * (KPNI_OWN_OK).  A process still on a runner that is 'own' stays for a
 * later block, OWNED_WAIT blocks on, by when that one has parked. */
void kpni_runners_pull_due(kpni_runner *r)
{
    kpn_net *net = r->net;

    if (!KPNI_TRIAL_SETTLED(net) || net->parts < 2 || r->index >= net->parts ||
        (r->pull_after != 0 && --r->pull_after != 0))
        return;
    kpni_lock_up(r);
    if (r->pulled != net->learnt)
        pull_home(r);
    kpni_lock_down(r);
}

/* Holding r's lock, in block_any, under a placement on one part: it
 * homes every process on one runner, which takes them at its next block
 * (KPNI_PULL_DUE) rather than when it next runs out of work, as a runner
 * that keeps every process may never do; and that runner closes the
 * trial's window on it (kpni_runners_window). */
void kpni_runners_one_part(kpni_runner *r)
{
    if (KPNI_PULL_DUE(r) && (r->pull_after == 0 || --r->pull_after == 0)) {
        kpni_lock_up(r);
        if (KPNI_PULL_DUE(r))
            pull_home(r);
        kpni_lock_down(r);
    }
    if (KPNI_WINDOW_DUE(r))
        kpni_runners_window(r);
}

/* In block_any, holding r's lock, or none while r is solo: the window
 * of a trial on one part, or of two parts tried again (KPNI_WINDOW_DUE),
 * may be due to close.  On one part its runner holds every process, so
 * it may never run dry to close it at an idle look, and solo it takes no
 * lock at all; on two parts both runners may stay busy.  So a runner
 * looks at the clock once per KPNI_WINDOW_LOOK switches, and closes the
 * window itself when it is due, sharing again first if it was solo.
 * The step reads the clock again under every lock: another runner may
 * have closed the window meanwhile, at a later time than 'now'. */
void kpni_runners_window(kpni_runner *r)
{
    kpn_net *net = r->net;
    uint64_t now = kpn_port_clock_ns();
    int solo = KPNI_SOLO(r);

    r->window_at = r->switches;
    if (now - net->trial_ns < window_ns(net))
        return;
    if (solo) {
        kpni_runners_unsolo(r, 0);
        kpni_lock(r);
    }
    kpni_lock_up(r);
    if (KPNI_WINDOW_TIMED(net)) /* not settled meanwhile */
        kpni_trial_step(r, kpn_port_clock_ns());
    kpni_lock_down(r);
    if (solo) {
        kpni_unlock(r);
        /* ask again, though no runner has gone dormant since */
        r->solo_tried = KPNI_LOAD(&net->dormancies) - 1u;
    }
}

/* A trial under way, whose steps an idle runner takes (kpni_trial_step) */
#define TRIAL_OPEN(net) ((net)->trial == KPNI_TRIAL_BASE || (net)->trial == KPNI_TRIAL_ON || \
                         (net)->trial == KPNI_TRIAL_HALF || (net)->trial == KPNI_TRIAL_AGAIN || \
                         (net)->trial == KPNI_TRIAL_RECHECK)

/* Holding r's lock, nothing ready on r: whether r may say it is idle
 * holding that lock alone, having nothing to do under every lock: no
 * walks put off on any runner, no trial step or learning due, no other
 * runner's queue to look at for a process to steal (work stealing
 * before a placement is learnt: stealable), the run going on.  Each end
 * of a hand-off between two runners runs dry at every hop, and taking
 * every lock there would take the partner's, which the partner's own
 * blocks and wakes need, at every hop.  Another runner's walks are
 * counted without its lock: one put off just now is made at that
 * runner's bound or when it runs dry, as any walk put off may be
 * ("Walks put off").  Whether the others are all idle is asked after r
 * counts itself (kpni_runners_idle). */
static int idle_alone(const kpni_runner *r)
{
    const kpn_net *net = r->net;
    unsigned i;

    if (r->head != NULL || STEALING(net) ||
        TRIAL_OPEN(net) || learn_may_be_due(r) ||
        (net->learnt != 0 && r->pulled != net->learnt) || KPNI_LOAD(&net->done) ||
        KPNI_LOAD(&net->halt) != KPN_OK)
        return 0;
    for (i = 0; i < net->nrunners; ++i)
        if (KPNI_LOAD(&net->runners[i].nwalks) != 0)
            return 0;
    return 1;
}

/* Nothing is ready here (r's lock held).  If another runner is busy,
 * spin, then sleep until woken, and return 1 with r's lock held again
 * (the caller looks again); if every other runner is idle too, return 0
 * holding every runner's lock: the net is at rest. */
int kpni_runners_idle(kpni_runner *r)
{
    kpn_net *net = r->net;
    int spin, spinning = KPNI_SPINNING;

    /* Counted first: of two runners that do this at once, the second
     * finds them all idle, takes the long way below, and finds the net
     * at rest there.  A waker takes r's lock, so none sees r counted but
     * not yet spinning (a halt's, which takes none, may, as below). */
    if (idle_alone(r)) {
        if (__atomic_add_fetch(&net->idle, 1u, __ATOMIC_ACQ_REL) < net->nrunners) {
            if (spin_unless_woken(net, r))
                return 1;
            kpni_unlock(r);
            goto spin;
        }
        __atomic_fetch_sub(&net->idle, 1u, __ATOMIC_RELAXED);
    }
    kpni_lock_up(r);
    kpni_runners_walk_put_off(r);
    if (TRIAL_OPEN(net) ||
        ((net->trial == KPNI_TRIAL_NONE || net->trial == KPNI_TRIAL_DROPPED) && learn_due(r)))
        kpni_trial_step(r, kpn_port_clock_ns());
    if (net->learnt != 0 && learn_due(r))
        learn(r);
    if (net->learnt != 0 && r->pulled != net->learnt)
        pull_home(r);
    /* a wake came while r's lock was let go, or the run is over: the
     * loop looks again (the end is decided under every lock, so a
     * runner that registers below is woken by it) */
    kpni_inbox_drain(r);
    if (r->head != NULL || stealable(r) || KPNI_LOAD(&net->done) ||
        KPNI_LOAD(&net->halt) != KPN_OK) {
        kpni_lock_down(r);
        return 1;
    }
    if (__atomic_load_n(&net->idle, __ATOMIC_ACQUIRE) + 1 >= net->nrunners) {
        unsigned i;

        /* a waker pushes before it counts itself idle: not at rest
         * while an inbox holds a process (its runner empties it) */
        for (i = 0; i < net->nrunners; ++i)
            if (__atomic_load_n(&net->runners[i].inbox, __ATOMIC_SEQ_CST) != NULL) {
                wake_runner(net, &net->runners[i]);
                kpni_lock_down(r);
                return 1;
            }
        /* Nor while another runner is awake.  A waker through an inbox
         * holds no lock: between its exchange of 'sleeping' and its
         * decrement of the count (set_awake) the runner it woke may
         * empty its inbox, run, block and count itself idle again, so
         * that the count is one too high while the waker's runner runs.
         * Under every lock, a runner counted idle has said it spins or
         * sleeps (it counts itself and says so under its lock), so one
         * that is awake is that moment's. */
        for (i = 0; i < net->nrunners; ++i)
            if (&net->runners[i] != r &&
                __atomic_load_n(&net->runners[i].sleeping, __ATOMIC_SEQ_CST) == KPNI_AWAKE) {
                kpni_lock_down(r);
                return 1;
            }
        return 0;
    }
    /* counted before it says so: a waker that sees it idle (a halt's
     * takes no lock) then always finds it counted */
    __atomic_fetch_add(&net->idle, 1u, __ATOMIC_ACQ_REL);
    if (spin_unless_woken(net, r)) {
        kpni_lock_down(r);
        return 1;
    }
    kpni_unlock_all(r);
spin:
    for (spin = 1; spin <= KPNI_IDLE_SPINS && KPNI_LOAD(&r->sleeping); ++spin) {
        cpu_relax();
        if (spin % 128 == 0) {
            kpn_port_yield(); /* a runner sharing this CPU goes first */
            kpni_runners_wake_missed(r);
            /* a process left queued alone elsewhere may have waited
             * long enough now (takeable); a while, then sleep */
            if (r->lone != NULL && r->lone_looks++ < KPNI_IDLE_SPINS / 128) {
                (void)set_awake(net, r);
                kpni_lock(r);
                return 1;
            }
        }
    }
    if (__atomic_compare_exchange_n(&r->sleeping, &spinning, KPNI_ASLEEP, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        /* One last look after the fence the exchange made: a process
         * made ready here, on this runner, posts the semaphore at once. */
        kpni_runners_wake_missed(r);
        r->sleeps++;
        KPNI_STORE(&r->fruitless, r->switches != r->woke_switches ? 0u
                                  : r->fruitless + (r->fruitless < KPNI_FRUITLESS));
        /* nothing shared is looked at from here until the post: another
         * runner may now go solo */
        KPNI_STORE_REL(&r->dormant, 1);
        __atomic_fetch_add(&net->dormancies, 1u, __ATOMIC_RELEASE);
        kpn_port_sem_wait(r->sem);
        /* before the look at 'solo' below, in one total order with a
         * runner going solo (kpni_runners_solo) */
        __atomic_store_n(&r->dormant, 0, __ATOMIC_SEQ_CST);
        r->woke_switches = r->switches;
        r->lone_looks = 0;
        /* a halt may post while a runner is solo: it ends that at its
         * host, soon after, and only then may this one look */
        while (__atomic_load_n(&net->solo, __ATOMIC_SEQ_CST))
            kpn_port_yield();
    }
    kpni_lock(r);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Solo
 *
 * A net with no parallelism left, such as a ring with one token, keeps
 * one runner busy while the others find nothing to steal and sleep.
 * The busy runner still pays for sharing at every block and wake (its
 * lock, the longer paths): a hop costs it about half as much again as on
 * one runner (docs/benchmarks.md).  So when every other runner is
 * dormant and every live process is on r, r goes solo:
 * 'mt' clear, it runs as a net of one runner does, with no lock, until
 * it has a second process ready at a block that looks (block_any) or
 * none at all (its host).  Nothing else looks at the net meanwhile: a
 * dormant runner is woken only by a post, which only a runner's own
 * thread makes, and r makes none while solo but a halt's; and a runner
 * woken at all, by a halt or by a post made as r went solo, waits for
 * 'net->solo' to clear before it looks (kpni_runners_solo says why
 * that cannot be missed).  Input needs no runner (input.c).
 *
 * Under a placement on one part (KPNI_ONE_PART) r goes solo too, without
 * waiting for the dormant runners to come back empty-handed from their
 * wakes (nothing is homed on them), and it does not share again for
 * processes ready, which may run nowhere else.  In a trial's window on
 * one part every block of r looks ('slow_reads'), so that r closes the
 * window (kpni_runners_window), sharing again first.
 *
 * The block that makes r solo looks at its channel again first (sched.c,
 * block_any): its process found the channel empty or full while the
 * other end could still run elsewhere, and that end may have sent,
 * taken or returned since, with no block to wake.
 *
 * A process that parks while r is solo takes no lock with it, so it
 * lets go of none as it resumes: 'unlocks' is clear for it, and a
 * runner that shares resumes it from its host with the lock let go
 * (sched.c).  One that parked before, while r shared, lets go of r's
 * lock when a solo r resumes it, a lock nobody holds. */

/* Give r's queue the back links that one runner does not keep, before
 * r shares again. */
static void relink(kpni_runner *r)
{
    kpn_proc *p, *prev;

    for (prev = NULL, p = r->head; p != NULL; prev = p, p = p->next_ready)
        p->prev_ready = prev;
}

/* Count afresh, for each process, the processes blocked waiting on it
 * (kpni_proc_waits_for): along every channel ('all'), as one runner
 * keeps the count at every block and wake, or along those that do not
 * cross, as several runners keep it (kpn_int.h, KPNI_NWAITERS_ADD_ON;
 * kpni_runners_count).  A runner about to go solo finds counts that
 * leave out the waiters on channels that cross; it counts every waiter,
 * and keeps the counts so from here on, and a marked process that
 * read-blocks asks its count, not its channels, whether it must walk
 * (kpni_proc_waited_on).  Trusted stale, a count
 * too low would let a read-block that closes a cycle skip its walk.
 * Every other runner is dormant and every live process on r: nothing
 * moves meanwhile.  Shared again, r keeps those counts: a waiter on a
 * crossing channel that they hold is let go without a count taken off,
 * and leaves its count too high, which keeps a mark that could go. */
static void count_waiters(kpn_net *net, int all)
{
    kpn_proc *p;

    if (net->outside != NULL) /* the writer of every input, on no list */
        net->outside->nwaiters = 0;
    for (p = net->procs; p != NULL; p = p->next)
        p->nwaiters = 0;
    for (p = net->procs; p != NULL; p = p->next)
        if (kpni_proc_blocked(p) && (all || !KPNI_CROSS(KPNI_LOAD(&p->wait))))
            kpni_proc_waits_for(p)->nwaiters++;
}

/* Holding r's lock, in block_any: go solo if r may (and then let go of
 * the lock, returning 1). */
int kpni_runners_solo(kpni_runner *r)
{
    kpn_net *net = r->net;
    const kpn_proc *p;
    kpn_chan *c;
    unsigned i, dormancies = KPNI_LOAD(&net->dormancies);
    int one;

    if (r->solo_after != 0) {
        r->solo_after--;
        return 0;
    }
    if (r->nwalks != 0) /* walks put off: made first, at a block */
        return 0;
    r->solo_tried = dormancies;
    one = KPNI_ONE_PART(net);
    if (KPN_COMPACT || net->cfg.policy != KPN_POLICY_WS || (net->learnt != 0 && !one) ||
        KPNI_LOAD(&net->halt) != KPN_OK)
        return 0;
    /* Said before the others are asked (sequentially consistent, as is
     * each look at 'dormant'), and taken back if r does not go solo: a
     * runner asked while dormant may be woken after, by one not yet
     * dormant then, which has gone dormant by the time it is asked
     * itself.  The woken one clears its 'dormant' and then looks at
     * 'solo' (kpni_runners_idle), so it sees r solo and waits, or r sees
     * it awake: Dekker's pairing, on the two words. */
    __atomic_store_n(&net->solo, 1, __ATOMIC_SEQ_CST);
    /* under a placement on one part a dormant runner has nothing to
     * come back for */
    for (i = 0; i < net->nrunners; ++i)
        if (i != r->index && (!__atomic_load_n(&net->runners[i].dormant, __ATOMIC_SEQ_CST) ||
                              KPNI_LOAD(&net->runners[i].sleeping) != KPNI_ASLEEP ||
                              (!one && KPNI_LOAD(&net->runners[i].fruitless) < KPNI_FRUITLESS))) {
            KPNI_STORE_REL(&net->solo, 0);
            return 0;
        }
    /* The dormant runners' processes are still: nobody moves them.  One
     * left there is usually one r has yet to wake (it then follows the
     * waker): look again once r has blocked as often as the net has
     * processes, so that the walk costs a block no more than a step. */
    for (p = net->procs; p != NULL; p = p->next)
        if (p->runner != r && p->state != KPN_PROC_EXITED) {
            r->solo_tried = dormancies - 1u;
            r->solo_after = blocks_per_walk(net);
            KPNI_STORE_REL(&net->solo, 0);
            return 0;
        }
    /* Blocks while solo set no word (KPNI_WAITING): a crossing channel's
     * messages and flushes after r shares again look all the same, until
     * the end they look for runs again.  Every other channel has both
     * ends here, run by one thread, and keeps its reader's words on its
     * writer's line until r shares again, as on one runner: a hop misses
     * one line fewer. */
    for (c = net->chans; c != NULL; c = c->next)
        if (KPNI_LOAD(&c->cross))
            kpni_chan_ask_looks(c);
        else
            kpni_chan_lay(c, 0);
    if (r->resolve)
        count_waiters(net, 1);
    r->solo = 1;
    r->solos++;
    r->mt = 0;
    kpni_own_set(r, 0);
    kpni_unbias(r);
    kpni_inbox_drain(r);
    kpni_sched_drain(r);
    /* solo in a window on one part, every block looks (block_any) */
    r->slow_reads = one && net->trial == KPNI_TRIAL_HALF;
    kpni_unlock(r);
    return 1;
}

/* r, solo and holding no lock, shares again; 'share': wake a dormant
 * runner to take what r has queued. */
void kpni_runners_unsolo(kpni_runner *r, int share)
{
    kpn_net *net = r->net;
    kpn_chan *c;
    unsigned i;

    /* under work stealing a move may start any channel crossing while
     * its other end runs, so every reader's words go back to its own
     * line before another runner runs anything */
    for (c = net->chans; c != NULL; c = c->next)
        kpni_chan_lay(c, 1);
    relink(r);
    r->mt = 1;
    r->slow_reads = 1;
    r->solo = 0;
    r->drain = 0;
    KPNI_STORE_REL(&net->solo, 0);
    for (i = 0; share && i < net->nrunners; ++i)
        if (KPNI_LOAD(&net->runners[i].sleeping) == KPNI_ASLEEP) {
            wake_runner(net, &net->runners[i]);
            break;
        }
}

int kpni_runners_done(const kpni_runner *r)
{
    return r->mt && KPNI_LOAD(&r->net->done);
}

/* A runner's loop is over (r's lock held): so is the run, for every
 * runner.  Under every lock, so that a runner going idle either sees
 * 'done' or has said it is idle before the wake below looks. */
void kpni_runners_finish(kpni_runner *r)
{
    kpn_net *net = r->net;

    kpni_lock_up(r);
    KPNI_STORE(&net->done, 1);
    kpni_runners_wake_all(net);
    kpni_unlock_all(r);
}

/* 'net->done' while runner 0 starts the threads: no runner runs a
 * process before every one has started, so a run whose last thread the
 * system refuses returns KPN_ETHREAD with nothing run (kpn.h). */
#define STARTING 2

static void runner_thread(void *arg)
{
    kpni_runner *r = arg;
    int done;

    while ((done = KPNI_LOAD_ACQ(&r->net->done)) == STARTING)
        kpn_port_yield();
    if (done == 0)
        kpni_sched_loop(r);
}

/* A net over one CPU, under work stealing, runs on runner 0 alone, as a
 * net of one runner runs.  Runners that can only take turns on one CPU
 * add nothing but what a runner pays to share its processes (the locks
 * at every block and wake, a hand-off that waits whenever a woken
 * process's runner is not the one on the CPU): up to an eighth of a
 * fine-grained net's speed on two runners, a seventh on eight, even
 * after learning a placement (docs/runners.md, "One CPU").  So no
 * thread is started; every process joins runner 0, and no channel is
 * marked crossing, so that each keeps its reader's words on the
 * writer's line.
 *
 * Spawn queued process i on runner i mod N.  Taken runner by runner,
 * the queues would leave runner 0 dispatching 0, N, 2N, ... before 1,
 * and a net runs on in the order it starts in: bench/soak's 10 000
 * processes, each talking to its neighbours in spawn order, then ran
 * at two thirds of one runner's speed, with as many switches.
 * So where another runner has processes queued (the first run, or
 * processes spawned since), runner 0 queues every ready process in
 * spawn order, as one runner would have queued them; a ready process
 * is always on a queue between runs.
 *
 * The first run settles it for the net's life ('sharing'): a process
 * parks by the one-runner path, whose switch is a tail call with nothing
 * after it, so it would not let go of the lock a runner of a shared run
 * hands it as it resumes (sched.c, park).  Afterwards runner 0 keeps its
 * queue with the back links several runners keep, which what moves a
 * queued process between runs (kpn_proc_pin) unlinks it by. */
#define KPNI_SHARED 1
#define KPNI_ALONE 2

static void run_alone(kpn_net *net)
{
    kpni_runner *r0 = &net->runners[0];
    kpn_proc *p;
    unsigned i;

    for (i = 1; i < net->nrunners && net->runners[i].head == NULL; ++i) {
    }
    if (i < net->nrunners) {
        for (i = 0; i < net->nrunners; ++i)
            while (kpni_queue_pop_front(&net->runners[i]) != NULL) {
            }
        for (p = net->procs; p != NULL; p = p->next)
            if (p->state == KPN_PROC_READY)
                kpni_queue_push_back(r0, p);
    }
    for (p = net->procs; p != NULL; p = p->next)
        p->runner = r0;
    r0->mt = 0;
    r0->slow_reads = 0;
    kpni_sched_loop(r0);
    r0->mt = 1;
    r0->slow_reads = 1;
    relink(r0);
}

/* Runner 0 is the calling thread; the others are started for this run
 * and joined before it returns. */
kpn_status kpni_runners_run(kpn_net *net)
{
    unsigned i, started;
    kpn_chan *c;

    net->parts = net->cfg.cpus != 0 ? net->cfg.cpus : kpn_port_cpus();
    if (net->parts == 0 || net->parts > net->nrunners)
        net->parts = net->nrunners;
    net->agains = 0;
    net->drops = 0;
    if (net->sharing == 0)
        net->sharing = net->parts == 1 && net->cfg.policy == KPN_POLICY_WS ? KPNI_ALONE
                                                                           : KPNI_SHARED;
    if (net->sharing == KPNI_ALONE) {
        run_alone(net);
        return KPN_OK;
    }
    /* Under KPN_POLICY_STATIC a process runs only on its home runner, so
     * a channel whose ends share one is never used from two threads at
     * once (chan.c, release). */
    if (net->cfg.policy == KPN_POLICY_STATIC)
        for (c = net->chans; c != NULL; c = c->next)
            kpni_chan_set_cross(c, c->input || c->writer->home != c->reader->home);
    else
        kpni_runners_mark(net);
    kpni_runners_count(net);
    KPNI_STORE(&net->done, 0);
    KPNI_STORE(&net->idle, 0u);
    net->fence_ok = kpn_port_fence_threads() == 0;
    net->learnt = 0;
    net->learnt_before = 0;
    net->learn_at = (uint64_t)LEARN_MIN * net->nchans;
    net->trial = KPNI_TRIAL_NONE;
    if (net->cfg.learn != 0 && net->cfg.learn_grain_ns != 0 && net->cfg.policy == KPN_POLICY_WS) {
        net->run_began = kpn_port_clock_ns();
        net->run_msgs = net_messages(net);
        net->grain_at = 0;
    }
    for (i = 0; i < net->nrunners; ++i) {
        kpni_runner *r = &net->runners[i];

        KPNI_STORE(&r->sleeping, KPNI_AWAKE);
        r->nflipped = 0; /* a walk may leave some (block_any) */
        r->run_messages = r->messages;
        r->run_steals = r->steals;
        r->pulled = 0;
        r->pull_after = 0;
        r->fruitless = 0;
        r->woke_switches = r->switches;
        r->solo_after = 0;
        r->bias = r->inside = 0;
    }
    KPNI_STORE(&net->done, STARTING);
    for (started = 1; started < net->nrunners; ++started) {
        kpni_runner *r = &net->runners[started];
        if (kpn_port_thread_start(r->thread, r->stack, net->cfg.runner_stack, runner_thread, r) != 0)
            break;
    }
    if (started < net->nrunners) {
        KPNI_STORE_REL(&net->done, 1); /* the threads started return at the gate */
    } else {
        KPNI_STORE_REL(&net->done, 0);
        kpni_sched_loop(&net->runners[0]);
    }
    for (i = 1; i < started; ++i)
        kpn_port_thread_join(net->runners[i].thread);
    /* a wake pushed after its runner left its loop (a halt): queued for
     * the next run, as every ready process is between runs */
    for (i = 0; i < net->nrunners; ++i)
        kpni_inbox_take(&net->runners[i]);
    return started < net->nrunners ? KPN_ETHREAD : KPN_OK;
}

#else

typedef int kpni_no_runners; /* ISO C wants something in a file */

#endif /* KPN_THREADS */
