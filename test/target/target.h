/* SPDX-License-Identifier: MIT */
/* What the target tests need from the core they run on (Cortex-M, RISC-V): FP control state, a periodic interrupt, its frame, where it landed. */
#ifndef KPN_TEST_TARGET_H
#define KPN_TEST_TARGET_H

#include <stdint.h>

#include "port.h"

/*
 * For each target:
 *   KT_FP                     1 where processes have FP control state
 *   kt_fp_control_read/write  that state (the bits a process may set)
 *   KT_FP_MODE_A, _B, _HOST   three different settings of it
 *   KT_FP_LAZY                1 where a context without FP state is kept
 *                             apart (Cortex-M's CONTROL.FPCA)
 *   kt_tick_start/stop        a periodic interrupt, every KT_TICK_PERIOD
 *   KT_TICK_ISR(handler)      runs 'void handler(uintptr_t pc)' at each,
 *                             with the address the interrupt returns to
 *   KT_IRQ_FRAME              bytes that interrupt leaves on the stack it
 *                             lands on (a process's, when one runs)
 */

/* Loads every callee-saved register with a pattern from 'seed', calls
 * fn(arg), and returns a mask of the registers fn did not give back:
 * bit i for the i-th integer register, bit 16 + i for the i-th FP
 * register (tools/qemu/callee_saved_arm.S, riscv/callee_saved_riscv.S). */
uintptr_t kt_callee_saved_check(void (*fn)(void *), void *arg, uintptr_t seed);

#if defined(__riscv)
/* ------------------------------------------------------------------ */
/* RISC-V: fcsr, the CLINT's machine timer (tools/qemu/riscv/). */
#include "trap_riscv.h"

/* fcsr: frm (bits 7:5) and the accrued flags (4:0), all the process's. */
#define KT_FCSR_RTZ (1u << 5)
#define KT_FCSR_RDN (2u << 5)
#define KT_FCSR_RUP (3u << 5)
#define KT_FCSR_NX 0x01u
#define KT_FCSR_DZ 0x08u

#if defined(__riscv_flen)
#define KT_FP 1
static inline uint32_t kt_fp_control_read(void)
{
    uint32_t v;
    __asm__ volatile("frcsr %0" : "=r"(v));
    return v & 0xffu;
}

static inline void kt_fp_control_write(uint32_t v)
{
    __asm__ volatile("fscsr %0" :: "r"(v) : "memory");
}
#define KT_FP_MODE_A (KT_FCSR_RTZ | KT_FCSR_DZ)
#define KT_FP_MODE_B (KT_FCSR_RUP | KT_FCSR_NX)
#define KT_FP_MODE_HOST KT_FCSR_RDN
#endif
#define KT_FP_LAZY 0

/* mtime ticks (10 MHz on QEMU virt): 4 ms */
#define KT_TICK_PERIOD 40000u
void kt_tick_start(uint32_t period);
void kt_tick_stop(void);

/* The trap entry's handler (tools/qemu/riscv/startup_riscv.c) calls
 * kt_tick_handler at each tick. */
#define KT_ISR_WITH_PC(handler)                                            \
    void handler(uintptr_t pc);                                            \
    void kt_tick_handler(uintptr_t pc);                                    \
    void kt_tick_handler(uintptr_t pc) { handler(pc); }

#define KT_IRQ_FRAME KT_TRAP_FRAME

#else
/* ------------------------------------------------------------------ */
/* Cortex-M: FPSCR, CONTROL, SysTick. */
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
#define KT_FP 1
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

static inline uint32_t kt_fp_control_read(void)
{
    return kt_fpscr_read() & KT_FPSCR_CONTROL;
}

static inline void kt_fp_control_write(uint32_t v)
{
    kt_fpscr_write(v);
}
#define KT_FP_MODE_A (KT_FPSCR_RM_ZERO | KT_FPSCR_FZ)
#define KT_FP_MODE_B (KT_FPSCR_RM_PLUS | KT_FPSCR_DN)
#define KT_FP_MODE_HOST KT_FPSCR_RM_MINUS
#endif
#define KT_FP_LAZY 1

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
#define KT_TICK_PERIOD 100000u

static inline void kt_tick_start(uint32_t cycles)
{
    KT_SYST_RVR = cycles - 1u;
    KT_SYST_CVR = 0;
    KT_SYST_CSR = 7u; /* enable, interrupt, processor clock */
}

static inline void kt_tick_stop(void)
{
    KT_SYST_CSR = 0;
}

/* The tests' SysTick handler gets the address the interrupt returns to:
 * the vector is a naked stub that finds the exception frame (MSP or PSP,
 * EXC_RETURN bit 2) and passes its stacked PC. */
#define KT_ISR_WITH_PC(handler)                                            \
    void handler(uintptr_t pc);                                            \
    void systick_handler_pc(const uint32_t *frame) { handler(frame[6]); }  \
    __attribute__((naked)) void systick_handler(void)                      \
    {                                                                      \
        __asm__ volatile(KT_FRAME_TO_R0                                    \
                         "push {r0, lr}\n\t"                               \
                         "bl systick_handler_pc\n\t"                       \
                         "pop {r0, pc}\n");                                \
    }

/* An exception stacks 8 words, 26 with live FP state (and alignment). */
#if defined(__ARM_FP)
#define KT_IRQ_FRAME 104
#else
#define KT_IRQ_FRAME 32
#endif
#endif

#ifndef KT_FP
#define KT_FP 0
#endif

#endif /* KPN_TEST_TARGET_H */
