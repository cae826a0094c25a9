/* SPDX-License-Identifier: MIT */
/* The papers' H.264 encoder network with its feedback loop: frames per second, 1 runner vs R. */
#define _POSIX_C_SOURCE 199309L
#include "kpn.h"
#include "../../bench/bench.h"
#include "h264_net.h"

/*
 * The encoder's block diagram as a Kahn process network (h264_net.c draws
 * it): real pictures and macroblocks flow through motion estimation,
 * compensation, intra analysis, prediction, transform, quantisation,
 * reordering and entropy coding, and back through the inverse path to the
 * reference frame, so frame n+1 is predicted from frame n's
 * reconstruction.  On top of its real work each block burns the CPU time
 * x264 spends there (the papers' table 2) at a frame budget: a frame
 * costs 1/fps_budget CPU-seconds in all.
 *
 * First the same encoder runs as a plain sequential loop: its checksum is
 * the one every run of the network must reproduce, and its timing tells
 * how much of each block's budget the real work already uses (the burn
 * makes up the rest).  Then the network runs on 1 runner and on R,
 * alternating, and the medians give frames per second and the speedup.
 * Any run whose bitstream differs from the sequential encoder's, frame by
 * frame, fails the program.
 */

/* The arena every run's net is carved from, and the processes' state.
 * At the defaults (CIF, w=4) a net needs about 8 MiB of arena (4 of them
 * the resolver's reserve) and 0.5 MiB of workspace; at w=512, 52 and
 * 19 MiB; the largest picture with 512 workers, 188 and 106 MiB.  main
 * checks they fit. */
static unsigned char arena[256u << 20];
static unsigned char work[128u << 20];
static uint64_t reference_sums[H264_MAX_FRAMES];

static void fail(const char *what, kpn_status s, unsigned runners, const kpn_net *net)
{
    fprintf(stderr, "h264: %s with runners=%u: %s\n", what, runners, kpn_strerror(s));
    if (s == KPN_EINVAL && runners > 1 && net == NULL)
        fprintf(stderr, "h264: (a library built without KPN_THREADS accepts only "
                        "runners=1: try --runners=1)\n");
    if (net != NULL) {
        static char text[1 << 16];
        size_t need = kpn_report(net, text, sizeof text);
        fprintf(stderr, "%s", text);
        if (need >= sizeof text)
            fprintf(stderr, "(report truncated: %zu bytes)\n", need);
    }
    exit(1);
}

/* Builds a fresh net on 'cfg->runners' runners and runs it; returns the
 * wall time of kpn_run alone.  '*same' says whether the bitstream equals
 * the sequential encoder's, frame by frame. */
static double run_once(const kpn_config *cfg, const h264_params *p, const h264_result *want,
                       h264_result *got, kpn_stats *st, int *same)
{
    kpn_net *net = NULL;
    h264_net *hn;
    kpn_status s;
    double t0, t;
    int n, first_bad = -1;

    s = kpn_net_init(&net, arena, sizeof arena, cfg);
    if (s != KPN_OK)
        fail("kpn_net_init", s, cfg->runners, NULL);
    s = h264_build(net, p, work, sizeof work, &hn);
    if (s != KPN_OK)
        fail("h264_build", s, cfg->runners, NULL);
    t0 = ex_now();
    s = kpn_run(net);
    t = ex_now() - t0;
    if (s != KPN_OK)
        fail("kpn_run", s, cfg->runners, net);
    EX_CHECK(kpn_net_stats(net, st));
    h264_collect(hn, got);
    for (n = 0; n < p->frames && n < got->frames && first_bad < 0; ++n)
        if (got->frame_checksum[n] != reference_sums[n])
            first_bad = n;
    *same = got->frames == p->frames && got->errors == 0 && first_bad < 0 &&
            got->checksum == want->checksum && got->bits == want->bits;
    if (!*same)
        fprintf(stderr,
                "h264: runners=%u: the network's bitstream differs from the sequential "
                "encoder's: %d of %d frames, %ld protocol errors, first differing frame %d, "
                "checksum %016llx instead of %016llx\n",
                cfg->runners, got->frames, p->frames, got->errors, first_bad,
                (unsigned long long)got->checksum, (unsigned long long)want->checksum);
    return t;
}

