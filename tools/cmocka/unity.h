/*
 * tools/cmocka/unity.h - run kpn's Unity-style tests on cmocka.
 *
 * `make test` compiles test/test_*.c with -Itools/cmocka, so their
 * `#include "unity.h"` lands here instead of in Unity. This header maps the
 * Unity subset below onto cmocka with Unity's own semantics; the runner that
 * tools/cmocka/gen_runner.sh writes supplies main(), setUp()/tearDown()
 * calls and the shared state declared at the end of this file. Ceedling
 * (`ceedling test:all`) never sees this file and uses real Unity instead.
 * A test's `#include "mock_x.h"` gets the mock tools/cmocka/gen_mock.sh
 * writes from x.h (CMock's names and meaning); it fails a test through
 * this header too.
 * It lives outside test/ on purpose: Ceedling puts every folder under test/
 * on its include path, and a unity.h there would shadow Unity's.
 *
 * THE SUPPORTED SUBSET (test files may use these and nothing else from Unity;
 * every name, argument order and meaning is that of Unity 2.7's unity.h):
 *
 *   Build directives (expand to nothing; no trailing semicolon at file scope)
 *     TEST_SOURCE_FILE("path/x.c")   TEST_INCLUDE_PATH("path")
 *
 *   Boolean and pointers
 *     TEST_ASSERT(cond)              TEST_ASSERT_MESSAGE(cond, msg)
 *     TEST_ASSERT_TRUE(cond)         TEST_ASSERT_TRUE_MESSAGE(cond, msg)
 *     TEST_ASSERT_FALSE(cond)        TEST_ASSERT_FALSE_MESSAGE(cond, msg)
 *     TEST_ASSERT_NULL(ptr)          TEST_ASSERT_NULL_MESSAGE(ptr, msg)
 *     TEST_ASSERT_NOT_NULL(ptr)      TEST_ASSERT_NOT_NULL_MESSAGE(ptr, msg)
 *     TEST_ASSERT_EQUAL_PTR(expected, actual)
 *     TEST_ASSERT_EQUAL_PTR_MESSAGE(expected, actual, msg)
 *
 *   Integers - always (expected, actual)
 *     TEST_ASSERT_EQUAL(expected, actual)          same as EQUAL_INT
 *     TEST_ASSERT_NOT_EQUAL(expected, actual)      plain `!=` of the operands
 *     TEST_ASSERT_EQUAL_INT(expected, actual)      TEST_ASSERT_EQUAL_INT_MESSAGE
 *     TEST_ASSERT_EQUAL_INT64(expected, actual)
 *     TEST_ASSERT_EQUAL_UINT(expected, actual)     TEST_ASSERT_EQUAL_UINT_MESSAGE
 *     TEST_ASSERT_EQUAL_UINT32(expected, actual)   (compares the low 32 bits)
 *     TEST_ASSERT_EQUAL_UINT64(expected, actual)   TEST_ASSERT_EQUAL_UINT64_MESSAGE
 *     TEST_ASSERT_EQUAL_size_t(expected, actual)   TEST_ASSERT_EQUAL_size_t_MESSAGE
 *     TEST_ASSERT_EQUAL_HEX8(expected, actual)     (compares the low 8 bits)
 *     TEST_ASSERT_EQUAL_HEX32(expected, actual)    (compares the low 32 bits)
 *     TEST_ASSERT_UINT_WITHIN(delta, expected, actual)  |actual-expected| <= delta
 *
 *   Integer ordering - always (threshold, actual), signed comparison
 *     TEST_ASSERT_GREATER_THAN(threshold, actual)      passes if actual >  threshold
 *     TEST_ASSERT_GREATER_OR_EQUAL(threshold, actual)  passes if actual >= threshold
 *     TEST_ASSERT_LESS_THAN(threshold, actual)         passes if actual <  threshold
 *     TEST_ASSERT_LESS_OR_EQUAL(threshold, actual)     passes if actual <= threshold
 *
 *   Strings, memory and arrays (a length or count of 0 fails, as in Unity)
 *     TEST_ASSERT_EQUAL_STRING(expected, actual)       (two NULLs are equal)
 *     TEST_ASSERT_EQUAL_MEMORY(expected, actual, len)
 *     TEST_ASSERT_EQUAL_MEMORY_MESSAGE(expected, actual, len, msg)
 *     TEST_ASSERT_EQUAL_INT_ARRAY(expected, actual, num_elements)   (int[])
 *     TEST_ASSERT_EQUAL_UINT8_ARRAY(expected, actual, num_elements) (bytes)
 *
 *   Control
 *     TEST_FAIL()  TEST_FAIL_MESSAGE(msg)      fail now
 *     TEST_IGNORE()  TEST_IGNORE_MESSAGE(msg)  end the test, count it skipped
 *     TEST_PASS()                              end the test now, passed
 *     TEST_MESSAGE(msg)                        print a note, keep going
 *
 * Every argument is evaluated exactly once. Integers are compared as 64-bit
 * values (what Unity does on 64-bit hosts); sized variants truncate first.
 * A failure prints "file:line:test:FAIL: <details>" (Unity's format, both
 * values included) and ends the current test through cmocka; tearDown()
 * still runs.
 */
