/* SPDX-License-Identifier: MIT */
/* The net: configuration, placement in the arena, and sizing queries. */
#include "kpn_int.h"

void kpn_config_default(kpn_config *cfg)
{
    if (cfg == NULL)
        return;
    kpni_memset(cfg, 0, sizeof *cfg);
    cfg->default_capacity = 8;
    cfg->reserve_size = KPN_RESERVE_ARENA;
    cfg->resolve = 1;
    cfg->strict = 0;
    cfg->runners = 1;
    cfg->policy = KPN_POLICY_WS;
    cfg->wake = KPN_WAKE_WAKER;
    cfg->runner_stack = 64 * 1024;
    cfg->learn = 65536;
    cfg->learn_grain_ns = 1000;
    cfg->learn_trial_ns = 5000000;
    cfg->stack_fill = 1;
#if KPN_THREADS
    /* sanitizers and thread-local storage can need more than that */
    if (cfg->runner_stack < kpn_port_thread_stack_min())
        cfg->runner_stack = kpni_align_up(kpn_port_thread_stack_min());
#endif
}

/* The net's own fields that a report follows, after a stack overflow
 * that may have reached them (the first process's stack lies just above
 * the runners). */
int kpni_net_sane(const kpn_net *net)
{
    return kpni_net_valid(net) && net->nrunners >= 1 && net->nrunners <= KPN_MAX_RUNNERS &&
           net->nrunners == net->cfg.runners && net->arena.base == (const unsigned char *)net &&
           net->arena.base <= net->arena.next && net->arena.next <= net->arena.end &&
           net->runners == (const kpni_runner *)(const void *)(net->arena.base +
                                                              kpni_align_up(sizeof *net));
}

/* What kpn_net_init carves, in order; each piece aligned, as carved. */
static size_t runner_bytes(const kpn_config *cfg)
{
    size_t per = kpni_align_up(kpn_port_ctx_size()), threads = 0;
#if KPN_THREADS
    /* runner 0 is the caller's thread: only the others need a stack */
    if (cfg->runners > 1) {
        per += kpni_align_up(kpn_port_sem_size());
        threads = (cfg->runners - 1) * (kpni_align_up(kpn_port_thread_size()) +
                                        kpni_align_up(cfg->runner_stack));
    }
#endif
    return kpni_align_up(sizeof(kpni_runner) * cfg->runners) + per * cfg->runners + threads;
}

/* Bytes carved for the reserve at init: none when it grows into the arena. */
static size_t reserve_bytes(const kpn_config *cfg)
{
    return cfg->reserve_size == KPN_RESERVE_ARENA ? 0 : kpni_align_up(cfg->reserve_size);
}

/* What kpn_net_init carves, reserve included, without the alignment
 * skip; 0 if the sum does not fit in a size_t. */
static size_t net_bytes(const kpn_config *cfg)
{
    size_t fixed = kpni_align_up(sizeof(kpn_net)) + runner_bytes(cfg);

    if (reserve_bytes(cfg) > (size_t)-1 - (KPNI_ALIGN - 1) - fixed)
        return 0;
    return fixed + reserve_bytes(cfg);
}

/* Caller mistakes in a configuration; KPN_OK if it can be used. */
static kpn_status check_config(const kpn_config *cfg)
{
    if (cfg->default_capacity == 0 || (cfg->resolve != 0 && cfg->resolve != 1) ||
        (cfg->strict != 0 && cfg->strict != 1) ||
        /* a reserve too small to hold one pool block is a mistake, not 0 */
        (cfg->reserve_size != 0 && cfg->reserve_size < KPNI_RESERVE_MIN) ||
        (cfg->reserve_size != KPN_RESERVE_ARENA &&
         cfg->reserve_size > (size_t)-1 - KPNI_ALIGN) ||
        cfg->runners == 0 || cfg->runners > KPN_MAX_RUNNERS ||
        (cfg->policy != KPN_POLICY_WS && cfg->policy != KPN_POLICY_STATIC) ||
        (cfg->wake != KPN_WAKE_LAST && cfg->wake != KPN_WAKE_WAKER) ||
        (cfg->guard_pages != 0 && cfg->guard_pages != 1) ||
        (cfg->stack_fill != 0 && cfg->stack_fill != 1))
        return KPN_EINVAL;
#if KPN_GUARD_PAGES
    if (cfg->guard_pages && kpn_port_page_size() < KPNI_ALIGN)
        return KPN_EINVAL;
#else
    if (cfg->guard_pages)
        return KPN_EINVAL; /* built without guard pages */
#endif
#if KPN_THREADS
    if (cfg->runners > 1 && (cfg->runner_stack < kpn_port_thread_stack_min() ||
                             cfg->runner_stack > (size_t)-1 / KPN_MAX_RUNNERS / 2))
        return KPN_EINVAL;
#else
    if (cfg->runners > 1)
        return KPN_EINVAL; /* built without threads (KPN_THREADS 0) */
#endif
    return KPN_OK;
}

