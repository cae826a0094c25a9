/* SPDX-License-Identifier: MIT */
/* Channels: 1:1 ring buffers with copy semantics, blocking and EOF. */
#include "kpn_int.h"

/* A channel of a live net, not a stale handle (kpn_int.h, "Stale
 * handles"): its tag, its seal, its net's serial and the carved arena.
 * The thorough check, for the calls off the hot path; a send and a
 * receive make kpni_chan_ok's (kpn_int.h). */
KPNI_TAG_READ int kpni_chan_valid(const kpn_chan *c)
{
#if KPN_COMPACT
    /* The compact layout has no room for a serial: the tag alone
     * (docs/errors.md says what that leaves unchecked). */
    return c != NULL && KPNI_ALIGNED(c) && c->magic == KPNI_CHAN_MAGIC;
#else
    return c != NULL && KPNI_ALIGNED(c) && c->magic == KPNI_CHAN_MAGIC &&
           c->seal == kpni_seal(c, c->net) && kpni_net_valid(c->net) &&
           c->serial == c->net->serial && kpni_in_arena(c->net, c, sizeof *c);
#endif
}

/* What a report may trust after a stack overflow (see kpni_proc_sane). */
int kpni_chan_sane(const kpn_net *net, const kpn_chan *c)
{
    if (!kpni_in_arena(net, c, sizeof *c))
        return 0;
    KPNI_VG_ADDRESSABLE(c, sizeof *c); /* as kpni_proc_sane says */
    return kpni_chan_valid(c) &&
#if !KPN_COMPACT
           c->net == net &&
#endif
           kpni_in_arena(net, c->writer, sizeof *c->writer) &&
           kpni_in_arena(net, c->reader, sizeof *c->reader) &&
           (c->next == NULL || kpni_in_arena(net, c->next, sizeof *c));
}

#if !KPN_COMPACT
/* kpni_chan_ok reads the net's chan_head and chans_end: both within the
 * net's first KPNI_LINE bytes, which every hop reads anyway */
typedef char kpni_net_head_check[(offsetof(kpn_net, chans_end) + sizeof(unsigned char *) <=
                                  KPNI_LINE) ? 1 : -1];
#endif

/* Ring bytes for 'cap' messages, or 0 if that overflows a size_t. */
static size_t ring_size(size_t msg_size, size_t cap)
{
    if (msg_size == 0 || cap > ((size_t)-1 - 2 * KPNI_ALIGN) / msg_size)
        return 0;
    return msg_size * cap;
}

/* The hosted layout starts a channel on a cache line: the carve may
 * skip up to this many bytes to get there. */
#if KPNI_CHAN_LINES
#define LINE_SLACK (KPNI_LINE - KPNI_ALIGN)
#define CHAN_ALIGN KPNI_LINE
typedef char kpni_chan_lines_check[(offsetof(kpn_chan, wpos) == KPNI_LINE &&
                                    offsetof(kpn_chan, serial) == 4 && /* kpni_chan_ok */
                                    offsetof(kpn_chan, rpos) == 2 * KPNI_LINE) ? 1 : -1];
/* the reader's four words in the same order on either line (KPNI_RD) */
#define RD_AT(first, field, i) (offsetof(kpn_chan, field) == offsetof(kpn_chan, first) + (i) * sizeof(size_t))
typedef char kpni_chan_rd_check[(RD_AT(near_rpos, seen_received, KPNI_RD_RECEIVED) &&
                                 RD_AT(near_rpos, sent, KPNI_RD_SENT) &&
                                 RD_AT(near_rpos, ring_bytes, KPNI_RD_BYTES) &&
                                 RD_AT(rpos, received, KPNI_RD_RECEIVED) &&
                                 RD_AT(rpos, seen_sent, KPNI_RD_SENT) &&
                                 RD_AT(rpos, rring_bytes, KPNI_RD_BYTES) &&
                                 offsetof(kpn_chan, rpos) < 256) ? 1 : -1]; /* rd_off */
#else
#define LINE_SLACK 0u
#define CHAN_ALIGN KPNI_ALIGN
typedef char kpni_chan_rd_check[(offsetof(kpn_chan, received) ==
                                 offsetof(kpn_chan, rpos) + KPNI_RD_RECEIVED * sizeof(size_t)) ? 1 : -1];
#endif

/* The bytes a channel takes, rounded up to 'align', or 0 if 'msg_size'
 * or 'capacity' is 0 or the sum overflows a size_t.  A ring small
 * enough to live in the header (KPNI_RING_INLINE) is carved all the
 * same: carving less shifts every object after it, and in a 10 000-
 * process ring, which spawns and connects in turn, that alone made a
 * hop of bench/ring --procs=10000 60% slower.  A net of one runner carves whole lines
 * (CHAN_ALIGN), as it does for a process (proc.c, block_size, says why);
 * kpn_size_chan gives that, the most a channel takes. */
static size_t chan_bytes(size_t msg_size, size_t capacity, size_t align)
{
    size_t ring = ring_size(msg_size, capacity);

    if (ring == 0 ||
        ring > (size_t)-1 - 2 * KPNI_ALIGN - LINE_SLACK - CHAN_ALIGN - sizeof(kpn_chan))
        return 0;
    return kpni_round_up(LINE_SLACK + kpni_align_up(sizeof(kpn_chan)) + kpni_align_up(ring), align);
}

size_t kpn_size_chan(size_t msg_size, size_t capacity)
{
    return chan_bytes(msg_size, capacity, CHAN_ALIGN);
}

/* Carve and link a channel; the caller has checked its arguments.
 * 'writer' is net->outside for an input (input.c), which has no lists. */
