/* SPDX-License-Identifier: MIT */
/* Processes: spawning onto arena stacks, stack guards and high-water marks, exit. */
#include "kpn_int.h"

/* Under valgrind (build with KPN_VALGRIND): memcheck must know the
 * process stacks, or every switch looks like a wild stack-pointer jump. */
#ifdef KPN_VALGRIND
#include <valgrind/valgrind.h>
#endif

/* FreeRTOS's fill byte for unused stack, and a different one for the
 * guard band so a stack that merely reaches its end is told apart from
 * one that overran it. */
#define STACK_FILL 0xa5u
#define GUARD_FILL 0x5au /* the byte of KPNI_GUARD_WORD */

#if KPN_CACHE_STAGGER
/* In a net of several runners, neighbouring stack tops are shifted by
 * this many 64-byte steps (cycle of 8), so processes that run one after
 * another do not all hit the same cache sets with their saved
 * registers; a net of one runner gets the same from an odd stride
 * (odd_stride_pad). */
#define STAGGER_STEP KPNI_LINE
#define STAGGER_CYCLE 8u
/* Stack tops are aligned to a cache line, so 'ctx' with the struct's hot
 * fields fill one line and the top of the stack (the start-up frame, then
 * the process function's frame) the line below;
 * the carve has this much slack to find the alignment in. */
#define TOP_ALIGN KPNI_LINE
#define BLOCK_ALIGN KPNI_LINE
#else
/* No data cache to lay out for (KPN_CACHE_STAGGER 0): no stagger, and a
 * stack top needs only the carve's own alignment. */
#define STAGGER_STEP 0u
#define STAGGER_CYCLE 1u
#define TOP_ALIGN KPNI_ALIGN
#define BLOCK_ALIGN KPNI_ALIGN
#endif
#define TOP_SLACK (TOP_ALIGN - KPNI_ALIGN)

/* The guard band lies below the requested stack (GUARD_OUTSIDE bytes on
 * top of it) or is its lowest bytes (GUARD_INSIDE of them): one of the
 * two is KPN_STACK_GUARD, the other 0. */
#if KPN_GUARD_INSIDE
#define GUARD_OUTSIDE 0u
#define GUARD_INSIDE KPN_STACK_GUARD
#else
#define GUARD_OUTSIDE KPN_STACK_GUARD
#define GUARD_INSIDE 0u
#endif

#if KPN_NAME_COPY
/* The loop has a bound and gcc does not turn it into a call to strlen,
 * which a freestanding firmware may not have (the core's only libc
 * symbols are memcpy and memset); a name that long fails the carve. */
static size_t name_length(const char *s)
{
    size_t n = 0;
    if (s != NULL)
        while (n < (size_t)-1 / 2 && s[n] != '\0')
            ++n;
    return n;
}
#define NAME_BYTES(len) kpni_align_up((len) + 1)
#else
/* KPN_NAME_COPY 0: the caller's string is kept, not copied. */
#define name_length(s) ((void)(s), (size_t)0)
#define NAME_BYTES(len) ((void)(len), (size_t)0)
#endif

/* The bytes one process takes, rounded up to 'align', or 0 if the sum
 * overflows a size_t.
 *
 * In a net of one runner, where the layout is for a data cache, every
 * block is a whole number of lines (BLOCK_ALIGN), and so is every
 * channel (chan.c, kpni_chan_make); no block is staggered but by the
 * line that puts its record an odd number of lines after the one
 * before (odd_stride_pad).  A net built in a loop (a process, its
 * channels, the next process) then lays its records one stride apart,
 * and the core's stride prefetchers follow a pass over them; an odd
 * stride spreads the records over every set of a cache, as the
 * stagger's cycle does.  With each block as long as its own stagger,
 * and blocks and channels ending part-way into a line, the distance
 * from one record to the next took a dozen values: the 10 000-process
 * ring took 1.5 times as long a hop, and AES with 16 384 workers 1.02
 * times as long.  With every block as long as the largest stagger
 * makes one and the stagger's cycle inside it, one step in eight broke
 * the stride, and the 1 000- and 10 000-process rings took 1.06 and
 * 1.12 times as long a hop; with no stagger and an even stride, a stack
 * of 7 296 bytes put every record 8 KiB after the one before, and the
 * 1 000-process hop took 1.24 times as long.  A net of several runners
 * keeps each block as long as its own stagger: there a prefetcher that
 * follows one runner's processes runs on into the next runner's, and
 * the 50-stage pipeline on two runners gained 1.34 over one instead of
 * 1.46 (docs/benchmarks.md, "Large nets"). */
