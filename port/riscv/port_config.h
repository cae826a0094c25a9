/* SPDX-License-Identifier: MIT */
/* The RISC-V port's settings: measured stack minimum and guard; the core finds it by the target (src/kpn_int.h). */
#ifndef KPN_PORT_RISCV_CONFIG_H
#define KPN_PORT_RISCV_CONFIG_H

/*
 * The smallest process stack, measured under QEMU by test/target/
 * (test_stack_min prints the figures, make test-qemu-riscv), with the
 * core at -Os (-O2 gives the same): a process that sends and receives
 * from a shallow function, two FP values live across its calls, peaks
 * at PEAK bytes, the switch frame included.  An interrupt that lands on it adds what the trap entry
 * stores there: RISC-V stacks nothing in hardware, so this assumes an
 * entry that stores the caller-saved registers (and, with F or D, the
 * caller-saved FP registers and fcsr) on the interrupted stack and runs
 * the handler on a stack of its own, as examples/firmware/riscv/crt0.S
 * and FreeRTOS's RISC-V port do.  The guard band is inside the stack.
 * So the minimum is guard + peak + trap frame, and 16 bytes of margin:
 *
 *                 guard + peak + frame
 *     RV32           32 +  128 +   64 = 224  ->  240
 *     RV32 F         32 +  176 +  160 = 368  ->  384
 *     RV32 D         32 +  224 +  240 = 496  ->  512
 *     RV64           32 +  208 +  128 = 368  ->  384
 *     RV64 F         32 +  256 +  224 = 512  ->  528
 *     RV64 D         32 +  304 +  304 = 640  ->  656
 *
 * A handler that runs on the interrupted stack needs its own depth on
 * top (kpn_offer's included); one that moves to its own stack before
 * storing anything (mscratch) needs no frame here.
 *
 * Unoptimised (-O0, the debug build of many IDEs) every call keeps its
 * locals in its frame and the same process peaks several times deeper,
 * so far past the figures above that the trap frame lands below the
 * guard band, on whatever the arena holds there:
 *
 *                 guard + peak + frame
 *     RV32           32 +  792 +   64 =  888  ->   904
 *     RV32 F         32 +  792 +  160 =  984  ->  1000
 *     RV32 D         32 +  792 +  240 = 1064  ->  1080
 *     RV64           32 + 1152 +  128 = 1312  ->  1328
 *     RV64 F         32 + 1152 +  224 = 1408  ->  1424
 *     RV64 D         32 + 1152 +  304 = 1488  ->  1504
 *
 * The compiler names no other level (-Og and -O1 define __OPTIMIZE__
 * as -O2 does); docs/porting.md gives their figures.  A process that
 * calls deeper needs what its calls need (size it with kpn_proc_stats'
 * high-water mark).
 */
#ifndef KPN_STACK_MIN
#if !defined(__OPTIMIZE__)
#if __riscv_xlen == 64
#if defined(__riscv_flen) && __riscv_flen == 64
#define KPN_STACK_MIN 1504u
#elif defined(__riscv_flen)
#define KPN_STACK_MIN 1424u
#else
#define KPN_STACK_MIN 1328u
#endif
#else
#if defined(__riscv_flen) && __riscv_flen == 64
#define KPN_STACK_MIN 1080u
#elif defined(__riscv_flen)
#define KPN_STACK_MIN 1000u
#else
#define KPN_STACK_MIN 904u
#endif
#endif
#elif __riscv_xlen == 64
#if defined(__riscv_flen) && __riscv_flen == 64
#define KPN_STACK_MIN 656u
#elif defined(__riscv_flen)
#define KPN_STACK_MIN 528u
#else
#define KPN_STACK_MIN 384u
#endif
#else
#if defined(__riscv_flen) && __riscv_flen == 64
#define KPN_STACK_MIN 512u
#elif defined(__riscv_flen)
#define KPN_STACK_MIN 384u
#else
#define KPN_STACK_MIN 240u
#endif
#endif
#endif

/* Two words of pattern at the bottom of each stack are checked at every
 * switch; the rest of the band whole at the end of a run. */
#ifndef KPN_STACK_GUARD
#define KPN_STACK_GUARD 32
#endif

#endif /* KPN_PORT_RISCV_CONFIG_H */
