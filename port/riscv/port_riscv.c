/* SPDX-License-Identifier: MIT */
/* RISC-V context set-up (RV32, RV64, with or without F/D), and idling in WFI while a net waits for input. */

#include <stddef.h>
#include <stdint.h>

#include "port.h"

#if !defined(__riscv) || !defined(__riscv_xlen)
#error "port/riscv needs a RISC-V target (-march=rv32.../rv64...)."
#endif
#if defined(__riscv_32e) || defined(__riscv_abi_rve)
#error "port/riscv does not support RV32E (ilp32e)."
#endif

/* The saved sp.  The core rounds the carve up to 16 bytes (kpn_int.h,
 * KPNI_CTX_ROOM), so a word is all a context costs. */
struct kpn_port_ctx {
    void *stack_pointer;
};

/* The frame 'kpn_port_switch' stores, lowest address first; see the
 * picture in switch_riscv.S, which this must match field for field. */
#if defined(__riscv_flen)
#if __riscv_flen == 64
typedef uint64_t fp_reg;
#else
typedef uint32_t fp_reg;
#endif
#endif

struct switch_frame {
#if defined(__riscv_flen)
    fp_reg fs[12];
    uint32_t fcsr;
#if __riscv_xlen == 64
    uint32_t fcsr_pad;
#endif
#endif
    uintptr_t ra;
    uintptr_t s[12];
};

/* The frame is padded to 16 bytes above 'struct switch_frame'. */
#define FRAME_BYTES ((sizeof(struct switch_frame) + 15u) / 16u * 16u)

/* C99 has no static_assert: a negative array size fails the build.
 * The sizes are switch_riscv.S's, before its padding to 16. */
#if !defined(__riscv_flen)
#define EXPECT_FRAME (13 * __riscv_xlen / 8)
#elif __riscv_xlen == 64
#define EXPECT_FRAME (12 * __riscv_flen / 8 + 8 + 13 * 8)
#else
#define EXPECT_FRAME (12 * __riscv_flen / 8 + 4 + 13 * 4)
#endif
typedef char check_ctx_size[(sizeof(struct kpn_port_ctx) == sizeof(void *)) ? 1 : -1];
typedef char check_frame_size[(sizeof(struct switch_frame) == EXPECT_FRAME) ? 1 : -1];

/* Defined in switch_riscv.S: moves s2 to a0 and calls s1, for ever. */
extern void kpni_port_riscv_entry(void);

size_t kpn_port_ctx_size(void)
{
    return sizeof(struct kpn_port_ctx);
}

/*
 * The start-up frame takes the top FRAME_BYTES of the stack (64 on
 * RV32 without FP, 208 on RV64 with D):
 *
 *   stack + size  ->  +-------------------------------+  (16-byte aligned)
 *                     | (pad)                         |
 *                     | s1 = fn, s2 = arg, other s 0  |
 *                     | ra = kpni_port_riscv_entry    |
 *                     | fcsr = 0, fs0-fs11 = 0        |  (with F or D)
 *   saved sp      ->  +-------------------------------+
 *
 * After the first switch pops it, sp is back at 'stack + size', 16-byte
 * aligned as the psABI wants at a call.  s0 = 0 ends frame-pointer
 * walks.  fcsr 0 is the default state: round to nearest, ties to even
 * (frm 0), no exception flags raised; RISC-V has no trap enables or
 * flush-to-zero to set.  A process starts with it whatever the thread
 * that called kpn_run had.
 */
void kpn_port_init(kpn_port_ctx *ctx, void *stack, size_t size,
                   void (*fn)(void *), void *arg)
{
    struct switch_frame *frame =
        (struct switch_frame *)(void *)((unsigned char *)stack + size - FRAME_BYTES);
    size_t i;

#if defined(__riscv_flen)
    for (i = 0; i < 12; ++i)
        frame->fs[i] = 0;
    frame->fcsr = 0;
#if __riscv_xlen == 64
    frame->fcsr_pad = 0;
#endif
#endif
    frame->ra = (uintptr_t)kpni_port_riscv_entry;
    for (i = 0; i < 12; ++i)
        frame->s[i] = 0;
    frame->s[1] = (uintptr_t)fn;
    frame->s[2] = (uintptr_t)arg;

    ctx->stack_pointer = frame;
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

#define MSTATUS_MIE 0x8u

/* 'csrrci %0, mstatus, 8' and 'csrs mstatus, %0', spelt as their
 * encodings (SYSTEM, funct3 7 and 2, CSR 0x300; the immediate 8 in the
 * rs1 field): since the 20191213 ISA spec, GCC 12 and later assemble CSR
 * instructions only with Zicsr named in -march, and a firmware's
 * -march=rv32imac should build the port as it builds the core. */
#define CSRRCI_MSTATUS_MIE ".insn i SYSTEM, 7, %0, x8, 0x300"
#define CSRS_MSTATUS ".insn i SYSTEM, 2, x0, %0, 0x300"

/*
 * The race-free sleep in machine mode: clear mstatus.MIE, test the flag,
 * and execute WFI only if it is clear.  WFI ends when an interrupt that
 * mie enables becomes pending, whatever mstatus.MIE says (privileged
 * spec, 3.3.3); setting MIE back then takes it.  An interrupt that came
 * before the mask has set the flag.  Either way no wake-up is lost.
 * MIE is restored, not set: the wait leaves the caller's mask as it
 * found it.  (A kpn_run called with MIE clear, or with the offering
 * interrupt's bit clear in mie, gets no input: docs/porting.md.)
 * Machine mode only: in S-mode the bit is sstatus.SIE, and WFI may trap
 * (mstatus.TW).
 */
void kpn_port_idle_wait(kpn_port_idle *idle)
{
    uintptr_t mstatus;

    __asm__ volatile(CSRRCI_MSTATUS_MIE : "=r"(mstatus) :: "memory");
    if (idle->woken == 0)
        __asm__ volatile("wfi" ::: "memory");
    idle->woken = 0;
    __asm__ volatile(CSRS_MSTATUS : : "r"(mstatus & MSTATUS_MIE) : "memory");
}

/* From an interrupt handler (or thread code): a word store. */
void kpn_port_idle_wake(kpn_port_idle *idle)
{
    idle->woken = 1;
}