#ifndef KPN_TOOLS_CMOCKA_UNITY_H
#define KPN_TOOLS_CMOCKA_UNITY_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

/* Every test file defines both (possibly empty); the runner calls them. */
void setUp(void);
void tearDown(void);

/* Ceedling reads these as text; to the compiler they are nothing. */
#define TEST_SOURCE_FILE(a)
#define TEST_INCLUDE_PATH(a)

/* ------------------------------------------------------------------------ */
/* State shared with the generated runner (defined there, one per binary).  */

struct kpn_unity_state {
    jmp_buf abort_frame;      /* where TEST_PASS() returns to            */
    volatile int abort_armed; /* abort_frame is live                     */
    volatile int ignored;     /* current test called TEST_IGNORE*()      */
    const char *test_name;    /* current test, for messages              */
    const char *test_file;    /* the test file, for mock failures        */
    int test_line;            /* the current test's line, likewise       */
    /* Mocks (tools/cmocka/gen_mock.sh): expectations set and expected
     * calls made in this test, across all mocks; CMock's
     * GlobalExpectCount and GlobalVerifyOrder. */
    int expect_count;
    int verify_order;
};
extern struct kpn_unity_state kpn_unity_state;

#if defined(__GNUC__) || defined(__clang__)
#define KPN_UNITY_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define KPN_UNITY_PRINTF_(f, a)
#endif

static inline const char *kpn_unity_name_(void)
{
    return kpn_unity_state.test_name != NULL ? kpn_unity_state.test_name : "?";
}

static inline const char *kpn_unity_file_(void)
{
    return kpn_unity_state.test_file != NULL ? kpn_unity_state.test_file : "?";
}

/* Print "file:line:test:FAIL: <details>[. msg]" and end the test as failed. */
static inline void kpn_unity_failf_(const char *file, int line, const char *msg,
                                    const char *fmt, ...) KPN_UNITY_PRINTF_(4, 5);
static inline void kpn_unity_failf_(const char *file, int line, const char *msg,
                                    const char *fmt, ...)
{
    va_list ap;

    print_error("%s:%d:%s:FAIL: ", file, line, kpn_unity_name_());
    va_start(ap, fmt);
    vprint_error(fmt, ap);
    va_end(ap);
    if (msg != NULL) {
        print_error(". %s", msg);
    }
    print_error("\n");
    _fail(file, line);
}

static inline void kpn_unity_check_(int ok, const char *what, const char *expr,
                                    const char *msg, const char *file, int line)
{
    if (!ok) {
        kpn_unity_failf_(file, line, msg, "%s: %s", what, expr);
    }
}

static inline void kpn_unity_eq_i64_(int64_t expected, int64_t actual, const char *msg,
                                     const char *file, int line)
{
    if (expected != actual) {
        kpn_unity_failf_(file, line, msg, "Expected %lld Was %lld",
                         (long long)expected, (long long)actual);
    }
}

static inline void kpn_unity_eq_u64_(uint64_t expected, uint64_t actual, const char *msg,
                                     const char *file, int line)
{
    if (expected != actual) {
        kpn_unity_failf_(file, line, msg, "Expected %llu Was %llu",
                         (unsigned long long)expected, (unsigned long long)actual);
    }
}

static inline void kpn_unity_eq_hex_(uint64_t expected, uint64_t actual, int digits,
                                     const char *msg, const char *file, int line)
{
    if (expected != actual) {
        kpn_unity_failf_(file, line, msg, "Expected 0x%0*llX Was 0x%0*llX",
                         digits, (unsigned long long)expected,
                         digits, (unsigned long long)actual);
    }
}

