/* SPDX-License-Identifier: MIT */
/* The mock of port.h itself: the part of CMock's interface the suite uses (docs/testing.md's table) means the same under both runners, CMock's mock under Ceedling and tools/cmocka/gen_mock.sh's under make test. */
#include "unity.h"
#include "mock_port.h"

/* No source: every kpn_port_* call lands in the mock. */

void setUp(void) {}
void tearDown(void) {}

static unsigned cpus_stub(int cmock_num_calls)
{
    return 100u + (unsigned)cmock_num_calls;
}

/* Queued IgnoreAndReturn values come back in turn, then the last for
 * ever. */
void test_ignore_and_return_hands_back_its_values_in_turn_then_the_last(void)
{
    kpn_port_cpus_IgnoreAndReturn(3);
    kpn_port_cpus_IgnoreAndReturn(5);
    TEST_ASSERT_EQUAL_UINT(3, kpn_port_cpus());
    TEST_ASSERT_EQUAL_UINT(5, kpn_port_cpus());
    TEST_ASSERT_EQUAL_UINT(5, kpn_port_cpus());
    TEST_ASSERT_EQUAL_UINT(5, kpn_port_cpus());
}

/* StopIgnore on a function with a result drops the oldest call still
 * queued, here the value an IgnoreAndReturn queued and no call took;
 * expectations then hold again. */
void test_stop_ignore_drops_an_untaken_return_and_checks_expectations_again(void)
{
    kpn_port_cpus_IgnoreAndReturn(3);
    kpn_port_cpus_StopIgnore();
    kpn_port_cpus_ExpectAndReturn(9);
    TEST_ASSERT_EQUAL_UINT(9, kpn_port_cpus());
}

/* On a void function Ignore queues nothing, so StopIgnore drops
 * nothing: an expectation set before the Ignore is still there for the
 * call after the StopIgnore (which would otherwise fail the test as a
 * call more than expected). */
void test_stop_ignore_on_a_void_function_keeps_the_expectations_queued(void)
{
    kpn_port_yield_Expect();
    kpn_port_yield_Ignore();
    kpn_port_yield_StopIgnore();
    kpn_port_yield();
}

/* Expectations with arguments: each call matches the next one's
 * arguments (a pointer by its address) and returns its value. */
void test_expectations_with_arguments_are_met_in_order(void)
{
    static unsigned char pages[2];

    kpn_port_guard_ExpectAndReturn(&pages[0], 1, 0);
    kpn_port_guard_ExpectAndReturn(&pages[1], 0, -1);
    TEST_ASSERT_EQUAL_INT(0, kpn_port_guard(&pages[0], 1));
    TEST_ASSERT_EQUAL_INT(-1, kpn_port_guard(&pages[1], 0));
}

/* A stub (both names) takes every call, with the count of calls before
 * it. */
void test_a_stub_takes_every_call_with_its_number(void)
{
    kpn_port_cpus_StubWithCallback(cpus_stub);
    TEST_ASSERT_EQUAL_UINT(100, kpn_port_cpus());
    TEST_ASSERT_EQUAL_UINT(101, kpn_port_cpus());
    kpn_port_cpus_Stub(cpus_stub);
    TEST_ASSERT_EQUAL_UINT(100, kpn_port_cpus());
}

/* AddCallback checks each call against the next expectation, then
 * returns what the callback returns. */
void test_add_callback_takes_the_expectations_and_returns_the_callbacks_value(void)
{
    kpn_port_cpus_ExpectAndReturn(1);
    kpn_port_cpus_ExpectAndReturn(2);
    kpn_port_cpus_AddCallback(cpus_stub);
    TEST_ASSERT_EQUAL_UINT(100, kpn_port_cpus());
    TEST_ASSERT_EQUAL_UINT(101, kpn_port_cpus());
}
