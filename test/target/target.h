/* SPDX-License-Identifier: MIT */
/* What the target tests need from a Cortex-M: FPSCR, CONTROL, SysTick, an interrupt's view of where it landed. */
#ifndef KPN_TEST_TARGET_H
#define KPN_TEST_TARGET_H

#include <stdint.h>

#include "port.h"
#include "exc_frame.h" /* tools/qemu/ */

/* FPSCR's control bits (ARMv7-M B1.4.3): rounding mode, flush-to-zero,
 * default NaN, alternative half precision. */
#define KT_FPSCR_RM_PLUS  (1u << 22)
#define KT_FPSCR_RM_MINUS (2u << 22)
#define KT_FPSCR_RM_ZERO  (3u << 22)
#define KT_FPSCR_FZ       (1u << 24)
#define KT_FPSCR_DN       (1u << 25)
#define KT_FPSCR_CONTROL  (0xfu << 22)

#if defined(__ARM_FP)
static inline uint32_t kt_fpscr_read(void)
{
    uint32_t v;
    __asm__ volatile("vmrs %0, fpscr" : "=r"(v));
    return v;
}

static inline void kt_fpscr_write(uint32_t v)
{
    __asm__ volatile("vmsr fpscr, %0" :: "r"(v) : "memory");
}
#endif

static inline uint32_t kt_control_read(void)
{
    uint32_t v;
    __asm__ volatile("mrs %0, control" : "=r"(v));
    return v;
}

/* SysTick on the processor clock, interrupting every 'cycles'. */
#define KT_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define KT_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define KT_SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define KT_TICK_CYCLES 100000u

static inline void kt_systick_start(uint32_t cycles)
{
    KT_SYST_RVR = cycles - 1u;
    KT_SYST_CVR = 0;
    KT_SYST_CSR = 7u; /* enable, interrupt, processor clock */
}

static inline void kt_systick_stop(void)
{
    KT_SYST_CSR = 0;
}

/* The tests' SysTick handler gets the address the interrupt returns to:
 * the vector is a naked stub that finds the exception frame (MSP or PSP,
 * EXC_RETURN bit 2) and passes its stacked PC. */
#define KT_ISR_WITH_PC(vector, handler)                                    \
    void handler(uint32_t pc);                                             \
    void vector##_pc(const uint32_t *frame) { handler(frame[6]); }         \
    __attribute__((naked)) void vector(void)                               \
    {                                                                      \
        __asm__ volatile(KT_FRAME_TO_R0                                    \
                         "push {r0, lr}\n\t"                               \
                         "bl " #vector "_pc\n\t"                           \
                         "pop {r0, pc}\n");                                \
    }

#endif /* KPN_TEST_TARGET_H */
