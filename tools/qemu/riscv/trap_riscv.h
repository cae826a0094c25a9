/* SPDX-License-Identifier: MIT */
/* The frame the RISC-V trap entry (examples/firmware/riscv/crt0.S) stores on the interrupted stack, for the tests. */
#ifndef KT_TRAP_RISCV_H
#define KT_TRAP_RISCV_H

/*
 * RISC-V stacks nothing in hardware on a trap: the entry code decides.
 * examples/firmware/riscv/crt0.S, which the tests run on, does what
 * Cortex-M's hardware and FreeRTOS's RISC-V port do: it stores the
 * caller-saved registers on the stack it interrupted (a process's, when
 * one runs) and then runs the C handler on a stack of its own, so that
 * only this frame lands on a process's stack (its FRAME, which
 * KT_TRAP_FRAME below must equal):
 *
 *   ra, t0-t6, a0-a7                16 x XLEN/8
 *   ft0-ft11, fa0-fa7, fcsr         20 x FLEN/8 + a register's slot,
 *                                   where the target has F or D
 *   padded to 16 bytes
 *
 * RV32: 64 bytes, 160 with F, 240 with D; RV64: 128, 224 with F,
 * 304 with D.
 */
#if __riscv_xlen == 64
#define KT_TRAP_X 8
#else
#define KT_TRAP_X 4
#endif
#if defined(__riscv_flen)
#define KT_TRAP_F (__riscv_flen / 8)
#define KT_TRAP_FP_BASE (16 * KT_TRAP_X)
#define KT_TRAP_FCSR (KT_TRAP_FP_BASE + 20 * KT_TRAP_F)
#define KT_TRAP_USED (KT_TRAP_FCSR + KT_TRAP_X)
#else
#define KT_TRAP_USED (16 * KT_TRAP_X)
#endif
#define KT_TRAP_FRAME ((KT_TRAP_USED + 15) / 16 * 16)

#endif /* KT_TRAP_RISCV_H */