static inline void kpn_unity_eq_ptr_(uintptr_t expected, uintptr_t actual, const char *msg,
                                     const char *file, int line)
{
    if (expected != actual) {
        kpn_unity_failf_(file, line, msg, "Expected 0x%llX Was 0x%llX",
                         (unsigned long long)expected, (unsigned long long)actual);
    }
}

/* Unity's comparison codes for the ordering asserts. */
#define KPN_UNITY_GT_ 1
#define KPN_UNITY_GE_ 2
#define KPN_UNITY_LT_ 3
#define KPN_UNITY_LE_ 4

static inline void kpn_unity_order_(int64_t threshold, int64_t actual, int op,
                                    const char *msg, const char *file, int line)
{
    int ok;
    const char *words;

    switch (op) {
    case KPN_UNITY_GT_: ok = actual > threshold;  words = "greater than";          break;
    case KPN_UNITY_GE_: ok = actual >= threshold; words = "greater than or equal to"; break;
    case KPN_UNITY_LT_: ok = actual < threshold;  words = "less than";             break;
    default:            ok = actual <= threshold; words = "less than or equal to"; break;
    }
    if (!ok) {
        kpn_unity_failf_(file, line, msg, "Expected %lld to be %s %lld",
                         (long long)actual, words, (long long)threshold);
    }
}

static inline void kpn_unity_within_(uint64_t delta, uint64_t expected, uint64_t actual,
                                     const char *msg, const char *file, int line)
{
    uint64_t diff = actual > expected ? actual - expected : expected - actual;

    if (diff > delta) {
        kpn_unity_failf_(file, line, msg, "Values Not Within Delta %llu Expected %llu Was %llu",
                         (unsigned long long)delta, (unsigned long long)expected,
                         (unsigned long long)actual);
    }
}

static inline void kpn_unity_eq_str_(const char *expected, const char *actual,
                                     const char *msg, const char *file, int line)
{
    if (expected == NULL && actual == NULL) {
        return;
    }
    if (expected == NULL) {
        kpn_unity_failf_(file, line, msg, "Expected NULL Was \"%s\"", actual);
    } else if (actual == NULL) {
        kpn_unity_failf_(file, line, msg, "Expected \"%s\" Was NULL", expected);
    } else if (strcmp(expected, actual) != 0) {
        kpn_unity_failf_(file, line, msg, "Expected \"%s\" Was \"%s\"", expected, actual);
    }
}

/* Shared checks of the memory/array asserts; non-zero means "compare". */
static inline int kpn_unity_blocks_(const void *expected, const void *actual, size_t count,
                                    const char *msg, const char *file, int line)
{
    if (count == 0) {
        kpn_unity_failf_(file, line, msg, "You Asked Me To Compare Nothing, Which Was Pointless");
        return 0;
    }
    if (expected == actual) {
        return 0; /* same block, or both NULL */
    }
    if (expected == NULL) {
        kpn_unity_failf_(file, line, msg, "Expected pointer to be NULL");
        return 0;
    }
    if (actual == NULL) {
        kpn_unity_failf_(file, line, msg, "Actual pointer was NULL");
        return 0;
    }
    return 1;
}

static inline void kpn_unity_eq_mem_(const void *expected, const void *actual, size_t len,
                                     const char *msg, const char *file, int line)
{
    const unsigned char *e = (const unsigned char *)expected;
    const unsigned char *a = (const unsigned char *)actual;
    size_t i;

    if (!kpn_unity_blocks_(expected, actual, len, msg, file, line)) {
        return;
    }
    for (i = 0; i < len; i++) {
        if (e[i] != a[i]) {
            kpn_unity_failf_(file, line, msg, "Memory Mismatch. Byte %lu Expected 0x%02X Was 0x%02X",
                             (unsigned long)i, (unsigned)e[i], (unsigned)a[i]);
            return;
        }
    }
}

static inline void kpn_unity_eq_int_array_(const void *expected, const void *actual, size_t n,
                                           const char *msg, const char *file, int line)
{
    const unsigned char *e = (const unsigned char *)expected;
    const unsigned char *a = (const unsigned char *)actual;
    size_t i;

    if (!kpn_unity_blocks_(expected, actual, n, msg, file, line)) {
        return;
    }
    for (i = 0; i < n; i++) {
        int ev, av;

        memcpy(&ev, e + i * sizeof(int), sizeof(int));
        memcpy(&av, a + i * sizeof(int), sizeof(int));
        if (ev != av) {
            kpn_unity_failf_(file, line, msg, "Element %lu Expected %d Was %d",
                             (unsigned long)i, ev, av);
            return;
        }
    }
}

