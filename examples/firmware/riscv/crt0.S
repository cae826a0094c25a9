/* SPDX-License-Identifier: MIT */
/* The RISC-V board's reset and trap entry (QEMU virt, machine mode): stack, .data and .bss, the FPU, and every trap passed to board.c's trap_handler. */

#if __riscv_xlen == 64
#define SREG sd
#define LREG ld
#define XLEN_BYTES 8
#else
#define SREG sw
#define LREG lw
#define XLEN_BYTES 4
#endif

/*
 * RISC-V stacks nothing in hardware on a trap: this entry stores the
 * caller-saved registers on the stack it interrupted (a process's, when
 * one runs), then runs the handler on a stack of its own, so that only
 * this frame lands on a process's stack.  port/riscv/port_config.h's
 * stack minimum counts this frame and no more:
 *
 *   ra, t0-t6, a0-a7              16 x XLEN/8
 *   ft0-ft11, fa0-fa7, fcsr       20 x FLEN/8 + a register's slot,
 *                                 where the target has F or D
 *   padded to 16 bytes
 *
 * RV32: 64 bytes, 160 with F, 240 with D; RV64: 128, 224 with F, 304 with D.
 *
 * Those are the caller-saved FP registers of the hard-float ABIs.  Under
 * a soft-float ABI on a core with F or D (-mabi=ilp32 or lp64 with
 * -march=...f...) every FP register is the caller's, fs0-fs11 too, and a
 * handler compiled so may use them unsaved: this entry would then lose
 * them for the code it interrupted.
 */
#if defined(__riscv_flen) && defined(__riscv_float_abi_soft)
#error "crt0.S: a soft-float ABI on a core with F or D: build with ilp32f/ilp32d or lp64f/lp64d, or store fs0-fs11 here as well"
#endif
#if defined(__riscv_flen)
#if __riscv_flen == 64
#define FSREG fsd
#define FLREG fld
#else
#define FSREG fsw
#define FLREG flw
#endif
#define FP_BYTES (__riscv_flen / 8)
#define FP_BASE (16 * XLEN_BYTES)
#define FCSR_AT (FP_BASE + 20 * FP_BYTES)
#define FRAME_USED (FCSR_AT + XLEN_BYTES)
#else
#define FRAME_USED (16 * XLEN_BYTES)
#endif
#define FRAME ((FRAME_USED + 15) / 16 * 16)

#define MSTATUS_FS_INITIAL (1 << 13)
#define STACK_MARK 0xA5A5A5A5

/* With -bios none QEMU's reset code jumps to the start of RAM, where
 * link.ld puts this section.  Hart 0 runs; any other parks. */
	.section .text.init, "ax", @progbits
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined ra
	csrr	t0, mhartid
	bnez	t0, 9f
	la	sp, __stack_top
	la	t0, trap_entry
	csrw	mtvec, t0
	csrw	mie, zero
#if defined(__riscv_flen)
	/* mstatus.FS resets to Off, which makes every FP instruction trap,
	 * the port's switch included (it saves fcsr) */
	li	t0, MSTATUS_FS_INITIAL
	csrs	mstatus, t0
	fscsr	zero
#endif
	/* .data, where it is loaded elsewhere (QEMU loads it in place) */
	la	t0, __data_load
	la	t1, __data_start
	la	t2, __data_end
	beq	t0, t1, 2f
1:	bgeu	t1, t2, 2f
	lw	t3, 0(t0)
	sw	t3, 0(t1)
	addi	t0, t0, 4
	addi	t1, t1, 4
	j	1b
2:	la	t1, __bss_start
	la	t2, __bss_end
3:	bgeu	t1, t2, 4f
	sw	zero, 0(t1)
	addi	t1, t1, 4
	j	3b
	/* the whole main stack, still unused, marked for stack_peak */
4:	la	t1, __stack_limit
	li	t3, STACK_MARK
5:	bgeu	t1, sp, 6f
	sw	t3, 0(t1)
	addi	t1, t1, 4
	j	5b
6:	call	main
	call	console_exit
9:	wfi
	j	9b
	.cfi_endproc
	.size	_start, . - _start

/*
 * Every trap.  Traps do not nest: the hart clears mstatus.MIE on entry
 * and mret sets it back.  trap_handler(mcause, mepc, frame), 'frame'
 * the registers stored below, returns from an interrupt and ends the
 * run on anything else.  A fault in this entry itself (an sp gone wild)
 * traps here again for ever.  The target tests (tools/test_qemu_riscv.sh)
 * run on this file too, with a trap_handler of their own.
 */
	.text
	.globl	trap_entry
	.type	trap_entry, @function
	.p2align 2	/* mtvec's low two bits are its mode: direct */
trap_entry:
	addi	sp, sp, -FRAME
	SREG	ra, 0 * XLEN_BYTES(sp)
	SREG	t0, 1 * XLEN_BYTES(sp)
	SREG	t1, 2 * XLEN_BYTES(sp)
	SREG	t2, 3 * XLEN_BYTES(sp)
	SREG	t3, 4 * XLEN_BYTES(sp)
	SREG	t4, 5 * XLEN_BYTES(sp)
	SREG	t5, 6 * XLEN_BYTES(sp)
	SREG	t6, 7 * XLEN_BYTES(sp)
	SREG	a0, 8 * XLEN_BYTES(sp)
	SREG	a1, 9 * XLEN_BYTES(sp)
	SREG	a2, 10 * XLEN_BYTES(sp)
	SREG	a3, 11 * XLEN_BYTES(sp)
	SREG	a4, 12 * XLEN_BYTES(sp)
	SREG	a5, 13 * XLEN_BYTES(sp)
	SREG	a6, 14 * XLEN_BYTES(sp)
	SREG	a7, 15 * XLEN_BYTES(sp)
