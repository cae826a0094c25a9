/* SPDX-License-Identifier: MIT */
/* kpn_report: a plain-text account of a net, written into the caller's buffer only. */
#include "kpn_int.h"

#if KPN_REPORT

/* snprintf's contract without snprintf (the core has no libc): count
 * every byte, store those that fit, always leave room for the NUL. */
typedef struct report_out {
    char *buf;
    size_t len, n;
} report_out;

static void put(report_out *o, const char *s)
{
    for (; *s != '\0'; ++s, ++o->n)
        if (o->n + 1 < o->len)
            o->buf[o->n] = *s;
}

/* Decimal by subtracting powers of ten: a 32-bit target then needs no
 * 64-bit division routine from its compiler's runtime. */
static void put_uint(report_out *o, uint64_t v)
{
    static const uint64_t pow10[20] = {
        10000000000000000000u, 1000000000000000000u, 100000000000000000u,
        10000000000000000u, 1000000000000000u, 100000000000000u, 10000000000000u,
        1000000000000u, 100000000000u, 10000000000u, 1000000000u, 100000000u,
        10000000u, 1000000u, 100000u, 10000u, 1000u, 100u, 10u, 1u};
    char digits[21];
    int i, n = 0;

    for (i = 0; i < 20; ++i) {
        char d = '0';
        while (v >= pow10[i]) {
            v -= pow10[i];
            ++d;
        }
        if (d != '0' || n != 0 || i == 19)
            digits[n++] = d;
    }
    digits[n] = '\0';
    put(o, digits);
}

/* A copied name lies in the carved arena, and a copy that an overflow
 * left without its terminator is read no further than the carve.  A name
 * kept where the caller has it (KPN_NAME_COPY 0) may lie anywhere, above
 * the arena too: the record has passed kpni_proc_sane, whose seal of the
 * pointer an overflow that changed it would have to forge. */
static void put_name(report_out *o, const kpn_net *net, const kpn_proc *p)
{
    const char *s = p->name;
    const unsigned char *end = KPN_NAME_COPY ? net->arena.next : NULL;

    put(o, "\"");
    for (; (end == NULL || (const unsigned char *)s < end) && *s != '\0'; ++s, ++o->n)
        if (o->n + 1 < o->len)
            o->buf[o->n] = *s;
    put(o, "\"");
}

static const char *state_word(kpn_proc_state s)
{
    switch (s) {
    case KPN_PROC_READY: return "ready";
    case KPN_PROC_RUNNING: return "running";
    case KPN_PROC_BLOCKED_READ: return "blocked reading";
    case KPN_PROC_BLOCKED_WRITE: return "blocked writing";
    case KPN_PROC_EXITED: return "exited";
    case KPN_PROC_FAULTED: return "stack overflow";
    }
    return "?";
}

static void put_chan(report_out *o, const kpn_net *net, const kpn_chan *c)
{
    if (!kpni_chan_sane(net, c) || !kpni_proc_sane(net, c->writer) ||
        !kpni_proc_sane(net, c->reader)) {
        put(o, "a damaged channel");
        return;
    }
    put_name(o, net, c->writer);
    put(o, " -> ");
    put_name(o, net, c->reader);
    put(o, " (");
    put_uint(o, c->sent - KPNI_RECEIVED(c));
    put(o, "/");
    put_uint(o, c->cap);
    put(o, " messages of ");
    put_uint(o, c->msg_size);
    put(o, " bytes)");
}

/* Whether 'p' is blocked on a channel a report can follow. */
static int can_follow(const kpn_net *net, const kpn_proc *p)
{
    const kpn_chan *c = p->wait;

    return kpni_proc_blocked(p) && kpni_chan_sane(net, c) &&
           kpni_proc_sane(net, kpni_proc_waits_for(p));
}

/* The chain of waits from 'start': round a cycle back to it (all of it:
 * every member of a true deadlock is 'dead'), or on to a process that is
 * not blocked, or from outside into a true deadlock. */
static void put_chain(report_out *o, const kpn_net *net, const kpn_proc *start)
{
    const kpn_proc *p = start;
    size_t steps = 0;

    if (!kpni_proc_sane(net, start)) {
        put(o, "a damaged process");
        return;
    }
    put_name(o, net, p);
    while (can_follow(net, p) && steps++ <= net->nprocs) {
        p = kpni_proc_waits_for(p);
        put(o, " -> ");
        put_name(o, net, p);
        if (p == start)
            return;
        if (p->dead && !start->dead) {
            put(o, " (in a true deadlock)");
            return;
        }
    }
}

