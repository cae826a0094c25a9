/* SPDX-License-Identifier: MIT */
/* An H.264 encoder as a Kahn process network: Y4M in, a baseline Annex-B stream out. */
#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"
#include "h264_net.h"

/*
 * Reads a YUV 4:2:0 Y4M file, encodes it at one QP (an IDR picture, then
 * P pictures predicted from the previous reconstruction), and writes the
 * stream and, optionally, the reconstruction, which any decoder must
 * reproduce byte for byte.
 *
 * The same encoder runs three ways: as a plain sequential loop (the
 * stream every network run must equal), and as the network of h264_net.c
 * on 1 runner and on R runners, alternately --runs times; the medians give
 * frames per second and the speedup.
 */

typedef struct video {
    int width, height, frames;
    size_t frame_size;
    uint8_t *data;
} video;

/* A Y4M header's W or H: digits alone, within the encoder's limit (in
 * pixels), else -1 (atoi would read "12x" as 12, and past INT_MAX is
 * undefined). */
static int y4m_size(const char *s, int max)
{
    char *end;
    long n = strtol(s, &end, 10);

    return end == s || *end != '\0' || n < 0 || n > max ? -1 : (int)n;
}

/* Reads up to 'max_frames' frames of a 4:2:0 Y4M file; exits on error. */
static void read_y4m(const char *path, int max_frames, video *v)
{
    char line[1024], *tok;
    FILE *f = fopen(path, "rb");
    size_t cap = 0;

    if (f == NULL) {
        fprintf(stderr, "h264: cannot read %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (fgets(line, sizeof line, f) == NULL || strncmp(line, "YUV4MPEG2 ", 10) != 0) {
        fprintf(stderr, "h264: %s is not a Y4M file\n", path);
        exit(1);
    }
    if (strchr(line, '\n') == NULL) { /* a parameter may be cut in two */
        fprintf(stderr, "h264: %s: the Y4M header is longer than %zu bytes\n", path,
                sizeof line - 2);
        exit(1);
    }
    v->width = v->height = v->frames = 0;
    v->data = NULL;
    for (tok = strtok(line + 10, " \n"); tok != NULL; tok = strtok(NULL, " \n")) {
        if (tok[0] == 'W')
            v->width = y4m_size(tok + 1, 16 * H264_MAX_MB_W);
        else if (tok[0] == 'H')
            v->height = y4m_size(tok + 1, 16 * H264_MAX_MB_H);
        else if (tok[0] == 'C' && strcmp(tok, "C420") != 0 && strcmp(tok, "C420jpeg") != 0 &&
                 strcmp(tok, "C420paldv") != 0 && strcmp(tok, "C420mpeg2") != 0) {
            /* C420p10 and the like are 4:2:0 too, but of 2-byte samples */
            fprintf(stderr, "h264: %s: colour space %s; only 8-bit 4:2:0 is supported\n", path,
                    tok);
            exit(1);
        } else if (tok[0] == 'I' && tok[1] != 'p' && tok[1] != '?') {
            fprintf(stderr, "h264: %s: interlaced input is not supported\n", path);
            exit(1);
        }
    }
    if (v->width <= 0 || v->height <= 0 || (v->width & 1) || (v->height & 1)) {
        fprintf(stderr, "h264: %s: the width and height must be even, 2 to %dx%d\n", path,
                16 * H264_MAX_MB_W, 16 * H264_MAX_MB_H);
        exit(1);
    }
    v->frame_size = (size_t)v->width * (size_t)v->height * 3 / 2;
    while (v->frames < max_frames && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "FRAME", 5) != 0 || strchr(line, '\n') == NULL)
            break;
        if ((size_t)(v->frames + 1) * v->frame_size > cap) {
            cap = 2 * cap + 8 * v->frame_size;
            v->data = realloc(v->data, cap);
            if (v->data == NULL) {
                fprintf(stderr, "h264: out of memory reading %s\n", path);
                exit(1);
            }
        }
        if (fread(v->data + (size_t)v->frames * v->frame_size, 1, v->frame_size, f) !=
            v->frame_size)
            break;
        ++v->frames;
    }
    fclose(f);
    if (v->frames == 0) {
        fprintf(stderr, "h264: %s holds no whole frame\n", path);
        exit(1);
    }
}

/* Opens what --'name' names for writing, before any encoding, so that a
 * path that cannot be written is refused at once; NULL for an empty one. */
static FILE *open_output(const char *name, const char *path)
{
    FILE *f;

    if (path[0] == '\0')
        return NULL;
    f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "h264: --%s=%s: cannot write: %s\n", name, path, strerror(errno));
        exit(1);
    }
    return f;
}

