/* SPDX-License-Identifier: MIT */
/* Counters and state totals for kpn_net_stats. */
#include "kpn_int.h"

/* Processes by state, messages and discards: what kpn_report needs too,
 * so it need not hold a whole kpn_stats on a small stack. */
void kpni_stats_count(const kpn_net *net, kpni_counts *out)
{
    const kpn_proc *p;
    const kpn_chan *c;
    unsigned i;

    kpni_memset(out, 0, sizeof *out);
    /* After a stack overflow an object may be damaged: count what can be
     * trusted, and stop a list where it cannot (kpni_proc_sane). */
    for (p = net->procs; kpni_proc_sane(net, p); p = p->next) {
        switch (p->state) {
        case KPN_PROC_EXITED: out->exited++; break;
        case KPN_PROC_BLOCKED_READ: out->blocked_read++; break;
        case KPN_PROC_BLOCKED_WRITE: out->blocked_write++; break;
        default: break;
        }
    }
    for (i = 0; i < net->nrunners; ++i) {
        out->messages += net->runners[i].messages;
        out->discarded += net->runners[i].drops;
        out->detections += net->runners[i].detections;
    }
    out->detections += net->detections;
    /* what was queued for a reader that exited is never received either */
    for (c = net->chans; kpni_chan_sane(net, c); c = c->next)
        if (c->reader->state == KPN_PROC_EXITED)
            out->discarded += c->sent - KPNI_RECEIVED(c);
}

kpn_status kpn_net_stats(const kpn_net *net, kpn_stats *out)
{
    kpni_counts counts;
    unsigned i;

    if (!kpni_net_sane(net) || out == NULL)
        return KPN_EINVAL; /* not a net, or one whose own fields are damaged */
    kpni_memset(out, 0, sizeof *out);
    kpni_stats_count(net, &counts);
    out->procs = net->nprocs;
    out->chans = net->nchans;
    out->procs_exited = counts.exited;
    out->procs_blocked_read = counts.blocked_read;
    out->procs_blocked_write = counts.blocked_write;
    out->messages = counts.messages;
    out->discarded = counts.discarded;
    for (i = 0; i < net->nrunners; ++i) {
        const kpni_runner *r = &net->runners[i];
        out->switches += r->switches;
        out->steals += r->steals;
        out->steal_attempts += r->steal_attempts;
        out->sleeps += r->sleeps;
        out->placements += r->placements;
        out->placements_dropped += r->dropped;
        out->runner_switches[i] = r->switches;
    }
    out->runners = net->nrunners;
    out->placement_runners = kpni_runners_placed(net);
    out->arena_size = (size_t)(net->arena.end - net->arena.base) + net->reserve_carved;
    out->arena_used = (size_t)(net->arena.next - net->arena.base) - net->reserve_grown;
    out->arena_free = (size_t)(net->arena.end - net->arena.next);
    out->detections = counts.detections;
    out->resolutions = net->resolutions;
    out->true_deadlocks = net->true_deadlocks;
    out->reserve_size = net->pool.size;
    out->reserve_used = net->pool.used;
    out->reserve_peak = net->pool.peak;
    return KPN_OK;
}
