/* SPDX-License-Identifier: MIT */
/* The AES example's network: its CTR helper against NIST SP 800-38A, and against one sequential encryption. */
#include <string.h>
#include "unity.h"
#include "aes_net.h"

TEST_SOURCE_FILE("examples/aes/aes_net.c")
TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/place.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/runners.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/posix/port_posix.c")
TEST_SOURCE_FILE("port/pthread/thread_pthread.c")

/* Sanitizers grow every frame: stacks grow with them. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLOW 1
#endif
#endif
#ifndef SLOW
#define SLOW 0
#endif
#define STACK (SLOW ? 64u * 1024u : AES_NET_STACK)

/* A 64 KiB buffer, at most 64 workers (k >= 10). */
#define B 16u
#define LEN (1u << B)
#define MAX_WORKERS 64u

static unsigned char arena[8u << 20];
static unsigned char buf[LEN], ref[LEN];
static aes_worker workers[MAX_WORKERS];
static aes_net an;
static mbedtls_aes_context aes;

/* NIST SP 800-38A (2001), appendix F.5.1, CTR-AES128.Encrypt. */
static const unsigned char nist_key[16] = {
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
static const unsigned char nist_counter[16] = {
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};
static const unsigned char nist_plain[64] = {
    0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a,
    0xae, 0x2d, 0x8a, 0x57, 0x1e, 0x03, 0xac, 0x9c, 0x9e, 0xb7, 0x6f, 0xac, 0x45, 0xaf, 0x8e, 0x51,
    0x30, 0xc8, 0x1c, 0x46, 0xa3, 0x5c, 0xe4, 0x11, 0xe5, 0xfb, 0xc1, 0x19, 0x1a, 0x0a, 0x52, 0xef,
    0xf6, 0x9f, 0x24, 0x45, 0xdf, 0x4f, 0x9b, 0x17, 0xad, 0x2b, 0x41, 0x7b, 0xe6, 0x6c, 0x37, 0x10};
static const unsigned char nist_cipher[64] = {
    0x87, 0x4d, 0x61, 0x91, 0xb6, 0x20, 0xe3, 0x26, 0x1b, 0xef, 0x68, 0x64, 0x99, 0x0d, 0xb6, 0xce,
    0x98, 0x06, 0xf6, 0x6b, 0x79, 0x70, 0xfd, 0xff, 0x86, 0x17, 0x18, 0x7b, 0xb9, 0xff, 0xfd, 0xff,
    0x5a, 0xe4, 0xdf, 0x3e, 0xdb, 0xd5, 0xd3, 0x5e, 0x5b, 0x4f, 0x09, 0x02, 0x0d, 0xb0, 0x3e, 0xab,
    0x1e, 0x03, 0x1d, 0xda, 0x2f, 0xbe, 0x03, 0xd1, 0x79, 0x21, 0x70, 0xa0, 0xf3, 0x00, 0x9c, 0xee};
/* The input blocks (counters) of blocks #2 and #4. */
static const unsigned char nist_input2[16] = {
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xff, 0x00};
static const unsigned char nist_input4[16] = {
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xff, 0x02};
/* The output block (key stream) of block #1. */
static const unsigned char nist_output1[16] = {
    0xec, 0x8c, 0xdf, 0x73, 0x98, 0x60, 0x7c, 0xb0, 0xf2, 0xd2, 0x16, 0x75, 0xea, 0x9e, 0xa1, 0xe4};

void setUp(void)
{
    mbedtls_aes_init(&aes);
    TEST_ASSERT_EQUAL_INT(0, mbedtls_aes_setkey_enc(&aes, nist_key, 128));
}

void tearDown(void)
{
    mbedtls_aes_free(&aes);
}

/* A plaintext no two blocks of which are alike. */
static void fill(unsigned char *p, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i)
        p[i] = (unsigned char)(i * 7u + (i >> 8) * 13u + (i >> 16));
}

static aes_params params(unsigned k, unsigned passes, unsigned runners, kpn_policy policy)
{
    aes_params p;

    p.b = B;
    p.k = k;
    p.passes = passes;
    p.runners = runners;
    p.policy = policy;
    p.stack = STACK;
    p.cpus = 0;
    p.no_fill = 0;
    return p;
}

/* Builds and runs the network on 'buf' and the reference on 'ref', from
 * the same plaintext, and checks they agree byte for byte. */
