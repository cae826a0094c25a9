/* SPDX-License-Identifier: MIT */
/* The AMD64 context switch and the entry thunk a fresh context starts in (System V ABI, ELF). */

#if !defined(__x86_64__) || !defined(__ELF__)
#error "port/amd64 needs an x86-64 ELF target with the System V ABI; build port/posix instead."
#endif

/*
 * A suspended context is nothing but its stack pointer: everything the
 * ABI makes callee-saved is pushed on its own stack, and the context
 * object holds where that frame ends.  One frame, 64 bytes:
 *
 *          higher addresses
 *        +--------------------+
 *   +56  | return address     |  'ret' resumes here
 *   +48  | rbp                |
 *   +40  | rbx                |
 *   +32  | r12                |
 *   +24  | r13                |
 *   +16  | r14                |
 *    +8  | r15                |
 *    +4  | x87 CW  |  (pad)   |  fnstcw / fldcw: 16 bits
 *    +0  | MXCSR              |  stmxcsr / ldmxcsr: 32 bits
 *        +--------------------+  <- saved rsp, stored in the context
 *          lower addresses
 *
 * port_amd64.c builds the same frame by hand at the top of a fresh stack,
 * with the return address pointing at 'kpni_port_amd64_start'; the two
 * files must agree on this picture.
 *
 * The switch ends in 'ret', not 'pop; jmp': every switch in the core goes
 * through one call site, so the return-stack buffer predicts the 'ret'
 * when a context resumes at that site, which an indirect 'jmp' through
 * one address never is.
 *
 * Shadow stacks (CET SHSTK) cannot work here, since 'ret' lands on a
 * different stack than the matching 'call'.  This file deliberately
 * carries no .note.gnu.property, so a link that includes it is not
 * marked shadow-stack compatible.  'endbr64' is emitted when the compiler
 * asks for IBT, and is a no-op otherwise.
 */

/* In the one-file build (tools/amalgamate.sh, which defines KPNI_PORT)
 * the switch shares an object with C, and the compiler's marking would
 * call it shadow-stack compatible: picked by default, the amalgamation
 * takes posix then; asked for by name, it stops here. */
#if defined(KPNI_PORT) && defined(__CET__) && (__CET__ & 2)
#error "KPN_PORT=amd64 cannot keep a shadow stack: build kpn.c with -fcf-protection=branch (or none), or take KPN_PORT=posix"
#endif

#if defined(__CET__) && (__CET__ & 1)
#define KPN_ENDBR endbr64
#else
#define KPN_ENDBR
#endif

	.text

/* void kpn_port_switch(kpn_port_ctx *from, kpn_port_ctx *to)
 *   rdi = from, rsi = to; the context's first 8 bytes hold the saved rsp. */
	.globl	kpn_port_switch
	.type	kpn_port_switch, @function
	.p2align 4
kpn_port_switch:
	.cfi_startproc
	KPN_ENDBR
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r13, 0
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r14, 0
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r15, 0
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)

	/* The only two instructions that know about two stacks.  Every
	 * frame has the layout above, so the CFI stays true across them:
	 * a debugger stopped below sees the resumed context's frame. */
	movq	%rsp, (%rdi)
	movq	(%rsi), %rsp

	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%r15
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r15
	popq	%r14
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r14
	popq	%r13
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r13
	popq	%r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r12
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	kpn_port_switch, .-kpn_port_switch

/* The first switch into a fresh context "returns" to
 * 'kpni_port_amd64_start', with the initial frame popped: r12 = fn,
 * r13 = arg, rbp = 0, and rsp at the 16-byte aligned top of the stack,
 * so the 'call' below enters 'fn' with rsp = 8 (mod 16) exactly as an
 * ordinary call would.  If 'fn' returns, it is called again (port.h):
 * r12 and r13 are callee-saved, and rsp is back at the top.  Reached
 * only by 'ret', never by an indirect jump or call, so it needs no
 * 'endbr64'.
 *
 * The thunk, and its unwind entry, start one byte early, at a 'nop'
 * never run: an unwinder looks a return address up at the byte before
 * it (the call's), and while the first switch into a context runs, the
 * return address it holds is 'kpni_port_amd64_start'. */
	.globl	kpni_port_amd64_entry
	.type	kpni_port_amd64_entry, @function
	.globl	kpni_port_amd64_start
	.p2align 4
kpni_port_amd64_entry:
	.cfi_startproc
	/* There is no caller: tell unwinders (gdb, libgcc, perf) to stop. */
	.cfi_undefined %rip
	nop
kpni_port_amd64_start:
1:	movq	%r13, %rdi
	call	*%r12
	jmp	1b
	.cfi_endproc
	.size	kpni_port_amd64_entry, .-kpni_port_amd64_entry

	.section .note.GNU-stack,"",@progbits
