/* SPDX-License-Identifier: MIT */
/* Input channels: data handed to a running net by an interrupt handler or another thread. */
#include "kpn_int.h"

/*
 * An input channel is an ordinary channel whose writer is the net's
 * 'outside' process: a kpn_proc that never runs, is never blocked and is
 * on no list, so
 *
 *  - kpn_send and kpn_close on an input fail with KPN_EPERM (nobody runs
 *    on the outside's stack, which is empty);
 *  - a process blocked reading an input waits for the outside, which is
 *    not blocked: its wait-for chain ends there, no cycle runs through
 *    it, and the resolver never grows an input channel;
 *  - kpn_report names the writer "input".
 *
 * One producer (kpn_offer, in a handler or a thread) and one consumer
 * (the reader, in the net) share the ring as a single-producer,
 * single-consumer queue: the producer moves only 'wpos' and 'sent', the
 * consumer only 'rpos' and 'received', and each publishes its counter
 * with release after touching the ring.  The producer cannot make the
 * reader ready (that would mean taking the run queues from a handler),
 * so it raises 'net->input_signal' and wakes the port's idle object; the
 * scheduler looks at the signal at every switch and at rest
 * (kpni_input_deliver, in sched.c) and makes blocked readers ready itself.
 *
 * Ordering: the producer stores 'sent' (or 'closed'), then (seq_cst
 * fence) the signal; the scheduler clears the signal, then (seq_cst
 * fence) reads 'sent'.  Whichever fence comes second, its side sees the
 * other's store (the scheduler the message, or the producer's signal
 * outlasting the clear), so no message waits while the net sleeps.
 */

kpn_status kpn_connect_input(kpn_net *net, kpn_chan **out, kpn_proc *reader,
                             size_t msg_size, size_t capacity)
{
    unsigned char *mark;
    size_t need, chan;
    kpn_status s;

    if (!kpni_net_valid(net) || out == NULL || msg_size == 0 || reader == NULL ||
        !kpni_proc_live(net, reader))
        return KPN_EINVAL;
    if (net->state != KPNI_NET_IDLE || reader->state == KPN_PROC_EXITED)
        return KPN_ESTATE;
    chan = kpn_size_chan(msg_size, capacity == 0 ? net->cfg.default_capacity : capacity);
    if (chan == 0)
        return KPN_EINVAL;
    /* The first input also carves the outside process and the idle
     * object: check that all of it fits before carving any. */
    need = chan;
    if (net->outside == NULL)
        need += kpni_align_up(sizeof(kpn_proc)) + kpni_align_up(kpn_port_idle_size());
    if (need < chan || need > (size_t)(net->arena.end - net->arena.next))
        return KPN_ENOMEM;

    mark = net->arena.next;
    if (net->outside == NULL) {
        kpn_proc *o = kpni_arena_carve(&net->arena, sizeof *o);
        kpn_port_idle *idle = kpni_arena_carve(&net->arena, kpn_port_idle_size());

        KPN_ASSERT(o != NULL && idle != NULL);
        if (kpn_port_idle_init(idle) != 0) {
            net->arena.next = mark; /* nothing stays carved */
            return KPN_ETHREAD;
        }
        kpni_memset(o, 0, sizeof *o);
        /* no magic: no API call accepts it as a process */
        o->net = net;
        o->state = KPN_PROC_RUNNING;
        o->runner = &net->runners[0];
        o->name = "input";
        /* an empty stack, [o, o): no caller is ever running it */
        o->stack_lo = (unsigned char *)o;
        net->outside = o;
        net->input_idle = idle;
    }
    s = kpni_chan_make(net, out, net->outside, reader, msg_size, capacity);
    KPN_ASSERT(s == KPN_OK); /* its size was checked above */
    (*out)->input = 1;
    kpni_chan_set_cross(*out, (*out)->cross); /* the reader's words on its own line */
    net->ninputs++;
    return KPN_OK;
}

/* Checks shared by kpn_offer and kpn_input_close. */
static kpn_status check_input(const kpn_chan *c)
{
    if (!kpni_chan_valid(c))
        return KPN_EINVAL;
    return c->input ? KPN_OK : KPN_EPERM;
}

/* After 'sent' or 'closed' is stored.  The first fence is the one the
 * ordering argument above needs: with the signal stored before it, the
 * scheduler's clear could land after the store and its read of 'sent'
 * still miss the message (C11 allows it; x86 and ARMv8 do not).  The
 * second keeps the signal ahead of the wake's own store, which on a bare
 * metal port is a plain word. */
static void signal_net(kpn_net *net)
{
    KPNI_SHARED_FENCE();
    KPNI_SHARED_STORE(&net->input_signal, 1u);
    KPNI_SHARED_FENCE();
    kpn_port_idle_wake(net->input_idle);
}

kpn_status kpn_offer(kpn_chan *c, const void *msg)
{
    kpn_status s = msg == NULL ? KPN_EINVAL : check_input(c); /* EINVAL before EPERM */
    size_t sent;

    if (s != KPN_OK)
        return s;
    if (KPNI_SHARED_LOAD(&c->closed))
        return KPN_ESTATE;
    if (KPNI_LOAD(&c->reader->state) == KPN_PROC_EXITED)
        return KPN_OK; /* nobody will ever read it: dropped, as kpn_send does */
    sent = c->sent; /* only the producer writes it */
    if (sent - KPNI_SHARED_LOAD(&c->received) >= c->cap) /* an input's: on its own line */
        return KPN_EFULL;
    kpni_memcpy(c->ring + c->wpos, msg, c->msg_size);
    c->wpos += c->msg_size;
    if (c->wpos == KPNI_WRING_BYTES(c))
        c->wpos = 0;
    KPNI_SHARED_STORE(&c->sent, sent + 1);
    signal_net(c->writer->net);
    return KPN_OK;
}

kpn_status kpn_input_close(kpn_chan *c)
{
    kpn_status s = check_input(c);

    if (s != KPN_OK)
        return s;
    if (KPNI_SHARED_LOAD(&c->closed))
        return KPN_ESTATE;
    KPNI_SHARED_STORE(&c->closed, 1);
    signal_net(c->writer->net);
    return KPN_OK;
}