kpn_status kpni_chan_make(kpn_net *net, kpn_chan **out, kpn_proc *writer,
                          kpn_proc *reader, size_t msg_size, size_t capacity)
{
    size_t total;
    unsigned char *block;
    kpn_chan *c;

    if (capacity == 0)
        capacity = net->cfg.default_capacity;
    total = chan_bytes(msg_size, capacity, kpni_one_stride(net) ? CHAN_ALIGN : KPNI_ALIGN);
    if (total == 0)
        return KPN_EINVAL;
    block = kpni_arena_carve(&net->arena, total);
    if (block == NULL)
        return KPN_ENOMEM;

    kpni_memset(block, 0, total); /* the ring too: no stale record survives in it */
    c = (kpn_chan *)(void *)(block + ((0u - (uintptr_t)block) & (LINE_SLACK | (KPNI_ALIGN - 1))));
    c->magic = KPNI_CHAN_MAGIC;
#if !KPN_COMPACT
    c->serial = net->serial;
    c->net = net;
    c->seal = kpni_seal(c, net);
    net->chans_end = (const unsigned char *)(c + 1); /* kpni_chan_ok */
#endif
    c->writer = writer;
    c->reader = reader;
#if KPNI_CHAN_LINES
    if (KPNI_RING_INLINE(msg_size * capacity))
        c->ring = c->wring;
    else
#endif
        c->ring = (unsigned char *)c + kpni_align_up(sizeof *c);
    c->msg_size = msg_size;
    c->cap = capacity;
#if KPNI_CHAN_LINES
    c->ring_bytes = c->rring_bytes = msg_size * capacity;
    c->rd_off = offsetof(kpn_chan, near_rpos); /* until kpni_chan_set_cross */
    if (writer != net->outside) {
        c->next_out = writer->outs;
        writer->outs = c;
        if (writer->open_outs != KPNI_OPEN_OUTS_MANY)
            writer->open_outs++;
    }
    c->next_in = reader->ins;
    reader->ins = c;
#endif
    c->next = net->chans;
    net->chans = c;
    net->nchans++;
    *out = c;
    return KPN_OK;
}

kpn_status kpn_connect(kpn_net *net, kpn_chan **out, kpn_proc *writer,
                       kpn_proc *reader, size_t msg_size, size_t capacity)
{
    if (!kpni_net_valid(net) || out == NULL || msg_size == 0 ||
        !kpni_proc_live(net, writer) || !kpni_proc_live(net, reader))
        return KPN_EINVAL;
    if (net->state != KPNI_NET_IDLE || writer->state == KPN_PROC_EXITED ||
        reader->state == KPN_PROC_EXITED)
        return KPN_ESTATE;
    return kpni_chan_make(net, out, writer, reader, msg_size, capacity);
}

/* A message of two words moves in pieces chosen for the side of the
 * channel the copy is on.  A load wider than the stores it spans cannot
 * take its bytes from them while they wait to reach the cache: it waits
 * for them (a "store forwarding" stall, some ten cycles), where a load
 * inside one store takes its bytes straight from it.  A send finds the
 * message just stored field by field, fields as small as 4 bytes (a
 * sequence number, a count), so it copies the message into the ring in
 * 4-byte pieces, each load inside whatever field of 4 bytes or more it
 * falls in (copy_quarters).  A receive leaves the message to be loaded
 * field by field, fields as wide as 8 bytes, so it stores a word at a
 * time, each such load inside one store (copy_two_words); its loads from
 * the ring wait only where the send's pieces have not yet reached the
 * cache.  A hand-over puts the message straight where its receiver loads
 * it, a few dozen instructions later, so it moves words: in pieces, the
 * 50-stage pipeline of capacity one took 1.07 times as long.  The
 * compiler, left alone, makes either copy one 16-byte move: the opaque
 * values and pointer keep the loads, and the stores, apart (they cost no
 * instruction), and the pieces go one at a time, in one register. */
static KPNI_INLINE void copy_two_words(void *dst, const void *src)
{
    uint64_t lo, hi;

    kpni_memcpy(&lo, src, 8);
    kpni_memcpy(&hi, (const char *)src + 8, 8);
    KPNI_OPAQUE(lo);
    KPNI_OPAQUE(hi);
    kpni_memcpy(dst, &lo, 8);
    KPNI_OPAQUE(hi);
    kpni_memcpy((char *)dst + 8, &hi, 8);
}

static KPNI_INLINE void copy_quarters(void *dst, const void *src)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    uint32_t w;

    kpni_memcpy(&w, s, 4);
    kpni_memcpy(d, &w, 4);
    KPNI_OPAQUE(d);
    kpni_memcpy(&w, s + 4, 4);
    kpni_memcpy(d + 4, &w, 4);
    KPNI_OPAQUE(d);
    kpni_memcpy(&w, s + 8, 4);
    kpni_memcpy(d + 8, &w, 4);
    KPNI_OPAQUE(d);
    kpni_memcpy(&w, s + 12, 4);
    kpni_memcpy(d + 12, &w, 4);
}

/* Most messages are a word or two: give the compiler a constant size so
 * it moves them with plain loads and stores instead of a call.  The fast
 * paths leave other sizes to the slow ones: a call to memcpy would make
 * them save registers.  'into_ring': a send's copy into the ring
 * (above), a constant at each call; a small memory keeps the one copy
 * of two words, for its code's size. */
static KPNI_INLINE int copy_small(void *dst, const void *src, size_t n, int into_ring)
{
    /* tested in this order, the commonest sizes first: a word, an int,
     * a pair of words (a switch leaves the order to the compiler) */
    if (n == 8)
        kpni_memcpy(dst, src, 8);
    else if (n == 4)
        kpni_memcpy(dst, src, 4);
    else if (n == 16 && into_ring && !KPN_COMPACT)
        copy_quarters(dst, src);
    else if (n == 16)
        copy_two_words(dst, src);
    else
        return 0;
    return 1;
}

static void copy_msg(void *dst, const void *src, size_t n, int into_ring)
{
    if (!copy_small(dst, src, n, into_ring))
        kpni_memcpy(dst, src, n);
}

/* Is the caller process 'p'?  A process runs only on its own stack, so
 * the caller is 'p' exactly when the caller's frame lies in p's stack.
 * That holds whatever runner is running it and needs no thread-local
 * state; the host thread's frames are never in a process stack.  (A
 * "which process does my runner run" test would be fooled by a caller
 * on another runner while 'p' runs elsewhere.) */
static KPNI_INLINE int is_running(const kpn_proc *p)
{
    uintptr_t frame = kpni_frame();

    /* the stack ends where the context below the struct begins; '&', not
     * '&&': two compares and no branch between them */
    return (frame >= (uintptr_t)p->stack_lo) & (frame < (uintptr_t)p);
}

/* Would a process blocking on 'c' for 'why' really have to wait?  Asked
 * again after a blocker has published its state (several runners): the
 * other end may have moved in between.  An idle runner asks it too, for
 * a process parked there (runners.c), so even the blocker's own counter
 * is read as the shared word it is. */
