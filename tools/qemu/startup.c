/* SPDX-License-Identifier: MIT */
/* Start-up for the QEMU test firmware: vector table, reset (data, bss, FPU), faults reported through semihosting. */
#include <stdint.h>

#include "exc_frame.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
extern int main(void);

void kt_print(const char *s);
void kt_print_uint(uint64_t v);
void kt_exit(int failed);

#define CPACR (*(volatile uint32_t *)0xE000ED88u)
#define CFSR (*(volatile uint32_t *)0xE000ED28u)

void reset_handler(void)
{
    uint32_t *src = __data_load, *dst;

    for (dst = __data_start; dst < __data_end; )
        *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end; )
        *dst++ = 0;
#if defined(__ARM_FP)
    CPACR |= 0xFu << 20; /* CP10 and CP11: full access to the FPU */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    kt_exit(main());
}

/* A fault is a failed run: say which and where, and exit non-zero. */
static void fault(const char *what, const uint32_t *frame)
{
    kt_print("FAULT: ");
    kt_print(what);
    kt_print(" pc=");
    kt_print_uint(frame[6]);
    kt_print(" lr=");
    kt_print_uint(frame[5]);
    kt_print(" cfsr=");
    kt_print_uint(CFSR);
    kt_print("\n0 passed, 1 failed\n");
    kt_exit(1);
}

/* Pass the exception frame on; 'bl' reaches where ARMv6-M's 'b' may
 * not, and the handler never returns. */
#define FAULT_HANDLER(name, text)                                          \
    void name##_c(const uint32_t *frame) { fault(text, frame); }          \
    __attribute__((naked)) void name(void)                                 \
    {                                                                      \
        __asm__ volatile(KT_FRAME_TO_R0 "bl " #name "_c\n");              \
    }

FAULT_HANDLER(hard_fault_handler, "hard fault")
FAULT_HANDLER(mem_fault_handler, "memory management fault")
FAULT_HANDLER(bus_fault_handler, "bus fault")
FAULT_HANDLER(usage_fault_handler, "usage fault")

static void unexpected_handler(void)
{
    kt_print("FAULT: unexpected interrupt\n0 passed, 1 failed\n");
    kt_exit(1);
}

/* The test sets its own; by default a SysTick is unexpected. */
void systick_handler(void) __attribute__((weak, alias("unexpected_handler")));

__attribute__((section(".vectors"), used))
static void (*const vectors[16 + 32])(void) = {
    (void (*)(void))(uintptr_t)__stack_top,
    reset_handler,
    unexpected_handler,       /* NMI */
    hard_fault_handler,
    mem_fault_handler,
    bus_fault_handler,
    usage_fault_handler,
    0, 0, 0, 0,
    unexpected_handler,       /* SVCall */
    unexpected_handler,       /* debug monitor */
    0,
    unexpected_handler,       /* PendSV */
    systick_handler,
    [16 ... 47] = unexpected_handler,
};
