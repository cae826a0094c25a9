/* SPDX-License-Identifier: MIT */
/* QEMU virt's CLINT, hart 0: the machine timer, and the trap causes and CSR bits a tick needs. */
#ifndef CLINT_H
#define CLINT_H

#include <stdint.h>

/* mtime counts at 10 MHz on QEMU virt; a part's own CLINT (or ACLINT)
 * has its addresses and clock in its manual. */
#define CLINT_MTIMECMP 0x2004000u
#define CLINT_MTIME 0x200BFF8u
#define MIE_MTIE (1u << 7)
#define MSTATUS_MIE (1u << 3)
#define CAUSE_INTERRUPT ((uintptr_t)1 << (__riscv_xlen - 1))
#define CAUSE_MACHINE_TIMER 7u

static inline uint64_t mtime(void)
{
#if __riscv_xlen == 64
    return *(volatile uint64_t *)CLINT_MTIME;
#else
    /* two halves: read again if the high one moved in between */
    volatile uint32_t *t = (volatile uint32_t *)CLINT_MTIME;
    uint32_t hi, lo;
    do {
        hi = t[1];
        lo = t[0];
    } while (t[1] != hi);
    return (uint64_t)hi << 32 | lo;
#endif
}

static inline void mtimecmp_set(uint64_t when)
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

#endif /* CLINT_H */