static size_t block_size(size_t stack, size_t name_len, size_t stagger, size_t align)
{
    size_t fixed = TOP_SLACK + GUARD_OUTSIDE + stagger +
                   KPNI_CTX_ROOM() + kpni_align_up(sizeof(kpn_proc));
    size_t limit = (size_t)-1 - fixed - 2 * KPNI_ALIGN - BLOCK_ALIGN;

    if (stack > limit || name_len > limit - kpni_align_up(stack))
        return 0;
    return kpni_round_up(fixed + kpni_align_up(stack) + NAME_BYTES(name_len), align);
}

size_t kpn_size_proc(size_t stack_size, size_t name_len)
{
    return block_size(stack_size, name_len, (STAGGER_CYCLE - 1) * STAGGER_STEP, BLOCK_ALIGN);
}

/* The context kpn_spawn put right below the struct, for the tests that
 * check what the scheduler hands the port (test_sched_port); the
 * library's own code uses KPNI_CTX. */
kpn_port_ctx *kpni_proc_ctx(const kpn_proc *p)
{
    return (kpn_port_ctx *)(void *)((uintptr_t)p - KPNI_CTX_ROOM());
}

/* A process's first instruction, and its last.  The port calls it again
 * when it returns (port.h), so it ends in a tail call of the process
 * function, and the process function's frames start right below the
 * port's entry frame: a frame of this function's own between them made
 * the ring's hop reach a stack line further (docs/benchmarks.md, "One
 * runner").  Its second call, once the process function has returned,
 * ends the process.  It also starts loading the guard band, which the
 * exit checks whole (sched.c): for a process that runs briefly, as a
 * fan-out's workers do, the lines are then at hand. */
static void proc_entry(void *arg)
{
    kpn_proc *self = arg;
    void (*fn)(void *) = self->fn;

    if (fn == NULL) {
        kpni_sched_exit(self); /* never returns */
        return;
    }
    self->fn = NULL;
    /* held across the switch that started us, unless its runner is solo */
    if (KPNI_MT(self->runner))
        kpni_unlock(self->runner);
    KPNI_SET_UNLOCKS(self, 0);
    kpni_proc_band_ahead(self);
    fn(self->arg);
}

/* A net built in a loop (a process, its channels, the next process, as
 * bench/aes builds 16 384 workers) carves one block after another out of
 * memory no cache holds, and every line a spawn or a connect writes is a
 * miss it waits on.  Ask now for the lines the next ones will write: the
 * channels carved next, at the arena's bump pointer, and the next record
 * and guard band, guessed one stride on (this record's distance from the
 * one before: the stagger moves the real one a line further, which the
 * windows cover, but for one spawn in STAGGER_CYCLE, where it wraps).  A
 * prefetch never faults, so a wrong guess costs only the request.  Building those workers took about 0.8 of the time
 * without it (docs/benchmarks.md, "AES").  Small memories have no caches
 * to fill. */
