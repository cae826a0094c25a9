/* SPDX-License-Identifier: MIT */
/* kt_callee_saved_check for the RISC-V target tests: every callee-saved register given a pattern across a call that switches processes. */

/*
 * uintptr_t kt_callee_saved_check(void (*fn)(void *), void *arg, uintptr_t seed)
 *
 * Loads s0-s11 with seed + i and, where the target has F or D, fs0-fs11
 * with the float of seed + 100 + i, calls fn(arg), and returns a mask
 * of the registers fn did not give back: bit i for s<i>, bit 16 + i for
 * fs<i>.  A test makes fn a send and a receive that switch to another
 * process, whose registers hold other patterns: a switch that loses one
 * shows.  The compiler alone never fills all of them.  The expected
 * patterns are worked out again from 'seed' in this function's frame,
 * since no callee-saved register can be trusted for it.
 *
 *   sp + 0        ra, s0-s11, seed     14 x X  (the caller's, and seed)
 *   sp + 14 X     fs0-fs11             12 x F  (with F or D)
 *   padded to 16
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
#if defined(__riscv_flen)
#if __riscv_flen == 64
#define FSREG fsd
#define FLREG fld
#define F 8
#define TO_FP fcvt.d.w
#define FROM_FP fcvt.w.d
#else
#define FSREG fsw
#define FLREG flw
#define F 4
#define TO_FP fcvt.s.w
#define FROM_FP fcvt.w.s
#endif
#define FP_BASE (14 * X)
#define USED (FP_BASE + 12 * F)
#else
#define USED (14 * X)
#endif
#define FRAME ((USED + 15) / 16 * 16)
#define SEED (13 * X)

	.text
	.globl	kt_callee_saved_check
	.type	kt_callee_saved_check, @function
	.p2align 2
kt_callee_saved_check:
	addi	sp, sp, -FRAME
	SREG	ra, 0 * X(sp)
	SREG	s0, 1 * X(sp)
	SREG	s1, 2 * X(sp)
	SREG	s2, 3 * X(sp)
	SREG	s3, 4 * X(sp)
	SREG	s4, 5 * X(sp)
	SREG	s5, 6 * X(sp)
	SREG	s6, 7 * X(sp)
	SREG	s7, 8 * X(sp)
	SREG	s8, 9 * X(sp)
	SREG	s9, 10 * X(sp)
	SREG	s10, 11 * X(sp)
	SREG	s11, 12 * X(sp)
	SREG	a2, SEED(sp)
#if defined(__riscv_flen)
	FSREG	fs0, FP_BASE + 0 * F(sp)
	FSREG	fs1, FP_BASE + 1 * F(sp)
	FSREG	fs2, FP_BASE + 2 * F(sp)
	FSREG	fs3, FP_BASE + 3 * F(sp)
	FSREG	fs4, FP_BASE + 4 * F(sp)
	FSREG	fs5, FP_BASE + 5 * F(sp)
	FSREG	fs6, FP_BASE + 6 * F(sp)
	FSREG	fs7, FP_BASE + 7 * F(sp)
	FSREG	fs8, FP_BASE + 8 * F(sp)
	FSREG	fs9, FP_BASE + 9 * F(sp)
	FSREG	fs10, FP_BASE + 10 * F(sp)
	FSREG	fs11, FP_BASE + 11 * F(sp)
	addi	t0, a2, 100
	TO_FP	fs0, t0
	addi	t0, a2, 101
	TO_FP	fs1, t0
	addi	t0, a2, 102
	TO_FP	fs2, t0
	addi	t0, a2, 103
	TO_FP	fs3, t0
	addi	t0, a2, 104
	TO_FP	fs4, t0
	addi	t0, a2, 105
	TO_FP	fs5, t0
	addi	t0, a2, 106
	TO_FP	fs6, t0
	addi	t0, a2, 107
	TO_FP	fs7, t0
	addi	t0, a2, 108
	TO_FP	fs8, t0
	addi	t0, a2, 109
	TO_FP	fs9, t0
	addi	t0, a2, 110
	TO_FP	fs10, t0
	addi	t0, a2, 111
	TO_FP	fs11, t0
#endif
	mv	t0, a0
	mv	a0, a1
	mv	s0, a2
	addi	s1, a2, 1
	addi	s2, a2, 2
	addi	s3, a2, 3
	addi	s4, a2, 4
	addi	s5, a2, 5
	addi	s6, a2, 6
	addi	s7, a2, 7
	addi	s8, a2, 8
	addi	s9, a2, 9
	addi	s10, a2, 10
	addi	s11, a2, 11
	jalr	t0

	/* a0 = the mask; t0 = seed; t1 = what a register should hold */
	LREG	t0, SEED(sp)
	li	a0, 0
	/* MISS REG, BIT: set BIT in a0 if REG != t1, then step t1 */
#define MISS(reg, bit) \
	xor	t2, reg, t1; snez t2, t2; slli t2, t2, bit; or a0, a0, t2; addi t1, t1, 1
	mv	t1, t0
	MISS(s0, 0)
	MISS(s1, 1)
	MISS(s2, 2)
	MISS(s3, 3)
	MISS(s4, 4)
	MISS(s5, 5)
	MISS(s6, 6)
	MISS(s7, 7)
	MISS(s8, 8)
	MISS(s9, 9)
	MISS(s10, 10)
	MISS(s11, 11)
#if defined(__riscv_flen)
#define FMISS(freg, bit) \
	FROM_FP	t3, freg, rtz; MISS(t3, bit)
	addi	t1, t0, 100
	FMISS(fs0, 16)
	FMISS(fs1, 17)
	FMISS(fs2, 18)
	FMISS(fs3, 19)
	FMISS(fs4, 20)
	FMISS(fs5, 21)
	FMISS(fs6, 22)
	FMISS(fs7, 23)
	FMISS(fs8, 24)
	FMISS(fs9, 25)
	FMISS(fs10, 26)
	FMISS(fs11, 27)
	FLREG	fs0, FP_BASE + 0 * F(sp)
	FLREG	fs1, FP_BASE + 1 * F(sp)
	FLREG	fs2, FP_BASE + 2 * F(sp)
	FLREG	fs3, FP_BASE + 3 * F(sp)
	FLREG	fs4, FP_BASE + 4 * F(sp)
	FLREG	fs5, FP_BASE + 5 * F(sp)
	FLREG	fs6, FP_BASE + 6 * F(sp)
	FLREG	fs7, FP_BASE + 7 * F(sp)
	FLREG	fs8, FP_BASE + 8 * F(sp)
	FLREG	fs9, FP_BASE + 9 * F(sp)
	FLREG	fs10, FP_BASE + 10 * F(sp)
	FLREG	fs11, FP_BASE + 11 * F(sp)
#endif
	LREG	ra, 0 * X(sp)
	LREG	s0, 1 * X(sp)
	LREG	s1, 2 * X(sp)
	LREG	s2, 3 * X(sp)
	LREG	s3, 4 * X(sp)
	LREG	s4, 5 * X(sp)
	LREG	s5, 6 * X(sp)
	LREG	s6, 7 * X(sp)
	LREG	s7, 8 * X(sp)
	LREG	s8, 9 * X(sp)
	LREG	s9, 10 * X(sp)
	LREG	s10, 11 * X(sp)
	LREG	s11, 12 * X(sp)
	addi	sp, sp, FRAME
	ret
	.size	kt_callee_saved_check, . - kt_callee_saved_check

	.section .note.GNU-stack,"",@progbits
