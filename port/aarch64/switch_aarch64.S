/* SPDX-License-Identifier: MIT */
/* The AArch64 context switch and the entry thunk a fresh context starts in (AAPCS64, ELF). */

#if !defined(__aarch64__) || !defined(__ELF__)
#error "port/aarch64 needs an AArch64 ELF target (AAPCS64); build port/posix instead."
#endif
#if defined(__ILP32__)
#error "port/aarch64 does not support ILP32: its context holds a 64-bit stack pointer."
#endif

/*
 * A suspended context is nothing but its stack pointer: everything
 * AAPCS64 makes callee-saved is stored on its own stack, and the context
 * holds where that frame starts.  One frame, 176 bytes:
 *
 *          higher addresses
 *        +--------------------+
 *  +168  | x30 (lr)           |  'ret' resumes here
 *  +160  | x29 (fp)           |  a frame record, as a prologue makes
 *  +144  | x27, x28           |
 *  +128  | x25, x26           |
 *  +112  | x23, x24           |
 *   +96  | x21, x22           |
 *   +80  | x19, x20           |
 *   +64  | d14, d15           |
 *   +48  | d12, d13           |
 *   +32  | d10, d11           |
 *   +16  | d8, d9             |
 *    +8  | (pad)              |
 *    +0  | FPCR               |
 *        +--------------------+  <- saved sp, stored in the context
 *          lower addresses
 *
 * AAPCS64 keeps the low 64 bits of v8-v15 (d8-d15) and no more.  FPCR
 * (rounding mode, flush-to-zero, default NaN) is kept across calls as
 * MXCSR is on AMD64, and each process is a thread of its own to kpn:
 * port.h asks for it per context.  Writing FPCR waits for the FP
 * instructions before it on many cores, so the switch writes it only
 * when the resumed context's differs from the one in force, which in a
 * net that never sets a rounding mode is never.  FPSR (the cumulative
 * exception flags) is not kept, as no call keeps it.
 *
 * port_aarch64.c builds the same frame by hand at the top of a fresh
 * stack, with lr pointing at 'kpni_port_aarch64_start'; the two files
 * must agree on this picture.
 *
 * The switch ends in 'ret', not 'br': every switch in the core goes
 * through one call site, so the return-stack predictor is right when a
 * context resumes at that site.  Branch protection: 'kpn_port_switch'
 * starts with 'bti c' when the compiler builds for BTI, so the file is
 * marked BTI-compatible then; the entry thunk is reached only by 'ret',
 * which BTI does not check.  The switch signs nothing: it stores the
 * caller's lr as the caller left it, and the caller's own
 * authentication, made against its own sp, holds on the stack the
 * context resumes.  A guarded control stack (GCS) cannot follow a
 * 'ret' onto another stack, so the file carries no GCS marking.
 */

/* In the one-file build the compiler's GCS marking would cover the
 * switch (see the property note below): picked by default, the
 * amalgamation takes posix then; asked for by name, it stops here. */
#if defined(KPNI_PORT) && defined(__ARM_FEATURE_GCS_DEFAULT) && __ARM_FEATURE_GCS_DEFAULT
#error "KPN_PORT=aarch64 cannot keep a guarded control stack: build kpn.c without GCS in -mbranch-protection, or take KPN_PORT=posix"
#endif

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define KPN_BTI_C hint 34 /* bti c; a no-op on cores without BTI */
#define KPN_FEATURE_BTI 1
#else
#define KPN_BTI_C
#define KPN_FEATURE_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT
#define KPN_FEATURE_PAC 2
#else
#define KPN_FEATURE_PAC 0
#endif

#define FRAME 176

	.text

/* void kpn_port_switch(kpn_port_ctx *from, kpn_port_ctx *to)
 *   x0 = from, x1 = to; the context's first 8 bytes hold the saved sp. */
	.globl	kpn_port_switch
	.type	kpn_port_switch, %function
	.p2align 4