int kpni_chan_must_block(const kpn_chan *c, kpn_proc_state why)
{
    if (why == KPN_PROC_BLOCKED_READ)
        return KPNI_LOAD_ACQ(&c->sent) == KPNI_LOAD(&KPNI_RECEIVED(c)) && !KPNI_LOAD(&c->closed);
    return KPNI_LOAD(&c->sent) - KPNI_LOAD_ACQ(&KPNI_RECEIVED(c)) >= KPNI_LOAD(&c->cap) &&
           KPNI_LOAD(&c->reader->state) != KPN_PROC_EXITED;
}

/* Several runners: wake 'other' under its runner's lock, if it still
 * waits; a reader under work stealing with KPN_WAKE_WAKER also under
 * self's, whose queue it may join (kpni_sched_ready_mt). */
static KPNI_NOINLINE kpn_status wake_mt(kpn_proc *self, kpn_proc *other, kpn_chan *c,
                                        kpn_proc_state why)
{
    kpni_runner *here = self->runner, *also, *r;

    if (kpni_inbox_try(self, other, c, why))
        return KPN_OK;
    also = kpni_wake_follows(self->net, why) ? here : NULL;
    r = kpni_lock_proc(other, here, also);

    /* loads: 'other' may be on a runner whose thread wakes it with no
     * lock (from another channel: kpni_sched_ready_own) */
    if (KPNI_LOAD(&other->state) == why && KPNI_LOAD(&other->wait) == c)
        kpni_sched_ready(self->runner, other);
    kpni_unlock_proc(r, here, also);
    return KPN_OK;
}

/* A wake from release_local, on a channel whose ends share a runner,
 * with several runners.  Where 'other' is still on self's runner, that
 * runner's lock is the whole set a wake takes (kpni_lock_proc), and the
 * wake is usually the short one (kpni_sched_ready_here).  Out of line:
 * in the send and the receive, which the one-runner path shares, it cost
 * a hop of the 1 000-process ring 22 instructions on one runner. */
static KPNI_NOINLINE kpn_status wake_near(kpn_proc *self, kpn_proc *other, kpn_chan *c,
                                          kpn_proc_state why)
{
    kpni_runner *here = self->runner;

    if (KPNI_OWN(here) && KPNI_LOAD(&other->runner) == here) {
        kpni_sched_ready_own(here, other, self);
        return KPN_OK;
    }
    if (KPNI_LOAD(&other->runner) == here) {
        kpni_lock(here);
        if (KPNI_LOAD(&other->runner) == here) { /* not moved meanwhile */
            if (KPNI_LOAD(&other->state) == why && KPNI_LOAD(&other->wait) == c &&
                !kpni_sched_ready_here(here, other, self))
                kpni_sched_ready(here, other);
            kpni_unlock(here);
            return KPN_OK;
        }
        kpni_unlock(here);
    }
    return wake_mt(self, other, c, why);
}

/* The look across runners: if 'other' seems to wait on 'c' for 'why',
 * wake it (wake_mt looks again under the lock). */
static kpn_status look_cross(kpn_proc *self, kpn_proc *other, kpn_chan *c, kpn_proc_state why)
{
    kpn_chan *w = KPNI_LOAD(&other->wait);

    /* KPNI_MOVING: a runner takes 'other' over, and the wake waits */
    if (KPNI_LOAD(&other->state) != why || (w != c && w != KPNI_MOVING))
        return KPN_OK;
    return wake_mt(self, other, c, why);
}

/* An end of 'c', which crosses, blocks on it for 'why': the other end's
 * messages and flush look at it (release_cross, kpni_chan_flush) until
 * it runs again (kpni_chan_woken). */
void kpni_chan_waiting(kpn_chan *c, kpn_proc_state why)
{
#if KPNI_CHAN_LINES
    KPNI_STORE_REL(&KPNI_WAITING(c, why), (size_t)1);
#else
    (void)c;
    (void)why;
#endif
}

/* Either end of 'c' may have blocked on it without saying so (it did not
 * cross then, or its runner was solo): the next message each way looks. */
void kpni_chan_ask_looks(kpn_chan *c)
{
    kpni_chan_waiting(c, KPN_PROC_BLOCKED_READ);
    kpni_chan_waiting(c, KPN_PROC_BLOCKED_WRITE);
}

/* The end of 'c' that blocked on it for 'why' runs again: made ready
 * (kpni_sched_ready_mt, under its runner's lock) or going on after its
 * fenced look found the channel changed (sched.c, block_any).  No look
 * need find it until it blocks again.  Not where the writer's line holds
 * the reader's position instead (kpni_chan_set_cross). */
void kpni_chan_woken(kpn_chan *c, kpn_proc_state why)
{
#if KPNI_CHAN_LINES
    size_t *word = &KPNI_WAITING(c, why);

    if ((why == KPN_PROC_BLOCKED_WRITE || c->rd_off != offsetof(kpn_chan, near_rpos)) &&
        KPNI_LOAD(word) != 0)
        KPNI_STORE(word, (size_t)0);
#else
    (void)c;
    (void)why;
#endif
}

/* Whether a look from 'self' at the end of 'c' that may wait for 'why'
 * can find it waiting: only if that end's word is set (KPNI_WAITING).
 * The other end's record is on a line its runner writes at every block
 * and switch, so a look costs a miss, and in a stream through a channel
 * nearly every look finds the other end running; the word is on the
 * looker's own line.  A solo runner always looks: its blocks set no word
 * (they take the one runner's path), and the words of every crossing
 * channel stay set from the moment it went solo until its processes are
 * woken after it shares again (kpni_runners_solo). */
static KPNI_INLINE int looks_wanted(const kpn_proc *self, kpn_chan *c, kpn_proc_state why)
{
#if KPNI_CHAN_LINES
    return !KPNI_MT(self->runner) || KPNI_LOAD_ACQ(&KPNI_WAITING(c, why)) != 0;
#else
    (void)self;
    (void)c;
    (void)why;
    return 1;
#endif
}

/* below, with the counters' copies it reads */
static KPNI_INLINE int looks_later(const kpn_proc *self, const kpn_proc *other, kpn_chan *c,
                                   kpn_proc_state why);

