/* SPDX-License-Identifier: MIT */
/* The RISC-V context switch and the entry thunk a fresh context starts in (RV32 and RV64, with or without F/D). */

#if !defined(__riscv) || !defined(__riscv_xlen)
#error "port/riscv needs a RISC-V target."
#endif
#if defined(__riscv_32e) || defined(__riscv_abi_rve)
#error "port/riscv does not support RV32E (ilp32e): its ABI saves only s0-s1 and aligns the stack to 4."
#endif

/*
 * A suspended context is nothing but its stack pointer: everything the
 * psABI makes callee-saved is stored on its own stack, and the context
 * holds where that frame starts.  The frame, lowest address first
 * (X = XLEN/8 bytes a register, F = FLEN/8):
 *
 *        +----------------------------+  <- saved sp (in the context)
 *        | fs0 ... fs11       12 x F  |  \  only where the target has
 *        | fcsr               4, or X |  /  the F or D extension
 *        | ra                 X       |     where 'ret' resumes
 *        | s0 ... s11         12 x X  |
 *        | (pad to 16)                |
 *        +----------------------------+
 *
 *   RV32: 64 bytes, 112 with F, 160 with D;
 *   RV64: 112 bytes, 160 with F, 208 with D.
 *
 * fs0-fs11 are saved whole, as wide as the hardware has them (fsd with
 * D, fsw with F): the psABI makes them callee-saved up to ABI_FLEN, and
 * FLEN covers every ABI the hardware runs.  The frame follows the
 * hardware, not the ABI: with F and a soft-float ABI (rv32imafc, ilp32)
 * GCC computes in FP registers but treats all of them as caller-saved,
 * so there fs0-fs11 need not be kept (keeping them costs 48 or 96
 * bytes and 24 instructions, nothing else); fcsr must be all the same.
 * fcsr (rounding mode and flags) is "thread storage" in the psABI, and
 * each process is a thread of its own to kpn: port.h asks for it per
 * context, so a process that sets a rounding mode never hands it on.
 * Nothing here is lazy, unlike Cortex-M's FPCA: without an operating
 * system there is no first-use trap to hang it on (mstatus.FS = Off
 * would make the first FP instruction trap, but into the application's
 * handler, not the port's).
 *
 * port_riscv.c builds the same frame by hand at the top of a fresh
 * stack, with ra pointing at 'kpni_port_riscv_entry'; the two files must
 * agree on this picture.
 */

#if __riscv_xlen == 64
#define SREG sd
#define LREG ld
#define X 8
#else
#define SREG sw
#define LREG lw
#define X 4
#endif

#if defined(__riscv_flen) && __riscv_flen > 64
#error "port/riscv saves fs0-fs11 32 or 64 bits wide: Q (FLEN 128) is not supported."
#endif
#if defined(__riscv_zfinx) || defined(__riscv_zdinx)
#error "port/riscv does not support Zfinx/Zdinx: their fcsr, with no FP registers to show it, is not saved per process."
#endif
#if defined(__riscv_flen)
#define KPN_RV_FP 1
#if __riscv_flen == 64
#define FSREG fsd
#define FLREG fld
#define F 8
#else
#define FSREG fsw
#define FLREG flw
#define F 4
#endif
#define FCSR_SLOT (12 * F)
/* fcsr takes a register's slot, so ra stays aligned */
#define INT_BASE (FCSR_SLOT + X)
#else
#define KPN_RV_FP 0
#define INT_BASE 0
#endif

#define FRAME (((INT_BASE + 13 * X) + 15) / 16 * 16)

	.text

/* void kpn_port_switch(kpn_port_ctx *from, kpn_port_ctx *to)
 *   a0 = from, a1 = to; a context's first word holds the saved sp. */
	.globl	kpn_port_switch
	.type	kpn_port_switch, @function
	.p2align 2
kpn_port_switch:
	.cfi_startproc
	addi	sp, sp, -FRAME
	.cfi_adjust_cfa_offset FRAME
	SREG	ra, INT_BASE + 0 * X(sp)
	.cfi_rel_offset ra, INT_BASE + 0 * X
	SREG	s0, INT_BASE + 1 * X(sp)
	.cfi_rel_offset s0, INT_BASE + 1 * X
	SREG	s1, INT_BASE + 2 * X(sp)
	.cfi_rel_offset s1, INT_BASE + 2 * X
	SREG	s2, INT_BASE + 3 * X(sp)
	.cfi_rel_offset s2, INT_BASE + 3 * X
	SREG	s3, INT_BASE + 4 * X(sp)
	.cfi_rel_offset s3, INT_BASE + 4 * X
	SREG	s4, INT_BASE + 5 * X(sp)
	.cfi_rel_offset s4, INT_BASE + 5 * X
	SREG	s5, INT_BASE + 6 * X(sp)
	.cfi_rel_offset s5, INT_BASE + 6 * X
	SREG	s6, INT_BASE + 7 * X(sp)
	.cfi_rel_offset s6, INT_BASE + 7 * X
	SREG	s7, INT_BASE + 8 * X(sp)
	.cfi_rel_offset s7, INT_BASE + 8 * X
	SREG	s8, INT_BASE + 9 * X(sp)
	.cfi_rel_offset s8, INT_BASE + 9 * X
	SREG	s9, INT_BASE + 10 * X(sp)
	.cfi_rel_offset s9, INT_BASE + 10 * X
	SREG	s10, INT_BASE + 11 * X(sp)
	.cfi_rel_offset s10, INT_BASE + 11 * X
	SREG	s11, INT_BASE + 12 * X(sp)
	.cfi_rel_offset s11, INT_BASE + 12 * X