int main(int argc, char **argv)
{
    ex_opt opt[] = {
        {"frames", "frames to encode", 30, NULL, 1, H264_MAX_FRAMES},
        {"fps_budget", "frames per second the burn is sized for: a frame costs 1/fps_budget "
                       "CPU-s", 25, NULL, 1, 100000},
        {"w", "workers in each of ME, MC and P", 4, NULL, 1, H264_MAX_WORKERS},
        {"runners", "runners of the run compared with 1 runner", 2, NULL, 1, KPN_MAX_RUNNERS},
        {"policy", "ws (work stealing) or static (round-robin in spawn order)", 0, "ws", 0, 0},
        {"width", "picture width in macroblocks (16 pixels)", 22, NULL, 1, H264_MAX_MB_W},
        {"height", "picture height in macroblocks", 18, NULL, 1, H264_MAX_MB_H},
        {"runs", "timed runs of each runner count; medians are reported", 2, NULL, 1, 100},
    };
    enum { FRAMES, FPS_BUDGET, W, RUNNERS, POLICY, WIDTH, HEIGHT, RUNS };
    static double wall[2][100];
    double med[2], rate, real[H264_STAGES], real_total = 0, t0, t_ref;
    unsigned long long trial, sum[2] = {0, 0};
    h264_params p;
    h264_result want, got;
    kpn_config cfg;
    kpn_stats st, st_r;
    size_t need_arena = 0, need_work;
    unsigned runners, r;
    int run, runs, which, same, all_same = 1, s, frames;

    ex_parse(argc, argv,
             "The papers' H.264 encoder as a network with its feedback loop: real frames\n"
             "and macroblocks through ME, MC, IP, CIP, P, T, Q, R, EC and back through\n"
             "Qi, Ti and + to the reference frame; each block also burns x264's share of\n"
             "a frame's CPU at --fps_budget.  Runs on 1 runner and on R, alternating, and\n"
             "reports frames per second, the speedup and the bitstream's checksum.",
             opt, (int)(sizeof opt / sizeof opt[0]));
    frames = (int)opt[FRAMES].value;
    runners = (unsigned)opt[RUNNERS].value;
    runs = (int)opt[RUNS].value;

    kpn_config_default(&cfg);
    cfg.reserve_size = 4u << 20; /* the resolver's pool, should a channel ever need to grow */
    cfg.policy = ex_policy(argv[0], opt[POLICY].text);

    h264_params_default(&p);
    p.mb_w = (int)opt[WIDTH].value;
    p.mb_h = (int)opt[HEIGHT].value;
    p.frames = frames;
    p.workers = (int)opt[W].value;
    need_work = h264_work_size(&p);
    for (which = 0; which < 2; ++which) {
        size_t need;
        cfg.runners = which == 0 ? 1 : runners;
        need = h264_arena_size(&p, &cfg);
        if (need > need_arena)
            need_arena = need;
    }
    if (need_arena > sizeof arena || need_work > sizeof work) {
        fprintf(stderr,
                "h264: the net needs %zu bytes of arena and %zu of workspace, the program "
                "has %zu and %zu: use a smaller picture or fewer workers\n",
                need_arena, need_work, sizeof arena, sizeof work);
        return 1;
    }

    rate = h264_calibrate(&trial);
    fprintf(stderr, "h264: burn calibrated at %.1f iterations/us (median of 7 trials of %llu)\n",
            rate, trial);

    /* The sequential encoder: the checksum to match, and the real work's
     * cost.  Each stage's time is the least of three runs, so a run that
     * was interrupted does not shrink the burn. */
    for (run = 0; run < 3; ++run) {
        double seconds[H264_STAGES];
        t0 = ex_now();
        EX_CHECK(h264_reference(&p, work, sizeof work, &want, seconds));
        t_ref = ex_now() - t0;
        for (s = 0; s < H264_STAGES; ++s)
            real[s] = run == 0 || seconds[s] < real[s] ? seconds[s] : real[s];
    }
    memcpy(reference_sums, want.frame_checksum, (size_t)frames * sizeof reference_sums[0]);
    for (s = 0; s < H264_STAGES; ++s) {
        real[s] /= frames;
        real_total += real[s];
    }
    h264_plan(&p, (double)opt[FPS_BUDGET].value, rate, real);
    fprintf(stderr,
            "h264: %dx%d macroblocks (%dx%d pixels), %d frames: sequential encoder %.3f s, "
            "%.2f ms of real work per frame, %llu bits, %ld intra macroblocks, PSNR %.2f dB, "
            "checksum %016llx\n",
            p.mb_w, p.mb_h, 16 * p.mb_w, 16 * p.mb_h, frames, t_ref, real_total * 1e3,
            (unsigned long long)want.bits, want.intra_mbs, want.psnr,
            (unsigned long long)want.checksum);
    fprintf(stderr, "h264: per frame, ms of budget (real work + burn):");
    for (s = 0; s < H264_STAGES; ++s)
        fprintf(stderr, " %s %.2f (%.2f+%.2f)", h264_stage_name[s],
                h264_profile[s] * 1e3 / (double)opt[FPS_BUDGET].value, real[s] * 1e3,
                (double)p.burn[s] * p.mb_h / rate / 1e3);
    fprintf(stderr, "\nh264: arena %zu bytes, workspace %zu bytes\n", need_arena, need_work);

    memset(&st_r, 0, sizeof st_r);
    memset(&got, 0, sizeof got);
    for (run = 0; run < runs; ++run) {
        for (which = 0; which < 2; ++which) {
            cfg.runners = which == 0 ? 1 : runners;
            wall[which][run] = run_once(&cfg, &p, &want, &got, &st, &same);
            all_same &= same;
            sum[which] = got.checksum;
            if (which == 1)
                st_r = st; /* the stats reported are the last R-runner run's */
            fprintf(stderr, "h264: runners=%u run %d/%d: %.3f s, %.2f fps, checksum %016llx\n",
                    cfg.runners, run + 1, runs, wall[which][run],
                    (double)frames / wall[which][run], (unsigned long long)got.checksum);
        }
    }
    med[0] = ex_median(wall[0], runs);
    med[1] = ex_median(wall[1], runs);

    printf("h264: frames=%d w=%d runners=%u policy=%s width=%d height=%d fps_budget=%lld "
           "runs=%d port=%s procs=%zu chans=%zu messages=%llu wall_1=%.3f wall_R=%.3f "
           "fps_1=%.2f real_ms_per_frame=%.2f bits=%llu intra_mbs=%ld psnr=%.2f "
           "checksum_sequential=%016llx checksum_1=%016llx steals=%llu sleeps=%llu "
           "resolutions=%llu runner_switches=",
           frames, p.workers, runners, opt[POLICY].text, p.mb_w, p.mb_h, opt[FPS_BUDGET].value,
           runs, KPN_BENCH_PORT, st_r.procs, st_r.chans, (unsigned long long)st_r.messages,
           med[0], med[1], (double)frames / med[0], real_total * 1e3,
           (unsigned long long)want.bits, want.intra_mbs, want.psnr,
           (unsigned long long)want.checksum, sum[0], (unsigned long long)st_r.steals,
           (unsigned long long)st_r.sleeps, (unsigned long long)st_r.resolutions);
    for (r = 0; r < runners; ++r)
        printf("%s%llu", r ? "," : "", (unsigned long long)st_r.runner_switches[r]);
    printf(" verified=%d fps=%.2f speedup=%.3f checksum=%016llx\n", all_same,
           (double)frames / med[1], med[0] / med[1], sum[1]);
    if (!all_same) {
        fprintf(stderr, "h264: FAILED: the checksums of the 1-runner and %u-runner runs "
                        "are not all the sequential encoder's\n", runners);
        return 1;
    }
    return 0;
}
