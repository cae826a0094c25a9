/* SPDX-License-Identifier: MIT */
/* AMD64 context set-up: the context is a saved stack pointer, and a fresh one gets a hand-built frame that switch_amd64.S pops. */

#include <stddef.h>
#include <stdint.h>

#include "port.h"

#if !defined(__x86_64__)
#error "port/amd64 needs an x86-64 target; build port/posix instead."
#endif

/* The saved rsp.  The core rounds the carve up to 16 bytes, with a word
 * of its own in the rest (kpn_int.h, KPNI_CTX_ROOM). */
struct kpn_port_ctx {
    void *stack_pointer;
};

/* The frame 'kpn_port_switch' pushes, lowest address first; see the
 * picture in switch_amd64.S, which this must match field for field. */
struct switch_frame {
    uint32_t mxcsr;
    uint16_t x87_control;
    uint16_t unused;
    uintptr_t r15;
    uintptr_t r14;
    uintptr_t r13;
    uintptr_t r12;
    uintptr_t rbx;
    uintptr_t rbp;
    uintptr_t return_address;
};

/* C99 has no static_assert: a negative array size fails the build. */
typedef char check_ctx_size[(sizeof(struct kpn_port_ctx) == 8) ? 1 : -1];
typedef char check_frame_size[(sizeof(struct switch_frame) == 64) ? 1 : -1];

/* The System V defaults: all exceptions masked, round to nearest; x87
 * additionally at 64-bit (extended) precision. */
#define INITIAL_MXCSR 0x1F80u
#define INITIAL_X87_CONTROL 0x037Fu

/* In switch_amd64.S, inside its entry thunk: moves r13 to rdi and
 * calls r12, for ever. */
extern void kpni_port_amd64_start(void);

size_t kpn_port_ctx_size(void)
{
    return sizeof(struct kpn_port_ctx);
}

/*
 * The start-up frame takes the top 64 bytes of the stack:
 *
 *   stack + size  ->  +-------------------------------+  (16-byte aligned)
 *                     | kpni_port_amd64_start         |
 *                     | rbp = 0, rbx = 0              |
 *                     | r12 = fn, r13 = arg           |
 *                     | r14 = 0, r15 = 0              |
 *                     | MXCSR, x87 CW                 |
 *   saved rsp     ->  +-------------------------------+  stack + size - 64
 *
 * After the first switch pops it, rsp is back at 'stack + size', and the
 * entry's 'call' pushes its return address into the top 8 bytes, so 'fn'
 * starts with rsp = stack + size - 8, i.e. 8 (mod 16) as after any call.
 * A zero rbp ends frame-pointer walks there too.
 *
 * Function pointers go through uintptr_t: implementation-defined in C99
 * but exact on every x86-64 compiler, and it is what a register holds.
 */
void kpn_port_init(kpn_port_ctx *ctx, void *stack, size_t size,
                   void (*fn)(void *), void *arg)
{
    struct switch_frame *frame =
        (struct switch_frame *)(void *)((unsigned char *)stack + size) - 1;

    frame->mxcsr = INITIAL_MXCSR;
    frame->x87_control = INITIAL_X87_CONTROL;
    frame->unused = 0;
    frame->r15 = 0;
    frame->r14 = 0;
    frame->r13 = (uintptr_t)arg;
    frame->r12 = (uintptr_t)fn;
    frame->rbx = 0;
    frame->rbp = 0;
    frame->return_address = (uintptr_t)kpni_port_amd64_start;

    ctx->stack_pointer = frame;
}
