/* SPDX-License-Identifier: MIT */
/* hamming: the numbers 2^i 3^j 5^k in order, from a cycle that only runs if a channel grows. */
#include <stdint.h>
#include <stdio.h>
#include "kpn.h"
#include "args.h"

/*
 *            ┌──► times 2 ──┐
 *   merge ───┼──► times 3 ──┼──► merge          merge ──► print
 *            └──► times 5 ──┘
 *
 * 'merge' sends each number it outputs (1 first) to three multipliers and
 * to 'print'; it then outputs the smallest number the multipliers have
 * sent back that it has not output yet.  The multiples of 5 are needed
 * long after they are made, so at capacity 1 the cycle stops at once:
 * merge waits to send to 'times 5', which waits to send back.  Unbounded
 * channels would not stop, so this is an artificial deadlock; kpn sees
 * the cycle close and grows a channel (by default from the arena's free
 * memory).  With --reserve=0 there is nothing to grow into, and the run
 * ends with KPN_ERESERVE and an account of the cycle.
 */
#define MAX_N 10000

struct merge { kpn_chan *to[3], *from[3], *print; int n; };
struct times { kpn_chan *in, *out; uint64_t factor; };
struct print { kpn_chan *in; uint64_t value[MAX_N]; int count; };

static void merge(void *arg)
{
    struct merge *m = arg;
    uint64_t v = 1, head[3];

    for (int k = 0; k < 3; ++k)
        head[k] = 0;                            /* 0: not received yet */
    for (int i = 0; i < m->n; ++i) {
        uint64_t next = UINT64_MAX;
        kpn_send(m->print, &v);
        for (int k = 0; k < 3; ++k)
            kpn_send(m->to[k], &v);
        for (int k = 0; k < 3; ++k) {
            if (head[k] == v || head[k] == 0)   /* used (or never read): take the next */
                kpn_recv(m->from[k], &head[k]);
            if (head[k] < next)
                next = head[k];
        }
        v = next;
    }
}   /* returning closes every channel merge writes: the others drain and stop */

static void times(void *arg)
{
    struct times *t = arg;
    uint64_t v;
    while (kpn_recv(t->in, &v) == KPN_OK) {
        v *= t->factor;
        kpn_send(t->out, &v);
    }
}

static void print(void *arg)
{
    struct print *p = arg;
    uint64_t v;
    while (kpn_recv(p->in, &v) == KPN_OK && p->count < MAX_N)
        p->value[p->count++] = v;
}

static int is_hamming(uint64_t v)
{
    static const uint64_t f[3] = { 2, 3, 5 };
    for (int k = 0; k < 3; ++k)
        while (v % f[k] == 0)
            v /= f[k];
    return v == 1;
}

/* The reference: the same numbers the usual sequential way, each from
 * an earlier one by the three indices of Dijkstra's program.  (A search
 * of the integers one by one would reach the 10 000th, about 2.9e17,
 * only after years.) */
static uint64_t ref[MAX_N];

static void reference(int n)
{
    int i2 = 0, i3 = 0, i5 = 0;

    ref[0] = 1;
    for (int i = 1; i < n; ++i) {
        uint64_t a = ref[i2] * 2, b = ref[i3] * 3, c = ref[i5] * 5;
        uint64_t v = a < b ? (a < c ? a : c) : (b < c ? b : c);

        ref[i] = v;
        i2 += a == v;
        i3 += b == v;
        i5 += c == v;
    }
}

static unsigned char arena[1 << 20];
static struct merge m;
static struct times t[3] = { { NULL, NULL, 2 }, { NULL, NULL, 3 }, { NULL, NULL, 5 } };
static struct print out;
static char report[4096];

int main(int argc, char **argv)
{
    kpn_config cfg;
    kpn_proc *pm, *pp, *pt[3];
    kpn_net *net = NULL;                               /* kpn_net_init may fail */
    kpn_stats st;
    kpn_status s;
    long reserve;
    int i, ok = 1;

    args_check(argc, argv, "n reserve", "usage: hamming [--n=1000] [--reserve=-1]\n"
               "The first n Hamming numbers (1..10000).  --reserve: bytes for channels\n"
               "to grow into, 64..524288, or 0 for none, -1 (the default) for the\n"
               "arena's free memory.\n");
    m.n = (int)args_get(argc, argv, "n", 1000, 1, MAX_N);
    kpn_config_default(&cfg);
    reserve = args_get(argc, argv, "reserve", -1, -1, 1 << 19);
    if (reserve > 0 && reserve < 64) {                 /* kpn_net_init's least reserve */
        fprintf(stderr, "hamming: --reserve wants -1, 0 or 64..%d, not %ld\n", 1 << 19, reserve);
        return 2;
    }
    if (reserve >= 0)
        cfg.reserve_size = (size_t)reserve;
    s = kpn_net_init(&net, arena, sizeof arena, &cfg);
    if (s == KPN_OK) s = kpn_spawn(net, &pm, "merge", merge, &m, 16384);
    if (s == KPN_OK) s = kpn_spawn(net, &pp, "print", print, &out, 16384);
    for (i = 0; i < 3 && s == KPN_OK; ++i) {
        static const char *name[3] = { "times 2", "times 3", "times 5" };
        s = kpn_spawn(net, &pt[i], name[i], times, &t[i], 16384);
        if (s == KPN_OK) s = kpn_connect(net, &m.to[i], pm, pt[i], sizeof(uint64_t), 1);
        if (s == KPN_OK) s = kpn_connect(net, &m.from[i], pt[i], pm, sizeof(uint64_t), 1);
        t[i].in = m.to[i];
        t[i].out = m.from[i];
    }
    if (s == KPN_OK) s = kpn_connect(net, &m.print, pm, pp, sizeof(uint64_t), 1);
    out.in = m.print;
    if (s == KPN_OK) s = kpn_run(net);
    if (s != KPN_OK) {
        fprintf(stderr, "hamming: %s\n", kpn_strerror(s));
        if (net != NULL && kpn_report(net, report, sizeof report) > 0)
            fprintf(stderr, "%s", report);
        return 1;
    }
    reference(m.n);
    for (i = 0; i < out.count; ++i)                    /* check: each one, and in order */
        ok &= is_hamming(out.value[i]) && out.value[i] == ref[i];
    ok &= out.count == m.n;
    kpn_net_stats(net, &st);
    printf("n=%d last=%llu resolutions=%llu reserve_peak=%zu verified=%d\n", m.n,
           (unsigned long long)out.value[out.count - 1], (unsigned long long)st.resolutions,
           st.reserve_peak, ok);
    return ok ? 0 : 1;
}
