/* SPDX-License-Identifier: MIT */
/* A probe for the target tests (Cortex-M, Thumb): does a function give back every callee-saved register AAPCS says it must? */

#if !(defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__) || defined(__ARM_ARCH_8M_MAIN__))
#error "callee_saved_arm.S needs an M-profile target (-mcpu=cortex-m0/m0plus/m3/m4/m7/m23/m33)."
#endif

/*
 * uintptr_t kt_callee_saved_check(void (*fn)(void *), void *arg, uintptr_t seed);
 *
 * Loads every callee-saved register with a pattern made from 'seed',
 * calls fn(arg), and returns a mask of the registers fn did not give
 * back:
 *
 *   bit i       r4 ... r11 (i = 0..7), pattern seed + i
 *   bit 16 + i  s16 ... s31 (i = 0..15), only with an FPU (__ARM_FP),
 *               pattern (float)(seed + 100 + i): integers, so that a
 *               small seed gives exact floats and the check compares
 *               integers again after converting back
 *
 * No callee-saved register can be trusted after fn returns, so 'seed'
 * waits in this function's own frame and the expected patterns are
 * recomputed from it.  The function saves what it loads, for its own
 * caller, and calls fn with sp 8-byte aligned (the frame is a multiple
 * of 8, and AAPCS gives it an aligned sp).
 *
 * The frame, lowest address first:
 *
 *   ARMv7-M, ARMv8-M Mainline       ARMv6-M, ARMv8-M Baseline
 *   +-----------------------+       +-----------------------+  <- sp at the call
 *   | s16 ... s31 (64 B)    | FP    | r8 ... r11 (via r4-r7)|
 *   | seed                  |       | seed                  |
 *   | r4 ... r11            |       | r4 ... r7             |
 *   | lr                    |       | lr                    |
 *   +-----------------------+       +-----------------------+
 *   40 bytes, or 104 with FP        40 bytes
 */

	.syntax	unified
	.thumb
	.text

	.globl	kt_callee_saved_check
	.type	kt_callee_saved_check, %function
	.thumb_func
	.p2align 2