/* A channel whose ends may run at once: the look, with no fence, if the
 * other end may wait on the channel (looks_wanted), unless it is left
 * until half the ring is ready (looks_later).  The fence this pairing needs (docs/runners.md, "Why no wake-up is lost") would
 * wait, at every message, for the store just made to reach the line the
 * other core holds; instead 'self' notes the channel, and its next block
 * makes the look again after a fence (kpni_chan_flush).  The look made
 * here misses a partner only in the instant it takes to park, and that
 * partner is found by the next message, by the flush, or by its own
 * runner as soon as that runs out of work (runners.c).  A process keeps
 * one note for the channels it writes and one for those it reads: moving
 * on to another channel in the same direction makes the fenced look for
 * the old one then. */
static KPNI_NOINLINE kpn_status release_cross(kpn_proc *self, kpn_proc *other, kpn_chan *c,
                                              kpn_proc_state why)
{
    int end = why == KPN_PROC_BLOCKED_READ ? KPNI_WRITES : KPNI_READS;

    if (KPNI_UNFENCED(self, end) != c) {
        if (KPNI_UNFENCED(self, end) != NULL)
            kpni_chan_flush(self, end);
        KPNI_SET_UNFENCED(self, end, c);
    }
    if (!looks_wanted(self, c, why) || looks_later(self, other, c, why))
        return KPN_OK;
    return look_cross(self, other, c, why);
}

/* The look at the end of 'c' that would wait for 'why', made after the
 * caller's fence: the flush below, and the look a move asked 'self' to
 * make (runners.c, "Moves"). */
void kpni_chan_look(kpn_proc *self, kpn_chan *c, kpn_proc_state why)
{
    (void)look_cross(self, why == KPN_PROC_BLOCKED_READ ? c->reader : c->writer, c, why);
}

/* The look release_cross left out, with its fence: about to block, 'self'
 * wakes the other end of the channel it noted for 'end' if that waits on
 * it.  Made before 'self' takes its runner's lock: the wake takes the
 * other's runner's lock, which may be the same one. */
void kpni_chan_flush(kpn_proc *self, int end)
{
    kpn_chan *c = KPNI_UNFENCED(self, end);
    kpn_proc_state why = end == KPNI_WRITES ? KPN_PROC_BLOCKED_READ : KPN_PROC_BLOCKED_WRITE;

    KPNI_SET_UNFENCED(self, end, (kpn_chan *)NULL);
    KPNI_FENCE();
    /* A word clear after the fence: the other end is not parked on 'c',
     * and a block of it that comes now finds self's messages after its
     * own fence (Dekker, on the word and the counters). */
    if (looks_wanted(self, c, why))
        kpni_chan_look(self, c, why);
}

/* Release 'other' if it is blocked on 'c' for 'why'; 'self' has just
 * changed the channel.  On a crossing channel that is release_cross's
 * look.  Where both ends stay on one runner ('cross' clear), 'other'
 * cannot be blocking while 'self' runs, so a plain look sees whatever it
 * did before it parked: every message on such a channel costs what it
 * costs on one runner.  (A move that starts the channel crossing while
 * 'self' runs has self's runner look again before self blocks: runners.c,
 * "Moves".)  'state' is other's, loaded earlier where nothing could
 * change it since (put_fast says when); a crossing channel loads it
 * again.  The mark is read once per message. */
static KPNI_INLINE kpn_status release_local(kpn_proc *self, kpn_proc *other, kpn_chan *c,
                                            kpn_proc_state why, unsigned state)
{
    if (state != why || KPNI_LOAD(&other->wait) != c)
        return KPN_OK;
    if (KPNI_MT(self->runner))
        return wake_near(self, other, c, why);
    /* '&', not '&&': one test, which the compiler drops for a reader */
    if (KPNI_UNLIKELY((why == KPN_PROC_BLOCKED_WRITE) & KPNI_DRAINING(self->runner)))
        kpni_sched_ready_front(self->runner, other, self);
    else
        kpni_sched_ready_by(self->runner, other, self);
    return KPN_OK;
}

static KPNI_INLINE kpn_status release_seen(kpn_proc *self, kpn_proc *other, kpn_chan *c,
                                           kpn_proc_state why, unsigned state)
{
    if (KPNI_UNLIKELY(KPNI_CROSS(c)))
        return release_cross(self, other, c, why);
    return release_local(self, other, c, why, state);
}

static KPNI_INLINE kpn_status release(kpn_proc *self, kpn_proc *other, kpn_chan *c,
                                      kpn_proc_state why)
{
    if (KPNI_UNLIKELY(KPNI_CROSS(c))) /* before the load: it loads the state itself */
        return release_cross(self, other, c, why);
    return release_local(self, other, c, why, KPNI_LOAD(&other->state));
}

/* Each end's copy of the other's counter (the hosted layout; the compact
 * one reads the counter itself).  The copy never runs ahead of the
 * counter, so a ring the copy calls full or empty is only looked at
 * again, never overrun.  Where the two ends never run at once the
 * reader's words are on the writer's line (the struct's picture): the
 * writer's copy is then the reader's count itself, and the reader's copy
 * is 'sent', which its look stores back unchanged (nothing else can
 * write it meanwhile: an input's reader keeps its words on its own line). */
#if KPNI_CHAN_LINES
#define SEEN_RECEIVED(c) ((c)->seen_received)
#define SEEN_SENT(c, rd) ((rd)[KPNI_RD_SENT])
#define LOOK_RECEIVED(c) ((c)->seen_received = KPNI_LOAD_ACQ(&KPNI_RECEIVED(c)))
#define LOOK_SENT(c, rd) look_sent(c, rd)
/* The store is atomic because on the writer's line it is to 'sent'
 * itself, which an idle runner may be reading (kpni_chan_must_block). */
static KPNI_INLINE size_t look_sent(const kpn_chan *c, size_t *rd)
{
    size_t sent = KPNI_LOAD_ACQ(&c->sent);

    KPNI_STORE(&rd[KPNI_RD_SENT], sent);
    return sent;
}
#else
#define SEEN_RECEIVED(c) KPNI_LOAD_ACQ(&(c)->received)
#define SEEN_SENT(c, rd) KPNI_LOAD_ACQ(&(c)->sent)
#define LOOK_RECEIVED(c) KPNI_LOAD_ACQ(&(c)->received)
#define LOOK_SENT(c, rd) KPNI_LOAD_ACQ(&(c)->sent)
#endif

