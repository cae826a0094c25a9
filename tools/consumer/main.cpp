/* SPDX-License-Identifier: MIT */
/* The consumer's program in C++: kpn.h included from C++ and linked
 * against the C library, as a C++ firmware or server would. */
#include <cstdio>

#include "kpn.h"

namespace {

const int COUNT = 1000;
unsigned char arena[256 * 1024];

struct ends {
    kpn_chan *chan;
    kpn_status status;
    long sum;
};

void producer(void *arg)
{
    ends *e = static_cast<ends *>(arg);

    for (int i = 1; i <= COUNT && e->status == KPN_OK; ++i)
        e->status = kpn_send(e->chan, &i);
}

void consumer(void *arg)
{
    ends *e = static_cast<ends *>(arg);
    kpn_status s;
    int v;

    while ((s = kpn_recv(e->chan, &v)) == KPN_OK)
        e->sum += v;
    if (s != KPN_EOF)
        e->status = s;
}

} // namespace

int main()
{
    ends e = {0, KPN_OK, 0};
    kpn_net *net;
    kpn_proc *p, *c;
    kpn_status s;

    if ((s = kpn_net_init(&net, arena, sizeof arena, 0)) != KPN_OK ||
        (s = kpn_spawn(net, &p, "producer", producer, &e, kpn_stack_min())) != KPN_OK ||
        (s = kpn_spawn(net, &c, "consumer", consumer, &e, kpn_stack_min())) != KPN_OK ||
        (s = kpn_connect(net, &e.chan, p, c, sizeof(int), 0)) != KPN_OK ||
        (s = kpn_run(net)) != KPN_OK || (s = e.status) != KPN_OK) {
        std::fprintf(stderr, "consumer (C++): %s\n", kpn_strerror(s));
        return 1;
    }
    std::printf("sum of 1..1000 through a channel = %ld (C++)\n", e.sum);
    return 0;
}
