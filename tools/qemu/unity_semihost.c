/* SPDX-License-Identifier: MIT */
/* The Unity adapter's runtime for bare Cortex-M and RISC-V under QEMU: semihosting output, pass/fail counts, exit. */
#include <stdint.h>

#include "unity.h"

#if defined(__riscv)
/* RISC-V semihosting: operation in a0, argument in a1, and the ebreak
 * between two hints that tells the debugger it is a semihosting call.
 * The three must be uncompressed and on one page: a function of its
 * own, 16 bytes in a 16-aligned section, which linker relaxation
 * cannot shift inside (an aligned sequence in inline asm can be). */
__asm__(".pushsection .text.kt_semihost_call, \"ax\", @progbits\n"
        ".option push\n"
        ".option norvc\n"
        ".balign 16\n"
        ".type kt_semihost_call, @function\n"
        "kt_semihost_call:\n"
        "    slli x0, x0, 0x1f\n"
        "    ebreak\n"
        "    srai x0, x0, 7\n"
        "    ret\n"
        ".size kt_semihost_call, . - kt_semihost_call\n"
        ".option pop\n"
        ".popsection");
long kt_semihost_call(long op, const void *arg);

static int semihost(int op, const void *arg)
{
    return (int)kt_semihost_call(op, arg);
}

/* No C library: GCC's own setjmp, which saves what the frame needs. */
typedef void *kt_jmp_buf[5];
#define kt_setjmp(b) __builtin_setjmp(b)
#define kt_longjmp(b) __builtin_longjmp((b), 1)
#else
#include <setjmp.h>

/* ARM semihosting: operation in r0, argument in r1, BKPT 0xAB (M profile). */
static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

typedef jmp_buf kt_jmp_buf;
#define kt_setjmp(b) setjmp(b)
#define kt_longjmp(b) longjmp((b), 1)
#endif

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026
#define ADP_STOPPED_RUN_TIME_ERROR 0x20023

void kt_print(const char *s)
{
    semihost(SYS_WRITE0, s);
}

void kt_print_uint(uint64_t v)
{
    char buf[24];
    int i = (int)sizeof buf - 1;

    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0 && i > 0);
    kt_print(&buf[i]);
}

static void print_int(int64_t v)
{
    if (v < 0) {
        kt_print("-");
        kt_print_uint((uint64_t)0 - (uint64_t)v);
    } else {
        kt_print_uint((uint64_t)v);
    }
}

/* SYS_EXIT: QEMU exits 0 for "application exit", 1 for anything else.
 * The 32-bit call takes the reason itself; the 64-bit one (RV64 too, in
 * QEMU's semihosting) a block of reason and exit status. */
void kt_exit(int failed)
{
    uintptr_t reason = failed ? ADP_STOPPED_RUN_TIME_ERROR : ADP_STOPPED_APPLICATION_EXIT;
#if UINTPTR_MAX > 0xFFFFFFFFu
    static uintptr_t block[2];

    block[0] = reason;
    block[1] = (uintptr_t)failed;
    semihost(SYS_EXIT, block);
#else
    semihost(SYS_EXIT, (const void *)reason);
#endif
    for (;;)
        ;
}

static const char *current_file, *current_test;
static kt_jmp_buf test_exit;
static int test_failed, test_ignored;
static unsigned passed, failed, ignored;

/* Inside a kpn process a longjmp cannot go back: see unity.h.  A
 * process runs on PSP on Cortex-M; on RISC-V, anywhere but the host's
 * stack (tools/qemu/riscv/link_riscv.ld). */
#if defined(__riscv)
extern unsigned char __stack_limit[], __stack_top[];

static int on_process_stack(void)
{
    unsigned char here;
    return &here < __stack_limit || &here >= __stack_top;
}
#else
static int on_process_stack(void)
{
    uint32_t control;
    __asm__ volatile("mrs %0, control" : "=r"(control));
    return (control & 2u) != 0;
}
#endif

static void fail_head(int line, const char *what)
{
    kt_print(current_file);
    kt_print(":");
    kt_print_uint((uint64_t)line);
    kt_print(":");
    kt_print(current_test);
    kt_print(":FAIL: ");
    kt_print(what);
}

static void fail_tail(const char *msg)
{
    if (msg != NULL) {
        kt_print(" ");
        kt_print(msg);
    }
    kt_print("\n");
    test_failed = 1;
    if (!on_process_stack())
        kt_longjmp(test_exit);
}

void kt_unity_fail(int line, const char *what, const char *msg)
{
    fail_head(line, what);
    fail_tail(msg);
}

void kt_unity_fail_int(int line, const char *what, int64_t expected, int64_t actual, const char *msg)
{
    fail_head(line, what);
    kt_print(" ");
    print_int(expected);
    kt_print(" was ");
    print_int(actual);
    fail_tail(msg);
}

void kt_unity_ignore(int line, const char *msg)
{
    kt_print(current_file);
    kt_print(":");
    kt_print_uint((uint64_t)line);
    kt_print(":");
    kt_print(current_test);
    kt_print(":IGNORE: ");
    kt_print(msg != NULL ? msg : "");
    kt_print("\n");
    test_ignored = 1;
    if (!on_process_stack())
        kt_longjmp(test_exit);
}

void kt_unity_message(const char *msg)
{
    kt_print(current_test);
    kt_print(": ");
    kt_print(msg);
    kt_print("\n");
}

int kt_unity_streq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

/* Called by the generated runner, once per test file: the counts run
 * on across files, so that a failure in any file fails the board. */
void kt_unity_begin(const char *file)
{
    current_file = file;
}

void kt_unity_run(void (*test)(void), const char *name)
{
    current_test = name;
    test_failed = test_ignored = 0;
    if (kt_setjmp(test_exit) == 0) {
        setUp();
        test();
    }
    if (kt_setjmp(test_exit) == 0)
        tearDown();
    if (test_failed) {
        failed++;
    } else if (test_ignored) {
        ignored++;
    } else {
        passed++;
        kt_print(current_file);
        kt_print(":");
        kt_print(name);
        kt_print(":PASS\n");
    }
}

int kt_unity_end(const char *board)
{
    kt_print("== ");
    kt_print(board);
    kt_print(": ");
    kt_print_uint(ignored);
    kt_print(" skipped\n");
    kt_print_uint(passed);
    kt_print(" passed, ");
    kt_print_uint(failed);
    kt_print(" failed\n");
    return failed != 0;
}