/* Whether release_cross leaves its look to the flush at self's next
 * block, where the other end of 'c' waits on it on another runner: while
 * the ring holds less than half its capacity for that end (messages for a
 * reader, room for a writer), under a placement (self's runner own, so
 * the wake would move nothing), and with that end's runner awake.  Woken
 * at the first message, a reader takes the few there are and blocks
 * again, and the stages after it on its runner run on as few, each
 * switching once a few messages instead of once a ring; and the wake
 * costs the waker lines of the other runner.  Left for half a ring, or
 * until self blocks, exits or moves on to another crossing channel the
 * same way (the note release_cross keeps), the other end runs in the
 * batches it would run in on one runner.  Meanwhile its runner, if it
 * runs out of work, finds it itself (kpni_runners_wake_missed); a
 * dormant runner looks at nothing, so a look is never left to it.  Not
 * for a close, and not solo, whose blocks make no flush. */
static KPNI_INLINE int looks_later(const kpn_proc *self, const kpn_proc *other, kpn_chan *c,
                                   kpn_proc_state why)
{
#if KPNI_CHAN_LINES && KPN_THREADS
    size_t ready;

    if (!KPNI_MT(self->runner) || !KPNI_OWN(self->runner))
        return 0;
    if (why == KPN_PROC_BLOCKED_READ) {
        if (c->closed)
            return 0;
        ready = c->sent - SEEN_RECEIVED(c);
    } else {
        size_t *rd = KPNI_RD(c);

        ready = c->cap - (SEEN_SENT(c, rd) - rd[KPNI_RD_RECEIVED]);
    }
    return 2 * ready < c->cap && !KPNI_LOAD(&KPNI_LOAD(&other->runner)->dormant);
#else
    (void)self;
    (void)other;
    (void)c;
    (void)why;
    return 0;
#endif
}

/* The ring offset after the message at 'at', of a ring of 'bytes'.
 * Worked out before the message is copied: the copy may alias the
 * channel, and would make the compiler load its fields again. */
static KPNI_INLINE size_t next_pos(size_t at, size_t msg_size, size_t bytes)
{
    at += msg_size;
    return at == bytes ? 0 : at;
}

#define NEXT_WPOS(c) next_pos((c)->wpos, (c)->msg_size, KPNI_WRING_BYTES(c))
#define NEXT_RPOS(c, rd) next_pos((rd)[KPNI_RD_POS], (c)->msg_size, KPNI_RD_RING_BYTES(c, rd))

/* A message is in the ring at wpos (rpos taken out): move past it, to
 * 'wpos', and publish the counter; sent_one also releases the other end. */
static KPNI_INLINE void publish_sent(kpn_chan *c, kpn_proc *self, size_t sent, size_t wpos)
{
    c->wpos = wpos;
    KPNI_STORE_REL(&c->sent, sent + 1);
    self->runner->messages++;
}

static KPNI_INLINE kpn_status sent_one(kpn_chan *c, kpn_proc *self, size_t sent, size_t wpos)
{
    publish_sent(c, self, sent, wpos);
    return release(self, c->reader, c, KPN_PROC_BLOCKED_READ);
}

static KPNI_INLINE kpn_status received_one(kpn_chan *c, kpn_proc *self, size_t *rd,
                                           size_t received, size_t rpos)
{
    rd[KPNI_RD_POS] = rpos;
    KPNI_STORE_REL(&rd[KPNI_RD_RECEIVED], received + 1);
    return release(self, c->writer, c, KPN_PROC_BLOCKED_WRITE);
}

/* Room in the ring, the caller the writer: put the message in.  Any
 * size; out of line, so that a wait's frame keeps only 'c'. */
static KPNI_NOINLINE kpn_status put_any(kpn_chan *c, const void *msg)
{
    size_t sent = c->sent, wpos = NEXT_WPOS(c);

    copy_msg(c->ring + c->wpos, msg, c->msg_size, 1);
    return sent_one(c, c->writer, sent, wpos);
}

/* The same for the sizes copy_small moves (take, below, says why); the
 * compact build keeps the one copy, in line. */
static KPNI_INLINE kpn_status put_msg(kpn_chan *c, const void *msg)
{
    size_t sent = c->sent, wpos = NEXT_WPOS(c);

    if (KPN_COMPACT)
        copy_msg(c->ring + c->wpos, msg, c->msg_size, 1);
    else if (!copy_small(c->ring + c->wpos, msg, c->msg_size, 1))
        return put_any(c, msg);
    return sent_one(c, c->writer, sent, wpos);
}

/* The caller the writer, its reader not gone: wait while the ring is
 * full ('full': the caller has just seen it so).  0 if the reader exits
 * meanwhile: the caller drops the message.  Each look finds the
 * channel's words afresh, as a receive's wait does (recv_whole), and
 * the caller's 'c' and 'msg' are updated to what it finds after the
 * wait.  'msg' waits in the writer's mailbox, so that only 'c' lives
 * across it: a process blocked writing is not blocked reading, so no
 * hand-over changes its mailbox meanwhile. */
static KPNI_INLINE int wait_room(kpn_chan **cp, const void **msgp, int full)
{
    kpn_chan *c = *cp;
    int room = 1;

    for (;;) {
        kpn_proc *self = c->writer;

        if (!full && c->sent - LOOK_RECEIVED(c) < c->cap)
            break;
        full = 0;
        if (!KPN_COMPACT)
            KPNI_MAILBOX(self) = (void *)(uintptr_t)*msgp;
        kpni_sched_block(self, KPN_PROC_BLOCKED_WRITE, c);
        KPNI_OPAQUE(c);
        if (!KPN_COMPACT)
            *msgp = KPNI_MAILBOX(c->writer);
        if (KPNI_LOAD(&c->reader->state) == KPN_PROC_EXITED) {
            room = 0;
            break;
        }
    }
    *cp = c;
    return room;
}

/* Where a send blocks: a function of its own, reached straight from the
 * fast path, so that a write-block neither repeats the fast path's
 * checks nor keeps more than 'c' in its frame. */
static KPNI_NOINLINE kpn_status put_wait(kpn_chan *c, const void *msg)
{
    if (KPNI_LIKELY(wait_room(&c, &msg, 1)))
        return put_msg(c, msg);
    c->writer->runner->drops++;
    return KPN_OK;
}

