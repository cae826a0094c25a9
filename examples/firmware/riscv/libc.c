/* SPDX-License-Identifier: MIT */
/* memcpy and memset, which the core needs and a toolchain without a C library (Debian's riscv64-unknown-elf) lacks. */
#include <stddef.h>

/* Byte loops, built with -ffreestanding and
 * -fno-tree-loop-distribute-patterns (Makefile): otherwise GCC turns
 * them back into calls to themselves. */
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memset(void *dst, int c, size_t n);

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    while (n-- != 0)
        *d++ = *s++;
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;

    while (n-- != 0)
        *d++ = (unsigned char)c;
    return dst;
}
