/* SPDX-License-Identifier: MIT */
/* Reset and trap entry for the RISC-V test firmware on QEMU's virt machine, in machine mode. */

#include "trap_riscv.h"

#if __riscv_xlen == 64
#define SREG sd
#define LREG ld
#else
#define SREG sw
#define LREG lw
#endif
#if defined(__riscv_flen) && __riscv_flen == 64
#define FSREG fsd
#define FLREG fld
#else
#define FSREG fsw
#define FLREG flw
#endif

#define MSTATUS_FS_INITIAL (1 << 13)

/* With -bios none, QEMU's reset code jumps to the start of RAM: the
 * linker script puts this section there.  Hart 0 only; others park. */
	.section .text.init, "ax", @progbits
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined ra
	csrr	t0, mhartid
	bnez	t0, 2f
	la	sp, __stack_top
	la	t0, kt_trap_entry
	csrw	mtvec, t0
	csrw	mie, zero
#if defined(__riscv_flen)
	/* mstatus.FS resets to Off, which makes every FP instruction trap */
	li	t0, MSTATUS_FS_INITIAL
	csrs	mstatus, t0
	fscsr	zero
#endif
	call	kt_start_c
2:	wfi
	j	2b
	.cfi_endproc
	.size	_start, . - _start

/*
 * Every trap: the caller-saved registers go on the interrupted stack
 * (trap_riscv.h), then the C handler runs on __irq_stack_top, called
 * as kt_trap(mcause, mepc, frame).  Traps do not nest: the hart clears
 * mstatus.MIE on entry and mret sets it back, and a fault in the
 * handler ends the run.  A fault in this entry itself (an sp gone wild,
 * as past an overflowed stack) traps here again for ever: the run ends
 * at the script's time limit, not with a report.
 */
	.text
	.globl	kt_trap_entry
	.type	kt_trap_entry, @function
	.p2align 2
kt_trap_entry:
	addi	sp, sp, -KT_TRAP_FRAME
	SREG	ra, 0 * KT_TRAP_X(sp)
	SREG	t0, 1 * KT_TRAP_X(sp)
	SREG	t1, 2 * KT_TRAP_X(sp)
	SREG	t2, 3 * KT_TRAP_X(sp)
	SREG	t3, 4 * KT_TRAP_X(sp)
	SREG	t4, 5 * KT_TRAP_X(sp)
	SREG	t5, 6 * KT_TRAP_X(sp)
	SREG	t6, 7 * KT_TRAP_X(sp)
	SREG	a0, 8 * KT_TRAP_X(sp)
	SREG	a1, 9 * KT_TRAP_X(sp)
	SREG	a2, 10 * KT_TRAP_X(sp)
	SREG	a3, 11 * KT_TRAP_X(sp)
	SREG	a4, 12 * KT_TRAP_X(sp)
	SREG	a5, 13 * KT_TRAP_X(sp)
	SREG	a6, 14 * KT_TRAP_X(sp)
	SREG	a7, 15 * KT_TRAP_X(sp)
#if defined(__riscv_flen)
	FSREG	ft0, KT_TRAP_FP_BASE + 0 * KT_TRAP_F(sp)
	FSREG	ft1, KT_TRAP_FP_BASE + 1 * KT_TRAP_F(sp)
	FSREG	ft2, KT_TRAP_FP_BASE + 2 * KT_TRAP_F(sp)
	FSREG	ft3, KT_TRAP_FP_BASE + 3 * KT_TRAP_F(sp)
	FSREG	ft4, KT_TRAP_FP_BASE + 4 * KT_TRAP_F(sp)
	FSREG	ft5, KT_TRAP_FP_BASE + 5 * KT_TRAP_F(sp)
	FSREG	ft6, KT_TRAP_FP_BASE + 6 * KT_TRAP_F(sp)
	FSREG	ft7, KT_TRAP_FP_BASE + 7 * KT_TRAP_F(sp)
	FSREG	ft8, KT_TRAP_FP_BASE + 8 * KT_TRAP_F(sp)
	FSREG	ft9, KT_TRAP_FP_BASE + 9 * KT_TRAP_F(sp)
	FSREG	ft10, KT_TRAP_FP_BASE + 10 * KT_TRAP_F(sp)
	FSREG	ft11, KT_TRAP_FP_BASE + 11 * KT_TRAP_F(sp)
	FSREG	fa0, KT_TRAP_FP_BASE + 12 * KT_TRAP_F(sp)
	FSREG	fa1, KT_TRAP_FP_BASE + 13 * KT_TRAP_F(sp)
	FSREG	fa2, KT_TRAP_FP_BASE + 14 * KT_TRAP_F(sp)
	FSREG	fa3, KT_TRAP_FP_BASE + 15 * KT_TRAP_F(sp)
	FSREG	fa4, KT_TRAP_FP_BASE + 16 * KT_TRAP_F(sp)
	FSREG	fa5, KT_TRAP_FP_BASE + 17 * KT_TRAP_F(sp)
	FSREG	fa6, KT_TRAP_FP_BASE + 18 * KT_TRAP_F(sp)
	FSREG	fa7, KT_TRAP_FP_BASE + 19 * KT_TRAP_F(sp)
	frcsr	t0
	sw	t0, KT_TRAP_FCSR(sp)
