/* SPDX-License-Identifier: MIT */
/* The Cortex-M context switch and the entry thunk a fresh context starts in (ARMv7-M and ARMv6-M, Thumb). */

#if !(defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__) || defined(__ARM_ARCH_8M_MAIN__))
#error "port/cortex-m needs an M-profile target (-mcpu=cortex-m0/m0plus/m3/m4/m7/m23/m33)."
#endif

/*
 * A switch is a plain function call made in thread mode: no SVC, no
 * PendSV.  kpn schedules cooperatively, so a process gives up the CPU
 * only by calling into the core, which calls this.  A context is two
 * words (port_cortexm.c): the saved stack pointer and the CONTROL value
 * the context runs with.  CONTROL carries the two things that differ
 * between the host and a process:
 *
 *   SPSEL (bit 1)  processes run on PSP; the host (the caller of kpn_run)
 *                  stays on the stack it was on, normally MSP.  While a
 *                  process runs, an interrupt stacks only its hardware
 *                  frame on the process's stack and runs the handler on
 *                  MSP, below the host's frames (FreeRTOS's arrangement).
 *   FPCA  (bit 2)  the context has live floating-point state.  Only such
 *                  a context saves s16-s31 and FPSCR; one that never ran
 *                  a floating-point instruction saves none and keeps
 *                  FPCA 0, so an interrupt stacks a 32-byte frame on it
 *                  instead of 104.  Restoring FPCA 0 also means that the
 *                  first floating-point instruction a context executes
 *                  loads FPSCR from FPDSCR (FPCCR.ASPEN, set at reset): a
 *                  fresh process starts with the default FP state, and
 *                  a process never sees another's rounding mode.
 *
 * The switch runs in thread mode, so lazy stacking is never pending here
 * (an exception return settles it): the 's16-s31' pushed are the
 * context's own.  The port needs privileged thread mode (the reset
 * default), since it writes CONTROL, MSP and PSP.
 *
 * The frame on a suspended context's stack, lowest address first:
 *
 *        +-----------------------+  <- saved sp (in the context)
 *        | FPSCR      | (pad)    |  \
 *        | s16 ... s31 (64 B)    |  /  only when the saved CONTROL has FPCA
 *        | r3 (pad), r4 ... r11  |
 *        | lr (where to resume)  |
 *        +-----------------------+  40 bytes, or 112 with FP; 8-aligned
 *
 * port_cortexm.c builds the 40-byte frame by hand at the top of a fresh
 * stack; the two files must agree on this picture.
 */

	.syntax	unified
	.thumb
	.text

/* void kpn_port_switch(kpn_port_ctx *from, kpn_port_ctx *to)
 *   r0 = from, r1 = to; a context is { sp, control }. */
	.globl	kpn_port_switch
	.type	kpn_port_switch, %function
	.thumb_func
	.p2align 2
kpn_port_switch:
	.cfi_startproc
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
	/* ARMv6-M pushes only r0-r7 and lr: stage r8-r11 through r4-r7. */
	push	{r3-r7, lr}
	mov	r4, r8
	mov	r5, r9
	mov	r6, r10
	mov	r7, r11
	push	{r4-r7}
	mrs	r2, control
	mov	r3, sp
	str	r3, [r0]
	str	r2, [r0, #4]
	ldr	r3, [r1]
	ldr	r2, [r1, #4]
	movs	r0, #2
	tst	r2, r0
	beq	1f
	msr	psp, r3
	b	2f
1:	msr	msp, r3
2:	msr	control, r2
	isb
	pop	{r4-r7}
	mov	r8, r4
	mov	r9, r5
	mov	r10, r6
	mov	r11, r7
	pop	{r3-r7, pc}
#else
	push	{r3-r11, lr}
	.cfi_adjust_cfa_offset 40
	mrs	r2, control
#if defined(__ARM_FP)
	/* FPCA: live FP state to keep */
	tst	r2, #4
	beq	1f
	vpush	{s16-s31}
	vmrs	r3, fpscr
	/* FPSCR and a pad word */
	push	{r3, r12}
1:
#endif
	str	sp, [r0]
	str	r2, [r0, #4]
	ldr	r3, [r1]
	ldr	r2, [r1, #4]
	/* Load the target's stack pointer into the bank its CONTROL selects
	 * before selecting it, so no interrupt ever sees a stale one. */
	tst	r2, #2
	ite	ne
	msrne	psp, r3
	msreq	msp, r3
	msr	control, r2
	isb
#if defined(__ARM_FP)
	tst	r2, #4
	beq	2f
	pop	{r3, r12}
	vmsr	fpscr, r3
	vpop	{s16-s31}
2:
#endif
	pop	{r3-r11, pc}
#endif
	.cfi_endproc
	.size	kpn_port_switch, . - kpn_port_switch

/* Where a fresh context starts: the frame port_cortexm.c builds pops
 * 'fn' into r4 and 'arg' into r5.  If 'fn' returns, it is called again
 * (port.h): r4 and r5 are callee-saved, and sp is back where it was. */
	.globl	kpni_port_cortexm_entry
	.type	kpni_port_cortexm_entry, %function
	.thumb_func
	.p2align 2
kpni_port_cortexm_entry:
	.cfi_startproc
	.cfi_undefined lr
1:	mov	r0, r5
	blx	r4
	b	1b
	.cfi_endproc
	.size	kpni_port_cortexm_entry, . - kpni_port_cortexm_entry

	.section .note.GNU-stack,"",%progbits
