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
    cfg->wake = KPN_WAKE_LAST;
    cfg->runner_stack = 64 * 1024;
#if KPN_THREADS
    /* sanitizers and thread-local storage can need more than that */
    if (cfg->runner_stack < kpn_port_thread_stack_min())
        cfg->runner_stack = kpni_align_up(kpn_port_thread_stack_min());
#endif
}

int kpni_net_valid(const kpn_net *net)
{
    return net != NULL && net->magic == KPNI_NET_MAGIC;
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
        (cfg->wake != KPN_WAKE_LAST && cfg->wake != KPN_WAKE_WAKER))
        return KPN_EINVAL;
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
    if (check_config(&cfg) != KPN_OK)
        return 0;
    /* The arena may start misaligned: count the worst-case skip. */
    return (KPNI_ALIGN - 1) + kpni_align_up(sizeof(kpn_net)) + runner_bytes(&cfg) +
           reserve_bytes(&cfg);
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
        r->rng = 2654435761u * (i + 1) | 1u;
        r->host = kpni_arena_carve(arena, kpn_port_ctx_size());
        if (r->host == NULL)
            return NULL;
        kpni_memset(r->host, 0, kpn_port_ctx_size());
#if KPN_THREADS
        if (r->mt) {
            r->sem = kpni_arena_carve(arena, kpn_port_sem_size());
            if (r->sem == NULL)
                return NULL;
        }
        if (r->mt && i > 0) {
            r->thread = kpni_arena_carve(arena, kpn_port_thread_size());
            r->stack = kpni_arena_carve(arena, cfg->runner_stack);
            if (r->thread == NULL || r->stack == NULL)
                return NULL;
        }
#endif
    }
    return rs;
}

kpn_status kpn_net_init(kpn_net **out, void *mem, size_t size,
                        const kpn_config *user_cfg)
{
    kpn_config cfg;
    kpni_arena arena;
    kpn_net *net;
    kpni_runner *runners;
    size_t reserve;
    unsigned i;

    if (out == NULL || mem == NULL)
        return KPN_EINVAL;
    if (user_cfg != NULL)
        cfg = *user_cfg;
    else
        kpn_config_default(&cfg);
    if (check_config(&cfg) != KPN_OK)
        return KPN_EINVAL;

    /* Check the whole layout fits before writing a byte: a failed init
     * leaves the arena, and any net that lives in it, as they were. */
    kpni_arena_init(&arena, mem, size);
    reserve = reserve_bytes(&cfg);
    if (kpn_size_net(&cfg) - (KPNI_ALIGN - 1) > (size_t)(arena.end - arena.next))
        return KPN_ENOMEM;
    KPNI_UNPOISON(mem, size);
    net = kpni_arena_carve(&arena, sizeof *net);
    runners = make_runners(&arena, net, &cfg);
    KPN_ASSERT(net != NULL && runners != NULL);
    arena.end -= reserve;
#if KPN_THREADS
    for (i = 0; i < cfg.runners && cfg.runners > 1; ++i) {
        if (kpn_port_sem_init(runners[i].sem) != 0) {
            while (i-- > 0)
                kpn_port_sem_destroy(runners[i].sem);
            return KPN_ETHREAD;
        }
    }
#endif
    (void)i;

    kpni_memset(net, 0, sizeof *net);
    net->magic = KPNI_NET_MAGIC;
    net->state = KPNI_NET_IDLE;
    net->cfg = cfg;
    net->arena = arena;
    net->runners = runners;
    net->nrunners = cfg.runners;
    net->halt = KPN_OK;
    net->reserve_carved = reserve;
    kpni_pool_add(&net->pool, arena.end, reserve);
    *out = net;
    return KPN_OK;
}
