/*
 * tools/qemu/unity.h - run kpn's Unity-style target tests on a bare
 * Cortex-M or RISC-V under QEMU, printing through semihosting.
 *
 * `make test-qemu` (tools/test_qemu.sh) and `make test-qemu-riscv`
 * (tools/test_qemu_riscv.sh) compile test/target/test_*.c
 * with -Itools/qemu, so their `#include "unity.h"` lands here; the runner
 * the script writes calls each test between setUp() and tearDown() and
 * ends with "N passed, N failed".  Real Unity never sees this file.
 *
 * The subset (names, argument order and meaning as in Unity 2.6):
 *   TEST_SOURCE_FILE("path")   (nothing to the compiler)
 *   TEST_ASSERT(c)  TEST_ASSERT_TRUE(c)  TEST_ASSERT_FALSE(c)
 *   TEST_ASSERT_NULL(p)  TEST_ASSERT_NOT_NULL(p)  TEST_ASSERT_EQUAL_PTR(e, a)
 *   TEST_ASSERT_EQUAL(e, a)  TEST_ASSERT_EQUAL_INT(e, a)  TEST_ASSERT_EQUAL_UINT(e, a)
 *   TEST_ASSERT_EQUAL_UINT32(e, a)  TEST_ASSERT_EQUAL_HEX32(e, a)
 *   TEST_ASSERT_EQUAL_size_t(e, a)
 *   TEST_ASSERT_GREATER_THAN(t, a)  TEST_ASSERT_GREATER_OR_EQUAL(t, a)
 *   TEST_ASSERT_LESS_THAN(t, a)  TEST_ASSERT_LESS_OR_EQUAL(t, a)
 *   TEST_ASSERT_EQUAL_STRING(e, a)  TEST_ASSERT_*_MESSAGE(..., msg) of the above
 *   TEST_FAIL()  TEST_FAIL_MESSAGE(m)  TEST_IGNORE()  TEST_IGNORE_MESSAGE(m)
 *   TEST_MESSAGE(m)
 *
 * A failure prints "file:line:test:FAIL: ..." and ends the test by
 * longjmp when it happens on the host thread.  Inside a kpn process (on
 * its own stack; PSP on Cortex-M) a longjmp would leave the net
 * mid-switch and, on Cortex-M, the stack selection behind, so there a
 * failure is recorded and the process goes on; the test fails when it
 * returns.  Assert after kpn_run where you can.
 */
#ifndef KPN_TOOLS_QEMU_UNITY_H
#define KPN_TOOLS_QEMU_UNITY_H

#include <stddef.h>
#include <stdint.h>

void setUp(void);
void tearDown(void);

#define TEST_SOURCE_FILE(path)
#define TEST_INCLUDE_PATH(path)

/* tools/qemu/unity_semihost.c */
void kt_unity_fail(int line, const char *what, const char *msg);
void kt_unity_fail_int(int line, const char *what, int64_t expected, int64_t actual, const char *msg);
void kt_unity_ignore(int line, const char *msg);
void kt_unity_message(const char *msg);
int kt_unity_streq(const char *a, const char *b);
/* Semihosting output for tests that print figures. */
void kt_print(const char *s);
void kt_print_uint(uint64_t v);

#define KT_CHECK(c, what, msg) do { if (!(c)) kt_unity_fail(__LINE__, (what), (msg)); } while (0)
#define KT_CMP(op, e, a, what, msg) do { int64_t kt_e = (int64_t)(e), kt_a = (int64_t)(a); \
    if (!(kt_a op kt_e)) kt_unity_fail_int(__LINE__, (what), kt_e, kt_a, (msg)); } while (0)

#define TEST_ASSERT_MESSAGE(c, m) KT_CHECK((c), "expected TRUE", (m))
#define TEST_ASSERT(c) TEST_ASSERT_MESSAGE((c), NULL)
#define TEST_ASSERT_TRUE(c) TEST_ASSERT_MESSAGE((c), NULL)
#define TEST_ASSERT_TRUE_MESSAGE(c, m) TEST_ASSERT_MESSAGE((c), (m))
#define TEST_ASSERT_FALSE(c) KT_CHECK(!(c), "expected FALSE", NULL)
#define TEST_ASSERT_FALSE_MESSAGE(c, m) KT_CHECK(!(c), "expected FALSE", (m))
#define TEST_ASSERT_NULL(p) KT_CHECK((p) == NULL, "expected NULL", NULL)
#define TEST_ASSERT_NOT_NULL(p) KT_CHECK((p) != NULL, "expected non-NULL", NULL)
#define TEST_ASSERT_EQUAL_PTR(e, a) KT_CHECK((const void *)(e) == (const void *)(a), "pointers differ", NULL)
#define TEST_ASSERT_EQUAL_INT_MESSAGE(e, a, m) KT_CMP(==, (e), (a), "expected", (m))
#define TEST_ASSERT_EQUAL_INT(e, a) TEST_ASSERT_EQUAL_INT_MESSAGE((e), (a), NULL)
#define TEST_ASSERT_EQUAL(e, a) TEST_ASSERT_EQUAL_INT((e), (a))
#define TEST_ASSERT_EQUAL_UINT(e, a) KT_CMP(==, (e), (a), "expected", NULL)
#define TEST_ASSERT_EQUAL_UINT_MESSAGE(e, a, m) KT_CMP(==, (e), (a), "expected", (m))
#define TEST_ASSERT_EQUAL_UINT32(e, a) KT_CMP(==, (uint32_t)(e), (uint32_t)(a), "expected", NULL)
#define TEST_ASSERT_EQUAL_HEX32(e, a) KT_CMP(==, (uint32_t)(e), (uint32_t)(a), "expected", NULL)
#define TEST_ASSERT_EQUAL_size_t(e, a) KT_CMP(==, (e), (a), "expected", NULL)
#define TEST_ASSERT_EQUAL_size_t_MESSAGE(e, a, m) KT_CMP(==, (e), (a), "expected", (m))
#define TEST_ASSERT_GREATER_THAN(t, a) KT_CMP(>, (t), (a), "threshold", NULL)
#define TEST_ASSERT_GREATER_OR_EQUAL(t, a) KT_CMP(>=, (t), (a), "threshold", NULL)
#define TEST_ASSERT_LESS_THAN(t, a) KT_CMP(<, (t), (a), "threshold", NULL)
#define TEST_ASSERT_LESS_OR_EQUAL(t, a) KT_CMP(<=, (t), (a), "threshold", NULL)
#define TEST_ASSERT_EQUAL_STRING(e, a) KT_CHECK(kt_unity_streq((e), (a)), "strings differ", NULL)
#define TEST_FAIL() kt_unity_fail(__LINE__, "failed", NULL)
#define TEST_FAIL_MESSAGE(m) kt_unity_fail(__LINE__, "failed", (m))
#define TEST_IGNORE() kt_unity_ignore(__LINE__, NULL)
#define TEST_IGNORE_MESSAGE(m) kt_unity_ignore(__LINE__, (m))
#define TEST_MESSAGE(m) kt_unity_message(m)

#endif /* KPN_TOOLS_QEMU_UNITY_H */