kt_callee_saved_check:
	.cfi_startproc
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
	/* r0 = fn, r1 = arg, r2 = seed.  Push and pop take only r0-r7 and
	 * lr: r8-r11 go through r4-r7, in and out. */
	push	{r2, r4-r7, lr}
	.cfi_adjust_cfa_offset 24
	.cfi_rel_offset r4, 4
	.cfi_rel_offset r5, 8
	.cfi_rel_offset r6, 12
	.cfi_rel_offset r7, 16
	.cfi_rel_offset lr, 20
	mov	r4, r8
	mov	r5, r9
	mov	r6, r10
	mov	r7, r11
	push	{r4-r7}
	.cfi_adjust_cfa_offset 16

	/* the patterns: high registers first, while r4 is still free */
	adds	r4, r2, #4
	mov	r8, r4
	adds	r4, r2, #5
	mov	r9, r4
	adds	r4, r2, #6
	mov	r10, r4
	adds	r4, r2, #7
	mov	r11, r4
	adds	r4, r2, #0
	adds	r5, r2, #1
	adds	r6, r2, #2
	adds	r7, r2, #3
	mov	r3, r0
	mov	r0, r1
	blx	r3

	/* seed back from the frame; r0 collects the mask.  Without IT,
	 * each check branches over its bit; the bits are disjoint, so
	 * adding one is setting it (and bit 7's 128 fits an 8-bit add). */
	ldr	r2, [sp, #16]
	movs	r0, #0
	.macro	kt_check_lo reg, i
	adds	r3, r2, #\i
	cmp	\reg, r3
	beq	1f
	adds	r0, #(1 << \i)
1:
	.endm
	.macro	kt_check_hi reg, i
	mov	r1, \reg
	adds	r3, r2, #\i
	cmp	r1, r3
	beq	1f
	adds	r0, #(1 << \i)
1:
	.endm
	kt_check_lo r4, 0
	kt_check_lo r5, 1
	kt_check_lo r6, 2
	kt_check_lo r7, 3
	kt_check_hi r8, 4
	kt_check_hi r9, 5
	kt_check_hi r10, 6
	kt_check_hi r11, 7

	/* the caller's r8-r11, then its r4-r7; r2 takes the seed slot */
	pop	{r4-r7}
	.cfi_adjust_cfa_offset -16
	mov	r8, r4
	mov	r9, r5
	mov	r10, r6
	mov	r11, r7
	pop	{r2, r4-r7, pc}
#else
	/* r0 = fn, r1 = arg, r2 = seed; seed rides in the pad slot that
	 * makes the push a multiple of 8 bytes. */
	push	{r2, r4-r11, lr}
	.cfi_adjust_cfa_offset 40
	.cfi_rel_offset r4, 4
	.cfi_rel_offset r5, 8
	.cfi_rel_offset r6, 12
	.cfi_rel_offset r7, 16
	.cfi_rel_offset r8, 20
	.cfi_rel_offset r9, 24
	.cfi_rel_offset r10, 28
	.cfi_rel_offset r11, 32
	.cfi_rel_offset lr, 36
#if defined(__ARM_FP)
	vpush	{s16-s31}
	.cfi_adjust_cfa_offset 64
#define KT_SEED_AT 64
#else
#define KT_SEED_AT 0
#endif
	mov	r12, r0
	mov	r0, r1
	add	r4, r2, #0
	add	r5, r2, #1
	add	r6, r2, #2
	add	r7, r2, #3
	add	r8, r2, #4
	add	r9, r2, #5
	add	r10, r2, #6
	add	r11, r2, #7
#if defined(__ARM_FP)
	/* an integer through a core register into sN, then to float there */
	.macro	kt_load_s reg, i
	add	r3, r2, #(100 + \i)
	vmov	\reg, r3
	vcvt.f32.s32 \reg, \reg
	.endm
	kt_load_s s16, 0
	kt_load_s s17, 1
	kt_load_s s18, 2
	kt_load_s s19, 3
	kt_load_s s20, 4
	kt_load_s s21, 5
	kt_load_s s22, 6
	kt_load_s s23, 7
	kt_load_s s24, 8
	kt_load_s s25, 9
	kt_load_s s26, 10
	kt_load_s s27, 11
	kt_load_s s28, 12
	kt_load_s s29, 13
	kt_load_s s30, 14
	kt_load_s s31, 15
#endif
	blx	r12

	/* seed back from the frame; r0 collects the mask */
	ldr	r2, [sp, #KT_SEED_AT]
	movs	r0, #0
	.macro	kt_check_r reg, i
	add	r3, r2, #\i
	cmp	\reg, r3
	it	ne
	orrne	r0, r0, #(1 << \i)
	.endm
	kt_check_r r4, 0
	kt_check_r r5, 1
	kt_check_r r6, 2
	kt_check_r r7, 3
	kt_check_r r8, 4
	kt_check_r r9, 5
	kt_check_r r10, 6
	kt_check_r r11, 7
#if defined(__ARM_FP)
	/* back to an integer in sN (the caller's s16-s31 come back from
	 * the frame anyway), out through r1 */
	.macro	kt_check_s reg, i
	vcvt.s32.f32 \reg, \reg
	vmov	r1, \reg
	add	r3, r2, #(100 + \i)
	cmp	r1, r3
	it	ne
	orrne	r0, r0, #(1 << (16 + \i))
	.endm
	kt_check_s s16, 0
	kt_check_s s17, 1
	kt_check_s s18, 2
	kt_check_s s19, 3
	kt_check_s s20, 4
	kt_check_s s21, 5
	kt_check_s s22, 6
	kt_check_s s23, 7
	kt_check_s s24, 8
	kt_check_s s25, 9
	kt_check_s s26, 10
	kt_check_s s27, 11
	kt_check_s s28, 12
	kt_check_s s29, 13
	kt_check_s s30, 14
	kt_check_s s31, 15
	vpop	{s16-s31}
	.cfi_adjust_cfa_offset -64
#endif
	/* r2 takes the seed slot; the mask stays in r0 */
	pop	{r2, r4-r11, pc}
#endif
	.cfi_endproc
	.size	kt_callee_saved_check, . - kt_callee_saved_check

	.section .note.GNU-stack,"",%progbits
