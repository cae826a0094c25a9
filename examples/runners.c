/* SPDX-License-Identifier: MIT */
/* runners: one network on 1, 2, 4, ... runner threads gives the same output every time, only sooner. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "kpn.h"
#include "args.h"

/*
 *              ┌──► worker 0 ──┐
 *   deal ──────┼──► worker 1 ──┼──────► gather
 *              └──► worker w ──┘
 *
 * 'deal' hands out ranges of numbers round-robin; each worker finds the
 * longest Collatz chain in each range it gets and sends it on; 'gather'
 * takes the answers round-robin too and folds them into a checksum.  Who
 * runs where and when is up to the runners, but every channel carries the
 * same messages whatever the schedule, so the checksum cannot change.
 */
#define MAX_WORKERS 64

struct net { kpn_chan *job[MAX_WORKERS], *answer[MAX_WORKERS]; int workers, jobs; uint64_t sum; };
struct worker { struct net *n; int i; };

static void deal(void *arg)
{
    struct net *n = arg;
    for (int64_t j = 0; j < n->jobs; ++j)
        kpn_send(n->job[j % n->workers], &j);
}

static void work(void *arg)
{
    struct worker *w = arg;
    int64_t j, best;
    while (kpn_recv(w->n->job[w->i], &j) == KPN_OK) {
        best = 0;
        for (int64_t x = j * 1000 + 1; x <= j * 1000 + 1000; ++x) {
            int64_t steps = 0;
            for (uint64_t v = (uint64_t)x; v != 1; v = v % 2 ? 3 * v + 1 : v / 2)
                ++steps;
            best = steps > best ? steps : best;
        }
        kpn_send(w->n->answer[w->i], &best);
    }
}

static void gather(void *arg)
{
    struct net *n = arg;
    int64_t best;
    for (int j = 0; kpn_recv(n->answer[j % n->workers], &best) == KPN_OK; ++j)
        n->sum = n->sum * 31 + (uint64_t)best;
}

static unsigned char arena[4 << 20];

static kpn_status run(struct net *n, unsigned runners, double *seconds)
{
    static struct worker w[MAX_WORKERS];
    struct timespec t0, t1;
    kpn_config cfg;
    kpn_net *net;
    kpn_proc *d, *g, *p;
    kpn_status s;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    n->sum = 0;
    s = kpn_net_init(&net, arena, sizeof arena, &cfg);
    if (s == KPN_OK) s = kpn_spawn(net, &d, "deal", deal, n, 16384);
    if (s == KPN_OK) s = kpn_spawn(net, &g, "gather", gather, n, 16384);
    for (int i = 0; i < n->workers && s == KPN_OK; ++i) {
        w[i].n = n;
        w[i].i = i;
        s = kpn_spawn(net, &p, "worker", work, &w[i], 16384);
        if (s == KPN_OK) s = kpn_connect(net, &n->job[i], d, p, sizeof(int64_t), 4);
        if (s == KPN_OK) s = kpn_connect(net, &n->answer[i], p, g, sizeof(int64_t), 4);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (s == KPN_OK) s = kpn_run(net);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return s;
}

int main(int argc, char **argv)
{
    struct net n = { { NULL }, { NULL }, 0, 0, 0 };
    uint64_t first = 0;
    unsigned most, r;
    double seconds, one = 0;
    int same = 1;

    args_check(argc, argv, "workers jobs runners", "usage: runners [--workers=8] [--jobs=400] [--runners=4]\n"
               "Runs one network on 1, 2, 4, ... up to that many runners; the checksum never changes.\n");
    n.workers = (int)args_get(argc, argv, "workers", 8, 1, MAX_WORKERS);
    n.jobs = (int)args_get(argc, argv, "jobs", 400, 1, 100000);
    most = (unsigned)args_get(argc, argv, "runners", 4, 1, KPN_MAX_RUNNERS);
    for (r = 1; r <= most; r = r < most && 2 * r > most ? most : 2 * r) {
        kpn_status s = run(&n, r, &seconds);
        if (s != KPN_OK) {
            fprintf(stderr, "runners: %u runners: %s\n", r, kpn_strerror(s));
            return 1;
        }
        if (r == 1) {
            first = n.sum;
            one = seconds;
        }
        same &= n.sum == first;
        printf("runners=%u checksum=%016llx seconds=%.3f speedup=%.2f\n", r,
               (unsigned long long)n.sum, seconds, one / seconds);
    }
    printf("workers=%d jobs=%d most=%u checksum=%016llx same=%d\n", n.workers, n.jobs, most,
           (unsigned long long)first, same);
    return same ? 0 : 1;
}
