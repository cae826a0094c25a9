/* SPDX-License-Identifier: MIT */
/* Console output and exit through ARM semihosting (QEMU, or a debugger); on a board, write to a UART instead. */
#include <stdint.h>

#include "board.h"

static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void console_write(const char *s)
{
    semihost(0x04, s); /* SYS_WRITE0 */
}

void console_exit(int code)
{
    /* SYS_EXIT: "application exit" (0x20026) or "run-time error" (0x20023) */
    semihost(0x18, (const void *)(uintptr_t)(code == 0 ? 0x20026 : 0x20023));
    for (;;)
        ;
}
