/* SPDX-License-Identifier: MIT */
/* The Cortex-M4F board (QEMU mps2-an386): the vector table, reset (copy .data, clear .bss, mark the main stack, enable the FPU), SysTick as the tick, and a fault handler that stops. */
#include <stdint.h>

#include "board.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
extern int main(void);

#define MSP_MARK 0xA5A5A5A5u

/* The main stack is MSP: main, kpn_run and every handler.  Its peak is
 * found by the mark reset left below it. */
uint32_t stack_peak(void)
{
    const uint32_t *p = __bss_end;

    while (p < __stack_top && *p == MSP_MARK)
        ++p;
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

void reset_handler(void)
{
    uint32_t *src = __data_load, *dst, *sp;

    for (dst = __data_start; dst < __data_end; )
        *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end; )
        *dst++ = 0;
    /* mark the free RAM below this frame, for msp_peak */
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (dst = __bss_end; dst < sp - 16; )
        *dst++ = MSP_MARK;
#if defined(__ARM_FP)
    /* CP10/CP11 full access.  FPCCR keeps its reset value: automatic and
     * lazy state preservation on, which the kpn port relies on. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    console_exit(main());
}

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define TICK_CYCLES 250000u /* 10 ms at 25 MHz (mps2-an386) */

void board_tick_start(void)
{
    SYST_RVR = TICK_CYCLES - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* processor clock, interrupt, enable */
}

void board_tick_stop(void)
{
    SYST_CSR = 0;
}

/* The hardware stacks what the C code may clobber: a handler is a plain
 * function, and this one is a tail call. */
static void systick_handler(void)
{
    sensor_tick();
}

static void fault_handler(void)
{
    console_write("fault\n");
    console_exit(1);
}

/* kpn needs no SVC or PendSV: the port switches by plain calls. */
__attribute__((section(".vectors"), used))
static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top,
    reset_handler,
    fault_handler, /* NMI */
    fault_handler, /* hard fault */
    fault_handler, /* memory management */
    fault_handler, /* bus fault */
    fault_handler, /* usage fault */
    0, 0, 0, 0,
    fault_handler, /* SVCall */
    fault_handler, /* debug monitor */
    0,
    fault_handler, /* PendSV */
    systick_handler,
};
