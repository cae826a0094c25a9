/* SPDX-License-Identifier: MIT */
/* A firmware to copy: a timer interrupt samples a "sensor" into an input channel, a filter process smooths it, an output process reports. */
#include "board.h"
#include "kpn.h"

/*
 *   timer ISR --kpn_offer--> [samples] --> filter --> [smoothed] --> report
 *
 * The interrupt never blocks: kpn_offer copies the sample or says
 * KPN_EFULL.  Between ticks nothing can run and kpn_run sleeps in WFI.
 * After SAMPLES ticks the ISR closes the input; the filter drains it and
 * returns, which closes its output; the report ends; kpn_run returns.
 */

#define SAMPLES 32

static void console_uint(uint32_t v)
{
    char buf[12];
    int i = 11;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    console_write(&buf[i]);
}

/* Memory: one static arena.  The library's figures for what the net
 * carves (run-time functions: main checks them against it) leave the rest
 * for channels the resolver may have to grow.  A process's stack is the
 * library's minimum, which differs by target (its port measured a
 * shallow process with an interrupt's frame on top), and 208 bytes more
 * for the report's console calls and room to spare: kpn_proc_stats_get
 * says how deep each went. */
#define STACK_EXTRA 208
static unsigned char arena[4096];
static kpn_chan *samples, *smoothed;

/* The filter: an exponential moving average, alpha = 1/4, in fixed point. */
static void filter(void *arg)
{
    int32_t x, avg = 0;
    int first = 1;
    (void)arg;
    while (kpn_recv(samples, &x) == KPN_OK) {
        avg = first ? x * 16 : avg + (x * 16 - avg) / 4;
        first = 0;
        x = avg / 16;
        kpn_send(smoothed, &x);
    }
}

static void report(void *arg)
{
    int32_t y;
    uint32_t n = 0;
    (void)arg;
    while (kpn_recv(smoothed, &y) == KPN_OK) {
        console_write("sample ");
        console_uint(n++);
        console_write(": ");
        console_uint((uint32_t)y);
        console_write("\n");
    }
}

/* Each tick, in the timer's interrupt: a sawtooth with noise stands in
 * for an ADC. */
static volatile uint32_t ticks, dropped;

void sensor_tick(void)
{
    int32_t x;

    if (ticks == SAMPLES) {
        kpn_input_close(samples);
        board_tick_stop();
        return;
    }
    x = (int32_t)(ticks % 8u) * 100 + (int32_t)((ticks * 7919u) % 13u);
    if (kpn_offer(samples, &x) == KPN_EFULL)
        dropped++;
    ticks++;
}

int main(void)
{
    kpn_net *net;
    kpn_proc *f, *r;
    kpn_status s;
    size_t stack = kpn_stack_min() + STACK_EXTRA;
    /* the net, two processes, the first input's own record, two channels */
    size_t need = kpn_size_net(NULL) + 2 * kpn_size_proc(stack, 6) + kpn_size_proc(0, 0) +
                  kpn_size_chan(sizeof(int32_t), 4) + kpn_size_chan(sizeof(int32_t), 2);

    console_write("arena: ");
    console_uint((uint32_t)need);
    console_write(" of ");
    console_uint((uint32_t)sizeof arena);
    console_write(" bytes carved at most\n");
    if (need > sizeof arena)
        return 1;
    if ((s = kpn_net_init(&net, arena, sizeof arena, NULL)) != KPN_OK ||
        (s = kpn_spawn(net, &f, "filter", filter, NULL, stack)) != KPN_OK ||
        (s = kpn_spawn(net, &r, "report", report, NULL, stack)) != KPN_OK ||
        (s = kpn_connect_input(net, &samples, f, sizeof(int32_t), 4)) != KPN_OK ||
        (s = kpn_connect(net, &smoothed, f, r, sizeof(int32_t), 2)) != KPN_OK) {
        console_write("setup failed: ");
        console_write(kpn_strerror(s));
        console_write("\n");
        return 1;
    }

    board_tick_start();
    s = kpn_run(net); /* returns after the ISR closes the input */
    console_write("kpn_run: ");
    console_write(kpn_strerror(s));
    console_write(", dropped ");
    console_uint(dropped);
    console_write(", main stack peak ");
    console_uint(stack_peak());
    console_write(" bytes\n");
    return s == KPN_OK && dropped == 0 ? 0 : 1;
}