static void spawn_ahead(const kpn_net *net, const kpn_proc *p, size_t stack)
{
#if KPN_CACHE_STAGGER
    uintptr_t next, band;
    unsigned i;

    if (net->procs_tail == NULL)
        return;
    next = (uintptr_t)p + ((uintptr_t)p - (uintptr_t)net->procs_tail);
    band = next - KPNI_CTX_ROOM() - stack - GUARD_OUTSIDE;
    for (i = 0; i < 4; ++i) {
        KPNI_PREFETCH_W((uintptr_t)net->arena.next + KPNI_LINE * i);
        KPNI_PREFETCH_W(next - KPNI_LINE + KPNI_LINE * i);
        KPNI_PREFETCH_W(band + KPNI_LINE * i);
    }
    KPNI_PREFETCH_W(next + 3 * KPNI_LINE);
#else
    (void)net, (void)p, (void)stack;
#endif
}

/* Where a stack's top lies in a block that starts at 'block': past the
 * stagger, the guard band and the stack, rounded up to TOP_ALIGN.  An
 * address, not a pointer: odd_stride_pad asks before a stack size too
 * large for the arena is refused, and a pointer that far on would lie
 * past the end of the address space. */
static uintptr_t top_at(uintptr_t block, size_t stagger, size_t stack)
{
    uintptr_t top = block + stagger + GUARD_OUTSIDE + stack;

    return top + (TOP_ALIGN - top % TOP_ALIGN) % TOP_ALIGN;
}

/* The stagger of a process of a net of one runner: none, or one line
 * where its record would otherwise land an even number of lines after
 * the record of the process spawned before it (block_size says why).
 * The line goes in front of the block, so it moves the blocks after it
 * too: a net built in a loop then lays its records an odd number of
 * lines apart, the same number every time.  Not with guard pages, whose
 * blocks start on a page. */
static size_t odd_stride_pad(const kpn_net *net, size_t stack)
{
#if KPN_CACHE_STAGGER
    uintptr_t lines;

    if (net->procs_tail == NULL || net->page != 0)
        return 0;
    /* the record, with no stagger, lies right above the top */
    lines = (top_at((uintptr_t)net->arena.next, 0, stack) + KPNI_CTX_ROOM() -
             (uintptr_t)net->procs_tail) /
            STAGGER_STEP;
    return lines % 2 == 0 ? STAGGER_STEP : 0;
#else
    (void)net, (void)stack;
    return 0;
#endif
}

/*
 * With cfg.guard_pages the block starts with room for one whole page
 * below the stagger, made inaccessible:
 *
 *   | to the page boundary | guard page (no access) | stagger | guard band | stack ...
 */
