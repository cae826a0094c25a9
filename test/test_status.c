/* SPDX-License-Identifier: MIT */
/* Status strings: one distinct sentence per code, never NULL. */
#include <string.h>
#include "unity.h"
#include "kpn.h"

TEST_SOURCE_FILE("src/status.c")

void setUp(void) {}
void tearDown(void) {}

static int same(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b)
        ++a, ++b;
    return *a == *b;
}

void test_every_status_has_its_own_sentence(void)
{
    int i, j;

    for (i = 0; i < KPN_STATUS_COUNT; ++i) {
        const char *s = kpn_strerror((kpn_status)i);
        TEST_ASSERT_NOT_NULL(s);
        TEST_ASSERT_TRUE(s[0] != '\0');
        for (j = 0; j < i; ++j)
            TEST_ASSERT_FALSE(same(s, kpn_strerror((kpn_status)j)));
    }
}

void test_unknown_values_still_get_a_sentence(void)
{
    TEST_ASSERT_NOT_NULL(kpn_strerror(KPN_STATUS_COUNT));
    TEST_ASSERT_NOT_NULL(kpn_strerror((kpn_status)-1));
    TEST_ASSERT_NOT_NULL(kpn_strerror((kpn_status)1000));
    TEST_ASSERT_TRUE(same(kpn_strerror((kpn_status)1000), kpn_strerror((kpn_status)-1)));
    /* the sentence docs/errors.md gives, and none of a real status */
    TEST_ASSERT_EQUAL_STRING("unknown status", kpn_strerror(KPN_STATUS_COUNT));
    TEST_ASSERT_EQUAL_STRING("unknown status", kpn_strerror((kpn_status)-1));
}

/* What a firmware sees first when it sizes a stack too small: the
 * sentence must point at the minimum, not at "some argument". */
void test_the_invalid_argument_sentence_names_the_stack_minimum(void)
{
    TEST_ASSERT_NOT_NULL(strstr(kpn_strerror(KPN_EINVAL), "kpn_stack_min()"));
    TEST_ASSERT_NOT_NULL(strstr(kpn_strerror(KPN_EINVAL), "stale"));
}

/* An ABI promise (kpn.h: 0 is success, so `if (kpn_x(...))` tests for
 * failure), kept here where a renumbering of the enum would break it. */
void test_ok_is_zero(void)
{
    TEST_ASSERT_EQUAL_INT(0, KPN_OK);
}
