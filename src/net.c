/* SPDX-License-Identifier: MIT */
/* The net: configuration, placement in the arena, and sizing queries. */
#include "kpn_int.h"

void kpn_config_default(kpn_config *cfg)
{
    if (cfg == NULL)
        return;
    kpni_memset(cfg, 0, sizeof *cfg);
    cfg->default_capacity = 8;
    cfg->reserve_size = 0;
    cfg->resolve = 1;
    cfg->strict = 0;
}

int kpni_net_valid(const kpn_net *net)
{
    return net != NULL && net->magic == KPNI_NET_MAGIC;
}

size_t kpn_size_net(void)
{
    /* The arena may start misaligned: count the worst-case skip. */
    return (KPNI_ALIGN - 1) + kpni_align_up(sizeof(kpn_net)) +
           kpni_align_up(kpn_port_ctx_size());
}

kpn_status kpn_net_init(kpn_net **out, void *mem, size_t size,
                        const kpn_config *user_cfg)
{
    kpn_config cfg;
    kpni_arena arena;
    kpn_net *net;
    kpn_port_ctx *host;

    if (out == NULL || mem == NULL)
        return KPN_EINVAL;
    if (user_cfg != NULL)
        cfg = *user_cfg;
    else
        kpn_config_default(&cfg);
    /* a reserve too small to hold one pool block is a mistake, not 0 */
    if (cfg.default_capacity == 0 || (cfg.resolve != 0 && cfg.resolve != 1) ||
        (cfg.strict != 0 && cfg.strict != 1) ||
        (cfg.reserve_size != 0 && cfg.reserve_size < KPNI_POOL_MIN + KPNI_ALIGN))
        return KPN_EINVAL;

    KPNI_UNPOISON(mem, size);
    kpni_arena_init(&arena, mem, size);
    net = kpni_arena_carve(&arena, sizeof *net);
    host = net ? kpni_arena_carve(&arena, kpn_port_ctx_size()) : NULL;
    if (host == NULL || kpni_align_up(cfg.reserve_size) < cfg.reserve_size ||
        kpni_align_up(cfg.reserve_size) > (size_t)(arena.end - arena.next))
        return KPN_ENOMEM;
    arena.end -= kpni_align_up(cfg.reserve_size);

    kpni_memset(net, 0, sizeof *net);
    kpni_memset(host, 0, kpn_port_ctx_size());
    net->magic = KPNI_NET_MAGIC;
    net->state = KPNI_NET_IDLE;
    net->cfg = cfg;
    net->arena = arena;
    net->runner.net = net;
    net->runner.host = host;
    net->runner.resolve = cfg.resolve;
    net->halt = KPN_OK;
    kpni_pool_add(&net->pool, arena.end, kpni_align_up(cfg.reserve_size));
    *out = net;
    return KPN_OK;
}
