/* SPDX-License-Identifier: MIT */
/* The portable fallback port: contexts on getcontext/makecontext/swapcontext. */

/* <ucontext.h> is XSI (and obsolescent since POSIX.1-2008, but still
 * everywhere); under -std=c99 the C library exposes it only when asked. */
#define _XOPEN_SOURCE 600

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "port.h"

/*
 * The ucontext_t must stay where getcontext put it: on glibc its
 * 'uc_mcontext.fpregs' points into the structure itself.  The core never
 * moves a context, so that holds.  'fn' and 'arg' stay here, for the
 * trampoline's every call of 'fn'.
 */
struct kpn_port_ctx {
    ucontext_t context;
    void (*fn)(void *);
    void *arg;
    pthread_t thread; /* the thread whose signal mask 'context' holds */
};

#define CTX_SIZE ((sizeof(struct kpn_port_ctx) + 15u) / 16u * 16u)

size_t kpn_port_ctx_size(void)
{
    return CTX_SIZE;
}

/*
 * makecontext passes only 'int' arguments, and a pointer does not fit in
 * one on LP64.  So the context's address is split into two 32-bit halves
 * here and put back together in 'trampoline'; 'fn' and 'arg' are read from
 * the context.  (Passing the context rather than splitting 'fn' itself
 * keeps every conversion between uintptr_t and an object pointer, the one
 * round trip C99 guarantees.)  On a 32-bit target the high half is 0.
 */
static void trampoline(int low, int high)
{
    uintptr_t address = ((uintptr_t)(unsigned int)high << 16 << 16)
                        | (uintptr_t)(unsigned int)low;
    struct kpn_port_ctx *ctx = (struct kpn_port_ctx *)address;

    /* 'uc_link' is NULL, which would end the thread if this returned:
     * a returning 'fn' is called again instead (port.h). */
    for (;;)
        ctx->fn(ctx->arg);
}

void kpn_port_init(kpn_port_ctx *ctx, void *stack, size_t size,
                   void (*fn)(void *), void *arg)
{
    uintptr_t address = (uintptr_t)(void *)ctx;

    /* getcontext only fills in a template for makecontext; it cannot fail
     * on a valid pointer, and kpn_port_init has no way to report it.  The
     * template carries the caller's signal mask and floating-point
     * control state, so 'fn' starts with those. */
    (void)getcontext(&ctx->context);
    ctx->context.uc_stack.ss_sp = stack;
    ctx->context.uc_stack.ss_size = size;
    ctx->context.uc_stack.ss_flags = 0;
    ctx->context.uc_link = NULL;
    ctx->fn = fn;
    ctx->arg = arg;
    ctx->thread = pthread_self();

    /* The cast to 'void (*)(void)' is the one makecontext's prototype
     * demands; the function is called with the two ints given here.  The
     * shift is done in two steps so it is defined when uintptr_t has only
     * 32 bits. */
    makecontext(&ctx->context, (void (*)(void))trampoline, 2,
                (int)(unsigned int)(address & 0xFFFFFFFFu),
                (int)(unsigned int)((address >> 16 >> 16) & 0xFFFFFFFFu));
}

/*
 * swapcontext installs the signal mask saved in 'to', but a mask belongs
 * to the thread, not to the process: a runner thread blocks every
 * asynchronous signal so that no handler runs on a process's small
 * stack (port/pthread/thread_pthread.c), and a process spawned on the
 * host thread would carry the host's open mask onto it.  So a context
 * resumed on another thread than the one its mask came from takes that
 * thread's mask first, as the assembly ports, which leave the mask
 * alone, do.  On one runner every context stays on the host thread and
 * nothing is read.
 */
void kpn_port_switch(kpn_port_ctx *from, kpn_port_ctx *to)
{
    /* 'from' runs on this thread.  A process's context knows which: it
     * was set below when the context was resumed, or by kpn_port_init.
     * A runner's own context, which kpn_port_init never made ('fn' NULL:
     * the core zeroes it), learns it here, once per quiet spell. */
    if (from->fn == NULL)
        from->thread = pthread_self();
    if (!pthread_equal(to->thread, from->thread)) {
        (void)pthread_sigmask(SIG_SETMASK, NULL, &to->context.uc_sigmask);
        to->thread = from->thread;
    }
    /* swapcontext fails only on a bad pointer; the core passes its own. */
    (void)swapcontext(&from->context, &to->context);
}