/* A whole send, on a channel already checked: the fast path's fallback. */
static KPNI_INLINE kpn_status send_whole(kpn_chan *c, const void *msg)
{
    kpn_proc *self = c->writer;

    if (KPNI_UNLIKELY(!is_running(self)))
        return KPN_EPERM;
    if (KPNI_UNLIKELY(c->closed))
        return KPN_ESTATE;
    if (KPNI_UNLIKELY(KPNI_LOAD(&c->reader->state) == KPN_PROC_EXITED))
        goto drop;
    /* a small memory keeps one copy of the wait */
    if (!KPN_COMPACT && c->sent - LOOK_RECEIVED(c) >= c->cap)
        return put_wait(c, msg);
    if (!wait_room(&c, &msg, 0))
        goto drop;
    return put_msg(c, msg);
drop:
    self->runner->drops++;
    return KPN_OK;
}

/* A message waits at the reader's words 'rd' and the caller is the
 * reader: take it.  Any size; out of line, so that a wait's frame keeps
 * only 'c'. */
static KPNI_NOINLINE kpn_status take_any(kpn_chan *c, void *msg)
{
    size_t *rd = KPNI_RD(c);
    size_t rpos = NEXT_RPOS(c, rd);

    copy_msg(msg, c->ring + rd[KPNI_RD_POS], c->msg_size, 0);
    return received_one(c, c->reader, rd, rd[KPNI_RD_RECEIVED], rpos);
}

/* The same for the sizes copy_small moves, which need no call and so no
 * frame; the compact build keeps the one copy. */
static KPNI_INLINE kpn_status take(kpn_chan *c, void *msg, size_t *rd)
{
    size_t rpos = NEXT_RPOS(c, rd);

    if (KPN_COMPACT || !copy_small(msg, c->ring + rd[KPNI_RD_POS], c->msg_size, 0))
        return take_any(c, msg);
    return received_one(c, c->reader, rd, rd[KPNI_RD_RECEIVED], rpos);
}

/* The reader, woken with its message in hand (hand_over, below): count
 * it received, and release a writer that the channel, full while the
 * message counted as in it, has blocked meanwhile. */
static KPNI_INLINE kpn_status handed(kpn_chan *c)
{
    size_t *rd = KPNI_RD(c);

    KPNI_STORE_REL(&rd[KPNI_RD_RECEIVED], rd[KPNI_RD_RECEIVED] + 1);
    return release(c->reader, c->writer, c, KPN_PROC_BLOCKED_WRITE);
}

/* Whether the reader, looking at 'sent' again, finds the ring empty. */
static KPNI_INLINE int looks_empty(kpn_chan *c)
{
    size_t *rd = KPNI_RD(c);

    return LOOK_SENT(c, rd) == rd[KPNI_RD_RECEIVED];
}

/* A whole receive, on a channel already checked and by its reader;
 * 'empty': the caller has just seen the ring empty.  Each look at 'sent'
 * finds the reader's words afresh: a run may start with them moved, and
 * only 'c' lives across the wait (a frame that saves fewer registers is
 * a stack line fewer for every hop that blocks here).  'msg' waits in
 * the mailbox, which only a hand-over changes (to NULL). */
static KPNI_INLINE kpn_status recv_whole(kpn_chan *c, void *msg, int empty)
{
    if (empty || looks_empty(c)) {
        for (;;) {
            kpn_proc *self = c->reader;

            /* The writer may send its last message and close between
             * the look at 'sent' and this load (another runner):
             * 'closed' is published after that message, so look at
             * 'sent' once more before calling the channel drained. */
            if (KPNI_LOAD_ACQ(&c->closed)) {
                if (!looks_empty(c))
                    break;
                return KPN_EOF;
            }
            if (!KPN_COMPACT)
                KPNI_MAILBOX(self) = msg;
            kpni_sched_block(self, KPN_PROC_BLOCKED_READ, c);
            KPNI_OPAQUE(c);
            if (!KPN_COMPACT && (msg = KPNI_MAILBOX(c->reader)) == NULL)
                return handed(c);
            if (!looks_empty(c))
                break;
        }
    }
    return take(c, msg, KPNI_RD(c));
}

/* Whatever is not the common case (a full ring, a closed channel, an
 * exited reader, a caller that is not the writer), out of line, so that
 * the common case saves no registers and sets up no frame. */
static KPNI_NOINLINE kpn_status put_slow(kpn_chan *c, const void *msg)
{
    return send_whole(c, msg);
}

static KPNI_NOINLINE kpn_status get_slow(kpn_chan *c, void *msg)
{
    if (KPNI_UNLIKELY(!is_running(c->reader)))
        return KPN_EPERM;
    return recv_whole(c, msg, 0);
}

/* An empty ring, the caller the reader: where a receive blocks. */
static KPNI_NOINLINE kpn_status get_wait(kpn_chan *c, void *msg)
{
    return recv_whole(c, msg, 1);
}

/* Whether the writer, about to send its message number 'sent', finds
 * the ring full.  A copy that says full is looked at again: in a small
 * ring the reader has usually taken the message since it was made. */
static KPNI_INLINE int looks_full(kpn_chan *c, size_t sent)
{
    return sent - SEEN_RECEIVED(c) >= c->cap && sent - LOOK_RECEIVED(c) >= c->cap;
}

/* A send whose reader waits on 'c' with the ring empty, where one thread
 * runs the net (put_fast makes sure) and 'c' does not cross: put the
 * message straight where the reader's receive wants it (its mailbox),
 * publish it, and wake the reader, which returns without taking anything out
 * of the ring (recv_whole, handed).  The message counts as in the channel
 * until the reader runs and counts it received, as one in the ring would:
 * the fill, what a further send finds room for, what the resolver and
 * kpn_report see, and a run that stops before the reader runs again, are as
 * if it were in the ring.  The ring's positions stay where they were, so the
 * next message goes where the reader will look for it.  (Nothing grows the
 * ring meanwhile: only a channel whose reader is blocked can be on a
 * deadlock's cycle or behind one.)  The writer's copy of 'received' equal to
 * 'sent' says the ring is empty whatever the history (the copy never runs
 * ahead of the count), and a reader blocked on 'c' has stored its mailbox.
 * 0 if not for this send: the caller goes on as for any other. */