static inline void kpn_unity_eq_u8_array_(const void *expected, const void *actual, size_t n,
                                          const char *msg, const char *file, int line)
{
    const unsigned char *e = (const unsigned char *)expected;
    const unsigned char *a = (const unsigned char *)actual;
    size_t i;

    if (!kpn_unity_blocks_(expected, actual, n, msg, file, line)) {
        return;
    }
    for (i = 0; i < n; i++) {
        if (e[i] != a[i]) {
            kpn_unity_failf_(file, line, msg, "Element %lu Expected %u Was %u",
                             (unsigned long)i, (unsigned)e[i], (unsigned)a[i]);
            return;
        }
    }
}

static inline void kpn_unity_ignore_(const char *msg, const char *file, int line)
{
    print_message("%s:%d:%s:IGNORE%s%s\n", file, line, kpn_unity_name_(),
                  msg != NULL ? ": " : "", msg != NULL ? msg : "");
    kpn_unity_state.ignored = 1;
    _skip(file, line);
}

static inline void kpn_unity_message_(const char *msg, const char *file, int line)
{
    print_message("%s:%d:%s:INFO: %s\n", file, line, kpn_unity_name_(),
                  msg != NULL ? msg : "");
}

static inline void kpn_unity_pass_(const char *file, int line)
{
    if (kpn_unity_state.abort_armed) {
        longjmp(kpn_unity_state.abort_frame, 1);
    }
    kpn_unity_failf_(file, line, NULL, "TEST_PASS() outside a test");
}

/* ------------------------------------------------------------------------ */
/* Fail, ignore, pass, message                                               */

#define TEST_FAIL()                   kpn_unity_failf_(__FILE__, __LINE__, NULL, "%s", "Failed")
#define TEST_FAIL_MESSAGE(message)    kpn_unity_failf_(__FILE__, __LINE__, (message), "%s", "Failed")
#define TEST_IGNORE()                 kpn_unity_ignore_(NULL, __FILE__, __LINE__)
#define TEST_IGNORE_MESSAGE(message)  kpn_unity_ignore_((message), __FILE__, __LINE__)
#define TEST_PASS()                   kpn_unity_pass_(__FILE__, __LINE__)
#define TEST_MESSAGE(message)         kpn_unity_message_((message), __FILE__, __LINE__)

