/* SPDX-License-Identifier: MIT */
/* memcpy and memset for the RISC-V test firmware: the toolchain has no C library, and the core needs these two. */
#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memset(void *dst, int c, size_t n);

/* Byte loops, compiled without the builtins that would call themselves. */
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
