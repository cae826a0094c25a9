/* SPDX-License-Identifier: MIT */
/* A port to start from: every function port.h asks for, with what it must do; copy to port/NAME/ and fill in. */

/*
 * Copy this file to port/NAME/port_NAME.c (and switch_NAME.S if the
 * switch is assembly), then replace each body.  docs/porting.md walks
 * through it; port/cortex-m/ and port/amd64/ are worked examples.
 * As it stands the file compiles on any target (check-embedded builds
 * it) and a switch traps: a port that forgets one fails loudly.
 */
#include <stddef.h>
#include <stdint.h>

#include "port.h"

/* The context: usually just the saved stack pointer, with the registers
 * on the suspended stack.  Padded to 16 bytes here, which is allowed,
 * not needed: the core rounds every carve up to 16 (docs/porting.md). */
struct kpn_port_ctx {
    void *stack_pointer;
    void *unused[16 / sizeof(void *) - 1];
};

typedef char check_ctx_size[(sizeof(struct kpn_port_ctx) % 16 == 0) ? 1 : -1];

size_t kpn_port_ctx_size(void)
{
    return sizeof(struct kpn_port_ctx);
}

/* Build, at the top of [stack, stack + size), the frame your switch pops,
 * so that the first switch into 'ctx' calls fn(arg) through an entry
 * thunk that calls it again each time it returns.  Define the initial
 * floating-point control state here (the ABI's default).  Write nothing
 * outside the stack and 'ctx'. */
void kpn_port_init(kpn_port_ctx *ctx, void *stack, size_t size,
                   void (*fn)(void *), void *arg)
{
    (void)fn;
    (void)arg;
    ctx->stack_pointer = (unsigned char *)stack + size;
}

/* Save every callee-saved register (and the FP control state) of the
 * running context on its stack, store its stack pointer in 'from', load
 * 'to''s, restore, return.  Normally assembly. */
void kpn_port_switch(kpn_port_ctx *from, kpn_port_ctx *to)
{
    (void)from;
    (void)to;
#if defined(__GNUC__) || defined(__clang__)
    __builtin_trap(); /* not written yet */
#endif
}

/* Idling for input channels: sleep until 'wake' (see port.h).  On a
 * microcontroller: mask interrupts, test the flag, WFI (or your core's
 * sleep), unmask.  This placeholder never sleeps: kpn_run then polls. */
struct kpn_port_idle {
    volatile uint32_t woken;
    uint32_t unused[3];
};

size_t kpn_port_idle_size(void)
{
    return sizeof(struct kpn_port_idle);
}

int kpn_port_idle_init(kpn_port_idle *idle)
{
    idle->woken = 0;
    return 0;
}

void kpn_port_idle_wait(kpn_port_idle *idle)
{
    idle->woken = 0;
}

void kpn_port_idle_wake(kpn_port_idle *idle)
{
    idle->woken = 1;
}

/* A port for a system with threads (several runners) also provides
 * port.h's thread group; a single-core firmware builds the core with
 * KPN_THREADS 0 (the default off Unix) and leaves it out. */
