/* SPDX-License-Identifier: MIT */
/* The RISC-V board (QEMU virt, machine mode): the CLINT's machine timer as the tick, the console through semihosting, the main stack's peak, the trap handler. */
#include <stdint.h>

#include "board.h"
#include "clint.h"

void trap_handler(uintptr_t mcause, uintptr_t mepc, const uintptr_t *frame); /* crt0.S */

/* RISC-V semihosting: operation in a0, argument in a1, and the ebreak
 * between two hints that tells the debugger it is a semihosting call.
 * The three must be uncompressed and on one page: a function of its
 * own, 16 bytes in a 16-aligned section, which linker relaxation cannot
 * shift inside (an aligned sequence in inline asm can be). */
__asm__(".pushsection .text.semihost_call, \"ax\", @progbits\n"
        ".option push\n"
        ".option norvc\n"
        ".balign 16\n"
        ".type semihost_call, @function\n"
        "semihost_call:\n"
        "    slli x0, x0, 0x1f\n"
        "    ebreak\n"
        "    srai x0, x0, 7\n"
        "    ret\n"
        ".size semihost_call, . - semihost_call\n"
        ".option pop\n"
        ".popsection");
long semihost_call(long op, const void *arg);

void console_write(const char *s)
{
    semihost_call(0x04, s); /* SYS_WRITE0 */
}

/* SYS_EXIT: "application exit" (0x20026) or "run-time error" (0x20023).
 * The 32-bit call takes the reason itself; the 64-bit one a block of
 * reason and exit status. */
void console_exit(int code)
{
    uintptr_t reason = code == 0 ? 0x20026u : 0x20023u;
#if __riscv_xlen == 64
    static uintptr_t block[2];

    block[0] = reason;
    block[1] = (uintptr_t)code;
    semihost_call(0x18, block);
#else
    semihost_call(0x18, (const void *)reason);
#endif
    for (;;)
        ;
}

/* The main stack runs main and kpn_run, and takes the trap frames of
 * interrupts that land on it; the handlers run on a stack of their own
 * (link.ld).  Its peak is found by the mark crt0.S left on all of it. */
extern uint32_t __stack_limit[], __stack_top[];

uint32_t stack_peak(void)
{
    const uint32_t *p = __stack_limit;

    while (p < __stack_top && *p == 0xA5A5A5A5u)
        ++p;
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

#define TICK_PERIOD 100000u /* mtime ticks: 10 ms */

/* kpn_run must be called with mstatus.MIE set and the timer's bit set
 * in mie: with MIE clear the handler never runs, and with MTIE clear the
 * port's WFI sleeps through the tick (docs/porting.md). */
void board_tick_start(void)
{
    mtimecmp_set(mtime() + TICK_PERIOD);
    __asm__ volatile("csrs mie, %0\n\tcsrs mstatus, %1" :: "r"(MIE_MTIE), "r"(MSTATUS_MIE) : "memory");
}

void board_tick_stop(void)
{
    __asm__ volatile("csrc mie, %0" :: "r"(MIE_MTIE) : "memory");
    mtimecmp_set(UINT64_MAX);
}

static void console_hex(uintptr_t v)
{
    char buf[2 + 2 * sizeof v + 1];
    int i = (int)sizeof buf - 1;

    buf[i] = '\0';
    do {
        buf[--i] = "0123456789abcdef"[v & 0xFu];
        v >>= 4;
    } while (v != 0);
    buf[--i] = 'x';
    buf[--i] = '0';
    console_write(&buf[i]);
}

/* Every trap, on the handlers' stack.  The timer's next tick is set
 * before sensor_tick runs, so that board_tick_stop there has the last
 * word.  Anything else is a fault: report it and end the run. */
void trap_handler(uintptr_t mcause, uintptr_t mepc, const uintptr_t *frame)
{
    uintptr_t mtval;

    (void)frame; /* what the interrupted code had in ra, t0-t6, a0-a7 */
    if (mcause == (CAUSE_INTERRUPT | CAUSE_MACHINE_TIMER)) {
        mtimecmp_set(mtime() + TICK_PERIOD);
        sensor_tick();
        return;
    }
    __asm__ volatile("csrr %0, mtval" : "=r"(mtval));
    console_write("fault: mcause ");
    console_hex(mcause);
    console_write(" mepc ");
    console_hex(mepc);
    console_write(" mtval ");
    console_hex(mtval);
    console_write("\n");
    console_exit(1);
}