static void network_equals_sequential(unsigned k, unsigned passes, unsigned runners,
                                      kpn_policy policy)
{
    aes_params p = params(k, passes, runners, policy);
    size_t worker_peak, source_peak;

    fill(buf, LEN);
    fill(ref, LEN);
    TEST_ASSERT_LESS_OR_EQUAL(sizeof arena, aes_net_arena_size(&p));
    TEST_ASSERT_EQUAL_INT(KPN_OK, aes_net_build(&an, arena, sizeof arena, &p, &aes, nist_counter,
                                                buf, workers, MAX_WORKERS));
    TEST_ASSERT_EQUAL_size_t((size_t)1 << (B - k), an.n);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(an.net));
    TEST_ASSERT_TRUE(aes_net_done(&an));
    TEST_ASSERT_EQUAL_INT(0, aes_sequential(&aes, nist_counter, passes, ref, LEN));
    TEST_ASSERT_EQUAL_MEMORY(ref, buf, LEN);

    aes_net_stack_peaks(&an, &worker_peak, &source_peak);
    TEST_ASSERT_GREATER_THAN(0, worker_peak);
    TEST_ASSERT_LESS_THAN(STACK, worker_peak);
    TEST_ASSERT_GREATER_THAN(0, source_peak);
    TEST_ASSERT_LESS_THAN(STACK, source_peak);
}

/* ------------------------------------------------------------ the CTR helper */

void test_ctr_helper_gives_the_sp800_38a_f51_ciphertext(void)
{
    unsigned char data[64];

    memcpy(data, nist_plain, sizeof data);
    TEST_ASSERT_EQUAL_INT(0, aes_ctr_at(&aes, nist_counter, 0, data, sizeof data));
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_cipher, data, 64);
}

void test_ctr_helper_decrypts_the_sp800_38a_f51_ciphertext(void)
{
    unsigned char data[64];

    memcpy(data, nist_cipher, sizeof data);
    TEST_ASSERT_EQUAL_INT(0, aes_ctr_at(&aes, nist_counter, 0, data, sizeof data));
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_plain, data, 64);
}

void test_ctr_helper_gives_the_f51_key_stream(void)
{
    unsigned char zero[16] = {0};

    TEST_ASSERT_EQUAL_INT(0, aes_ctr_at(&aes, nist_counter, 0, zero, sizeof zero));
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_output1, zero, 16);
}

/* Each block alone, started at its offset, as a worker starts its chunk. */
void test_ctr_helper_starts_mid_stream_at_a_block_offset(void)
{
    unsigned char data[64];
    unsigned i;

    memcpy(data, nist_plain, sizeof data);
    for (i = 0; i < 4; ++i)
        TEST_ASSERT_EQUAL_INT(0, aes_ctr_at(&aes, nist_counter, i, data + 16 * i, 16));
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_cipher, data, 64);

    memcpy(data, nist_plain + 32, 32);
    TEST_ASSERT_EQUAL_INT(0, aes_ctr_at(&aes, nist_counter, 2, data, 32));
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_cipher + 32, data, 32);
}

void test_counter_offsets_match_the_f51_input_blocks(void)
{
    unsigned char c[16];

    aes_ctr_counter(nist_counter, 0, c);
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_counter, c, 16);
    aes_ctr_counter(nist_counter, 1, c);
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_input2, c, 16);
    aes_ctr_counter(nist_counter, 3, c);
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_input4, c, 16);
}

/* Carries run through all 16 bytes and wrap mod 2^128, as mbedTLS's
 * increment does. */
void test_counter_offsets_carry_across_all_bytes(void)
{
    unsigned char ones[16], c[16], want[16] = {0};

    memset(ones, 0xff, sizeof ones);
    aes_ctr_counter(ones, 1, c);
    TEST_ASSERT_EQUAL_UINT8_ARRAY(want, c, 16);

    memset(ones, 0, 8); /* 0x0000000000000000ffffffffffffffff + 2^64 - 1 */
    aes_ctr_counter(ones, UINT64_MAX, c);
    want[7] = 0x01;
    memset(want + 8, 0xff, 8);
    want[15] = 0xfe;
    TEST_ASSERT_EQUAL_UINT8_ARRAY(want, c, 16);
}

/* A long stream from an offset equals the same bytes of mbedTLS's own
 * stream, across the counter's byte boundaries. */