/* Boolean and NULL */
#define TEST_ASSERT(condition) \
    kpn_unity_check_(((condition) ? 1 : 0), "Expression Evaluated To FALSE", #condition, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_MESSAGE(condition, message) \
    kpn_unity_check_(((condition) ? 1 : 0), "Expression Evaluated To FALSE", #condition, (message), __FILE__, __LINE__)
#define TEST_ASSERT_TRUE(condition) \
    kpn_unity_check_(((condition) ? 1 : 0), "Expected TRUE Was FALSE", #condition, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_TRUE_MESSAGE(condition, message) \
    kpn_unity_check_(((condition) ? 1 : 0), "Expected TRUE Was FALSE", #condition, (message), __FILE__, __LINE__)
#define TEST_ASSERT_FALSE(condition) \
    kpn_unity_check_(((condition) ? 0 : 1), "Expected FALSE Was TRUE", #condition, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_FALSE_MESSAGE(condition, message) \
    kpn_unity_check_(((condition) ? 0 : 1), "Expected FALSE Was TRUE", #condition, (message), __FILE__, __LINE__)
#define TEST_ASSERT_NULL(pointer) \
    kpn_unity_check_(((pointer) == NULL), "Expected NULL Was non-NULL", #pointer, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_NULL_MESSAGE(pointer, message) \
    kpn_unity_check_(((pointer) == NULL), "Expected NULL Was non-NULL", #pointer, (message), __FILE__, __LINE__)
#define TEST_ASSERT_NOT_NULL(pointer) \
    kpn_unity_check_(((pointer) != NULL), "Expected Non-NULL Was NULL", #pointer, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_NOT_NULL_MESSAGE(pointer, message) \
    kpn_unity_check_(((pointer) != NULL), "Expected Non-NULL Was NULL", #pointer, (message), __FILE__, __LINE__)

/* Integers: Unity's default "shorthand" makes EQUAL an int compare and
 * NOT_EQUAL a plain != of the two operands (no casts, no values shown). */
#define TEST_ASSERT_EQUAL(expected, actual) \
    kpn_unity_eq_i64_((int64_t)(expected), (int64_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_NOT_EQUAL(expected, actual) \
    kpn_unity_check_(((expected) != (actual)), "Expected Not-Equal", #expected " != " #actual, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_INT(expected, actual) \
    kpn_unity_eq_i64_((int64_t)(expected), (int64_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_INT_MESSAGE(expected, actual, message) \
    kpn_unity_eq_i64_((int64_t)(expected), (int64_t)(actual), (message), __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_INT64(expected, actual) \
    kpn_unity_eq_i64_((int64_t)(expected), (int64_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_UINT(expected, actual) \
    kpn_unity_eq_u64_((uint64_t)(expected), (uint64_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_UINT_MESSAGE(expected, actual, message) \
    kpn_unity_eq_u64_((uint64_t)(expected), (uint64_t)(actual), (message), __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_UINT32(expected, actual) \
    kpn_unity_eq_u64_((uint32_t)(expected), (uint32_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_UINT64(expected, actual) \
    kpn_unity_eq_u64_((uint64_t)(expected), (uint64_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_UINT64_MESSAGE(expected, actual, message) \
    kpn_unity_eq_u64_((uint64_t)(expected), (uint64_t)(actual), (message), __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_size_t(expected, actual) \
    kpn_unity_eq_u64_((uint64_t)(expected), (uint64_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_size_t_MESSAGE(expected, actual, message) \
    kpn_unity_eq_u64_((uint64_t)(expected), (uint64_t)(actual), (message), __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_HEX8(expected, actual) \
    kpn_unity_eq_hex_((uint8_t)(expected), (uint8_t)(actual), 2, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_HEX32(expected, actual) \
    kpn_unity_eq_hex_((uint32_t)(expected), (uint32_t)(actual), 8, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_UINT_WITHIN(delta, expected, actual) \
    kpn_unity_within_((uint64_t)(delta), (uint64_t)(expected), (uint64_t)(actual), NULL, __FILE__, __LINE__)

/* Ordering: (threshold, actual), signed 64-bit, as Unity's *_INT forms. */
#define TEST_ASSERT_GREATER_THAN(threshold, actual) \
    kpn_unity_order_((int64_t)(threshold), (int64_t)(actual), KPN_UNITY_GT_, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_GREATER_OR_EQUAL(threshold, actual) \
    kpn_unity_order_((int64_t)(threshold), (int64_t)(actual), KPN_UNITY_GE_, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_LESS_THAN(threshold, actual) \
    kpn_unity_order_((int64_t)(threshold), (int64_t)(actual), KPN_UNITY_LT_, NULL, __FILE__, __LINE__)
#define TEST_ASSERT_LESS_OR_EQUAL(threshold, actual) \
    kpn_unity_order_((int64_t)(threshold), (int64_t)(actual), KPN_UNITY_LE_, NULL, __FILE__, __LINE__)

/* Pointers, strings, memory, arrays */
#define TEST_ASSERT_EQUAL_PTR(expected, actual) \
    kpn_unity_eq_ptr_((uintptr_t)(expected), (uintptr_t)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_PTR_MESSAGE(expected, actual, message) \
    kpn_unity_eq_ptr_((uintptr_t)(expected), (uintptr_t)(actual), (message), __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_STRING(expected, actual) \
    kpn_unity_eq_str_((const char *)(expected), (const char *)(actual), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_MEMORY(expected, actual, len) \
    kpn_unity_eq_mem_((const void *)(expected), (const void *)(actual), (size_t)(len), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_MEMORY_MESSAGE(expected, actual, len, message) \
    kpn_unity_eq_mem_((const void *)(expected), (const void *)(actual), (size_t)(len), (message), __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_INT_ARRAY(expected, actual, num_elements) \
    kpn_unity_eq_int_array_((const void *)(expected), (const void *)(actual), (size_t)(num_elements), NULL, __FILE__, __LINE__)
#define TEST_ASSERT_EQUAL_UINT8_ARRAY(expected, actual, num_elements) \
    kpn_unity_eq_u8_array_((const void *)(expected), (const void *)(actual), (size_t)(num_elements), NULL, __FILE__, __LINE__)

#endif /* KPN_TOOLS_CMOCKA_UNITY_H */
