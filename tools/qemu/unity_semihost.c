/* SPDX-License-Identifier: MIT */
/* The Unity adapter's runtime for bare Cortex-M under QEMU: semihosting output, pass/fail counts, exit. */
#include <setjmp.h>
#include <stdint.h>

#include "unity.h"

/* ARM semihosting: operation in r0, argument in r1, BKPT 0xAB (M profile). */
static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

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

/* SYS_EXIT: QEMU exits 0 for "application exit", 1 for anything else. */
void kt_exit(int failed)
{
    semihost(SYS_EXIT, (const void *)(uintptr_t)(failed ? ADP_STOPPED_RUN_TIME_ERROR
                                                         : ADP_STOPPED_APPLICATION_EXIT));
    for (;;)
        ;
}

static const char *current_file, *current_test;
static jmp_buf test_exit;
static int test_failed, test_ignored;
static unsigned passed, failed, ignored;

/* On PSP (inside a kpn process) a longjmp cannot go back: see unity.h. */
static int on_process_stack(void)
{
    uint32_t control;
    __asm__ volatile("mrs %0, control" : "=r"(control));
    return (control & 2u) != 0;
}

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
        longjmp(test_exit, 1);
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
        longjmp(test_exit, 1);
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

/* Called by the generated runner. */
void kt_unity_begin(const char *file)
{
    current_file = file;
    passed = failed = ignored = 0;
}

void kt_unity_run(void (*test)(void), const char *name)
{
    current_test = name;
    test_failed = test_ignored = 0;
    if (setjmp(test_exit) == 0) {
        setUp();
        test();
    }
    if (setjmp(test_exit) == 0)
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
