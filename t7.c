#include <stdio.h>
#include <string.h>
#include "kpn.h"
static const char *S(kpn_status s){ static const char *n[]={"OK","EOF","EINVAL","ENOMEM","EPERM","ESTATE","ERESERVE","ESTACK","EDEADLOCK","ETHREAD","EFULL"}; return s<11?n[s]:"?"; }
static unsigned char arena[4<<20];
int main(void)
{
    kpn_config cfg = {0}; kpn_net *net; kpn_status s;
    cfg.runners = 4; cfg.default_capacity = 8;
    s = kpn_net_init(&net, arena, sizeof arena, &cfg); printf("zeroed cfg, runners 4, cap 8: %s\n", S(s));
    cfg.runners = 1;
    s = kpn_net_init(&net, arena, sizeof arena, &cfg); printf("zeroed cfg, runners 1, cap 8: %s\n", S(s));
    for (unsigned r = 1; r <= 32; r *= 2) {
        kpn_config_default(&cfg); cfg.runners = r;
        size_t need = kpn_size_net(&cfg);
        for (size_t off = 0; off < 16; off += 5) {
            kpn_status a = kpn_net_init(&net, arena + off, need, &cfg);
            if (!a) kpn_net_release(net);
            kpn_status b = kpn_net_init(&net, arena + off, need - 1, &cfg);
            if (!b) kpn_net_release(net);
            printf("runners=%u off=%zu size_net=%zu: exact %s, minus1 %s\n", r, off, need, S(a), S(b));
        }
    }
    return 0;
}