static void write_file(FILE *f, const char *path, const void *data, size_t size)
{
    if (fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "h264: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

/* PSNR of luma alone and of all three planes together (from the mean
 * squared error over every sample of every frame). */
static void psnr(const video *v, const uint8_t *recon, double *y, double *all)
{
    size_t luma = (size_t)v->width * (size_t)v->height, i, n = v->frame_size * (size_t)v->frames;
    double sy = 0, sa = 0;
    for (i = 0; i < n; ++i) {
        double d = (double)v->data[i] - (double)recon[i];
        sa += d * d;
        if (i % v->frame_size < luma)
            sy += d * d;
    }
    sy /= (double)(luma * (size_t)v->frames);
    sa /= (double)n;
    *y = sy > 0 ? 10 * log10(255.0 * 255.0 / sy) : 99;
    *all = sa > 0 ? 10 * log10(255.0 * 255.0 / sa) : 99;
}

/* CPU seconds of the whole process, all runners together: on a machine
 * that others share, this says what the wall clock cannot. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Encodes once with the network on 'runners' runners; returns the seconds
 * kpn_run took, and in '*cpu' the CPU seconds.  Exits if anything fails. */
static double encode_network(const h264_job *job, unsigned runners, void *arena, size_t arena_size,
                             void *work, size_t work_size, h264_result *res, kpn_stats *st,
                             double *cpu)
{
    kpn_config cfg;
    kpn_net *net;
    h264_net *hn;
    kpn_status s;
    double t0, t, c0;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.reserve_size = 1u << 20; /* should a channel ever need to grow */
    BENCH_CHECK(kpn_net_init(&net, arena, arena_size, &cfg));
    BENCH_CHECK(h264_build(net, job, work, work_size, &hn));
    c0 = cpu_now();
    t0 = bench_now();
    s = kpn_run(net);
    t = bench_now() - t0;
    *cpu = cpu_now() - c0;
    if (s != KPN_OK) {
        static char report[1 << 16];
        kpn_report(net, report, sizeof report);
        fprintf(stderr, "h264: kpn_run on %u runners: %s\n%s", runners, kpn_strerror(s), report);
        exit(1);
    }
    h264_collect(hn, res);
    BENCH_CHECK(kpn_net_stats(net, st));
    return t;
}

int main(int argc, char **argv)
{
    bench_opt opt[] = {
        {"input", "the source: a YUV 4:2:0 .y4m file (required)", 0, "", 0, 0},
        {"output", "the H.264 Annex-B stream to write (empty: none)", 0, "", 0, 0},
        {"recon", "the reconstruction to write, raw I420 (empty: none)", 0, "", 0, 0},
        {"qp", "quantiser parameter of every macroblock", 26, NULL, 0, 51},
        {"frames", "most frames to read", 100000, NULL, 1, 100000},
        {"runners", "runners of the run compared with 1 runner", 2, NULL, 1, KPN_MAX_RUNNERS},
        {"w", "workers in each parallel stage (ME, MC, T, Q, Qi, Ti)", 2, NULL, 1,
         H264_MAX_WORKERS},
        {"runs", "timed encodings on 1 runner and on R, alternately; medians are reported", 3,
         NULL, 1, 100},
    };
    enum { INPUT, OUTPUT, RECON, QP, FRAMES, RUNNERS, W, RUNS };
    video v;
    h264_job job;
    h264_result want, got;
    const uint8_t **frames;
    uint8_t *stream, *recon;
    void *arena, *work;
    size_t arena_size = 0, work_size, seq_size;
    double wall[2][100], cpu[2][100], t0, t_seq, med1, medr, py, pa;
    FILE *out, *out_recon;
    kpn_config cfg;
    kpn_stats st;
    unsigned runners;
    int i, run, which, runs, same = 1;

    bench_parse(argc, argv,
             "An H.264 encoder as a Kahn process network: the encoder diagram of the papers\n"
             "(Fn, ME, IP, CIP, MC, +/-, T, Q, R, EC and the loop Qi, Ti, +, F(n-1)), with\n"
             "ME, MC, T, Q, Qi and Ti each split over w workers by macroblock rows.\n"
             "Writes a constrained-baseline stream (IDR then P pictures, CAVLC, one QP,\n"
             "no deblocking) that ffmpeg decodes to exactly --recon.  Encodes with a plain\n"
             "loop and with the network on 1 and on R runners; every stream must be equal.",
             opt, (int)(sizeof opt / sizeof opt[0]));
    if (opt[INPUT].text[0] == '\0') {
        fprintf(stderr, "h264: --input=FILE.y4m is required (try --help)\n");
        return 2;
    }
    runners = (unsigned)opt[RUNNERS].value;
    runs = (int)opt[RUNS].value;
    read_y4m(opt[INPUT].text, (int)opt[FRAMES].value, &v);
    out = open_output("output", opt[OUTPUT].text);
    out_recon = open_output("recon", opt[RECON].text);

    memset(&job, 0, sizeof job);
    if (h264_setup_init(&job.setup, v.width, v.height, (int)opt[QP].value, v.frames) != 0) {
        fprintf(stderr, "h264: %dx%d is larger than %dx%d\n", v.width, v.height,
                16 * H264_MAX_MB_W, 16 * H264_MAX_MB_H);
        return 1;
    }
    frames = malloc(sizeof *frames * (size_t)v.frames);
    job.stream_cap = (size_t)v.frames * (2 * v.frame_size + 4096) + 4096;
    stream = malloc(job.stream_cap);
    recon = malloc(v.frame_size * (size_t)v.frames);
    if (frames == NULL || stream == NULL || recon == NULL) {
        fprintf(stderr, "h264: out of memory\n");
        return 1;
    }
    for (i = 0; i < v.frames; ++i)
        frames[i] = v.data + (size_t)i * v.frame_size;
    job.frames = frames;
    job.stream = stream;
    job.recon = recon;
    job.workers = (int)opt[W].value;

    /* the plain loop: the stream to match */
    seq_size = h264_sequential_work_size(&job);
    work_size = h264_work_size(&job);
    kpn_config_default(&cfg);
    cfg.reserve_size = 1u << 20;
    for (which = 0; which < 2; ++which) {
        size_t need;
        cfg.runners = which == 0 ? 1 : runners;
        need = h264_arena_size(&job, &cfg);
        arena_size = need > arena_size ? need : arena_size;
    }
    work = malloc(work_size > seq_size ? work_size : seq_size);
    arena = malloc(arena_size);
    if (work == NULL || arena == NULL) {
        fprintf(stderr, "h264: out of memory\n");
        return 1;
    }
    fprintf(stderr, "h264: %s: %dx%d, %d frames, QP %d; arena %zu bytes, workspace %zu\n",
            opt[INPUT].text, v.width, v.height, v.frames, job.setup.qp, arena_size, work_size);
    t0 = bench_now();
    BENCH_CHECK(h264_encode_sequential(&job, work, seq_size, &want));
    t_seq = bench_now() - t0;
    if (want.overflow) {
        fprintf(stderr, "h264: the stream outgrew its buffer\n");
        return 1;
    }
    fprintf(stderr, "h264: sequential: %.3f s, %.1f fps, %llu bits, checksum %016llx\n", t_seq,
            v.frames / t_seq, (unsigned long long)want.bits, (unsigned long long)want.checksum);
    psnr(&v, recon, &py, &pa);
    if (out_recon != NULL)
        write_file(out_recon, opt[RECON].text, recon, v.frame_size * (size_t)v.frames);

    /* the network, 1 runner and R runners alternately, after one untimed
     * run that brings the arena and workspace into memory */
    encode_network(&job, runners, arena, arena_size, work, work_size, &got, &st, &cpu[0][0]);
    for (run = 0; run < runs; ++run)
        for (which = 0; which < 2; ++which) {
            unsigned r = which == 0 ? 1 : runners;
            memset(recon, 0, v.frame_size * (size_t)v.frames);
            wall[which][run] = encode_network(&job, r, arena, arena_size, work, work_size, &got,
                                              &st, &cpu[which][run]);
            if (got.checksum != want.checksum || got.bytes != want.bytes || got.errors != 0 ||
                got.overflow) {
                fprintf(stderr, "h264: runners=%u: the network's stream differs from the plain "
                                "loop's (%zu bytes, checksum %016llx, %ld errors)\n",
                        r, got.bytes, (unsigned long long)got.checksum, got.errors);
                same = 0;
            }
            fprintf(stderr, "h264: run %d/%d, runners=%u: %.3f s (%.3f CPU-s), %.1f fps, "
                            "checksum %016llx\n",
                    run + 1, runs, r, wall[which][run], cpu[which][run],
                    v.frames / wall[which][run], (unsigned long long)got.checksum);
        }
    if (out != NULL)
        write_file(out, opt[OUTPUT].text, stream, want.bytes);
    med1 = bench_median(wall[0], runs);
    medr = bench_median(wall[1], runs);

    printf("h264: frames=%d width=%d height=%d qp=%d w=%d runners=%u runs=%d port=%s "
           "procs=%zu chans=%zu messages=%llu steals=%llu placements=%llu placements_dropped=%llu intra_mbs=%ld skip_mbs=%ld bytes=%zu "
           "fps_sequential=%.2f fps_1=%.2f cpu_1=%.3f cpu_R=%.3f "
           "bits=%llu psnr_y=%.3f psnr=%.3f fps=%.2f speedup=%.3f checksum=%016llx verified=%d\n",
           v.frames, v.width, v.height, job.setup.qp, job.workers, runners, runs,
           KPN_BENCH_PORT, st.procs, st.chans, (unsigned long long)st.messages,
           (unsigned long long)st.steals, (unsigned long long)st.placements,
           (unsigned long long)st.placements_dropped, want.intra_mbs, want.skip_mbs, want.bytes,
           v.frames / t_seq, v.frames / med1, bench_median(cpu[0], runs), bench_median(cpu[1], runs),
           (unsigned long long)want.bits, py, pa, v.frames / medr, med1 / medr,
           (unsigned long long)want.checksum, same);
    if (!same) {
        fprintf(stderr, "h264: FAILED: a network run's stream is not the plain loop's\n");
        return 1;
    }
    free(arena);
    free(work);
    free(recon);
    free(stream);
    free(frames);
    free(v.data);
    return 0;
}
