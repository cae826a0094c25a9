/* SPDX-License-Identifier: MIT */
/* Placement from a profiled run: the process graph cut into balanced parts. */
#include "kpn_int.h"

/*
 * The papers' approach to placement (Vrba's thesis, 4.2.3): run once, count
 * the messages every channel carried, and split the process graph into R
 * parts of about equal weight that cut as few messages as possible.
 * Processes that talk a lot then share a runner, and under
 * KPN_POLICY_STATIC a channel inside a part costs what it costs on one
 * runner (chan.c, release).
 *
 * A process weighs the messages it sent and received, plus one (the
 * thesis weighs CPU time; a count needs no clock on the hot path); a
 * channel weighs the messages it carried.  The partition starts from
 * contiguous runs of spawn order (a network is usually spawned along its
 * data flow, so this is a good cut already) and is then improved by
 * moving single processes to the part they talk to most, while no part
 * grows past its share by more than the heaviest process and none gives
 * up its last process (greedy
 * refinement in the manner of Fiduccia-Mattheyses, without the moves
 * that make the cut worse for a while).  Each pass costs O(channels).
 *
 * It needs a word a process and two a part: a process's part is kept in
 * its 'seen' field while the partition is built ('seen' is the at-rest
 * scan's stamp, always 0 outside it, and left 0 here), and the parts'
 * weights in the net.  The counts are loaded
 * as the shared words they are: a placement is also learnt while the
 * net runs (kpni_place_live), from counts the runners are still moving.
 */

#define PASSES 16

#if KPN_THREADS && !KPN_COMPACT

static uint64_t proc_weight(const kpn_proc *p)
{
    const kpn_chan *c;
    uint64_t w = 1;

    for (c = p->outs; c != NULL; c = c->next_out)
        w += KPNI_LOAD(&c->sent);
    for (c = p->ins; c != NULL; c = c->next_in)
        w += KPNI_LOAD(&KPNI_RECEIVED(c));
    return w;
}

/* Messages between 'p' and each part, into conn[0 .. runners-1]. */
static void connections(const kpn_proc *p, unsigned runners, uint64_t *conn)
{
    const kpn_chan *c;
    unsigned q;

    for (q = 0; q < runners; ++q)
        conn[q] = 0;
    for (c = p->outs; c != NULL; c = c->next_out)
        if (c->reader != p)
            conn[c->reader->seen] += KPNI_LOAD(&c->sent);
    for (c = p->ins; c != NULL; c = c->next_in)
        if (c->writer != p && !c->input)
            conn[c->writer->seen] += KPNI_LOAD(&c->sent);
}

/* Each process's part into its 'seen'; the caller reads them and sets
 * 'seen' back to 0. */
static void partition(kpn_net *net, unsigned runners)
{
    uint64_t *load = net->place_load, *conn = net->place_conn;
    uint64_t total = 0, heaviest = 0, limit, before = 0, w;
    kpn_proc *p;
    unsigned q, best;
    int pass, moved;

    for (p = net->procs; p != NULL; p = p->next) {
        w = proc_weight(p);
        total += w;
        if (w > heaviest)
            heaviest = w;
    }
    for (q = 0; q < runners; ++q)
        load[q] = 0;
    /* Contiguous runs of spawn order: a process goes to the part its
     * weight's middle falls in. */
    for (p = net->procs; p != NULL; p = p->next) {
        w = proc_weight(p);
        q = (unsigned)((before + w / 2) / ((total + runners - 1) / runners));
        p->seen = q < runners ? q : runners - 1;
        load[p->seen] += w;
        before += w;
    }
    limit = total / runners + heaviest;
    for (pass = 0; pass < PASSES; ++pass) {
        moved = 0;
        for (p = net->procs; p != NULL; p = p->next) {
            w = proc_weight(p);
            connections(p, runners, conn);
            best = (unsigned)p->seen;
            for (q = 0; q < runners; ++q)
                if (conn[q] > conn[best] && load[q] + w <= limit)
                    best = q;
            /* Never a part's last process (a process weighs at least 1):
             * in a fork-join net every worker talks to the source's part
             * and the sink's as much, and moving each to one of them
             * emptied the parts between, leaving their runners idle. */
            if (best != p->seen && load[p->seen] > w) {
                /* a live net's counts have moved since its part took
                 * them in: take out no more than is there */
                load[p->seen] -= w < load[p->seen] ? w : load[p->seen];
                load[best] += w;
                p->seen = best;
                moved = 1;
            }
        }
        if (!moved)
            break;
    }
}

/* The same partition of a net that runs, holding every runner's lock,
 * into as many parts as the runners have CPUs (net->parts): each
 * process's part becomes its home (runners.c, "Learning a placement"). */
void kpni_place_live(kpn_net *net)
{
    kpn_proc *p;

    partition(net, net->parts);
    for (p = net->procs; p != NULL; p = p->next) {
        p->home = (unsigned char)p->seen;
        p->seen = 0;
    }
}

#elif KPN_THREADS

void kpni_place_live(kpn_net *net)
{
    (void)net; /* never asked for: the compact layout keeps no lists */
}

#endif

kpn_status kpn_place(kpn_net *net, unsigned runners, unsigned *home, size_t n)
{
    size_t i;

    if (!kpni_net_valid(net) || runners == 0 || runners > KPN_MAX_RUNNERS || home == NULL ||
        n < net->nprocs)
        return KPN_EINVAL;
    if (net->state != KPNI_NET_IDLE)
        return KPN_ESTATE;
#if KPN_THREADS && !KPN_COMPACT
    if (runners > 1 && net->nprocs != 0) {
        kpn_proc *p;

        partition(net, runners);
        for (i = 0, p = net->procs; p != NULL; p = p->next, ++i) {
            home[i] = (unsigned)p->seen;
            p->seen = 0;
        }
        return KPN_OK;
    }
#else
    if (runners > 1)
        return KPN_EINVAL; /* no runners without threads; no channel counts in the compact layout */
#endif
    for (i = 0; i < net->nprocs; ++i)
        home[i] = 0;
    return KPN_OK;
}
