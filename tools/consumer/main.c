/* SPDX-License-Identifier: MIT */
/* A program that uses kpn as a user would: a producer and a consumer, every status checked; what the packaging checks build. */
#include <stdio.h>

#include "kpn.h"

#define COUNT 1000

static unsigned char arena[256 * 1024];

struct ends {
    kpn_chan *chan;
    kpn_status status; /* the first failure inside the process, if any */
    long sum;
};

static void producer(void *arg)
{
    struct ends *e = arg;
    int i;

    for (i = 1; i <= COUNT && e->status == KPN_OK; ++i)
        e->status = kpn_send(e->chan, &i);
}

static void consumer(void *arg)
{
    struct ends *e = arg;
    kpn_status s;
    int v;

    while ((s = kpn_recv(e->chan, &v)) == KPN_OK)
        e->sum += v;
    if (s != KPN_EOF)
        e->status = s;
}

static int check(const char *what, kpn_status s)
{
    if (s != KPN_OK)
        fprintf(stderr, "consumer: %s: %s\n", what, kpn_strerror(s));
    return s == KPN_OK;
}

int main(void)
{
    struct ends out = {NULL, KPN_OK, 0}, in = {NULL, KPN_OK, 0};
    kpn_config cfg;
    kpn_net *net = NULL; /* a whole-program build (-O3 -flto) cannot tell it is set */
    kpn_proc *p, *c;

    /* KPN_RUNNERS=4 in the environment runs it on four threads */
    kpn_config_default(&cfg);
    if (!check("kpn_config_from_env", kpn_config_from_env(&cfg)) ||
        !check("kpn_net_init", kpn_net_init(&net, arena, sizeof arena, &cfg)) ||
        !check("kpn_spawn producer", kpn_spawn(net, &p, "producer", producer, &out, 16384)) ||
        !check("kpn_spawn consumer", kpn_spawn(net, &c, "consumer", consumer, &in, 16384)) ||
        !check("kpn_connect", kpn_connect(net, &out.chan, p, c, sizeof(int), 8)))
        return 1;
    in.chan = out.chan;
    if (!check("kpn_run", kpn_run(net)) || !check("producer", out.status) ||
        !check("consumer", in.status))
        return 1;
    if (in.sum != (long)COUNT * (COUNT + 1) / 2) {
        fprintf(stderr, "consumer: sum %ld, expected %ld\n", in.sum, (long)COUNT * (COUNT + 1) / 2);
        return 1;
    }
    printf("kpn %s: sum of 1..%d through a channel = %ld\n", kpn_version(), COUNT, in.sum);
    return 0;
}