kpn_status kpn_spawn(kpn_net *net, kpn_proc **out, const char *name,
                     void (*fn)(void *arg), void *arg, size_t stack_size)
{
    size_t name_len = name_length(name);
    size_t stack = kpni_align_up(stack_size);
    size_t stagger, total;
    unsigned char *start, *block, *top, *guard = NULL;
    kpn_proc *p;
    char *name_copy;

    if (!kpni_net_valid(net) || out == NULL || fn == NULL ||
        stack_size < KPN_STACK_MIN)
        return KPN_EINVAL;
    if (net->state != KPNI_NET_IDLE)
        return KPN_ESTATE;
    if (kpni_one_stride(net)) {
        stagger = odd_stride_pad(net, stack);
        total = block_size(stack_size, name_len, stagger, BLOCK_ALIGN);
    } else {
        stagger = (net->nprocs % STAGGER_CYCLE) * STAGGER_STEP;
        total = block_size(stack_size, name_len, stagger, KPNI_ALIGN);
    }
    if (total == 0 || stack < stack_size || total > (size_t)-1 - 2 * net->page)
        return KPN_ENOMEM;
    start = kpni_arena_carve(&net->arena, total + 2 * net->page);
    if (start == NULL)
        return KPN_ENOMEM;
    block = start;
#if KPN_GUARD_PAGES
    if (net->page != 0) {
        guard = block + (net->page - (uintptr_t)block % net->page) % net->page;
        block = guard + net->page;
    }
#endif

    /* See the picture above struct kpn_proc. */
    top = block + (size_t)(top_at((uintptr_t)block, stagger, stack) - (uintptr_t)block);
    block = top - stack - GUARD_OUTSIDE;
    /* Every byte carved is written: a stale record of an earlier net
     * lying here is wiped, not left looking alive (kpn_int.h, "Stale
     * handles").  The band and the stack, [block, top), get their own
     * fills below; filling them twice made spawning 16 384 processes of
     * 8 KiB stacks cost twice what it must.  With cfg.stack_fill 0 the
     * stack and the stagger below its band are left as they are (but
     * for a net with guard pages, whose page lies there too): an old
     * record in them is refused by its serial. */
    if (net->cfg.stack_fill || net->page != 0)
        kpni_memset(start, GUARD_FILL, (size_t)(block - start));
    kpni_memset(top, GUARD_FILL, (size_t)(start + total + 2 * net->page - top));
#if KPN_GUARD_PAGES
    if (guard != NULL && kpn_port_guard(guard, 1) != 0) {
        net->arena.next = start; /* nothing carved */
        return KPN_ENOMEM;
    }
#endif
    kpni_memset(block, GUARD_FILL, KPN_STACK_GUARD);
    /* With the C library's memset, which picks its stores for the CPU.
     * Streaming stores, which skip reading each line into the cache,
     * with the fence they need before another thread may run the
     * process, made building 16 384 processes of 4 KiB stacks take 1.5
     * times as long on a Zen 5 guest (docs/benchmarks.md, "AES"). */
    if (net->cfg.stack_fill)
        kpni_memset(block + KPN_STACK_GUARD, STACK_FILL, stack - GUARD_INSIDE);
    p = (kpn_proc *)(void *)(top + KPNI_CTX_ROOM());

    kpni_memset(p, 0, sizeof *p);
    p->magic = KPNI_PROC_MAGIC;
#if !KPN_COMPACT
    p->serial = net->serial;
    p->seal = kpni_seal(p, net);
#endif
#if KPN_GUARD_PAGES
    p->guard = guard;
#else
    (void)guard;
#endif
    p->net = net;
    p->fn = fn;
    p->arg = arg;
    p->stack_lo = block + KPN_STACK_GUARD;
    p->stack_size = stack - GUARD_INSIDE;
#if KPN_NAME_COPY
    name_copy = (char *)p + kpni_align_up(sizeof *p);
    kpni_memcpy(name_copy, name != NULL ? name : "", name_len + 1);
    p->name = name_copy;
#else
    (void)name_copy;
    p->name = name != NULL ? name : "";
    p->name_seal = kpni_seal(p, p->name);
#endif
#ifdef KPN_VALGRIND
    VALGRIND_STACK_REGISTER(p->stack_lo, top);
#endif
    kpn_port_init((kpn_port_ctx *)(void *)top, p->stack_lo, p->stack_size, proc_entry, p);
#ifdef KPNI_TSAN
    p->fiber = __tsan_create_fiber(0);
#endif

    spawn_ahead(net, p, stack);
#if !KPN_COMPACT
    p->prev = net->procs_tail;
#endif
    if (net->procs_tail != NULL)
        net->procs_tail->next = p;
    else
        net->procs = p;
    net->procs_tail = p;
#if KPN_THREADS
    KPNI_SET_UNLOCKS(p, 1); /* proc_entry lets go of whatever it is handed */
    p->home = (unsigned char)(net->nprocs % net->nrunners);
    net->nprocs++;
    kpni_sched_enqueue(&net->runners[p->home], p);
#else
    net->nprocs++;
    kpni_sched_enqueue(&net->runners[0], p); /* the only runner */
#endif
#if !KPN_COMPACT
    if (net->nprocs == KPNI_AHEAD_PROCS) { /* kpn_int.h, kpni_sched_look_ahead */
        unsigned i;

        for (i = 0; i < net->nrunners; ++i)
            net->runners[i].ahead = 1;
    }
#endif
    *out = p;
    return KPN_OK;
}