static KPNI_INLINE int hand_over(kpn_chan *c, kpni_runner *r, kpn_proc *self, kpn_proc *reader,
                                 size_t sent, const void *msg)
{
    if (KPNI_CROSS(c) || KPNI_LOAD(&reader->wait) != c ||
        SEEN_RECEIVED(c) != sent || !copy_small(KPNI_MAILBOX(reader), msg, c->msg_size, 0))
        return 0;
    /* the reader's copy of 'sent' ('sent' itself where its words are on
     * the writer's line) must not lag its count once it counts this */
    KPNI_STORE(&KPNI_RD(c)[KPNI_RD_SENT], sent + 1);
    KPNI_STORE_REL(&c->sent, sent + 1);
    r->messages++;
    KPNI_MAILBOX(reader) = NULL;
    kpni_sched_ready_as(r, reader, self, 0);
    return 1;
}

/* A send, its checks made, to a reader blocked on some channel, where
 * one thread runs the net (one runner, or a solo one): out of line, so
 * that the fast path pays one test for the hand-over.  Several runners
 * keep the fast path as it is: with this path for them too (with the
 * hand-over or without it), a cycle across two busy runners, run under
 * memcheck (one thread at a time), went on only once both ran out of
 * work, where it goes on at the bound on walks put off
 * (test_a_walk_put_off_is_made_within_its_bound_while_its_runner_stays_busy).
 * Each runner made its walks at its bound in its own switches; but
 * memcheck's scheduler let one runner make a few thousand switches while
 * the other made two million, the starved one neither idle nor asleep,
 * and the test needs both to go on.  Under callgrind the same build
 * passes: the code changes only where the turns fall. */
static KPNI_NOINLINE kpn_status put_waiting(kpn_chan *c, const void *msg, kpn_proc *self,
                                            kpn_proc *reader, size_t sent, kpni_runner *r)
{
    if (hand_over(c, r, self, reader, sent, msg))
        return KPN_OK;
    if (looks_full(c, sent))
        return put_wait(c, msg);
    return put_msg(c, msg);
}

/* The rest of a send to a reader that 'state' says is not blocked
 * reading, or to one that is, with several runners: put the message in
 * the ring. */
static KPNI_INLINE kpn_status put_ring(kpn_chan *c, const void *msg, kpn_proc *self,
                                       kpn_proc *reader, size_t sent, unsigned state)
{
    size_t wpos;

    if (KPNI_UNLIKELY(looks_full(c, sent)))
        return put_wait(c, msg);
    wpos = NEXT_WPOS(c);
    if (!copy_small(c->ring + c->wpos, msg, c->msg_size, 1))
        return put_slow(c, msg);
    publish_sent(c, self, sent, wpos);
    return release_seen(self, reader, c, KPN_PROC_BLOCKED_READ, state);
}

/* The common case of a send: room in the ring, the caller the writer.
 * The reader's state is loaded once, for both the exit check and the
 * release: where the two ends share a runner nothing can block the
 * reader on 'c' in between, and a reader blocked elsewhere is woken only
 * if it now waits on 'c'; a crossing channel loads the state again. */
static KPNI_INLINE kpn_status put_fast(kpn_chan *c, const void *msg)
{
    kpn_proc *self = c->writer, *reader = c->reader;
    size_t sent;
    unsigned state;

    if (KPN_COMPACT) /* small memories: one copy of the send, not two */
        return put_slow(c, msg);
    state = KPNI_LOAD(&reader->state);
    if (KPNI_UNLIKELY(!is_running(self) || c->closed || state == KPN_PROC_EXITED))
        return put_slow(c, msg);
    /* only now: the writer's own words are the writer's to read, and a
     * caller at the wrong end, on another runner, would race the writer
     * for them (and be refused all the same) */
    sent = c->sent;
    /* Two copies of the rest, so that the commonest send, to a reader
     * not blocked reading, does not test for one twice. */
    if (state == KPN_PROC_BLOCKED_READ) {
        if (!KPNI_MT(self->runner))
            return put_waiting(c, msg, self, reader, sent, self->runner);
        return put_ring(c, msg, self, reader, sent, KPN_PROC_BLOCKED_READ);
    }
    return put_ring(c, msg, self, reader, sent, state);
}

/* The common case of a receive: a message waiting, the caller the reader. */
static KPNI_INLINE kpn_status get_fast(kpn_chan *c, void *msg)
{
    kpn_proc *self = c->reader;
    size_t *rd = KPNI_RD(c);
    size_t received, rpos;

    if (KPN_COMPACT)
        return get_slow(c, msg);
    if (KPNI_UNLIKELY(!is_running(self)))
        return get_slow(c, msg);
    received = rd[KPNI_RD_RECEIVED]; /* the reader's, as 'sent' in put_fast */
    if (SEEN_SENT(c, rd) == received && LOOK_SENT(c, rd) == received)
        return get_wait(c, msg);
    rpos = NEXT_RPOS(c, rd);
    if (!copy_small(msg, c->ring + rd[KPNI_RD_POS], c->msg_size, 0))
        return get_slow(c, msg);
    return received_one(c, self, rd, received, rpos);
}

kpn_status kpn_send(kpn_chan *c, const void *msg)
{
    if (KPNI_UNLIKELY(!kpni_chan_ok(c) || msg == NULL))
        return KPN_EINVAL;
    return put_fast(c, msg);
}

/* 'msg' made opaque: a whole-program build (-flto) that inlines a
 * receive into its caller sees the caller's buffer, and would warn of
 * the copies for the sizes the channel rules out. */
kpn_status kpn_recv(kpn_chan *c, void *msg)
{
    if (KPNI_UNLIKELY(!kpni_chan_ok(c) || msg == NULL))
        return KPN_EINVAL;
    KPNI_OPAQUE(msg);
    return get_fast(c, msg);
}

kpn_status kpn_send_sized(kpn_chan *c, const void *msg, size_t size)
{
    if (KPNI_UNLIKELY(!kpni_chan_ok(c) || msg == NULL || size != c->msg_size))
        return KPN_EINVAL;
    return put_fast(c, msg);
}

kpn_status kpn_recv_sized(kpn_chan *c, void *msg, size_t size)
{
    if (KPNI_UNLIKELY(!kpni_chan_ok(c) || msg == NULL || size != c->msg_size))
        return KPN_EINVAL;
    KPNI_OPAQUE(msg);
    return get_fast(c, msg);
}