size_t kpn_report(const kpn_net *net, char *buf, size_t len)
{
    report_out o;
    const kpn_proc *p;
    kpni_counts st; /* not a kpn_stats: 384 bytes on a process-sized stack */
    uint64_t i;
    size_t shown = 0;

    o.buf = buf;
    o.len = buf != NULL ? len : 0;
    o.n = 0;
    if (!kpni_net_sane(net)) {
        if (kpni_net_valid(net))
            put(&o, "kpn: the net's own bookkeeping is damaged: a stack overflow reached it\n");
        if (o.len > 0)
            buf[o.n < o.len ? o.n : o.len - 1] = '\0';
        return o.n;
    }
    kpni_stats_count(net, &st);

    put(&o, "kpn: ");
    put_uint(&o, net->nprocs);
    put(&o, " processes (");
    put_uint(&o, st.exited);
    put(&o, " exited, ");
    put_uint(&o, st.blocked_read);
    put(&o, " blocked reading, ");
    put_uint(&o, st.blocked_write);
    put(&o, " blocked writing), ");
    put_uint(&o, net->nchans);
    put(&o, " channels, ");
    put_uint(&o, st.messages);
    put(&o, " messages, ");
    put_uint(&o, st.discarded);
    put(&o, " discarded\nresolver: ");
    put_uint(&o, st.detections);
    put(&o, " detections, ");
    put_uint(&o, net->resolutions);
    put(&o, " resolutions, ");
    put_uint(&o, net->true_deadlocks);
    put(&o, " true deadlocks; reserve ");
    put_uint(&o, net->pool.used);
    put(&o, " of ");
    put_uint(&o, net->pool.size);
    put(&o, " bytes in use, peak ");
    put_uint(&o, net->pool.peak);
    put(&o, "\n");

    /* After a stack overflow objects below the stack may be damaged:
     * report what can be trusted and say where the list stops. */
    for (p = net->procs; p != NULL; p = p->next) {
        if (!kpni_proc_sane(net, p)) {
            put(&o, "process list damaged after ");
            put_uint(&o, shown);
            put(&o, " processes: a stack overflow wrote over the bookkeeping\n");
            break;
        }
        ++shown;
        if (p->state == KPN_PROC_EXITED)
            continue;
        put(&o, "process ");
        put_name(&o, net, p);
        put(&o, ": ");
        put(&o, state_word((kpn_proc_state)p->state));
        if (p->wait != NULL && kpni_proc_blocked(p)) {
            put(&o, " on ");
            put_chan(&o, net, p->wait);
        }
        if (p->dead)
            put(&o, ", in a true deadlock");
        put(&o, "\n");
    }

    for (i = 0; i < net->true_deadlocks && i < KPNI_DEADLOCK_RECORDS; ++i) {
        put(&o, "true deadlock: ");
        put_chain(&o, net, net->deadlocks[i]);
        put(&o, "\n");
    }
    if (net->true_deadlocks > KPNI_DEADLOCK_RECORDS) {
        put(&o, "... and ");
        put_uint(&o, net->true_deadlocks - KPNI_DEADLOCK_RECORDS);
        put(&o, " more true deadlocks\n");
    }
    if (net->fault != NULL) {
        put(&o, "stack overflow: process ");
        if (kpni_proc_sane(net, net->fault)) {
            put_name(&o, net, net->fault);
            put(&o, " overran its ");
            put_uint(&o, net->fault->stack_size);
            put(&o, "-byte stack\n");
        } else {
            put(&o, "(its record is damaged)\n");
        }
    }
    if (net->pending_chan != NULL) {
        put(&o, "reserve exhausted: ");
        put_chain(&o, net, net->pending);
        put(&o, "\n  needs a free block of ");
        put_uint(&o, net->pending_bytes);
        put(&o, " bytes in the reserve to grow ");
        put_chan(&o, net, net->pending_chan);
        put(&o, "\n");
    }
    if (o.len > 0)
        buf[o.n < o.len ? o.n : o.len - 1] = '\0';
    return o.n;
}

#else /* !KPN_REPORT */

/* Built without the report's text (KPN_REPORT 0): an empty account. */
size_t kpn_report(const kpn_net *net, char *buf, size_t len)
{
    (void)net;
    if (buf != NULL && len > 0)
        buf[0] = '\0';
    return 0;
}

#endif /* KPN_REPORT */
