/* SPDX-License-Identifier: MIT */
/* Start-up for the RISC-V test firmware: data and bss, the machine timer on QEMU virt's CLINT, traps reported through semihosting. */
#include <stdint.h>

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern int main(void);

void kt_print(const char *s);
void kt_print_uint(uint64_t v);
void kt_exit(int failed);
void kt_start_c(void);
void kt_trap(uintptr_t mcause, uintptr_t mepc, const uintptr_t *frame);
void kt_tick_start(uint32_t period);
void kt_tick_stop(void);

/* Called by crt0_riscv.S on __stack_top.  QEMU loads .data where it
 * runs; the copy is for a layout that loads it elsewhere. */
void kt_start_c(void)
{
    uint32_t *src = __data_load, *dst;

    if (src != __data_start)
        for (dst = __data_start; dst < __data_end; )
            *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end; )
        *dst++ = 0;
    kt_exit(main());
}

/* QEMU virt's CLINT, hart 0: mtime counts at 10 MHz. */
#define CLINT_MTIMECMP 0x2004000u
#define CLINT_MTIME 0x200BFF8u
#define MIE_MTIE (1u << 7)
#define MSTATUS_MIE 0x8u
#define CAUSE_INTERRUPT ((uintptr_t)1 << (__riscv_xlen - 1))
#define CAUSE_MACHINE_TIMER 7u

static uint64_t tick_period;

static uint64_t mtime(void)
{
#if __riscv_xlen == 64
    return *(volatile uint64_t *)CLINT_MTIME;
#else
    volatile uint32_t *t = (volatile uint32_t *)CLINT_MTIME;
    uint32_t hi, lo;
    do {
        hi = t[1];
        lo = t[0];
    } while (t[1] != hi);
    return (uint64_t)hi << 32 | lo;
#endif
}

static void mtimecmp_set(uint64_t when)
{
#if __riscv_xlen == 64
    *(volatile uint64_t *)CLINT_MTIMECMP = when;
#else
    /* never a compare value below both old and new on the way */
    volatile uint32_t *c = (volatile uint32_t *)CLINT_MTIMECMP;
    c[1] = 0xFFFFFFFFu;
    c[0] = (uint32_t)when;
    c[1] = (uint32_t)(when >> 32);
#endif
}

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
void kt_trap(uintptr_t mcause, uintptr_t mepc, const uintptr_t *frame)
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