size_t kpn_size_net(const kpn_config *user_cfg)
{
    kpn_config cfg;

    if (user_cfg != NULL)
        cfg = *user_cfg;
    else
        kpn_config_default(&cfg);
    if (check_config(&cfg) != KPN_OK || net_bytes(&cfg) == 0)
        return 0;
    /* The arena may start misaligned: count the worst-case skip. */
    return (KPNI_ALIGN - 1) + net_bytes(&cfg);
}

/* Carve and set up the runners; NULL if the arena is too small. */
static kpni_runner *make_runners(kpni_arena *arena, kpn_net *net, const kpn_config *cfg)
{
    kpni_runner *rs = kpni_arena_carve(arena, sizeof(kpni_runner) * cfg->runners);
    unsigned i;

    if (rs == NULL)
        return NULL;
    kpni_memset(rs, 0, sizeof(kpni_runner) * cfg->runners);
    for (i = 0; i < cfg->runners; ++i) {
        kpni_runner *r = &rs[i];
        r->net = net;
        r->index = i;
        r->resolve = cfg->resolve;
        r->mt = cfg->runners > 1;
        r->slow_reads = r->mt;
        r->rng = 2654435761u * (i + 1) | 1u;
        r->ctx_off = KPNI_CTX_ROOM();
        r->host = kpni_arena_carve(arena, kpn_port_ctx_size());
        if (r->host == NULL)
            return NULL;
        kpni_memset(r->host, 0, kpn_port_ctx_size());
#if KPN_THREADS
        if (r->mt) {
            r->sem = kpni_arena_carve(arena, kpn_port_sem_size());
            if (r->sem == NULL)
                return NULL;
            kpni_memset(r->sem, 0, kpn_port_sem_size());
        }
        if (r->mt && i > 0) {
            r->thread = kpni_arena_carve(arena, kpn_port_thread_size());
            r->stack = kpni_arena_carve(arena, cfg->runner_stack);
            if (r->thread == NULL || r->stack == NULL)
                return NULL;
            /* written whole: no stale record of an earlier net survives */
            kpni_memset(r->thread, 0, kpn_port_thread_size());
            kpni_memset(r->stack, 0, cfg->runner_stack);
        }
#endif
    }
    return rs;
}

/* No net was here, but one may have been, its trace overwritten by a net
 * placed a few bytes off (whose handles it then shared a serial with):
 * take the serial from what the bytes hold now and from the arena as
 * given (FNV-1a), so a net that comes back to a place takes another
 * serial than the one it had. */
static uint32_t trace_serial(const kpn_net *place, const void *mem, size_t size)
{
    const unsigned char *b = (const unsigned char *)place;
    uint32_t h = 2166136261u;
    uintptr_t extra[2];
    size_t i;

    KPNI_VG_ADDRESSABLE(b, sizeof *place); /* the user's bytes, whatever they are */
    for (i = 0; i < sizeof *place; ++i)
        h = (h ^ b[i]) * 16777619u;
    extra[0] = (uintptr_t)mem;
    extra[1] = (uintptr_t)size;
    for (i = 0; i < sizeof extra; ++i)
        h = (h ^ ((const unsigned char *)extra)[i]) * 16777619u;
    return h;
}

