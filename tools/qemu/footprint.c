/* SPDX-License-Identifier: MIT */
/* The footprint program: a pipeline with the resolver, and the per-object sizes the library reports, printed on the target. */
#include "kpn.h"

/* tools/qemu/unity_semihost.c (output only) */
void kt_print(const char *s);
void kt_print_uint(uint64_t v);

void setUp(void) {}
void tearDown(void) {}

#define N 100u

static kpn_chan *ab, *bc;
static uint32_t total;

static void source(void *arg)
{
    uint32_t i;
    (void)arg;
    for (i = 1; i <= N; ++i)
        kpn_send(ab, &i);
}

static void twice(void *arg)
{
    uint32_t v;
    (void)arg;
    while (kpn_recv(ab, &v) == KPN_OK) {
        v *= 2;
        kpn_send(bc, &v);
    }
}

static void sink(void *arg)
{
    uint32_t v;
    (void)arg;
    while (kpn_recv(bc, &v) == KPN_OK)
        total += v;
}

static void figure(const char *name, size_t v)
{
    kt_print(name);
    kt_print("=");
    kt_print_uint(v);
    kt_print("\n");
}

int main(void)
{
    static unsigned char arena[8192];
    const size_t stack = 512, msg = 4, cap = 4;
    size_t ring = (msg * cap + 15u) / 16u * 16u;
    kpn_net *net;
    kpn_proc *a, *b, *c;

    if (kpn_net_init(&net, arena, sizeof arena, NULL) != KPN_OK ||
        kpn_spawn(net, &a, "source", source, NULL, stack) != KPN_OK ||
        kpn_spawn(net, &b, "twice", twice, NULL, stack) != KPN_OK ||
        kpn_spawn(net, &c, "sink", sink, NULL, stack) != KPN_OK ||
        kpn_connect(net, &ab, a, b, msg, cap) != KPN_OK ||
        kpn_connect(net, &bc, b, c, msg, cap) != KPN_OK ||
        kpn_run(net) != KPN_OK || total != N * (N + 1u)) {
        kt_print("footprint: the pipeline failed\n");
        return 1;
    }
    figure("per_process", kpn_size_proc(stack, 0) - stack);
    figure("per_process_named", kpn_size_proc(stack, 15) - stack);
    figure("per_channel", kpn_size_chan(msg, cap) - ring);
    figure("stack_min", kpn_stack_min());
    figure("net_default", kpn_size_net(NULL));
    return 0;
}