void test_ctr_helper_agrees_with_one_long_mbedtls_stream(void)
{
    unsigned char counter[16], stream[16];
    size_t offset = 0, at;

    fill(buf, 8192);
    memcpy(ref, buf, 8192);
    memcpy(counter, nist_counter, 16);
    TEST_ASSERT_EQUAL_INT(0, mbedtls_aes_crypt_ctr(&aes, 8192, &offset, counter, stream, ref, ref));
    for (at = 0; at < 8192; at += 1024)
        TEST_ASSERT_EQUAL_INT(0, aes_ctr_at(&aes, nist_counter, at / 16, buf + at, 1024));
    TEST_ASSERT_EQUAL_MEMORY(ref, buf, 8192);
}

void test_every_pass_has_its_own_counter(void)
{
    unsigned char iv[16], want[16];

    aes_pass_iv(nist_counter, 0, iv);
    TEST_ASSERT_EQUAL_UINT8_ARRAY(nist_counter, iv, 16);
    aes_pass_iv(nist_counter, 1, iv);
    memcpy(want, nist_counter, 16);
    want[7] = 0xf8;
    TEST_ASSERT_EQUAL_UINT8_ARRAY(want, iv, 16);
    aes_pass_iv(nist_counter, 0x10a, iv); /* ..f6f7 + 0x010a = ..f801: a carry into byte 6 */
    want[6] = 0xf8;
    want[7] = 0x01;
    TEST_ASSERT_EQUAL_UINT8_ARRAY(want, iv, 16);
}

/* Two passes with one counter would cancel out; with a counter each they
 * must not give the plaintext back. */
void test_two_passes_do_not_cancel(void)
{
    unsigned char plain[LEN / 16];

    fill(plain, sizeof plain);
    memcpy(ref, plain, sizeof plain);
    TEST_ASSERT_EQUAL_INT(0, aes_sequential(&aes, nist_counter, 2, ref, sizeof plain));
    TEST_ASSERT_FALSE(memcmp(plain, ref, sizeof plain) == 0);
    TEST_ASSERT_EQUAL_INT(0, aes_sequential(&aes, nist_counter, 1, ref, sizeof plain));
    TEST_ASSERT_FALSE(memcmp(plain, ref, sizeof plain) == 0);
}

/* ------------------------------------------------------------ the network */

void test_a_message_is_a_16_byte_pointer_length_pair(void)
{
    TEST_ASSERT_EQUAL_size_t(16, sizeof(aes_msg));
    TEST_ASSERT_EQUAL_size_t(sizeof(unsigned char *) + sizeof(size_t), sizeof(aes_msg));
}

void test_the_network_on_one_runner_equals_the_sequential_encryption(void)
{
    unsigned k;

    for (k = 10; k <= B; ++k) {
        network_equals_sequential(k, 1, 1, KPN_POLICY_WS);
        network_equals_sequential(k, 1, 1, KPN_POLICY_STATIC);
    }
}

void test_the_network_on_two_runners_equals_the_sequential_encryption(void)
{
    unsigned k;

    for (k = 10; k <= B; ++k) {
        network_equals_sequential(k, 1, 2, KPN_POLICY_WS);
        network_equals_sequential(k, 1, 2, KPN_POLICY_STATIC);
    }
}

void test_several_passes_equal_as_many_sequential_encryptions(void)
{
    unsigned k;

    for (k = 10; k <= B; k += 3) {
        network_equals_sequential(k, 3, 1, KPN_POLICY_WS);
        network_equals_sequential(k, 3, 2, KPN_POLICY_WS);
        network_equals_sequential(k, 4, 2, KPN_POLICY_STATIC);
    }
}

/* Static placement: worker i ran on runner i mod 2 only, and each of the
 * n workers was dispatched once and exited. */
void test_static_placement_spreads_the_workers_round_robin(void)
{
    aes_params p = params(12, 1, 2, KPN_POLICY_STATIC);
    kpn_stats st;

    fill(buf, LEN);
    TEST_ASSERT_EQUAL_INT(KPN_OK, aes_net_build(&an, arena, sizeof arena, &p, &aes, nist_counter,
                                                buf, workers, MAX_WORKERS));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(an.net));
    TEST_ASSERT_TRUE(aes_net_done(&an));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(an.net, &st));
    TEST_ASSERT_EQUAL_size_t(17, st.procs);
    TEST_ASSERT_EQUAL_size_t(17, st.procs_exited);
    TEST_ASSERT_EQUAL_size_t(32, st.chans);
    TEST_ASSERT_EQUAL_UINT64(32, st.messages);
    TEST_ASSERT_EQUAL_UINT64(0, st.steals);
    /* 8 workers a runner, each dispatched at least once */
    TEST_ASSERT_GREATER_OR_EQUAL(8, st.runner_switches[0]);
    TEST_ASSERT_GREATER_OR_EQUAL(8, st.runner_switches[1]);
}