kpn_status kpn_net_init(kpn_net **out, void *mem, size_t size,
                        const kpn_config *user_cfg)
{
    kpn_config cfg;
    kpni_arena arena;
    kpn_net *net;
    kpni_runner *runners;
    size_t reserve;
    uint32_t serial;
    unsigned i;

    if (out == NULL || mem == NULL || size > UINTPTR_MAX - (uintptr_t)mem)
        return KPN_EINVAL; /* NULL, or an arena that wraps round the address space */
    if (user_cfg != NULL)
        cfg = *user_cfg;
    else
        kpn_config_default(&cfg);
    if (check_config(&cfg) != KPN_OK)
        return KPN_EINVAL;

    /* An arena that holds the caller's own stack: an init from a process
     * over memory its net runs in, at any offset, would write over the
     * frames it returns through.  (A net of a process's own, in an array
     * on its stack, lies above this frame.) */
    if (kpni_frame() - (uintptr_t)mem < size)
        return KPN_ESTATE;
    /* Check the whole layout fits before writing a byte: an init refused
     * for its arguments or its size leaves the arena, and any net that
     * lives in it, as they were (a refused semaphore, below, comes too
     * late for that). */
    kpni_arena_init(&arena, mem, size);
#if KPN_GUARD_PAGES
    if (cfg.guard_pages && (uintptr_t)mem % kpn_port_page_size() != 0)
        return KPN_EINVAL;
#endif
    if (net_bytes(&cfg) == 0 || net_bytes(&cfg) > (size_t)(arena.end - arena.next))
        return KPN_ENOMEM;
    reserve = reserve_bytes(&cfg);
    net = (kpn_net *)(void *)arena.base;
    /* A net that runs here (an init from one of its processes) is still
     * in use: refused, as kpn_net_release refuses it, and before the
     * arena's frames lose their sanitizer marks.  A net's own fields are
     * never a frame's. */
    KPNI_UNPOISON(net, sizeof *net);
    if (kpni_net_sane(net) && net->state == KPNI_NET_RUNNING)
        return KPN_ESTATE;
    KPNI_UNPOISON(mem, size);
    /* A net already here: give its guard pages back, and take the next
     * serial so its handles go stale.  The memory may have held a net at
     * another offset since, over this one's fields but its tag: its
     * process list is followed only if the rest of its header holds. */
    if (net->magic == KPNI_NET_MAGIC || net->magic == KPNI_NET_RELEASED) {
        serial = net->serial + 1;
        if (kpni_net_sane(net))
            kpni_proc_unguard_all(net);
    } else {
        serial = trace_serial(net, mem, size);
    }
    net = kpni_arena_carve(&arena, sizeof *net);
    runners = make_runners(&arena, net, &cfg);
    KPN_ASSERT(net != NULL && runners != NULL);
    arena.end -= reserve;
#if KPN_THREADS
    for (i = 0; i < cfg.runners && cfg.runners > 1; ++i) {
        if (kpn_port_sem_init(runners[i].sem) != 0) {
            while (i-- > 0)
                kpn_port_sem_destroy(runners[i].sem);
            /* The runners' records, written over the memory after the
             * header, are past taking back: a net that lived here has
             * lost what lay there, and its guard pages.  Leave a
             * released net under this init's serial, so that the old
             * net's handles are refused rather than read those bytes,
             * and the next init here takes a serial of its own. */
            kpni_memset(net, 0, sizeof *net);
            net->magic = KPNI_NET_RELEASED;
            net->serial = serial;
            return KPN_ETHREAD;
        }
    }
#endif
    (void)i;

    kpni_memset(net, 0, sizeof *net);
    net->magic = net->tail[0] = KPNI_NET_MAGIC;
    net->serial = net->tail[1] = serial;
#if !KPN_COMPACT
    net->chan_head[0] = KPNI_CHAN_MAGIC;
    net->chan_head[1] = serial;
#endif
    net->state = KPNI_NET_IDLE;
    net->cfg = cfg;
    net->arena = arena;
#if KPN_GUARD_PAGES
    net->page = cfg.guard_pages ? kpn_port_page_size() : 0;
#endif
    net->runners = runners;
    net->nrunners = cfg.runners;
    net->halt = KPN_OK;
    net->reserve_carved = reserve;
    kpni_pool_add(&net->pool, arena.end, reserve);
    *out = net;
    return KPN_OK;
}

kpn_status kpn_net_release(kpn_net *net)
{
    if (!kpni_net_valid(net))
        return KPN_EINVAL;
    if (net->state == KPNI_NET_RUNNING)
        return KPN_ESTATE;
    kpni_proc_unguard_all(net);
    net->magic = KPNI_NET_RELEASED; /* the serial stays: see kpn_net_init */
#if !KPN_COMPACT
    net->chan_head[0] = 0;
#endif
    return KPN_OK;
}
