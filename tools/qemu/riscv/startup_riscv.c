/* SPDX-License-Identifier: MIT */
/* The RISC-V test firmware's board: the machine timer on QEMU virt's CLINT, traps reported through semihosting. */
#include <stdint.h>

#include "clint.h" /* examples/firmware/riscv/ */

void kt_print(const char *s);
void kt_print_uint(uint64_t v);
void kt_exit(int failed);
void console_exit(int code);
void trap_handler(uintptr_t mcause, uintptr_t mepc, const uintptr_t *frame);
void kt_tick_start(uint32_t period);
void kt_tick_stop(void);

/* The start-up and the trap entry are examples/firmware/riscv/crt0.S,
 * the firmware example's, so that the entry whose frame the port's
 * stack minimum counts is the one these tests run on.  It calls main
 * (the runner's) and then console_exit with what main returned. */
void console_exit(int code)
{
    kt_exit(code);
}

static uint64_t tick_period;

/* A periodic machine-timer interrupt every 'period' mtime ticks. */
void kt_tick_start(uint32_t period)
{
    tick_period = period;
    mtimecmp_set(mtime() + period);
    __asm__ volatile("csrs mie, %0\n\tcsrs mstatus, %1" :: "r"(MIE_MTIE), "r"(MSTATUS_MIE) : "memory");
}

void kt_tick_stop(void)
{
    __asm__ volatile("csrc mie, %0" :: "r"(MIE_MTIE) : "memory");
    mtimecmp_set(UINT64_MAX);
}

static void unexpected_tick(uintptr_t pc)
{
    (void)pc;
    kt_print("FAULT: unexpected timer interrupt\n0 passed, 1 failed\n");
    kt_exit(1);
}

/* The test sets its own (target.h, KT_TICK_ISR). */
void kt_tick_handler(uintptr_t pc) __attribute__((weak, alias("unexpected_tick")));

/* Every trap, on the handlers' stack: the timer's interrupt is passed on
 * with the address it will return to; anything else fails the run. */
void trap_handler(uintptr_t mcause, uintptr_t mepc, const uintptr_t *frame)
{
    uintptr_t mtval;

    if (mcause == (CAUSE_INTERRUPT | CAUSE_MACHINE_TIMER)) {
        mtimecmp_set(mtime() + tick_period);
        kt_tick_handler(mepc);
        return;
    }
    __asm__ volatile("csrr %0, mtval" : "=r"(mtval));
    kt_print(mcause & CAUSE_INTERRUPT ? "FAULT: unexpected interrupt" : "FAULT: exception");
    kt_print(" mcause=");
    kt_print_uint(mcause & ~CAUSE_INTERRUPT);
    kt_print(" mepc=");
    kt_print_uint(mepc);
    kt_print(" mtval=");
    kt_print_uint(mtval);
    kt_print(" ra=");
    kt_print_uint(frame[0]);
    kt_print("\n0 passed, 1 failed\n");
    kt_exit(1);
}