/* Each worker is named "worker" and its index, in decimal. */
void test_the_workers_are_named_by_their_index(void)
{
    aes_params p = params(12, 1, 1, KPN_POLICY_WS);
    static const size_t at[] = {0, 9, 10, 15};
    static const char *const want[] = {"worker0", "worker9", "worker10", "worker15"};
    kpn_proc_stats ps;
    size_t i;

    TEST_ASSERT_EQUAL_INT(KPN_OK, aes_net_build(&an, arena, sizeof arena, &p, &aes, nist_counter,
                                                buf, workers, MAX_WORKERS));
    TEST_ASSERT_EQUAL_size_t(16, an.n);
    for (i = 0; i < sizeof at / sizeof at[0]; ++i) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(workers[at[i]].proc, &ps));
        TEST_ASSERT_EQUAL_STRING(want[i], ps.name);
    }
}

/* With the stacks left unfilled (cfg.stack_fill 0) the result is the
 * same, and no peak is measured. */
void test_unfilled_stacks_change_no_byte_and_report_no_peak(void)
{
    aes_params p = params(12, 2, 1, KPN_POLICY_WS);
    size_t worker_peak = 1, source_peak = 1;

    p.no_fill = 1;
    fill(buf, LEN);
    fill(ref, LEN);
    TEST_ASSERT_EQUAL_INT(KPN_OK, aes_net_build(&an, arena, sizeof arena, &p, &aes, nist_counter,
                                                buf, workers, MAX_WORKERS));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(an.net));
    TEST_ASSERT_TRUE(aes_net_done(&an));
    TEST_ASSERT_EQUAL_INT(0, aes_sequential(&aes, nist_counter, 2, ref, LEN));
    TEST_ASSERT_EQUAL_MEMORY(ref, buf, LEN);
    aes_net_stack_peaks(&an, &worker_peak, &source_peak);
    TEST_ASSERT_EQUAL_size_t(0, worker_peak);
    TEST_ASSERT_EQUAL_size_t(0, source_peak);
}

void test_the_arena_size_is_enough_and_checked(void)
{
    aes_params p = params(10, 1, 2, KPN_POLICY_WS);
    size_t need = aes_net_arena_size(&p);

    TEST_ASSERT_GREATER_THAN(64 * STACK, need);
    TEST_ASSERT_EQUAL_INT(KPN_OK, aes_net_build(&an, arena, need, &p, &aes, nist_counter, buf,
                                                workers, MAX_WORKERS));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, aes_net_build(&an, arena, need / 2, &p, &aes, nist_counter,
                                                    buf, workers, MAX_WORKERS));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, aes_net_build(&an, arena, need, &p, &aes, nist_counter, buf,
                                                    workers, MAX_WORKERS - 1));
}

void test_parameters_out_of_range_are_refused(void)
{
    aes_params p = params(10, 1, 1, KPN_POLICY_WS);

    p.k = AES_NET_MIN_K - 1;
    TEST_ASSERT_EQUAL_size_t(0, aes_net_arena_size(&p));
    p.k = B + 1;
    TEST_ASSERT_EQUAL_size_t(0, aes_net_arena_size(&p));
    p = params(10, 0, 1, KPN_POLICY_WS);
    TEST_ASSERT_EQUAL_size_t(0, aes_net_arena_size(&p));
    p = params(10, 1, 0, KPN_POLICY_WS);
    TEST_ASSERT_EQUAL_size_t(0, aes_net_arena_size(&p));
    p = params(10, 1, KPN_MAX_RUNNERS + 1, KPN_POLICY_WS);
    TEST_ASSERT_EQUAL_size_t(0, aes_net_arena_size(&p));
    p = params(10, 1, 1, KPN_POLICY_WS);
    p.stack = KPN_STACK_MIN - 1;
    TEST_ASSERT_EQUAL_size_t(0, aes_net_arena_size(&p));
    p = params(10, 1, 1, KPN_POLICY_WS);
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, aes_net_build(&an, arena, sizeof arena, &p, &aes, NULL, buf,
                                                    workers, MAX_WORKERS));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, aes_net_build(&an, arena, sizeof arena, NULL, &aes,
                                                    nist_counter, buf, workers, MAX_WORKERS));
}
