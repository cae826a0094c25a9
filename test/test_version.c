/* SPDX-License-Identifier: MIT */
/* Version: the header's string is made of its three numbers, and the library reports the same. */
#include <stdio.h>

#include "unity.h"
#include "kpn.h"

TEST_SOURCE_FILE("src/version.c")

void setUp(void) {}
void tearDown(void) {}

/* The string the three numbers make, written the way a release is named. */
static void expected_version(char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d.%d", KPN_VERSION_MAJOR, KPN_VERSION_MINOR,
             KPN_VERSION_PATCH);
}

void test_version_string_is_made_of_the_three_numbers(void)
{
    char expected[64];

    expected_version(expected, sizeof expected);
    TEST_ASSERT_EQUAL_STRING(expected, KPN_VERSION_STRING);
}

void test_library_reports_the_header_version(void)
{
    char expected[64];
    const char *v = kpn_version();

    expected_version(expected, sizeof expected);
    TEST_ASSERT_NOT_NULL(v);
    TEST_ASSERT_EQUAL_STRING(KPN_VERSION_STRING, v);
    TEST_ASSERT_EQUAL_STRING(expected, v);
}

void test_library_version_is_the_same_on_every_call(void)
{
    TEST_ASSERT_TRUE(kpn_version() == kpn_version());
}