/* 'p' is a process of a live net ('net' NULL: of its own net), not a
 * stale handle of a net this arena held before (see "Stale handles" in
 * kpn_int.h). */
KPNI_TAG_READ int kpni_proc_live(const kpn_net *net, const kpn_proc *p)
{
    /* The record's own layout first: an overflow from the block above
     * reaches the 'net' field only through the fields checked here, so
     * 'net' is followed only when they are intact. */
    return p != NULL && KPNI_ALIGNED(p) && p->magic == KPNI_PROC_MAGIC &&
#if KPN_NAME_COPY
           p->name == (const char *)p + kpni_align_up(sizeof *p) &&
#else
           p->name_seal == kpni_seal(p, p->name) &&
#endif
           /* in integers: a damaged pointer may be anything, NULL too */
           (uintptr_t)p->stack_lo + p->stack_size + KPNI_CTX_ROOM() ==
               (uintptr_t)p &&
#if !KPN_COMPACT
           p->seal == kpni_seal(p, p->net) && kpni_net_valid(p->net) &&
           (net == NULL || p->net == net) && p->serial == p->net->serial &&
#else
           kpni_net_valid(p->net) && (net == NULL || p->net == net) &&
#endif
           kpni_in_arena(p->net, p, sizeof *p);
}

/* What a report may trust after a stack overflow: 'p' lies in the carved
 * arena, is live, and the pointers it holds that a report follows point
 * where spawn put them. */
int kpni_proc_sane(const kpn_net *net, const kpn_proc *p)
{
    if (!kpni_in_arena(net, p, sizeof *p))
        return 0;
    /* an overflow's frames that covered the record and returned left it
     * dead stack to memcheck: it is arena memory all the same */
    KPNI_VG_ADDRESSABLE(p, sizeof *p);
    return kpni_proc_live(net, p) &&
           p->state <= KPN_PROC_FAULTED &&
           (p->next == NULL || kpni_in_arena(net, p->next, sizeof *p)) &&
           (p->wait == NULL || kpni_in_arena(net, p->wait, sizeof *p->wait));
}

/* Make every guard page of 'net' accessible again, as far as its process
 * list can be trusted (kpn_net_init over it, kpn_net_release). */
void kpni_proc_unguard_all(kpn_net *net)
{
#if KPN_GUARD_PAGES
    kpn_proc *p;
    /* no more records than the arena holds, should the list loop */
    size_t left = (size_t)(net->arena.next - net->arena.base) / sizeof *p;

    if (net->page == 0)
        return;
    for (p = net->procs; p != NULL && left-- > 0 && kpni_in_arena(net, p, sizeof *p) &&
                         p->magic == KPNI_PROC_MAGIC; p = p->next) {
        if (p->guard != NULL && (uintptr_t)p->guard % net->page == 0 &&
            p->guard >= net->arena.base && p->guard < (unsigned char *)p)
            (void)kpn_port_guard(p->guard, 0);
        p->guard = NULL;
    }
#else
    (void)net;
#endif
}

kpn_status kpn_proc_pin(kpn_proc *p, unsigned runner)
{
    if (!kpni_proc_live(NULL, p) || runner >= p->net->nrunners)
        return KPN_EINVAL;
    if (p->net->state != KPNI_NET_IDLE)
        return KPN_ESTATE; /* running, or faulted: no more runs */
#if KPN_THREADS
    p->home = (unsigned char)runner;
#endif
    if (p->state == KPN_PROC_READY)
        kpni_sched_enqueue(&p->net->runners[runner], p); /* moves it */
    else
        p->runner = &p->net->runners[runner];
    return KPN_OK;
}