kpn_status kpn_close(kpn_chan *c)
{
    if (!kpni_chan_valid(c))
        return KPN_EINVAL;
    if (!is_running(c->writer))
        return KPN_EPERM;
    if (c->closed)
        return KPN_ESTATE;
    KPNI_STORE_REL(&c->closed, 1); /* after every message it closes */
#if !KPN_COMPACT
    if (c->writer->open_outs != KPNI_OPEN_OUTS_MANY)
        c->writer->open_outs--;
#endif
    return release(c->writer, c->reader, c, KPN_PROC_BLOCKED_READ);
}

/* A ring of 'bytes' from the pool.  With KPN_RESERVE_ARENA a pool that
 * has no block big enough takes one from the arena's free remainder
 * first: the arena then only shrinks when the pool cannot recycle a ring
 * that a channel outgrew.  A free block that ends where the remainder
 * begins (a ring given back from the top, its channel grown into memory
 * given later) merges with what is carved after it, so only the rest is
 * carved: KPN_ERESERVE comes only when the two together are too small. */
static void *ring_alloc(kpn_net *net, size_t bytes)
{
    void *ring = kpni_pool_alloc(&net->pool, bytes);
    size_t need = kpni_align_up(bytes) + KPNI_POOL_HEADER;
    void *block;

    if (ring != NULL || net->cfg.reserve_size != KPN_RESERVE_ARENA || need < bytes)
        return ring;
    /* every free block is smaller than 'need': the alloc failed */
    need -= kpni_pool_tail(&net->pool, net->arena.next);
    if (need < KPNI_POOL_MIN)
        need = KPNI_POOL_MIN;
    if ((block = kpni_arena_carve(&net->arena, need)) == NULL)
        return NULL;
    net->reserve_grown += need;
    kpni_memset(block, 0, need); /* no stale record survives in it */
    kpni_pool_add(&net->pool, block, need);
    return kpni_pool_alloc(&net->pool, bytes);
}

/* Give a full channel a bigger ring from the reserve pool: double it, or
 * if the pool cannot hold that, the one more message that breaks the
 * deadlock.  Doubling keeps the copying linear in the messages a channel
 * ever holds, even in a network whose channel grows without bound
 * (Vrba's thesis, figure 3.7); growing by one would make it quadratic.  The
 * messages move in order to the start of the new ring; a ring that came
 * from the pool goes back to it.  On KPN_ERESERVE nothing has changed and
 * net->pending_bytes says what the smallest growth needed. */
kpn_status kpni_chan_grow(kpn_chan *c)
{
    kpn_net *net = c->writer->net;
    size_t *rd = KPNI_RD(c);
    size_t fill = c->sent - rd[KPNI_RD_RECEIVED];
    size_t bytes = fill * c->msg_size;
    size_t first = KPNI_RD_RING_BYTES(c, rd) - rd[KPNI_RD_POS];
    size_t want = c->cap;
    unsigned char *ring = NULL;

    if (c->cap <= ((size_t)-1 / 2 - KPNI_POOL_MIN) / c->msg_size) {
        want = 2 * c->cap;
        ring = ring_alloc(net, want * c->msg_size);
    }
    if (c->cap >= ((size_t)-1 - KPNI_POOL_MIN) / c->msg_size - 1) {
        net->pending_bytes = (size_t)-1; /* no pool could hold it */
        return KPN_ERESERVE;
    }
    if (ring == NULL) {
        want = c->cap + 1;
        ring = ring_alloc(net, want * c->msg_size);
    }
    if (ring == NULL) {
        net->pending_bytes = kpni_align_up(want * c->msg_size) + KPNI_POOL_HEADER;
        return KPN_ERESERVE;
    }
    if (first > bytes)
        first = bytes;
    kpni_memcpy(ring, c->ring + rd[KPNI_RD_POS], first);
    kpni_memcpy(ring + first, c->ring, bytes - first);
    if (c->ring_pooled)
        kpni_pool_free(&net->pool, c->ring);
    c->ring = ring;
    c->ring_pooled = 1;
    KPNI_STORE(&c->cap, want); /* an idle runner may be reading it (kpni_chan_must_block) */
#if KPNI_CHAN_LINES
    c->ring_bytes = c->rring_bytes = want * c->msg_size;
#endif
    rd[KPNI_RD_POS] = 0;
    c->wpos = bytes;
    return KPN_OK;
}

size_t kpn_chan_capacity(const kpn_chan *c)
{
    return kpni_chan_valid(c) ? c->cap : 0;
}

size_t kpn_chan_fill(const kpn_chan *c)
{
    return kpni_chan_valid(c) ? (size_t)(KPNI_LOAD(&c->sent) - KPNI_LOAD(&KPNI_RECEIVED(c))) : 0;
}

/* The reader's words moved to the reader's own line ('own') or to the
 * writer's (the struct's picture), by the one thread that runs the net:
 * between runs, or a runner going solo or sharing again.  A process
 * parked in a send or a receive finds them afresh through 'rd_off' after
 * its block (recv_whole, wait_room).  An input's writer runs outside the
 * net, so its reader keeps its words on its own line whatever the
 * runners.  Moved to the reader's line, the word on the writer's line
 * that held the reader's position becomes the word a look at the reader
 * asks (KPNI_WAITING): set, so that a channel that starts crossing has
 * its messages look until its reader runs. */
void kpni_chan_lay(kpn_chan *c, int own)
{
#if KPNI_CHAN_LINES
    size_t *from = KPNI_RD(c), *to;
    unsigned char off = (unsigned char)(own || c->input ? offsetof(kpn_chan, rpos)
                                                        : offsetof(kpn_chan, near_rpos));

    /* written only when it moves: an input's producer may be offering
     * from another thread already, and its words never move */
    if (off != c->rd_off) {
        c->rd_off = off;
        to = KPNI_RD(c);
        to[KPNI_RD_POS] = from[KPNI_RD_POS];
        to[KPNI_RD_RECEIVED] = from[KPNI_RD_RECEIVED];
        to[KPNI_RD_SENT] = c->sent;
        if (own)
            kpni_chan_ask_looks(c);
    }
#else
    (void)c;
    (void)own;
#endif
}

/* Between runs, nothing running: whether the two ends of 'c' may run at
 * once, and the reader's words on the line that wants them. */
void kpni_chan_set_cross(kpn_chan *c, int cross)
{
    kpni_chan_lay(c, cross);
    if (cross)
        kpni_chan_ask_looks(c);
    KPNI_STORE(&c->cross, (unsigned char)(cross != 0));
}
