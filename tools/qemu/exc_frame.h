/* SPDX-License-Identifier: MIT */
/* The start of a naked exception handler that finds the exception frame, for the QEMU test firmware. */
#ifndef KT_EXC_FRAME_H
#define KT_EXC_FRAME_H

/* Leaves in r0 the address of the frame the exception stacked: on MSP
 * or on PSP, as EXC_RETURN bit 2 in lr says.  ARMv6-M (and ARMv8-M
 * Baseline) has no IT blocks, and its 'tst' takes registers only;
 * r1 is free, the hardware having stacked it. */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define KT_FRAME_TO_R0                                                     \
    "mov r0, lr\n\t"                                                       \
    "movs r1, #4\n\t"                                                      \
    "tst r0, r1\n\t"                                                       \
    "bne 1f\n\t"                                                           \
    "mrs r0, msp\n\t"                                                      \
    "b 2f\n"                                                               \
    "1:\n\t"                                                               \
    "mrs r0, psp\n"                                                        \
    "2:\n\t"
#else
#define KT_FRAME_TO_R0                                                     \
    "tst lr, #4\n\t"                                                       \
    "ite eq\n\t"                                                           \
    "mrseq r0, msp\n\t"                                                    \
    "mrsne r0, psp\n\t"
#endif

#endif /* KT_EXC_FRAME_H */