/* The whole band, for reports and the end of a run. */
int kpni_proc_guard_intact(const kpn_proc *p)
{
    /* words, two a turn (the band is KPNI_ALIGN-aligned, a multiple of
     * 16 bytes long): every exit checks its process's, and the end of a
     * run every other process's, so the loop's own instructions count */
    const uintptr_t *g = (const uintptr_t *)(const void *)(p->stack_lo - KPN_STACK_GUARD);
    uintptr_t diff = 0;
    size_t i;

    KPNI_VG_ADDRESSABLE(g, KPN_STACK_GUARD);
    for (i = 0; i < KPN_STACK_GUARD / sizeof *g; i += 2)
        diff |= (g[i] ^ KPNI_GUARD_WORD) | (g[i + 1] ^ KPNI_GUARD_WORD);
    return diff == 0;
}

/* The high-water mark: the stack's bytes above the lowest one that no
 * longer holds the fill.  A word at a time where the stack is aligned for
 * it (kpn_spawn aligns it to KPNI_ALIGN), then the bytes of the word that
 * differs.  The peaks of 16 384 processes of 8 KiB (bench/aes) are
 * 128 MiB to read: 25 ms a word at a time, 88 ms a byte at a time. */
static KPNI_STACK_READ size_t stack_peak(const kpn_proc *p)
{
    const unsigned char *lo = p->stack_lo;
    const uintptr_t fill = (uintptr_t)-1 / 0xffu * STACK_FILL; /* in every byte */
    size_t untouched = 0, n = p->stack_size;

    if (!p->net->cfg.stack_fill)
        return 0; /* nothing to measure against */

    /* memcheck calls what lies below a stack pointer inaccessible; the
     * fill pattern written there at spawn is what this scan looks for */
    KPNI_VG_ADDRESSABLE(lo, n);
    if ((uintptr_t)lo % sizeof fill == 0)
        while (n - untouched >= sizeof fill &&
               *(const uintptr_t *)(const void *)(lo + untouched) == fill)
            untouched += sizeof fill;
    while (untouched < n && lo[untouched] == STACK_FILL)
        ++untouched;
    return n - untouched;
}

/* Whether 'q' is blocked on 'c' for 'why', that is, waits for the other
 * end of 'c' (kpni_proc_waits_for). */
static int blocked_on(const kpn_proc *q, const kpn_chan *c, unsigned why)
{
    return KPNI_LOAD(&q->state) == why && KPNI_LOAD(&q->wait) == c;
}

/* A process has returned: close what it writes, so readers see EOF after
 * draining; let go of what it reads, so writers blocked on it resume and
 * drop their message (kpn_send's discard rule).  With several runners
 * every runner's lock is held: a blocker looks at 'closed' under its own. */
void kpni_proc_finish(kpn_proc *p)
{
    kpn_chan *c;

    p->net->nexited++;
#if KPN_COMPACT
    /* no per-process lists: every channel of the net, once per exit */
    for (c = p->net->chans; c != NULL; c = c->next) {
        if (c->writer == p) {
            KPNI_STORE_REL(&c->closed, 1);
            if (blocked_on(c->reader, c, KPN_PROC_BLOCKED_READ))
                kpni_sched_ready(p->runner, c->reader);
        }
        if (c->reader == p && blocked_on(c->writer, c, KPN_PROC_BLOCKED_WRITE))
            kpni_sched_ready(p->runner, c->writer);
    }
#else
    /* With the resolver on one runner, 'nwaiters' counts the processes
     * blocked on a channel of p (kpni_proc_waits_for): when there are
     * none, no other end needs a look.  A fan-out's source, whose workers
     * have all returned, then reads none of their records, each a miss on
     * a line of its own far off in the arena: with 16 384 workers
     * (bench/aes) the exits of a run took about 10 ms with those reads, 6
     * without.  Several runners count only along channels that do not
     * cross (KPNI_NWAITERS_ADD_ON), and look at every other end.
     *
     * On one runner a channel p has closed itself needs nothing more:
     * the close released its reader, and none blocks on it after.  So
     * the walk of 'outs' stops at the last one open ('open_outs' says
     * how many, unless it saturated): each step reads the next link on
     * the channel's list line, a miss.  A source that closes each of its
     * outputs when done, as bench/aes's does its 16 384, walks none; a
     * worker that writes one channel reads no link.  Several runners
     * walk them all: a close on a crossing channel may leave its look at
     * the reader to p's next block (chan.c, release_cross), and the exit
     * is that block. */
    int all = p->net->nrunners > 1;
    int look = !p->runner->resolve || all || p->nwaiters != 0;
    unsigned open = all ? KPNI_OPEN_OUTS_MANY : p->open_outs;

    for (c = open != 0 ? p->outs : NULL; c != NULL; c = c->next_out) {
        if (c->closed && !all) /* only p writes it */
            continue;
        KPNI_STORE_REL(&c->closed, 1); /* published after its last message */
        if (look && blocked_on(c->reader, c, KPN_PROC_BLOCKED_READ))
            kpni_sched_ready(p->runner, c->reader);
        if (open != KPNI_OPEN_OUTS_MANY && --open == 0)
            break;
    }
    for (c = look ? p->ins : NULL; c != NULL; c = c->next_in)
        if (blocked_on(c->writer, c, KPN_PROC_BLOCKED_WRITE))
            kpni_sched_ready(p->runner, c->writer);
#endif
}

