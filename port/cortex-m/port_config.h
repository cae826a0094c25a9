/* SPDX-License-Identifier: MIT */
/* The Cortex-M port's settings: measured stack minimum and guard, found by the core from the target alone. */
#ifndef KPN_PORT_CORTEXM_CONFIG_H
#define KPN_PORT_CORTEXM_CONFIG_H

/*
 * The smallest process stack, measured under QEMU by test/target/
 * (test_stack_min prints the figures): a process that sends and
 * receives from a shallow function peaks at PEAK bytes (the 112-byte
 * switch frame with FP state included), and an interrupt that lands on
 * it adds its exception frame, 104 bytes with live FP state (32
 * without).  The guard band is inside the stack here.  So the minimum is
 * guard + peak + exception frame, and 16 bytes of margin:
 *     32 + 152 + 104 = 288  ->  304
 * (Cortex-M3, no FPU: 32 + 100 + 32 = 164.)
 * Unoptimised (-O0, the debug build of many IDEs) every call keeps its
 * locals in its frame and the same process peaks at 656 bytes, so far
 * past 304 that the exception frame lands below the guard band, on
 * whatever the arena holds there: 32 + 656 + 104 = 792  ->  808.
 * The compiler names no other level (-Og and -O1 define __OPTIMIZE__
 * as -O2 does); docs/porting.md gives their figures.
 * A handler's own frames go on MSP (processes run on PSP), so they are
 * not counted; a process that calls deeper needs what its calls need
 * (size it with kpn_proc_stats' high-water mark).
 */
#ifndef KPN_STACK_MIN
#if defined(__OPTIMIZE__)
#define KPN_STACK_MIN 304u
#else
#define KPN_STACK_MIN 808u
#endif
#endif

/* Two words of pattern at the bottom of each stack are checked at every
 * switch; the rest of the band whole at the end of a run. */
#ifndef KPN_STACK_GUARD
#define KPN_STACK_GUARD 32
#endif

#endif /* KPN_PORT_CORTEXM_CONFIG_H */