kpn_port_switch:
	.cfi_startproc
	KPN_BTI_C
	sub	sp, sp, #FRAME
	.cfi_def_cfa_offset FRAME
	stp	x29, x30, [sp, #160]
	.cfi_offset x29, -16
	.cfi_offset x30, -8
	stp	x19, x20, [sp, #80]
	.cfi_offset x19, -96
	.cfi_offset x20, -88
	stp	x21, x22, [sp, #96]
	.cfi_offset x21, -80
	.cfi_offset x22, -72
	stp	x23, x24, [sp, #112]
	.cfi_offset x23, -64
	.cfi_offset x24, -56
	stp	x25, x26, [sp, #128]
	.cfi_offset x25, -48
	.cfi_offset x26, -40
	stp	x27, x28, [sp, #144]
	.cfi_offset x27, -32
	.cfi_offset x28, -24
	stp	d8, d9, [sp, #16]
	.cfi_offset d8, -160
	.cfi_offset d9, -152
	stp	d10, d11, [sp, #32]
	.cfi_offset d10, -144
	.cfi_offset d11, -136
	stp	d12, d13, [sp, #48]
	.cfi_offset d12, -128
	.cfi_offset d13, -120
	stp	d14, d15, [sp, #64]
	.cfi_offset d14, -112
	.cfi_offset d15, -104
	mrs	x9, fpcr
	str	x9, [sp]

	/* The only two instructions that know about two stacks.  Every
	 * frame has the layout above, so the CFI stays true across them:
	 * a debugger stopped below sees the resumed context's frame. */
	mov	x10, sp
	str	x10, [x0]
	ldr	x10, [x1]
	mov	sp, x10

	ldr	x10, [sp]
	cmp	x9, x10
	b.eq	1f
	msr	fpcr, x10
1:	ldp	d8, d9, [sp, #16]
	ldp	d10, d11, [sp, #32]
	ldp	d12, d13, [sp, #48]
	ldp	d14, d15, [sp, #64]
	ldp	x19, x20, [sp, #80]
	ldp	x21, x22, [sp, #96]
	ldp	x23, x24, [sp, #112]
	ldp	x25, x26, [sp, #128]
	ldp	x27, x28, [sp, #144]
	ldp	x29, x30, [sp, #160]
	add	sp, sp, #FRAME
	.cfi_def_cfa_offset 0
	.cfi_restore x19
	.cfi_restore x20
	.cfi_restore x21
	.cfi_restore x22
	.cfi_restore x23
	.cfi_restore x24
	.cfi_restore x25
	.cfi_restore x26
	.cfi_restore x27
	.cfi_restore x28
	.cfi_restore x29
	.cfi_restore x30
	.cfi_restore d8
	.cfi_restore d9
	.cfi_restore d10
	.cfi_restore d11
	.cfi_restore d12
	.cfi_restore d13
	.cfi_restore d14
	.cfi_restore d15
	ret
	.cfi_endproc
	.size	kpn_port_switch, .-kpn_port_switch

/* The first switch into a fresh context "returns" to
 * 'kpni_port_aarch64_start', with the initial frame loaded: x19 = fn,
 * x20 = arg, x29 = 0, and sp at the 16-byte aligned top of the stack, as
 * AAPCS64 wants it at every call.  If 'fn' returns, it is called again
 * (port.h): x19 and x20 are callee-saved, and sp is back at the top.
 * Reached only by 'ret', so it needs no landing pad.
 *
 * The thunk, and its unwind entry, start one instruction early, at a
 * 'nop' never run: an unwinder looks a return address up at the address
 * before it (the call's), and while the first switch into a context
 * runs, the return address it holds is 'kpni_port_aarch64_start'. */
	.globl	kpni_port_aarch64_entry
	.type	kpni_port_aarch64_entry, %function
	.globl	kpni_port_aarch64_start
	.p2align 4
kpni_port_aarch64_entry:
	.cfi_startproc
	/* There is no caller: tell unwinders (gdb, libgcc, perf) to stop. */
	.cfi_undefined x30
	nop
kpni_port_aarch64_start:
1:	mov	x0, x20
	blr	x19
	b	1b
	.cfi_endproc
	.size	kpni_port_aarch64_entry, .-kpni_port_aarch64_entry

	.section .note.GNU-stack,"",%progbits

/* GNU_PROPERTY_AARCH64_FEATURE_1_AND: a link is marked BTI (or PAC)
 * only if every object is, so this file says what it keeps.  In the
 * one-file build (tools/amalgamate.sh, which defines KPNI_PORT) the
 * switch shares an object with C, and the compiler's note covers both. */
#if (KPN_FEATURE_BTI || KPN_FEATURE_PAC) && !defined(KPNI_PORT)
	.pushsection .note.gnu.property, "a"
	.p2align 3
	.word	4
	.word	16
	.word	5
	.asciz	"GNU"
	.word	0xc0000000
	.word	4
	.word	KPN_FEATURE_BTI | KPN_FEATURE_PAC
	.word	0
	.popsection
#endif
