/* SPDX-License-Identifier: MIT */
/* The H.264 example: the sequential encoder's bitstream on any runners, workers, policy; the loop */
#include <stdio.h>
#include <string.h>
#include "unity.h"
#include "kpn.h"
#include "h264_net.h"

TEST_SOURCE_FILE("examples/h264/h264_net.c")
TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/report.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/posix/port_posix.c")
TEST_SOURCE_FILE("port/pthread/thread_pthread.c")

/* A 5x4-macroblock picture (80x64 pixels), 4 frames: with 5 workers some
 * get no rows at all.  No burn: the suite measures nothing. */
#define FRAMES 4

static unsigned char arena[8 << 20];
static unsigned char work[2 << 20];
static unsigned char reference_work[1 << 20];

void setUp(void) {}

void tearDown(void) {}

static h264_params small(int workers)
{
    h264_params p;

    h264_params_default(&p);
    p.mb_w = 5;
    p.mb_h = 4;
    p.frames = FRAMES;
    p.workers = workers;
    return p;
}

static kpn_config config(unsigned runners, kpn_policy policy)
{
    kpn_config cfg;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.policy = policy;
    cfg.reserve_size = 256 * 1024;
    return cfg;
}

static void reference(const h264_params *p, h264_result *res)
{
    TEST_ASSERT_EQUAL_INT(KPN_OK,
                          h264_reference(p, reference_work, sizeof reference_work, res, NULL));
    TEST_ASSERT_EQUAL_INT(p->frames, res->frames);
}

/* Builds the net of 'p' on 'runners' runners and runs it; 'net_out' (may
 * be NULL) gets the net for inspection. */
static void run_net(const h264_params *p, unsigned runners, kpn_policy policy, h264_result *res,
                    kpn_net **net_out)
{
    kpn_config cfg = config(runners, policy);
    kpn_net *net = NULL;
    h264_net *hn = NULL;

    TEST_ASSERT_LESS_OR_EQUAL(sizeof arena, h264_arena_size(p, &cfg));
    TEST_ASSERT_LESS_OR_EQUAL(sizeof work, h264_work_size(p));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, h264_build(net, p, work, sizeof work, &hn));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    h264_collect(hn, res);
    if (net_out != NULL)
        *net_out = net;
}

/* The whole bitstream and every frame's hash equal the reference's. */
static void same_stream(const h264_result *want, const h264_result *got, const char *what)
{
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, (int)got->errors, what);
    TEST_ASSERT_EQUAL_INT_MESSAGE(want->frames, got->frames, what);
    TEST_ASSERT_EQUAL_MEMORY_MESSAGE(want->frame_checksum, got->frame_checksum,
                                     (size_t)want->frames * sizeof want->frame_checksum[0], what);
    TEST_ASSERT_EQUAL_UINT64_MESSAGE(want->checksum, got->checksum, what);
    TEST_ASSERT_EQUAL_UINT64_MESSAGE(want->bits, got->bits, what);
    TEST_ASSERT_EQUAL_INT_MESSAGE((int)want->intra_mbs, (int)got->intra_mbs, what);
}

/* ------------------------------------------------------------ the encoder */

void test_the_sequential_encoder_codes_real_pictures(void)
{
    h264_params p = small(1);
    h264_result a, b;
    uint64_t first[FRAMES];

    reference(&p, &a);
    memcpy(first, a.frame_checksum, sizeof first);
    TEST_ASSERT_GREATER_THAN(0, (long long)a.bits);
    /* frame 0 is predicted from a grey reference: mostly intra; the later
     * ones from their predecessor: mostly inter */
    TEST_ASSERT_GREATER_THAN(10, a.intra_mbs);
    TEST_ASSERT_LESS_THAN(2 * 20, a.intra_mbs);
    TEST_ASSERT_GREATER_THAN(30, (long long)a.psnr); /* dB: QP 28 keeps most detail */
    TEST_ASSERT_LESS_THAN(99, (long long)a.psnr);   /* but it is lossy */
    TEST_ASSERT_NOT_EQUAL(first[1], first[2]);
    reference(&p, &b);
    TEST_ASSERT_EQUAL_MEMORY(first, b.frame_checksum, sizeof first);
    TEST_ASSERT_EQUAL_UINT64(a.checksum, b.checksum);
}