#if KPN_RV_FP
	FSREG	fs0, 0 * F(sp)
	FSREG	fs1, 1 * F(sp)
	FSREG	fs2, 2 * F(sp)
	FSREG	fs3, 3 * F(sp)
	FSREG	fs4, 4 * F(sp)
	FSREG	fs5, 5 * F(sp)
	FSREG	fs6, 6 * F(sp)
	FSREG	fs7, 7 * F(sp)
	FSREG	fs8, 8 * F(sp)
	FSREG	fs9, 9 * F(sp)
	FSREG	fs10, 10 * F(sp)
	FSREG	fs11, 11 * F(sp)
	frcsr	t0
	sw	t0, FCSR_SLOT(sp)
#endif

	/* The only two instructions that know about two stacks; every
	 * frame has the layout above, so the CFI stays true across them. */
	SREG	sp, 0(a0)
	LREG	sp, 0(a1)

#if KPN_RV_FP
	lw	t0, FCSR_SLOT(sp)
	fscsr	t0
	FLREG	fs0, 0 * F(sp)
	FLREG	fs1, 1 * F(sp)
	FLREG	fs2, 2 * F(sp)
	FLREG	fs3, 3 * F(sp)
	FLREG	fs4, 4 * F(sp)
	FLREG	fs5, 5 * F(sp)
	FLREG	fs6, 6 * F(sp)
	FLREG	fs7, 7 * F(sp)
	FLREG	fs8, 8 * F(sp)
	FLREG	fs9, 9 * F(sp)
	FLREG	fs10, 10 * F(sp)
	FLREG	fs11, 11 * F(sp)
#endif
	LREG	s0, INT_BASE + 1 * X(sp)
	LREG	s1, INT_BASE + 2 * X(sp)
	LREG	s2, INT_BASE + 3 * X(sp)
	LREG	s3, INT_BASE + 4 * X(sp)
	LREG	s4, INT_BASE + 5 * X(sp)
	LREG	s5, INT_BASE + 6 * X(sp)
	LREG	s6, INT_BASE + 7 * X(sp)
	LREG	s7, INT_BASE + 8 * X(sp)
	LREG	s8, INT_BASE + 9 * X(sp)
	LREG	s9, INT_BASE + 10 * X(sp)
	LREG	s10, INT_BASE + 11 * X(sp)
	LREG	s11, INT_BASE + 12 * X(sp)
	LREG	ra, INT_BASE + 0 * X(sp)
	.cfi_restore ra
	.cfi_restore s0
	.cfi_restore s1
	.cfi_restore s2
	.cfi_restore s3
	.cfi_restore s4
	.cfi_restore s5
	.cfi_restore s6
	.cfi_restore s7
	.cfi_restore s8
	.cfi_restore s9
	.cfi_restore s10
	.cfi_restore s11
	addi	sp, sp, FRAME
	.cfi_adjust_cfa_offset -FRAME
	/* 'ret', not 'jr t0': every switch in the core is made from one
	 * call site, so the return-address stack predicts it. */
	ret
	.cfi_endproc
	.size	kpn_port_switch, . - kpn_port_switch

/* The first switch into a fresh context returns here with the initial
 * frame popped: s1 = fn, s2 = arg, s0 = 0 (ends frame-pointer walks),
 * and sp at the 16-byte aligned top of the stack, as the psABI wants it
 * at a call.  If 'fn' returns, it is called again (port.h): s1 and s2
 * are callee-saved, and sp is back at the top. */
	.globl	kpni_port_riscv_entry
	.type	kpni_port_riscv_entry, @function
	.p2align 2
kpni_port_riscv_entry:
	.cfi_startproc
	/* There is no caller: tell unwinders (gdb, libgcc) to stop. */
	.cfi_undefined ra
1:	mv	a0, s2
	jalr	s1
	j	1b
	.cfi_endproc
	.size	kpni_port_riscv_entry, . - kpni_port_riscv_entry

	.section .note.GNU-stack,"",@progbits