#if defined(__riscv_flen)
	FSREG	ft0, FP_BASE + 0 * FP_BYTES(sp)
	FSREG	ft1, FP_BASE + 1 * FP_BYTES(sp)
	FSREG	ft2, FP_BASE + 2 * FP_BYTES(sp)
	FSREG	ft3, FP_BASE + 3 * FP_BYTES(sp)
	FSREG	ft4, FP_BASE + 4 * FP_BYTES(sp)
	FSREG	ft5, FP_BASE + 5 * FP_BYTES(sp)
	FSREG	ft6, FP_BASE + 6 * FP_BYTES(sp)
	FSREG	ft7, FP_BASE + 7 * FP_BYTES(sp)
	FSREG	ft8, FP_BASE + 8 * FP_BYTES(sp)
	FSREG	ft9, FP_BASE + 9 * FP_BYTES(sp)
	FSREG	ft10, FP_BASE + 10 * FP_BYTES(sp)
	FSREG	ft11, FP_BASE + 11 * FP_BYTES(sp)
	FSREG	fa0, FP_BASE + 12 * FP_BYTES(sp)
	FSREG	fa1, FP_BASE + 13 * FP_BYTES(sp)
	FSREG	fa2, FP_BASE + 14 * FP_BYTES(sp)
	FSREG	fa3, FP_BASE + 15 * FP_BYTES(sp)
	FSREG	fa4, FP_BASE + 16 * FP_BYTES(sp)
	FSREG	fa5, FP_BASE + 17 * FP_BYTES(sp)
	FSREG	fa6, FP_BASE + 18 * FP_BYTES(sp)
	FSREG	fa7, FP_BASE + 19 * FP_BYTES(sp)
	frcsr	t0
	sw	t0, FCSR_AT(sp)
#endif
	/* the handler's stack; the interrupted sp kept on it */
	mv	t0, sp
	la	sp, __irq_stack_top
	addi	sp, sp, -16
	SREG	t0, 0(sp)
	mv	a2, t0
	csrr	a0, mcause
	csrr	a1, mepc
	call	trap_handler
	LREG	sp, 0(sp)
#if defined(__riscv_flen)
	lw	t0, FCSR_AT(sp)
	fscsr	t0
	FLREG	ft0, FP_BASE + 0 * FP_BYTES(sp)
	FLREG	ft1, FP_BASE + 1 * FP_BYTES(sp)
	FLREG	ft2, FP_BASE + 2 * FP_BYTES(sp)
	FLREG	ft3, FP_BASE + 3 * FP_BYTES(sp)
	FLREG	ft4, FP_BASE + 4 * FP_BYTES(sp)
	FLREG	ft5, FP_BASE + 5 * FP_BYTES(sp)
	FLREG	ft6, FP_BASE + 6 * FP_BYTES(sp)
	FLREG	ft7, FP_BASE + 7 * FP_BYTES(sp)
	FLREG	ft8, FP_BASE + 8 * FP_BYTES(sp)
	FLREG	ft9, FP_BASE + 9 * FP_BYTES(sp)
	FLREG	ft10, FP_BASE + 10 * FP_BYTES(sp)
	FLREG	ft11, FP_BASE + 11 * FP_BYTES(sp)
	FLREG	fa0, FP_BASE + 12 * FP_BYTES(sp)
	FLREG	fa1, FP_BASE + 13 * FP_BYTES(sp)
	FLREG	fa2, FP_BASE + 14 * FP_BYTES(sp)
	FLREG	fa3, FP_BASE + 15 * FP_BYTES(sp)
	FLREG	fa4, FP_BASE + 16 * FP_BYTES(sp)
	FLREG	fa5, FP_BASE + 17 * FP_BYTES(sp)
	FLREG	fa6, FP_BASE + 18 * FP_BYTES(sp)
	FLREG	fa7, FP_BASE + 19 * FP_BYTES(sp)
#endif
	LREG	ra, 0 * XLEN_BYTES(sp)
	LREG	t0, 1 * XLEN_BYTES(sp)
	LREG	t1, 2 * XLEN_BYTES(sp)
	LREG	t2, 3 * XLEN_BYTES(sp)
	LREG	t3, 4 * XLEN_BYTES(sp)
	LREG	t4, 5 * XLEN_BYTES(sp)
	LREG	t5, 6 * XLEN_BYTES(sp)
	LREG	t6, 7 * XLEN_BYTES(sp)
	LREG	a0, 8 * XLEN_BYTES(sp)
	LREG	a1, 9 * XLEN_BYTES(sp)
	LREG	a2, 10 * XLEN_BYTES(sp)
	LREG	a3, 11 * XLEN_BYTES(sp)
	LREG	a4, 12 * XLEN_BYTES(sp)
	LREG	a5, 13 * XLEN_BYTES(sp)
	LREG	a6, 14 * XLEN_BYTES(sp)
	LREG	a7, 15 * XLEN_BYTES(sp)
	addi	sp, sp, FRAME
	mret
	.size	trap_entry, . - trap_entry

	.section .note.GNU-stack,"",@progbits
