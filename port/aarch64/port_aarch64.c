/* SPDX-License-Identifier: MIT */
/* AArch64 context set-up: the context is a saved stack pointer, and a fresh one gets a hand-built frame that switch_aarch64.S loads. */

#include <stddef.h>
#include <stdint.h>

#include "port.h"

#if !defined(__aarch64__) || defined(__ILP32__)
#error "port/aarch64 needs an AArch64 target with 64-bit pointers; build port/posix instead."
#endif

/* The saved sp.  The core rounds the carve up to 16 bytes, with a word
 * of its own in the rest (kpn_int.h, KPNI_CTX_ROOM). */
struct kpn_port_ctx {
    void *stack_pointer;
};

/* The frame 'kpn_port_switch' stores, lowest address first; see the
 * picture in switch_aarch64.S, which this must match field for field. */
struct switch_frame {
    uint64_t fpcr;
    uint64_t unused;
    uint64_t d[8]; /* d8-d15 */
    uint64_t x[10]; /* x19-x28 */
    uint64_t fp; /* x29 */
    uint64_t lr; /* x30 */
};

/* C99 has no static_assert: a negative array size fails the build. */
typedef char check_ctx_size[(sizeof(struct kpn_port_ctx) == 8) ? 1 : -1];
typedef char check_frame_size[(sizeof(struct switch_frame) == 176) ? 1 : -1];

/* In switch_aarch64.S, inside its entry thunk: moves x20 to x0 and
 * calls x19, for ever. */
extern void kpni_port_aarch64_start(void);

size_t kpn_port_ctx_size(void)
{
    return sizeof(struct kpn_port_ctx);
}

/*
 * The start-up frame takes the top 176 bytes of the stack:
 *
 *   stack + size  ->  +-------------------------------+  (16-byte aligned)
 *                     | lr = kpni_port_aarch64_start  |
 *                     | fp = 0                        |
 *                     | x19 = fn, x20 = arg, x21-x28 0|
 *                     | d8-d15 = 0                    |
 *                     | FPCR = 0                      |
 *   saved sp      ->  +-------------------------------+  stack + size - 176
 *
 * After the first switch loads it, sp is back at 'stack + size', and the
 * entry's 'blr' enters 'fn' there: AAPCS64 keeps sp 16-aligned at every
 * call and pushes no return address.  A zero fp ends frame-record walks
 * there too.  FPCR 0 is Linux's default for a new thread: round to
 * nearest, no traps, no flush-to-zero, no default NaN.
 *
 * Function pointers go through uintptr_t: implementation-defined in C99
 * but exact on every AArch64 compiler, and it is what a register holds.
 */
void kpn_port_init(kpn_port_ctx *ctx, void *stack, size_t size,
                   void (*fn)(void *), void *arg)
{
    struct switch_frame *frame =
        (struct switch_frame *)((unsigned char *)stack + size) - 1;
    int i;

    frame->fpcr = 0;
    frame->unused = 0;
    for (i = 0; i < 8; i++)
        frame->d[i] = 0;
    for (i = 0; i < 10; i++)
        frame->x[i] = 0;
    frame->x[0] = (uintptr_t)fn;
    frame->x[1] = (uintptr_t)arg;
    frame->fp = 0;
    frame->lr = (uintptr_t)kpni_port_aarch64_start;

    ctx->stack_pointer = frame;
}
