/* SPDX-License-Identifier: MIT */
/* hello: a producer sends the numbers 1..n to a consumer that adds them up. */
#include <stdio.h>
#include <string.h>
#include "kpn.h"

static unsigned char arena[64 * 1024];  /* all the memory kpn will use */

struct link { kpn_chan *chan; int n; long sum; };

static void producer(void *arg)
{
    struct link *l = arg;
    for (int i = 1; i <= l->n; ++i)
        kpn_send(l->chan, &i);          /* blocks while the channel is full */
}                                       /* returning closes the channel */

static void consumer(void *arg)
{
    struct link *l = arg;
    int v;
    while (kpn_recv(l->chan, &v) == KPN_OK)  /* KPN_EOF once closed and empty */
        l->sum += v;
}

int main(int argc, char **argv)
{
    struct link l = { NULL, 100, 0 };
    kpn_net *net;
    kpn_proc *p, *c;
    kpn_status s;
    char rest;

    if (argc > 2 || (argc == 2 && (sscanf(argv[1], "--n=%4d%c", &l.n, &rest) != 1 || l.n < 0))) {
        int help = argc == 2 && strcmp(argv[1], "--help") == 0;
        if (argc > 2)
            fprintf(stderr, "hello: one option at most\n");
        else if (!help)
            fprintf(stderr, "hello: cannot take '%s'\n", argv[1]);
        fprintf(help ? stdout : stderr, "usage: hello [--n=COUNT]  (0..9999, default 100)\n");
        return help ? 0 : 2;
    }

    if ((s = kpn_net_init(&net, arena, sizeof arena, NULL)) != KPN_OK ||  /* NULL: defaults */
        (s = kpn_spawn(net, &p, "producer", producer, &l, 16384)) != KPN_OK ||
        (s = kpn_spawn(net, &c, "consumer", consumer, &l, 16384)) != KPN_OK ||
        (s = kpn_connect(net, &l.chan, p, c, sizeof(int), 8)) != KPN_OK ||
        (s = kpn_run(net)) != KPN_OK) {                   /* until nothing can run */
        fprintf(stderr, "hello: %s\n", kpn_strerror(s));
        return 1;
    }
    printf("n=%d sum=%ld\n", l.n, l.sum);               /* n=100 sum=5050 */
    return 0;
}