#endif
	mv	a2, sp
	la	sp, __irq_stack_top
	addi	sp, sp, -16
	SREG	a2, 0(sp)
	csrr	a0, mcause
	csrr	a1, mepc
	call	kt_trap
	LREG	sp, 0(sp)
#if defined(__riscv_flen)
	lw	t0, KT_TRAP_FCSR(sp)
	fscsr	t0
	FLREG	ft0, KT_TRAP_FP_BASE + 0 * KT_TRAP_F(sp)
	FLREG	ft1, KT_TRAP_FP_BASE + 1 * KT_TRAP_F(sp)
	FLREG	ft2, KT_TRAP_FP_BASE + 2 * KT_TRAP_F(sp)
	FLREG	ft3, KT_TRAP_FP_BASE + 3 * KT_TRAP_F(sp)
	FLREG	ft4, KT_TRAP_FP_BASE + 4 * KT_TRAP_F(sp)
	FLREG	ft5, KT_TRAP_FP_BASE + 5 * KT_TRAP_F(sp)
	FLREG	ft6, KT_TRAP_FP_BASE + 6 * KT_TRAP_F(sp)
	FLREG	ft7, KT_TRAP_FP_BASE + 7 * KT_TRAP_F(sp)
	FLREG	ft8, KT_TRAP_FP_BASE + 8 * KT_TRAP_F(sp)
	FLREG	ft9, KT_TRAP_FP_BASE + 9 * KT_TRAP_F(sp)
	FLREG	ft10, KT_TRAP_FP_BASE + 10 * KT_TRAP_F(sp)
	FLREG	ft11, KT_TRAP_FP_BASE + 11 * KT_TRAP_F(sp)
	FLREG	fa0, KT_TRAP_FP_BASE + 12 * KT_TRAP_F(sp)
	FLREG	fa1, KT_TRAP_FP_BASE + 13 * KT_TRAP_F(sp)
	FLREG	fa2, KT_TRAP_FP_BASE + 14 * KT_TRAP_F(sp)
	FLREG	fa3, KT_TRAP_FP_BASE + 15 * KT_TRAP_F(sp)
	FLREG	fa4, KT_TRAP_FP_BASE + 16 * KT_TRAP_F(sp)
	FLREG	fa5, KT_TRAP_FP_BASE + 17 * KT_TRAP_F(sp)
	FLREG	fa6, KT_TRAP_FP_BASE + 18 * KT_TRAP_F(sp)
	FLREG	fa7, KT_TRAP_FP_BASE + 19 * KT_TRAP_F(sp)
#endif
	LREG	ra, 0 * KT_TRAP_X(sp)
	LREG	t0, 1 * KT_TRAP_X(sp)
	LREG	t1, 2 * KT_TRAP_X(sp)
	LREG	t2, 3 * KT_TRAP_X(sp)
	LREG	t3, 4 * KT_TRAP_X(sp)
	LREG	t4, 5 * KT_TRAP_X(sp)
	LREG	t5, 6 * KT_TRAP_X(sp)
	LREG	t6, 7 * KT_TRAP_X(sp)
	LREG	a0, 8 * KT_TRAP_X(sp)
	LREG	a1, 9 * KT_TRAP_X(sp)
	LREG	a2, 10 * KT_TRAP_X(sp)
	LREG	a3, 11 * KT_TRAP_X(sp)
	LREG	a4, 12 * KT_TRAP_X(sp)
	LREG	a5, 13 * KT_TRAP_X(sp)
	LREG	a6, 14 * KT_TRAP_X(sp)
	LREG	a7, 15 * KT_TRAP_X(sp)
	addi	sp, sp, KT_TRAP_FRAME
	mret
	.size	kt_trap_entry, . - kt_trap_entry

	.section .note.GNU-stack,"",@progbits