void test_one_runner_one_worker_matches_the_sequential_encoder(void)
{
    h264_params p = small(1);
    h264_result want, got;
    kpn_net *net;
    kpn_stats st;

    reference(&p, &want);
    run_net(&p, 1, KPN_POLICY_WS, &got, &net);
    same_stream(&want, &got, "runners=1 w=1");
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(st.procs, st.procs_exited);
    TEST_ASSERT_EQUAL_UINT64(0, st.discarded); /* every message was read */
}

void test_every_runner_count_worker_count_and_policy_gives_the_same_bitstream(void)
{
    static const unsigned runners[] = {1, 2, 3};
    static const int workers[] = {1, 2, 5};
    static const kpn_policy policies[] = {KPN_POLICY_WS, KPN_POLICY_STATIC};
    h264_params p = small(1);
    h264_result want, got;
    char what[64];
    size_t r, w, k;

    reference(&p, &want); /* the sequential encoder has no workers */
    for (w = 0; w < sizeof workers / sizeof workers[0]; ++w) {
        p.workers = workers[w];
        for (r = 0; r < sizeof runners / sizeof runners[0]; ++r)
            for (k = 0; k < sizeof policies / sizeof policies[0]; ++k) {
                snprintf(what, sizeof what, "runners=%u w=%d policy=%s", runners[r], workers[w],
                         policies[k] == KPN_POLICY_WS ? "ws" : "static");
                run_net(&p, runners[r], policies[k], &got, NULL);
                same_stream(&want, &got, what);
            }
    }
}

void test_the_worker_count_does_not_change_the_bitstream(void)
{
    h264_params p1 = small(1), p7 = small(7);
    h264_result one, seven;
    uint64_t sums[FRAMES];

    run_net(&p1, 2, KPN_POLICY_WS, &one, NULL);
    memcpy(sums, one.frame_checksum, sizeof sums);
    run_net(&p7, 2, KPN_POLICY_WS, &seven, NULL);
    TEST_ASSERT_EQUAL_MEMORY(sums, seven.frame_checksum, sizeof sums);
    TEST_ASSERT_EQUAL_UINT64(one.checksum, seven.checksum);
}

/* ------------------------------------------------------------ the loop */

/* A bright square stamped into frame k's source changes frame k, and
 * through its reconstruction, the reference of frame k+1, frame k+1 too;
 * frame k+1's own source is untouched, so only the loop can carry it.
 * The frames before k stay as they were. */
void test_frame_n_plus_1_depends_on_the_reconstruction_of_frame_n(void)
{
    h264_params plain = small(2), marked = small(2);
    h264_result want, got;
    uint64_t base[FRAMES];

    reference(&plain, &want);
    memcpy(base, want.frame_checksum, sizeof base);
    marked.mark_frame = 1;
    reference(&marked, &want);
    TEST_ASSERT_EQUAL_UINT64(base[0], want.frame_checksum[0]);
    TEST_ASSERT_NOT_EQUAL(base[1], want.frame_checksum[1]);
    TEST_ASSERT_NOT_EQUAL(base[2], want.frame_checksum[2]);

    run_net(&marked, 2, KPN_POLICY_WS, &got, NULL);
    same_stream(&want, &got, "marked frame 1, runners=2 w=2");
}

/* Channels between the stages one row deep instead of a frame (the
 * workers' keep their row ranges): the loop still runs to the end and
 * codes the same stream. */
void test_the_loop_runs_with_one_row_channels(void)
{
    h264_params p = small(3);
    h264_result want, got;

    reference(&p, &want);
    p.capacity = 1;
    run_net(&p, 2, KPN_POLICY_WS, &got, NULL);
    same_stream(&want, &got, "capacity=1");
}

/* ------------------------------------------------------------ burn, sizes, shape */

void test_burning_changes_the_time_not_the_bits(void)
{
    h264_params p = small(2);
    h264_result want, got;
    int s;

    reference(&p, &want);
    for (s = 0; s < H264_STAGES; ++s)
        p.burn[s] = 200;
    run_net(&p, 2, KPN_POLICY_WS, &got, NULL);
    same_stream(&want, &got, "with a burn");
}

