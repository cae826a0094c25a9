/* SPDX-License-Identifier: MIT */
/* Cortex-M context set-up, and idling in WFI while a net waits for input. */

#include <stddef.h>
#include <stdint.h>

#include "port.h"

#if !defined(__ARM_ARCH_7M__) && !defined(__ARM_ARCH_7EM__) && !defined(__ARM_ARCH_6M__) && \
    !defined(__ARM_ARCH_8M_BASE__) && !defined(__ARM_ARCH_8M_MAIN__)
#error "port/cortex-m needs an M-profile target (-mcpu=cortex-m0/m0plus/m3/m4/m7/m23/m33)."
#endif

/* The saved stack pointer and the CONTROL value the context runs with
 * (switch_cortexm.S says why CONTROL); padded to 16 bytes so contexts
 * carved back to back stay aligned. */
struct kpn_port_ctx {
    uint32_t stack_pointer;
    uint32_t control;
    uint32_t unused[2];
};

/* The frame 'kpn_port_switch' pops for a context without FP state,
 * lowest address first; see the picture in switch_cortexm.S.  ARMv6-M
 * stages r8-r11 through r4-r7, so they come first there. */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
struct switch_frame {
    uint32_t r8, r9, r10, r11;
    uint32_t r3, r4, r5, r6, r7;
    uint32_t lr;
};
#else
struct switch_frame {
    uint32_t r3, r4, r5, r6, r7, r8, r9, r10, r11;
    uint32_t lr;
};
#endif

/* C99 has no static_assert: a negative array size fails the build. */
typedef char check_ctx_size[(sizeof(struct kpn_port_ctx) == 16) ? 1 : -1];
typedef char check_frame_size[(sizeof(struct switch_frame) == 40) ? 1 : -1];

#define CONTROL_SPSEL 0x2u /* thread mode runs on PSP */
#define CONTROL_FPCA 0x4u  /* live floating-point state */

/* Defined in switch_cortexm.S: moves r5 to r0 and calls r4. */
extern void kpni_port_cortexm_entry(void);

static uint32_t read_control(void)
{
    uint32_t v;
    __asm__ volatile("mrs %0, control" : "=r"(v));
    return v;
}

size_t kpn_port_ctx_size(void)
{
    return sizeof(struct kpn_port_ctx);
}

/*
 * The start-up frame takes the top 40 bytes of the stack:
 *
 *   stack + size  ->  +------------------------------+  (16-byte aligned)
 *                     | lr = kpni_port_cortexm_entry  |
 *                     | r4 = fn, r5 = arg, the rest 0 |
 *   saved sp      ->  +------------------------------+  stack + size - 40
 *
 * After the first switch pops it, sp is back at 'stack + size', so 'fn'
 * starts 16-byte aligned (AAPCS asks 8).  The context runs on PSP with
 * the privilege of the thread that built it and FPCA clear: its first
 * floating-point instruction gets FPSCR from FPDSCR, the default state
 * (round to nearest, no flush-to-zero, no default NaN, at reset).
 * Function pointers go through uintptr_t: exact on every ARM compiler,
 * and the Thumb bit comes with them.
 */
void kpn_port_init(kpn_port_ctx *ctx, void *stack, size_t size,
                   void (*fn)(void *), void *arg)
{
    struct switch_frame *frame =
        (struct switch_frame *)(void *)((unsigned char *)stack + size) - 1;

    frame->r3 = 0;
    frame->r4 = (uint32_t)(uintptr_t)fn;
    frame->r5 = (uint32_t)(uintptr_t)arg;
    frame->r6 = frame->r7 = frame->r8 = frame->r9 = frame->r10 = frame->r11 = 0;
    frame->lr = (uint32_t)(uintptr_t)kpni_port_cortexm_entry;

    ctx->stack_pointer = (uint32_t)(uintptr_t)frame;
    ctx->control = (read_control() & ~CONTROL_FPCA) | CONTROL_SPSEL;
    ctx->unused[0] = ctx->unused[1] = 0;
}

/* ------------------------------------------------------------------ */
/* Idling: the flag an interrupt's kpn_offer raises, and WFI until then. */

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

/*
 * The classic race-free sleep: with interrupts masked (PRIMASK), test
 * the flag and execute WFI only if it is clear.  An interrupt that
 * arrives after the mask is pending, and a pending interrupt ends WFI
 * even while masked; restoring PRIMASK then runs its handler at once.
 * An interrupt that arrived before the mask has set the flag.  Either
 * way no wake-up is lost.  PRIMASK is restored, not cleared: the wait
 * leaves the caller's mask as it found it.  (A kpn_run called with the
 * offering interrupts masked gets no input: docs/porting.md.)
 */
void kpn_port_idle_wait(kpn_port_idle *idle)
{
    uint32_t primask;

    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask) :: "memory");
    if (idle->woken == 0)
        __asm__ volatile("dsb\n\twfi" ::: "memory");
    idle->woken = 0;
    __asm__ volatile("msr primask, %0\n\tisb" :: "r"(primask) : "memory");
}

/* From an interrupt handler (or thread code): a word store. */
void kpn_port_idle_wake(kpn_port_idle *idle)
{
    idle->woken = 1;
    __asm__ volatile("dsb\n\tsev" ::: "memory");
}