/* Whether a process is blocked on a channel of 'p', that is, waits for
 * 'p': the resolver's count, and with several runners, which count only
 * along channels that do not cross (KPNI_NWAITERS_ADD_ON), a look at the
 * other end of each channel of p that crosses, made only by a read-block
 * of a marked process (sched.c), not at every block and wake as a count
 * would be.  'p' is the caller's own process, and its channels stay as
 * they are while it runs.  A count too high (kpn_int.h says when) says
 * yes, as a stale mark does: the caller walks for nothing. */
int kpni_proc_waited_on(const kpn_proc *p)
{
#if KPN_COMPACT
    return KPNI_LOAD(&p->nwaiters) != 0;
#else
    const kpn_chan *c;

    if (p->nwaiters != 0)
        return 1;
    if (p->net->nrunners == 1 || KPNI_SOLO(p->runner) || KPNI_NCROSS(p) == 0)
        return 0;
    for (c = p->outs; c != NULL; c = c->next_out)
        if (KPNI_CROSS(c) && blocked_on(c->reader, c, KPN_PROC_BLOCKED_READ))
            return 1;
    for (c = p->ins; c != NULL; c = c->next_in)
        if (KPNI_CROSS(c) && blocked_on(c->writer, c, KPN_PROC_BLOCKED_WRITE))
            return 1;
    return 0;
#endif
}

kpn_status kpn_proc_stats_get(const kpn_proc *p, kpn_proc_stats *out)
{
    if (!kpni_proc_live(NULL, p) || out == NULL || !kpni_proc_sane(p->net, p))
        return KPN_EINVAL;
    out->name = p->name;
    out->state = (kpn_proc_state)p->state;
    out->waiting_on = p->wait;
    out->stack_base = p->stack_lo;
    out->stack_size = p->stack_size;
    out->stack_peak = stack_peak(p);
    out->switches = p->switches;
    return KPN_OK;
}

const kpn_proc *kpn_proc_next(const kpn_net *net, const kpn_proc *prev)
{
    if (!kpni_net_valid(net))
        return NULL;
    /* after a stack overflow the list may be damaged: stop where it is */
    if (prev == NULL)
        return kpni_proc_sane(net, net->procs) ? net->procs : NULL;
    if (!kpni_proc_sane(net, prev) || !kpni_proc_sane(net, prev->next))
        return NULL;
    return prev->next;
}

const kpn_proc *kpn_net_fault(const kpn_net *net)
{
    return kpni_net_valid(net) ? net->fault : NULL;
}

size_t kpn_stack_min(void)
{
    return KPN_STACK_MIN;
}