void test_the_plan_splits_a_frame_budget_by_the_profile(void)
{
    h264_params p = small(1);
    double real[H264_STAGES] = {0}, sum = 0;
    unsigned long long total = 0;
    int s;

    for (s = 0; s < H264_STAGES; ++s)
        sum += h264_profile[s];
    TEST_ASSERT_UINT_WITHIN(1, 1000000, (unsigned long long)(sum * 1e6 + 0.5));
    /* 25 fps, 1000 iterations per us: 40 ms a frame, 40 million iterations */
    h264_plan(&p, 25, 1000, NULL);
    for (s = 0; s < H264_STAGES; ++s)
        total += p.burn[s] * (unsigned long long)p.mb_h;
    TEST_ASSERT_UINT_WITHIN(H264_STAGES * 4, 40000000ull, total);
    TEST_ASSERT_UINT_WITHIN(4, (unsigned long long)(0.2383 * 40e6 + 0.5), p.burn[H264_P] * 4);
    /* real work counts against its stage's share, never below zero */
    real[H264_P] = 0.001;
    real[H264_EC] = 1.0;
    h264_plan(&p, 25, 1000, real);
    TEST_ASSERT_UINT_WITHIN(4, (unsigned long long)((0.2383 * 0.04 - 0.001) * 1e9 + 0.5),
                            p.burn[H264_P] * 4);
    TEST_ASSERT_EQUAL_UINT64(0, p.burn[H264_EC]);
}

void test_the_sizes_are_what_the_build_needs(void)
{
    h264_params p = small(5);
    kpn_config cfg = config(2, KPN_POLICY_WS);
    size_t need = h264_work_size(&p), arena_need = h264_arena_size(&p, &cfg);
    /* one byte past a 16-byte boundary: the build skips 15 to align */
    unsigned char *odd = work + (16u - (uintptr_t)work % 16u) % 16u + 1;
    kpn_net *net;
    h264_net *hn;
    h264_result got, want;

    TEST_ASSERT_GREATER_THAN(0, need);
    TEST_ASSERT_LESS_OR_EQUAL(sizeof work - 16, need);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, arena_need, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, h264_build(net, &p, odd, need - 1, &hn));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, arena_need, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, h264_build(net, &p, odd, need, &hn));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    h264_collect(hn, &got);
    reference(&p, &want);
    same_stream(&want, &got, "exact sizes");
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, h264_reference(&p, odd, 64, &want, NULL));
}

void test_the_parameters_are_checked(void)
{
    h264_params p = small(1);
    kpn_net *net;
    h264_net *hn;
    h264_result res;

    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, h264_build(NULL, &p, work, sizeof work, &hn));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, h264_build(net, NULL, work, sizeof work, &hn));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, h264_build(net, &p, NULL, sizeof work, &hn));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, h264_build(net, &p, work, sizeof work, NULL));
    p.workers = 0;
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, h264_build(net, &p, work, sizeof work, &hn));
    TEST_ASSERT_EQUAL_size_t(0, h264_work_size(&p));
    TEST_ASSERT_EQUAL_size_t(0, h264_arena_size(&p, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, h264_reference(&p, work, sizeof work, &res, NULL));
    p = small(H264_MAX_WORKERS + 1);
    TEST_ASSERT_EQUAL_size_t(0, h264_work_size(&p));
    p = small(1);
    p.mb_w = 0;
    TEST_ASSERT_EQUAL_size_t(0, h264_work_size(&p));
    p = small(1);
    p.mb_h = H264_MAX_MB_H + 1;
    TEST_ASSERT_EQUAL_size_t(0, h264_work_size(&p));
    p = small(1);
    p.frames = 0;
    TEST_ASSERT_EQUAL_size_t(0, h264_work_size(&p));
    TEST_ASSERT_EQUAL_size_t(0, h264_work_size(NULL));
}

/* 22 processes, 3 splits and merges of w workers; 23 channels, 6 per
 * worker; every stack far from full. */
void test_the_net_has_the_papers_shape_and_its_stacks_have_room(void)
{
    h264_params p = small(4);
    h264_result got;
    kpn_net *net;
    kpn_stats st;
    kpn_proc_stats ps;
    const kpn_proc *proc;
    size_t n = 0;

    run_net(&p, 2, KPN_POLICY_WS, &got, &net);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(22 + 3 * 4, st.procs);
    TEST_ASSERT_EQUAL_size_t(23 + 6 * 4, st.chans);
    TEST_ASSERT_EQUAL_UINT64(0, st.resolutions);
    for (proc = kpn_proc_next(net, NULL); proc != NULL; proc = kpn_proc_next(net, proc), ++n) {
        TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_proc_stats_get(proc, &ps));
        TEST_ASSERT_EQUAL_INT(KPN_PROC_EXITED, ps.state);
        TEST_ASSERT_LESS_THAN(H264_STACK / 2, ps.stack_peak);
    }
    TEST_ASSERT_EQUAL_size_t(st.procs, n);
}
